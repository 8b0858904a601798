//! Every queue the client keeps for a server is bounded by its `QueueLimits`, set per client:
//! hostile servers drive each one past a small configured value (never the default) and the
//! client behaves as documented at exactly that size — the inbound channel holds the server
//! back, a call's and a subscription's surplus notifications are dropped and counted, and
//! server→client requests beyond the limit are refused at once while the client's own calls go
//! on, in bounded memory.

mod capture;
#[path = "support/memory.rs"]
mod memory;
mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use capture::Captured;
use mcp_client::transport::{Inbound, Outgoing, OutgoingKind, TransportKind};
use mcp_client::{ClientBuilder, ClientError, Handlers, QueueLimits, RequestOptions, SubscriptionEvent};
use mcp_types::{CallToolRequestParams, ElicitRequestParams, ElicitResult, ProtocolVersion};
use memory::Memory;
use serde_json::{Value, json};
use support::{Fake, Reply, discover_result, result, text_result};

fn builder(limits: QueueLimits) -> ClientBuilder {
    ClientBuilder::new("test-client", "1.0.0")
        .pin_version(ProtocolVersion::V2026_07_28)
        .discover_on_connect(false)
        .queue_limits(limits)
}

fn elicitation(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "elicitation/create",
        "params": {"message": "Name?", "requestedSchema": {"type": "object", "properties": {}}}})
}

/// An elicitation handler that counts how many run at once and never answers.
fn stuck_elicitations(running: Arc<AtomicUsize>) -> Handlers {
    Handlers::default().on_elicit(false, move |_: ElicitRequestParams| {
        running.fetch_add(1, Ordering::SeqCst);
        std::future::pending::<Result<ElicitResult, mcp_types::ErrorObject>>()
    })
}

#[tokio::test]
async fn a_queue_limit_of_zero_is_refused_with_an_error_naming_it() {
    for (name, limits) in [
        ("inbound", QueueLimits::default().with_inbound(0)),
        ("call_events", QueueLimits::default().with_call_events(0)),
        ("subscription_events", QueueLimits::default().with_subscription_events(0)),
        ("server_requests", QueueLimits::default().with_server_requests(0)),
    ] {
        let (fake, rx) = Fake::new(TransportKind::Stdio, Box::new(|_| Reply::Nothing));
        let error = builder(limits).connect_transport(fake, rx, "fake").await.unwrap_err();
        assert!(matches!(error, ClientError::InvalidConfig(_)), "{error:?}");
        assert!(error.to_string().contains(&format!("QueueLimits::{name} is 0")), "{error}");
    }
}

#[tokio::test]
async fn the_inbound_channel_holds_its_configured_size_then_holds_the_server_back() {
    const INBOUND: usize = 5;
    let running = Arc::new(AtomicUsize::new(0));
    let limits = QueueLimits::default().with_inbound(INBOUND).with_server_requests(1);
    let client_builder = builder(limits).handlers(stuck_elicitations(running.clone()));
    // Answers to the server never finish sending (a server that stopped reading): the one
    // refusal the client may queue waits behind the one being sent, and the engine's reading
    // waits behind it. What the server sends after that waits in the inbound channel.
    let (fake, rx) = Fake::with_channel(
        TransportKind::Stdio,
        Box::new(|s| match s.kind {
            OutgoingKind::Response => Reply::Hang,
            _ => Reply::Nothing,
        }),
        client_builder.inbound_channel(),
    );
    let _client = client_builder.connect_transport(fake.clone(), rx, "fake").await.unwrap();
    // 1 runs (stuck), 2 is being refused (stuck), 3 waits in the refusal queue, 4 waits for room
    // in it: the engine reads no further.
    for id in 1..=4 {
        fake.push_wait(elicitation(id)).await;
    }
    let mut queued = 0;
    for _ in 0..20 {
        while fake
            .try_push(json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "data": queued}}))
            .is_ok()
        {
            queued += 1;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(queued, INBOUND, "the channel holds exactly its configured size");
    assert_eq!(running.load(Ordering::SeqCst), 1);
}

/// How many progress notifications the server sends before its answer.
const SENT: usize = 500;

