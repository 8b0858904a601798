//! The MRTR digest is computed only for a request that can ask the client something.

use std::sync::Arc;

use mcp_types::{
    ElicitRequestFormParams, ElicitationSchema, JsonObject, PrimitiveSchemaDefinition, Request, StringSchema,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::request_state::DIGESTS;
use crate::{Args, CancellationToken, Connection, NullSink, Peer, Server, ToolError, Tools};

#[derive(Deserialize, JsonSchema)]
struct Text {
    text: String,
}

async fn plain(Args(Text { text }): Args<Text>) -> String {
    text
}

async fn asks(peer: Peer, Args(Text { text }): Args<Text>) -> Result<String, ToolError> {
    let mut schema = ElicitationSchema::default();
    schema.properties.insert("name".into(), PrimitiveSchemaDefinition::String(StringSchema::default()));
    let answer = peer.elicit("who", ElicitRequestFormParams::new("Who?", schema)).await?;
    let name = answer.content.as_ref().and_then(|c| c.get("name")).and_then(|v| v.as_str()).unwrap_or("?");
    Ok(format!("{text}, {name}"))
}

/// A tool that takes its arguments unbound and asks only when their text says so: binding
/// them first when `bind`, not at all otherwise.
async fn deferred(mut call: crate::Call, bind: bool) -> Result<mcp_types::CallToolResult, ToolError> {
    let arguments: JsonObject = call.arguments_unbound();
    let peer: Peer = call.extract().expect("a Peer");
    let text = arguments.get("text").and_then(Value::as_str).unwrap_or_default().to_owned();
    if text == "quiet" {
        return Ok(mcp_types::CallToolResult::text(text));
    }
    if bind {
        peer.bind_arguments(Some(&arguments));
    }
    let mut schema = ElicitationSchema::default();
    schema.properties.insert("name".into(), PrimitiveSchemaDefinition::String(StringSchema::default()));
    let answer = peer.elicit("who", ElicitRequestFormParams::new("Who?", schema)).await?;
    let name = answer.content.as_ref().and_then(|c| c.get("name")).and_then(|v| v.as_str()).unwrap_or("?");
    Ok(mcp_types::CallToolResult::text(format!("{text}, {name}")))
}

fn server() -> Server {
    let tools = Tools::new()
        .add("plain", "Echoes", plain)
        .add("asks", "Asks a name", asks)
        .add_dyn(mcp_types::Tool::without_arguments("dynamic"), |mut call: crate::Call| async move {
            let arguments: JsonObject = call.arguments();
            Ok(mcp_types::CallToolResult::text(Value::Object(arguments).to_string()))
        })
        .add_dyn(mcp_types::Tool::without_arguments("deferred"), |call: crate::Call| deferred(call, true))
        .add_dyn(mcp_types::Tool::without_arguments("unbound"), |call: crate::Call| deferred(call, false));
    Server::builder("digest-test", "1").tools(tools).build().unwrap()
}

/// Sends one modern `tools/call` and returns its result (or error) and how many digests it
/// computed (the runtime is this thread's, so the count is this request's).
async fn call(server: &Server, name: &str, text: &str, extra: Value) -> (Value, usize) {
    let mut params = json!({
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        },
        "name": name,
        "arguments": {"text": text},
    });
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    let request = Request::new(1, "tools/call", &params).unwrap();
    let connection = Connection::new(Arc::new(NullSink));
    let before = DIGESTS.with(|n| n.get());
    let reply = server.handle_request(&connection, request, CancellationToken::new()).await.unwrap();
    let after = DIGESTS.with(|n| n.get());
    let outcome = match reply.response.result {
        Ok(raw) => serde_json::from_str(raw.get()).unwrap(),
        Err(e) => json!({"error": e.code}),
    };
    (outcome, after - before)
}

#[tokio::test(flavor = "current_thread")]
async fn a_call_that_cannot_ask_computes_no_digest() {
    let server = server();
    let long = "x".repeat(10_000);
    let (result, digests) = call(&server, "plain", &long, json!({})).await;
    assert_eq!(result["content"][0]["text"], long.as_str());
    assert_eq!(digests, 0, "a tool without a Peer hashed its arguments");

    // A tool that asks binds its state once, when its Peer is made, and the state still
    // only opens for the same arguments.
    let (first, digests) = call(&server, "asks", "Hello", json!({})).await;
    assert_eq!(first["resultType"], "input_required", "{first}");
    assert_eq!(digests, 1);
    let state = first["requestState"].clone();
    let answer = json!({"who": {"action": "accept", "content": {"name": "Ada"}}});
    let retry = json!({"requestState": state, "inputResponses": answer});
    let (done, digests) = call(&server, "asks", "Hello", retry.clone()).await;
    assert_eq!(done["content"][0]["text"], "Hello, Ada", "{done}");
    assert_eq!(digests, 1, "the digest that verified the state is the one the Peer reuses");
    let (other, _) = call(&server, "asks", "Goodbye", retry).await;
    assert_eq!(other["error"], -32602, "{other}");

    // A dynamic tool may extract a Peer after taking its arguments: taking them binds.
    let (result, digests) = call(&server, "dynamic", "hi", json!({})).await;
    assert_eq!(result["content"][0]["text"], r#"{"text":"hi"}"#);
    assert_eq!(digests, 1);
}

#[tokio::test(flavor = "current_thread")]
async fn arguments_taken_unbound_are_hashed_only_when_the_handler_asks() {
    let server = server();
    // Taken unbound, with a Peer made after: nothing asked, nothing hashed.
    let (result, digests) = call(&server, "deferred", "quiet", json!({})).await;
    assert_eq!(result["content"][0]["text"], "quiet", "{result}");
    assert_eq!(digests, 0, "the Peer made after arguments_unbound bound the state");

    // Bound by the handler before it asks: one digest, and the state opens for the same
    // arguments only.
    let (first, digests) = call(&server, "deferred", "Hello", json!({})).await;
    assert_eq!(first["resultType"], "input_required", "{first}");
    assert_eq!(digests, 1);
    let answer = json!({"who": {"action": "accept", "content": {"name": "Ada"}}});
    let retry = json!({"requestState": first["requestState"].clone(), "inputResponses": answer});
    let (done, _) = call(&server, "deferred", "Hello", retry.clone()).await;
    assert_eq!(done["content"][0]["text"], "Hello, Ada", "{done}");
    let (other, _) = call(&server, "deferred", "Goodbye", retry).await;
    assert_eq!(other["error"], -32602, "a state bound to other arguments is refused: {other}");

    // Asked without binding: an internal error, not a state bound to nothing.
    let (unbound, digests) = call(&server, "unbound", "Hello", json!({})).await;
    assert_eq!(unbound["error"], -32603, "{unbound}");
    assert_eq!(digests, 0);
}
