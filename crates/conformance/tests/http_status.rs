//! The HTTP status each fixture's answer carries when a Streamable HTTP transport serves it
//! (the router's reply from [`Server::handle_request`], its refusal mapped by
//! [`mcp_http::http_status`]): what the suite's 2026-07-28 scenarios check besides the body.

use std::sync::Arc;

use mcp_server::{Connection, NullSink, Reply, Server};
use mcp_types::Request;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

async fn handle(server: &Server, method: &str, caps: Value, params: Value) -> (u16, Value) {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": caps,
    });
    let request = Request::new(7, method, &params).unwrap();
    let connection = Connection::new(Arc::new(NullSink));
    let reply: Reply =
        server.handle_request(&connection, request, CancellationToken::new()).await.expect("a reply");
    let body = serde_json::to_value(&reply.response).unwrap();
    assert_eq!(body["id"], 7, "every answer echoes the id: {body}");
    (mcp_http::http_status(&reply).as_u16(), body)
}

#[tokio::test]
async fn missing_capability_is_400_and_input_required_is_200() {
    let server = conformance::server();
    let call = |name: &str| json!({"name": name});
    let (status, body) = handle(&server, "tools/call", json!({}), call("test_missing_capability")).await;
    assert_eq!((status, &body["error"]["code"]), (400, &json!(-32021)), "{body}");

    let caps = json!({"elicitation": {}});
    let (status, body) =
        handle(&server, "tools/call", caps.clone(), call("test_streaming_elicitation")).await;
    assert_eq!((status, &body["result"]["resultType"]), (200, &json!("input_required")), "{body}");

    let state = body["result"]["requestState"].as_str().unwrap();
    let mut tampered = call("test_streaming_elicitation");
    tampered["requestState"] = json!(format!("{state}-TAMPERED"));
    let (status, body) = handle(&server, "tools/call", caps, tampered).await;
    assert_eq!((status, &body["error"]["code"]), (400, &json!(-32602)), "{body}");
}

#[tokio::test]
async fn session_methods_are_404_on_the_modern_wire() {
    let server = conformance::server();
    for method in ["initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"] {
        let (status, body) =
            handle(&server, method, json!({}), json!({"uri": "test://watched-resource"})).await;
        assert_eq!((status, &body["error"]["code"]), (404, &json!(-32601)), "{method}: {body}");
    }
}

#[tokio::test]
async fn an_unknown_resource_is_an_error_after_dispatch() {
    let server = conformance::server();
    let uri = "test://nonexistent-resource-for-conformance-testing";
    let (status, body) = handle(&server, "resources/read", json!({}), json!({"uri": uri})).await;
    assert_eq!((status, &body["error"]["code"]), (200, &json!(-32602)), "{body}");
    assert_eq!(body["error"]["data"]["uri"], uri);
}
