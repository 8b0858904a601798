//! HTTP mode: `tools/call echo` POSTs over a fixed set of keep-alive HTTP/1.1 connections.
//!
//! Every worker owns exactly one connection and has one request on it at a time, so the
//! number of connections is the concurrency. Requests are the 2026-07-28 shape (`_meta` in
//! the body and the standard `Mcp-*` headers) or, with `--legacy`, requests of a 2025-11-25
//! session that [`initialize`] opened (its `Mcp-Session-Id` and negotiated
//! `MCP-Protocol-Version` on every request, all connections sharing the one session, as a
//! client's pool would). Answers may be JSON or an SSE stream.

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper::header::{ACCEPT, CONTENT_TYPE, HOST};
use hyper::{Request, StatusCode, Uri};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use crate::load::{Checked, PhaseStats, Shape, check, snippet};

/// The protocol revision modern requests are written for.
const PROTOCOL_VERSION: &str = "2026-07-28";

/// The revision a legacy session asks for in `initialize`.
const LEGACY_VERSION: &str = "2025-11-25";

/// The id of the legacy `initialize` request: outside the range of the `tools/call` ids.
const INITIALIZE_ID: &str = "initialize";

/// A legacy session opened by [`initialize`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Legacy {
    /// The revision the server answered `initialize` with.
    pub(crate) version: String,
    /// `Mcp-Session-Id`, when the server gave one (a server may serve a legacy client without
    /// sessions).
    pub(crate) session_id: Option<String>,
}

/// Where the server listens, from `--url`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    /// Host name or address, without IPv6 brackets (for connecting).
    pub(crate) host: String,
    pub(crate) port: u16,
    /// `host[:port]` as written (for the `Host` header).
    pub(crate) authority: String,
    /// Path and query (origin form).
    pub(crate) path: String,
    /// The legacy session requests belong to; `None` for 2026-07-28 requests.
    pub(crate) legacy: Option<Legacy>,
}

impl Target {
    /// Accepts `http://host[:port][/path]`; the port defaults to 80 and the path to `/`.
    pub(crate) fn parse(url: &str) -> Result<Target, String> {
        let uri: Uri = url.parse().map_err(|e| format!("bad --url `{url}`: {e}"))?;
        if uri.scheme_str() != Some("http") {
            return Err(format!("bad --url `{url}`: only http:// is supported"));
        }
        let Some(authority) = uri.authority() else {
            return Err(format!("bad --url `{url}`: no host"));
        };
        let host = authority.host().trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() {
            return Err(format!("bad --url `{url}`: no host"));
        }
        Ok(Target {
            host: host.to_owned(),
            port: authority.port_u16().unwrap_or(80),
            authority: authority.as_str().to_owned(),
            path: uri.path_and_query().map_or("/", |p| p.as_str()).to_owned(),
            legacy: None,
        })
    }

    /// Where to connect.
    pub(crate) fn address(&self) -> (&str, u16) {
        (self.host.as_str(), self.port)
    }

    /// `host:port`, for messages.
    pub(crate) fn at(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    /// The POST for request `id`.
    fn request(&self, shape: Shape, id: u64) -> Result<Request<Full<Bytes>>, String> {
        let mut post = self.post();
        if self.legacy.is_none() {
            // Only a 2026-07-28 client names the method and the tool in headers.
            post = post.header("mcp-method", "tools/call").header("mcp-name", "echo");
        }
        post.body(Full::new(Bytes::from(shape.request(id)))).map_err(build_error)
    }

    /// A POST to the endpoint with the headers every request carries: the revision, and the
    /// session when there is one.
    fn post(&self) -> hyper::http::request::Builder {
        let (version, session) = match &self.legacy {
            Some(legacy) => (legacy.version.as_str(), legacy.session_id.as_deref()),
            None => (PROTOCOL_VERSION, None),
        };
        let mut post = Request::post(self.path.as_str())
            .header(HOST, self.authority.as_str())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .header("mcp-protocol-version", version);
        if let Some(session) = session {
            post = post.header("mcp-session-id", session);
        }
        post
    }
}

fn build_error(e: hyper::http::Error) -> String {
    format!("cannot build the request: {e}")
}

/// Opens a legacy session on `connection`: `initialize` (2025-11-25), its answer (JSON or SSE)
/// with the session id the server assigns, then `notifications/initialized`, which must be
/// accepted (`202`). Returns the session the requests then name.
pub(crate) async fn initialize(connection: &mut Connection, target: &Target) -> Result<Legacy, String> {
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": INITIALIZE_ID, "method": "initialize",
        "params": {
            "protocolVersion": LEGACY_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "mcp-load", "version": env!("CARGO_PKG_VERSION")}
        }
    });
    // Until the server answers, the request carries no session and no revision header.
    let post = Request::post(target.path.as_str())
        .header(HOST, target.authority.as_str())
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json, text/event-stream")
        .body(Full::new(Bytes::from(body.to_string())))
        .map_err(build_error)?;
    let (status, headers, answer) = exchange(connection, post, "initialize").await?;
    if status != StatusCode::OK {
        return Err(format!("initialize: HTTP {status}: {}", snippet(&answer)));
    }
    let session_id = match headers.get("mcp-session-id") {
        Some(value) => Some(
            value
                .to_str()
                .map_err(|_| "initialize: an Mcp-Session-Id that is not text".to_owned())?
                .to_owned(),
        ),
        None => None,
    };
    let content_type = headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let version = initialize_result(content_type, &answer)?;
    let legacy = Legacy { version, session_id };
    let session = Target { legacy: Some(legacy.clone()), ..target.clone() };
    let initialized = session
        .post()
        .body(Full::new(Bytes::from_static(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)))
        .map_err(build_error)?;
    let (status, _, answer) = exchange(connection, initialized, "notifications/initialized").await?;
    if status != StatusCode::ACCEPTED {
        return Err(format!("notifications/initialized: HTTP {status} (expected 202): {}", snippet(&answer)));
    }
    Ok(legacy)
}

