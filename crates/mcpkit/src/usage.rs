//! Command-line parsing errors: `--help` and `--version` print as usual and exit 0; any other
//! error is one line on stderr — `mcpkit: <what is wrong> (see 'mcpkit <command> --help')` —
//! and exit status 2.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::Command;
use clap::error::ErrorKind;

/// Reports a parse error of `args` against `command`; the exit status to return.
pub(crate) fn report(error: &clap::Error, command: &Command, args: &[OsString]) -> ExitCode {
    match error.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = error.print();
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = error.print();
            ExitCode::from(2)
        }
        _ => {
            let path = command_path(command, args);
            match target_hint(error, &path) {
                Some(hint) => eprintln!("mcpkit: {} ({hint})", one_line(error)),
                None => eprintln!("mcpkit: {} (see '{path} --help')", one_line(error)),
            }
            ExitCode::from(2)
        }
    }
}

/// The client commands, which take a server as `--url`, `--server` or a command after `--`.
const CLIENT_COMMANDS: [&str; 7] = ["info", "list", "call", "read", "prompt", "complete", "listen"];

/// For a server given where a client command takes none (`mcpkit list tools http://…`,
/// `mcpkit list tools npx …`): how to give it.
fn target_hint(error: &clap::Error, path: &str) -> Option<String> {
    use clap::error::{ContextKind, ContextValue};
    if error.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let command = path.split(' ').nth(1)?;
    if !CLIENT_COMMANDS.contains(&command) {
        return None;
    }
    let Some(ContextValue::String(arg)) = error.get(ContextKind::InvalidArg) else { return None };
    if arg.starts_with('-') {
        return None;
    }
    Some(if arg.contains("://") {
        format!("a server at a URL is given with --url: '{path} … --url {arg}'")
    } else {
        format!("a server's command line goes after --: '{path} … -- {arg} …'")
    })
}

/// The error's message on one line: its first paragraph (what is wrong, with the possible
/// values or missing arguments clap lists under it) and its tips; not the usage block.
fn one_line(error: &clap::Error) -> String {
    let text = error.render().to_string();
    let mut paragraphs = text.split("\n\n").map(|p| p.lines().map(str::trim).filter(|l| !l.is_empty()));
    let mut message: Vec<&str> = paragraphs.next().map(Iterator::collect).unwrap_or_default();
    if let Some(first) = message.first_mut() {
        *first = first.strip_prefix("error:").map(str::trim_start).unwrap_or(first);
    }
    let mut line = message.join(" ");
    let tips: Vec<&str> = paragraphs.flatten().filter(|l| l.starts_with("tip:")).collect();
    if !tips.is_empty() {
        line.push_str(" (");
        line.push_str(&tips.join("; "));
        line.push(')');
    }
    line
}

/// `mcpkit` and the subcommands named in `args` (the program name first), as far as they
/// exist: where `--help` explains what went wrong.
fn command_path(command: &Command, args: &[OsString]) -> String {
    let mut path = vec![command.get_name().to_owned()];
    let mut current = command;
    for arg in args.iter().skip(1) {
        let arg = arg.to_string_lossy();
        if arg == "--" {
            break;
        }
        if arg.starts_with('-') {
            continue;
        }
        match current.find_subcommand(arg.as_ref()) {
            Some(sub) => {
                path.push(sub.get_name().to_owned());
                current = sub;
            }
            None => break,
        }
    }
    path.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command() -> Command {
        Command::new("mcpkit")
            .subcommand(Command::new("list").arg(clap::Arg::new("kind").required(true)))
            .subcommand(Command::new("serve").arg(clap::Arg::new("http").long("http")))
    }

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn the_path_follows_the_subcommands_given() {
        let command = command();
        assert_eq!(command_path(&command, &args(&["mcpkit", "-v", "list", "--json"])), "mcpkit list");
        assert_eq!(command_path(&command, &args(&["mcpkit", "nope", "list"])), "mcpkit");
        assert_eq!(command_path(&command, &args(&["mcpkit", "--", "list"])), "mcpkit");
    }

    #[test]
    fn a_server_given_as_a_positional_gets_a_hint() {
        let command = Command::new("mcpkit").subcommand(
            Command::new("list")
                .arg(clap::Arg::new("kind").required(true))
                .arg(clap::Arg::new("url").long("url")),
        );
        let hint = |line: &[&str]| {
            let error = command.clone().try_get_matches_from(line).unwrap_err();
            target_hint(&error, &command_path(&command, &args(line)))
        };
        assert_eq!(
            hint(&["mcpkit", "list", "tools", "http://h/mcp"]).as_deref(),
            Some("a server at a URL is given with --url: 'mcpkit list … --url http://h/mcp'")
        );
        assert_eq!(
            hint(&["mcpkit", "list", "tools", "npx", "-y"]).as_deref(),
            Some("a server's command line goes after --: 'mcpkit list … -- npx …'")
        );
        assert_eq!(hint(&["mcpkit", "list", "tools", "--nope"]), None);
    }

    #[test]
    fn messages_are_one_line_without_the_usage() {
        let command = command();
        let error = command.clone().try_get_matches_from(["mcpkit", "list"]).unwrap_err();
        assert_eq!(one_line(&error), "the following required arguments were not provided: <kind>");
        let error = command.try_get_matches_from(["mcpkit", "serve", "--htp", "x"]).unwrap_err();
        let line = one_line(&error);
        assert!(line.starts_with("unexpected argument '--htp' found (tip: "), "{line}");
        assert!(!line.contains('\n') && !line.contains("Usage"), "{line}");
    }
}
