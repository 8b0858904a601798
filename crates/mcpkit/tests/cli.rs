//! The real `mcpkit` binary, over real pipes.

use std::io::Write;
use std::process::{Command, Stdio};

fn mcpkit(args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcpkit"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mcpkit");
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn check_reports_and_sets_exit_status() {
    let (code, out, _) = mcpkit(&["check"], "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\"}\n");
    assert_eq!(code, 0);
    assert_eq!(out.trim(), r#"{"id":7,"kind":"request","method":"tools/call"}"#);

    let (code, out, _) =
        mcpkit(&["check", "--requests-only"], "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\u{feff}{}\n");
    assert_eq!(code, 1);
    let lines: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines[0]["code"], -32600);
    assert_eq!(lines[1]["code"], -32700);
}

#[test]
fn usage_errors_exit_2_with_one_message() {
    let (code, _, err) = mcpkit(&["check", "--protocol-version", "1999-01-01"], "");
    assert_eq!(code, 2);
    assert!(err.contains("unknown MCP protocol version"), "{err}");
}

#[test]
fn versions_lists_every_revision() {
    let (code, out, _) = mcpkit(&["versions"], "");
    assert_eq!(code, 0);
    assert_eq!(out.lines().next(), Some("2026-07-28  modern"));
    assert!(out.contains("2025-03-26  legacy (batches)"));
    assert_eq!(out.lines().count(), 5);
}