/// The negotiated revision in an answer to `initialize`, or why there is none.
fn initialize_result(content_type: &str, body: &[u8]) -> Result<String, String> {
    let media = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    let messages = match media.as_str() {
        "application/json" => vec![body.to_vec()],
        "text/event-stream" => sse_events(body),
        _ => return Err(format!("initialize: unexpected content-type `{content_type}`")),
    };
    for message in messages.iter().filter(|data| !data.is_empty()) {
        let Ok(message) = serde_json::from_slice::<serde_json::Value>(message) else { continue };
        if message.get("method").is_some() || message["id"] != INITIALIZE_ID {
            continue;
        }
        return match message["result"]["protocolVersion"].as_str() {
            Some(version) => Ok(version.to_owned()),
            None => Err(format!(
                "initialize failed: {}",
                snippet(&serde_json::to_vec(&message).unwrap_or_default())
            )),
        };
    }
    Err(format!("initialize: no answer in {}", snippet(body)))
}

/// Ends a legacy session (`DELETE`), as a client that is done does. A server may refuse to
/// let clients end sessions (`405`); that is not an error of the run.
pub(crate) async fn end_session(connection: &mut Connection, target: &Target) -> Result<(), String> {
    let Some(Legacy { session_id: Some(session), version }) = &target.legacy else { return Ok(()) };
    let delete = Request::delete(target.path.as_str())
        .header(HOST, target.authority.as_str())
        .header("mcp-protocol-version", version.as_str())
        .header("mcp-session-id", session.as_str())
        .body(Full::new(Bytes::new()))
        .map_err(build_error)?;
    let (status, _, answer) = exchange(connection, delete, "DELETE").await?;
    match status {
        StatusCode::OK | StatusCode::NO_CONTENT | StatusCode::ACCEPTED | StatusCode::METHOD_NOT_ALLOWED => {
            Ok(())
        }
        _ => Err(format!("ending the session: HTTP {status}: {}", snippet(&answer))),
    }
}

/// Sends one request and reads its whole answer.
async fn exchange(
    connection: &mut Connection,
    request: Request<Full<Bytes>>,
    what: &str,
) -> Result<(StatusCode, hyper::HeaderMap, Bytes), String> {
    connection.ready().await.map_err(|e| format!("{what}: connection lost: {e}"))?;
    let response = connection.send_request(request).await.map_err(|e| format!("{what}: {e}"))?;
    let (parts, body) = response.into_parts();
    let body = body.collect().await.map_err(|e| format!("{what}: reading the answer: {e}"))?.to_bytes();
    Ok((parts.status, parts.headers, body))
}

/// One keep-alive HTTP/1.1 connection; its driver runs as a task until the sender is dropped.
pub(crate) type Connection = SendRequest<Full<Bytes>>;

/// Opens `count` connections to `target`.
pub(crate) async fn connect_all(target: &Target, count: usize) -> Result<Vec<Connection>, String> {
    let mut connections = Vec::with_capacity(count);
    for _ in 0..count {
        connections.push(connect(target).await?);
    }
    Ok(connections)
}

