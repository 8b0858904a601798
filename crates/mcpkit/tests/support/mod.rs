//! What the tests of the `mcpkit` binary share: running it, and serving it over HTTP.
#![allow(dead_code)] // each test file uses its own part

use std::io::Write;
use std::process::{Command, Stdio};

use mcp_testkit::process::ListeningProcess;

/// The binary under test.
pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_mcpkit");

/// `mcpkit` with the environment of a test: no `RUST_LOG`, no `$MCPKIT_CONFIG`, and a
/// credentials directory of its own (never the user's; nothing is written there unless a server
/// demands authorization).
pub(crate) fn command(args: &[&str]) -> Command {
    let credentials = std::env::temp_dir().join(format!("mcpkit-test-credentials-{}", std::process::id()));
    let mut command = Command::new(BIN);
    command
        .args(args)
        .env_remove("RUST_LOG")
        .env_remove("MCPKIT_CONFIG")
        .env("MCPKIT_CREDENTIALS_DIR", credentials);
    command
}

/// Runs `mcpkit args...` with `stdin` (none: `/dev/null`) to the end: (exit status, stdout,
/// stderr).
pub(crate) fn run_with(mut command: Command, stdin: Option<&str>) -> (i32, String, String) {
    let mut child = command
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mcpkit");
    if let Some(input) = stdin {
        // Dropped at the end of the statement: the child sees the end of its input. It may exit
        // before reading everything (e.g. after declining a question): a broken pipe is fine.
        let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Runs `mcpkit args...` with no input: (exit status, stdout, stderr).
pub(crate) fn run(args: &[&str]) -> (i32, String, String) {
    run_with(command(args), None)
}

/// `mcpkit serve --http 127.0.0.1:0 extra...`, killed on drop; `url()` is its MCP endpoint.
pub(crate) fn serve_http(extra: &[&str]) -> ListeningProcess {
    let mut command = command(&["serve", "--http", "127.0.0.1:0"]);
    command.args(extra);
    ListeningProcess::start(command)
}
