//! Replay data (the recorded events of resumable legacy streams) is held within a byte budget:
//! many large answers evict the oldest, a resumption from an evicted event is refused with
//! `410 Gone`, and the newest stream still resumes.

use std::net::SocketAddr;
use std::sync::Arc;

use mcp_http::{EventStore, HttpConfig, McpHttp, MemoryEventStore};
use mcp_server::{Args, Server, Tools};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::support::{ONE, roundtrip};

#[derive(Deserialize, JsonSchema)]
struct BigArgs {
    size: usize,
}

async fn big(Args(BigArgs { size }): Args<BigArgs>) -> String {
    "x".repeat(size)
}

const MIB: usize = 1024 * 1024;
const BUDGET: usize = 4 * MIB;

/// The resident set of this process, from `/proc/self/status` (None where there is none).
fn rss() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[tokio::test]
async fn replay_data_stays_within_its_byte_budget_and_evicted_streams_are_gone() {
    let server = Server::builder("replay", "1").tools(Tools::new().add("big", "Big", big)).build().unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let store = Arc::new(MemoryEventStore::default().with_max_bytes(BUDGET));
    let shared: Arc<dyn EventStore> = store.clone();
    let router = McpHttp::with_event_store(server, HttpConfig::for_bind(addr), shared).router();
    let serving = tokio::spawn(async move {
        axum::serve(listener, router.into_make_service_with_connect_info::<SocketAddr>()).await
    });

    let json = [("content-type", "application/json"), ("accept", "application/json, text/event-stream")];
    let init = roundtrip(
        ONE,
        addr,
        "POST",
        &json,
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
    )
    .await;
    let session = init.header("mcp-session-id").expect("a session id").to_owned();
    let sse = [
        ("content-type", "application/json"),
        ("accept", "text/event-stream"),
        ("mcp-session-id", session.as_str()),
    ];
    let before = rss();
    let mut primings = Vec::new();
    // 64 answers of 1 MiB each, every one recorded for replay: 16 times the budget.
    for id in 1..=64 {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"big","arguments":{{"size":{MIB}}}}}}}"#
        );
        let reply = roundtrip(ONE, addr, "POST", &sse, &body).await;
        assert_eq!(reply.status, 200);
        assert_eq!(reply.json()["result"]["content"][0]["text"].as_str().map(str::len), Some(MIB));
        let priming = reply.body.lines().find_map(|l| l.strip_prefix("id: ")).expect("a priming id");
        primings.push(priming.to_owned());
        let held = store.retained_bytes();
        assert!(held <= BUDGET, "after answer {id}: {held} bytes held, over the budget of {BUDGET}");
    }
    if let (Some(before), Some(after)) = (before, rss()) {
        // A sanity bound only (allocators keep freed memory): without the budget the store
        // alone held 64 MiB.
        let grown = after.saturating_sub(before);
        assert!(grown < 48 * MIB, "the process grew by {} MiB", grown / MIB);
    }

    let resume = |last: &str| {
        let last = last.to_owned();
        let session = session.clone();
        async move {
            let get = [
                ("accept", "text/event-stream"),
                ("mcp-session-id", session.as_str()),
                ("last-event-id", last.as_str()),
            ];
            roundtrip(ONE, addr, "GET", &get, "").await
        }
    };
    // The oldest stream was evicted: resuming it is refused, not answered with nothing.
    let gone = resume(&primings[0]).await;
    assert_eq!(gone.status, 410, "{}", gone.body);
    // The newest one is still there, whole.
    let kept = resume(primings.last().unwrap()).await;
    assert_eq!(kept.status, 200, "{}", kept.body);
    assert_eq!(kept.json()["id"], 64);
    assert_eq!(kept.json()["result"]["content"][0]["text"].as_str().map(str::len), Some(MIB));
    serving.abort();
}
