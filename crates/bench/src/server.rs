//! A server started by `mcp-load`: the process, and what Linux's `/proc` says about it.
//!
//! The figures are those of the process that was spawned (its id is the one `/proc` is read
//! for; wrappers that `exec` the real server, like `taskset` or `env`, keep that id):
//! CPU time is `utime + stime` of `/proc/PID/stat` (all its threads), memory is `VmRSS` and
//! `VmHWM` of `/proc/PID/status`. Elsewhere than Linux the figures are simply absent.

use std::process::Stdio;
use std::time::Duration;

use serde::Serialize;
use tokio::process::{Child, Command};
use tokio::time::Instant;

/// How long the server may take to exit once its stdin is closed.
const EXIT_WAIT: Duration = Duration::from_secs(10);

/// Clock ticks per second of `/proc/PID/stat` times: `USER_HZ`, 100 on every Linux ABI.
const USER_HZ: u64 = 100;

/// A server process started here.
pub(crate) struct Started {
    pub(crate) child: Child,
    pub(crate) pid: Option<u32>,
    /// Just before the process was created.
    pub(crate) spawned: Instant,
}

/// Starts `command`; with `stdio` its stdin and stdout are piped, otherwise both are closed.
pub(crate) fn spawn(command: &[String], stdio: bool, quiet: bool) -> Result<Started, String> {
    let server = command.join(" ");
    let Some((program, args)) = command.split_first() else {
        return Err("no server command".to_owned());
    };
    let piped = || if stdio { Stdio::piped() } else { Stdio::null() };
    let spawned = Instant::now();
    let child = Command::new(program)
        .args(args)
        .stdin(piped())
        .stdout(piped())
        .stderr(if quiet { Stdio::null() } else { Stdio::inherit() })
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start `{server}`: {e}"))?;
    let pid = child.id();
    Ok(Started { child, pid, spawned })
}

/// What was measured on the server itself; every figure is absent when it could not be read.
#[derive(Serialize, Debug, Default, Clone, PartialEq)]
pub(crate) struct Figures {
    /// From the spawn to the first answer (the legacy `initialize`, or one `tools/call`);
    /// absent with `--idle-wait`, whose wait it would include.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) startup_ms: Option<f64>,
    /// `VmRSS` before the first request, `--idle-wait` after the spawn (only with it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) idle_rss_kib: Option<u64>,
    /// The part of `idle_rss_kib` that is anonymous memory (`RssAnon`: heap, stacks, relocated
    /// data) ...
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) idle_rss_anon_kib: Option<u64>,
    /// ... and the part that is files mapped in (`RssFile`: the binary's code and read-only
    /// data, the shared libraries), which only a smaller binary or less code run at start-up
    /// reduces.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) idle_rss_file_kib: Option<u64>,
    /// `VmRSS` once the server has answered that first request, before the warm-up.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) first_answer_rss_kib: Option<u64>,
    /// `VmHWM` at the end of the measured phase.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) peak_rss_kib: Option<u64>,
    /// Server CPU time (user + system) during the measured phase only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) server_cpu_s: Option<f64>,
    /// `server_cpu_s` divided by the measured requests, in microseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) server_cpu_us_per_request: Option<f64>,
}

/// Takes the readings of one server through a run.
#[derive(Debug)]
pub(crate) struct Meter {
    pid: Option<u32>,
    spawned: Instant,
    cpu_before: Option<Duration>,
    /// The first request was held back (`--idle-wait`): no start-up time.
    waited: bool,
    pub(crate) figures: Figures,
}

impl Meter {
    pub(crate) fn new(started: &Started) -> Meter {
        Meter {
            pid: started.pid,
            spawned: started.spawned,
            cpu_before: None,
            waited: false,
            figures: Figures::default(),
        }
    }

    /// Waits `wait` after the spawn (when not zero), then reads the memory of the idle server,
    /// before its first request.
    pub(crate) async fn idle(&mut self, wait: Duration) {
        if wait.is_zero() {
            return;
        }
        tokio::time::sleep_until(self.spawned + wait).await;
        self.waited = true;
        let Some(pid) = self.pid else { return };
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        self.figures.idle_rss_kib = parse_status_kib(&status, "VmRSS");
        self.figures.idle_rss_anon_kib = parse_status_kib(&status, "RssAnon");
        self.figures.idle_rss_file_kib = parse_status_kib(&status, "RssFile");
    }

    /// The first answer has arrived: the start-up time, and the memory then.
    pub(crate) fn first_answer(&mut self) {
        if !self.waited {
            self.figures.startup_ms = Some(self.spawned.elapsed().as_secs_f64() * 1e3);
        }
        self.figures.first_answer_rss_kib = self.pid.and_then(|pid| status_kib(pid, "VmRSS"));
    }

