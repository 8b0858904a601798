//! The deprecated HTTP+SSE transport (2024-11-05) over real sockets: the endpoint event, the
//! handshake and a tool call answered on the stream, the refusals, and the session ending
//! with its GET stream.

use std::net::SocketAddr;
use std::time::Duration;

use mcp_server::{Args, Peer, Server, Tools};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    text: String,
}

async fn echo(Args(EchoArgs { text }): Args<EchoArgs>) -> String {
    text
}

/// Runs until cancelled.
async fn forever() -> &'static str {
    tokio::time::sleep(Duration::from_secs(3600)).await;
    "never"
}

/// Asks the client for its roots (a server→client request on the stream).
async fn roots(peer: Peer) -> String {
    match peer.roots("roots").await {
        Ok(list) => list.roots.iter().map(|r| r.uri.to_string()).collect::<Vec<_>>().join(","),
        Err(e) => format!("failed: {e}"),
    }
}

async fn start() -> SocketAddr {
    let tools = Tools::new()
        .add("echo", "Echo", echo)
        .add("forever", "Forever", forever)
        .add("roots", "Roots", roots);
    let server = Server::builder("sse-test", "1").tools(tools).build().unwrap();
    let bound = mcp_http::bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = bound.local_addr();
    let mut config = mcp_http::HttpConfig::for_bind(addr);
    config.keep_alive = Duration::from_millis(50);
    config.max_body = 1024;
    tokio::spawn(mcp_http::serve(server, bound, Some(config)));
    addr
}

fn request_head(addr: SocketAddr, method: &str, path: &str, headers: &[(&str, &str)]) -> String {
    let mut head = format!("{method} {path} HTTP/1.1\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("host: 127.0.0.1:{}\r\n", addr.port()));
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head
}

/// A one-shot request; the status of its answer.
async fn post(addr: SocketAddr, path: &str, headers: &[(&str, &str)], body: &str) -> u16 {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let mut request = request_head(addr, "POST", path, headers);
    request.push_str(&format!("connection: close\r\ncontent-length: {}\r\n\r\n{body}", body.len()));
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut raw))
        .await
        .expect("no answer")
        .unwrap();
    let text = String::from_utf8(raw).unwrap();
    text.split(' ').nth(1).unwrap().parse().unwrap()
}

async fn post_json(addr: SocketAddr, path: &str, body: &str) -> u16 {
    post(addr, path, &[("content-type", "application/json")], body).await
}

/// An open SSE stream, read incrementally (chunked transfer-encoding removed).
struct Stream {
    tcp: TcpStream,
    raw: Vec<u8>,
    data: Vec<u8>,
}

impl Stream {
    /// Opens `GET /sse`; `Err(status)` when the answer is not a stream.
    async fn open(addr: SocketAddr, headers: &[(&str, &str)]) -> Result<Stream, u16> {
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        let mut request = request_head(addr, "GET", "/sse", headers);
        request.push_str("\r\n");
        tcp.write_all(request.as_bytes()).await.unwrap();
        let mut stream = Stream { tcp, raw: Vec::new(), data: Vec::new() };
        let head_end = loop {
            if let Some(i) = find(&stream.raw, b"\r\n\r\n") {
                break i;
            }
            assert!(stream.fill().await, "closed before the headers");
        };
        let head = String::from_utf8(stream.raw[..head_end].to_vec()).unwrap();
        stream.raw.drain(..head_end + 4);
        let status: u16 = head.split(' ').nth(1).unwrap().parse().unwrap();
        if status != 200 {
            return Err(status);
        }
        assert!(head.to_ascii_lowercase().contains("content-type: text/event-stream"), "{head}");
        assert!(head.to_ascii_lowercase().contains("transfer-encoding: chunked"), "{head}");
        Ok(stream)
    }

    async fn fill(&mut self) -> bool {
        let mut buf = [0u8; 4096];
        let n = tokio::time::timeout(Duration::from_secs(10), self.tcp.read(&mut buf))
            .await
            .expect("nothing arrived on the stream")
            .unwrap();
        self.raw.extend_from_slice(&buf[..n]);
        n > 0
    }

