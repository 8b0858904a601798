//! The transport over real sockets (127.0.0.1, port 0): both eras, the hardening checks, and
//! every JSON-RPC body validated against the schema of its revision.

use std::time::Duration;

use mcp_server::{Args, Progress, Server, Tools};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[allow(dead_code)]
#[path = "support/raw_http.rs"]
mod support;

use support::{ONE, Reply, roundtrip};

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    text: String,
}

async fn echo(Args(EchoArgs { text }): Args<EchoArgs>) -> String {
    text
}

async fn slow_progress(progress: Progress) -> &'static str {
    for step in [1.0, 2.0] {
        progress.report(step, Some(2.0), None).await;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    "done"
}

async fn polled(stream: mcp_server::ResponseStream) -> &'static str {
    stream.close();
    tokio::time::sleep(Duration::from_millis(100)).await;
    "polled"
}

async fn start() -> std::net::SocketAddr {
    let server = Server::builder("http-test", "1")
        .tools(
            Tools::new()
                .add("echo", "Echo", echo)
                .add("progress", "Progress", slow_progress)
                .add("polled", "Polled", polled),
        )
        .build()
        .unwrap();
    let bound = mcp_http::bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = bound.local_addr();
    tokio::spawn(mcp_http::serve(server, bound, None));
    addr
}

/// One request on its own connection, read to the end.
async fn http(addr: std::net::SocketAddr, method: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    roundtrip(ONE, addr, method, headers, body).await
}

const JSON_HEADERS: [(&str, &str); 2] =
    [("content-type", "application/json"), ("accept", "application/json, text/event-stream")];

/// A legacy `initialize` (2025-11-25), answered with a session id.
async fn initialize_legacy(addr: std::net::SocketAddr) -> Reply {
    http(
        addr,
        "POST",
        &JSON_HEADERS,
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
    )
    .await
}

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

fn modern_headers<'a>(method: &'a str, name: Option<&'a str>) -> Vec<(&'a str, &'a str)> {
    let mut h = vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", method),
    ];
    if let Some(name) = name {
        h.push(("mcp-name", name));
    }
    h
}

#[tokio::test]
async fn modern_requests_answer_with_json_or_sse() {
    let addr = start().await;
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{{META},"name":"echo","arguments":{{"text":"hi"}}}}}}"#
    );
    let r = http(addr, "POST", &modern_headers("tools/call", Some("echo")), &body).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert!(r.header("mcp-session-id").is_none(), "no session ids in 2026-07-28");
    let v = r.json();
    mcp_testkit::assert_valid_message("2026-07-28", &v);
    assert_eq!(v["result"]["content"][0]["text"], "hi");

    let body = r#"{"jsonrpc":"2.0","id":"p","method":"tools/call","params":{"_meta":{"progressToken":"t","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"progress"}}"#;
    let r = http(addr, "POST", &modern_headers("tools/call", Some("progress")), body).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("text/event-stream"));
    assert_eq!(r.header("x-accel-buffering"), Some("no"));
    let events = r.events();
    for e in &events {
        mcp_testkit::assert_valid_message("2026-07-28", e);
    }
    assert_eq!(events.len(), 3, "{}", r.body);
    assert_eq!(events[0]["method"], "notifications/progress");
    assert_eq!(events[2]["id"], "p");
    assert_eq!(events[2]["result"]["content"][0]["text"], "done");

    let r = http(
        addr,
        "POST",
        &modern_headers("notifications/cancelled", None),
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}"#,
    )
    .await;
    assert_eq!(r.status, 202);
}

