//! The real `conformance-server` binary over pipes: both eras on one stdio connection, a
//! clean exit at end of input, and the `--http` placeholder.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const BINARY: &str = env!("CARGO_BIN_EXE_conformance-server");

/// The server process; killed when dropped, whatever happened.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn spawn() -> Self {
        let mut child = Command::new(BINARY)
            .arg("--stdio")
            .env_remove("RUST_LOG")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary starts");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        // A reader thread, so that reads can time out.
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Server { child, stdin, lines }
    }

    fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    fn recv(&self) -> Value {
        let line = self.lines.recv_timeout(Duration::from_secs(10)).expect("the server answers in time");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout carries only JSON-RPC ({e}): {line}"))
    }

    fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let response = self.recv();
        assert_eq!(response["id"], id, "{response}");
        response
    }

    /// Closes stdin and waits for the process to exit by itself.
    fn close_and_wait(&mut self, limit: Duration) -> std::process::ExitStatus {
        drop(self.stdin.take());
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(started.elapsed() < limit, "the server did not exit within {limit:?} of end of input");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[test]
fn serves_both_eras_over_stdio_and_exits_at_end_of_input() {
    let mut server = Server::spawn();
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let r = server.request(1, "tools/call", json!({"_meta": meta, "name": "test_simple_text"}));
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    assert_eq!(r["result"]["content"][0]["text"], "This is a simple text response for testing.");
    mcp_testkit::assert_valid("2026-07-28", "CallToolResult", &r["result"]);

    let init = json!({"protocolVersion": "2025-11-25", "capabilities": {},
                      "clientInfo": {"name": "binary-test", "version": "1"}});
    let r = server.request(2, "initialize", init);
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25", "{r}");
    assert_eq!(r["result"]["serverInfo"]["name"], conformance::NAME);
    server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let r = server.request(3, "tools/list", json!({}));
    mcp_testkit::assert_valid("2025-11-25", "ListToolsResult", &r["result"]);
    let tools = r["result"]["tools"].as_array().unwrap();
    assert!(tools.iter().any(|t| t["name"] == "test_simple_text"), "{r}");
    assert!(tools.iter().any(|t| t["name"] == "test_input_required_result_elicitation"), "{r}");

    let status = server.close_and_wait(Duration::from_secs(5));
    assert!(status.success(), "{status}");
    let mut stderr = String::new();
    server.child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    assert!(!stderr.contains("ERROR"), "{stderr}");
}

#[test]
fn exits_at_end_of_input_with_a_subscription_open() {
    let mut server = Server::spawn();
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let params = json!({"_meta": meta, "notifications": {"toolsListChanged": true}});
    server
        .send(json!({"jsonrpc": "2.0", "id": "listen", "method": "subscriptions/listen", "params": params}));
    let ack = server.recv();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged", "{ack}");
    let status = server.close_and_wait(Duration::from_secs(5));
    assert!(status.success(), "{status}");
}

#[test]
fn an_invalid_http_address_is_a_usage_error() {
    // Serving over HTTP is exercised by `interop_http.rs` and `suite_http.rs`.
    let output = Command::new(BINARY).args(["--http", "not-an-address"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("invalid address"), "{output:?}");
    assert!(output.stdout.is_empty());
}

#[test]
fn a_transport_is_required() {
    let output = Command::new(BINARY).output().unwrap();
    assert_eq!(output.status.code(), Some(2), "a usage error");
    assert!(String::from_utf8_lossy(&output.stderr).contains("--stdio"));
}
