//! What crosses the gateway during a call besides the call itself: progress on the way back,
//! a cancellation on the way up, and the upstream's questions (elicitation) put to the
//! downstream caller — for each era on each side.

mod support;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::{Client, Handlers, RequestOptions};
use mcp_gateway::UpstreamState;
use mcp_server::{Cancel, Peer, Progress, Server, State, ToolError, Tools};
use mcp_types::{
    CallToolRequestParams, ElicitRequestFormParams, ElicitRequestParams, ElicitResult, ElicitValue,
    ElicitationSchema, PrimitiveSchemaDefinition, StringSchema,
};
use serde_json::json;
use support::*;

/// What the upstream's tools record.
struct Shared {
    /// Calls of `waits` that started.
    started: AtomicUsize,
    /// Calls of `waits` that saw their cancellation.
    cancelled: AtomicUsize,
    /// Runs of `greet`.
    greeted: AtomicUsize,
    /// Runs of `ask_together` in flight (a run cancelled mid-way leaves on drop).
    together: AtomicUsize,
    /// Two runs of `ask_together` have been in flight at once.
    met: std::sync::atomic::AtomicBool,
}

impl Default for Shared {
    fn default() -> Self {
        Shared {
            started: AtomicUsize::new(0),
            cancelled: AtomicUsize::new(0),
            greeted: AtomicUsize::new(0),
            together: AtomicUsize::new(0),
            met: std::sync::atomic::AtomicBool::new(false),
        }
    }
}

async fn steps(progress: Progress) -> String {
    for step in 1..=3 {
        progress.report(f64::from(step), Some(3.0), Some(&format!("step {step}"))).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    "three steps".to_owned()
}

async fn waits(cancel: Cancel, State(shared): State<Arc<Shared>>) -> String {
    shared.started.fetch_add(1, Ordering::SeqCst);
    tokio::select! {
        () = cancel.cancelled() => {
            shared.cancelled.fetch_add(1, Ordering::SeqCst);
            "cancelled".to_owned()
        }
        () = tokio::time::sleep(Duration::from_secs(120)) => "never cancelled".to_owned(),
    }
}

fn name_form() -> ElicitRequestFormParams {
    let mut schema = ElicitationSchema::default();
    schema.properties.insert("name".to_owned(), PrimitiveSchemaDefinition::String(StringSchema::default()));
    schema.required = Some(vec!["name".to_owned()]);
    ElicitRequestFormParams::new("What is your name?", schema)
}

fn greeting(answer: &ElicitResult) -> String {
    let name = match answer.content.as_ref().and_then(|c| c.get("name")) {
        Some(ElicitValue::String(name)) => name.as_str(),
        _ => "nobody",
    };
    format!("Hello, {name}!")
}

async fn greet(peer: Peer, State(shared): State<Arc<Shared>>) -> Result<String, ToolError> {
    shared.greeted.fetch_add(1, Ordering::SeqCst);
    let answer = peer.elicit("name", name_form()).await?;
    Ok(greeting(&answer))
}

/// Asks once two runs have been in flight at the same time, so that two questions are out at
/// once. Counted, not a barrier: a run the gateway cancels (its caller was asked, and will
/// retry) may be dropped anywhere, and no retry waits for a partner.
async fn ask_together(peer: Peer, State(shared): State<Arc<Shared>>) -> Result<String, ToolError> {
    struct Leave<'a>(&'a AtomicUsize);
    impl Drop for Leave<'_> {
        fn drop(&mut self) {
            self.0.fetch_sub(1, Ordering::SeqCst);
        }
    }
    shared.together.fetch_add(1, Ordering::SeqCst);
    let _leave = Leave(&shared.together);
    // Until two runs have been in flight together once; the retries then ask at once.
    while !shared.met.load(Ordering::SeqCst) {
        if shared.together.load(Ordering::SeqCst) >= 2 {
            shared.met.store(true, Ordering::SeqCst);
        } else {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    match peer.elicit("name", name_form()).await {
        Ok(answer) => Ok(greeting(&answer)),
        Err(e) => Err(ToolError::new(format!("not asked: {e}"))),
    }
}

fn upstream_server(shared: Arc<Shared>) -> Server {
    let tools = Tools::new()
        .add("steps", "Reports progress 1..3", steps)
        .add("waits", "Waits for its cancellation", waits)
        .add("greet", "Asks for a name", greet)
        .add("ask_together", "Two calls asking at once", ask_together);
    Server::builder("bridged", "1").tools(tools).state(shared).build().unwrap()
}

/// A downstream client that answers every elicitation with `name`.
async fn answering(url: &str, legacy: bool, name: &str) -> (Client, Arc<AtomicUsize>) {
    let asked = Arc::new(AtomicUsize::new(0));
    let count = asked.clone();
    let name = name.to_owned();
    let handlers = Handlers::default().on_elicit(false, move |_: ElicitRequestParams| {
        count.fetch_add(1, Ordering::SeqCst);
        let content = BTreeMap::from([("name".to_owned(), ElicitValue::String(name.clone()))]);
        async move { Ok(ElicitResult::accept(content)) }
    });
    (client(url, legacy, handlers).await, asked)
}

/// One upstream (its link in the given era) behind a gateway.
async fn setup(legacy_link: bool) -> (Arc<Shared>, Served, Front) {
    let shared = Arc::new(Shared::default());
    let up = serve(upstream_server(shared.clone())).await;
    let config = if legacy_link { legacy_upstream("up", &up.url()) } else { upstream("up", &up.url()) };
    let front = front(vec![config]).await;
    assert_eq!(front.upstream("up").state, UpstreamState::Ready);
    (shared, up, front)
}

fn era(legacy: bool) -> &'static str {
    if legacy { "legacy" } else { "modern" }
}