    /// Moves complete chunks from `raw` to `data`.
    fn dechunk(&mut self) {
        while let Some(line) = find(&self.raw, b"\r\n") {
            let size = std::str::from_utf8(&self.raw[..line]).unwrap();
            let size = usize::from_str_radix(size.trim(), 16).unwrap();
            if self.raw.len() < line + 2 + size + 2 {
                return;
            }
            self.data.extend_from_slice(&self.raw[line + 2..line + 2 + size]);
            self.raw.drain(..line + 2 + size + 2);
        }
    }

    /// The next event that is not a comment: its `event:` name and `data:`.
    async fn next(&mut self) -> (String, String) {
        loop {
            self.dechunk();
            while let Some(end) = find(&self.data, b"\n\n") {
                let text = String::from_utf8(self.data[..end].to_vec()).unwrap();
                self.data.drain(..end + 2);
                let mut name = "message".to_owned();
                let mut data = None;
                for line in text.lines() {
                    if let Some(n) = line.strip_prefix("event: ") {
                        name = n.to_owned();
                    } else if let Some(d) = line.strip_prefix("data: ") {
                        data = Some(d.to_owned());
                    }
                }
                if let Some(data) = data {
                    return (name, data);
                }
            }
            assert!(self.fill().await, "the stream ended");
        }
    }

    /// The next `message` event as JSON, validated against 2024-11-05.
    async fn message(&mut self) -> Value {
        let (name, data) = self.next().await;
        assert_eq!(name, "message");
        let value: Value = serde_json::from_str(&data).unwrap();
        mcp_testkit::assert_valid_message("2024-11-05", &value);
        value
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;

async fn open_session(addr: SocketAddr) -> (Stream, String) {
    let mut stream = Stream::open(addr, &[("accept", "text/event-stream")]).await.unwrap();
    let (name, endpoint) = stream.next().await;
    assert_eq!(name, "endpoint");
    assert!(endpoint.starts_with("/messages?sessionId="), "{endpoint}");
    (stream, endpoint)
}

#[tokio::test]
async fn handshake_and_tool_call_answered_on_the_stream() {
    let addr = start().await;
    let (mut stream, endpoint) = open_session(addr).await;

    assert_eq!(post_json(addr, &endpoint, INITIALIZE).await, 202);
    let init = stream.message().await;
    assert_eq!(init["id"], 1);
    assert_eq!(init["result"]["protocolVersion"], "2024-11-05");
    assert_eq!(init["result"]["serverInfo"]["name"], "sse-test");

    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(post_json(addr, &endpoint, initialized).await, 202);

    let call = r#"{"jsonrpc":"2.0","id":"c1","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#;
    assert_eq!(post_json(addr, &endpoint, call).await, 202);
    let result = stream.message().await;
    assert_eq!(result["id"], "c1");
    assert_eq!(result["result"]["content"][0]["text"], "hi");

    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    assert_eq!(post_json(addr, &endpoint, list).await, 202);
    let tools = stream.message().await;
    assert_eq!(tools["id"], 2);
    assert_eq!(tools["result"]["tools"][0]["name"], "echo");
}

#[tokio::test]
async fn sessions_are_separate() {
    let addr = start().await;
    let (_a, first) = open_session(addr).await;
    let (_b, second) = open_session(addr).await;
    assert_ne!(first, second);
}

#[tokio::test]
async fn refusals() {
    let addr = start().await;
    let (_stream, endpoint) = open_session(addr).await;

    assert_eq!(post_json(addr, "/messages?sessionId=nope", INITIALIZE).await, 404);
    assert_eq!(post_json(addr, "/messages", INITIALIZE).await, 400);
    assert_eq!(post(addr, &endpoint, &[("content-type", "text/plain")], INITIALIZE).await, 415);
    let foreign = [("host", "evil.example.com"), ("content-type", "application/json")];
    assert_eq!(post(addr, &endpoint, &foreign, INITIALIZE).await, 403);
    let cross_site = [("origin", "http://evil.example.com"), ("content-type", "application/json")];
    assert_eq!(post(addr, &endpoint, &cross_site, INITIALIZE).await, 403);
    assert_eq!(post_json(addr, &endpoint, "{not json").await, 400);
    let big = format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/x","params":{{"pad":"{}"}}}}"#,
        "x".repeat(2000)
    );
    assert_eq!(post_json(addr, &endpoint, &big).await, 413);

    assert_eq!(Stream::open(addr, &[("host", "evil.example.com")]).await.err(), Some(403));
    assert_eq!(Stream::open(addr, &[("accept", "application/json")]).await.err(), Some(406));
}

#[tokio::test]
async fn keep_alive_comments_flow() {
    let addr = start().await;
    let (mut stream, _endpoint) = open_session(addr).await;
    for _ in 0..20 {
        stream.fill().await;
        stream.dechunk();
        if find(&stream.data, b": keep-alive\n\n").is_some() {
            return;
        }
    }
    panic!("no keep-alive comment: {}", String::from_utf8_lossy(&stream.data));
}

#[tokio::test]
async fn closing_the_stream_ends_the_session() {
    let addr = start().await;
    let (stream, endpoint) = open_session(addr).await;
    assert_eq!(post_json(addr, &endpoint, INITIALIZE).await, 202);
    drop(stream);
    let mut status = 0;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        status = post_json(addr, &endpoint, INITIALIZE).await;
        if status == 404 {
            break;
        }
    }
    assert_eq!(status, 404);
}