#[tokio::test]
async fn a_calls_notifications_past_its_configured_queue_are_dropped_and_counted() {
    const CALL_EVENTS: usize = 10;
    const INBOUND: usize = 4;
    let captured = Captured::default();
    let _log = captured.install("mcp_client=warn");
    let limits = QueueLimits::default().with_call_events(CALL_EVENTS).with_inbound(INBOUND);
    let client_builder = builder(limits);
    // Every notification and the answer are pushed while the call is still sending, so none is
    // taken before the answer is in.
    let (fake, rx) = Fake::with_channel(
        TransportKind::Stdio,
        Box::new(|s| match s.method() {
            Some("tools/call") => {
                let token = s.params()["_meta"]["progressToken"].clone();
                let mut messages: Vec<_> = (0..SENT)
                    .map(|i| {
                        json!({"jsonrpc": "2.0", "method": "notifications/progress",
                            "params": {"progressToken": token, "progress": i}})
                    })
                    .collect();
                messages.push(json!({"jsonrpc": "2.0", "id": s.id(), "result": text_result("done")}));
                Reply::Messages(messages)
            }
            _ => Reply::Nothing,
        }),
        client_builder.inbound_channel(),
    );
    let client = client_builder.connect_transport(fake, rx, "fake").await.unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let options = {
        let seen = seen.clone();
        RequestOptions::new().on_progress(move |p| seen.lock().unwrap().push(p.progress as usize))
    };
    let params = CallToolRequestParams::new("slow");
    let call = client.call_tool_with(&params, &options);
    let called = tokio::time::timeout(Duration::from_secs(30), call).await.expect("the call hung").unwrap();
    assert_eq!(called.content.len(), 1, "the answer got through");
    let seen = seen.lock().unwrap().clone();
    // The call's queue filled while it was sending; what was in the inbound channel when the
    // send was over may have come in after.
    assert!((CALL_EVENTS..=CALL_EVENTS + INBOUND).contains(&seen.len()), "{} seen", seen.len());
    assert_eq!(seen[..CALL_EVENTS], (0..CALL_EVENTS).collect::<Vec<_>>(), "the first ones, in order");
    let dropped = SENT - seen.len();
    let log = captured.text();
    assert!(log.contains(&format!("{dropped} notifications for this tools/call were dropped")), "{log}");
}

#[tokio::test]
async fn a_subscriptions_events_past_its_configured_queue_are_dropped_and_counted() {
    const EVENTS: usize = 4;
    const FLOOD: usize = 100;
    let captured = Captured::default();
    let _log = captured.install("mcp_client=warn");
    let (fake, rx) = Fake::new(
        TransportKind::Stdio,
        Box::new(|s| match s.method() {
            Some("server/discover") => result(s.id(), discover_result()),
            Some("subscriptions/listen") => {
                let tag = json!({"io.modelcontextprotocol/subscriptionId": s.id()});
                let mut messages = vec![json!({"jsonrpc": "2.0",
                    "method": "notifications/subscriptions/acknowledged",
                    "params": {"notifications": {"toolsListChanged": true}, "_meta": tag}})];
                messages.extend((0..FLOOD).map(|_| {
                    json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
                        "params": {"_meta": tag}})
                }));
                Reply::Messages(messages)
            }
            _ => Reply::Nothing,
        }),
    );
    let limits = QueueLimits::default().with_subscription_events(EVENTS);
    let client = builder(limits).connect_transport(fake.clone(), rx, "fake").await.unwrap();
    let filter = mcp_types::SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() };
    let mut sub = client.listen(filter).await.unwrap();
    let listen = fake.wait_for("subscriptions/listen").await;
    // The flood is in the channel within microseconds of the listen request; the ping's answer
    // comes after it on the same stream: once it is in, the whole flood went through the
    // engine, none of it read by the subscriber yet.
    tokio::time::sleep(Duration::from_millis(200)).await;
    client.ping().await.unwrap();
    let mut events = Vec::new();
    while let Ok(Some(event)) = tokio::time::timeout(Duration::from_millis(200), sub.next()).await {
        events.push(event);
    }
    assert_eq!(events.len(), EVENTS, "events queued for the subscriber");
    assert!(matches!(events[0], SubscriptionEvent::Acknowledged(_)));
    // The subscription lives on: the next change gets through and the loss is told.
    fake.push(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": listen.id()}}}));
    let next = tokio::time::timeout(Duration::from_secs(5), sub.next()).await.unwrap().unwrap();
    assert!(matches!(next, SubscriptionEvent::Notification(_)), "{next:?}");
    let lost = FLOOD + 1 - EVENTS;
    let log = captured.text();
    assert!(log.contains(&format!("{lost} notifications lost")), "{log}");
}