#[tokio::test(flavor = "multi_thread")]
async fn progress_reaches_the_downstream_caller() {
    for legacy_link in [false, true] {
        let (_shared, _up, front) = setup(legacy_link).await;
        for legacy in [false, true] {
            let what = format!("{} downstream, {} upstream", era(legacy), era(legacy_link));
            let downstream = client(&front.url(), legacy, Handlers::default()).await;
            let seen: Arc<Mutex<Vec<f64>>> = Arc::default();
            let record = seen.clone();
            let options = RequestOptions::new().on_progress(move |p| record.lock().unwrap().push(p.progress));
            let params = CallToolRequestParams::new("steps");
            let result = bounded("calling steps", downstream.call_tool_with(&params, &options)).await;
            let result = result.unwrap_or_else(|e| panic!("{what}: {e:?}"));
            assert_eq!(text_of(&result), "three steps", "{what}");
            let values = seen.lock().unwrap().clone();
            assert!(!values.is_empty(), "{what}: no progress reached the caller");
            assert!(values.windows(2).all(|w| w[0] < w[1]), "{what}: progress increases: {values:?}");
            assert!(
                values.iter().all(|v| (1.0..=3.0).contains(v)),
                "{what}: the upstream's values: {values:?}"
            );
            downstream.close().await;
        }
        front.close().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dropped_downstream_call_cancels_the_upstream_tool() {
    for legacy_link in [false, true] {
        let (shared, _up, front) = setup(legacy_link).await;
        for (n, legacy) in [false, true].into_iter().enumerate() {
            let what = format!("{} downstream, {} upstream", era(legacy), era(legacy_link));
            let downstream = client(&front.url(), legacy, Handlers::default()).await;
            let calling = downstream.clone();
            let call = tokio::spawn(async move { calling.call_tool("waits", json!({})).await });
            poll(&format!("{what}: the upstream tool started"), DEADLINE, || async {
                let started = shared.started.load(Ordering::SeqCst);
                if started > n { Ok(()) } else { Err(format!("{started} started")) }
            })
            .await;
            call.abort();
            let _ = call.await;
            poll(&format!("{what}: the upstream tool saw its cancellation"), DEADLINE, || async {
                let cancelled = shared.cancelled.load(Ordering::SeqCst);
                if cancelled > n { Ok(()) } else { Err(format!("{cancelled} cancelled")) }
            })
            .await;
            downstream.close().await;
        }
        front.close().await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_upstream_question_is_answered_by_the_downstream_caller_in_every_era_pair() {
    for legacy_link in [false, true] {
        let (shared, _up, front) = setup(legacy_link).await;
        for legacy in [false, true] {
            let what = format!("{} downstream, {} upstream", era(legacy), era(legacy_link));
            let runs_before = shared.greeted.load(Ordering::SeqCst);
            let (downstream, asked) = answering(&front.url(), legacy, "Ann").await;
            let result = bounded("calling greet", downstream.call_tool("greet", json!({}))).await;
            let result = result.unwrap_or_else(|e| panic!("{what}: {e:?}"));
            assert!(!result.is_error(), "{what}: {result:?}");
            assert_eq!(text_of(&result), "Hello, Ann!", "{what}: the answer reached the tool");
            assert_eq!(asked.load(Ordering::SeqCst), 1, "{what}: the downstream client was asked once");
            // Legacy on both sides: the question is a real request passed down and its answer
            // passed up, the tool never re-run. (Any modern side re-runs it: observed 2 runs
            // with one modern side, 3 with two.)
            if legacy && legacy_link {
                assert_eq!(shared.greeted.load(Ordering::SeqCst) - runs_before, 1, "{what}: greet ran once");
            }
            downstream.close().await;
        }
        front.close().await;
    }
}

/// Two callers whose calls both ask at the same time. Over a modern upstream link each
/// question comes back inside its own call; a legacy upstream over Streamable HTTP asks with
/// requests of its own, each on the asking call's response stream, whose tag names the caller.
/// Either way each caller answers their own question, and nobody is asked another's.
#[tokio::test(flavor = "multi_thread")]
async fn two_callers_asked_at_once() {
    for legacy_link in [false, true] {
        let (_shared, _up, front) = setup(legacy_link).await;
        let (ann, ann_asked) = answering(&front.url(), false, "Ann").await;
        let (bob, bob_asked) = answering(&front.url(), false, "Bob").await;
        let (a, b) = bounded("two calls of ask_together", async {
            tokio::join!(ann.call_tool("ask_together", json!({})), bob.call_tool("ask_together", json!({})))
        })
        .await;
        let (a, b) = (a.expect("Ann's call"), b.expect("Bob's call"));
        let link = era(legacy_link);
        for (who, result, asked) in [("Ann", &a, &ann_asked), ("Bob", &b, &bob_asked)] {
            assert_eq!(
                text_of(result),
                format!("Hello, {who}!"),
                "{link} upstream: {who} answers their own question"
            );
            assert!(asked.load(Ordering::SeqCst) >= 1, "{link} upstream: {who} was asked");
        }
        ann.close().await;
        bob.close().await;
        front.close().await;
    }
}

/// A legacy upstream over Streamable HTTP sends its question on the response stream of the
/// call that asks: with another call to the same upstream in flight, the question still
/// reaches the right caller (the request's tag names it).
#[tokio::test(flavor = "multi_thread")]
async fn a_legacy_upstream_question_reaches_its_caller_while_another_call_is_in_flight() {
    let (shared, _up, front) = setup(true).await;
    let other = client(&front.url(), false, Handlers::default()).await;
    let waiting = other.clone();
    let in_flight = tokio::spawn(async move { waiting.call_tool("waits", json!({})).await });
    poll("the other call running on the upstream", DEADLINE, || async {
        let started = shared.started.load(Ordering::SeqCst);
        if started >= 1 { Ok(()) } else { Err(format!("{started} started")) }
    })
    .await;
    let (ann, _) = answering(&front.url(), false, "Ann").await;
    let result = bounded("calling greet", ann.call_tool("greet", json!({}))).await.expect("Ann's call");
    in_flight.abort();
    assert_eq!(text_of(&result), "Hello, Ann!", "{result:?}");
    ann.close().await;
    other.close().await;
    front.close().await;
}