#[tokio::test]
async fn modern_validation_statuses_and_codes() {
    let addr = start().await;
    let call = |name: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{{META},"name":"{name}","arguments":{{"text":"x"}}}}}}"#
        )
    };
    // Missing _meta: 400 -32602 (checked before the headers).
    let r = http(
        addr,
        "POST",
        &modern_headers("tools/list", None),
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{}}}"#,
    )
    .await;
    assert_eq!((r.status, r.json()["error"]["code"].clone()), (400, json!(-32602)));
    // Header and body disagree: 400 -32020.
    let r = http(addr, "POST", &modern_headers("tools/call", Some("other")), &call("echo")).await;
    assert_eq!((r.status, r.json()["error"]["code"].clone()), (400, json!(-32020)));
    mcp_testkit::assert_valid("2026-07-28", "HeaderMismatchError", &r.json());
    let r = http(addr, "POST", &modern_headers("tools/list", None), &call("echo")).await;
    assert_eq!(r.json()["error"]["code"], -32020, "Mcp-Method must match");
    let mut no_version = modern_headers("tools/call", Some("echo"));
    no_version.retain(|(k, _)| *k != "mcp-protocol-version");
    let r = http(addr, "POST", &no_version, &call("echo")).await;
    assert_eq!((r.status, r.json()["error"]["code"].clone()), (400, json!(-32020)));
    // Unsupported version: 400 -32022.
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"v9","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let mut h = modern_headers("tools/list", None);
    h[2] = ("mcp-protocol-version", "v9");
    let r = http(addr, "POST", &h, body).await;
    assert_eq!((r.status, r.json()["error"]["code"].clone()), (400, json!(-32022)));
    // A method 2026-07-28 removed: 404 -32601.
    let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{{META}}}}}"#);
    let r = http(addr, "POST", &modern_headers("ping", None), &body).await;
    assert_eq!((r.status, r.json()["error"]["code"].clone()), (404, json!(-32601)));
    // Unknown tool: after dispatch, 200 with -32602.
    let r = http(addr, "POST", &modern_headers("tools/call", Some("nope")), &call("nope")).await;
    assert_eq!((r.status, r.json()["error"]["code"].clone()), (200, json!(-32602)));
}

#[tokio::test]
async fn hardening_refuses_before_any_work() {
    let addr = start().await;
    let body = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{META}}}}}"#);
    let mut h = modern_headers("tools/list", None);
    h.push(("host", "evil.example.com"));
    assert_eq!(http(addr, "POST", &h, &body).await.status, 403, "DNS rebinding");
    let mut h = modern_headers("tools/list", None);
    h.push(("origin", "http://evil.example.com"));
    assert_eq!(http(addr, "POST", &h, &body).await.status, 403, "cross-site");
    let mut h = modern_headers("tools/list", None);
    h[0] = ("content-type", "text/plain");
    assert_eq!(http(addr, "POST", &h, &body).await.status, 415);
    let mut h = modern_headers("tools/list", None);
    h[1] = ("accept", "text/html");
    assert_eq!(http(addr, "POST", &h, &body).await.status, 406);
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{"pad":"{}"}}}}"#,
        "a".repeat(5 << 20)
    );
    assert_eq!(http(addr, "POST", &modern_headers("tools/list", None), &big).await.status, 413);
    assert_eq!(http(addr, "PUT", &modern_headers("tools/list", None), &body).await.status, 405);
    let r = http(addr, "POST", &modern_headers("tools/list", None), "{not json").await;
    assert_eq!((r.status, r.json()["error"]["code"].clone()), (400, json!(-32700)));
    let mut h = modern_headers("tools/list", None);
    let origin = format!("http://localhost:{}", addr.port());
    h.push(("origin", &origin));
    assert_eq!(http(addr, "POST", &h, &body).await.status, 200, "same-origin is fine");
}

