//! Asking the client: one handler serves modern MRTR (input_required + requestState) and
//! legacy sessions (a real server→client request).

mod support;

use mcp_server::{Args, Peer as Client, Server, ToolError, Tools};
use mcp_types::{ElicitRequestFormParams, ElicitationSchema, PrimitiveSchemaDefinition, StringSchema};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use support::*;

fn string_form(message: &str, field: &str) -> ElicitRequestFormParams {
    let mut schema = ElicitationSchema::default();
    schema.properties.insert(field.to_owned(), PrimitiveSchemaDefinition::String(StringSchema::default()));
    schema.required = Some(vec![field.to_owned()]);
    ElicitRequestFormParams::new(message, schema)
}

fn answer_text(result: &mcp_types::ElicitResult, field: &str) -> String {
    result.content.as_ref().and_then(|c| c.get(field)).and_then(|v| v.as_str()).unwrap_or("?").to_owned()
}

#[derive(Deserialize, JsonSchema)]
struct Greeting {
    greeting: String,
}

async fn two_steps(client: Client, Args(Greeting { greeting }): Args<Greeting>) -> Result<String, ToolError> {
    let first = client.elicit("first", string_form("First name?", "name")).await?;
    let last = client.elicit("last", string_form("Last name?", "name")).await?;
    Ok(format!("{greeting}, {} {}!", answer_text(&first, "name"), answer_text(&last, "name")))
}

async fn needs_sampling(client: Client) -> Result<String, ToolError> {
    let params = mcp_types::CreateMessageRequestParams::new(
        vec![mcp_types::SamplingMessage::new(
            mcp_types::Role::User,
            mcp_types::SamplingContent::text("Capital of France?"),
        )],
        100,
    );
    let answer = client.sample("s", params).await?;
    Ok(format!(
        "model said: {}",
        answer.content.blocks().iter().filter_map(|b| b.as_text()).collect::<String>()
    ))
}

/// Puts two questions from another task, 20 ms apart, as a gateway relays another server's
/// concurrent requests; the handler is woken between them (as an upstream's acknowledgement
/// wakes a forwarding). A hold keeps the round open until both are in.
async fn gathered(client: Client) -> Result<String, ToolError> {
    let hold = client.hold();
    let (woken_tx, woken_rx) = tokio::sync::oneshot::channel();
    let (done_tx, done_rx) = tokio::sync::oneshot::channel();
    let asker = client.clone();
    tokio::spawn(async move {
        let first = asker.elicit("first", string_form("First name?", "name"));
        let second = asker.elicit("second", string_form("Last name?", "name"));
        let (mut first, mut second) = (Box::pin(first), Box::pin(second));
        let _ = futures_poll_once(first.as_mut()).await;
        let _ = woken_tx.send(());
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        let _ = futures_poll_once(second.as_mut()).await;
        drop(hold);
        let _ = done_tx.send(());
        std::future::pending::<()>().await;
    });
    // Woken once a question is in but the other is not: a poll that must not end the round.
    let _ = woken_rx.await;
    let _ = done_rx.await;
    std::future::pending().await
}

/// Polls `fut` once (it records its question and stays pending).
async fn futures_poll_once<F: std::future::Future + ?Sized>(fut: std::pin::Pin<&mut F>) -> bool {
    let mut fut = fut;
    std::future::poll_fn(|cx| std::task::Poll::Ready(fut.as_mut().poll(cx).is_ready())).await
}

fn server() -> Server {
    let tools = Tools::new()
        .add("two_steps", "Asks twice", two_steps)
        .add("needs_sampling", "Samples", needs_sampling)
        .add("gathered", "Asks twice from another task", gathered);
    Server::builder("mrtr-test", "1").tools(tools).build().unwrap()
}

