//! `mcpkit completions SHELL` and `mcpkit man [--out DIR]`: generated at run time from the
//! very `clap::Command` the parser uses, so they always list the commands and flags that exist.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Command;

/// The arguments of `mcpkit completions`.
#[derive(clap::Args, Debug)]
pub(crate) struct CompletionsArgs {
    /// The shell to complete for.
    shell: clap_complete::Shell,
}

/// The arguments of `mcpkit man`.
#[derive(clap::Args, Debug)]
pub(crate) struct ManArgs {
    /// Write one page per command into this directory (`mcpkit.1`, `mcpkit-list.1`, ...)
    /// instead of the page of `mcpkit` to stdout.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

/// Writes the completion script of `command` for the shell to stdout.
pub(crate) fn completions(args: CompletionsArgs, mut command: Command) -> ExitCode {
    let name = command.get_name().to_owned();
    // Rendered in memory first: the generators panic on a write error (a closed pipe).
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, name, &mut script);
    stdout(&script)
}

/// Writes the man page of `command` to stdout, or one page per command to `--out DIR`.
pub(crate) fn man(args: ManArgs, command: Command) -> ExitCode {
    let mut command = command.disable_help_subcommand(true);
    command.build();
    match args.out {
        None => match whole_page(&command) {
            Ok(page) => stdout(page.as_bytes()),
            Err(e) => {
                eprintln!("mcpkit: cannot render the man page: {e}");
                ExitCode::from(2)
            }
        },
        Some(dir) => {
            let written = std::fs::create_dir_all(&dir).and_then(|()| write_pages(&command, &dir));
            match written {
                Ok(paths) => {
                    let list: String = paths.iter().map(|p| format!("{}\n", p.display())).collect();
                    stdout(list.as_bytes())
                }
                Err(e) => {
                    eprintln!("mcpkit: cannot write man pages to {}: {e}", dir.display());
                    ExitCode::from(2)
                }
            }
        }
    }
}

/// One page for everything: the sections of `mcpkit` itself, then a COMMANDS section with each
/// visible subcommand's usage, description, options and examples (so `mcpkit man | man -l -`
/// documents every flag), its after-help as EXAMPLES; no hyphenation (flags and package names
/// must not be split).
fn whole_page(command: &Command) -> std::io::Result<String> {
    let man = clap_mangen::Man::new(command.clone());
    let mut page = String::new();
    page.push_str(&rendered(|w| man.render_title(w))?);
    // No hyphenation, ragged right: flags, URLs and package names stay whole.
    page.push_str(".nh\n.ad l\n");
    page.push_str(&rendered(|w| man.render_name_section(w))?);
    page.push_str(&rendered(|w| man.render_synopsis_section(w))?);
    page.push_str(&rendered(|w| man.render_description_section(w))?);
    page.push_str(&rendered(|w| man.render_options_section(w))?);
    page.push_str(".SH COMMANDS\n");
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = sub.get_bin_name().unwrap_or(sub.get_name());
        let man = clap_mangen::Man::new(sub.clone());
        page.push_str(&format!(".SS \"{name}\"\n"));
        page.push_str(&body_of(&rendered(|w| man.render_description_section(w))?));
        page.push_str(".PP\n\\fBUsage:\\fR\n");
        page.push_str(&body_of(&rendered(|w| man.render_synopsis_section(w))?));
        if sub.get_arguments().any(|a| !a.is_hide_set()) {
            page.push_str(".PP\n\\fBOptions:\\fR\n");
            page.push_str(&demoted(&rendered(|w| man.render_options_section(w))?));
        }
        if sub.get_after_help().is_some() || sub.get_after_long_help().is_some() {
            page.push_str(".PP\n");
            page.push_str(&body_of(&rendered(|w| man.render_extra_section(w))?));
        }
    }
    if command.get_after_help().is_some() || command.get_after_long_help().is_some() {
        page.push_str(&rendered(|w| man.render_extra_section(w))?.replacen(".SH EXTRA", ".SH EXAMPLES", 1));
    }
    page.push_str(&rendered(|w| man.render_version_section(w))?);
    Ok(once_prelude(&page))
}

/// Every renderer starts with the same two lines defining `\*(Aq`; the page needs them once,
/// first.
fn once_prelude(page: &str) -> String {
    const IE: &str = ".ie \\n(.g .ds Aq \\(aq";
    const EL: &str = ".el .ds Aq '";
    let body: String = page.lines().filter(|l| *l != IE && *l != EL).map(|l| format!("{l}\n")).collect();
    format!("{IE}\n{EL}\n{body}")
}

/// What one of clap_mangen's section renderers writes.
fn rendered(render: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> std::io::Result<String> {
    let mut out = Vec::new();
    render(&mut out)?;
    String::from_utf8(out).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// A rendered section without its `.SH` heading line.
fn body_of(section: &str) -> String {
    section.lines().filter(|l| !l.starts_with(".SH")).map(|l| format!("{l}\n")).collect()
}

/// Rendered sections with their `.SH` headings turned into bold paragraph titles (inside a
/// command's subsection).
fn demoted(sections: &str) -> String {
    sections
        .lines()
        .map(|l| match l.strip_prefix(".SH ") {
            Some("OPTIONS") => String::new(),
            Some(heading) => format!(".PP\n\\fB{}:\\fR\n", heading.trim_matches('"')),
            None => format!("{l}\n"),
        })
        .collect()
}

/// The page of `command` and of every visible subcommand, recursively (`command` is built, so
/// subcommands are named `mcpkit-list` and show `mcpkit list` in their synopsis).
fn write_pages(command: &Command, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut written = vec![clap_mangen::Man::new(command.clone()).generate_to(dir)?];
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        written.extend(write_pages(sub, dir)?);
    }
    Ok(written)
}

fn stdout(bytes: &[u8]) -> ExitCode {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcpkit: cannot write to stdout: {e}");
            ExitCode::from(2)
        }
    }
}