/// What the flooding server counts of the client's answers to its requests (without keeping
/// them).
struct Answers {
    /// Refusals naming the limit, by request id (allocated up front: outside the measure).
    refused: Mutex<Vec<bool>>,
    other: AtomicUsize,
    limit: usize,
}

impl Answers {
    fn record(&self, message: &Outgoing) {
        if !matches!(message.kind, OutgoingKind::Response) {
            return;
        }
        let body: Value = serde_json::from_slice(&message.body).expect("the client sends JSON");
        let error = &body["error"];
        let id = body["id"].as_u64().expect("a numeric id") as usize;
        if error["code"] == -32603 && error["data"]["limit"] == self.limit {
            let mut refused = self.refused.lock().unwrap();
            assert!(!refused[id], "request {id} refused twice");
            refused[id] = true;
        } else {
            self.other.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// The resident set of this process, in bytes.
fn vm_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).expect("VmRSS");
    line["VmRSS:".len()..].trim().trim_end_matches("kB").trim().parse::<u64>().unwrap() * 1024
}

#[tokio::test]
async fn server_requests_past_the_limit_are_refused_at_once_and_the_clients_calls_go_on() {
    /// Requests the server sends: an unbounded client keeps a stuck task for each, some
    /// 65 MiB in all (measured with the bound removed).
    const FLOOD: usize = 20_000;
    const LIMIT: usize = 3;
    /// How much the resident set may grow over the flood: the 3 stuck handlers, 3 queued
    /// refusals and the inbound channel take a few KiB; the rest is allocator and runtime
    /// slack, well under what the flood would hold unbounded.
    const MARGIN: u64 = 8 * 1024 * 1024;
    let running = Arc::new(AtomicUsize::new(0));
    let limits = QueueLimits::default().with_server_requests(LIMIT);
    let client_builder = ClientBuilder::new("test-client", "1.0.0")
        .pin_version(ProtocolVersion::V2025_11_25)
        .queue_limits(limits)
        .handlers(stuck_elicitations(running.clone()));
    let (inbound, rx) = client_builder.inbound_channel();
    let answers = Arc::new(Answers {
        refused: Mutex::new(vec![false; FLOOD + 1]),
        other: AtomicUsize::new(0),
        limit: LIMIT,
    });
    // A legacy server that floods the client with elicitation requests; it answers the
    // handshake and the client's calls.
    let recorder = answers.clone();
    let flooder = Memory::observed(inbound.clone(), Box::new(move |sent| recorder.record(sent)));
    let client = client_builder.connect_transport(flooder, rx, "flooder").await.unwrap();
    client.call_tool("warm-up", json!({})).await.unwrap();
    let before = vm_rss();
    let flood = tokio::spawn(async move {
        for id in 1..=FLOOD {
            let message = elicitation(id as i64).to_string();
            let _ = inbound.send(Inbound::Message(Bytes::from(message))).await;
        }
    });
    // The client's own calls are answered in the middle of the flood.
    for _ in 0..10 {
        let called = tokio::time::timeout(Duration::from_secs(30), client.call_tool("echo", json!({})));
        assert_eq!(called.await.expect("a call hung during the flood").unwrap().content.len(), 1);
    }
    flood.await.unwrap();
    let refusals = || answers.refused.lock().unwrap().iter().filter(|r| **r).count();
    for _ in 0..3000 {
        if refusals() == FLOOD - LIMIT {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let grown = vm_rss().saturating_sub(before);
    eprintln!("{FLOOD} server requests: resident set +{} KiB", grown >> 10);
    assert_eq!(refusals(), FLOOD - LIMIT, "every request past the limit was refused, once");
    assert_eq!(running.load(Ordering::SeqCst), LIMIT, "the limit held");
    let refused = answers.refused.lock().unwrap();
    assert!((1..=LIMIT).all(|id| !refused[id]), "the first ones run");
    assert_eq!(answers.other.load(Ordering::SeqCst), 0);
    assert!(grown < MARGIN, "the resident set grew by {} KiB", grown >> 10);
}
