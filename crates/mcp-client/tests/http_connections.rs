//! The client's own HTTP/1.1 connections to a plain `http://` server, against a server written
//! here at the level of bytes (127.0.0.1, port 0) so that what happens to each TCP connection
//! can be counted and controlled: calls share one keep-alive connection; a connection the
//! server closed while idle is not used again; same-origin `307`/`308` redirects are followed
//! with the method and the body, others are not; an answer cut off mid-body is an error whose
//! outcome is unknown, and the request is not sent twice.
#![cfg(feature = "http")]

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::transport::http::HttpConfig;
use mcp_client::{ClientBuilder, ClientError, EraCache, Outcome};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

async fn bounded<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(30), f).await.unwrap_or_else(|_| panic!("{what} hung"))
}

fn builder() -> ClientBuilder {
    ClientBuilder::new("http-connections-test", "1").era_cache(EraCache::new())
}

/// A request as the server saw it: its method, its path, its JSON body and its head as sent.
type Seen = (String, String, Value, String);

/// What the server does besides answering.
#[derive(Clone, Copy, PartialEq)]
enum Behaviour {
    /// Keeps every connection open.
    KeepAlive,
    /// Closes a connection 50 ms after each answer (without saying so in the answer).
    CloseWhenIdle,
    /// Answers a POST to `/mcp` with `307` to `/moved`, and serves `/moved`.
    Redirect,
    /// Answers a POST to `/mcp` with `307` to the same path on another port.
    RedirectElsewhere,
    /// Answers a `tools/call` with a head promising 1,000 bytes, sends 10 and closes.
    CutOff,
}

struct Server {
    addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
    /// Every request, in order.
    seen: Arc<Mutex<Vec<Seen>>>,
    task: JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Server {
    fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }

    fn calls(&self) -> Vec<(String, Value)> {
        let seen = self.seen.lock().unwrap();
        seen.iter()
            .filter(|(_, _, body, _)| body["method"] == "tools/call")
            .map(|(_, path, body, _)| (path.clone(), body.clone()))
            .collect()
    }

    /// The heads of the `tools/call` requests, lower-cased.
    fn call_heads(&self) -> Vec<String> {
        let seen = self.seen.lock().unwrap();
        seen.iter()
            .filter(|(_, _, body, _)| body["method"] == "tools/call")
            .map(|(_, _, _, head)| head.to_ascii_lowercase())
            .collect()
    }
}

async fn server(behaviour: Behaviour) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let (counter, recorder) = (accepted.clone(), seen.clone());
    let task = tokio::spawn(async move {
        let mut connections = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            connections.push(tokio::spawn(connection(stream, behaviour, recorder.clone())));
        }
    });
    Server { addr, accepted, seen, task }
}

/// Serves one connection: requests one after another until the client closes it.
async fn connection(mut stream: TcpStream, behaviour: Behaviour, seen: Arc<Mutex<Vec<Seen>>>) {
    let mut buffer = Vec::new();
    loop {
        // The head.
        let end = loop {
            if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
                break at + 4;
            }
            let mut chunk = [0u8; 4096];
            match tokio::time::timeout(Duration::from_millis(50), stream.read(&mut chunk)).await {
                Ok(Ok(0)) | Ok(Err(_)) => return,
                Ok(Ok(n)) => buffer.extend_from_slice(&chunk[..n]),
                // Idle: a server that closes idle connections does it now.
                Err(_) if behaviour == Behaviour::CloseWhenIdle && buffer.is_empty() => return,
                Err(_) => {}
            }
        };
        let head = String::from_utf8_lossy(&buffer[..end]).into_owned();
        let mut words = head.split_whitespace();
        let (method, path) = (words.next().unwrap_or("").to_owned(), words.next().unwrap_or("").to_owned());
        let length: usize = head
            .lines()
            .find_map(|line| {
                let (name, value) = line.split_once(':')?;
                name.eq_ignore_ascii_case("content-length").then(|| value.trim().parse().ok())?
            })
            .unwrap_or(0);
        while buffer.len() < end + length {
            let mut chunk = [0u8; 4096];
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            }
        }
        let body: Value = serde_json::from_slice(&buffer[end..end + length]).unwrap_or(Value::Null);
        buffer.drain(..end + length);
        seen.lock().unwrap().push((method.clone(), path.clone(), body.clone(), head.clone()));

        let redirect = match behaviour {
            Behaviour::Redirect if path == "/mcp" && method == "POST" => Some("/moved".to_owned()),
            Behaviour::RedirectElsewhere if method == "POST" && body["method"] == "tools/call" => {
                Some("http://127.0.0.1:9/mcp".to_owned())
            }
            _ => None,
        };
        let answer = if let Some(location) = redirect {
            format!("HTTP/1.1 307 Temporary Redirect\r\nlocation: {location}\r\ncontent-length: 0\r\n\r\n")
        } else if behaviour == Behaviour::CutOff && body["method"] == "tools/call" {
            let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n";
            let _ = stream.write_all(format!("{head}{{\"jsonrpc\"").as_bytes()).await;
            return;
        } else {
            mcp_answer(&method, &body)
        };
        if stream.write_all(answer.as_bytes()).await.is_err() {
            return;
        }
    }
}

