//! A tool's result crosses the gateway from a modern upstream to a modern caller as the upstream
//! wrote it: its `content` and the members the gateway does not own are passed on byte for byte,
//! never decoded and encoded again; what the gateway does own is rewritten (`resultType`, the
//! identity in `_meta`), and what it must check is checked (`isError`, `structuredContent`
//! against the tool's `outputSchema`). A legacy caller is answered through mcp-client's own
//! call (its handlers answer the upstream's questions), with the same members.

mod support;

use mcp_client::{Handlers, RequestOptions};
use mcp_server::{Json, PassedResult, Rejection, Server, Tools};
use mcp_types::methods::CallTool;
use mcp_types::{CallToolRequestParams, Tool};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};
use support::*;

/// What the upstream's `fixed` tool answers, as JSON text: an escaped character a decoder would
/// turn into UTF-8, a member no revision defines, and `_meta` of the upstream's own.
const FIXED: &str =
    r#"{"content":[{"type":"text","text":"caf\u00e9 \ud83d\ude00"}],"future":{"n":1.50},"_meta":{"k":"v"}}"#;

#[derive(Serialize, JsonSchema)]
struct Sum {
    sum: i64,
}

async fn sum() -> Json<Sum> {
    Json(Sum { sum: 3 })
}

fn upstream_server() -> Server {
    let passed = |text: &'static str| {
        move |_call: mcp_server::Call| async move {
            PassedResult::from_json(text).map_err(|e| Rejection::Internal(e.to_string()))
        }
    };
    let tools = Tools::new()
        .add_proxy(Tool::without_arguments("fixed"), passed(FIXED))
        .add_proxy(
            Tool::without_arguments("failing"),
            passed(r#"{"content":[{"type":"text","text":"no"}],"isError":true}"#),
        )
        .add("sum", "Adds", sum);
    Server::builder("upstream", "9.9.9").tools(tools).build().unwrap()
}

async fn raw_call(client: &mcp_client::Client, name: &str) -> (mcp_types::CallToolResult, Value, String) {
    let params = CallToolRequestParams::new(name);
    let (result, raw) =
        bounded("tools/call", client.request_raw::<CallTool>(&params, &RequestOptions::new()))
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    let text = raw.get().to_owned();
    (result, serde_json::from_str(&text).unwrap(), text)
}

#[tokio::test]
async fn a_tool_result_is_passed_on_as_the_upstream_wrote_it_in_each_era() {
    let upstream = serve(upstream_server()).await;
    let front = front(vec![support::upstream("up", &upstream.url())]).await;
    let gateway_name = front.gateway.server().info().name.clone();

    for legacy in [false, true] {
        let downstream = client(&front.url(), legacy, Handlers::default()).await;
        let names = wait_tool(&downstream, "fixed", true).await;
        assert!(names.contains(&"sum".to_owned()), "{names:?}");

        let (_, value, text) = raw_call(&downstream, "fixed").await;
        if legacy {
            assert_eq!(value["content"][0]["text"], "caf\u{e9} \u{1f600}", "{text}");
            assert_eq!(value["future"], json!({"n": 1.5}), "{text}");
        } else {
            assert!(
                text.starts_with(
                    r#"{"content":[{"type":"text","text":"caf\u00e9 \ud83d\ude00"}],"future":{"n":1.50},"#
                ),
                "content and unknown members byte for byte: {text}"
            );
        }
        assert_eq!(value["_meta"]["k"], "v", "the upstream's own _meta kept: {text}");
        if legacy {
            assert!(value.get("resultType").is_none(), "no resultType for a legacy caller: {text}");
            assert!(value["_meta"].get("io.modelcontextprotocol/serverInfo").is_none(), "{text}");
        } else {
            assert_eq!(value["resultType"], "complete", "{text}");
            assert_eq!(
                value["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], gateway_name,
                "the gateway's identity, not the upstream's: {text}"
            );
        }

        let (failing, value, _) = raw_call(&downstream, "failing").await;
        assert_eq!(failing.is_error, Some(true));
        assert_eq!(value["content"][0]["text"], "no");

        let (summed, _, _) = raw_call(&downstream, "sum").await;
        assert_eq!(summed.structured_content, Some(json!({"sum": 3})), "checked against its outputSchema");
        downstream.close().await;
    }
    front.close().await;
}
