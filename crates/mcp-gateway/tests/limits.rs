//! An upstream's concurrency limit: calls beyond it wait for a slot rather than fail, and no
//! more than the limit ever run on the upstream at once.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use mcp_client::{ClientError, Handlers, RequestOptions};
use mcp_server::{Progress, Server, State, Tools};
use mcp_types::CallToolRequestParams;
use serde_json::json;
use support::*;

/// What the upstream's tool records; each call is held until the test lets one go.
struct Shared {
    started: AtomicUsize,
    running: AtomicUsize,
    most_running: AtomicUsize,
    gate: tokio::sync::Semaphore,
}

async fn held(State(shared): State<Arc<Shared>>) -> String {
    let now = shared.running.fetch_add(1, Ordering::SeqCst) + 1;
    shared.most_running.fetch_max(now, Ordering::SeqCst);
    let n = shared.started.fetch_add(1, Ordering::SeqCst) + 1;
    shared.gate.acquire().await.expect("the gate stays open").forget();
    shared.running.fetch_sub(1, Ordering::SeqCst);
    format!("call {n} done")
}

fn shared() -> Arc<Shared> {
    Arc::new(Shared {
        started: AtomicUsize::new(0),
        running: AtomicUsize::new(0),
        most_running: AtomicUsize::new(0),
        gate: tokio::sync::Semaphore::new(0),
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn calls_beyond_max_concurrency_wait_for_a_slot() {
    let shared = shared();
    let server = Server::builder("limited", "1")
        .tools(Tools::new().add("held", "", held))
        .state(shared.clone())
        .build();
    let up = serve(server.unwrap()).await;
    let mut config = upstream("limited", &up.url());
    config.max_concurrency = 1;
    let front = Arc::new(front(vec![config]).await);
    let downstream = client(&front.url(), false, Handlers::default()).await;

    // The gateway's in_flight, sampled until the calls are over.
    let done = Arc::new(AtomicBool::new(false));
    let most_in_flight = Arc::new(AtomicUsize::new(0));
    let sampler = {
        let (front, done, most) = (front.clone(), done.clone(), most_in_flight.clone());
        tokio::spawn(async move {
            while !done.load(Ordering::SeqCst) {
                most.fetch_max(front.upstream("limited").in_flight, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
    };

    let (first, second) = (downstream.clone(), downstream.clone());
    let a = tokio::spawn(async move { first.call_tool("held", json!({})).await });
    let b = tokio::spawn(async move { second.call_tool("held", json!({})).await });
    poll("one call running on the upstream", DEADLINE, || async {
        let started = shared.started.load(Ordering::SeqCst);
        if started >= 1 { Ok(()) } else { Err(format!("{started} started")) }
    })
    .await;
    // Time for the other call to reach the gateway: it must wait there, not start.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(shared.started.load(Ordering::SeqCst), 1, "the second call waits for the slot");
    assert_eq!(front.upstream("limited").in_flight, 1, "one request in flight");

    shared.gate.add_permits(1);
    poll("the waiting call running on the upstream", DEADLINE, || async {
        let started = shared.started.load(Ordering::SeqCst);
        if started >= 2 { Ok(()) } else { Err(format!("{started} started")) }
    })
    .await;
    shared.gate.add_permits(1);
    let (a, b) = bounded("both calls", async { (a.await.unwrap(), b.await.unwrap()) }).await;
    done.store(true, Ordering::SeqCst);
    sampler.await.unwrap();

    let mut texts = vec![text_of(&a.expect("the first call")), text_of(&b.expect("the second call"))];
    texts.sort();
    assert_eq!(texts, ["call 1 done", "call 2 done"], "both calls succeed");
    assert_eq!(shared.most_running.load(Ordering::SeqCst), 1, "never two calls at once on the upstream");
    assert_eq!(
        most_in_flight.load(Ordering::SeqCst),
        1,
        "the status never shows more than the limit in flight"
    );
    let status = front.upstream("limited");
    assert_eq!((status.requests, status.in_flight, status.failures), (2, 0, 0), "{status:?}");

    downstream.close().await;
    if let Ok(front) = Arc::try_unwrap(front) {
        front.close().await;
    }
}

/// Holds its call until the gate opens, reporting progress meanwhile (which keeps the
/// gateway's request to it alive past the request timeout).
async fn busy(progress: Progress, State(shared): State<Arc<Shared>>) -> String {
    shared.started.fetch_add(1, Ordering::SeqCst);
    let mut step = 0.0;
    loop {
        tokio::select! {
            permit = shared.gate.acquire() => {
                permit.expect("the gate stays open").forget();
                return "done".to_owned();
            }
            () = tokio::time::sleep(Duration::from_millis(100)) => {
                step += 1.0;
                progress.report(step, None, None).await;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_waiting_for_a_slot_longer_than_the_request_timeout_fails() {
    let shared = shared();
    let server =
        Server::builder("busy", "1").tools(Tools::new().add("busy", "", busy)).state(shared.clone()).build();
    let up = serve(server.unwrap()).await;
    let mut config = upstream("busy", &up.url());
    config.max_concurrency = 1;
    config.request_timeout = Duration::from_secs(2);
    let front = front(vec![config]).await;
    let downstream = client(&front.url(), false, Handlers::default()).await;

    let holder = downstream.clone();
    let held = tokio::spawn(async move {
        let options = RequestOptions::new().on_progress(|_| {});
        holder.call_tool_with(&CallToolRequestParams::new("busy"), &options).await
    });
    poll("the first call running on the upstream", DEADLINE, || async {
        let started = shared.started.load(Ordering::SeqCst);
        if started >= 1 { Ok(()) } else { Err(format!("{started} started")) }
    })
    .await;
    let refused = bounded("the second call", downstream.call_tool("busy", json!({}))).await;
    match refused {
        Err(ClientError::Protocol(e)) => {
            assert_eq!(e.code, mcp_types::code::INTERNAL_ERROR, "{e:?}");
            assert!(e.message.contains("busy"), "the error says the upstream is at its limit: {e:?}");
        }
        other => panic!("a call that cannot get a slot in time fails: {other:?}"),
    }
    assert_eq!(shared.started.load(Ordering::SeqCst), 1, "the refused call never reached the upstream");

    shared.gate.add_permits(1);
    let held = bounded("the first call", held).await.unwrap();
    assert_eq!(text_of(&held.expect("the first call succeeds")), "done");
    downstream.close().await;
    front.close().await;
}

/// A call cancelled while it waits for a slot never runs, and leaves the slot to the next.
#[tokio::test(flavor = "multi_thread")]
async fn a_call_cancelled_while_waiting_for_a_slot_never_runs() {
    let shared = shared();
    let server = Server::builder("limited", "1")
        .tools(Tools::new().add("held", "", held))
        .state(shared.clone())
        .build();
    let up = serve(server.unwrap()).await;
    let mut config = upstream("limited", &up.url());
    config.max_concurrency = 1;
    let front = front(vec![config]).await;
    let downstream = client(&front.url(), false, Handlers::default()).await;

    let first = downstream.clone();
    let a = tokio::spawn(async move { first.call_tool("held", json!({})).await });
    poll("the first call running on the upstream", DEADLINE, || async {
        let started = shared.started.load(Ordering::SeqCst);
        if started >= 1 { Ok(()) } else { Err(format!("{started} started")) }
    })
    .await;
    let second = downstream.clone();
    let b = tokio::spawn(async move { second.call_tool("held", json!({})).await });
    // The second call reaches the gateway and waits for the slot; then it is dropped, and the
    // gateway gives up its wait.
    poll("the second call waiting for the slot", DEADLINE, || async {
        let waiting = front.upstream("limited").waiting;
        if waiting == 1 { Ok(()) } else { Err(format!("{waiting} waiting")) }
    })
    .await;
    b.abort();
    let _ = b.await;
    poll("the cancelled call no longer waiting", DEADLINE, || async {
        let waiting = front.upstream("limited").waiting;
        if waiting == 0 { Ok(()) } else { Err(format!("{waiting} waiting")) }
    })
    .await;

    shared.gate.add_permits(1);
    let a = bounded("the first call", a).await.unwrap();
    assert_eq!(text_of(&a.expect("the first call")), "call 1 done");
    // The next call gets the slot; had the cancelled one run, it would hold the gate's permit.
    shared.gate.add_permits(1);
    let c = bounded("a third call", downstream.call_tool("held", json!({}))).await;
    assert_eq!(text_of(&c.expect("the third call")), "call 2 done", "the cancelled call never ran");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(shared.started.load(Ordering::SeqCst), 2, "upstream runs: the first and the third");
    let status = front.upstream("limited");
    assert_eq!((status.requests, status.in_flight), (2, 0), "{status:?}");
    downstream.close().await;
    front.close().await;
}