async fn connect(target: &Target) -> Result<Connection, String> {
    let at = target.at();
    let stream =
        TcpStream::connect(target.address()).await.map_err(|e| format!("cannot connect to {at}: {e}"))?;
    stream.set_nodelay(true).map_err(|e| format!("TCP_NODELAY on {at}: {e}"))?;
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("HTTP handshake with {at}: {e}"))?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(sender)
}

/// What one phase over all connections produced.
pub(crate) struct Phase {
    /// The connections still usable, for the next phase.
    pub(crate) connections: Vec<Connection>,
    pub(crate) stats: PhaseStats,
    /// A connection failed (the phase stopped early); the first such failure.
    pub(crate) broken: Option<String>,
}

/// Sends requests `ids`, one at a time on each connection, until all are answered; with a
/// `rate`, each when it is due (`--rate`).
pub(crate) async fn run_phase(
    connections: Vec<Connection>,
    target: Arc<Target>,
    shape: Shape,
    ids: Range<u64>,
    rate: Option<f64>,
) -> Phase {
    let start = Instant::now();
    let shared = Arc::new(Shared {
        next: AtomicU64::new(ids.start),
        end: ids.end,
        stop: AtomicBool::new(false),
        schedule: rate.map(|rate| (ids.start, rate)),
    });
    let count = ids.end.saturating_sub(ids.start);
    let permits = rate.map(|_| {
        let permits = Arc::new(tokio::sync::Semaphore::new(0));
        let (pacing, granting) = (shared.clone(), permits.clone());
        std::thread::spawn(move || pace(pacing, start, granting));
        permits
    });
    let workers: Vec<_> = connections
        .into_iter()
        .map(|connection| {
            tokio::spawn(worker(connection, target.clone(), shape, shared.clone(), start, permits.clone()))
        })
        .collect();
    let mut phase = Phase {
        connections: Vec::with_capacity(workers.len()),
        stats: PhaseStats { latencies_us: Vec::with_capacity(count as usize), ..Default::default() },
        broken: None,
    };
    for worker in workers {
        let (connection, stats, broken) = match worker.await {
            Ok(outcome) => outcome,
            Err(e) => (None, PhaseStats::default(), Some(format!("a worker failed: {e}"))),
        };
        phase.connections.extend(connection);
        let total = &mut phase.stats;
        total.received += stats.received;
        total.errors += stats.errors;
        total.latencies_us.extend(stats.latencies_us);
        total.elapsed = total.elapsed.max(stats.elapsed);
        if let Some(first) = stats.first_error {
            total.first_error.get_or_insert(first);
        }
        if let Some(why) = broken {
            phase.broken.get_or_insert(why);
        }
    }
    // Requests never answered (a connection broke) are errors too.
    phase.stats.errors += count.saturating_sub(phase.stats.received);
    phase.stats.eof = phase.broken.is_some();
    phase
}

struct Shared {
    /// The next id to send.
    next: AtomicU64,
    end: u64,
    /// Set when a connection breaks: every worker stops.
    stop: AtomicBool,
    /// The first id and the rate, when requests are sent at a rate.
    schedule: Option<(u64, f64)>,
}

impl Shared {
    /// When request `id` is due, for a phase that began at `start`.
    fn due(&self, id: u64, start: Instant) -> Option<Instant> {
        let (first, rate) = self.schedule?;
        Some(start + std::time::Duration::from_secs_f64((id - first) as f64 / rate))
    }
}

/// Grants one request a permit at each due time (`--rate`), from a thread of its own that
/// sleeps in between with the kernel's timer slack lowered to a microsecond: requests leave
/// within some microseconds of their time, and the load generator does not spin on its core.
fn pace(shared: Arc<Shared>, start: Instant, permits: Arc<tokio::sync::Semaphore>) {
    #[cfg(target_os = "linux")]
    let _ = nix::sys::prctl::set_timerslack(1_000);
    for id in shared.next.load(Ordering::Relaxed)..shared.end {
        if shared.stop.load(Ordering::Relaxed) {
            break;
        }
        if let Some(due) = shared.due(id, start) {
            std::thread::sleep(due.saturating_duration_since(Instant::now()));
        }
        permits.add_permits(1);
    }
}

