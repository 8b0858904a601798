//! `mcpkit gateway` stopping: whether asked by a signal or by the end of its stdin, no upstream
//! process outlives it — not even one that would not stop by itself. Upstream processes are
//! found by a marker in the environment the configuration gives them.
#![cfg(target_os = "linux")] // /proc

mod gateway_support;
mod support;

use std::io::Read;
use std::process::{Child, Stdio};
use std::time::Duration;

use nix::sys::signal::Signal;

use gateway_support::{Dir, PATIENCE, eventually, marker, marker_env, pids_with, quoted, stdio_upstream};

/// How long the upstreams of a stopped gateway may take to be gone.
const CLEANUP: Duration = Duration::from_secs(10);

/// A `[servers.NAME]` table whose process is a shell running `mcpkit serve --stdio` and then,
/// once that ends, a long sleep (a server that lingers, with a child of its own: only stopping
/// its process group stops it); `extra` lines after.
fn lingering_upstream(name: &str, marker: &str, extra: &str) -> String {
    format!(
        "[servers.{name}]\ncommand = \"sh\"\nargs = [\"-c\", \"\\\"$$0\\\" serve --stdio; sleep 600\", {}]\n{}\n{extra}\n",
        quoted(support::BIN),
        marker_env(marker),
    )
}

/// Kills every process with its marker when dropped, so a failing test leaves none behind.
struct Sweep(Vec<String>);

impl Drop for Sweep {
    fn drop(&mut self) {
        for marker in &self.0 {
            for pid in pids_with(marker) {
                let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), Signal::SIGKILL);
            }
        }
    }
}

/// A child killed (and reaped) when dropped.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn assert_all_gone(marker: &str, what: &str) {
    eventually(&format!("no process with {marker} after {what}"), CLEANUP, || {
        let left = pids_with(marker);
        if left.is_empty() { Ok(()) } else { Err(format!("{left:?}")) }
    });
}

/// Two lingering upstreams (`a`, and `b` always prefixed) and their markers.
fn two_lingering(dir: &Dir, test: &str) -> (std::path::PathBuf, [String; 2], Sweep) {
    let markers = [marker(&format!("{test}-a")), marker(&format!("{test}-b"))];
    let config = [
        lingering_upstream("a", &markers[0], ""),
        lingering_upstream("b", &markers[1], "naming = \"always\""),
    ]
    .concat();
    let sweep = Sweep(markers.to_vec());
    (dir.write_config(&config), markers, sweep)
}

/// `mcpkit gateway --config CONFIG --stdio`, with its stdin piped, once its upstreams run.
fn stdio_gateway(config: &std::path::Path, markers: &[String]) -> Guard {
    let mut command = support::command(&["gateway", "--config", config.to_str().unwrap(), "--stdio"]);
    let gateway =
        Guard(command.stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap());
    wait_running(markers);
    gateway
}

/// Waits for the upstreams of `markers` to run: each a shell and its `mcpkit serve`.
fn wait_running(markers: &[String]) {
    for marker in markers {
        eventually(&format!("the processes of {marker}"), PATIENCE, || match pids_with(marker).len() {
            2 => Ok(()),
            n => Err(format!("{n} processes")),
        });
    }
}

fn wait_exit(gateway: &mut Guard) -> (std::process::ExitStatus, String) {
    let exited = eventually("the gateway to exit", PATIENCE, || match gateway.0.try_wait() {
        Ok(Some(status)) => Ok(status),
        other => Err(format!("{other:?}")),
    });
    let mut stderr = String::new();
    gateway.0.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    (exited, stderr)
}

#[test]
fn sigterm_stops_the_http_gateway_and_its_upstreams() {
    let dir = Dir::new("sigterm-http");
    let (config, markers, _sweep) = two_lingering(&dir, "term-http");
    let mut gateway = gateway_support::gateway_http(&config);
    wait_running(&markers);

    gateway_support::signal(gateway.id(), Signal::SIGTERM);
    let status = gateway.wait_exit(PATIENCE);
    assert!(status.is_some(), "the gateway still runs after SIGTERM: {}", gateway.stderr());
    for marker in &markers {
        assert_all_gone(marker, "SIGTERM");
    }
}

#[test]
fn the_end_of_stdin_stops_the_stdio_gateway_and_its_upstreams() {
    let dir = Dir::new("stdin");
    let (config, markers, _sweep) = two_lingering(&dir, "stdin");
    let mut gateway = stdio_gateway(&config, &markers);

    drop(gateway.0.stdin.take());
    let (exited, stderr) = wait_exit(&mut gateway);
    assert!(exited.success(), "{exited}: {stderr}");
    for marker in &markers {
        assert_all_gone(marker, "the end of stdin");
    }
}

#[test]
fn sigterm_stops_the_stdio_gateway_and_its_upstreams() {
    let dir = Dir::new("sigterm-stdio");
    let (config, markers, _sweep) = two_lingering(&dir, "term-stdio");
    let mut gateway = stdio_gateway(&config, &markers);

    gateway_support::signal(gateway.0.id(), Signal::SIGTERM);
    let (_, stderr) = wait_exit(&mut gateway);
    for marker in &markers {
        assert_all_gone(marker, &format!("SIGTERM (gateway stderr: {stderr})"));
    }
}