#[tokio::test]
async fn legacy_sessions_live_until_deleted() {
    let addr = start().await;
    let json_headers = JSON_HEADERS;
    let r = initialize_legacy(addr).await;
    assert_eq!(r.status, 200);
    mcp_testkit::assert_valid_message("2025-11-25", &r.json());
    let session = r.header("mcp-session-id").expect("a session id").to_owned();
    assert!(session.len() >= 22 && session.bytes().all(|b| (0x21..=0x7e).contains(&b)));
    let with_session = |extra: &[(&'static str, &'static str)]| {
        let mut h: Vec<(&str, &str)> = json_headers.to_vec();
        h.extend_from_slice(extra);
        h
    };
    let mut h = with_session(&[("mcp-protocol-version", "2025-11-25")]);
    h.push(("mcp-session-id", &session));
    let r = http(addr, "POST", &h, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    assert_eq!(r.status, 202);
    let r = http(addr, "POST", &h, r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"legacy"}}}"#).await;
    let v = r.json();
    mcp_testkit::assert_valid_message("2025-11-25", &v);
    assert_eq!(v["result"]["content"][0]["text"], "legacy");
    assert!(v["result"].get("resultType").is_none());
    // An unknown protocol version inside a session is refused.
    let mut bad = with_session(&[("mcp-protocol-version", "1999-01-01")]);
    bad.push(("mcp-session-id", &session));
    let r = http(addr, "POST", &bad, r#"{"jsonrpc":"2.0","id":9,"method":"tools/list"}"#).await;
    assert_eq!(r.status, 400);
    // Without a session id, a legacy request has nowhere to go.
    let r = http(addr, "POST", &json_headers, r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#).await;
    assert_eq!(r.status, 400);
    // DELETE ends the session; afterwards it is unknown (404).
    assert_eq!(http(addr, "DELETE", &[("mcp-session-id", &session)], "").await.status, 200);
    let r = http(addr, "POST", &h, r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#).await;
    assert_eq!(r.status, 404);
    assert_eq!(http(addr, "DELETE", &[("mcp-session-id", &session)], "").await.status, 404);
    // No GET stream on the modern wire.
    assert_eq!(http(addr, "GET", &[("accept", "text/event-stream")], "").await.status, 405);
}

#[tokio::test]
async fn legacy_streams_resume_with_last_event_id() {
    let addr = start().await;
    let json_headers = JSON_HEADERS;
    let r = initialize_legacy(addr).await;
    let session = r.header("mcp-session-id").unwrap().to_owned();
    let mut h: Vec<(&str, &str)> = json_headers.to_vec();
    h.push(("mcp-session-id", &session));
    // The tool ends its response stream at once: the POST answer holds only the priming event.
    let r = http(
        addr,
        "POST",
        &h,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"polled"}}"#,
    )
    .await;
    assert_eq!(r.header("content-type"), Some("text/event-stream"));
    let id = r.body.lines().find_map(|l| l.strip_prefix("id: ")).expect("a priming event id").to_owned();
    assert!(r.body.contains("retry: "), "{}", r.body);
    assert!(r.events().iter().all(|e| e.get("id").is_none()), "no result on the closed stream");
    // The client reconnects with GET + Last-Event-ID and receives the result there.
    let get = [
        ("accept", "text/event-stream"),
        ("mcp-session-id", session.as_str()),
        ("last-event-id", id.as_str()),
    ];
    let r = http(addr, "GET", &get, "").await;
    let events = r.events();
    assert_eq!(events.len(), 1, "{}", r.body);
    mcp_testkit::assert_valid_message("2025-11-25", &events[0]);
    assert_eq!(events[0]["id"], 1);
    assert_eq!(events[0]["result"]["content"][0]["text"], "polled");
    // Another session cannot resume it.
    let other = [("accept", "text/event-stream"), ("mcp-session-id", "nope"), ("last-event-id", id.as_str())];
    assert_eq!(http(addr, "GET", &other, "").await.status, 404);
}

#[tokio::test]
async fn legacy_get_streams_carry_keep_alives_and_end_with_their_session() {
    let server =
        Server::builder("http-test", "1").tools(Tools::new().add("echo", "Echo", echo)).build().unwrap();
    let bound = mcp_http::bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = bound.local_addr();
    let config = mcp_http::HttpConfig::default().keep_alive(Duration::from_millis(50));
    tokio::spawn(mcp_http::serve(server, bound, Some(config)));
    let r = initialize_legacy(addr).await;
    let session = r.header("mcp-session-id").expect("a session id").to_owned();
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "GET /mcp HTTP/1.1\r\nhost: 127.0.0.1:{}\r\naccept: text/event-stream\r\nmcp-protocol-version: 2025-11-25\r\nmcp-session-id: {session}\r\n\r\n",
        addr.port()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 1024];
    while !String::from_utf8_lossy(&seen).contains(": keep-alive\n\n") {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf))
            .await
            .expect("no keep-alive on the GET stream")
            .unwrap();
        assert!(n > 0, "the GET stream ended early: {}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buf[..n]);
    }
    assert!(String::from_utf8_lossy(&seen).starts_with("HTTP/1.1 200"));
    // Ending the session ends its stream: the chunked body is terminated.
    assert_eq!(http(addr, "DELETE", &[("mcp-session-id", &session)], "").await.status, 200);
    while !String::from_utf8_lossy(&seen).ends_with("\r\n0\r\n\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf))
            .await
            .expect("the GET stream outlived its session")
            .unwrap();
        assert!(n > 0, "connection closed without ending the body");
        seen.extend_from_slice(&buf[..n]);
    }
}

