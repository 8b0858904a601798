//! The trace context a caller sends in `_meta` (W3C Trace Context and Baggage, SEP-414) reaches
//! the upstream a call is forwarded to, in every era on either side: `traceparent` unchanged
//! when the gateway records no span of its own, the gateway's span as the parent when it does;
//! `tracestate` and `baggage` with it, each only in its W3C form and within W3C's limits.

mod support;

use std::sync::Arc;

use mcp_client::{Handlers, RequestOptions};
use mcp_server::observe::{Observed, Observer};
use mcp_server::{Meta, Server, Tools};
use mcp_types::trace::{BAGGAGE, TRACEPARENT, TRACESTATE, TraceParent};
use serde_json::{Value, json};
use support::*;

/// The trace keys of the `_meta` the upstream's tool was called with, as JSON text.
async fn seen(Meta(meta): Meta) -> String {
    let get = |key: &str| meta.extra.get(key).cloned().unwrap_or(Value::Null);
    json!({"traceparent": get(TRACEPARENT), "tracestate": get(TRACESTATE), "baggage": get(BAGGAGE)})
        .to_string()
}

fn upstream_server(tool: &'static str) -> Server {
    Server::builder("upstream", "1")
        .tools(Tools::new().add(tool, "Says what trace context came", seen))
        .build()
        .unwrap()
}

/// An observer that traces and records nothing: the gateway then makes a span id per request.
struct Traces;

impl Observer for Traces {
    fn finished(&self, _request: &Observed<'_>) {}

    fn traces(&self) -> bool {
        true
    }
}

const PARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01";

async fn call(client: &mcp_client::Client, tool: &str, meta: &[(&str, Value)]) -> Value {
    let mut options = RequestOptions::new();
    for (key, value) in meta {
        options = options.meta(*key, value.clone());
    }
    let params = mcp_types::CallToolRequestParams::new(tool);
    let result = bounded(tool, client.call_tool_with(&params, &options)).await.unwrap();
    serde_json::from_str(&text_of(&result)).unwrap()
}

#[tokio::test]
async fn the_callers_trace_context_reaches_the_upstream_in_every_era() {
    let modern = serve(upstream_server("seen_modern")).await;
    let legacy = serve(upstream_server("seen_legacy")).await;
    let front = front(vec![
        support::upstream("modern", &modern.url()),
        support::legacy_upstream("legacy", &legacy.url()),
    ])
    .await;
    let full = [
        (TRACEPARENT, json!(PARENT)),
        (TRACESTATE, json!("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE")),
        (BAGGAGE, json!("userId=alice,isProduction=false")),
    ];
    let parent = TraceParent::parse(PARENT).unwrap();

    for traced in [false, true] {
        if traced {
            assert!(front.gateway.server().observe(Arc::new(Traces)), "the observer is set once");
        }
        for downstream_legacy in [false, true] {
            let downstream = client(&front.url(), downstream_legacy, Handlers::default()).await;
            wait_tool(&downstream, "seen_legacy", true).await;
            for tool in ["seen_modern", "seen_legacy"] {
                let what = format!("{tool}, downstream legacy {downstream_legacy}, traced {traced}");
                let seen = call(&downstream, tool, &full).await;
                let sent = TraceParent::parse(seen["traceparent"].as_str().unwrap()).unwrap();
                assert_eq!(sent.trace_id, parent.trace_id, "{what}: the caller's trace");
                if traced {
                    assert_ne!(sent.span_id, parent.span_id, "{what}: the gateway's own span is the parent");
                } else {
                    assert_eq!(seen["traceparent"], PARENT, "{what}: passed through unchanged");
                }
                assert_eq!(seen["tracestate"], full[1].1, "{what}");
                assert_eq!(seen["baggage"], full[2].1, "{what}");

                // Baggage alone travels; a malformed tracestate, an oversized baggage do not.
                let seen = call(&downstream, tool, &[(BAGGAGE, json!("k=v"))]).await;
                assert_eq!(seen["baggage"], "k=v", "{what}");
                assert_eq!(seen["tracestate"], Value::Null, "{what}");
                assert_eq!(
                    seen["traceparent"].is_null(),
                    !traced,
                    "{what}: a span of the gateway's, when it traces"
                );
                let oversized = format!("k={}", "v".repeat(mcp_types::trace::BAGGAGE_LIMIT));
                let seen = call(
                    &downstream,
                    tool,
                    &[
                        (TRACEPARENT, json!(PARENT)),
                        (TRACESTATE, json!("Not Valid")),
                        (BAGGAGE, json!(oversized)),
                    ],
                )
                .await;
                assert_eq!(seen["tracestate"], Value::Null, "{what}");
                assert_eq!(seen["baggage"], Value::Null, "{what}");
                assert!(seen["traceparent"].is_string(), "{what}");
            }
            downstream.close().await;
        }
    }
    front.close().await;
}
