//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, both frozen requirement
//! sets 2026-07-28 and 2025-11-25, both legs) through `scripts/conformance.sh`: the server leg
//! against `conformance-server --http`, the client leg against `conformance-client`. The script
//! installs Node 22 and the pinned suite into `.cache/`, starts the server on a free port, lets the
//! suite run the client once per client scenario (all of a set at once), and fails when a scored
//! scenario (other than the client's expected failures in
//! `scripts/conformance/client-expected-failures.yml`, the `auth/*` scenarios for now), or one of
//! its required not-scored scenarios, fails.
//!
//! The server and the client are the binaries this `cargo test` built (`CONFORMANCE_SERVER` and
//! `CONFORMANCE_CLIENT`, unless already set), so the script builds nothing; `CONFORMANCE_LEGS`
//! (`server`, `client`) reaches the script and limits the run to one leg. Results stay in
//! `.cache/conformance/results/` (`summary.txt`; per set one folder of `checks.json` per scenario
//! and the suite's logs, in `REV/` for the server leg and `client-REV/` for the client leg, whose
//! folders also keep the client's stdout and stderr; `server.log`); `RUST_LOG` reaches the server
//! and the client.
#![cfg(unix)]

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

/// The whole run, first installation and both legs of both requirement sets included (each set
/// is bounded by the script's own 300 s); then the script's process group (the script, the server,
/// the suite, the clients it started) is killed.
const TIMEOUT: Duration = Duration::from_secs(25 * 60);

/// One suite run at a time: the runs share the installed suite and the free-port search.
static ONE_RUN: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn official_suite_over_http() {
    let _one = ONE_RUN.lock().unwrap_or_else(|e| e.into_inner());
    let root = repository();
    let mut command = suite(&root);
    if std::env::var_os("CONFORMANCE_SERVER").is_none() {
        command.env("CONFORMANCE_SERVER", env!("CARGO_BIN_EXE_conformance-server"));
    }
    if std::env::var_os("CONFORMANCE_CLIENT").is_none() {
        command.env("CONFORMANCE_CLIENT", env!("CARGO_BIN_EXE_conformance-client"));
    }
    run(&root, command, &results_dir(&root));
}

/// The server leg of both requirement sets through `mcpkit gateway`, in front of
/// `conformance-server` started by the gateway over stdio (`scripts/conformance/gateway-server.sh`):
/// every scenario the fixtures pass directly must pass one hop away — MRTR passed through
/// between modern peers, elicitation and sampling bridged to legacy sessions, progress and log
/// messages passed back, errors with their codes and HTTP statuses.
#[test]
fn official_suite_through_the_gateway_stdio_upstream() {
    through_the_gateway("stdio");
}

/// The same, with `conformance-server` reached over Streamable HTTP.
#[test]
fn official_suite_through_the_gateway_http_upstream() {
    through_the_gateway("http");
}

/// The same, with `conformance-server` reached over Streamable HTTP pinned to 2025-11-25: a
/// 2026-07-28 suite speaks to a legacy upstream through the gateway (MRTR bridged to legacy
/// server→client requests). One check cannot pass over a legacy link by construction
/// (`scripts/conformance/gateway-legacy-expected-failures.yml` says why).
#[test]
fn official_suite_through_the_gateway_legacy_http_upstream() {
    through_the_gateway("http-legacy");
}

/// The same, with `conformance-server` reached over the deprecated HTTP+SSE transport.
#[test]
fn official_suite_through_the_gateway_sse_upstream() {
    through_the_gateway("sse");
}

fn through_the_gateway(upstream: &str) {
    let _one = ONE_RUN.lock().unwrap_or_else(|e| e.into_inner());
    let root = repository();
    let mut command = suite(&root);
    if matches!(upstream, "http-legacy" | "sse") {
        command.env(
            "SERVER_EXPECTED_FAILURES",
            root.join("scripts/conformance/gateway-legacy-expected-failures.yml"),
        );
    }
    let results = root.join(format!(".cache/conformance/results-gateway-{upstream}"));
    command
        .env("CONFORMANCE_LEGS", "server")
        .env("CONFORMANCE_SERVER", root.join("scripts/conformance/gateway-server.sh"))
        .env("CONFORMANCE_RESULTS", &results)
        .env("UPSTREAM", env!("CARGO_BIN_EXE_conformance-server"))
        .env("MCPKIT", mcpkit_binary())
        .env("GATEWAY_UPSTREAM", upstream);
    run(&root, command, &results);
}

/// The `mcpkit` binary beside this package's binaries (built by `cargo test --workspace`; built
/// here when this package's tests run alone).
fn mcpkit_binary() -> PathBuf {
    let dir = Path::new(env!("CARGO_BIN_EXE_conformance-server"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let binary = dir.join("mcpkit");
    if !binary.is_file() {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "--locked", "-p", "mcpkit"])
            .current_dir(repository())
            .status()
            .expect("cargo build -p mcpkit");
        assert!(status.success(), "cargo build -p mcpkit failed");
    }
    assert!(binary.is_file(), "{} is missing", binary.display());
    binary
}

fn repository() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

/// `scripts/conformance.sh` as its own process group, its output piped.
fn suite(root: &Path) -> Command {
    let script = root.join("scripts/conformance.sh");
    assert!(script.is_file(), "{} is missing", script.display());
    let mut command = Command::new("bash");
    command
        .arg(&script)
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    command
}

/// Runs the suite; panics with its output unless it passed.
fn run(root: &Path, mut command: Command, results: &Path) {
    let script = root.join("scripts/conformance.sh");
    let mut child = command.spawn().unwrap_or_else(|e| panic!("cannot start bash {}: {e}", script.display()));
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());

    let deadline = Instant::now() + TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() >= deadline => break None,
            Ok(None) => thread::sleep(Duration::from_millis(100)),
            Err(e) => panic!("waiting for {}: {e}", script.display()),
        }
    };
    // On a timeout this stops the script, the server and the suite; after a normal exit it only
    // reaches stragglers (the script stops its server itself).
    kill_group(child.id());
    let _ = child.kill();
    let _ = child.wait();
    let (stdout, stderr) = (collect(&stdout), collect(&stderr));

    let problem = match status {
        None => format!("killed after {} s", TIMEOUT.as_secs()),
        Some(status) if status.success() => {
            println!("{stdout}");
            return;
        }
        Some(status) => format!("failed: {status}"),
    };
    panic!(
        "scripts/conformance.sh {problem} (results in {})\n--- stdout\n{stdout}--- stderr\n{stderr}",
        results.display()
    );
}

fn results_dir(root: &Path) -> PathBuf {
    std::env::var_os("CONFORMANCE_RESULTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join(".cache/conformance/results"))
}

/// SIGKILL to the process group led by `leader` (the script was started as its own group leader).
fn kill_group(leader: u32) {
    let _ = Command::new("sh")
        .args(["-c", r#"kill -s KILL -- "-$1""#, "sh", &leader.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
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

/// A pipe's contents, not waiting forever: a process that escaped the kill may hold it open.
fn collect(output: &Receiver<String>) -> String {
    output
        .recv_timeout(Duration::from_secs(5))
        .unwrap_or_else(|_| "<output still open after the kill>\n".to_owned())
}
