//! What waits for one call is bounded: progress notifications beyond its queue, for a call
//! that does not take them in time, are dropped and counted (a warning says how many), and the
//! call's answer still gets through, after the notifications that came before it.

mod capture;
mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use capture::Captured;
use mcp_client::transport::{INBOUND_CAPACITY, TransportKind};
use mcp_client::{ClientBuilder, RequestOptions};
use mcp_types::{CallToolRequestParams, ProtocolVersion};
use serde_json::json;
use support::{Fake, Reply, discover_result, result, text_result};

/// How many progress notifications the server sends before its answer.
const SENT: usize = 1_000;
/// How many of them one call queues.
const QUEUED: usize = 256;

#[tokio::test]
async fn progress_a_call_cannot_take_in_time_is_dropped_and_counted_and_the_answer_arrives() {
    let captured = Captured::default();
    let _log = captured.install("mcp_client=warn");
    // The fake pushes every notification and the answer while the call is still sending, so
    // none of them is taken before the answer is in.
    let (fake, rx) = Fake::new(
        TransportKind::Stdio,
        Box::new(|s| match s.method() {
            Some("server/discover") => result(s.id(), discover_result()),
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
    );
    let client = ClientBuilder::new("test-client", "1.0.0")
        .pin_version(ProtocolVersion::V2026_07_28)
        .connect_transport(fake, rx, "fake")
        .await
        .unwrap();
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
    // The call's queue filled up while it was sending; what was still on its way to the engine
    // when the send was over may have come in after.
    assert!((QUEUED..=QUEUED + INBOUND_CAPACITY).contains(&seen.len()), "{} seen", seen.len());
    assert_eq!(seen[..QUEUED], (0..QUEUED).collect::<Vec<_>>(), "the first ones, in order");
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "in order: {seen:?}");
    let log = captured.text();
    let dropped = SENT - seen.len();
    assert!(log.contains(&format!("{dropped} notifications for this tools/call were dropped")), "{log}");
}
