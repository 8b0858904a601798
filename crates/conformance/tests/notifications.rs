//! What the server sends besides responses: progress, log messages, and change notifications
//! on `subscriptions/listen` streams (modern) and in legacy sessions.

mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::*;

const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

fn methods(messages: &[Value]) -> Vec<&str> {
    messages.iter().map(|m| m["method"].as_str().unwrap_or("<response>")).collect()
}

/// Checks the progress notifications sent before the result.
fn check_progress(before: &[Value], token: &Value) {
    assert!(before.len() >= 3, "at least 3 progress notifications: {before:?}");
    let mut last = f64::NEG_INFINITY;
    for n in before {
        assert_eq!(n["method"], "notifications/progress", "{n}");
        assert_eq!(&n["params"]["progressToken"], token, "{n}");
        assert_eq!(n["params"]["total"], 100.0, "{n}");
        let progress = n["params"]["progress"].as_f64().unwrap();
        assert!(progress > last, "progress must increase: {before:?}");
        last = progress;
    }
    assert_eq!(last, 100.0);
}

#[tokio::test]
async fn progress_is_reported_before_the_result_on_modern() {
    let mut client = Client::start();
    let mut meta = meta(json!({}));
    meta["progressToken"] = json!("progress-test-1");
    let params = json!({"_meta": meta, "name": "test_tool_with_progress"});
    let started = Instant::now();
    let (before, response) = client.exchange(json!(1), "tools/call", params).await;
    assert!(started.elapsed() >= Duration::from_millis(100), "the steps are ~50 ms apart");
    check_progress(&before, &json!("progress-test-1"));
    assert_eq!(response["result"]["resultType"], "complete", "{response}");
    client.close().await;
}

#[tokio::test]
async fn progress_is_reported_before_the_result_on_legacy() {
    let mut client = Client::legacy(json!({})).await;
    let params = json!({"_meta": {"progressToken": 7}, "name": "test_tool_with_progress"});
    let (before, response) = client.exchange(json!(1), "tools/call", params).await;
    check_progress(&before, &json!(7));
    assert_eq!(first_text(&response), "Progress test completed");
    client.close().await;
}

#[tokio::test]
async fn progress_is_not_reported_without_a_token() {
    let mut client = Client::start();
    let (before, _) = client
        .exchange(json!(1), "tools/call", modern(json!({}), json!({"name": "test_tool_with_progress"})))
        .await;
    assert!(before.is_empty(), "{before:?}");
    client.close().await;
}

#[tokio::test]
async fn logging_tool_logs_three_messages_after_set_level_on_legacy() {
    let mut client = Client::legacy(json!({})).await;
    let r = client.request(json!(1), "logging/setLevel", json!({"level": "debug"})).await;
    assert_eq!(r["result"], json!({}), "{r}");
    let (before, response) =
        client.exchange(json!(2), "tools/call", json!({"name": "test_tool_with_logging"})).await;
    let texts: Vec<&Value> = before.iter().map(|m| &m["params"]["data"]).collect();
    assert_eq!(texts, ["Tool execution started", "Tool processing data", "Tool execution completed"]);
    assert!(before.iter().all(|m| m["method"] == "notifications/message" && m["params"]["level"] == "info"));
    assert_eq!(first_text(&response), "Logging test completed");
    client.close().await;
}

#[tokio::test]
async fn legacy_log_level_filters_messages() {
    let mut client = Client::legacy(json!({})).await;
    client.request(json!(1), "logging/setLevel", json!({"level": "warning"})).await;
    let (before, _) =
        client.exchange(json!(2), "tools/call", json!({"name": "test_tool_with_logging"})).await;
    assert!(before.is_empty(), "info messages are below warning: {before:?}");
    client.close().await;
}

#[tokio::test]
async fn modern_requests_without_a_log_level_get_no_log_messages() {
    let mut client = Client::start();
    for (id, tool) in ["test_tool_with_logging", "test_logging_tool"].into_iter().enumerate() {
        let started = Instant::now();
        let params = modern(json!({}), json!({"name": tool}));
        let (before, response) = client.exchange(json!(id), "tools/call", params).await;
        assert!(before.is_empty(), "{tool}: {before:?}");
        assert_eq!(response["result"]["resultType"], "complete", "{response}");
        assert!(started.elapsed() < Duration::from_millis(500), "{tool} must answer fast");
    }
    client.close().await;
}