async fn worker(
    mut connection: Connection,
    target: Arc<Target>,
    shape: Shape,
    shared: Arc<Shared>,
    start: Instant,
    permits: Option<Arc<tokio::sync::Semaphore>>,
) -> (Option<Connection>, PhaseStats, Option<String>) {
    let mut stats = PhaseStats::default();
    loop {
        if shared.stop.load(Ordering::Relaxed) {
            break;
        }
        // At a rate, the next request once it is due (the pacer's permit).
        if let Some(permits) = &permits {
            match tokio::time::timeout(std::time::Duration::from_millis(100), permits.acquire()).await {
                Ok(Ok(permit)) => permit.forget(),
                // Every due request is taken by now (or the phase stopped).
                Err(_) if shared.next.load(Ordering::Relaxed) >= shared.end => break,
                _ => continue,
            }
        }
        let id = shared.next.fetch_add(1, Ordering::Relaxed);
        if id >= shared.end {
            break;
        }
        let request = match target.request(shape, id) {
            Ok(request) => request,
            Err(why) => return broken(stats, &shared, why),
        };
        // At a rate, a request's latency counts from when it was due: waiting for a free
        // connection is part of it (no coordinated omission).
        let sent = shared.due(id, start).unwrap_or_else(Instant::now);
        if let Err(e) = connection.ready().await {
            return broken(stats, &shared, format!("connection lost before request {id}: {e}"));
        }
        let response = match connection.send_request(request).await {
            Ok(response) => response,
            Err(e) => return broken(stats, &shared, format!("request {id} failed: {e}")),
        };
        let (parts, body) = response.into_parts();
        let body = match body.collect().await {
            Ok(body) => body.to_bytes(),
            Err(e) => return broken(stats, &shared, format!("reading the answer to {id}: {e}")),
        };
        let now = Instant::now();
        stats.received += 1;
        let content_type = parts.headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
        match verdict(parts.status, content_type, &body, shape, id) {
            Ok(()) => stats.latencies_us.push(now.duration_since(sent).as_micros() as u64),
            Err(why) => stats.error(why),
        }
        stats.elapsed = now.duration_since(start);
    }
    (Some(connection), stats, None)
}

fn broken(
    stats: PhaseStats,
    shared: &Shared,
    why: String,
) -> (Option<Connection>, PhaseStats, Option<String>) {
    shared.stop.store(true, Ordering::Relaxed);
    (None, stats, Some(why))
}

/// Checks one HTTP answer to request `id`: `200`, then the echo as JSON or inside an SSE stream.
pub(crate) fn verdict(
    status: StatusCode,
    content_type: &str,
    body: &[u8],
    shape: Shape,
    id: u64,
) -> Result<(), String> {
    if status != StatusCode::OK {
        return Err(format!("HTTP {status} for request {id}: {}", snippet(body)));
    }
    let media = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    let answer = match media.as_str() {
        "application/json" => check(body, shape),
        // An event with empty data primes the client's reconnection (its id); no message.
        "text/event-stream" => sse_events(body)
            .iter()
            .filter(|data| !data.is_empty())
            .map(|data| check(data, shape))
            .find(|checked| *checked != Checked::ServerMessage)
            .unwrap_or(Checked::Bad(None, "SSE stream without an answer")),
        _ => return Err(format!("unexpected content-type `{content_type}` for request {id}")),
    };
    match answer {
        Checked::Echo(got) if got == id => Ok(()),
        Checked::Echo(got) => Err(format!("answer for id {got} to request {id}")),
        Checked::Bad(_, why) => Err(format!("{why}: {}", snippet(body))),
        Checked::ServerMessage => Err(format!("no answer to request {id}")),
    }
}

