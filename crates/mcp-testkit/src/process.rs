//! A server process under test that announces its address on stderr (`listening on URL`), as
//! `mcpkit serve --http`, `conformance-server --http` and the interop servers do.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a server gets to announce its address: generous, for a loaded 2-core CI machine.
pub const START_TIMEOUT: Duration = Duration::from_secs(60);

/// A running server, killed (and reaped) when dropped, so a failing assertion never leaves it
/// behind. Its stderr is drained for as long as it runs (a full pipe would block its logging)
/// and kept for diagnostics.
pub struct ListeningProcess {
    child: Child,
    url: String,
    stderr: Arc<Mutex<String>>,
}

impl ListeningProcess {
    /// Starts `command` (stdin and stdout null, stderr piped) and waits until a stderr line
    /// contains `listening on URL`; panics with the stderr so far when it exits or stays silent
    /// for [`START_TIMEOUT`].
    pub fn start(mut command: Command) -> Self {
        let what = format!("{:?}", command.get_program());
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
        let pipe = child.stderr.take().expect("stderr is piped");
        let stderr = Arc::new(Mutex::new(String::new()));
        let (ready, url) = mpsc::channel();
        let sink = Arc::clone(&stderr);
        std::thread::spawn(move || {
            let mut ready = Some(ready);
            for line in BufReader::new(pipe).lines() {
                let Ok(line) = line else { break };
                if let Some((_, rest)) = line.split_once("listening on ") {
                    if let Some(ready) = ready.take() {
                        let _ = ready.send(rest.split_whitespace().next().unwrap_or_default().to_owned());
                    }
                }
                let mut text = sink.lock().unwrap_or_else(|p| p.into_inner());
                text.push_str(&line);
                text.push('\n');
            }
        });
        let mut process = ListeningProcess { child, url: String::new(), stderr };
        match url.recv_timeout(START_TIMEOUT) {
            Ok(url) => process.url = url,
            Err(_) => {
                process.kill();
                panic!("{what} did not announce `listening on URL`; its stderr:\n{}", process.stderr());
            }
        }
        process
    }

    /// The announced URL, e.g. `http://127.0.0.1:PORT/mcp`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The announced URL without its path: `http://127.0.0.1:PORT`.
    pub fn origin(&self) -> &str {
        let after_scheme = self.url.find("://").map_or(0, |i| i + 3);
        match self.url[after_scheme..].find('/') {
            Some(slash) => &self.url[..after_scheme + slash],
            None => &self.url,
        }
    }

    /// `host:port` of the announced URL.
    pub fn authority(&self) -> &str {
        let origin = self.origin();
        origin.find("://").map_or(origin, |i| &origin[i + 3..])
    }

    /// The process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Everything it has written on stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Waits (polling, at most `limit`) for it to exit by itself; its status, or `None` when it
    /// is still running.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let deadline = std::time::Instant::now() + limit;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            if std::time::Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills it now (also done on drop).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for ListeningProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_announced_url_and_kills_on_drop() {
        let mut command = Command::new("sh");
        command.args([
            "-c",
            "echo starting >&2; echo 'listening on http://127.0.0.1:1234/mcp (x)' >&2; exec sleep 600",
        ]);
        let process = ListeningProcess::start(command);
        assert_eq!(process.url(), "http://127.0.0.1:1234/mcp");
        assert_eq!(process.origin(), "http://127.0.0.1:1234");
        assert_eq!(process.authority(), "127.0.0.1:1234");
        assert!(process.stderr().starts_with("starting\n"));
        let pid = process.id();
        drop(process);
        // Killed and reaped: the pid is gone (Linux).
        assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists(), "process {pid} survived the drop");
    }

    #[test]
    #[should_panic(expected = "did not announce")]
    fn a_process_that_exits_silently_fails_the_start() {
        let mut command = Command::new("sh");
        command.args(["-c", "echo nothing here >&2"]);
        // The reader thread ends at EOF, the channel disconnects, recv_timeout fails at once.
        let _ = ListeningProcess::start(command);
    }
}
