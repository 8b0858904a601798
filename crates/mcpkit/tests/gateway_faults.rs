//! `mcpkit gateway` when an upstream dies (it is restarted and served again) and when a
//! downstream caller gives up (the upstream request is cancelled). Upstream processes are found
//! by a marker in the environment the configuration gives them.
#![cfg(target_os = "linux")] // /proc

mod gateway_support;
mod support;

use std::process::{Child, Stdio};

use nix::sys::signal::Signal;

use gateway_support::{
    Dir, PATIENCE, eventually, json, marker, marker_env, stdio_upstream, the_pid_with, through_url,
};

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
    assert_eq!(
        (&b["restarts"], &b["era"]),
        (&serde_json::json!(1), &serde_json::json!("modern")),
        "{status}"
    );
    assert_eq!(gateway_support::upstream(&status, "a")["connects"], 1, "a was left alone: {status}");
    assert_eq!(gateway_support::upstream(&status, "a")["restarts"], 0, "{status}");
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

/// A child killed (and reaped) when dropped.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
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
    let gateway = gateway_support::HttpGateway(mcp_testkit::process::ListeningProcess::start(command));

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

/// The gateway's resident memory, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// An upstream that floods the gateway with notifications (300,000 list changes and log
/// messages, ~30 MB, as fast as the pipe takes them) neither grows the gateway's memory — its
/// queues are bounded, the upstream is held back by the pipe — nor stalls the other upstream,
/// whose tools stay callable throughout; the flooding upstream itself still answers.
#[test]
fn a_flooding_upstream_neither_grows_memory_nor_stalls_the_others() {
    let dir = Dir::new("flood");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/flood_server.py");
    let flood = format!(
        "[servers.flood]\ncommand = \"python3\"\nargs = [{}, \"300000\"]\nnaming = \"always\"\n",
        gateway_support::quoted(script.to_str().unwrap())
    );
    let config = dir.write_config(&[stdio_upstream("a", ""), flood].concat());
    let gateway = gateway_support::gateway_http(&config);
    let baseline = rss_kib(gateway.id());
    let mut peak = baseline;
    let started = std::time::Instant::now();
    let mut calls = 0;
    // Calls for six seconds, and at least three: each a process of its own, bounded by a
    // limit well above what a call takes on a loaded machine, below a stall for the flood.
    while calls < 3 || started.elapsed() < std::time::Duration::from_secs(6) {
        let call = std::time::Instant::now();
        let (code, out, err) =
            through_url(gateway.url(), &["call", "echo", "--arg", "text=through the flood"]);
        assert_eq!(code, 0, "a's echo during the flood: {err}");
        assert_eq!(gateway_support::text(&json(&out)), "through the flood");
        let took = call.elapsed();
        assert!(took < std::time::Duration::from_secs(5), "a call took {took:?} during the flood");
        calls += 1;
        peak = peak.max(rss_kib(gateway.id()));
    }
    let (code, out, err) = through_url(gateway.url(), &["call", "flood__still_here"]);
    assert_eq!(code, 0, "the flooding upstream still answers: {err}");
    assert_eq!(gateway_support::text(&json(&out)), "still here");
    // Bounded: what a flood of ~30 MB would add if it were queued is far above this.
    assert!(
        peak < baseline + 24 * 1024,
        "the gateway grew from {baseline} KiB to {peak} KiB during the flood"
    );
}
