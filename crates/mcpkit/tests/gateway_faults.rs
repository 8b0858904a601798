//! `mcpkit gateway` when an upstream dies (it is restarted and served again), when the
//! gateway itself stops (its upstreams go with it) and when a downstream caller gives up (the
//! upstream request is cancelled). Upstream processes are found by a marker in the environment
//! the configuration gives them.
#![cfg(target_os = "linux")] // /proc

mod gateway_support;
mod support;

use std::io::Read;
use std::process::{Child, Stdio};
use std::time::Duration;

use nix::sys::signal::Signal;

use gateway_support::{
    Dir, PATIENCE, eventually, json, marker, marker_env, pids_with, stdio_upstream, the_pid_with, through_url,
};

/// How long the upstreams of a stopped gateway may take to be gone.
const CLEANUP: Duration = Duration::from_secs(10);

fn assert_all_gone(marker: &str, what: &str) {
    eventually(&format!("no process with {marker} after {what}"), CLEANUP, || {
        let left = pids_with(marker);
        if left.is_empty() { Ok(()) } else { Err(format!("{left:?}")) }
    });
}

#[test]
fn a_killed_upstream_is_restarted_and_served_again() {
    let dir = Dir::new("crash");
    let (ma, mb) = (marker("crash-a"), marker("crash-b"));
    let config = [
        stdio_upstream("a", &marker_env(&ma)),
        stdio_upstream("b", &format!("naming = \"always\"\n{}", marker_env(&mb))),
    ]
    .concat();
    let config = dir.write_config(&config);
    let gateway = gateway_support::gateway_http(&config);
    let first = the_pid_with(&mb);
    let a_pid = the_pid_with(&ma);

    gateway_support::signal(first, Signal::SIGKILL);
    let status = eventually("b to be reconnected", PATIENCE, || {
        let status = gateway_support::status(&gateway);
        let b = gateway_support::upstream(&status, "b");
        if b["state"] == "ready" && b["connects"] == 2 {
            Ok(status)
        } else {
            Err(format!("{status}\ngateway stderr:\n{}", gateway.stderr()))
        }
    });
    let b = gateway_support::upstream(&status, "b");
    assert!(b["last_error"].as_str().is_some_and(|e| !e.is_empty()), "the crash is reported: {status}");
    assert_eq!(gateway_support::upstream(&status, "a")["connects"], 1, "a was left alone: {status}");
    let second = the_pid_with(&mb);
    assert_ne!(second, first, "a new process");
    assert_eq!(the_pid_with(&ma), a_pid, "a was left alone");

    // Its tools are listed and callable again.
    let (code, out, err) = through_url(gateway.url(), &["call", "b__echo", "--arg", "text=back again"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(gateway_support::text(&json(&out)), "back again");
    let (code, out, err) = through_url(gateway.url(), &["list", "tools"]);
    assert_eq!(code, 0, "{err}");
    assert!(gateway_support::tool_names(&json(&out)).iter().any(|n| n == "b__add"), "{out}");
}

#[test]
fn sigterm_stops_the_http_gateway_and_its_upstreams() {
    let dir = Dir::new("sigterm");
    let (ma, mb) = (marker("term-a"), marker("term-b"));
    let config = [
        stdio_upstream("a", &marker_env(&ma)),
        stdio_upstream("b", &format!("naming = \"always\"\n{}", marker_env(&mb))),
    ]
    .concat();
    let config = dir.write_config(&config);
    let mut gateway = gateway_support::gateway_http(&config);
    the_pid_with(&ma);
    the_pid_with(&mb);

    gateway_support::signal(gateway.id(), Signal::SIGTERM);
    let status = gateway.wait_exit(PATIENCE);
    assert!(status.is_some(), "the gateway still runs after SIGTERM: {}", gateway.stderr());
    assert_all_gone(&ma, "SIGTERM");
    assert_all_gone(&mb, "SIGTERM");
}

/// A child killed (and reaped) when dropped.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_end_of_stdin_stops_the_stdio_gateway_and_its_upstreams() {
    let dir = Dir::new("stdin");
    let m = marker("stdin");
    let config = dir.write_config(&stdio_upstream("a", &marker_env(&m)));
    let mut command = support::command(&["gateway", "--config", config.to_str().unwrap(), "--stdio"]);
    let mut gateway =
        Guard(command.stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap());
    the_pid_with(&m);

    drop(gateway.0.stdin.take());
    let exited = eventually("the gateway to exit", PATIENCE, || match gateway.0.try_wait() {
        Ok(Some(status)) => Ok(status),
        other => Err(format!("{other:?}")),
    });
    let mut stderr = String::new();
    gateway.0.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    assert!(exited.success(), "{exited}: {stderr}");
    assert_all_gone(&m, "the end of stdin");
}

#[test]
fn a_downstream_cancel_reaches_the_upstream() {
    use std::io::{BufRead, BufReader};

    let dir = Dir::new("cancel");
    let config = dir.write_config(&stdio_upstream("a", ""));
    // The gateway's own client traces what it sends its upstreams.
    let mut command =
        support::command(&["gateway", "--config", config.to_str().unwrap(), "--http", "127.0.0.1:0"]);
    command.env("RUST_LOG", "mcp_client::wire=trace");
    let gateway = mcp_testkit::process::ListeningProcess::start(command);

    let args = ["call", "countdown", "--arg", "seconds=120", "--progress", "--url", gateway.url()];
    let mut call =
        Guard(support::command(&args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap());
    let mut stderr = BufReader::new(call.0.stderr.take().unwrap());
    // The first progress report: the upstream runs the countdown.
    let mut line = String::new();
    while !line.starts_with("progress ") {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "mcpkit call ended before any progress");
    }
    gateway_support::signal(call.0.id(), Signal::SIGINT);
    let exited = eventually("mcpkit call to exit", PATIENCE, || match call.0.try_wait() {
        Ok(Some(status)) => Ok(status),
        other => Err(format!("{other:?}")),
    });
    assert_eq!(exited.code(), Some(130), "{exited}");

    // The gateway cancels its upstream request, and the upstream's countdown stops.
    eventually("notifications/cancelled sent upstream, and the countdown stopped", PATIENCE, || {
        let trace = gateway.stderr();
        let sent =
            trace.lines().any(|l| l.contains("-> ") && l.contains(r#""method":"notifications/cancelled""#));
        let stopped = trace.lines().any(|l| l.contains("<- ") && l.contains(r#""text":"cancelled""#));
        if sent && stopped { Ok(()) } else { Err(trace) }
    });
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
#[ignore = "BUG: at the end of stdin mcp-server (stdio.rs) keeps the gateway's open subscriptions/listen \
            in flight for its 2 s EOF_GRACE (connection.close() only after it, contrary to its doc), and \
            the gateway does not cancel the listen before closing: mcp-client SIGTERMs every modern stdio \
            upstream after its own 2 s, and Gateway::close takes 2 s per upstream, one after another"]
fn a_modern_upstream_exits_by_itself_when_the_gateway_closes() {
    let err = check_with_stop_log("stop-modern", "");
    assert_stopped_by_itself(&err);
}
