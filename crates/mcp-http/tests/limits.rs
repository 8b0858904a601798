//! The limits that keep a stalled or greedy client from holding the server: requests in
//! flight and connections (503 + Retry-After), body and header read timeouts, the size of the
//! request head (431), one `Host` (400), the send timeout, long-lived streams with a budget of
//! their own, capped legacy sessions and replay data.

#[path = "limits/replay.rs"]
mod replay;
#[path = "limits/sessions.rs"]
mod sessions;
#[path = "limits/streams.rs"]
mod streams;
#[allow(dead_code)]
#[path = "support/raw_http.rs"]
mod support;
#[path = "limits/uploads.rs"]
mod uploads;

use std::sync::Arc;
use std::time::Duration;

use mcp_http::HttpConfig;
use mcp_server::{Progress, Server, State, Tools};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Notify;

/// Sleeps, after saying it started (`Flood::entered`).
async fn sleepy(State(flood): State<Flood>) -> &'static str {
    flood.entered.notify_one();
    tokio::time::sleep(Duration::from_millis(800)).await;
    "slept"
}

/// `flood` signals when it starts and when its future is dropped (the request cancelled).
#[derive(Clone, Default)]
struct Flood {
    entered: Arc<Notify>,
    dropped: Arc<Notify>,
}

struct NotifyOnDrop(Arc<Notify>);

impl Drop for NotifyOnDrop {
    fn drop(&mut self) {
        self.0.notify_one();
    }
}

/// An endless SSE answer: 64 KiB progress messages for as long as the stream takes them.
async fn flood(State(flood): State<Flood>, progress: Progress) -> &'static str {
    let _dropped = NotifyOnDrop(flood.dropped.clone());
    flood.entered.notify_one();
    let message = "x".repeat(64 * 1024);
    for step in 1..u32::MAX {
        progress.report(f64::from(step), None, Some(&message)).await;
        // A cancelled request's reports return at once: yield, so that it can be dropped.
        tokio::task::yield_now().await;
    }
    "never"
}

async fn start_with(tune: impl FnOnce(&mut HttpConfig)) -> (std::net::SocketAddr, Flood) {
    let flooding = Flood::default();
    let server = Server::builder("limits", "1")
        .state(flooding.clone())
        .tools(Tools::new().add("sleepy", "Sleeps", sleepy).add("flood", "Floods", flood))
        .build()
        .unwrap();
    let bound = mcp_http::bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = bound.local_addr();
    let mut config = HttpConfig::for_bind(addr);
    tune(&mut config);
    tokio::spawn(mcp_http::serve(server, bound, Some(config)));
    (addr, flooding)
}

async fn start(tune: impl FnOnce(&mut HttpConfig)) -> std::net::SocketAddr {
    start_with(tune).await.0
}

const CALL: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"sleepy"}}"#;

fn post(addr: std::net::SocketAddr, body: &str, declared_len: usize) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{}\r\ncontent-type: application/json\r\naccept: application/json\r\nmcp-protocol-version: 2026-07-28\r\nmcp-method: tools/call\r\nmcp-name: sleepy\r\nconnection: close\r\ncontent-length: {declared_len}\r\n\r\n{body}",
        addr.port()
    )
}

async fn exchange(addr: std::net::SocketAddr, raw: &str) -> String {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(raw.as_bytes()).await.unwrap();
    let mut out = String::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_string(&mut out))
        .await
        .expect("no answer")
        .unwrap();
    out
}

#[tokio::test]
async fn requests_beyond_the_in_flight_limit_get_503_with_retry_after() {
    let (addr, sleeping) = start_with(|c| c.max_in_flight = 1).await;
    let request = post(addr, CALL, CALL.len());
    let first = tokio::spawn(async move { exchange(addr, &request).await });
    tokio::time::timeout(Duration::from_secs(30), sleeping.entered.notified())
        .await
        .expect("the first call runs");
    let second = exchange(addr, &post(addr, CALL, CALL.len())).await;
    assert!(second.starts_with("HTTP/1.1 503"), "{second}");
    assert!(second.to_ascii_lowercase().contains("retry-after: 1"), "{second}");
    assert!(first.await.unwrap().starts_with("HTTP/1.1 200"));
}

#[tokio::test]
async fn connections_beyond_the_limit_get_503() {
    let addr = start(|c| c.max_connections = 1).await;
    let _held = TcpStream::connect(addr).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let second = exchange(addr, &post(addr, CALL, CALL.len())).await;
    assert!(second.starts_with("HTTP/1.1 503"), "{second}");
}

#[tokio::test]
async fn a_stalled_body_is_cut_off_with_408() {
    let addr = start(|c| c.body_read_timeout = Duration::from_millis(200)).await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(post(addr, &CALL[..10], CALL.len()).as_bytes()).await.unwrap();
    let mut out = String::new();
    tokio::time::timeout(Duration::from_secs(5), stream.read_to_string(&mut out))
        .await
        .expect("not cut off")
        .unwrap();
    assert!(out.starts_with("HTTP/1.1 408"), "{out}");
}

#[tokio::test]
async fn stalled_headers_close_the_connection() {
    let addr = start(|c| c.header_read_timeout = Duration::from_millis(200)).await;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n").await.unwrap();
    let mut out = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut out)).await;
    assert!(read.is_ok(), "the server kept a connection whose headers never finished");
}

const LIST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;

/// A modern `tools/list` whose head carries `extra` (raw header lines, each ending in CRLF).
fn list_with(addr: std::net::SocketAddr, extra: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{}\r\n{extra}content-type: application/json\r\naccept: application/json\r\nmcp-protocol-version: 2026-07-28\r\nmcp-method: tools/list\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{LIST}",
        addr.port(),
        LIST.len()
    )
}