fn call(id: i64, name: &str, caps: Value, extra: Value) -> Value {
    let mut params = json!({"_meta": meta(caps), "name": name, "arguments": {"greeting": "Hello"}});
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

fn accept(name: &str) -> Value {
    json!({"action": "accept", "content": {"name": name}})
}

#[tokio::test]
async fn modern_rounds_carry_earlier_answers_in_the_state() {
    let mut p = Peer::start(server());
    let caps = json!({"elicitation": {}});
    p.send(call(1, "two_steps", caps.clone(), json!({}))).await;
    let r1 = p.recv().await;
    mcp_testkit::assert_valid(MODERN, "InputRequiredResult", &r1["result"]);
    assert_eq!(r1["result"]["resultType"], "input_required");
    assert_eq!(r1["result"]["inputRequests"]["first"]["method"], "elicitation/create");
    assert_eq!(r1["result"]["inputRequests"]["first"]["params"]["message"], "First name?");
    let s1 = r1["result"]["requestState"].clone();

    p.send(call(
        2,
        "two_steps",
        caps.clone(),
        json!({"inputResponses": {"first": accept("Ada")}, "requestState": s1}),
    ))
    .await;
    let r2 = p.recv().await;
    assert_eq!(r2["result"]["resultType"], "input_required");
    assert!(r2["result"]["inputRequests"].get("first").is_none());
    assert_eq!(r2["result"]["inputRequests"]["last"]["params"]["message"], "Last name?");
    let s2 = r2["result"]["requestState"].clone();
    assert_ne!(s1, s2);

    // Only this round's answer is sent: the first comes back from the state.
    p.send(call(
        3,
        "two_steps",
        caps.clone(),
        json!({"inputResponses": {"last": accept("Lovelace")}, "requestState": s2.clone()}),
    ))
    .await;
    let r3 = p.recv().await;
    validate_result(MODERN, "CallToolResult", &r3);
    assert_eq!(r3["result"]["content"][0]["text"], "Hello, Ada Lovelace!");

    // A tampered state is a JSON-RPC error, never a result.
    let tampered = format!("{}-TAMPERED", s2.as_str().unwrap());
    p.send(call(
        4,
        "two_steps",
        caps.clone(),
        json!({"inputResponses": {"last": accept("X")}, "requestState": tampered}),
    ))
    .await;
    let r4 = p.recv().await;
    assert_eq!(r4["error"]["code"], -32602, "{r4}");

    // A state is bound to its request: other arguments make it a mismatch.
    let mut other = call(
        5,
        "two_steps",
        caps.clone(),
        json!({"inputResponses": {"last": accept("X")}, "requestState": s2}),
    );
    other["params"]["arguments"]["greeting"] = json!("Hi");
    p.send(other).await;
    assert_eq!(p.recv().await["error"]["code"], -32602);

    // An answer of the wrong shape is asked for again, not accepted.
    p.send(call(6, "two_steps", caps.clone(), json!({"inputResponses": {"first": 12345}}))).await;
    assert_eq!(p.recv().await["result"]["resultType"], "input_required");
    p.send(call(7, "two_steps", caps.clone(), json!({"inputResponses": null}))).await;
    assert_eq!(p.recv().await["result"]["resultType"], "input_required");
    // An accepted form that does not match the requested schema is asked for again.
    let bad = json!({"action": "accept", "content": {"name": 12345}});
    p.send(call(8, "two_steps", caps, json!({"inputResponses": {"first": bad}}))).await;
    let r = p.recv().await;
    assert_eq!(r["result"]["resultType"], "input_required");
    assert!(r["result"]["inputRequests"].get("first").is_some(), "{r}");
    p.close().await;
}

#[tokio::test]
async fn a_held_round_gathers_questions_put_from_another_task() {
    let mut p = Peer::start(server());
    p.send(call(1, "gathered", json!({"elicitation": {}}), json!({}))).await;
    let r = p.recv().await;
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    let asked = r["result"]["inputRequests"].as_object().expect("inputRequests");
    let mut keys: Vec<&str> = asked.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["first", "second"], "both questions in one round: {r}");
}

#[tokio::test]
async fn a_capability_the_client_lacks_is_never_asked_for() {
    let mut p = Peer::start(server());
    p.send(call(1, "needs_sampling", json!({}), json!({}))).await;
    let r = p.recv().await;
    assert_eq!(r["error"]["code"], -32021, "{r}");
    assert_eq!(r["error"]["data"]["requiredCapabilities"], json!({"sampling": {}}));
    mcp_testkit::assert_valid(MODERN, "MissingRequiredClientCapabilityError", &r);
    p.send(call(2, "two_steps", json!({"sampling": {}}), json!({}))).await;
    let r = p.recv().await;
    assert_eq!(r["error"]["data"]["requiredCapabilities"], json!({"elicitation": {}}));
    p.close().await;
}

#[tokio::test]
async fn legacy_sessions_get_real_server_to_client_requests() {
    let mut p = Peer::start(server());
    p.initialize(json!({"elicitation": {}, "sampling": {}})).await;
    p.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"two_steps","arguments":{"greeting":"Hi"}}}))
        .await;
    for name in ["Grace", "Hopper"] {
        let ask = p.recv().await;
        assert_eq!(ask["method"], "elicitation/create", "{ask}");
        let id = ask["id"].clone();
        p.send(json!({"jsonrpc": "2.0", "id": id, "result": accept(name)})).await;
    }
    let done = p.recv().await;
    assert_eq!(done["id"], 1);
    assert_eq!(done["result"]["content"][0]["text"], "Hi, Grace Hopper!");

    p.send(json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"needs_sampling"}})).await;
    let ask = p.recv().await;
    assert_eq!(ask["method"], "sampling/createMessage");
    // The client refuses: the handler sees the error and reports a tool error.
    p.send(json!({"jsonrpc": "2.0", "id": ask["id"], "error": {"code": -1, "message": "user said no"}}))
        .await;
    let done = p.recv().await;
    assert_eq!(done["result"]["isError"], true);
    assert!(done["result"]["content"][0]["text"].as_str().unwrap().contains("user said no"));
    p.close().await;
}

#[tokio::test]
async fn legacy_asks_without_the_capability_fail_in_the_handler() {
    let mut p = Peer::start(server());
    p.initialize(json!({})).await;
    p.send(json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"needs_sampling"}})).await;
    let done = p.recv().await;
    assert_eq!(done["result"]["isError"], true, "{done}");
    assert!(done["result"]["content"][0]["text"].as_str().unwrap().contains("does not support sampling"));
    p.close().await;
}
