//! `mcpkit serve --stdio` over what a parent may give it as stdin and stdout: pipes and sockets
//! are read and written on the reactor (non-blocking, on the one thread of the runtime), and
//! made blocking again when the server ends; a regular file still works (the blocking path).
#![cfg(unix)]

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::process::{Command, Stdio};

use support::BIN;

/// `O_NONBLOCK` in the `flags:` of `/proc/PID/fdinfo/FD` (octal, as the kernel prints them).
#[cfg(target_os = "linux")]
const O_NONBLOCK: u32 = 0o4000;

/// A `tools/call echo` request with id `id` (modern: no session needed).
fn request(id: usize) -> String {
    let meta = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"_meta":{meta},"name":"echo","arguments":{{"text":"line {id}"}}}}}}"#
    )
}

/// Checks that `output` answers every id in `0..count`, each with its own echo.
fn assert_all_answered(output: &str, count: usize) {
    let mut seen = vec![false; count];
    for line in output.lines() {
        let message: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        let id = message["id"].as_u64().unwrap_or_else(|| panic!("no id: {line}")) as usize;
        assert_eq!(message["result"]["content"][0]["text"], format!("line {id}"), "{line}");
        assert!(!seen[id], "answered twice: {id}");
        seen[id] = true;
    }
    let missing: Vec<usize> = (0..count).filter(|&id| !seen[id]).collect();
    assert!(missing.is_empty(), "no answer to {missing:?}");
}

/// The `flags:` of file descriptor `fd` of process `pid`.
#[cfg(target_os = "linux")]
fn fd_flags(pid: u32, fd: u32) -> u32 {
    let info = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{fd}")).unwrap();
    parse_flags(&info)
}

#[cfg(target_os = "linux")]
fn parse_flags(info: &str) -> u32 {
    let flags = info.lines().find_map(|l| l.strip_prefix("flags:")).expect("a flags: line");
    u32::from_str_radix(flags.trim(), 8).unwrap()
}

#[cfg(target_os = "linux")]
fn threads(pid: u32) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find_map(|l| l.strip_prefix("Threads:")).expect("a Threads: line");
    line.trim().parse().unwrap()
}

#[cfg(target_os = "linux")]
#[test]
fn pipes_are_served_on_the_reactor_by_one_thread() {
    let mut child = Command::new(BIN)
        .args(["serve", "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    writeln!(stdin, "{}", request(0)).unwrap();
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    // Serving: both ends are in non-blocking mode, and no thread was needed beside the main
    // one (tokio's Stdin/Stdout would have started a blocking-pool thread to read).
    assert_ne!(fd_flags(pid, 0) & O_NONBLOCK, 0, "stdin is not on the reactor");
    assert_ne!(fd_flags(pid, 1) & O_NONBLOCK, 0, "stdout is not on the reactor");
    assert_eq!(threads(pid), 1, "serve --stdio runs on more than one thread");
    // Many at once, more than a pipe holds, while the answers are not read yet.
    let count = 2000;
    let writer = std::thread::spawn(move || {
        for id in 1..count {
            writeln!(stdin, "{}", request(id)).unwrap();
        }
    });
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    writer.join().unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    assert_all_answered(&(first + &rest), count);
}

#[cfg(target_os = "linux")]
#[test]
fn pipes_shared_with_the_parent_are_blocking_again_after_the_server() {
    // The shell shares mcpkit's stdin and stdout descriptions: it sees their flags.
    let script = r#""$0" serve --stdio; cat /proc/$$/fdinfo/0 /proc/$$/fdinfo/1 | grep '^flags:' >&2"#;
    let mut child = Command::new("sh")
        .args(["-c", script, BIN])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let shell = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    writeln!(stdin, "{}", request(0)).unwrap();
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert_all_answered(&first, 1);
    assert_ne!(fd_flags(shell, 0) & O_NONBLOCK, 0, "stdin is not on the reactor");
    assert_ne!(fd_flags(shell, 1) & O_NONBLOCK, 0, "stdout is not on the reactor");
    drop(stdin);
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let flags: Vec<u32> = stderr.lines().map(parse_flags).collect();
    assert_eq!(flags.len(), 2, "{stderr}");
    assert!(flags.iter().all(|f| f & O_NONBLOCK == 0), "still non-blocking after the server: {stderr}");
}

/// Requests `0..count`, one per line, in a temporary file named after `name`.
fn requests_file(name: &str, count: usize) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("mcpkit-stdio-{}-{name}.jsonl", std::process::id()));
    let mut text = String::new();
    for id in 0..count {
        text.push_str(&request(id));
        text.push('\n');
    }
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_regular_file_on_stdin_is_answered_line_by_line_then_exit_0() {
    let count = 500;
    let path = requests_file("stdin", count);
    let out = Command::new(BIN)
        .args(["serve", "--stdio"])
        .stdin(std::fs::File::open(&path).unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    assert_all_answered(&String::from_utf8(out.stdout).unwrap(), count);
}

#[test]
fn regular_files_on_stdin_and_stdout_work() {
    let count = 500;
    let input = requests_file("both-in", count);
    let output = input.with_extension("out");
    let out = Command::new(BIN)
        .args(["serve", "--stdio"])
        .stdin(std::fs::File::open(&input).unwrap())
        .stdout(std::fs::File::create(&output).unwrap())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let answers = std::fs::read_to_string(&output).unwrap();
    std::fs::remove_file(&input).unwrap();
    std::fs::remove_file(&output).unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_all_answered(&answers, count);
}

#[test]
fn a_socketpair_as_stdin_and_stdout_is_served() {
    // libuv-based parents (Node) give a child's stdio as a socketpair.
    let (ours, theirs) = UnixStream::pair().unwrap();
    let child = Command::new(BIN)
        .args(["serve", "--stdio"])
        .stdin(Stdio::from(OwnedFd::from(theirs.try_clone().unwrap())))
        .stdout(Stdio::from(OwnedFd::from(theirs)))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let count = 2000;
    let mut writer = ours.try_clone().unwrap();
    let feeding = std::thread::spawn(move || {
        for id in 0..count {
            writeln!(writer, "{}", request(id)).unwrap();
        }
        writer.shutdown(std::net::Shutdown::Write).unwrap();
    });
    #[cfg(target_os = "linux")]
    {
        let mut reader = BufReader::new(ours.try_clone().unwrap());
        let mut first = String::new();
        reader.read_line(&mut first).unwrap();
        assert_ne!(fd_flags(child.id(), 0) & O_NONBLOCK, 0, "stdin is not on the reactor");
        assert_ne!(fd_flags(child.id(), 1) & O_NONBLOCK, 0, "stdout is not on the reactor");
        let mut rest = String::new();
        reader.read_to_string(&mut rest).unwrap();
        assert_all_answered(&(first + &rest), count);
    }
    #[cfg(not(target_os = "linux"))]
    {
        let mut all = String::new();
        let mut ours = ours;
        ours.read_to_string(&mut all).unwrap();
        assert_all_answered(&all, count);
    }
    feeding.join().unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}
