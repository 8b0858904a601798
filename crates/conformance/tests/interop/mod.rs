//! What the interop tests share: the checks every client reports, where the SDKs are installed,
//! and running a client with a deadline and killing its whole process tree.
#![allow(dead_code)]

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

/// How long one client may take, connecting included; then it and its server are killed.
pub(crate) const CLIENT_TIMEOUT: Duration = Duration::from_secs(60);

/// The checks every client reports, in order.
pub(crate) const CHECKS: &[&str] = &[
    "connect",
    "list_tools",
    "call_tool",
    "call_tool_image",
    "read_resource",
    "get_prompt",
    "get_prompt_with_arguments",
    "elicitation",
];

pub(crate) const SETUP_HINT: &str = "run scripts/setup-interop.sh (scripts/test.sh runs it)";

pub(crate) fn repo_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

/// An installed tool, or a failure that says how to install it.
pub(crate) fn installed(path: PathBuf, what: &str) -> PathBuf {
    assert!(path.is_file(), "{what} is not installed: {} is missing; {SETUP_HINT}", path.display());
    path
}

pub(crate) struct Outcome {
    /// `None` when the client was killed at the deadline.
    pub(crate) status: Option<ExitStatus>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// Runs `program` in its own process group with stdin closed, collecting its output; at the
/// deadline, or once it exits, its process tree is killed so that no server it spawned outlives it.
pub(crate) fn run_with_deadline(program: &Path, args: &[String], timeout: Duration) -> Outcome {
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
pub(crate) fn kill_tree(child: &mut Child, unreaped: bool) {
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
pub(crate) fn descendants(root: u32) -> Vec<u32> {
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

pub(crate) fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> Receiver<String> {
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
pub(crate) fn join(output: &Receiver<String>) -> String {
    output
        .recv_timeout(Duration::from_secs(5))
        .unwrap_or_else(|_| "<output still open after the kill>\n".to_owned())
}

pub(crate) fn tail(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}
