//! `--server NAME`: which configuration file names the server, and what it says of it.
//!
//! The files are those other hosts write, read by the gateway's own reader
//! (`mcp_gateway::config::load_server`), so an entry means the same to `mcpkit call` as to
//! `mcpkit gateway`: `mcpServers` (Claude Desktop, Claude Code, Cursor) or VS Code's `servers`
//! and `inputs`; `type` (`stdio`, `http`, `sse`), `envFile`, `disabled`; `${VAR}`,
//! `${VAR:-default}`, `${env:VAR}`, `${file:PATH}`, `${workspaceFolder}` and `${input:ID}`
//! expanded, an unset one an error rather than a placeholder sent as a credential.
//!
//! Without `--config`, the project's files in the current directory are looked in first
//! ([`PROJECT_FILES`]), then the user's file ([`user_config`]); the first that names the server
//! is used.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;

use anyhow::{anyhow, bail};
use mcp_gateway::config::{ConfigError, Input, Lookup, UpstreamConfig};

/// The project files looked in, in order, relative to the current directory.
pub(crate) const PROJECT_FILES: [&str; 3] = [".mcp.json", ".vscode/mcp.json", ".cursor/mcp.json"];

/// The user's `mcpServers` file: $MCPKIT_CONFIG, else $XDG_CONFIG_HOME/mcpkit/config.json, else
/// ~/.config/mcpkit/config.json.
pub(crate) fn user_config() -> anyhow::Result<PathBuf> {
    if let Some(path) = std::env::var_os("MCPKIT_CONFIG").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    if let Some(dir) = std::env::var_os("XDG_CONFIG_HOME").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(dir).join("mcpkit").join("config.json"));
    }
    match std::env::var_os("HOME").filter(|p| !p.is_empty()) {
        Some(home) => Ok(PathBuf::from(home).join(".config").join("mcpkit").join("config.json")),
        None => bail!("no config file: pass --config FILE or set MCPKIT_CONFIG"),
    }
}

/// The server `name` and the file that named it.
pub(crate) struct Found {
    pub(crate) upstream: UpstreamConfig,
    pub(crate) file: PathBuf,
}

/// Finds the server `name`: in `explicit` alone when given, else in the project's files, then
/// the user's.
pub(crate) fn find(name: &str, explicit: Option<&PathBuf>) -> anyhow::Result<Found> {
    let files: Vec<PathBuf> = match explicit {
        Some(path) => vec![path.clone()],
        None => {
            let mut files: Vec<PathBuf> = PROJECT_FILES.iter().map(PathBuf::from).collect();
            // Without $HOME (nor $MCPKIT_CONFIG, $XDG_CONFIG_HOME) there is no user file: the
            // project's files may still name the server.
            files.extend(user_config().ok());
            files
        }
    };
    let mut looked = Vec::new();
    for file in &files {
        // A project file that is not there is simply not used; the file asked for must be.
        if explicit.is_none() && !file.exists() {
            looked.push(format!("{} (none)", file.display()));
            continue;
        }
        match mcp_gateway::config::load_server(file, name, &ask) {
            Ok(Lookup::Found(upstream)) => return Ok(Found { upstream: *upstream, file: file.clone() }),
            Ok(Lookup::Disabled) => bail!(
                "server {name:?} in {} is disabled (\"disabled\": true); set it to false to use it",
                file.display()
            ),
            Ok(Lookup::Missing { names }) if names.is_empty() => {
                looked.push(format!("{} (it has none)", file.display()));
            }
            Ok(Lookup::Missing { names }) => {
                looked.push(format!("{} (it has: {})", file.display(), names.join(", ")));
            }
            Err(e) => return Err(explain(e)),
        }
    }
    match (explicit, looked.as_slice()) {
        (Some(file), [only]) => {
            let what = only.strip_prefix(&file.display().to_string()).unwrap_or_default();
            bail!("no server {name:?} in {}; {}", file.display(), what.trim().trim_matches(['(', ')']))
        }
        _ => bail!("no server {name:?} in {}", looked.join(", ")),
    }
}

/// A configuration error, with what to do about an input nobody could be asked for.
fn explain(error: ConfigError) -> anyhow::Error {
    match &error {
        ConfigError::UnresolvedInput { .. } => {
            anyhow!("{error} (or run mcpkit on a terminal to be asked)")
        }
        _ => anyhow!("{error}"),
    }
}

