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
        None => {
            let mut page = Vec::new();
            if let Err(e) = clap_mangen::Man::new(command).render(&mut page) {
                eprintln!("mcpkit: cannot render the man page: {e}");
                return ExitCode::from(2);
            }
            stdout(&page)
        }
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
