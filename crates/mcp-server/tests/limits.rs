//! The server's time and concurrency limits (docs/DECISIONS.md, default limits): a tool past
//! `tool_timeout` is a tool error and is cancelled; a legacy server→client request unanswered
//! past `peer_request_timeout` is abandoned; a stdio connection runs at most `max_in_flight`
//! requests at once and reads the rest as slots free up.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use mcp_server::{Server, ServerConfig, State, Tools};
use serde_json::json;
use support::*;
use tokio::sync::Semaphore;

struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

async fn forever(State(dropped): State<Arc<AtomicBool>>) -> &'static str {
    let _guard = DropFlag(dropped);
    std::future::pending::<()>().await;
    "never"
}

#[tokio::test]
async fn a_tool_past_its_timeout_is_a_tool_error_and_its_handler_is_dropped() {
    let dropped = Arc::new(AtomicBool::new(false));
    let config = ServerConfig::default().with_tool_timeout(Duration::from_millis(200));
    let server = Server::builder("limits", "1")
        .config(config)
        .state(dropped.clone())
        .tools(Tools::new().add("forever", "Never finishes", forever))
        .build()
        .unwrap();
    let mut peer = Peer::start(server);
    let answer =
        peer.request(json!(1), "tools/call", json!({"name": "forever", "_meta": meta(json!({}))})).await;
    let result = &answer["result"];
    assert_eq!(result["isError"], true, "{answer}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("forever") && text.contains("timed out after 200 ms"), "{text}");
    assert!(dropped.load(Ordering::SeqCst), "the timed-out handler was not dropped");
    peer.close().await;
}

async fn ask_roots(peer: mcp_server::Peer) -> String {
    match peer.roots("roots").await {
        Ok(roots) => format!("{} roots", roots.roots.len()),
        Err(e) => format!("no roots: {e}"),
    }
}

#[tokio::test]
async fn an_unanswered_legacy_request_to_the_client_is_abandoned_after_its_timeout() {
    let config = ServerConfig::default().with_peer_request_timeout(Duration::from_millis(300));
    let server = Server::builder("limits", "1")
        .config(config)
        .tools(Tools::new().add("ask_roots", "Asks the client for its roots", ask_roots))
        .build()
        .unwrap();
    let mut peer = Peer::start(server);
    peer.initialize(json!({"roots": {}})).await;
    peer.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ask_roots"}}))
        .await;
    let question = peer.recv().await;
    assert_eq!(question["method"], "roots/list", "{question}");
    // The client never answers: the tool gets its error once the timeout passes.
    let answer = peer.recv().await;
    assert_eq!(answer["id"], 1, "{answer}");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(text, "no roots: the client did not answer within 300 ms");
    // A late answer is discarded, and the session keeps serving.
    peer.send(json!({"jsonrpc": "2.0", "id": question["id"], "result": {"roots": []}})).await;
    let ping = peer.request(json!(2), "ping", json!({})).await;
    assert_eq!(ping["id"], 2, "{ping}");
    peer.close().await;
}

#[derive(Clone)]
struct Gate {
    open: Arc<Semaphore>,
    running: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
}

async fn gated(State(gate): State<Gate>) -> &'static str {
    let now = gate.running.fetch_add(1, Ordering::SeqCst) + 1;
    gate.most.fetch_max(now, Ordering::SeqCst);
    gate.open.acquire().await.unwrap().forget();
    gate.running.fetch_sub(1, Ordering::SeqCst);
    "passed"
}

#[tokio::test]
async fn stdio_runs_at_most_max_in_flight_requests_and_reads_the_rest_later() {
    let gate = Gate {
        open: Arc::new(Semaphore::new(0)),
        running: Arc::new(AtomicUsize::new(0)),
        most: Arc::new(AtomicUsize::new(0)),
    };
    let config = ServerConfig::default().with_max_in_flight(2);
    let server = Server::builder("limits", "1")
        .config(config)
        .state(gate.clone())
        .tools(Tools::new().add("gated", "Waits for the gate", gated))
        .build()
        .unwrap();
    let mut peer = Peer::start(server);
    for id in 1..=6 {
        peer.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "gated", "_meta": meta(json!({}))}}))
            .await;
    }
    // Two run; the other four wait unread however long the first two take.
    for _ in 0..50 {
        if gate.running.load(Ordering::SeqCst) == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    peer.expect_silence(Duration::from_millis(300)).await;
    assert_eq!(gate.running.load(Ordering::SeqCst), 2);
    gate.open.add_permits(6);
    let mut ids: Vec<i64> = Vec::new();
    for _ in 0..6 {
        let answer = peer.recv().await;
        assert_eq!(answer["result"]["content"][0]["text"], "passed", "{answer}");
        ids.push(answer["id"].as_i64().unwrap());
    }
    ids.sort();
    assert_eq!(ids, [1, 2, 3, 4, 5, 6]);
    assert_eq!(gate.most.load(Ordering::SeqCst), 2, "more than max_in_flight requests ran at once");
    peer.close().await;
}

