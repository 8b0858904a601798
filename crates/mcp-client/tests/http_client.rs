//! The client over real HTTP sockets (127.0.0.1, port 0) against servers that misbehave: one
//! that accepts connections and never answers, one that answers the handshake and then stops
//! answering, ones that answer with something that is not MCP. Every timeout under test is
//! short; every wait is bounded by a generous outer timeout that only a hang reaches. Also:
//! the password of a URL never shows in errors, `Debug` output or logs.
#![cfg(feature = "http")]

mod capture;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::response::Response;
use capture::Captured;
use http::Method;
use mcp_client::transport::TransportError;
use mcp_client::transport::http::{HttpConfig, HttpSseTransport};
use mcp_client::{ClientBuilder, ClientError, EraCache, Outcome, RequestOptions};
use mcp_types::{CallToolRequestParams, ProtocolVersion};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

const SHORT: Duration = Duration::from_millis(300);

/// The client's own request timeout where it also bounds calls meant to succeed.
const CLIENT_TIMEOUT: Duration = Duration::from_millis(1500);

/// Fails the test instead of hanging when a timeout under test does not fire.
async fn bounded<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(30), f).await.unwrap_or_else(|_| panic!("{what} hung"))
}

/// A client of its own era cache (nothing remembered from other tests).
fn builder() -> ClientBuilder {
    ClientBuilder::new("http-client-test", "1").era_cache(EraCache::new())
}

/// A task stopped (and whatever it holds dropped) when the test ends, panicking or not.
struct Task(JoinHandle<()>);

impl Drop for Task {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A TCP server that accepts every connection, keeps it open and never sends a byte.
async fn silent_server() -> (SocketAddr, Task) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    (addr, Task(task))
}