/// Sends `raw` while reading the answer (the server may answer before reading it all), and
/// returns what was read until the server closed the connection.
async fn exchange_big(addr: std::net::SocketAddr, raw: String) -> String {
    let (mut reader, mut writer) = TcpStream::connect(addr).await.unwrap().into_split();
    let sending = tokio::spawn(async move {
        // The server may close before taking everything: a failed write is expected then.
        let _ = writer.write_all(raw.as_bytes()).await;
        writer
    });
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout(Duration::from_secs(10), reader.read(&mut buf)).await.expect("no answer") {
            Ok(0) | Err(_) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
        }
    }
    drop(sending.await);
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test]
async fn request_heads_over_the_documented_limits_get_431() {
    let addr = start(|_| {}).await;
    let one_big = format!("x-big: {}\r\n", "a".repeat(300 * 1024));
    let answer = exchange_big(addr, list_with(addr, &one_big)).await;
    assert!(answer.starts_with("HTTP/1.1 431"), "a 300 KiB header: {answer:.200}");
    // 240 KB in 40 fields of 6,000 bytes, each well under any per-field limit.
    let many_big: String = (0..40).map(|i| format!("x-h{i}: {}\r\n", "b".repeat(6000))).collect();
    let answer = exchange_big(addr, list_with(addr, &many_big)).await;
    assert!(answer.starts_with("HTTP/1.1 431"), "240 KB of headers: {answer:.200}");
    // 101 small fields (the request's own 7 included).
    let many: String = (0..94).map(|i| format!("x-n{i}: 1\r\n")).collect();
    let answer = exchange_big(addr, list_with(addr, &many)).await;
    assert!(answer.starts_with("HTTP/1.1 431"), "101 header fields: {answer:.200}");
    // Just under both limits: served.
    let under: String = (0..10).map(|i| format!("x-h{i}: {}\r\n", "c".repeat(6000))).collect();
    let answer = exchange_big(addr, list_with(addr, &under)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "60 KB of headers: {answer:.200}");
    let many: String = (0..93).map(|i| format!("x-n{i}: 1\r\n")).collect();
    let answer = exchange_big(addr, list_with(addr, &many)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "100 header fields: {answer:.200}");
}

#[tokio::test]
async fn the_header_limits_are_settings() {
    let addr = start(|c| {
        c.max_header_bytes = 16 * 1024;
        c.max_headers = 20;
    })
    .await;
    let fields: String = (0..3).map(|i| format!("x-h{i}: {}\r\n", "c".repeat(6000))).collect();
    let answer = exchange_big(addr, list_with(addr, &fields)).await;
    assert!(answer.starts_with("HTTP/1.1 431"), "18 KB over a 16 KiB limit: {answer:.200}");
    let fields: String = (0..14).map(|i| format!("x-n{i}: 1\r\n")).collect();
    let answer = exchange_big(addr, list_with(addr, &fields)).await;
    assert!(answer.starts_with("HTTP/1.1 431"), "21 fields over a limit of 20: {answer:.200}");
    let fields: String = (0..13).map(|i| format!("x-n{i}: 1\r\n")).collect();
    let answer = exchange_big(addr, list_with(addr, &fields)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "20 fields: {answer:.200}");
}

#[tokio::test]
async fn a_request_with_two_host_lines_gets_400() {
    let addr = start(|_| {}).await;
    for second in [format!("host: 127.0.0.1:{}", addr.port()), "host: evil.example".to_owned()] {
        let answer = exchange(addr, &list_with(addr, &format!("{second}\r\n"))).await;
        assert!(answer.starts_with("HTTP/1.1 400"), "{second}: {answer}");
        assert!(!answer.contains("\"result\""), "nothing was served: {answer}");
    }
    // HTTP/1.1 without any Host is refused the same way.
    let raw = list_with(addr, "").replacen(&format!("host: 127.0.0.1:{}\r\n", addr.port()), "", 1);
    let answer = exchange(addr, &raw).await;
    assert!(answer.starts_with("HTTP/1.1 400"), "no Host: {answer}");
    // One Host is fine.
    assert!(exchange(addr, &list_with(addr, "")).await.starts_with("HTTP/1.1 200"));
}

#[tokio::test]
async fn a_client_that_stops_reading_is_cut_off_after_the_send_timeout() {
    let (addr, flooding) = start_with(|c| c.send_timeout = Duration::from_millis(200)).await;
    // A client with a tiny receive window asks for an endless stream and never reads it.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut stalled = socket.connect(addr).await.unwrap();
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":"t","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"flood"}}"#;
    let raw = format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\nmcp-method: tools/call\r\nmcp-name: flood\r\ncontent-length: {}\r\n\r\n{call}",
        addr.port(),
        call.len()
    );
    stalled.write_all(raw.as_bytes()).await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), flooding.entered.notified())
        .await
        .expect("flood never started");
    // Everyone else is served meanwhile.
    assert!(exchange(addr, &list_with(addr, "")).await.starts_with("HTTP/1.1 200"));
    // The stalled connection is closed: its request is cancelled (modern semantics) ...
    tokio::time::timeout(Duration::from_secs(10), flooding.dropped.notified())
        .await
        .expect("the stalled connection was kept open");
    // ... and the client, reading at last, finds the end of the connection.
    let mut rest = Vec::new();
    let end = tokio::time::timeout(Duration::from_secs(10), stalled.read_to_end(&mut rest)).await;
    assert!(end.is_ok(), "the connection is still open after {} bytes", rest.len());
    assert!(exchange(addr, &list_with(addr, "")).await.starts_with("HTTP/1.1 200"));
}
