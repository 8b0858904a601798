//! The wire trace (`mcp_client::wire`): every JSON-RPC message, byte for byte, and a status line
//! per HTTP exchange — and never a credential: not the extra headers, not a query, not an
//! OAuth token, code or verifier.
//!
//! The subscriber is thread-local and the runtime single-threaded, so it sees the transports'
//! tasks and nothing of the other tests.
#![cfg(feature = "http")]

mod capture;
#[allow(dead_code)]
#[path = "oauth/support.rs"]
mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::response::IntoResponse;
use capture::Captured;
use http::{HeaderMap, StatusCode, header};
use mcp_client::transport::http::{HeaderName, HeaderValue, HttpConfig};
use mcp_client::{ClientBuilder, WIRE_TARGET};
use mcp_types::ProtocolVersion;
use serde_json::{Value, json};

/// The messages of the wire events, in order.
fn wire_lines(captured: &Captured) -> Vec<String> {
    let marker = format!("{WIRE_TARGET}: ");
    captured.text().lines().filter_map(|l| l.split_once(&marker).map(|(_, m)| m.to_owned())).collect()
}

/// The bodies of what the raw server received.
type Bodies = Arc<Mutex<Vec<String>>>;

/// A raw MCP endpoint (modern, stateless) whose answers are formatted the way no serializer
/// would: spaces everywhere, `id` last. Started on 127.0.0.1, stopped with its task.
async fn raw_endpoint(bodies: Bodies) -> (String, tokio::task::JoinHandle<()>) {
    let app = axum::Router::new().fallback(move |headers: HeaderMap, body: Bytes| {
        let bodies = bodies.clone();
        async move {
            let text = String::from_utf8_lossy(&body).into_owned();
            bodies.lock().unwrap().push(text.clone());
            assert!(headers.contains_key(header::AUTHORIZATION));
            let request: Value = serde_json::from_str(&text).unwrap();
            let id = request["id"].to_string();
            let result = match request["method"].as_str() {
                Some("tools/list") => {
                    r#"{ "tools" : [ { "name" : "echo", "inputSchema" : { "type" : "object" } } ] }"#
                }
                Some("tools/call") => r#"{ "content" : [ { "type" : "text", "text" : "echoed" } ] }"#,
                _ => return StatusCode::NOT_FOUND.into_response(),
            };
            let answer = format!(r#"{{ "jsonrpc" : "2.0", "result" : {result}, "id" : {id} }}"#);
            (StatusCode::OK, [(header::CONTENT_TYPE, "application/json")], answer).into_response()
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://{addr}/mcp"), task)
}

#[tokio::test(flavor = "current_thread")]
async fn every_message_is_traced_exactly_with_http_status_lines_and_no_credentials() {
    let captured = Captured::default();
    let _guard = captured.install("mcp_client::wire=trace");
    let bodies = Bodies::default();
    let (url, server) = raw_endpoint(bodies.clone()).await;

    let config = HttpConfig::new(format!("{url}?key=query-secret-4712")).header(
        HeaderName::from_static("authorization"),
        HeaderValue::from_static("Bearer header-secret-4711"),
    );
    let client = ClientBuilder::new("wire-test", "1")
        .pin_version(ProtocolVersion::V2026_07_28)
        .discover_on_connect(false)
        .request_timeout(Some(Duration::from_secs(10)))
        .connect_http(config)
        .await
        .expect("connect");
    let result = client.call_tool("echo", json!({"text": "traced"})).await.expect("call");
    assert_eq!(result.content.len(), 1);
    client.close().await;
    server.abort();

    let lines = wire_lines(&captured);
    let sent: Vec<&str> = lines.iter().filter_map(|l| l.strip_prefix("-> ")).collect();
    let received: Vec<&str> = lines.iter().filter_map(|l| l.strip_prefix("<- ")).collect();
    // What went out is exactly what the server received, in order.
    assert_eq!(sent, bodies.lock().unwrap().iter().map(String::as_str).collect::<Vec<_>>(), "{lines:#?}");
    assert!(
        sent.iter().any(|s| s.contains(r#""method":"tools/call""#) && s.contains("traced")),
        "{lines:#?}"
    );
    // What came back is shown as the server wrote it, not re-serialized.
    assert!(
        received.iter().any(|r| r.starts_with(r#"{ "jsonrpc" : "2.0", "result" : { "content" : [ "#)),
        "{lines:#?}"
    );
    assert_eq!(received.len(), sent.len(), "{lines:#?}");
    // One status line per POST, the URL without its query.
    let path = url.strip_prefix("http://").unwrap();
    let status = format!("HTTP POST http://{path}?… -> 200 OK (application/json)");
    assert_eq!(lines.iter().filter(|l| **l == status).count(), sent.len(), "{lines:#?}");
    let text = captured.text();
    assert!(!text.contains("header-secret-4711"), "{text}");
    assert!(!text.contains("query-secret-4712"), "{text}");
}

#[tokio::test(flavor = "current_thread")]
async fn oauth_tokens_codes_and_verifiers_never_reach_the_logs() {
    let captured = Captured::default();
    // Everything the client logs, at every level: not only the wire trace.
    let _guard = captured.install("mcp_client=trace");
    let world = support::World::new().await;
    let client = world.connect(support::oauth().build().unwrap()).await;
    assert_eq!(client.list_all_tools().await.unwrap().len(), 2);
    client.call_tool("echo", json!({})).await.unwrap();
    client.close().await;

    let mut secrets: Vec<String> = world.tokens.lock().unwrap().keys().cloned().collect();
    assert!(!secrets.is_empty());
    for seen in world.requests() {
        if let Some(authorization) = seen.header("authorization") {
            secrets.push(authorization.to_owned());
        }
        for (name, value) in seen.form().into_iter().chain(seen.params()) {
            if matches!(
                name.as_str(),
                "code" | "code_verifier" | "code_challenge" | "state" | "client_secret"
            ) {
                secrets.push(value);
            }
        }
    }
    let text = captured.text();
    for secret in &secrets {
        assert!(!text.contains(secret.as_str()), "{secret} logged:\n{text}");
    }
    assert!(!text.contains("code="), "{text}");

    // The exchanges themselves are there, as status lines.
    let lines = wire_lines(&captured);
    let issuer = world.auth.issuer();
    let mcp = world.mcp_url();
    for expected in [
        format!("HTTP POST {mcp} -> 401 Unauthorized"),
        format!("HTTP GET {issuer}/authorize?… -> 302 Found"),
        format!("HTTP POST {mcp} -> 200 OK (application/json)"),
    ] {
        assert!(lines.iter().any(|l| l.starts_with(&expected)), "{expected} missing: {lines:#?}");
    }
    assert!(
        lines.iter().any(|l| l.starts_with(&format!("HTTP POST {issuer}/token -> 200 OK"))),
        "{lines:#?}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with("-> ") && l.contains(r#""method":"tools/call""#)),
        "{lines:#?}"
    );
}