/// An HTTP server answering every request with `answer(method, message)`; `None` never answers.
/// Every POSTed message is recorded.
async fn server<F>(answer: F) -> (SocketAddr, Arc<Mutex<Vec<Value>>>, Task)
where
    F: Fn(&Method, &Value) -> Option<Response> + Clone + Send + Sync + 'static,
{
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let recorder = seen.clone();
    let app = axum::Router::new().fallback(move |method: Method, body: Bytes| {
        let answer = answer.clone();
        let seen = recorder.clone();
        async move {
            let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            if method == Method::POST {
                seen.lock().unwrap().push(message.clone());
            }
            match answer(&method, &message) {
                Some(response) => response,
                None => std::future::pending().await,
            }
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (addr, seen, Task(task))
}

fn answer(status: u16, content_type: &str, body: String) -> Option<Response> {
    Some(
        Response::builder()
            .status(status)
            .header("content-type", content_type)
            .body(Body::from(body))
            .unwrap(),
    )
}

fn result(message: &Value, result: Value) -> Option<Response> {
    let body = json!({"jsonrpc": "2.0", "id": message["id"], "result": result});
    answer(200, "application/json", body.to_string())
}

/// A Streamable HTTP server, modern or legacy, that answers everything but a `tools/call` of
/// the tool `slow`.
fn stops_answering(legacy: bool) -> impl Fn(&Method, &Value) -> Option<Response> + Clone {
    move |method, message| {
        if method != Method::POST {
            return answer(405, "text/plain", String::new());
        }
        match message["method"].as_str() {
            Some("server/discover") if legacy => answer(400, "text/plain", "unknown method".into()),
            Some("server/discover") => result(
                message,
                json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
                    "capabilities": {"tools": {}}, "ttlMs": 0, "cacheScope": "public"}),
            ),
            Some("initialize") => {
                let body = json!({"jsonrpc": "2.0", "id": message["id"], "result": {
                    "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "legacy", "version": "1"}}});
                Some(
                    Response::builder()
                        .header("content-type", "application/json")
                        .header("mcp-session-id", "session-1")
                        .body(Body::from(body.to_string()))
                        .unwrap(),
                )
            }
            Some("tools/list") => result(
                message,
                json!({"tools": [{"name": "fast", "inputSchema": {"type": "object"}}, {"name": "slow", "inputSchema": {"type": "object"}}]}),
            ),
            Some("tools/call") if message["params"]["name"] == "slow" => None,
            Some("tools/call") => result(
                message,
                json!({"resultType": "complete", "content": [{"type": "text", "text": "quick"}]}),
            ),
            _ if message.get("id").is_none() => answer(202, "text/plain", String::new()),
            _ => answer(400, "text/plain", String::new()),
        }
    }
}

#[tokio::test]
async fn a_server_that_accepts_and_never_answers_fails_connect_within_the_probe_timeout() {
    let (addr, _server) = silent_server().await;
    let url = format!("http://{addr}/mcp");
    let connecting = builder().probe_timeout(SHORT).connect_http(HttpConfig::new(&url));
    let e = bounded("connect_http", connecting).await.unwrap_err();
    assert!(matches!(e, ClientError::Timeout(t) if t == SHORT), "{e:?}");
    assert_eq!(e.outcome(), Outcome::Unknown);

    // A pinned legacy version: `initialize` is bounded by the request timeout.
    let connecting = builder()
        .pin_version(ProtocolVersion::V2025_11_25)
        .request_timeout(Some(SHORT))
        .connect_http(HttpConfig::new(&url));
    let e = bounded("connect_http (legacy)", connecting).await.unwrap_err();
    assert!(matches!(e, ClientError::Timeout(t) if t == SHORT), "{e:?}");

    // HTTP+SSE: the stream that never opens is bounded by the endpoint timeout.
    let (tx, _rx) = mcp_client::transport::inbound_channel();
    let opening = HttpSseTransport::connect(HttpConfig::new(&url).endpoint_timeout(SHORT), tx);
    match bounded("HttpSseTransport::connect", opening).await {
        Err(TransportError::Unexpected(message)) => assert!(message.contains("did not open"), "{message}"),
        other => panic!("expected a timeout, got {other:?}"),
    }
}

#[tokio::test]
async fn calls_time_out_when_the_server_stops_answering_and_are_cancelled() {
    for legacy in [false, true] {
        let (addr, seen, _server) = server(stops_answering(legacy)).await;
        // The client's timeout bounds the handshake and the quick calls too: long enough for a
        // loaded machine, as the slow call never ends whatever it is.
        let client = bounded(
            "connect_http",
            builder()
                .request_timeout(Some(CLIENT_TIMEOUT))
                .connect_http(HttpConfig::new(format!("http://{addr}/mcp"))),
        )
        .await
        .unwrap();
        assert_eq!(client.protocol_version().is_modern(), !legacy);
        let quick = bounded("fast", client.call_tool("fast", json!({}))).await.unwrap();
        assert_eq!(quick.content.len(), 1);

        // The call's own timeout, then the client's.
        let slow = CallToolRequestParams::new("slow");
        for (options, limit) in [
            (RequestOptions::new().timeout(Duration::from_millis(200)), Duration::from_millis(200)),
            (RequestOptions::new(), CLIENT_TIMEOUT),
        ] {
            let e = bounded("slow", client.call_tool_with(&slow, &options)).await.unwrap_err();
            assert!(matches!(e, ClientError::Timeout(t) if t == limit), "legacy={legacy}: {e:?}");
            assert_eq!(e.outcome(), Outcome::Unknown);
        }
        if legacy {
            // A legacy session is told, by notification, for each call given up.
            let ids: Vec<Value> = seen
                .lock()
                .unwrap()
                .iter()
                .filter(|m| m["method"] == "tools/call" && m["params"]["name"] == "slow")
                .map(|m| m["id"].clone())
                .collect();
            assert_eq!(ids.len(), 2, "not retried");
            for _ in 0..1000 {
                let cancelled =
                    seen.lock().unwrap().iter().filter(|m| m["method"] == "notifications/cancelled").count();
                if cancelled == ids.len() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            let cancelled: Vec<Value> = seen
                .lock()
                .unwrap()
                .iter()
                .filter(|m| m["method"] == "notifications/cancelled")
                .map(|m| m["params"]["requestId"].clone())
                .collect();
            assert_eq!(cancelled, ids);
        }
        // Still usable.
        bounded("fast again", client.call_tool("fast", json!({}))).await.unwrap();
        bounded("close", client.close()).await;
    }
}

#[tokio::test]
async fn answers_that_are_not_mcp_say_what_they_are() {
    let cases: [(&str, &str, &str); 6] = [
        (
            "text/html",
            "<html>hello</html>",
            "the server answered the request with content type text/html instead of",
        ),
        ("", "hello", "the server answered the request with no content type instead of"),
        ("application/json", r#"{"ok": true}"#, "the server's JSON answer is not a JSON-RPC response"),
        (
            "application/json",
            r#"{"jsonrpc":"2.0","id":99,"result":{}}"#,
            "is the response to request 99, not to request",
        ),
        ("application/json", " \n", "the server answered the request with an empty JSON body"),
        (
            "application/json",
            r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#,
            "the server's JSON answer is not a JSON-RPC response",
        ),
    ];
    for (content_type, body, expected) in cases {
        let (addr, _, _server) = server(move |_, _| {
            let mut response = Response::builder();
            if !content_type.is_empty() {
                response = response.header("content-type", content_type);
            }
            Some(response.body(Body::from(body)).unwrap())
        })
        .await;
        let connecting = builder()
            .probe_timeout(Duration::from_secs(10))
            .connect_http(HttpConfig::new(format!("http://{addr}/mcp")));
        let e = bounded("connect_http", connecting).await.unwrap_err();
        let text = e.to_string();
        assert!(text.contains(expected), "{content_type}: {text}");
        assert!(!text.contains("Some("), "{text}");
    }
}

// Single-threaded: the thread-local subscriber sees the transport's tasks too.
#[tokio::test(flavor = "current_thread")]
async fn url_passwords_never_show_in_errors_debug_output_or_logs() {
    let captured = Captured::default();
    let _guard = captured.install("mcp_client=trace");

    // An invalid URL, and a refused connection.
    // Bound and never listened on, held to the end: refused, and never handed to another bind.
    let refused = tokio::net::TcpSocket::new_v4().unwrap();
    refused.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let refused_addr = refused.local_addr().unwrap();
    let failures = [
        (
            "http://me:hunter2@127.0.0.1:notaport/mcp".to_owned(),
            "invalid URL \"http://me:***@127.0.0.1:notaport/mcp\"",
        ),
        // The cause of a failed send is named.
        (format!("http://me:hunter2@{refused_addr}/mcp"), "error sending request: client error (Connect)"),
    ];
    for (url, expected) in failures {
        let e = bounded("connect_http", builder().connect_http(HttpConfig::new(&url))).await.unwrap_err();
        assert!(e.to_string().contains(expected), "{e}");
        for text in [e.to_string(), format!("{e:?}")] {
            assert!(!text.contains("hunter2"), "{text}");
        }
    }

    // A connection that works: its Debug output and the client's logs.
    let (addr, _, _server) = server(stops_answering(false)).await;
    let url = format!("http://me:hunter2@{addr}/mcp");
    let config = HttpConfig::new(&url);
    assert!(!format!("{config:?}").contains("hunter2"));
    let client = bounded("connect_http", builder().connect_http(config)).await.unwrap();
    bounded("fast", client.call_tool("fast", json!({}))).await.unwrap();
    let debug = format!("{client:?}");
    assert!(debug.contains("me:***@"), "{debug}");
    assert!(!debug.contains("hunter2"), "{debug}");
    client.close().await;

    let logs = captured.text();
    assert!(logs.contains("connected"), "the connection is logged: {logs}");
    assert!(logs.contains("me:***@"), "{logs}");
    assert!(!logs.contains("hunter2"), "{logs}");
}

/// The timeouts of the authorization test: short against the login, long enough for a loaded
/// machine to answer a local request in.
const AUTH_TEST_TIMEOUT: Duration = Duration::from_secs(1);
/// How long the login of the authorization test takes: three times every timeout.
const LOGIN: Duration = Duration::from_secs(3);

/// An authorization layer whose flow (after the first refusal) takes longer than every timeout
/// of the client, as a person logging in through a browser would.
struct SlowLogin {
    granted: std::sync::atomic::AtomicBool,
}

impl mcp_client::transport::http::HttpAuth for SlowLogin {
    fn authorize<'a>(
        &'a self,
        _method: &'a Method,
        _url: &'a reqwest::Url,
    ) -> mcp_client::transport::BoxFuture<'a, Result<http::HeaderMap, mcp_client::auth::AuthError>> {
        Box::pin(async move {
            let mut headers = http::HeaderMap::new();
            if self.granted.load(std::sync::atomic::Ordering::SeqCst) {
                headers.insert(http::header::AUTHORIZATION, http::HeaderValue::from_static("Bearer granted"));
            }
            Ok(headers)
        })
    }

    fn refused<'a>(
        &'a self,
        _refusal: &'a mcp_client::transport::http::Refusal,
    ) -> mcp_client::transport::BoxFuture<'a, Result<bool, mcp_client::auth::AuthError>> {
        Box::pin(async move {
            tokio::time::sleep(LOGIN).await;
            self.granted.store(true, std::sync::atomic::Ordering::SeqCst);
            Ok(true)
        })
    }
}

#[tokio::test]
async fn time_spent_authorizing_does_not_count_against_the_timeouts() {
    let answers = stops_answering(false);
    let app = axum::Router::new().fallback(move |method: Method, headers: http::HeaderMap, body: Bytes| {
        let answers = answers.clone();
        async move {
            if headers.get(http::header::AUTHORIZATION).is_none_or(|v| v != "Bearer granted") {
                return Response::builder()
                    .status(401)
                    .header("www-authenticate", "Bearer")
                    .body(Body::empty())
                    .unwrap();
            }
            let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            answers(&method, &message)
                .unwrap_or_else(|| Response::builder().status(500).body(Body::empty()).unwrap())
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let _server = Task(tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    }));
    let auth = Arc::new(SlowLogin { granted: false.into() });
    let config = HttpConfig::new(format!("http://{addr}/mcp")).auth(auth);
    // Every timeout is shorter than the login.
    let client = bounded(
        "connect",
        builder()
            .probe_timeout(AUTH_TEST_TIMEOUT)
            .request_timeout(Some(AUTH_TEST_TIMEOUT))
            .max_request_timeout(Some(AUTH_TEST_TIMEOUT))
            .connect_http(config),
    )
    .await
    .expect("the login's time counted against the probe");
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    let result = bounded("call", client.call_tool("fast", Value::Null)).await.unwrap();
    assert_eq!(result.content.len(), 1);
}