#[tokio::test]
async fn duplicate_ids_and_cancellation() {
    let addr = start().await;
    let (mut stream, endpoint) = open_session(addr).await;
    assert_eq!(post_json(addr, &endpoint, INITIALIZE).await, 202);
    stream.message().await;
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(post_json(addr, &endpoint, initialized).await, 202);

    let call = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"forever","arguments":{}}}"#;
    assert_eq!(post_json(addr, &endpoint, call).await, 202);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(post_json(addr, &endpoint, call).await, 202);
    let duplicate = stream.message().await;
    assert_eq!(duplicate["id"], 7);
    assert_eq!(duplicate["error"]["code"], -32600);

    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}"#;
    assert_eq!(post_json(addr, &endpoint, cancel).await, 202);
    let ping = r#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#;
    assert_eq!(post_json(addr, &endpoint, ping).await, 202);
    let pong = stream.message().await;
    assert_eq!(pong["id"], 8, "a cancelled request is not answered: {pong}");

    // The id is free again once the cancelled request is gone.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let call = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"again"}}}"#;
    assert_eq!(post_json(addr, &endpoint, call).await, 202);
    let again = stream.message().await;
    assert_eq!(again["result"]["content"][0]["text"], "again");
}

#[tokio::test]
async fn server_to_client_requests_travel_on_the_stream() {
    let addr = start().await;
    let (mut stream, endpoint) = open_session(addr).await;
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{"roots":{}},"clientInfo":{"name":"c","version":"1"}}}"#;
    assert_eq!(post_json(addr, &endpoint, init).await, 202);
    stream.message().await;
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(post_json(addr, &endpoint, initialized).await, 202);

    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"roots","arguments":{}}}"#;
    assert_eq!(post_json(addr, &endpoint, call).await, 202);
    let ask = stream.message().await;
    assert_eq!(ask["method"], "roots/list");
    let answer =
        serde_json::json!({"jsonrpc":"2.0","id":ask["id"],"result":{"roots":[{"uri":"file:///tmp/x"}]}});
    assert_eq!(post_json(addr, &endpoint, &answer.to_string()).await, 202);
    let result = stream.message().await;
    assert_eq!(result["id"], 2);
    assert_eq!(result["result"]["content"][0]["text"], "file:///tmp/x");
}
