//! Upstreams that fail: one that goes down and comes back on the same port, one that never
//! answers at start, and the three ways a forwarded call can fail — a tool error, the
//! upstream's own JSON-RPC error, no answer in time — each kept in its own layer downstream.

mod support;

use std::sync::Arc;
use std::time::Duration;

use mcp_client::{ClientError, Handlers};
use mcp_gateway::UpstreamState;
use mcp_server::{Args, Call, FromCall, Rejection, Server, ToolError, Tools};
use mcp_types::{ErrorObject, ServerNotification, code};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use support::*;

async fn alpha() -> String {
    "alpha ran".to_owned()
}

async fn delta() -> String {
    "delta ran".to_owned()
}

async fn gamma() -> String {
    "gamma ran".to_owned()
}

fn alpha_server() -> Server {
    Server::builder("flaky", "1").tools(Tools::new().add("alpha", "", alpha)).build().unwrap()
}

fn gamma_server() -> Server {
    Server::builder("steady", "1").tools(Tools::new().add("gamma", "", gamma)).build().unwrap()
}

/// The JSON-RPC error of a call that must fail with one.
fn protocol_error(outcome: Result<mcp_types::CallToolResult, ClientError>) -> ErrorObject {
    match outcome {
        Err(ClientError::Protocol(e)) => e,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

/// Waits for a `tools/list_changed` among a legacy client's notifications.
async fn tools_changed(rx: &mut tokio::sync::broadcast::Receiver<ServerNotification>, when: &str) {
    bounded(&format!("tools/list_changed {when}"), async {
        loop {
            match rx.recv().await {
                Ok(ServerNotification::ToolListChanged(_)) => return,
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(e) => panic!("the notifications ended: {e}"),
            }
        }
    })
    .await;
}

async fn down_and_back(legacy_link: bool) {
    let mut flaky = serve(alpha_server()).await;
    let port = flaky.addr;
    let steady = serve(gamma_server()).await;
    let flaky_config =
        if legacy_link { legacy_upstream("flaky", &flaky.url()) } else { upstream("flaky", &flaky.url()) };
    let front = front(vec![flaky_config, upstream("steady", &steady.url())]).await;
    let downstream = client(&front.url(), false, Handlers::default()).await;
    let watcher = client(&front.url(), true, Handlers::default()).await;
    let mut announced = watcher.notifications();
    let mut names = tool_names(&downstream).await.unwrap();
    names.sort();
    assert_eq!(names, ["alpha", "gamma"]);
    assert_eq!(front.upstream("flaky").connects, 1);

    flaky.stop().await;
    // The gateway learns of it from the next call that fails on the transport.
    let error = protocol_error(bounded("calling alpha", downstream.call_tool("alpha", json!({}))).await);
    assert_eq!(error.code, code::INTERNAL_ERROR, "{error:?}");
    let data = error.data.clone().unwrap_or_else(|| panic!("the error names the upstream: {error:?}"));
    assert_eq!(data["upstream"], "flaky", "{error:?}");
    // Connection refused: the call never reached the upstream, and the error says so.
    assert_eq!(data["outcome"], "not executed", "whether the call may have run: {error:?}");

    let down = front.wait_state("flaky", UpstreamState::Down).await;
    assert!(down.last_error.is_some(), "a down upstream says why: {down:?}");
    tools_changed(&mut announced, "when the upstream went down").await;
    assert_eq!(wait_tool(&downstream, "alpha", false).await, ["gamma"], "the rest is still served");
    assert_eq!(front.upstream("steady").state, UpstreamState::Ready);

    // A new server on the same address: the reconnect (with backoff) finds it.
    let back = serve_on(alpha_server(), port).await;
    let ready = front.wait_state("flaky", UpstreamState::Ready).await;
    assert_eq!(ready.connects, 2, "reconnected once: {ready:?}");
    tools_changed(&mut announced, "when the upstream came back").await;
    wait_tool(&downstream, "alpha", true).await;
    let called = bounded("calling alpha again", downstream.call_tool("alpha", json!({}))).await.unwrap();
    assert_eq!(text_of(&called), "alpha ran");

    // The new connection is watched for changes like the first one.
    back.server.set_tools(Tools::new().add("alpha", "", alpha).add("delta", "", delta)).unwrap();
    tools_changed(&mut announced, "when the upstream that came back added a tool").await;
    let mut names = wait_tool(&downstream, "delta", true).await;
    names.sort();
    assert_eq!(names, ["alpha", "delta", "gamma"]);

    downstream.close().await;
    watcher.close().await;
    front.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_modern_upstream_that_goes_down_is_left_out_and_comes_back_on_the_same_port() {
    down_and_back(false).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_legacy_upstream_that_goes_down_is_left_out_and_comes_back_on_the_same_port() {
    down_and_back(true).await;
}

async fn lingers() -> String {
    tokio::time::sleep(Duration::from_secs(120)).await;
    "lingered".to_owned()
}

/// A call in flight when its upstream goes away may have run: the error says "unknown".
#[tokio::test(flavor = "multi_thread")]
async fn a_call_cut_off_by_its_upstream_going_away_has_an_unknown_outcome() {
    for legacy_link in [false, true] {
        let link = if legacy_link { "legacy" } else { "modern" };
        let server = Server::builder("leaving", "1").tools(Tools::new().add("lingers", "", lingers)).build();
        let mut leaving = serve(server.unwrap()).await;
        let config = if legacy_link {
            legacy_upstream("leaving", &leaving.url())
        } else {
            upstream("leaving", &leaving.url())
        };
        let front = front(vec![config]).await;
        let downstream = client(&front.url(), false, Handlers::default()).await;
        let calling = downstream.clone();
        let call = tokio::spawn(async move { calling.call_tool("lingers", json!({})).await });
        poll(&format!("{link}: the call in flight"), DEADLINE, || async {
            let status = front.upstream("leaving");
            if status.in_flight == 1 { Ok(()) } else { Err(format!("{status:?}")) }
        })
        .await;
        leaving.stop().await;
        let error = protocol_error(bounded("the cut-off call", call).await.unwrap());
        assert_eq!(error.code, code::INTERNAL_ERROR, "{link}: {error:?}");
        let data = error.data.clone().unwrap_or_else(|| panic!("{link}: data: {error:?}"));
        assert_eq!(data["upstream"], "leaving", "{link}: {error:?}");
        assert_eq!(data["outcome"], "unknown", "{link}: the call may have run: {error:?}");
        front.wait_state("leaving", UpstreamState::Down).await;
        downstream.close().await;
        front.close().await;
    }
}

/// A read-only tool (`readOnlyHint`) that answers `answer` after `wait`, telling `started`
/// when it runs.
fn peeking_server(answer: &'static str, wait: Duration, started: Arc<tokio::sync::Notify>) -> Server {
    let def = mcp_types::Tool::without_arguments("peek")
        .with_annotations(mcp_types::ToolAnnotations { read_only_hint: Some(true), ..Default::default() });
    let peek = move || {
        let started = started.clone();
        async move {
            started.notify_one();
            tokio::time::sleep(wait).await;
            answer.to_owned()
        }
    };
    Server::builder("peeking", "1").tools(Tools::new().add_tool(def, peek)).build().unwrap()
}

/// A read-only call whose upstream goes away under it is sent again once the upstream is
/// back (here: restarted on the same port), and its caller gets the answer; the status counts
/// the retry. (A call that is not read-only gets an error instead: the test above.)
#[tokio::test(flavor = "multi_thread")]
async fn a_read_only_call_cut_off_by_its_upstream_is_sent_again() {
    for legacy_link in [false, true] {
        let link = if legacy_link { "legacy" } else { "modern" };
        let running = Arc::new(tokio::sync::Notify::new());
        let mut first = serve(peeking_server("first", Duration::from_secs(120), running.clone())).await;
        let addr = first.addr;
        let url = first.url();
        let config = if legacy_link { legacy_upstream("peeking", &url) } else { upstream("peeking", &url) };
        let front = front(vec![config]).await;
        let downstream = client(&front.url(), false, Handlers::default()).await;
        let calling = downstream.clone();
        let call = tokio::spawn(async move { calling.call_tool("peek", json!({})).await });
        // The first upstream runs the tool: the call has reached it, its outcome is unknown.
        bounded(&format!("{link}: the call running upstream"), running.notified()).await;
        first.stop().await;
        let second = serve_on(peeking_server("second", Duration::ZERO, Arc::default()), addr).await;
        let result =
            bounded("the call sent again", call).await.unwrap().unwrap_or_else(|e| panic!("{link}: {e}"));
        assert_eq!(result.is_error, None, "{link}: {result:?}");
        let text = serde_json::to_string(&result.content).unwrap();
        assert!(text.contains("second"), "{link}: answered by the restarted upstream: {text}");
        assert_eq!(front.upstream("peeking").retries, 1, "{link}: {:?}", front.upstream("peeking"));
        downstream.close().await;
        front.close().await;
        drop(second);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hanging_upstream_does_not_hold_up_the_start() {
    let (hanging, _held) = silent().await;
    let steady = serve(gamma_server()).await;
    let mut stuck = upstream("stuck", &format!("http://{hanging}/mcp"));
    stuck.start_timeout = Duration::from_secs(1);
    // `front` bounds the start: a start that waits for the hanging upstream fails the test.
    let front = front(vec![stuck, upstream("steady", &steady.url())]).await;
    assert_eq!(front.upstream("steady").state, UpstreamState::Ready);

    let down = front.wait_state("stuck", UpstreamState::Down).await;
    let why = down.last_error.clone().unwrap_or_default().to_lowercase();
    // Two timers of the same length race: the gateway's own ("not ready within 1000 ms") and
    // the client's probe ("no answer within 1s"); either names the limit.
    assert!(
        why.contains("within 1000 ms") || why.contains("within 1s"),
        "the hanging upstream's error names the timeout: {down:?}"
    );
    assert_eq!(down.tools, 0);

    let downstream = client(&front.url(), false, Handlers::default()).await;
    assert_eq!(tool_names(&downstream).await.unwrap(), ["gamma"]);
    downstream.close().await;
    front.close().await;
}

/// An extractor that refuses the request the way a server refuses bad params: `-32602`.
struct Refuse;

impl FromCall for Refuse {
    fn from_call(_: &Call) -> Result<Self, Rejection> {
        Err(Rejection::Protocol(ErrorObject::invalid_params("refused by the upstream: bad params")))
    }
}

async fn refuses(_: Refuse) -> String {
    unreachable!("the extractor refuses first")
}

async fn fails() -> Result<String, ToolError> {
    Err(ToolError::new("it broke"))
}

async fn slow() -> String {
    tokio::time::sleep(Duration::from_secs(20)).await;
    "too late".to_owned()
}

#[derive(Deserialize, JsonSchema)]
struct Count {
    n: u32,
}

async fn count(Args(Count { n }): Args<Count>) -> String {
    format!("n = {n}")
}

fn erring_server() -> Server {
    let tools = Tools::new()
        .add("fails", "A tool error", fails)
        .add("refuses", "A JSON-RPC error", refuses)
        .add("slow", "Answers after 20 s", slow)
        .add("count", "Takes a number", count);
    Server::builder("erring", "1").tools(tools).build().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn tool_errors_upstream_errors_and_timeouts_stay_in_their_layers() {
    let up = serve(erring_server()).await;
    let mut config = upstream("erring", &up.url());
    config.request_timeout = Duration::from_secs(1);
    let front = front(vec![config]).await;
    for legacy in [false, true] {
        let era = if legacy { "legacy" } else { "modern" };
        let downstream = client(&front.url(), legacy, Handlers::default()).await;

        let failed = bounded("calling fails", downstream.call_tool("fails", json!({}))).await;
        let failed = failed.unwrap_or_else(|e| panic!("{era}: a tool error is a result, not {e:?}"));
        assert!(failed.is_error(), "{era}: {failed:?}");
        assert!(text_of(&failed).contains("it broke"), "{era}: the upstream's message: {failed:?}");

        let refused =
            protocol_error(bounded("calling refuses", downstream.call_tool("refuses", json!({}))).await);
        assert_eq!(
            refused.code,
            code::INVALID_PARAMS,
            "{era}: the upstream's code passes through: {refused:?}"
        );
        assert!(refused.message.contains("refused by the upstream"), "{era}: and its message: {refused:?}");

        // Arguments of the wrong type are refused by the schema check, as a tool error.
        let typed = bounded("calling count", downstream.call_tool("count", json!({"n": "x"}))).await;
        let typed = typed.unwrap_or_else(|e| panic!("{era}: a schema violation is a tool error, not {e:?}"));
        assert!(typed.is_error(), "{era}: {typed:?}");
        let counted = bounded("calling count", downstream.call_tool("count", json!({"n": 3}))).await.unwrap();
        assert_eq!(text_of(&counted), "n = 3", "{era}");

        let late = protocol_error(bounded("calling slow", downstream.call_tool("slow", json!({}))).await);
        assert_eq!(late.code, code::INTERNAL_ERROR, "{era}: {late:?}");
        let data = late.data.clone().unwrap_or_else(|| panic!("{era}: data: {late:?}"));
        assert_eq!(data["upstream"], "erring", "{era}: {late:?}");
        assert_eq!(data["outcome"], "unknown", "{era}: a request that timed out may have run: {late:?}");
        downstream.close().await;
    }
    // A timeout is no reason to think the upstream is gone; only the timeouts count as
    // failures (a tool error is a result, a JSON-RPC error the upstream's own answer).
    let status = front.upstream("erring");
    assert_eq!(status.state, UpstreamState::Ready, "{status:?}");
    assert_eq!((status.failures, status.in_flight), (2, 0), "{status:?}");
    front.close().await;
}

/// A list says in its `_meta` which upstreams it leaves out, and why, in both eras.
#[tokio::test(flavor = "multi_thread")]
async fn a_list_names_the_upstreams_it_leaves_out() {
    let healthy = serve(alpha_server()).await;
    // A port nothing listens on: the upstream is down at once (connection refused). Bound and
    // never listened on, held to the end: never handed to another bind.
    let refused = tokio::net::TcpSocket::new_v4().unwrap();
    refused.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let closed = refused.local_addr().unwrap();
    let front =
        front(vec![upstream("healthy", &healthy.url()), upstream("gone", &format!("http://{closed}/mcp"))])
            .await;
    for legacy in [false, true] {
        let downstream = client(&front.url(), legacy, Handlers::default()).await;
        let page = bounded("tools/list", downstream.list_tools(None)).await.unwrap();
        let meta = page.meta.as_ref().map(|m| m.extra.clone()).unwrap_or_default();
        let unavailable = meta.get(mcp_gateway::UNAVAILABLE_META).and_then(|v| v.as_array()).cloned();
        let unavailable = unavailable
            .unwrap_or_else(|| panic!("legacy={legacy}: no {} in {meta:?}", mcp_gateway::UNAVAILABLE_META));
        assert_eq!(unavailable.len(), 1, "{unavailable:?}");
        assert_eq!(unavailable[0]["upstream"], "gone");
        assert_eq!(unavailable[0]["state"], "down");
        assert!(unavailable[0]["error"].as_str().is_some_and(|e| !e.is_empty()), "{unavailable:?}");
        downstream.close().await;
    }
    front.close().await;
}
