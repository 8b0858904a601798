//! A client command behaves in a shell: a signal stops the stdio server with it (the server runs
//! in a process group of its own, so Ctrl-C reaches mcpkit alone), a reader closing the pipe or
//! a full disk is no panic, and nothing a server sends can drive the terminal.
#![cfg(unix)]

mod support;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use support::BIN;

/// Waits for `ready`, checking again until an outer bound only a hang reaches.
fn eventually<T>(what: &str, mut ready: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(value) = ready() {
            return value;
        }
        assert!(Instant::now() < deadline, "still waiting: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The process is no more: it does not exist, or it has exited and waits to be reaped by
/// whoever inherited it (a zombie runs nothing).
fn gone(pid: i32) -> bool {
    if kill(Pid::from_raw(pid), None).is_err() {
        return true;
    }
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')))
}

/// A command line that writes its shell's pid to `pidfile`, then becomes `program`.
fn recording_pid(pidfile: &Path, program: &str) -> String {
    format!("echo $$ > '{}'; exec {program}", pidfile.display())
}

/// mcpkit running a stdio server that records its pid; on drop (a failed test) both are
/// stopped.
struct Running {
    mcpkit: Child,
    pidfile: PathBuf,
}

impl Running {
    /// `mcpkit args... -- sh -c '<record the pid>; exec server'`.
    fn start(name: &str, args: &[&str], server: &str) -> Running {
        let pidfile = std::env::temp_dir().join(format!("mcpkit-hygiene-{}-{name}.pid", std::process::id()));
        let _ = std::fs::remove_file(&pidfile);
        let script = recording_pid(&pidfile, server);
        let mut command = support::command(args);
        command.args(["--", "sh", "-c", &script]);
        let mcpkit = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn mcpkit");
        Running { mcpkit, pidfile }
    }

    /// The server's pid, once it is recorded.
    fn server_pid(&self) -> i32 {
        eventually("the server's pid", || std::fs::read_to_string(&self.pidfile).ok()?.trim().parse().ok())
    }

    fn signal(&self, signal: Signal) {
        kill(Pid::from_raw(self.mcpkit.id() as i32), signal).unwrap();
    }

    fn wait(&mut self) -> ExitStatus {
        let child = &mut self.mcpkit;
        eventually("mcpkit to exit", || child.try_wait().unwrap())
    }

    /// What is left to read on stderr (after mcpkit exited).
    fn rest_of_stderr(&mut self, stderr: &mut impl Read) -> String {
        let mut rest = String::new();
        stderr.read_to_string(&mut rest).unwrap();
        rest
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.mcpkit.kill();
        let _ = self.mcpkit.wait();
        if let Some(pid) = std::fs::read_to_string(&self.pidfile).ok().and_then(|p| p.trim().parse().ok())
            && !gone(pid)
        {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
        let _ = std::fs::remove_file(&self.pidfile);
    }
}

#[test]
fn ctrl_c_during_a_call_stops_the_server_and_exits_130() {
    let server = format!("'{BIN}' serve --stdio");
    let args = ["call", "countdown", "--arg", "seconds=30", "--progress"];
    let mut running = Running::start("call", &args, &server);
    let mut stderr = BufReader::new(running.mcpkit.stderr.take().unwrap());
    // The first progress line: the server runs the tool.
    let mut line = String::new();
    while !line.starts_with("progress ") {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "mcpkit ended before any progress");
    }
    let server_pid = running.server_pid();

    running.signal(Signal::SIGINT);
    let status = running.wait();
    assert_eq!(status.code(), Some(130), "{status}");
    eventually("the server to be stopped", || gone(server_pid).then_some(()));
    let rest = running.rest_of_stderr(&mut stderr);
    assert!(rest.lines().all(|l| l.starts_with("progress ")), "nothing but progress on stderr: {rest:?}");
    let mut stdout = String::new();
    running.mcpkit.stdout.take().unwrap().read_to_string(&mut stdout).unwrap();
    assert_eq!(stdout, "");
}

#[test]
fn sigterm_during_listen_stops_the_server_and_exits_143() {
    let server = format!("'{BIN}' serve --stdio");
    let mut running = Running::start("listen", &["listen", "--tools"], &server);
    let mut stdout = BufReader::new(running.mcpkit.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.starts_with(r#"{"acknowledged":"#), "{line:?}");
    let server_pid = running.server_pid();

    running.signal(Signal::SIGTERM);
    let status = running.wait();
    assert_eq!(status.code(), Some(143), "{status}");
    eventually("the server to be stopped", || gone(server_pid).then_some(()));
    let mut stderr = running.mcpkit.stderr.take().unwrap();
    assert_eq!(running.rest_of_stderr(&mut stderr), "");
}

#[test]
fn a_signal_while_connecting_stops_the_server_too() {
    // `sleep` never answers: mcpkit is still connecting when the signal comes.
    let mut running = Running::start("connect", &["info"], "sleep 301");
    let server_pid = running.server_pid();

    running.signal(Signal::SIGHUP);
    let status = running.wait();
    assert_eq!(status.code(), Some(129), "{status}");
    eventually("the server to be stopped", || gone(server_pid).then_some(()));
    let mut stderr = running.mcpkit.stderr.take().unwrap();
    assert_eq!(running.rest_of_stderr(&mut stderr), "");
}

#[test]
fn a_reader_closing_the_pipe_early_ends_mcpkit_quietly() {
    // More than a pipe holds: mcpkit is still writing when the reader goes.
    let text = format!("text={}", "x".repeat(120 * 1024));
    let mut mcpkit = support::command(&["call", "echo", "--arg", &text, "--", BIN, "serve", "--stdio"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = mcpkit.stdout.take().unwrap();
    let mut first = [0u8; 5];
    stdout.read_exact(&mut first).unwrap();
    assert_eq!(&first, br#"{"con"#);
    drop(stdout);
    let out = mcpkit.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_is_one_error_line_and_status_2() {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let out = support::command(&["call", "echo", "--arg", "text=hi", "--", BIN, "serve", "--stdio"])
        .stdin(Stdio::null())
        .stdout(full)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.starts_with("mcpkit: cannot write the output: "), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

/// A stdio server (a shell script) whose name, tool description, tool result and error message
/// carry escape sequences: an OSC 52 clipboard write, a window title, a screen clear, a C1 CSI.
const HOSTILE_SERVER: &str = r#"
evil='clip\u001b]52;c;aGk=\u0007 title\u001b]0;pwned\u0007 clear\u001b[2J csi\u009b31m'
while IFS= read -r line; do
  id=$(printf '%s\n' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  [ -n "$id" ] || continue
  case "$line" in
    *'"method":"server/discover"'*)
      result='{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"'"$evil"'","version":"1"}}}' ;;
    *'"method":"tools/list"'*)
      result='{"tools":[{"name":"show","description":"'"$evil"'","inputSchema":{"type":"object"}}],"resultType":"complete"}' ;;
    *'"name":"show"'*)
      result='{"content":[{"type":"text","text":"'"$evil"'"}],"resultType":"complete"}' ;;
    *)
      printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":"boom %s"}}\n' "$id" "$evil"
      continue ;;
  esac
  printf '{"jsonrpc":"2.0","id":%s,"result":%s}\n' "$id" "$result"
done
"#;

#[test]
fn server_text_reaches_the_terminal_escaped() {
    let dir = std::env::temp_dir().join(format!("mcpkit-hygiene-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("server.sh");
    std::fs::write(&script, HOSTILE_SERVER).unwrap();
    let script = script.to_str().unwrap();
    let shown = |args: &[&str]| {
        let mut command = support::command(args);
        command.args(["--", "sh", script]);
        support::on_a_terminal(command)
    };
    let list = shown(&["list", "tools"]);
    let info = shown(&["info"]);
    let call = shown(&["call", "show"]);
    let error = shown(&["call", "other"]);
    std::fs::remove_dir_all(&dir).unwrap();
    for (what, text) in [("list", &list), ("info", &info), ("call", &call), ("error", &error)] {
        assert!(
            !text.contains(['\x1b', '\x07', '\u{9b}']),
            "{what} let a control character through: {text:?}"
        );
        assert!(
            text.contains(r"clip\u{1b}]52;c;aGk=\u{7} title\u{1b}]0;pwned\u{7} clear\u{1b}[2J csi\u{9b}31m"),
            "{what}: {text:?}"
        );
    }
    assert!(list.starts_with("show()  clip"), "{list:?}");
    assert!(error.starts_with("mcpkit: ") && error.contains("boom clip"), "{error:?}");
}

/// `mcpkit call countdown` of `seconds` against `url` (stdout piped), once the server runs the
/// tool (its first progress line); the call's stderr, to be kept while the call runs.
fn countdown_running(url: &str, seconds: u32) -> (Child, BufReader<std::process::ChildStderr>) {
    let seconds = format!("seconds={seconds}");
    let mut call = support::command(&["call", "countdown", "--arg", &seconds, "--progress", "--url", url])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mcpkit call");
    let mut stderr = BufReader::new(call.stderr.take().unwrap());
    let mut line = String::new();
    while !line.starts_with("progress ") {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "mcpkit ended before any progress");
    }
    (call, stderr)
}

#[test]
fn serve_http_finishes_calls_in_flight_on_sigterm_and_exits_0() {
    let mut server = support::serve_http(&[]);
    let (call, _stderr) = countdown_running(server.url(), 2);
    kill(Pid::from_raw(server.id() as i32), Signal::SIGTERM).unwrap();
    // The call in flight still gets its answer.
    let out = call.wait_with_output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("Lift-off!"), "{stdout}");
    let status = server.wait_exit(Duration::from_secs(60)).expect("the server did not shut down");
    assert_eq!(status.code(), Some(0), "{}", server.stderr());
    assert!(server.stderr().contains("shutting down"), "{}", server.stderr());
}

#[test]
fn serve_http_stops_at_once_on_a_second_sigterm() {
    let mut server = support::serve_http(&[]);
    let (mut call, _stderr) = countdown_running(server.url(), 60);
    kill(Pid::from_raw(server.id() as i32), Signal::SIGTERM).unwrap();
    let draining = std::time::Instant::now();
    while !server.stderr().contains("shutting down") {
        assert!(draining.elapsed() < Duration::from_secs(30), "no drain: {}", server.stderr());
        std::thread::sleep(Duration::from_millis(20));
    }
    kill(Pid::from_raw(server.id() as i32), Signal::SIGTERM).unwrap();
    // Not the end of the grace (status 0): the second signal's own status.
    let status = server.wait_exit(Duration::from_secs(60)).expect("the server did not stop");
    assert_eq!(status.code(), Some(143), "{}", server.stderr());
    let _ = call.kill();
    let _ = call.wait();
}
