//! The HTTP client transports over real sockets (127.0.0.1, port 0): against our own server
//! (`mcp-http`) for realistic exchanges, and against small raw servers for what ours does not
//! do (early stream closes, captured headers, odd answers).

#[path = "http_transport/support.rs"]
mod support;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::response::Response;
use bytes::Bytes;
use http::Method;
use mcp_client::transport::http::{
    HeaderName, HeaderValue, HttpConfig, HttpSseTransport, StreamableHttpTransport,
};
use mcp_client::transport::{
    Inbound, InboundReceiver, Outgoing, OutgoingKind, RequestHeaders, Sent, Transport, TransportError,
    TransportKind,
};
use mcp_types::{ProtocolVersion, RequestId};
use serde_json::{Value, json};
use support::*;
use tokio::sync::mpsc;

const MODERN: ProtocolVersion = ProtocolVersion::V2026_07_28;
const LEGACY: ProtocolVersion = ProtocolVersion::V2025_11_25;

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
    })
}

fn request(
    id: i64,
    method: &str,
    params: Value,
    version: Option<ProtocolVersion>,
    headers: RequestHeaders,
) -> Outgoing {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    Outgoing {
        body: Bytes::from(body.to_string()),
        kind: OutgoingKind::Request { id: RequestId::Number(id), method: method.to_owned(), headers },
        protocol_version: version,
    }
}

fn modern_call(id: i64, tool: &str, arguments: Value) -> Outgoing {
    let params = json!({"_meta": meta(), "name": tool, "arguments": arguments});
    let headers = RequestHeaders { name: Some(tool.to_owned()), ..RequestHeaders::default() };
    request(id, "tools/call", params, Some(MODERN), headers)
}

fn legacy_call(id: i64, tool: &str, arguments: Value) -> Outgoing {
    request(
        id,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
        Some(LEGACY),
        RequestHeaders::default(),
    )
}

fn notification(method: &str, version: Option<ProtocolVersion>) -> Outgoing {
    let body = json!({"jsonrpc": "2.0", "method": method});
    Outgoing {
        body: Bytes::from(body.to_string()),
        kind: OutgoingKind::Notification { method: method.to_owned() },
        protocol_version: version,
    }
}

fn initialize(version: &str) -> Outgoing {
    let params = json!({
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    });
    request(0, "initialize", params, None, RequestHeaders::default())
}

fn streamable(config: HttpConfig) -> (Arc<StreamableHttpTransport>, InboundReceiver) {
    let (tx, rx) = mcp_client::transport::inbound_channel();
    (StreamableHttpTransport::new(config, tx).unwrap(), rx)
}

/// A JSON-RPC result for request `id` (raw servers).
fn result_for(id: &Value, text: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}}).to_string()
}

async fn expect_unanswered(rx: &mut InboundReceiver, id: i64) -> TransportError {
    match next(rx).await {
        Inbound::Unanswered { id: got, error } => {
            assert_eq!(got, RequestId::Number(id));
            error
        }
        other => panic!("expected Unanswered, got {other:?}"),
    }
}

