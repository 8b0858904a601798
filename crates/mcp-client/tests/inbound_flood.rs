//! A server that sends a flood of notifications before its answer, over a real child process
//! (stdio) and a real HTTP server (127.0.0.1, port 0): the call completes, and the memory the
//! client holds meanwhile does not grow with the flood (the transports wait for room in a
//! bounded inbound channel, holding the server back through the pipe or the TCP window). The
//! measure is this process's peak resident set (`VmHWM` of /proc/self/status, reset before
//! each flood); the two floods run one after the other so that neither sees the other's peak.
#![cfg(all(feature = "stdio", feature = "http"))]

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::response::Response;
use mcp_client::transport::http::HttpConfig;
use mcp_client::transport::stdio::StdioCommand;
use mcp_client::{Client, ClientBuilder, EraCache};
use mcp_types::ProtocolVersion;
use serde_json::{Value, json};

/// How many notifications come before the answer: an unbounded queue holds most of them
/// (some 60–120 MiB at this size), a bounded one a few dozen.
const FLOOD: usize = 200_000;
/// How much the peak resident set may grow during a flood.
const BOUND: u64 = 32 * 1024 * 1024;

/// Floods must not overlap: each measures the whole process.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// One notification of some 330 bytes (log data of 60 numbers: the client decodes it into values).
fn notification() -> String {
    json!({"jsonrpc": "2.0", "method": "notifications/message",
        "params": {"level": "info", "data": vec![1000; 60]}})
    .to_string()
}

fn answer(id: &Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": {"resultType": "complete", "content": []}}).to_string()
}

/// A line of /proc/self/status, in bytes.
fn status_bytes(key: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with(key)).unwrap_or_else(|| panic!("no {key}"));
    let kib: u64 = line[key.len()..].trim().trim_end_matches("kB").trim().parse().unwrap();
    kib * 1024
}

/// Runs the call of `client` and returns how far the peak resident set rose above the
/// resident set before it.
async fn peak_growth(client: &Client) -> u64 {
    // Resets VmHWM to the current resident set (Linux ≥ 4.0).
    std::fs::write("/proc/self/clear_refs", "5").unwrap();
    let before = status_bytes("VmRSS:");
    let started = std::time::Instant::now();
    let call = client.call_tool("flood", json!({}));
    let result = tokio::time::timeout(Duration::from_secs(120), call).await.expect("the call hung").unwrap();
    assert!(result.content.is_empty());
    let growth = status_bytes("VmHWM:").saturating_sub(before);
    eprintln!("{FLOOD} notifications in {:?}; peak resident set +{} KiB", started.elapsed(), growth >> 10);
    growth
}

fn builder() -> ClientBuilder {
    ClientBuilder::new("flood-test", "1")
        .era_cache(EraCache::new())
        .pin_version(ProtocolVersion::V2026_07_28)
        .discover_on_connect(false)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_notifications_from_a_child_process_is_held_back_not_queued() {
    let _alone = ONE_AT_A_TIME.lock().await;
    // The first request is the call (id 1): the flood, then its answer.
    let script = format!(
        "read line; yes '{}' | head -n {FLOOD}; printf '%s\\n' '{}'; exec cat >/dev/null",
        notification(),
        answer(&json!(1))
    );
    let client = builder().connect_stdio(StdioCommand::new("sh").arg("-c").arg(script)).await.unwrap();
    let growth = peak_growth(&client).await;
    client.close().await;
    assert!(growth < BOUND, "the peak resident set grew by {} MiB", growth >> 20);
}

/// An SSE body of `FLOOD` notifications then the answer to `id`, made as it is sent (the
/// server's own memory stays small too).
struct Flood {
    left: usize,
    id: Value,
    answered: bool,
}

impl futures_core::Stream for Flood {
    type Item = Result<Bytes, std::io::Error>;

    fn poll_next(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.left > 0 {
            let n = self.left.min(64);
            self.left -= n;
            let event = format!("data: {}\n\n", notification());
            return Poll::Ready(Some(Ok(Bytes::from(event.repeat(n)))));
        }
        if self.answered {
            return Poll::Ready(None);
        }
        self.answered = true;
        Poll::Ready(Some(Ok(Bytes::from(format!("data: {}\n\n", answer(&self.id))))))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_notifications_on_an_sse_answer_is_held_back_not_queued() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let app = axum::Router::new().fallback(|body: Bytes| async move {
        let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let id = message["id"].clone();
        let response = Response::builder();
        match message["method"].as_str() {
            Some("tools/list") => response.header("content-type", "application/json").body(Body::from(
                json!({"jsonrpc": "2.0", "id": id, "result": {"resultType": "complete", "tools": []}})
                    .to_string(),
            )),
            Some(_) if !id.is_null() => response
                .header("content-type", "text/event-stream")
                .body(Body::from_stream(Flood { left: FLOOD, id, answered: false })),
            _ => response.status(202).body(Body::empty()),
        }
        .unwrap()
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let client = builder().connect_http(HttpConfig::new(url)).await.unwrap();
    let growth = peak_growth(&client).await;
    client.close().await;
    server.abort();
    assert!(growth < BOUND, "the peak resident set grew by {} MiB", growth >> 20);
}
