//! Change notifications: modern `subscriptions/listen` streams and legacy session notifications.

mod support;

use std::time::Duration;

use mcp_server::{Change, Prompts, Resources, Server, Tools};
use mcp_types::Resource;
use serde_json::{Value, json};
use support::*;

async fn hello() -> &'static str {
    "hello"
}

fn server() -> Server {
    Server::builder("notify-test", "1")
        .tools(Tools::new().add("hello", "Hello", hello))
        .prompts(Prompts::new().add("p", "A prompt", hello_prompt))
        .resources(Resources::new().text(Resource::new("test://watched", "watched"), "v1"))
        .build()
        .unwrap()
}

async fn hello_prompt() -> String {
    "hi".to_owned()
}

fn listen(id: Value, filter: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {"_meta": meta(json!({})), "notifications": filter}})
}

#[tokio::test]
async fn listen_streams_are_acknowledged_tagged_and_filtered() {
    let server = server();
    let mut p = Peer::start(server.clone());
    p.send(listen(
        json!("tools-sub"),
        json!({"toolsListChanged": true, "resourceSubscriptions": ["test://watched"]}),
    ))
    .await;
    let ack = p.recv().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "tools-sub");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true, "resourceSubscriptions": ["test://watched"]})
    );
    p.send(listen(json!(9), json!({"promptsListChanged": true}))).await;
    let ack = p.recv().await;
    assert_eq!(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 9);

    server.notify(Change::Tools);
    let n = p.recv().await;
    assert_eq!(n["method"], "notifications/tools/list_changed");
    assert_eq!(n["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "tools-sub");
    p.expect_silence(Duration::from_millis(100)).await; // the prompts subscription got nothing

    server.notify(Change::Prompts);
    let n = p.recv().await;
    assert_eq!(n["method"], "notifications/prompts/list_changed");
    assert_eq!(n["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 9);

    server.resource_updated("test://other");
    server.resource_updated("test://watched");
    let n = p.recv().await;
    assert_eq!(n["params"]["uri"], "test://watched");

    // Cancelling a subscription ends it without a response; shutdown ends the rest gracefully.
    p.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}})).await;
    p.expect_silence(Duration::from_millis(100)).await;
    server.shutdown();
    let done = p.recv().await;
    assert_eq!(done["id"], "tools-sub");
    assert_eq!(done["result"]["resultType"], "complete");
    assert_eq!(done["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "tools-sub");
    validate_result(MODERN, "SubscriptionsListenResult", &done);
    p.close().await;
}

#[tokio::test]
async fn legacy_sessions_get_list_changes_and_subscribed_updates() {
    let server = server();
    let mut p = Peer::start(server.clone());
    let init = p.initialize(json!({})).await;
    assert_eq!(init["result"]["capabilities"]["resources"], json!({"listChanged": true, "subscribe": true}));
    let r = p.request(json!(1), "resources/subscribe", json!({"uri": "test://watched"})).await;
    assert_eq!(r["result"], json!({}));
    server.resource_updated("test://watched");
    let n = p.recv().await;
    assert_eq!(n["method"], "notifications/resources/updated");
    assert!(n["params"].get("_meta").is_none());
    server.notify(Change::Tools);
    assert_eq!(p.recv().await["method"], "notifications/tools/list_changed");
    let r = p.request(json!(2), "resources/unsubscribe", json!({"uri": "test://watched"})).await;
    assert_eq!(r["result"], json!({}));
    server.resource_updated("test://watched");
    p.expect_silence(Duration::from_millis(150)).await;
    // Unknown URIs: -32002 in legacy revisions.
    let r = p.request(json!(3), "resources/read", json!({"uri": "test://missing"})).await;
    assert_eq!(r["error"]["code"], -32002);
    assert_eq!(r["error"]["data"]["uri"], "test://missing");
    p.close().await;
}

#[tokio::test]
async fn resources_and_prompts_are_served_in_both_eras() {
    let mut p = Peer::start(server());
    let r = p
        .request(json!(1), "resources/read", json!({"_meta": meta(json!({})), "uri": "test://watched"}))
        .await;
    validate_result(MODERN, "ReadResourceResult", &r);
    assert_eq!(r["result"]["contents"][0]["text"], "v1");
    assert_eq!(r["result"]["cacheScope"], "private");
    let r = p
        .request(json!(2), "resources/read", json!({"_meta": meta(json!({})), "uri": "test://missing"}))
        .await;
    assert_eq!(r["error"]["code"], -32602);
    assert_eq!(r["error"]["data"]["uri"], "test://missing");
    let r = p.request(json!(3), "prompts/get", json!({"_meta": meta(json!({})), "name": "p"})).await;
    validate_result(MODERN, "GetPromptResult", &r);
    assert_eq!(r["result"]["messages"][0]["content"]["text"], "hi");
    p.close().await;
}
