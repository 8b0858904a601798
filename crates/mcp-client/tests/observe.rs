//! A client's `RequestObserver` over a real server on 127.0.0.1: told of each request once, with
//! its context and how it ended — a result, a tool's error, a JSON-RPC error, a timeout, a
//! request given up — and the watch's `traceparent` is what the server receives.
#![cfg(feature = "http")]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::observe::{FinishedRequest, RequestObserver, RequestOutcome, RequestWatch, StartedRequest};
use mcp_client::transport::http::HttpConfig;
use mcp_client::{ClientBuilder, EraCache, RequestOptions};
use mcp_server::{Meta, Server, ToolError, Tools};
use mcp_types::trace::{TRACEPARENT, TRACESTATE, TraceParent};
use mcp_types::{CallToolRequestParams, RequestId};

/// What the observer was told of one request.
#[derive(Debug, Clone, PartialEq)]
struct Told {
    method: String,
    name: Option<String>,
    parent: Option<TraceParent>,
    transport: &'static str,
    id: Option<RequestId>,
    outcome: RequestOutcome,
}

/// Records every request; its watches send `SPAN` as the request's span.
#[derive(Default)]
struct Recorder(Arc<Mutex<Vec<Told>>>);

const SPAN: [u8; 8] = [9; 8];

const ROOT: TraceParent = TraceParent { trace_id: [5; 16], span_id: [6; 8], sampled: true };

struct Watch {
    told: Told,
    all: Arc<Mutex<Vec<Told>>>,
}

impl RequestObserver for Recorder {
    fn start(&self, request: &StartedRequest<'_>) -> Option<Box<dyn RequestWatch>> {
        let told = Told {
            method: request.method.to_owned(),
            name: request.name.map(str::to_owned),
            parent: request.context.parent,
            transport: request.transport,
            id: None,
            outcome: RequestOutcome::Failed,
        };
        Some(Box::new(Watch { told, all: self.0.clone() }))
    }
}

impl RequestWatch for Watch {
    /// A child of the request's parent, or a trace of its own.
    fn traceparent(&self) -> Option<TraceParent> {
        Some(self.told.parent.map_or(ROOT, |p| p.child(SPAN)))
    }

    fn finish(self: Box<Self>, finished: &FinishedRequest<'_>) {
        let mut told = self.told;
        told.id = finished.id.cloned();
        told.outcome = finished.outcome;
        self.all.lock().unwrap().push(told);
    }
}

/// The `traceparent` and `tracestate` the tool was called with, `|` between.
async fn seen_parent(Meta(meta): Meta) -> String {
    let get = |key| meta.extra.get(key).and_then(|v| v.as_str()).unwrap_or("none").to_owned();
    format!("{}|{}", get(TRACEPARENT), get(TRACESTATE))
}

async fn fails() -> Result<String, ToolError> {
    Err(ToolError::new("it failed"))
}

async fn slow() -> String {
    tokio::time::sleep(Duration::from_secs(30)).await;
    "late".into()
}

#[tokio::test]
async fn each_request_is_told_once_with_its_context_and_outcome() {
    let tools = Tools::new()
        .add("seen_parent", "Says the traceparent it got", seen_parent)
        .add("fails", "Fails", fails)
        .add("slow", "Takes its time", slow);
    let server = Server::builder("observed", "1").tools(tools).build().unwrap();
    let bound = mcp_http::bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = bound.local_addr();
    let stop = mcp_server::CancellationToken::new();
    let serving = tokio::spawn({
        let stop = stop.clone();
        async move {
            let config = mcp_http::HttpConfig::for_bind(addr);
            let _ =
                mcp_http::serve_until(server, bound, Some(config), stop.cancelled_owned(), Duration::ZERO)
                    .await;
        }
    });

    let recorder = Recorder::default();
    let told = recorder.0.clone();
    let client = ClientBuilder::new("observe-test", "1")
        .era_cache(EraCache::new())
        .observe(Arc::new(recorder))
        .connect_http(HttpConfig::new(format!("http://{addr}/mcp")))
        .await
        .unwrap();
    told.lock().unwrap().clear();
    let parent = TraceParent::parse("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01").unwrap();
    let traced = RequestOptions::new().meta(TRACEPARENT, parent.to_string().into());

    // A result: the server got the watch's span as the request's parent, not the options' own.
    let result = client.call_tool_with(&CallToolRequestParams::new("seen_parent"), &traced).await.unwrap();
    let seen = |result: &mcp_types::CallToolResult| {
        serde_json::to_value(&result.content[0]).unwrap()["text"].as_str().unwrap().to_owned()
    };
    assert_eq!(seen(&result), format!("{}|none", parent.child(SPAN)));
    // A request's own keys give way whole to the watch's span: a state of no trace of its (its
    // traceparent malformed) does not go along with the new one.
    let garbage = RequestOptions::new().meta(TRACEPARENT, "garbage".into()).meta(TRACESTATE, "a=1".into());
    let result = client.call_tool_with(&CallToolRequestParams::new("seen_parent"), &garbage).await.unwrap();
    assert_eq!(seen(&result), format!("{ROOT}|none"));
    // A tool's error, a JSON-RPC error.
    let failed = client.call_tool_with(&CallToolRequestParams::new("fails"), &traced).await.unwrap();
    assert_eq!(failed.is_error, Some(true));
    let unknown = client.call_tool_with(&CallToolRequestParams::new("nope"), &RequestOptions::new()).await;
    assert!(unknown.is_err());
    // A timeout, and a request its caller gave up on.
    let timed = RequestOptions::new().timeout(Duration::from_millis(200));
    assert!(client.call_tool_with(&CallToolRequestParams::new("slow"), &timed).await.is_err());
    let dropped = tokio::time::timeout(
        Duration::from_millis(200),
        client.call_tool_with(&CallToolRequestParams::new("slow"), &RequestOptions::new()),
    )
    .await;
    assert!(dropped.is_err(), "given up");

    // The calls (a call may list the tools first, for their output schemas: a request too).
    let told: Vec<Told> = told.lock().unwrap().iter().filter(|t| t.method == "tools/call").cloned().collect();
    let outcomes: Vec<(&str, RequestOutcome)> =
        told.iter().map(|t| (t.name.as_deref().unwrap_or(""), t.outcome)).collect();
    let unknown_code = match unknown.unwrap_err() {
        mcp_client::ClientError::Protocol(e) => e.code,
        other => panic!("{other}"),
    };
    assert_eq!(
        outcomes,
        [
            ("seen_parent", RequestOutcome::Success),
            ("seen_parent", RequestOutcome::Success),
            ("fails", RequestOutcome::ToolError),
            ("nope", RequestOutcome::Error { code: unknown_code }),
            ("slow", RequestOutcome::Timeout),
            ("slow", RequestOutcome::Cancelled),
        ],
        "{told:#?}"
    );
    for request in &told {
        assert_eq!(request.transport, "tcp");
        assert!(request.id.is_some(), "{request:?}");
    }
    assert_eq!(told[0].parent, Some(parent), "the options' own context");
    assert_eq!(told[1].parent, None, "a malformed traceparent is none");
    assert_eq!(told[3].parent, None, "no context: none");
    client.close().await;
    stop.cancel();
    let _ = serving.await;
}