async fn expect_closed(rx: &mut InboundReceiver) -> TransportError {
    match next(rx).await {
        Inbound::Closed(error) => error,
        other => panic!("expected Closed, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Modern (2026-07-28) against our server

#[tokio::test]
async fn modern_post_answered_with_json() {
    let (server, _srv) = our_server(|_| {}).await;
    let (transport, mut rx) = streamable(HttpConfig::new(server.url("/mcp")));
    assert_eq!(transport.kind(), TransportKind::StreamableHttp);

    transport.send(modern_call(1, "echo", json!({"text": "hi"}))).await.unwrap();
    let answer = next_message(&mut rx).await;
    mcp_testkit::assert_valid_message("2026-07-28", &answer);
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["content"][0]["text"], "hi");
    assert_eq!(transport.session_id(), None, "no sessions in 2026-07-28");

    transport.close().await;
    assert!(matches!(expect_closed(&mut rx).await, TransportError::Closed));
}

#[tokio::test]
async fn send_request_leaves_a_json_answer_to_the_caller() {
    let (server, _srv) = our_server(|_| {}).await;
    let (transport, mut rx) = streamable(HttpConfig::new(server.url("/mcp")));

    // The call path's send: the answer is read by the caller, never pushed to the channel.
    let sent = transport.send_request(modern_call(3, "echo", json!({"text": "direct"}))).await.unwrap();
    let Sent::Answer(reading) = sent else { panic!("a JSON answer is left to the caller, got {sent:?}") };
    let body = reading.await.expect("the response to request 3");
    let answer: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(answer["id"], 3);
    assert_eq!(answer["result"]["content"][0]["text"], "direct");

    // An SSE answer is still followed by the transport, onto the channel.
    let mut meta = meta();
    meta["progressToken"] = json!("t");
    let params = json!({"_meta": meta, "name": "progress"});
    let headers = RequestHeaders { name: Some("progress".into()), ..RequestHeaders::default() };
    let sent = transport.send_request(request(4, "tools/call", params, Some(MODERN), headers)).await.unwrap();
    assert!(matches!(sent, Sent::Inbound), "an SSE answer comes through the channel");
    assert_eq!(next_related(&mut rx, 4).await["method"], "notifications/progress");
    assert_eq!(next_related(&mut rx, 4).await["method"], "notifications/progress");
    assert_eq!(next_message(&mut rx).await["id"], 4);

    transport.close().await;
    assert!(matches!(expect_closed(&mut rx).await, TransportError::Closed));
}

#[tokio::test]
async fn closing_ends_a_request_still_waiting_for_its_answer() {
    // A server that takes the request in and never answers it.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let holder = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    let (transport, mut rx) = streamable(HttpConfig::new(format!("http://{addr}/mcp")));
    let sending = {
        let transport = transport.clone();
        tokio::spawn(
            async move { transport.send_request(modern_call(5, "echo", json!({"text": "x"}))).await },
        )
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!sending.is_finished(), "the server never answers");
    let started = Instant::now();
    transport.close().await;
    let outcome =
        tokio::time::timeout(Duration::from_secs(10), sending).await.expect("ended by close").unwrap();
    assert!(matches!(outcome, Err(TransportError::Closed)), "{outcome:?}");
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(matches!(expect_closed(&mut rx).await, TransportError::Closed));
    holder.abort();
}

#[tokio::test]
async fn modern_answer_streamed_after_a_notification() {
    let (server, _srv) = our_server(|_| {}).await;
    let (transport, mut rx) = streamable(HttpConfig::new(server.url("/mcp")));
    let mut meta = meta();
    meta["progressToken"] = json!("t");
    let params = json!({"_meta": meta, "name": "progress"});
    let headers = RequestHeaders { name: Some("progress".into()), ..RequestHeaders::default() };
    transport.send(request(7, "tools/call", params, Some(MODERN), headers)).await.unwrap();

    // What the server sends about the request on its stream names the request; the answer is
    // a message of its own.
    let first = next_related(&mut rx, 7).await;
    assert_eq!(first["method"], "notifications/progress");
    let second = next_related(&mut rx, 7).await;
    assert_eq!(second["method"], "notifications/progress");
    let answer = next_message(&mut rx).await;
    assert_eq!(answer["id"], 7);
    assert_eq!(answer["result"]["content"][0]["text"], "done");
    assert_quiet(&mut rx, Duration::from_millis(100)).await;
    transport.close().await;
}

#[tokio::test]
async fn unknown_endpoint_is_an_http_error_and_nothing_is_pushed() {
    let (server, _srv) = our_server(|_| {}).await;
    let (transport, mut rx) = streamable(HttpConfig::new(server.url("/nope")));
    match transport.send(modern_call(1, "echo", json!({"text": "x"}))).await {
        Err(TransportError::Http { status: 404, .. }) => {}
        other => panic!("expected HTTP 404, got {other:?}"),
    }
    assert_quiet(&mut rx, Duration::from_millis(100)).await;
    transport.close().await;
}

#[tokio::test]
async fn connection_refused_is_not_sent() {
    // Bound and never listened on, held to the end: refused, and never handed to another bind.
    let refused = tokio::net::TcpSocket::new_v4().unwrap();
    refused.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = refused.local_addr().unwrap();
    let (transport, _rx) = streamable(HttpConfig::new(format!("http://{addr}/mcp")));
    let error = transport.send(modern_call(1, "echo", json!({"text": "x"}))).await.unwrap_err();
    assert!(matches!(error, TransportError::NotSent(_)), "{error:?}");
    assert!(error.definitely_not_sent());
    let error = transport.send(notification("notifications/initialized", Some(LEGACY))).await.unwrap_err();
    assert!(matches!(error, TransportError::NotSent(_)), "{error:?}");
}

#[tokio::test]
async fn invalid_urls_are_refused() {
    let (tx, _rx) = mcp_client::transport::inbound_channel();
    for url in ["not a url", "ftp://127.0.0.1/mcp"] {
        let error = StreamableHttpTransport::new(HttpConfig::new(url), tx.clone()).unwrap_err();
        assert!(matches!(error, TransportError::NotSent(_)), "{url}: {error:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// Headers, sessions and error bodies against raw servers

#[tokio::test]
async fn modern_headers_are_sent_on_every_post() {
    let server = raw_server(|seen| match seen.json().get("id") {
        Some(id) => json_answer(200, &[], &result_for(id, "ok")),
        None => status(202),
    })
    .await;
    let config = HttpConfig::new(server.url("/mcp"))
        .header(http::header::AUTHORIZATION, HeaderValue::from_static("Bearer one"));
    let (transport, mut rx) = streamable(config);

    let headers = RequestHeaders {
        name: Some("=?base64?SGVsbG8=?=".into()),
        params: vec![("Region".into(), "us-west1".into()), ("Empty".into(), String::new())],
        ..RequestHeaders::default()
    };
    let params = json!({"_meta": meta(), "name": "Hello", "arguments": {}});
    transport.send(request(1, "tools/call", params, Some(MODERN), headers)).await.unwrap();
    assert_eq!(next_message(&mut rx).await["id"], 1);
    let post = &server.requests()[0];
    assert_eq!(post.method, Method::POST);
    assert_eq!(post.path, "/mcp");
    assert_eq!(post.header("content-type"), Some("application/json"));
    assert_eq!(post.header("accept"), Some("application/json, text/event-stream"));
    assert_eq!(post.header("mcp-protocol-version"), Some("2026-07-28"));
    assert_eq!(post.header("mcp-method"), Some("tools/call"));
    assert_eq!(post.header("mcp-name"), Some("=?base64?SGVsbG8=?="));
    assert_eq!(post.header("mcp-param-region"), Some("us-west1"));
    assert_eq!(post.header("mcp-param-empty"), Some(""));
    assert_eq!(post.header("authorization"), Some("Bearer one"));
    assert_eq!(post.header("mcp-session-id"), None);

    // The authorization layer swaps the credentials; later requests carry the new ones.
    transport.set_header(http::header::AUTHORIZATION, HeaderValue::from_static("Bearer two"));
    transport
        .send(request(2, "tools/list", json!({"_meta": meta()}), Some(MODERN), RequestHeaders::default()))
        .await
        .unwrap();
    assert_eq!(next_message(&mut rx).await["id"], 2);
    let list = &server.requests()[1];
    assert_eq!(list.header("mcp-method"), Some("tools/list"));
    assert_eq!(list.header("mcp-name"), None);
    assert_eq!(list.header("authorization"), Some("Bearer two"));

    // A modern notification carries Mcp-Method too.
    transport.send(notification("notifications/cancelled", Some(MODERN))).await.unwrap();
    let note = &server.requests()[2];
    assert_eq!(note.header("mcp-method"), Some("notifications/cancelled"));
    assert_eq!(note.header("mcp-protocol-version"), Some("2026-07-28"));

    // Legacy messages: the version header only, no Mcp-Method; `initialize` has no version.
    transport.remove_header(&http::header::AUTHORIZATION);
    transport.send(legacy_call(3, "echo", json!({}))).await.unwrap();
    assert_eq!(next_message(&mut rx).await["id"], 3);
    transport.send(initialize("2025-11-25")).await.unwrap();
    assert_eq!(next_message(&mut rx).await["id"], 0);
    let requests = server.requests();
    assert_eq!(requests[3].header("mcp-protocol-version"), Some("2025-11-25"));
    assert_eq!(requests[3].header("mcp-method"), None);
    assert_eq!(requests[3].header("authorization"), None);
    assert_eq!(requests[4].header("mcp-protocol-version"), None);
    assert_eq!(requests[4].header("mcp-method"), None);
    transport.close().await;
}

#[tokio::test]
async fn legacy_session_is_echoed_on_post_get_and_delete() {
    let server = raw_server(|seen| match seen.method {
        Method::POST if seen.rpc_method().as_deref() == Some("initialize") => {
            json_answer(200, &[("mcp-session-id", "sess-123")], &result_for(&json!(0), "init"))
        }
        Method::POST => match seen.json().get("id") {
            Some(id) => json_answer(200, &[], &result_for(id, "ok")),
            None => status(202),
        },
        Method::GET => {
            let (gone, _) = mpsc::unbounded_channel();
            let event = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n";
            sse_until_disconnect(event.to_owned(), gone)
        }
        Method::DELETE => status(200),
        _ => status(405),
    })
    .await;
    let (transport, mut rx) = streamable(HttpConfig::new(server.url("/mcp")));

    transport.send(initialize("2025-11-25")).await.unwrap();
    assert_eq!(next_message(&mut rx).await["id"], 0);
    assert_eq!(transport.session_id().as_deref(), Some("sess-123"));
    assert_eq!(server.requests()[0].header("mcp-session-id"), None);

    transport.send(notification("notifications/initialized", Some(LEGACY))).await.unwrap();
    let initialized = &server.requests()[1];
    assert_eq!(initialized.header("mcp-session-id"), Some("sess-123"));
    assert_eq!(initialized.header("mcp-protocol-version"), Some("2025-11-25"));

    transport.session_ready(LEGACY).await;
    let pushed = next_message(&mut rx).await;
    assert_eq!(pushed["method"], "notifications/tools/list_changed");
    let get = server.wait_for("the GET stream", |s| s.method == Method::GET).await;
    assert_eq!(get.header("accept"), Some("text/event-stream"));
    assert_eq!(get.header("mcp-session-id"), Some("sess-123"));
    assert_eq!(get.header("mcp-protocol-version"), Some("2025-11-25"));
    assert_eq!(get.header("last-event-id"), None);

    transport.close().await;
    assert!(matches!(expect_closed(&mut rx).await, TransportError::Closed));
    let delete = server.wait_for("the DELETE", |s| s.method == Method::DELETE).await;
    assert_eq!(delete.header("mcp-session-id"), Some("sess-123"));
    assert_eq!(delete.header("mcp-protocol-version"), Some("2025-11-25"));

    // Idempotent: no second DELETE, no second Closed; sending fails.
    transport.close().await;
    assert!(matches!(transport.send(legacy_call(9, "echo", json!({}))).await, Err(TransportError::Closed)));
    assert!(rx.recv().await.is_none(), "the channel ends after Closed");
    assert_eq!(server.requests().iter().filter(|s| s.method == Method::DELETE).count(), 1);
}

#[tokio::test]
async fn reset_session_forgets_the_id() {
    let server = raw_server(|seen| match seen.rpc_method().as_deref() {
        Some("initialize") => json_answer(200, &[("mcp-session-id", "s-1")], &result_for(&json!(0), "init")),
        _ => match seen.json().get("id") {
            Some(id) => json_answer(200, &[], &result_for(id, "ok")),
            None => status(202),
        },
    })
    .await;
    let (transport, mut rx) = streamable(HttpConfig::new(server.url("/mcp")));
    transport.send(initialize("2025-11-25")).await.unwrap();
    next_message(&mut rx).await;
    assert_eq!(transport.session_id().as_deref(), Some("s-1"));
    transport.reset_session();
    assert_eq!(transport.session_id(), None);
    transport.send(legacy_call(1, "echo", json!({}))).await.unwrap();
    next_message(&mut rx).await;
    assert_eq!(server.requests()[1].header("mcp-session-id"), None);
    // No session, no DELETE.
    transport.close().await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(server.requests().iter().all(|s| s.method != Method::DELETE));
}

#[tokio::test]
async fn error_statuses_keep_a_bounded_body() {
    const RPC_ERROR: &str = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2030-01-01"}}}"#;
    let server = raw_server(|seen| match seen.path.as_str() {
        "/bad" => json_answer(400, &[], RPC_ERROR),
        _ => Response::builder()
            .status(401)
            .header("www-authenticate", r#"Bearer resource_metadata="http://x/prm""#)
            .header("content-type", "text/plain")
            .body(axum::body::Body::from("x".repeat(100_000)))
            .unwrap(),
    })
    .await;
    let (transport, mut rx) = streamable(HttpConfig::new(server.url("/bad")));
    match transport.send(modern_call(1, "echo", json!({}))).await {
        Err(TransportError::Http { status, content_type, www_authenticate, body, authorization }) => {
            assert_eq!(status, 400);
            assert_eq!(content_type.as_deref(), Some("application/json"));
            assert_eq!(www_authenticate, None);
            assert_eq!(authorization, None, "no authorization layer tried");
            assert_eq!(&body[..], RPC_ERROR.as_bytes());
        }
        other => panic!("expected HTTP 400, got {other:?}"),
    }
    assert_quiet(&mut rx, Duration::from_millis(50)).await;

    let (transport, _rx) = streamable(HttpConfig::new(server.url("/auth")).max_error_body(16));
    match transport.send(notification("notifications/initialized", Some(LEGACY))).await {
        Err(TransportError::Http { status, www_authenticate, body, .. }) => {
            assert_eq!(status, 401);
            assert_eq!(www_authenticate.as_deref(), Some(r#"Bearer resource_metadata="http://x/prm""#));
            assert_eq!(body.len(), 16, "the body is cut at max_error_body");
        }
        other => panic!("expected HTTP 401, got {other:?}"),
    }
}

#[tokio::test]
async fn a_request_answered_202_is_unanswered() {
    let server = raw_server(|_| status(202)).await;
    let (transport, mut rx) = streamable(HttpConfig::new(server.url("/mcp")));
    transport.send(modern_call(4, "echo", json!({}))).await.unwrap();
    assert!(matches!(expect_unanswered(&mut rx, 4).await, TransportError::Unexpected(_)));
    // A notification's 202 is simply fine.
    transport.send(notification("notifications/initialized", Some(LEGACY))).await.unwrap();
    assert_quiet(&mut rx, Duration::from_millis(50)).await;
    transport.close().await;
}

// ---------------------------------------------------------------------------------------------
// Streams: cancellation, resumption, cuts

#[tokio::test]
async fn abandon_closes_the_response_stream() {
    let (gone_tx, mut gone_rx) = mpsc::unbounded_channel();
    let server = raw_server(move |_| {
        sse_until_disconnect(
            "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n"
                .to_owned(),
            gone_tx.clone(),
        )
    })
    .await;
    let (transport, mut rx) = streamable(HttpConfig::new(server.url("/mcp")));
    transport.send(modern_call(5, "forever", json!({}))).await.unwrap();
    assert_eq!(next_message(&mut rx).await["method"], "notifications/progress");
    transport.abandon(&RequestId::Number(5));
    tokio::time::timeout(Duration::from_secs(5), gone_rx.recv())
        .await
        .expect("the server never saw the stream close")
        .unwrap();
    // Abandoned: no Unanswered follows.
    assert_quiet(&mut rx, Duration::from_millis(100)).await;
    transport.close().await;
}

/// The `sse-retry` conformance scenario: a priming event (`id`, `retry: 500`, empty data), the
/// stream closed after 50 ms, the answer on the GET that resumes it.
#[tokio::test]
async fn legacy_stream_resumes_with_last_event_id_after_retry() {
    let closed_at: Arc<Mutex<Option<Instant>>> = Arc::default();
    let closed = closed_at.clone();
    let server = raw_server(move |seen| match seen.method {
        Method::POST if seen.rpc_method().as_deref() == Some("initialize") => {
            json_answer(200, &[("mcp-session-id", "sess-r")], &result_for(&json!(0), "init"))
        }
        Method::POST => {
            let closed = closed.clone();
            let (tx, response) = streamed("text/event-stream");
            tokio::spawn(async move {
                let _ = tx.send(Bytes::from_static(b"id: event-1\nretry: 500\ndata: \n\n")).await;
                tokio::time::sleep(Duration::from_millis(50)).await;
                drop(tx);
                *closed.lock().unwrap() = Some(Instant::now());
            });
            response
        }
        Method::GET => {
            let answer = result_for(&json!(2), "resumed");
            sse_script(vec![(Duration::ZERO, format!("id: event-2\ndata: {answer}\n\n"))])
        }
        _ => status(405),
    })
    .await;
    let (transport, mut rx) = streamable(HttpConfig::new(server.url("/mcp")));
    transport.send(initialize("2025-11-25")).await.unwrap();
    next_message(&mut rx).await;

    transport.send(legacy_call(2, "test_reconnection", json!({}))).await.unwrap();
    let answer = next_message(&mut rx).await;
    assert_eq!(answer["id"], 2);
    assert_eq!(answer["result"]["content"][0]["text"], "resumed");

    let get = server.wait_for("the resuming GET", |s| s.method == Method::GET).await;
    assert_eq!(get.header("last-event-id"), Some("event-1"));
    assert_eq!(get.header("accept"), Some("text/event-stream"));
    assert_eq!(get.header("mcp-session-id"), Some("sess-r"));
    assert_eq!(get.header("mcp-protocol-version"), Some("2025-11-25"));
    let closed_at = closed_at.lock().unwrap().expect("the stream was closed");
    let waited = get.at.duration_since(closed_at);
    assert!(waited >= Duration::from_millis(450), "reconnected after {waited:?}, before retry");
    assert!(waited <= Duration::from_secs(5), "reconnected only after {waited:?}");
    assert_quiet(&mut rx, Duration::from_millis(100)).await;
    transport.close().await;
}

#[tokio::test]
async fn legacy_stream_resumes_against_our_server() {
    let (server, _srv) = our_server(|config| config.sse_retry = Duration::from_millis(100)).await;
    let (transport, mut rx) = streamable(HttpConfig::new(server.url("/mcp")));
    transport.send(initialize("2025-11-25")).await.unwrap();
    let init = next_message(&mut rx).await;
    mcp_testkit::assert_valid_message("2025-11-25", &init);
    assert!(transport.session_id().is_some());
    transport.send(notification("notifications/initialized", Some(LEGACY))).await.unwrap();

    // The tool closes its response stream at once; the answer comes on the resumed stream.
    transport.send(legacy_call(1, "polled", json!({}))).await.unwrap();
    let answer = next_message(&mut rx).await;
    mcp_testkit::assert_valid_message("2025-11-25", &answer);
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["content"][0]["text"], "polled");
    transport.close().await;
}

#[tokio::test]
async fn legacy_session_against_our_server_gets_its_get_stream_and_is_deleted() {
    let (server, srv) = our_server(|_| {}).await;
    let (transport, mut rx) = streamable(HttpConfig::new(server.url("/mcp")));
    transport.send(initialize("2025-11-25")).await.unwrap();
    assert_eq!(next_message(&mut rx).await["id"], 0);
    let session = transport.session_id().expect("a session id");
    transport.send(notification("notifications/initialized", Some(LEGACY))).await.unwrap();
    transport.send(legacy_call(1, "echo", json!({"text": "in session"}))).await.unwrap();
    assert_eq!(next_message(&mut rx).await["result"]["content"][0]["text"], "in session");

    // A server-sent message reaches the client through the GET stream (announce until the
    // stream is open).
    transport.session_ready(LEGACY).await;
    let notified = loop {
        srv.notify(mcp_server::Change::Tools);
        match tokio::time::timeout(Duration::from_millis(100), rx.recv()).await {
            Ok(Some(Inbound::Message(bytes))) => break serde_json::from_slice::<Value>(&bytes).unwrap(),
            Ok(other) => panic!("unexpected {other:?}"),
            Err(_) => continue,
        }
    };
    mcp_testkit::assert_valid_message("2025-11-25", &notified);
    assert_eq!(notified["method"], "notifications/tools/list_changed");

    transport.close().await;
    assert!(matches!(expect_closed(&mut rx).await, TransportError::Closed));
    // The DELETE ended the session: it is unknown now.
    let client = reqwest::Client::new();
    let status = client
        .post(server.url("/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", session)
        .body(r#"{"jsonrpc":"2.0","id":5,"method":"tools/list"}"#)
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status.as_u16(), 404);
}

#[tokio::test]
async fn standalone_get_stream_reconnects_with_last_event_id() {
    let server = raw_server(|seen| match seen.method {
        Method::GET if seen.header("last-event-id").is_none() => sse_script(vec![(
            Duration::ZERO,
            "id: g-1\nretry: 200\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n"
                .to_owned(),
        )]),
        Method::GET => {
            let (gone, _) = mpsc::unbounded_channel();
            let event = "id: g-2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/prompts/list_changed\"}\n\n";
            sse_until_disconnect(event.to_owned(), gone)
        }
        _ => status(405),
    })
    .await;
    let (transport, mut rx) = streamable(HttpConfig::new(server.url("/mcp")));
    transport.session_ready(LEGACY).await;
    assert_eq!(next_message(&mut rx).await["method"], "notifications/tools/list_changed");
    assert_eq!(next_message(&mut rx).await["method"], "notifications/prompts/list_changed");
    let gets: Vec<_> = server.requests().into_iter().filter(|s| s.method == Method::GET).collect();
    assert_eq!(gets.len(), 2);
    assert_eq!(gets[1].header("last-event-id"), Some("g-1"));
    let waited = gets[1].at.duration_since(gets[0].at);
    assert!(waited >= Duration::from_millis(150), "reconnected after {waited:?}");
    transport.close().await;
}

#[tokio::test]
async fn no_get_stream_is_fine() {
    let server = raw_server(|_| status(405)).await;
    let (transport, mut rx) =
        streamable(HttpConfig::new(server.url("/mcp")).default_retry(Duration::from_millis(10)));
    transport.session_ready(LEGACY).await;
    server.wait_for("the GET", |s| s.method == Method::GET).await;
    assert_quiet(&mut rx, Duration::from_millis(200)).await;
    assert_eq!(server.requests().len(), 1, "a 405 is not retried");
    transport.close().await;
    assert!(matches!(expect_closed(&mut rx).await, TransportError::Closed));
}

#[tokio::test]
async fn modern_stream_cut_is_unanswered_at_once() {
    let server = raw_server(|_| {
        sse_script(vec![(
            Duration::ZERO,
            "id: m-1\nretry: 10\ndata: \n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n"
                .to_owned(),
        )])
    })
    .await;
    let (transport, mut rx) = streamable(HttpConfig::new(server.url("/mcp")));
    transport.send(modern_call(7, "slow", json!({}))).await.unwrap();
    assert_eq!(next_message(&mut rx).await["method"], "notifications/progress");
    assert!(matches!(expect_unanswered(&mut rx, 7).await, TransportError::Lost(_)));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(server.requests().iter().all(|s| s.method != Method::GET), "modern streams are not resumed");
    transport.close().await;
}

#[tokio::test]
async fn legacy_stream_that_cannot_resume_is_unanswered() {
    let server = raw_server(|seen| match (seen.method.clone(), seen.path.as_str()) {
        // A stream without event ids: nothing to resume from.
        (Method::POST, "/no-id") => sse_script(vec![(Duration::ZERO, ": hello\n\n".to_owned())]),
        (Method::POST, _) => sse_script(vec![(Duration::ZERO, "id: x-1\nretry: 20\ndata: \n\n".to_owned())]),
        _ => status(404),
    })
    .await;
    let (transport, mut rx) = streamable(HttpConfig::new(server.url("/no-id")));
    transport.send(legacy_call(1, "t", json!({}))).await.unwrap();
    assert!(matches!(expect_unanswered(&mut rx, 1).await, TransportError::Lost(_)));
    transport.close().await;

    // Resumption refused (the session is gone): unanswered after one attempt.
    let (transport, mut rx) = streamable(HttpConfig::new(server.url("/refused")));
    transport.send(legacy_call(2, "t", json!({}))).await.unwrap();
    assert!(matches!(expect_unanswered(&mut rx, 2).await, TransportError::Lost(_)));
    let gets = server.requests().iter().filter(|s| s.method == Method::GET).count();
    assert_eq!(gets, 1);
    transport.close().await;
}

#[tokio::test]
async fn legacy_resumption_gives_up_after_the_attempt_limit() {
    // Every GET opens and ends at once without anything new.
    let server = raw_server(|seen| match seen.method {
        Method::POST => sse_script(vec![(Duration::ZERO, "id: y-1\nretry: 5\ndata: \n\n".to_owned())]),
        _ => sse_script(vec![(Duration::ZERO, ": nothing\n\n".to_owned())]),
    })
    .await;
    let config = HttpConfig::new(server.url("/mcp")).max_reconnect_attempts(3);
    let (transport, mut rx) = streamable(config);
    transport.send(legacy_call(3, "t", json!({}))).await.unwrap();
    assert!(matches!(expect_unanswered(&mut rx, 3).await, TransportError::Lost(_)));
    let gets = server.requests().iter().filter(|s| s.method == Method::GET).count();
    assert_eq!(gets, 3, "three fruitless reconnections, then the request is given up");
    transport.close().await;
}

// ---------------------------------------------------------------------------------------------
// Limits

#[tokio::test]
async fn oversized_messages_are_refused_with_bounded_memory() {
    let (gone_tx, mut gone_rx) = mpsc::unbounded_channel::<Instant>();
    let server = raw_server(move |seen| match seen.path.as_str() {
        // Known length: refused before reading.
        "/json-length" => json_answer(200, &[], &format!("{{\"pad\":\"{}\"}}", "a".repeat(4096))),
        // Chunked JSON: refused while reading.
        "/json-chunked" => {
            let (tx, response) = streamed("application/json");
            tokio::spawn(async move {
                for _ in 0..8 {
                    if tx.send(Bytes::from(vec![b' '; 512])).await.is_err() {
                        return;
                    }
                }
            });
            response
        }
        // An endless SSE line: refused after about the limit, the connection dropped.
        _ => {
            let (tx, response) = streamed("text/event-stream");
            let gone = gone_tx.clone();
            tokio::spawn(async move {
                let _ = tx.send(Bytes::from_static(b"data: ")).await;
                while tx.send(Bytes::from(vec![b'x'; 512])).await.is_ok() {}
                let _ = gone.send(Instant::now());
            });
            response
        }
    })
    .await;
    let config = |path: &str| HttpConfig::new(server.url(path)).max_message_size(1024);

    let (transport, mut rx) = streamable(config("/json-length"));
    let error = transport.send(modern_call(1, "big", json!({}))).await.unwrap_err();
    assert!(matches!(error, TransportError::Unexpected(_)), "{error:?}");
    assert_quiet(&mut rx, Duration::from_millis(50)).await;

    let (transport, mut rx) = streamable(config("/json-chunked"));
    transport.send(modern_call(2, "big", json!({}))).await.unwrap();
    assert!(matches!(expect_unanswered(&mut rx, 2).await, TransportError::Unexpected(_)));

    let (transport, mut rx) = streamable(config("/sse"));
    transport.send(legacy_call(3, "big", json!({}))).await.unwrap();
    assert!(matches!(expect_unanswered(&mut rx, 3).await, TransportError::Unexpected(_)));
    tokio::time::timeout(Duration::from_secs(5), gone_rx.recv())
        .await
        .expect("the client kept reading an oversized event")
        .unwrap();
    transport.close().await;
}

// ---------------------------------------------------------------------------------------------
// HTTP+SSE (2024-11-05)

#[tokio::test]
async fn http_sse_round_trip_against_our_server() {
    let (server, _srv) = our_server(|_| {}).await;
    let (tx, mut rx) = mcp_client::transport::inbound_channel();
    let transport = HttpSseTransport::connect(HttpConfig::new(server.url("/sse")), tx).await.unwrap();
    assert_eq!(transport.kind(), TransportKind::HttpSse);
    assert_eq!(transport.endpoint().path(), "/messages");
    assert!(transport.endpoint().query().unwrap().starts_with("sessionId="));

    transport.send(initialize("2024-11-05")).await.unwrap();
    let init = next_message(&mut rx).await;
    mcp_testkit::assert_valid_message("2024-11-05", &init);
    assert_eq!(init["result"]["protocolVersion"], "2024-11-05");
    transport.send(notification("notifications/initialized", None)).await.unwrap();
    let call = request(
        1,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "old"}}),
        None,
        RequestHeaders::default(),
    );
    transport.send(call).await.unwrap();
    let answer = next_message(&mut rx).await;
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["content"][0]["text"], "old");

    transport.close().await;
    assert!(matches!(expect_closed(&mut rx).await, TransportError::Closed));
    transport.close().await;
    assert!(rx.recv().await.is_none());
    assert!(matches!(transport.send(notification("x", None)).await, Err(TransportError::Closed)));
}

#[tokio::test]
async fn http_sse_refuses_a_cross_origin_endpoint() {
    let server = raw_server(|_| {
        sse_script(vec![(
            Duration::ZERO,
            "event: endpoint\ndata: http://127.0.0.2:1/messages\n\n".to_owned(),
        )])
    })
    .await;
    let (tx, _rx) = mcp_client::transport::inbound_channel();
    let error = HttpSseTransport::connect(HttpConfig::new(server.url("/sse")), tx).await.unwrap_err();
    assert!(matches!(error, TransportError::Unexpected(_)), "{error:?}");
}

#[tokio::test]
async fn http_sse_connect_failures() {
    let server = raw_server(|seen| match seen.path.as_str() {
        "/silent" => {
            let (gone, _) = mpsc::unbounded_channel();
            sse_until_disconnect(": waiting\n\n".to_owned(), gone)
        }
        "/json" => json_answer(200, &[], "{}"),
        _ => status(404),
    })
    .await;
    // Only the silent stream needs a short wait for its endpoint; the others answer at once,
    // and a loaded machine must not turn their answers into timeouts.
    let connect = |path: &str, wait: Duration| {
        let (tx, _rx) = mcp_client::transport::inbound_channel();
        let config = HttpConfig::new(server.url(path)).endpoint_timeout(wait);
        HttpSseTransport::connect(config, tx)
    };
    let long = Duration::from_secs(10);
    assert!(matches!(connect("/missing", long).await, Err(TransportError::Http { status: 404, .. })));
    assert!(matches!(connect("/json", long).await, Err(TransportError::Unexpected(_))));
    assert!(matches!(
        connect("/silent", Duration::from_millis(200)).await,
        Err(TransportError::Unexpected(_))
    ));
}

#[tokio::test]
async fn http_sse_stream_end_closes_the_transport() {
    let posted: Arc<Mutex<Vec<Value>>> = Arc::default();
    let seen_posts = posted.clone();
    let (end_tx, end_rx) = tokio::sync::watch::channel(false);
    let server = raw_server(move |seen| match seen.method {
        Method::GET => {
            let (tx, response) = streamed("text/event-stream");
            let mut end = end_rx.clone();
            tokio::spawn(async move {
                let _ = tx.send(Bytes::from_static(b"event: endpoint\ndata: /post?s=1\n\n")).await;
                let _ = tx
                    .send(Bytes::from_static(b"data: {\"jsonrpc\":\"2.0\",\"method\":\"hello\"}\n\n"))
                    .await;
                let _ = end.wait_for(|end| *end).await;
            });
            response
        }
        _ => {
            seen_posts.lock().unwrap().push(seen.json());
            if seen.path == "/post" { status(202) } else { status(404) }
        }
    })
    .await;
    let (tx, mut rx) = mcp_client::transport::inbound_channel();
    let transport = HttpSseTransport::connect(HttpConfig::new(server.url("/sse")), tx).await.unwrap();
    assert_eq!(next_message(&mut rx).await["method"], "hello");
    transport.send(notification("notifications/initialized", None)).await.unwrap();
    assert_eq!(posted.lock().unwrap()[0]["method"], "notifications/initialized");
    let post = server.wait_for("the POST", |s| s.method == Method::POST).await;
    assert_eq!(post.path, "/post");
    assert_eq!(post.header("content-type"), Some("application/json"));

    end_tx.send(true).unwrap();
    assert!(matches!(expect_closed(&mut rx).await, TransportError::Lost(_)));
    assert!(matches!(transport.send(notification("x", None)).await, Err(TransportError::Lost(_))));
    transport.close().await;
    assert!(rx.recv().await.is_none(), "Closed is pushed once");
}

#[tokio::test]
async fn extra_headers_reach_the_http_sse_server() {
    let server = raw_server(|seen| match seen.method {
        Method::GET => {
            let (gone, _) = mpsc::unbounded_channel();
            sse_until_disconnect("event: endpoint\ndata: /post\n\n".to_owned(), gone)
        }
        _ => status(202),
    })
    .await;
    let (tx, _rx) = mcp_client::transport::inbound_channel();
    let config = HttpConfig::new(server.url("/sse"))
        .header(HeaderName::from_static("x-api-key"), HeaderValue::from_static("k1"));
    let transport = HttpSseTransport::connect(config, tx).await.unwrap();
    transport.set_header(HeaderName::from_static("x-api-key"), HeaderValue::from_static("k2"));
    transport.send(notification("n", None)).await.unwrap();
    let requests = server.requests();
    assert_eq!(requests[0].header("x-api-key"), Some("k1"));
    assert_eq!(requests[0].header("accept"), Some("text/event-stream"));
    assert_eq!(requests[1].header("x-api-key"), Some("k2"));
    transport.close().await;
}

/// An authorization layer that counts what it is asked.
#[derive(Default)]
struct Counting {
    authorized: std::sync::atomic::AtomicUsize,
    refused: std::sync::atomic::AtomicUsize,
}

impl mcp_client::transport::http::HttpAuth for Counting {
    fn authorize<'a>(
        &'a self,
        _method: &'a Method,
        _url: &'a reqwest::Url,
    ) -> mcp_client::transport::BoxFuture<'a, Result<http::HeaderMap, mcp_client::auth::AuthError>> {
        self.authorized.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Box::pin(async move {
            let mut headers = http::HeaderMap::new();
            headers.insert(http::header::AUTHORIZATION, HeaderValue::from_static("Bearer own"));
            Ok(headers)
        })
    }

    fn refused<'a>(
        &'a self,
        _refusal: &'a mcp_client::transport::http::Refusal,
    ) -> mcp_client::transport::BoxFuture<'a, Result<bool, mcp_client::auth::AuthError>> {
        self.refused.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Box::pin(async move { Ok(true) })
    }
}