    /// The measured phase begins.
    pub(crate) fn measure_from_here(&mut self) {
        self.cpu_before = self.pid.and_then(cpu_time);
    }

    /// The measured phase has ended with `requests` answers (the server is still running).
    pub(crate) fn measured(&mut self, requests: u64) {
        let Some(pid) = self.pid else { return };
        self.figures.peak_rss_kib = status_kib(pid, "VmHWM");
        if let (Some(before), Some(after)) = (self.cpu_before, cpu_time(pid)) {
            let cpu = after.saturating_sub(before).as_secs_f64();
            self.figures.server_cpu_s = Some(cpu);
            if requests > 0 {
                self.figures.server_cpu_us_per_request = Some(cpu * 1e6 / requests as f64);
            }
        }
    }
}

/// User plus system CPU time of process `pid`, all its threads.
pub(crate) fn cpu_time(pid: u32) -> Option<Duration> {
    parse_cpu(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// `utime + stime` from the text of `/proc/PID/stat` (fields 14 and 15; the command name, in
/// parentheses, may itself hold spaces and parentheses, so fields are counted after the last `)`).
pub(crate) fn parse_cpu(stat: &str) -> Option<Duration> {
    let after_name = &stat[stat.rfind(')')? + 1..];
    let mut fields = after_name.split_whitespace().skip(11); // field 3 (state) is the first here
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    let ticks = utime + stime;
    Some(Duration::from_secs(ticks / USER_HZ) + Duration::from_millis(ticks % USER_HZ * 1000 / USER_HZ))
}

/// A `kB` line (`VmRSS`, `VmHWM`) of `/proc/PID/status`.
pub(crate) fn status_kib(pid: u32, key: &str) -> Option<u64> {
    parse_status_kib(&std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?, key)
}

pub(crate) fn parse_status_kib(status: &str, key: &str) -> Option<u64> {
    status.lines().find_map(|line| {
        let value = line.strip_prefix(key)?.strip_prefix(':')?;
        value.trim().strip_suffix("kB")?.trim().parse().ok()
    })
}

/// Waits for the server to exit until `deadline` (at most [`EXIT_WAIT`]), then kills it.
pub(crate) async fn stop(child: &mut Child, deadline: Instant) -> String {
    let until = deadline.min(Instant::now() + EXIT_WAIT);
    match tokio::time::timeout_at(until, child.wait()).await {
        Ok(Ok(status)) => status.to_string(),
        Ok(Err(e)) => format!("wait failed: {e}"),
        Err(_) => {
            let _ = child.kill().await;
            "killed: it did not exit after its stdin closed".to_owned()
        }
    }
}

/// Stops an HTTP server: it has no stdin to close, so it is killed.
pub(crate) async fn kill(child: &mut Child) -> String {
    match child.try_wait() {
        Ok(Some(status)) => format!("exited by itself: {status}"),
        _ => match child.kill().await {
            Ok(()) => "killed by mcp-load at the end of the run".to_owned(),
            Err(e) => format!("kill failed: {e}"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_is_read_after_the_command_name() {
        let stat = "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 37 0 0 20 0 3 0 99 1 2";
        assert_eq!(parse_cpu(stat), Some(Duration::from_millis(2870)));
        assert_eq!(parse_cpu("1 (x) S 1 2"), None);
        assert_eq!(parse_cpu("no parenthesis"), None);
    }

    #[test]
    fn memory_lines_are_read_in_kib() {
        let status = "Name:\tx\nVmPeak:\t  9000 kB\nVmHWM:\t    7168 kB\nVmRSS:\t    2048 kB\n\
                      RssAnon:\t     512 kB\nRssFile:\t    1536 kB\n";
        assert_eq!(parse_status_kib(status, "VmHWM"), Some(7168));
        assert_eq!(parse_status_kib(status, "VmRSS"), Some(2048));
        assert_eq!(parse_status_kib(status, "RssAnon"), Some(512));
        assert_eq!(parse_status_kib(status, "RssFile"), Some(1536));
        assert_eq!(parse_status_kib(status, "VmSwap"), None);
    }

    #[test]
    fn this_process_can_be_read() {
        if !std::path::Path::new("/proc/self/stat").exists() {
            return;
        }
        let pid = std::process::id();
        assert!(cpu_time(pid).is_some());
        assert!(status_kib(pid, "VmRSS").is_some_and(|kib| kib > 0));
        assert!(status_kib(pid, "VmHWM").is_some_and(|kib| kib > 0));
        // The split of the idle figure: this process has a heap and maps its own binary.
        assert!(status_kib(pid, "RssAnon").is_some_and(|kib| kib > 0));
        assert!(status_kib(pid, "RssFile").is_some_and(|kib| kib > 0));
    }
}
