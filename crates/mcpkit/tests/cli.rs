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

/// Runs `mcpkit serve --stdio` as a real process, feeds it `input`, closes stdin and returns
/// the messages it wrote. The server must exit by itself after its input ends.
fn serve(input: &[serde_json::Value]) -> Vec<serde_json::Value> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcpkit"))
        .args(["serve", "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mcpkit serve");
    {
        let mut stdin = child.stdin.take().unwrap();
        for message in input {
            writeln!(stdin, "{message}").unwrap();
        }
    }
    let started = std::time::Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if started.elapsed() > std::time::Duration::from_secs(10) {
            child.kill().unwrap();
            panic!("mcpkit serve did not exit after its input ended");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn serve_answers_modern_and_legacy_clients_over_real_pipes() {
    use serde_json::json;
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    let out = serve(&[
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta": meta,"name":"echo","arguments":{"text":"hi"}}}),
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta": meta,"name":"add","arguments":{"a":1.5,"b":2}}}),
        json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta": meta,"name":"fail","arguments":{}}}),
        json!({"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}),
        // Pipelined: a legacy request right behind `initialize` could overtake it, so this one
        // carries modern metadata (a real legacy client waits for the initialize answer).
        json!({"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"_meta": meta,"uri":"demo://notes/42"}}),
    ]);
    let by_id =
        |id: i64| out.iter().find(|m| m["id"] == id).unwrap_or_else(|| panic!("no answer to {id}: {out:?}"));
    assert_eq!(by_id(1)["result"]["content"][0]["text"], "hi");
    assert_eq!(by_id(2)["result"]["structuredContent"]["sum"], 3.5);
    assert_eq!(by_id(3)["result"]["isError"], true);
    assert_eq!(by_id(4)["result"]["serverInfo"]["name"], "mcpkit-demo");
    assert!(by_id(5)["result"]["contents"][0]["text"].as_str().unwrap().starts_with("Note 42"));
}
