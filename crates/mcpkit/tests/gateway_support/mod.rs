//! What the tests of `mcpkit gateway` share: configuration files in a directory of their own,
//! the gateway run over stdio and HTTP in front of `mcpkit serve` upstreams, raw HTTP requests,
//! and the processes found by a marker in their environment.
#![allow(dead_code)] // each test file uses its own part

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mcp_testkit::process::ListeningProcess;

use crate::support::{self, BIN};

/// How long a condition that should come about soon may take on a loaded machine.
pub(crate) const PATIENCE: Duration = Duration::from_secs(30);

/// A directory of one test, removed when dropped; holds its configuration file.
pub(crate) struct Dir {
    path: PathBuf,
}

impl Dir {
    /// A new, empty directory named after `test`, unique to this process and call.
    pub(crate) fn new(test: &str) -> Dir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("mcpkit-gateway-test-{}-{test}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        Dir { path }
    }

    /// `gateway.toml` in it.
    pub(crate) fn config(&self) -> PathBuf {
        self.path.join("gateway.toml")
    }

    /// Writes `text` as the configuration at once (a new file renamed over the old one), so a
    /// watching gateway never reads half of it.
    pub(crate) fn write_config(&self, text: &str) -> PathBuf {
        let path = self.config();
        let next = self.path.join("gateway.toml.next");
        std::fs::write(&next, text).unwrap();
        std::fs::rename(&next, &path).unwrap();
        path
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// `s` as a TOML basic string (JSON's escapes are TOML's).
pub(crate) fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// A `[servers.NAME]` table running `mcpkit serve --stdio`, with `extra` lines (TOML) after.
pub(crate) fn stdio_upstream(name: &str, extra: &str) -> String {
    format!("[servers.{name}]\ncommand = {}\nargs = [\"serve\", \"--stdio\"]\n{extra}\n", quoted(BIN))
}

/// A unique marker for an upstream's environment (`GW_TEST_MARKER`).
pub(crate) fn marker(what: &str) -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    format!("gw-{what}-{}-{nanos:x}", std::process::id())
}

/// `env = { GW_TEST_MARKER = "marker" }`.
pub(crate) fn marker_env(marker: &str) -> String {
    format!("env = {{ GW_TEST_MARKER = {} }}", quoted(marker))
}

/// `mcpkit args... -- mcpkit gateway --config CONFIG` with `stdin`: (exit status, stdout,
/// stderr).
pub(crate) fn through_stdio(config: &Path, args: &[&str], stdin: Option<&str>) -> (i32, String, String) {
    let mut command = support::command(args);
    command.args(["--", BIN, "gateway", "--metrics", "off", "--config", config.to_str().unwrap()]);
    support::run_with(command, stdin)
}

/// `mcpkit args... --url URL`: (exit status, stdout, stderr).
pub(crate) fn through_url(url: &str, args: &[&str]) -> (i32, String, String) {
    let mut all = args.to_vec();
    all.extend(["--url", url]);
    support::run(&all)
}

/// `mcpkit gateway --config CONFIG --http 127.0.0.1:0`, stopped on drop.
pub(crate) fn gateway_http(config: &Path) -> HttpGateway {
    HttpGateway(ListeningProcess::start(support::command(&[
        "gateway",
        "--config",
        config.to_str().unwrap(),
        "--http",
        "127.0.0.1:0",
    ])))
}

/// A gateway serving HTTP. Dropped, it is asked to stop (SIGTERM), so that it stops its
/// upstreams too, and killed when it takes too long.
pub(crate) struct HttpGateway(pub(crate) ListeningProcess);

impl std::ops::Deref for HttpGateway {
    type Target = ListeningProcess;
    fn deref(&self) -> &ListeningProcess {
        &self.0
    }
}

impl std::ops::DerefMut for HttpGateway {
    fn deref_mut(&mut self) -> &mut ListeningProcess {
        &mut self.0
    }
}

impl Drop for HttpGateway {
    fn drop(&mut self) {
        // Not signalled once reaped: its pid may belong to another process by now.
        #[cfg(unix)]
        if self.0.wait_exit(Duration::ZERO).is_none() {
            signal(self.0.id(), nix::sys::signal::Signal::SIGTERM);
            let _ = self.0.wait_exit(PATIENCE);
        }
        // Then the ListeningProcess kills whatever is left.
    }
}

/// The one JSON document of `out`.
pub(crate) fn json(out: &str) -> serde_json::Value {
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("not one JSON document ({e}): {out}"))
}