/// A modern (2026-07-28) server with one tool, `echo`, that answers `quick`.
fn mcp_answer(method: &str, message: &Value) -> String {
    let reply = |status: &str, content_type: &str, body: String| {
        format!(
            "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
    };
    let result = |result: Value| {
        let body = json!({"jsonrpc": "2.0", "id": message["id"], "result": result});
        reply("200 OK", "application/json", body.to_string())
    };
    if method != "POST" {
        return reply("405 Method Not Allowed", "text/plain", String::new());
    }
    match message["method"].as_str() {
        Some("server/discover") => {
            result(json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}}, "serverInfo": {"name": "raw", "version": "1"},
            "ttlMs": 0, "cacheScope": "public"}))
        }
        Some("tools/list") => result(json!({"resultType": "complete", "tools": [
            {"name": "echo", "inputSchema": {"type": "object"}}]})),
        Some("tools/call") => {
            result(json!({"resultType": "complete", "content": [{"type": "text", "text": "quick"}]}))
        }
        _ if message.get("id").is_none() => reply("202 Accepted", "text/plain", String::new()),
        _ => reply("400 Bad Request", "text/plain", String::new()),
    }
}

fn text(result: &mcp_types::CallToolResult) -> String {
    serde_json::to_value(&result.content).unwrap()[0]["text"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn calls_one_after_another_share_one_connection() {
    let server = server(Behaviour::KeepAlive).await;
    let url = format!("http://{}/mcp", server.addr);
    let client = bounded("connect", builder().connect_http(HttpConfig::new(&url))).await.unwrap();
    for i in 0..50 {
        let result = bounded("call", client.call_tool("echo", json!({"i": i}))).await.unwrap();
        assert_eq!(text(&result), "quick");
    }
    assert_eq!(server.calls().len(), 50);
    assert_eq!(server.accepted(), 1, "the handshake and 50 calls on one keep-alive connection");

    // Calls at once take a connection each, and those connections are kept for later.
    let calls = (0..8).map(|i| client.call_tool("echo", json!({"at once": i})));
    for result in bounded("concurrent calls", futures_join(calls)).await {
        assert_eq!(text(&result.unwrap()), "quick");
    }
    let after_burst = server.accepted();
    assert!((2..=8).contains(&after_burst), "{after_burst} connections for 8 calls at once");
    for _ in 0..20 {
        bounded("call", client.call_tool("echo", json!({}))).await.unwrap();
    }
    assert_eq!(server.accepted(), after_burst, "later calls reuse the pooled connections");
    client.close().await;
}

#[tokio::test]
async fn a_connection_the_server_closed_while_idle_is_not_used_again() {
    let server = server(Behaviour::CloseWhenIdle).await;
    let url = format!("http://{}/mcp", server.addr);
    let client = bounded("connect", builder().connect_http(HttpConfig::new(&url))).await.unwrap();
    for i in 0..5 {
        // Long enough for the server to have closed the connection the last call used.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let result = bounded("call", client.call_tool("echo", json!({"i": i}))).await;
        assert_eq!(text(&result.unwrap_or_else(|e| panic!("call {i}: {e}"))), "quick");
    }
    assert_eq!(server.calls().len(), 5, "each call sent once");
    assert!(server.accepted() >= 5, "a new connection for each call: {}", server.accepted());
    client.close().await;
}

#[tokio::test]
async fn a_same_origin_307_is_followed_with_its_method_and_body() {
    let server = server(Behaviour::Redirect).await;
    let url = format!("http://{}/mcp", server.addr);
    let client = bounded("connect", builder().connect_http(HttpConfig::new(&url))).await.unwrap();
    let result = bounded("call", client.call_tool("echo", json!({"x": "y"}))).await.unwrap();
    assert_eq!(text(&result), "quick");
    let calls = server.calls();
    let paths: Vec<&str> = calls.iter().map(|(path, _)| path.as_str()).collect();
    assert_eq!(paths, ["/mcp", "/moved"], "sent to the first URL, then where it was sent on");
    assert_eq!(calls[0].1, calls[1].1, "the same body both times");
    assert_eq!(calls[1].1["params"]["arguments"], json!({"x": "y"}));
    client.close().await;
}

#[tokio::test]
async fn the_configured_headers_go_with_every_request_each_value_once_through_a_redirect_too() {
    let server = server(Behaviour::Redirect).await;
    let url = format!("http://{}/mcp", server.addr);
    let mut config = HttpConfig::new(&url).header(
        reqwest::header::HeaderName::from_static("x-team"),
        reqwest::header::HeaderValue::from_static("blue"),
    );
    // Two values of one name, as a map can hold them: both are sent, each once.
    config.headers.append("x-tag", reqwest::header::HeaderValue::from_static("one"));
    config.headers.append("x-tag", reqwest::header::HeaderValue::from_static("two"));
    let client = bounded("connect", builder().connect_http(config)).await.unwrap();
    for i in 0..3 {
        let result = bounded("call", client.call_tool("echo", json!({"i": i}))).await.unwrap();
        assert_eq!(text(&result), "quick");
    }
    let heads = server.call_heads();
    // Each call is sent to /mcp, answered 307, and sent again to /moved.
    assert_eq!(heads.len(), 6, "{heads:?}");
    for head in &heads {
        let count = |line: &str| head.lines().filter(|l| l.trim() == line).count();
        assert_eq!(count("x-team: blue"), 1, "{head}");
        assert_eq!(count("x-tag: one"), 1, "{head}");
        assert_eq!(count("x-tag: two"), 1, "{head}");
        assert_eq!(head.lines().filter(|l| l.starts_with("host:")).count(), 1, "{head}");
        assert_eq!(head.lines().filter(|l| l.starts_with("user-agent:")).count(), 1, "{head}");
    }
    client.close().await;
}

#[tokio::test]
async fn a_307_to_another_origin_is_not_followed() {
    let server = server(Behaviour::RedirectElsewhere).await;
    let url = format!("http://{}/mcp", server.addr);
    let client = bounded("connect", builder().connect_http(HttpConfig::new(&url))).await.unwrap();
    let error = bounded("call", client.call_tool("echo", json!({}))).await.unwrap_err();
    assert!(error.to_string().contains("307"), "the redirect is the answer: {error}");
    assert_eq!(server.calls().len(), 1);
    client.close().await;
}

#[tokio::test]
async fn an_answer_cut_off_mid_body_fails_with_an_unknown_outcome_and_is_not_sent_again() {
    let server = server(Behaviour::CutOff).await;
    let url = format!("http://{}/mcp", server.addr);
    let client = bounded("connect", builder().connect_http(HttpConfig::new(&url))).await.unwrap();
    let error = bounded("call", client.call_tool("echo", json!({}))).await.unwrap_err();
    match &error {
        ClientError::Transport { outcome, .. } => assert_eq!(*outcome, Outcome::Unknown, "{error}"),
        other => panic!("expected a transport error, got {other:?}"),
    }
    assert_eq!(server.calls().len(), 1, "the call went out once");
    // The client still works (on a new connection).
    let before = server.accepted();
    let _ = bounded("next call", client.call_tool("echo", json!({}))).await;
    assert_eq!(server.accepted(), before + 1, "the broken connection was not reused");
    client.close().await;
}

/// Runs futures at once and returns their outputs in order.
async fn futures_join<F: std::future::Future>(futures: impl Iterator<Item = F>) -> Vec<F::Output> {
    let futures: Vec<_> = futures.map(Box::pin).collect();
    let mut outputs: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    let mut futures: Vec<Option<_>> = futures.into_iter().map(Some).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (slot, output) in futures.iter_mut().zip(outputs.iter_mut()) {
            if let Some(future) = slot {
                match future.as_mut().poll(cx) {
                    std::task::Poll::Ready(value) => {
                        *output = Some(value);
                        *slot = None;
                    }
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending { std::task::Poll::Pending } else { std::task::Poll::Ready(()) }
    })
    .await;
    outputs.into_iter().map(|o| o.unwrap()).collect()
}