/// `serve_until` on a free port with `tools`, until the returned sender fires (or drops).
async fn serve_until_stopped(
    tools: Tools,
    grace: Duration,
) -> (std::net::SocketAddr, tokio::sync::oneshot::Sender<()>, tokio::task::JoinHandle<std::io::Result<()>>) {
    let server = Server::builder("http-test", "1").tools(tools).build().unwrap();
    let bound = mcp_http::bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = bound.local_addr();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let shutdown = async move {
        let _ = stopped.await;
    };
    (addr, stop, tokio::spawn(mcp_http::serve_until(server, bound, None, shutdown, grace)))
}

/// Told when `slow` starts (one test uses it).
static SLOW_STARTED: tokio::sync::Notify = tokio::sync::Notify::const_new();

async fn slow(Args(EchoArgs { text }): Args<EchoArgs>) -> String {
    SLOW_STARTED.notify_one();
    tokio::time::sleep(Duration::from_millis(300)).await;
    text
}

#[tokio::test]
async fn graceful_shutdown_finishes_requests_in_flight_and_refuses_new_connections() {
    let (addr, stop, serving) =
        serve_until_stopped(Tools::new().add("slow", "Slow", slow), Duration::from_secs(30)).await;
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{{META},"name":"slow","arguments":{{"text":"finished"}}}}}}"#
    );
    let in_flight =
        tokio::spawn(
            async move { http(addr, "POST", &modern_headers("tools/call", Some("slow")), &body).await },
        );
    // Shut down while the call runs (the tool says it started, then sleeps 300 ms).
    tokio::time::timeout(Duration::from_secs(30), SLOW_STARTED.notified()).await.expect("the call runs");
    stop.send(()).unwrap();
    let reply =
        tokio::time::timeout(Duration::from_secs(30), in_flight).await.expect("the call hung").unwrap();
    assert_eq!(reply.status, 200);
    let answer = if reply.header("content-type").is_some_and(|t| t.starts_with("text/event-stream")) {
        reply.events().pop().unwrap()
    } else {
        reply.json()
    };
    assert_eq!(answer["result"]["content"][0]["text"], "finished", "{answer}");
    tokio::time::timeout(Duration::from_secs(30), serving)
        .await
        .expect("serve_until did not return")
        .unwrap()
        .unwrap();
    // The listener is gone.
    assert!(TcpStream::connect(addr).await.is_err());
}

#[tokio::test]
async fn graceful_shutdown_cuts_long_lived_streams_after_the_grace_period() {
    let (addr, stop, serving) =
        serve_until_stopped(Tools::new().add("echo", "Echo", echo), Duration::from_millis(200)).await;
    let r = initialize_legacy(addr).await;
    let session = r.header("mcp-session-id").expect("a session id").to_owned();
    // A GET stream stays open until the session ends.
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "GET /mcp HTTP/1.1\r\nhost: 127.0.0.1:{}\r\naccept: text/event-stream\r\nmcp-protocol-version: 2025-11-25\r\nmcp-session-id: {session}\r\n\r\n",
        addr.port()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut buf = [0u8; 256];
    let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf)).await.unwrap().unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(30), serving)
        .await
        .expect("serve_until did not return")
        .unwrap()
        .unwrap();
    // The stream was cut: reading reaches the end.
    let mut rest = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut rest))
        .await
        .expect("the stream outlived the server")
        .ok();
}
