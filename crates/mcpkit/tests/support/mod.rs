//! What the tests of the `mcpkit` binary share: running it, and serving it over HTTP.
#![allow(dead_code)] // each test file uses its own part

use std::io::Write;
use std::process::{Command, Stdio};

use mcp_testkit::process::ListeningProcess;

/// The binary under test.
pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_mcpkit");

/// `mcpkit` with the environment of a test: no `RUST_LOG`, no `$MCPKIT_CONFIG`, and a
/// credentials directory of its own (never the user's; nothing is written there unless a server
/// demands authorization).
pub(crate) fn command(args: &[&str]) -> Command {
    let credentials = std::env::temp_dir().join(format!("mcpkit-test-credentials-{}", std::process::id()));
    let mut command = Command::new(BIN);
    command
        .args(args)
        .env_remove("RUST_LOG")
        .env_remove("MCPKIT_CONFIG")
        // A gateway serves metrics on 127.0.0.1:9464 by default: tests listen on port 0 only
        // (tests/observability.rs asks for metrics on one).
        .env("MCPKIT_METRICS", "off")
        .env("MCPKIT_CREDENTIALS_DIR", credentials);
    command
}

/// Runs `mcpkit args...` with `stdin` (none: `/dev/null`) to the end: (exit status, stdout,
/// stderr).
pub(crate) fn run_with(mut command: Command, stdin: Option<&str>) -> (i32, String, String) {
    let mut child = command
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mcpkit");
    if let Some(input) = stdin {
        // Dropped at the end of the statement: the child sees the end of its input. It may exit
        // before reading everything (e.g. after declining a question): a broken pipe is fine.
        let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Runs `mcpkit args...` with no input: (exit status, stdout, stderr).
pub(crate) fn run(args: &[&str]) -> (i32, String, String) {
    run_with(command(args), None)
}

/// `mcpkit serve --http 127.0.0.1:0 extra...`, killed on drop; `url()` is its MCP endpoint.
pub(crate) fn serve_http(extra: &[&str]) -> ListeningProcess {
    let mut command = command(&["serve", "--http", "127.0.0.1:0"]);
    command.args(extra);
    ListeningProcess::start(command)
}

/// Runs `command` with a new pseudo-terminal as its stdin, stdout and stderr; returns everything
/// written to the terminal, with the terminal's `\r\n` line ends made `\n`.
#[cfg(unix)]
pub(crate) fn on_a_terminal(command: Command) -> String {
    on_a_terminal_typing(command, &[])
}

/// [`on_a_terminal`], typing each `(after, typed)`'s `typed` once the terminal shows `after`
/// (after the question, as a person would: the terminal echoes what is typed when it is typed).
#[cfg(unix)]
pub(crate) fn on_a_terminal_typing(command: Command, answers: &[(&str, &str)]) -> String {
    on_a_terminal_with_status(command, answers).0
}

/// [`on_a_terminal_typing`], with the exit status.
#[cfg(unix)]
pub(crate) fn on_a_terminal_with_status(
    mut command: Command,
    answers: &[(&str, &str)],
) -> (String, std::process::ExitStatus) {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;

    use nix::fcntl::OFlag;

    // Close-on-exec from the start: no other test's child may inherit either side.
    let flags = OFlag::O_RDWR | OFlag::O_NOCTTY | OFlag::O_CLOEXEC;
    let master = nix::pty::posix_openpt(flags).unwrap();
    nix::pty::grantpt(&master).unwrap();
    nix::pty::unlockpt(&master).unwrap();
    let slave_path = nix::pty::ptsname_r(&master).unwrap();
    let slave = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(OFlag::O_NOCTTY.bits())
        .open(&slave_path)
        .unwrap();
    command
        .stdin(slave.try_clone().unwrap())
        .stdout(slave.try_clone().unwrap())
        .stderr(slave.try_clone().unwrap());
    let mut child = command.spawn().unwrap();
    // A watchdog: a session that never ends (an answer that never matched) is killed after
    // a minute, so the test fails instead of hanging.
    let finished = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watchdog = {
        let (finished, pid) = (finished.clone(), nix::unistd::Pid::from_raw(child.id() as i32));
        std::thread::spawn(move || {
            for _ in 0..600 {
                std::thread::sleep(std::time::Duration::from_millis(100));
                if finished.load(std::sync::atomic::Ordering::Acquire) {
                    return;
                }
            }
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
        })
    };
    // Our copies of the terminal's slave side go; reading ends when the child's are gone too.
    drop(command);
    drop(slave);
    let mut master = std::fs::File::from(std::os::fd::OwnedFd::from(master));
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    let mut answers = answers.iter();
    let mut next = answers.next();
    loop {
        match master.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                out.extend_from_slice(&buf[..n]);
                if let Some((after, typed)) = next {
                    if String::from_utf8_lossy(&out).contains(after) {
                        master.write_all(typed.as_bytes()).unwrap();
                        next = answers.next();
                    }
                }
            }
            // Linux reports the closed slave side as EIO.
            Err(e) if e.raw_os_error() == Some(nix::errno::Errno::EIO as i32) => break,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => panic!("reading the terminal: {e}"),
        }
    }
    let status = child.wait().unwrap();
    finished.store(true, std::sync::atomic::Ordering::Release);
    let _ = watchdog.join();
    (String::from_utf8(out).unwrap().replace("\r\n", "\n"), status)
}

/// `127.0.0.1:PORT` where nothing listens: a port bound and never listened on, for as long as
/// this test process runs — connections to it are refused, and no other test's bind to port 0
/// can be handed it (as it could a port closed again).
pub(crate) fn closed_authority() -> String {
    static RESERVED: std::sync::OnceLock<tokio::net::TcpSocket> = std::sync::OnceLock::new();
    let socket = RESERVED.get_or_init(|| {
        let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
        socket.bind("127.0.0.1:0".parse().unwrap()).expect("bind 127.0.0.1:0");
        socket
    });
    socket.local_addr().unwrap().to_string()
}

/// Writes `config` to `NAME.json` in a directory of this test process; its path.
pub(crate) fn config_file(name: &str, config: &serde_json::Value) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("mcpkit-test-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, config.to_string()).unwrap();
    path
}