#[tokio::test]
async fn modern_log_level_selects_messages() {
    let mut client = Client::start();
    for (id, (level, count)) in [("debug", 3), ("info", 2), ("error", 0)].into_iter().enumerate() {
        let mut meta = meta(json!({}));
        meta["io.modelcontextprotocol/logLevel"] = json!(level);
        let params = json!({"_meta": meta, "name": "test_logging_tool"});
        let (before, _) = client.exchange(json!(id), "tools/call", params).await;
        assert_eq!(before.len(), count, "level {level}: {before:?}");
        assert!(before.iter().all(|m| m["method"] == "notifications/message"), "{before:?}");
    }
    client.close().await;
}

/// Opens a `subscriptions/listen` stream and checks its acknowledgement.
async fn listen(client: &mut Client, id: &str, filter: Value) {
    let params = modern(json!({}), json!({"notifications": filter}));
    client
        .send(json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": params}))
        .await;
    let ack = client.recv().await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "the first frame is the ack: {ack}"
    );
    assert_eq!(ack["params"]["_meta"][SUBSCRIPTION_ID], id, "{ack}");
    assert_eq!(ack["params"]["notifications"], filter, "{ack}");
}

/// Calls a trigger tool on another request; returns every other message that arrives.
async fn trigger(client: &mut Client, id: i64, tool: &str) -> Vec<Value> {
    let (mut messages, response) =
        client.exchange(json!(id), "tools/call", modern(json!({}), json!({"name": tool}))).await;
    assert_eq!(response["result"]["resultType"], "complete", "{response}");
    messages.extend(client.drain(Duration::from_millis(200)).await);
    messages
}

fn tagged<'a>(messages: &'a [Value], subscription: &str) -> Vec<&'a str> {
    messages
        .iter()
        .filter(|m| m["params"]["_meta"][SUBSCRIPTION_ID] == subscription)
        .map(|m| m["method"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn list_changes_fan_out_to_matching_subscriptions_only() {
    let mut client = Client::start();
    listen(&mut client, "listen-tools", json!({"toolsListChanged": true})).await;
    listen(&mut client, "listen-prompts", json!({"promptsListChanged": true})).await;

    let messages = trigger(&mut client, 1, "test_trigger_tool_change").await;
    assert_eq!(methods(&messages), ["notifications/tools/list_changed"], "{messages:?}");
    assert_eq!(tagged(&messages, "listen-tools"), ["notifications/tools/list_changed"]);
    assert!(tagged(&messages, "listen-prompts").is_empty(), "{messages:?}");

    let messages = trigger(&mut client, 2, "test_trigger_prompt_change").await;
    assert_eq!(methods(&messages), ["notifications/prompts/list_changed"], "{messages:?}");
    assert_eq!(tagged(&messages, "listen-prompts"), ["notifications/prompts/list_changed"]);

    // Cancelling a subscription ends it without a response.
    for id in ["listen-tools", "listen-prompts"] {
        let params = json!({"requestId": id, "reason": "done"});
        client.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})).await;
    }
    // Notifications are handled concurrently with later requests: let the cancellations land.
    assert!(client.drain(Duration::from_millis(100)).await.is_empty(), "a cancelled request has no response");
    let messages = trigger(&mut client, 3, "test_trigger_tool_change").await;
    assert!(messages.is_empty(), "{messages:?}");
    client.close().await;
}

#[tokio::test]
async fn a_legacy_session_hears_list_changes() {
    let mut client = Client::legacy(json!({})).await;
    let (mut messages, response) =
        client.exchange(json!(1), "tools/call", json!({"name": "test_trigger_tool_change"})).await;
    assert_eq!(first_text(&response), "Tool list change announced");
    messages.extend(client.drain(Duration::from_millis(200)).await);
    assert_eq!(methods(&messages), ["notifications/tools/list_changed"], "{messages:?}");
    client.close().await;
}

#[tokio::test]
async fn legacy_resource_subscriptions_are_accepted() {
    let mut client = Client::legacy(json!({})).await;
    for (id, method) in ["resources/subscribe", "resources/unsubscribe"].into_iter().enumerate() {
        let r = client.request(json!(id), method, json!({"uri": "test://watched-resource"})).await;
        assert_eq!(r["result"], json!({}), "{r}");
    }
    client.close().await;
}