/// `mcpkit gateway --check` on one stdio upstream (`extra`: more of its table), with the
/// gateway's stdio transport logging how the upstream process ended: its stderr.
fn check_with_stop_log(test: &str, extra: &str) -> String {
    let dir = Dir::new(test);
    let config = dir.write_config(&stdio_upstream("up", extra));
    let mut command = support::command(&["gateway", "--config", config.to_str().unwrap(), "--check"]);
    command.env("RUST_LOG", "mcp_client::transport::stdio=debug");
    let (code, out, err) = support::run_with(command, None);
    assert_eq!(code, 0, "{out}\n{err}");
    err
}

/// The upstream ended by itself (its stdin closed), not by the signal after the grace period.
fn assert_stopped_by_itself(err: &str) {
    assert!(err.contains("server process stopped (exit status: 0)"), "{err}");
    assert!(!err.contains("SIGTERM") && !err.contains("SIGKILL"), "{err}");
}

#[test]
fn a_legacy_upstream_exits_by_itself_when_the_gateway_closes() {
    let err = check_with_stop_log("stop-legacy", "protocol_version = \"2025-06-18\"");
    assert_stopped_by_itself(&err);
}

#[test]
fn a_modern_upstream_exits_by_itself_when_the_gateway_closes() {
    let err = check_with_stop_log("stop-modern", "");
    assert_stopped_by_itself(&err);
}

/// A signal while the upstreams are still starting (one that never answers its handshake):
/// the gateway stops with the signal's status, and takes the upstream's whole process group
/// with it rather than dying by default and leaving it behind.
/// A stdio gateway whose one upstream is `sh -c SCRIPT` (`$0` being mcpkit; `extra`: more of
/// its table), once the shell and the first command of its script run; the upstream's marker.
/// The directory holds the configuration, and the sweep kills what a failing test leaves.
fn starting_upstream(test: &str, script: &str, extra: &str) -> (Guard, String, Dir, Sweep) {
    let dir = Dir::new(test);
    let marker = marker(test);
    let sweep = Sweep(vec![marker.clone()]);
    let config = dir.write_config(&format!(
        "[servers.up]\ncommand = \"sh\"\nargs = [\"-c\", {}, {}]\n{extra}\n{}\n",
        quoted(script),
        quoted(support::BIN),
        marker_env(&marker)
    ));
    let gateway = stdio_gateway(&config, std::slice::from_ref(&marker));
    (gateway, marker, dir, sweep)
}

#[test]
fn sigterm_while_an_upstream_starts_stops_the_gateway_and_the_upstream() {
    // The gateway is in its start, waiting for the handshake that never comes.
    let (mut gateway, silent, _dir, _sweep) =
        starting_upstream("term-starting", "sleep 600; true", "start_timeout_ms = 600000");

    gateway_support::signal(gateway.0.id(), Signal::SIGTERM);
    let (exited, stderr) = wait_exit(&mut gateway);
    assert_eq!(exited.code(), Some(143), "{exited}: {stderr}");
    assert_all_gone(&silent, &format!("SIGTERM while starting (gateway stderr: {stderr})"));
}

/// A SIGHUP while the upstreams are still starting asks for a reload: it does not stop the
/// gateway, which goes on to serve (here until its stdin ends) once its upstream answers.
#[test]
fn sighup_while_an_upstream_starts_does_not_stop_the_gateway() {
    // The shell and its sleep: the upstream has not started its server yet.
    let (mut gateway, slow, _dir, _sweep) =
        starting_upstream("hup-starting", "sleep 3; exec \"$$0\" serve --stdio", "");

    gateway_support::signal(gateway.0.id(), Signal::SIGHUP);
    drop(gateway.0.stdin.take());
    let (exited, stderr) = wait_exit(&mut gateway);
    assert!(exited.success(), "{exited}: {stderr}");
    assert!(stderr.contains("configuration reloaded from"), "the reload, once serving: {stderr}");
    assert_all_gone(&slow, "the end of stdin");
}

/// A second SIGTERM while the HTTP gateway waits for a request in flight stops it at once —
/// and its upstreams with it, even those that would not stop by themselves (exiting the process
/// outright left them behind).
#[test]
fn a_second_sigterm_stops_the_http_gateway_at_once_and_its_upstreams_too() {
    let dir = Dir::new("sigterm-twice");
    let (config, markers, _sweep) = two_lingering(&dir, "term-twice");
    let mut gateway = gateway_support::gateway_http(&config);
    wait_running(&markers);
    // A call the first signal's grace waits for: a countdown of a minute.
    let mut call = Guard(
        support::command(&["call", "countdown", "--arg", "seconds=60", "--url", gateway.url()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    eventually("the countdown in flight", PATIENCE, || {
        let status = gateway_support::status(&gateway);
        match gateway_support::upstream(&status, "a")["in_flight"].as_u64() {
            Some(1) => Ok(()),
            other => Err(format!("{other:?} in flight")),
        }
    });

    gateway_support::signal(gateway.id(), Signal::SIGTERM);
    eventually("the gateway draining", PATIENCE, || {
        let stderr = gateway.stderr();
        if stderr.contains("shutting down") { Ok(()) } else { Err(stderr) }
    });
    gateway_support::signal(gateway.id(), Signal::SIGTERM);
    let status = gateway.wait_exit(PATIENCE);
    assert_eq!(status.and_then(|s| s.code()), Some(143), "{}", gateway.stderr());
    for marker in &markers {
        assert_all_gone(marker, "a second SIGTERM");
    }
    let _ = call.0.wait();
}
