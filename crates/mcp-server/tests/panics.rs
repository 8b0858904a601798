//! A handler that panics fails its own request with `-32603` — answered, not dropped — and the
//! server goes on serving the same connection, in either era.

mod support;

use mcp_server::{Completions, Prompts, Resources, Server, Tools, UriVars};
use mcp_types::{PromptMessage, ResourceTemplate};
use serde_json::json;
use support::*;

async fn tool() -> String {
    panic!("a tool that panics");
}

async fn prompt() -> Vec<PromptMessage> {
    panic!("a prompt that panics");
}

async fn resource(_vars: UriVars) -> String {
    panic!("a resource that panics");
}

async fn fine() -> String {
    "still here".into()
}

fn server() -> Server {
    Server::builder("panics", "1")
        .tools(Tools::new().add("boom", "Panics", tool).add("fine", "Answers", fine))
        .prompts(Prompts::new().add("boom", "Panics", prompt))
        .resources(Resources::new().template(ResourceTemplate::new("boom://{id}", "boom"), resource))
        .completions(Completions::new().prompt_argument("boom", "x", |_request| async move {
            panic!("a completion that panics");
        }))
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_panicking_handler_fails_its_request_and_nothing_else() {
    let mut p = Peer::start(server());
    let m = meta(json!({}));
    let requests = [
        ("tools/call", json!({"_meta": m, "name": "boom", "arguments": {}}), "tool boom failed"),
        ("prompts/get", json!({"_meta": m, "name": "boom"}), "the prompt failed"),
        ("resources/read", json!({"_meta": m, "uri": "boom://1"}), "reading the resource failed"),
        (
            "completion/complete",
            json!({"_meta": m, "ref": {"type": "ref/prompt", "name": "boom"}, "argument": {"name": "x", "value": ""}}),
            "the completion failed",
        ),
    ];
    for (id, (method, params, says)) in requests.into_iter().enumerate() {
        let r = p.request(json!(id), method, params).await;
        assert_eq!(r["error"]["code"], -32603, "{method}: {r}");
        let message = r["error"]["message"].as_str().unwrap();
        assert!(message.contains(says) && message.contains("panicked"), "{method}: {message}");
    }
    let r = p.request(json!(9), "tools/call", json!({"_meta": m, "name": "fine", "arguments": {}})).await;
    assert_eq!(r["result"]["content"][0]["text"], "still here");

    // A legacy session too.
    let mut legacy = Peer::start(server());
    legacy.initialize(json!({})).await;
    let r = legacy.request(json!(1), "tools/call", json!({"name": "boom", "arguments": {}})).await;
    assert_eq!(r["error"]["code"], -32603);
    let r = legacy.request(json!(2), "tools/call", json!({"name": "fine", "arguments": {}})).await;
    assert_eq!(r["result"]["content"][0]["text"], "still here");
    legacy.close().await;
}
