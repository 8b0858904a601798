//! An upstream's circuit breaker, over real HTTP: requests in a row that time out open it, and
//! then calls fail at once without reaching the upstream; after the cooldown one probe goes
//! through — answered, it closes the breaker; unanswered, it opens it again. Tool errors and
//! JSON-RPC errors are answers: they never open it.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mcp_client::{ClientError, Handlers};
use mcp_server::{Server, State, ToolError, Tools};
use serde_json::json;
use support::*;

/// Whether the upstream hangs, and how many calls reached it.
#[derive(Default)]
struct Upstream {
    hanging: AtomicBool,
    reached: AtomicUsize,
}

async fn work(State(up): State<Arc<Upstream>>) -> String {
    up.reached.fetch_add(1, Ordering::SeqCst);
    if up.hanging.load(Ordering::SeqCst) {
        std::future::pending::<()>().await;
    }
    "worked".to_owned()
}

async fn refuse(State(up): State<Arc<Upstream>>) -> Result<String, ToolError> {
    up.reached.fetch_add(1, Ordering::SeqCst);
    Err(ToolError::new("refused, as always"))
}

fn internal_error(result: Result<mcp_types::CallToolResult, ClientError>) -> mcp_types::ErrorObject {
    match result {
        Err(ClientError::Protocol(e)) => {
            assert_eq!(e.code, mcp_types::code::INTERNAL_ERROR, "{e:?}");
            e
        }
        other => panic!("expected a JSON-RPC error from the gateway, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn timeouts_in_a_row_open_the_breaker_and_a_probe_closes_it() {
    let state = Arc::new(Upstream::default());
    let server = Server::builder("flaky", "1")
        .tools(Tools::new().add("work", "", work).add("refuse", "", refuse))
        .state(state.clone())
        .build();
    let up = serve(server.unwrap()).await;
    let mut config = upstream("flaky", &up.url());
    // The timeout bounds the calls that succeed too (and the start's tools/list): long
    // enough for a loaded machine, as the hanging calls never end whatever it is.
    config.request_timeout = Duration::from_secs(2);
    config.breaker_failures = 3;
    config.breaker_cooldown = Duration::from_millis(1500);
    let front = front(vec![config]).await;
    let downstream = client(&front.url(), false, Handlers::default()).await;

    // Tool errors are the upstream answering: however many, the breaker stays closed.
    for _ in 0..5 {
        let result = bounded("a tool error", downstream.call_tool("refuse", json!({}))).await.unwrap();
        assert_eq!(result.is_error, Some(true));
    }
    assert_eq!(front.upstream("flaky").circuit, "closed");

    // Three calls in a row time out: the breaker opens.
    state.hanging.store(true, Ordering::SeqCst);
    for n in 1..=3 {
        let e =
            internal_error(bounded("a call that times out", downstream.call_tool("work", json!({}))).await);
        assert_eq!(e.data.as_ref().unwrap()["outcome"], "unknown", "call {n}: {e:?}");
    }
    let status = front.upstream("flaky");
    assert_eq!((status.circuit.as_str(), status.circuit_opens), ("open", 1), "{status:?}");
    assert!(status.last_error.as_deref().is_some_and(|e| e.contains("no answer")), "{status:?}");

    // Open: a call fails at once, never reaching the upstream, and says so.
    let reached = state.reached.load(Ordering::SeqCst);
    let started = Instant::now();
    let e = internal_error(bounded("a call while open", downstream.call_tool("work", json!({}))).await);
    assert!(started.elapsed() < Duration::from_secs(1), "failed fast: {:?}", started.elapsed());
    assert!(e.message.contains("failing fast") && e.message.contains("3 requests in a row"), "{e:?}");
    let data = e.data.as_ref().unwrap();
    assert_eq!((data["outcome"].as_str(), data["circuit"].as_str()), (Some("not executed"), Some("open")));
    assert!(data["retryAfterMs"].as_u64().is_some_and(|ms| ms <= 1500), "{data}");
    assert_eq!(state.reached.load(Ordering::SeqCst), reached, "the refused call never reached the upstream");
    assert_eq!(front.upstream("flaky").fast_failures, 1);

    // After the cooldown, a probe that times out opens it again.
    poll("the breaker half-open", DEADLINE, || async {
        let circuit = front.upstream("flaky").circuit;
        if circuit == "half-open" { Ok(()) } else { Err(circuit) }
    })
    .await;
    internal_error(bounded("a failing probe", downstream.call_tool("work", json!({}))).await);
    let status = front.upstream("flaky");
    assert_eq!((status.circuit.as_str(), status.circuit_opens), ("open", 2), "{status:?}");
    assert_eq!(state.reached.load(Ordering::SeqCst), reached + 1, "the probe reached the upstream");

    // The upstream recovers; after the cooldown, the probe is answered and the breaker closes.
    state.hanging.store(false, Ordering::SeqCst);
    poll("the breaker half-open again", DEADLINE, || async {
        let circuit = front.upstream("flaky").circuit;
        if circuit == "half-open" { Ok(()) } else { Err(circuit) }
    })
    .await;
    let result = bounded("the probe", downstream.call_tool("work", json!({}))).await.expect("the probe");
    assert_eq!(text_of(&result), "worked");
    assert_eq!(front.upstream("flaky").circuit, "closed");
    for _ in 0..3 {
        let result = bounded("a call", downstream.call_tool("work", json!({}))).await.expect("closed again");
        assert_eq!(text_of(&result), "worked");
    }

    downstream.close().await;
    front.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn zero_failures_never_opens_the_breaker() {
    let state = Arc::new(Upstream { hanging: AtomicBool::new(true), ..Default::default() });
    let server =
        Server::builder("hangs", "1").tools(Tools::new().add("work", "", work)).state(state.clone()).build();
    let up = serve(server.unwrap()).await;
    let mut config = upstream("hangs", &up.url());
    config.request_timeout = Duration::from_secs(1);
    config.breaker_failures = 0;
    let front = front(vec![config]).await;
    let downstream = client(&front.url(), false, Handlers::default()).await;

    for _ in 0..4 {
        let e =
            internal_error(bounded("a call that times out", downstream.call_tool("work", json!({}))).await);
        assert_eq!(e.data.as_ref().unwrap()["outcome"], "unknown", "{e:?}");
    }
    assert_eq!(state.reached.load(Ordering::SeqCst), 4, "every call reached the upstream");
    let status = front.upstream("hangs");
    assert_eq!((status.circuit.as_str(), status.circuit_opens, status.fast_failures), ("closed", 0, 0));

    downstream.close().await;
    front.close().await;
}