/// The names of a `tools/list` result.
pub(crate) fn tool_names(result: &serde_json::Value) -> Vec<String> {
    result["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools in {result}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

/// The text blocks of a `tools/call` result, joined by newlines.
pub(crate) fn text(result: &serde_json::Value) -> String {
    result["content"]
        .as_array()
        .unwrap_or_else(|| panic!("no content in {result}"))
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Polls `probe` every 200 ms until it gives a value; panics after `limit` with the last thing
/// it saw (`Err`).
pub(crate) fn eventually<T>(what: &str, limit: Duration, mut probe: impl FnMut() -> Result<T, String>) -> T {
    let deadline = Instant::now() + limit;
    loop {
        match probe() {
            Ok(value) => return value,
            Err(seen) if Instant::now() >= deadline => {
                panic!("waited {} s for {what}; last seen:\n{seen}", limit.as_secs())
            }
            Err(_) => std::thread::sleep(Duration::from_millis(200)),
        }
    }
}

/// A raw HTTP/1.1 GET of `path` from `authority` with `Host: host`: (status code, body).
pub(crate) fn http_get(authority: &str, path: &str, host: &str) -> (u16, String) {
    let mut stream = std::net::TcpStream::connect(authority).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept: application/json\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let raw = String::from_utf8(raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or_else(|| panic!("no HTTP head: {raw:?}"));
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("{head}"));
    let chunked = head.lines().any(|l| {
        let l = l.to_ascii_lowercase();
        l.starts_with("transfer-encoding:") && l.contains("chunked")
    });
    (status, if chunked { unchunk(body) } else { body.to_owned() })
}

/// The body of a chunked transfer coding.
fn unchunk(mut rest: &str) -> String {
    let mut body = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let size = usize::from_str_radix(size.split(';').next().unwrap().trim(), 16).unwrap();
        if size == 0 {
            break;
        }
        body.push_str(&after[..size]);
        rest = &after[size + 2..];
    }
    body
}

/// The gateway's `/status`, as JSON.
pub(crate) fn status(gateway: &HttpGateway) -> serde_json::Value {
    let (code, body) = http_get(gateway.authority(), "/status", gateway.authority());
    assert_eq!(code, 200, "{body}");
    json(&body)
}

/// The upstream `name` of a status.
pub(crate) fn upstream<'s>(status: &'s serde_json::Value, name: &str) -> &'s serde_json::Value {
    status["upstreams"]
        .as_array()
        .unwrap_or_else(|| panic!("no upstreams in {status}"))
        .iter()
        .find(|u| u["name"] == name)
        .unwrap_or_else(|| panic!("no upstream {name} in {status}"))
}

/// The processes of this user whose environment holds `GW_TEST_MARKER=marker`.
pub(crate) fn pids_with(marker: &str) -> Vec<u32> {
    let wanted = format!("GW_TEST_MARKER={marker}");
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else { continue };
        if environ.split(|&b| b == 0).any(|var| var == wanted.as_bytes()) {
            pids.push(pid);
        }
    }
    pids
}

/// The one process with `marker`, once there is exactly one.
pub(crate) fn the_pid_with(marker: &str) -> u32 {
    eventually(&format!("one process with {marker}"), PATIENCE, || match pids_with(marker)[..] {
        [pid] => Ok(pid),
        ref other => Err(format!("{other:?}")),
    })
}

/// Sends `signal` to `pid`.
#[cfg(unix)]
pub(crate) fn signal(pid: u32, signal: nix::sys::signal::Signal) {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), signal).unwrap();
}

/// One keep-alive HTTP/1.1 connection to a gateway's `/mcp`, speaking the legacy (2025-11-25)
/// headers: thousands of requests without a connection each.
pub(crate) struct Conn {
    reader: std::io::BufReader<std::net::TcpStream>,
    authority: String,
}

/// A response: status, the `Mcp-Session-Id` it carried, and the body.
pub(crate) type Reply = (u16, Option<String>, String);

impl Conn {
    pub(crate) fn open(authority: &str) -> Conn {
        let stream = std::net::TcpStream::connect(authority).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        stream.set_nodelay(true).unwrap();
        Conn { reader: std::io::BufReader::new(stream), authority: authority.to_owned() }
    }

    /// A POST of `body` in `session`.
    pub(crate) fn post(&mut self, session: Option<&str>, body: &str) -> Reply {
        self.send("POST", session, body)
    }

    /// A DELETE of `session`.
    pub(crate) fn delete(&mut self, session: &str) -> Reply {
        self.send("DELETE", Some(session), "")
    }

    fn send(&mut self, method: &str, session: Option<&str>, body: &str) -> Reply {
        use std::io::BufRead;
        let session = session.map(|s| format!("Mcp-Session-Id: {s}\r\n")).unwrap_or_default();
        let request = format!(
            "{method} /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2025-11-25\r\n{session}Content-Length: {}\r\n\r\n{body}",
            self.authority,
            body.len()
        );
        self.reader.get_mut().write_all(request.as_bytes()).unwrap();
        let mut line = String::new();
        self.reader.read_line(&mut line).unwrap();
        let status =
            line.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("{line:?}"));
        let (mut length, mut chunked, mut id) = (0usize, false, None);
        loop {
            line.clear();
            self.reader.read_line(&mut line).unwrap();
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            let Some((k, v)) = header.split_once(':') else { continue };
            let (k, v) = (k.trim().to_ascii_lowercase(), v.trim());
            match k.as_str() {
                "content-length" => length = v.parse().unwrap(),
                "transfer-encoding" => chunked = v.to_ascii_lowercase().contains("chunked"),
                "mcp-session-id" => id = Some(v.to_owned()),
                _ => {}
            }
        }
        let mut body = Vec::new();
        if chunked {
            loop {
                line.clear();
                self.reader.read_line(&mut line).unwrap();
                let size = usize::from_str_radix(line.trim().split(';').next().unwrap(), 16).unwrap();
                let mut chunk = vec![0; size + 2];
                self.reader.read_exact(&mut chunk).unwrap();
                if size == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..size]);
            }
        } else {
            body.resize(length, 0);
            self.reader.read_exact(&mut body).unwrap();
        }
        (status, id, String::from_utf8(body).unwrap())
    }

    /// `initialize` and `notifications/initialized`: the new session's id.
    pub(crate) fn open_session(&mut self) -> String {
        let initialize = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}"#;
        let (code, session, body) = self.post(None, initialize);
        assert_eq!(code, 200, "{body}");
        let session = session.unwrap_or_else(|| panic!("no session id: {body}"));
        let (code, _, body) =
            self.post(Some(&session), r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert_eq!(code, 202, "{body}");
        session
    }
}