#[test]
fn the_defaults_are_the_documented_ones() {
    let config = ServerConfig::default();
    assert_eq!(config.tool_timeout, Duration::from_secs(60));
    assert_eq!(config.peer_request_timeout, Duration::from_secs(300));
    assert_eq!(config.max_in_flight, 64);
    assert_eq!(config.request_state_ttl, Duration::from_secs(600));
    assert_eq!(config.page_size, 1000);
}

/// The stdio byte budget: with room for two requests of about 3 KiB in `max_bytes_in_flight`
/// (and plenty in `max_in_flight`), two run and the rest wait unread until answers free room.
#[tokio::test]
async fn stdio_holds_at_most_max_bytes_in_flight_of_requests_and_reads_the_rest_later() {
    let gate = Gate {
        open: Arc::new(Semaphore::new(0)),
        running: Arc::new(AtomicUsize::new(0)),
        most: Arc::new(AtomicUsize::new(0)),
    };
    let config = ServerConfig::default().with_max_bytes_in_flight(8 * 1024);
    let server = Server::builder("limits", "1")
        .config(config)
        .state(gate.clone())
        .tools(Tools::new().add("gated", "Waits for the gate", gated))
        .build()
        .unwrap();
    let mut peer = Peer::start(server);
    // Each request is padded (an extra `_meta` member, which is data) to just over 3 KiB: it is
    // charged 4 KiB, so two fill the 8 KiB budget.
    let mut padded = meta(json!({}));
    padded["pad"] = json!("x".repeat(3 * 1024));
    for id in 1..=5 {
        peer.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "gated", "_meta": padded}}))
            .await;
    }
    for _ in 0..50 {
        if gate.running.load(Ordering::SeqCst) == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    peer.expect_silence(Duration::from_millis(300)).await;
    assert_eq!(gate.running.load(Ordering::SeqCst), 2, "the byte budget did not hold the third request back");
    gate.open.add_permits(5);
    let mut ids: Vec<i64> = Vec::new();
    for _ in 0..5 {
        let answer = peer.recv().await;
        assert_eq!(answer["result"]["content"][0]["text"], "passed", "{answer}");
        ids.push(answer["id"].as_i64().unwrap());
    }
    ids.sort();
    assert_eq!(ids, [1, 2, 3, 4, 5]);
    assert_eq!(gate.most.load(Ordering::SeqCst), 2, "more requests ran at once than their bytes allow");
    peer.close().await;
}

/// An `initialize` whose capabilities and clientInfo are larger than the session may keep is
/// refused with `-32602` and opens no session; one within the limit opens it.
#[tokio::test]
async fn an_initialize_larger_than_a_session_keeps_is_refused_and_opens_no_session() {
    async fn hello() -> &'static str {
        "hello"
    }
    let config = ServerConfig::default().with_max_client_info_bytes(4096);
    let server = Server::builder("limits", "1")
        .config(config)
        .tools(Tools::new().add("hello", "Says hello", hello))
        .build()
        .unwrap();
    let mut peer = Peer::start(server);
    peer.revision = LEGACY;
    let padding = "x".repeat(8192);
    let answer = peer
        .request(
            json!(1),
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"experimental": {"padding": {"text": padding}}},
                "clientInfo": {"name": "big", "version": "1"},
            }),
        )
        .await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("at most 4096"), "{message}");
    // No session was opened: a legacy request still needs the handshake.
    let list = peer.request(json!(2), "tools/list", json!({})).await;
    assert!(list["error"].is_object(), "a session was opened by a refused initialize: {list}");
    // Within the limit, the same handshake opens the session.
    let answer = peer
        .request(
            json!(3),
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {"experimental": {"padding": {"text": "x".repeat(1024)}}},
                "clientInfo": {"name": "small", "version": "1"},
            }),
        )
        .await;
    assert_eq!(answer["result"]["protocolVersion"], "2025-11-25", "{answer}");
    let list = peer.request(json!(4), "tools/list", json!({})).await;
    assert_eq!(list["result"]["tools"][0]["name"], "hello", "{list}");
    peer.close().await;
}