/// A request carrying its own `Authorization` (a gateway acting for its caller) goes out with
/// it in place of the transport's, in either era; the transport's authorization layer is
/// neither asked for headers nor told of a refusal (it cannot cure someone else's token).
#[tokio::test]
async fn a_request_with_its_own_authorization_bypasses_the_transports() {
    use mcp_client::transport::Credential;
    let server = raw_server(|seen| match (seen.header("authorization"), seen.json().get("id")) {
        (Some("Bearer caller"), Some(id)) => json_answer(200, &[], &result_for(id, "ok")),
        _ => json_answer(401, &[("www-authenticate", "Bearer")], "{}"),
    })
    .await;
    let auth = Arc::new(Counting::default());
    let (transport, mut rx) = streamable(HttpConfig::new(server.url("/mcp")).auth(auth.clone()));
    let own = |token: &str| RequestHeaders {
        authorization: Some(Credential::bearer(token)),
        ..RequestHeaders::default()
    };

    transport
        .send(request(1, "tools/list", json!({"_meta": meta()}), Some(MODERN), own("caller")))
        .await
        .unwrap();
    assert_eq!(next_message(&mut rx).await["id"], 1);
    let e =
        transport.send(request(2, "tools/list", json!({}), Some(LEGACY), own("stale"))).await.unwrap_err();
    assert!(matches!(e, TransportError::Http { status: 401, .. }), "{e:?}");
    let seen: Vec<Option<String>> =
        server.requests().iter().map(|r| r.header("authorization").map(str::to_owned)).collect();
    assert_eq!(seen, [Some("Bearer caller".to_owned()), Some("Bearer stale".to_owned())]);
    assert_eq!(auth.authorized.load(std::sync::atomic::Ordering::SeqCst), 0);
    assert_eq!(auth.refused.load(std::sync::atomic::Ordering::SeqCst), 0, "not the layer's to cure");
    assert!(!format!("{:?}", own("caller")).contains("caller"), "the credential in Debug");

    // Without its own, a request gets the layer's.
    transport
        .send(request(3, "tools/list", json!({"_meta": meta()}), Some(MODERN), RequestHeaders::default()))
        .await
        .unwrap_err();
    assert_eq!(server.requests()[2].header("authorization"), Some("Bearer own"));
    assert!(auth.refused.load(std::sync::atomic::Ordering::SeqCst) >= 1);
}
