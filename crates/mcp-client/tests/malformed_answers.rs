//! Almost-valid answers over real HTTP (127.0.0.1, port 0): a response with the request's id
//! that is not valid JSON-RPC ends the exchange without a usable answer, so the call fails at
//! once with `ClientError::MalformedAnswer` (outcome unknown: the server may have run it)
//! instead of waiting for its 300 s timeout.
#![cfg(feature = "http")]

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::response::Response;
use mcp_client::transport::http::HttpConfig;
use mcp_client::{ClientBuilder, ClientError, EraCache, Outcome};
use mcp_types::ProtocolVersion;
use serde_json::{Value, json};
use tokio::task::JoinHandle;

/// Stops the server when the test ends, panicking or not.
struct Task(JoinHandle<()>);

impl Drop for Task {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A modern server that lists no tools and answers every other request with `answer(id)`, as
/// `content_type`.
async fn server(content_type: &'static str, answer: fn(&Value) -> String) -> (String, Task) {
    let app = axum::Router::new().fallback(move |body: Bytes| async move {
        let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let (content_type, body) = match message["method"].as_str() {
            Some("tools/list") => (
                "application/json",
                json!({"jsonrpc": "2.0", "id": message["id"], "result": {"resultType": "complete", "tools": []}})
                    .to_string(),
            ),
            Some(_) if message.get("id").is_some() => (content_type, answer(&message["id"])),
            _ => return Response::builder().status(202).body(Body::empty()).unwrap(),
        };
        Response::builder().header("content-type", content_type).body(Body::from(body)).unwrap()
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, Task(task))
}

/// Calls a tool on the server (request timeout 300 s, the default) and returns its error,
/// failing the test if it takes 10 s.
async fn call_error(content_type: &'static str, answer: fn(&Value) -> String) -> ClientError {
    let (url, _server) = server(content_type, answer).await;
    let client = ClientBuilder::new("malformed-test", "1")
        .era_cache(EraCache::new())
        .pin_version(ProtocolVersion::V2026_07_28)
        .discover_on_connect(false)
        .request_timeout(Some(Duration::from_secs(300)))
        .connect_http(HttpConfig::new(url))
        .await
        .unwrap();
    let call = client.call_tool("echo", json!({}));
    let error = tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .expect("the call waited for its timeout although the exchange was over")
        .unwrap_err();
    client.close().await;
    error
}

fn assert_malformed(error: &ClientError) {
    assert!(
        matches!(error, ClientError::MalformedAnswer { method, .. } if method == "tools/call"),
        "{error:?}"
    );
    assert_eq!(error.outcome(), Outcome::Unknown);
}

#[tokio::test]
async fn a_json_answer_with_both_result_and_error_fails_the_call_at_once() {
    let error = call_error("application/json", |id| {
        json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}, "error": {"code": -1, "message": "no"}})
            .to_string()
    })
    .await;
    assert_malformed(&error);
}

#[tokio::test]
async fn a_json_answer_of_another_jsonrpc_version_fails_the_call_at_once() {
    let error = call_error("application/json", |id| {
        json!({"jsonrpc": "1.0", "id": id, "result": {"content": []}}).to_string()
    })
    .await;
    assert_malformed(&error);
}

#[tokio::test]
async fn a_json_answer_without_jsonrpc_fails_the_call_at_once() {
    let error =
        call_error("application/json", |id| json!({"id": id, "result": {"content": []}}).to_string()).await;
    assert_malformed(&error);
}

#[tokio::test]
async fn an_sse_answer_whose_error_is_a_string_fails_the_call_at_once() {
    let error = call_error("text/event-stream", |id| {
        format!("data: {}\n\n", json!({"jsonrpc": "2.0", "id": id, "error": "boom"}))
    })
    .await;
    assert_malformed(&error);
    assert!(error.to_string().starts_with("malformed answer to tools/call: "), "{error}");
}