/// The `data` of every event in an SSE body (multi-line data joined with `\n`).
fn sse_events(body: &[u8]) -> Vec<Vec<u8>> {
    let mut events = Vec::new();
    let mut data: Option<Vec<u8>> = None;
    for line in body.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            events.extend(data.take());
            continue;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => (&line[..colon], &line[colon + 1..]),
            None => (line, &[][..]),
        };
        if field == b"data" {
            let value = value.strip_prefix(b" ").unwrap_or(value);
            match &mut data {
                Some(buffer) => {
                    buffer.push(b'\n');
                    buffer.extend_from_slice(value);
                }
                None => data = Some(value.to_vec()),
            }
        }
    }
    events.extend(data);
    events
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHAPE: Shape = Shape { modern: true, text_bytes: 8 };

    #[test]
    fn urls_are_parsed() {
        let target = Target::parse("http://127.0.0.1:8080/mcp").unwrap();
        assert_eq!(
            target,
            Target {
                host: "127.0.0.1".into(),
                port: 8080,
                authority: "127.0.0.1:8080".into(),
                path: "/mcp".into(),
                legacy: None,
            }
        );
        let bare = Target::parse("http://localhost").unwrap();
        assert_eq!((bare.host.as_str(), bare.port, bare.path.as_str()), ("localhost", 80, "/"));
        let v6 = Target::parse("http://[::1]:9/x?y=1").unwrap();
        assert_eq!((v6.host.as_str(), v6.authority.as_str(), v6.path.as_str()), ("::1", "[::1]:9", "/x?y=1"));
        assert!(Target::parse("https://127.0.0.1/mcp").is_err());
        assert!(Target::parse("127.0.0.1:80").is_err());
        assert!(Target::parse("not a url").is_err());
    }

    #[test]
    fn requests_carry_the_standard_headers() {
        let target = Target::parse("http://127.0.0.1:1/mcp").unwrap();
        let request = target.request(SHAPE, 5).unwrap();
        let header = |name: &str| request.headers()[name].to_str().unwrap().to_owned();
        assert_eq!(request.uri(), "/mcp");
        assert_eq!(header("host"), "127.0.0.1:1");
        assert_eq!(header("content-type"), "application/json");
        assert_eq!(header("accept"), "application/json, text/event-stream");
        assert_eq!(header("mcp-protocol-version"), "2026-07-28");
        assert_eq!(header("mcp-method"), "tools/call");
        assert_eq!(header("mcp-name"), "echo");
        assert!(request.headers().get("mcp-session-id").is_none());
    }

    #[test]
    fn legacy_requests_name_their_session_and_revision_only() {
        let mut target = Target::parse("http://127.0.0.1:1/mcp").unwrap();
        target.legacy = Some(Legacy { version: "2025-06-18".into(), session_id: Some("s-1".into()) });
        let shape = Shape { modern: false, text_bytes: 8 };
        let request = target.request(shape, 5).unwrap();
        let header = |name: &str| request.headers().get(name).map(|v| v.to_str().unwrap().to_owned());
        assert_eq!(header("mcp-protocol-version").as_deref(), Some("2025-06-18"));
        assert_eq!(header("mcp-session-id").as_deref(), Some("s-1"));
        assert_eq!((header("mcp-method"), header("mcp-name")), (None, None));
        // A server that keeps no sessions for legacy clients gives no id: none is sent.
        target.legacy = Some(Legacy { version: "2025-11-25".into(), session_id: None });
        assert!(target.request(shape, 5).unwrap().headers().get("mcp-session-id").is_none());
    }

    #[test]
    fn the_initialize_answer_gives_the_revision() {
        let json = br#"{"jsonrpc":"2.0","id":"initialize","result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}"#;
        assert_eq!(initialize_result("application/json", json).as_deref(), Ok("2025-06-18"));
        let text = std::str::from_utf8(json).unwrap();
        let sse = format!(
            "data: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{}}}}\n\ndata: {text}\n\n"
        );
        assert_eq!(initialize_result("text/event-stream", sse.as_bytes()).as_deref(), Ok("2025-06-18"));
        let refused = br#"{"jsonrpc":"2.0","id":"initialize","error":{"code":-32602,"message":"no"}}"#;
        assert!(initialize_result("application/json", refused).unwrap_err().contains("initialize failed"));
        let other = br#"{"jsonrpc":"2.0","id":3,"result":{"protocolVersion":"2025-06-18"}}"#;
        assert!(initialize_result("application/json", other).unwrap_err().contains("no answer"));
        assert!(initialize_result("text/html", json).is_err());
    }

    #[test]
    fn answers_are_checked_as_json_or_sse() {
        let ok = br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"7xxxxxxx"}]}}"#;
        assert_eq!(verdict(StatusCode::OK, "application/json", ok, SHAPE, 7), Ok(()));
        assert!(verdict(StatusCode::OK, "application/json", ok, SHAPE, 8).is_err());
        assert!(verdict(StatusCode::BAD_REQUEST, "application/json", ok, SHAPE, 7).is_err());
        assert!(verdict(StatusCode::OK, "text/plain", ok, SHAPE, 7).is_err());
        let note = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#;
        let answer = std::str::from_utf8(ok).unwrap();
        let sse = format!("event: message\r\ndata: {note}\r\n\r\n: keep-alive\n\ndata: {answer}\n\n");
        assert_eq!(verdict(StatusCode::OK, "text/event-stream", sse.as_bytes(), SHAPE, 7), Ok(()));
        let primed = format!("id: 0/0\nretry: 3000\ndata: \n\ndata: {answer}\n\n");
        assert_eq!(verdict(StatusCode::OK, "text/event-stream", primed.as_bytes(), SHAPE, 7), Ok(()));
        let only_note = format!("data: {note}\n\n");
        assert!(verdict(StatusCode::OK, "text/event-stream", only_note.as_bytes(), SHAPE, 7).is_err());
    }
}
