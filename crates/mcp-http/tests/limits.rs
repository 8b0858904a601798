//! The limits that keep a stalled or greedy client from holding the server: requests in
//! flight and connections (503 + Retry-After), body and header read timeouts, long-lived
//! streams with a budget of their own, capped legacy sessions and replay data.

#[path = "limits/replay.rs"]
mod replay;
#[path = "limits/sessions.rs"]
mod sessions;
#[path = "limits/streams.rs"]
mod streams;
#[path = "limits/support.rs"]
mod support;

use std::time::Duration;

use mcp_http::HttpConfig;
use mcp_server::{Server, Tools};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn sleepy() -> &'static str {
    tokio::time::sleep(Duration::from_millis(800)).await;
    "slept"
}

async fn start(tune: impl FnOnce(&mut HttpConfig)) -> std::net::SocketAddr {
    let server =
        Server::builder("limits", "1").tools(Tools::new().add("sleepy", "Sleeps", sleepy)).build().unwrap();
    let bound = mcp_http::bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = bound.local_addr();
    let mut config = HttpConfig::for_bind(addr);
    tune(&mut config);
    tokio::spawn(mcp_http::serve(server, bound, Some(config)));
    addr
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
    let addr = start(|c| c.max_in_flight = 1).await;
    let request = post(addr, CALL, CALL.len());
    let first = tokio::spawn(async move { exchange(addr, &request).await });
    tokio::time::sleep(Duration::from_millis(200)).await;
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