/// Asks for `${input:ID}` on the terminal (stdin and stderr both terminals); `Ok(None)` in a
/// pipe, where nobody can answer.
fn ask(input: &Input) -> Result<Option<String>, String> {
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return Ok(None);
    }
    let question = question(input);
    let show = || {
        let mut stderr = std::io::stderr().lock();
        let _ = write!(stderr, "{question}");
        let _ = stderr.flush();
    };
    // A secret: the echo goes off before the question shows, so nothing typed after it is seen.
    let line = if input.password {
        read_hidden(show)
    } else {
        show();
        read_line()
    };
    if input.password {
        let _ = writeln!(std::io::stderr().lock());
    }
    let line = line.map_err(|e| format!("cannot read the answer: {e}"))?;
    let Some(line) = line else { return Err("no answer (end of input)".into()) };
    answer(input, &line)
}

/// The question for `input`: its description (else its id), its options, its default.
fn question(input: &Input) -> String {
    let mut text = input.description.as_deref().unwrap_or(&input.id).to_owned();
    if !input.options.is_empty() {
        text.push_str(&format!(" ({})", input.options.join(", ")));
    }
    if let Some(default) = &input.default {
        if input.password {
            text.push_str(" [default: ***]");
        } else {
            text.push_str(&format!(" [default: {default}]"));
        }
    }
    text.push_str(": ");
    text
}

/// The value a typed `line` gives `input`: the default for an empty line, an option's value
/// for a `pickString` (by its text or its number).
fn answer(input: &Input, line: &str) -> Result<Option<String>, String> {
    let typed = line.trim_end_matches(['\n', '\r']);
    if typed.is_empty() {
        return match &input.default {
            Some(default) => Ok(Some(default.clone())),
            None => Err(format!("no value given for input `{}`", input.id)),
        };
    }
    if input.options.is_empty() {
        return Ok(Some(typed.to_owned()));
    }
    if let Some(option) = input.options.iter().find(|o| o.as_str() == typed.trim()) {
        return Ok(Some(option.clone()));
    }
    match typed.trim().parse::<usize>() {
        Ok(n) if (1..=input.options.len()).contains(&n) => Ok(Some(input.options[n - 1].clone())),
        _ => Err(format!("{typed:?} is not one of: {}", input.options.join(", "))),
    }
}

fn read_line() -> std::io::Result<Option<String>> {
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line)? {
        0 => Ok(None),
        _ => Ok(Some(line)),
    }
}

/// A line read with the terminal's echo off (a secret is not shown as it is typed); the
/// question is shown by `show` once the echo is off.
#[cfg(unix)]
fn read_hidden(show: impl FnOnce()) -> std::io::Result<Option<String>> {
    use nix::sys::termios::{LocalFlags, SetArg, tcgetattr, tcsetattr};
    let stdin = std::io::stdin();
    let saved = tcgetattr(&stdin).map_err(std::io::Error::from)?;
    let mut quiet = saved.clone();
    quiet.local_flags.remove(LocalFlags::ECHO);
    tcsetattr(&stdin, SetArg::TCSANOW, &quiet).map_err(std::io::Error::from)?;
    show();
    let line = read_line();
    let _ = tcsetattr(&stdin, SetArg::TCSANOW, &saved);
    line
}

#[cfg(not(unix))]
fn read_hidden(show: impl FnOnce()) -> std::io::Result<Option<String>> {
    show();
    read_line()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pick() -> Input {
        Input {
            id: "region".into(),
            description: Some("Region".into()),
            options: vec!["eu".into(), "us".into()],
            default: Some("eu".into()),
            ..Input::default()
        }
    }

    #[test]
    fn questions_show_options_and_defaults_but_never_a_secret() {
        assert_eq!(question(&pick()), "Region (eu, us) [default: eu]: ");
        let key =
            Input { id: "key".into(), password: true, default: Some("s3cret".into()), ..Input::default() };
        assert_eq!(question(&key), "key [default: ***]: ");
    }

    #[test]
    fn answers_are_typed_picked_or_defaulted() {
        assert_eq!(answer(&pick(), "\n"), Ok(Some("eu".into())));
        assert_eq!(answer(&pick(), "us\n"), Ok(Some("us".into())));
        assert_eq!(answer(&pick(), "2\n"), Ok(Some("us".into())));
        assert!(answer(&pick(), "3\n").unwrap_err().contains("not one of: eu, us"));
        let free = Input { id: "name".into(), ..Input::default() };
        assert_eq!(answer(&free, " spaced \n"), Ok(Some(" spaced ".into())));
        assert!(answer(&free, "\n").unwrap_err().contains("no value given for input `name`"));
    }
}
