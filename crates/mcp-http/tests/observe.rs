//! A server's observer over real HTTP (127.0.0.1, port 0): each request it served is told once
//! with the outcome of its own layer — a result, a tool's error (`isError`), a JSON-RPC error
//! — and each request the transport refused itself with its HTTP status, never counted twice;
//! arguments only for an observer that asks, with secrets redacted; legacy sessions opened.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use mcp_http::{HttpConfig, McpHttp};
use mcp_server::observe::{Observed, Observer, Outcome, TransportRefusal};
use mcp_server::{Args, Server, ToolError, Tools};
use schemars::JsonSchema;
use serde::Deserialize;

#[allow(dead_code)]
#[path = "support/raw_http.rs"]
mod support;

use support::{META, ONE, roundtrip};

#[derive(Deserialize, JsonSchema)]
struct Login {
    user: String,
    #[schemars(extend("format" = "password"))]
    password: String,
}

async fn login(Args(Login { user, password }): Args<Login>) -> String {
    format!("{user} logged in with {} characters", password.len())
}

async fn fail() -> Result<String, ToolError> {
    Err(ToolError::new("it broke"))
}

#[derive(Debug, Clone, PartialEq)]
enum Seen {
    Request {
        method: String,
        name: Option<String>,
        outcome: Outcome,
        arguments: Option<serde_json::Value>,
    },
    /// The session a request belonged to (`Observed::session`), when it had one.
    InSession {
        method: String,
        session: String,
    },
    Refused {
        status: u16,
        /// Its `Mcp-Method`, as a bounded label (`unknown` when it has none).
        method: &'static str,
    },
    Session(bool),
    Subscription(bool),
}

#[derive(Default)]
struct Recorder {
    seen: Mutex<Vec<Seen>>,
    started: Mutex<usize>,
    /// The bytes told, request by request: received, sent.
    bytes: Mutex<Vec<(u64, u64)>>,
    /// Says it does not watch the transport (`Observer::watches_transport`).
    ignores_transport: bool,
    /// Says it does not watch starts (`Observer::watches_starts`).
    ignores_starts: bool,
}

impl Recorder {
    fn take(&self) -> Vec<Seen> {
        std::mem::take(&mut *self.seen.lock().unwrap())
    }
}

impl Observer for Recorder {
    fn started(&self, _method: &'static str) {
        *self.started.lock().unwrap() += 1;
    }

    fn finished(&self, r: &Observed<'_>) {
        if let Some(session) = r.session {
            let method = r.method.to_owned();
            self.seen.lock().unwrap().push(Seen::InSession { method, session: session.to_owned() });
        }
        self.seen.lock().unwrap().push(Seen::Request {
            method: r.method.to_owned(),
            name: r.name.map(str::to_owned),
            outcome: r.outcome,
            arguments: r.arguments.map(|a| serde_json::Value::Object(a.clone())),
        });
    }

    fn refused(&self, r: &TransportRefusal<'_>) {
        self.seen.lock().unwrap().push(Seen::Refused { status: r.status, method: r.method });
    }

    fn session(&self, opened: bool) {
        self.seen.lock().unwrap().push(Seen::Session(opened));
    }

    fn subscription(&self, opened: bool) {
        self.seen.lock().unwrap().push(Seen::Subscription(opened));
    }

    fn bytes(&self, received: u64, sent: u64) {
        self.bytes.lock().unwrap().push((received, sent));
    }

    fn wants_arguments(&self) -> bool {
        true
    }

    fn watches_transport(&self) -> bool {
        !self.ignores_transport
    }

    fn watches_starts(&self) -> bool {
        !self.ignores_starts
    }
}

const HEADERS: [(&str, &str); 3] = [
    ("content-type", "application/json"),
    ("accept", "application/json, text/event-stream"),
    ("mcp-protocol-version", "2026-07-28"),
];

async fn call(addr: SocketAddr, name: &str, arguments: &str) -> support::Reply {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{{META},"name":"{name}","arguments":{arguments}}}}}"#
    );
    let mut headers = HEADERS.to_vec();
    headers.extend([("mcp-method", "tools/call"), ("mcp-name", name)]);
    roundtrip(ONE, addr, "POST", &headers, &body).await
}

/// `server` served over HTTP on 127.0.0.1:0 with mcp-http's router: its address, and the task
/// to abort at the end.
async fn serve(server: Server) -> (SocketAddr, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    // Fewer fields than hyper's own limit (100), so that a head with too many is refused by
    // mcp-http's check, where it is observed.
    let mut config = HttpConfig::for_bind(addr);
    config.max_headers = 50;
    let app = McpHttp::new(server, config).router();
    let task = tokio::spawn(async move {
        axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>()).await.unwrap();
    });
    (addr, task)
}

fn request(method: &str, name: Option<&str>, outcome: Outcome) -> Seen {
    Seen::Request { method: method.into(), name: name.map(Into::into), outcome, arguments: None }
}

/// Drops the arguments of every record (compared on their own).
fn without_arguments(seen: Vec<Seen>) -> Vec<Seen> {
    seen.into_iter()
        .map(|s| match s {
            Seen::Request { method, name, outcome, .. } => {
                Seen::Request { method, name, outcome, arguments: None }
            }
            other => other,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn each_layer_reports_its_own_outcome_once() {
    let server = Server::builder("observed", "1")
        .tools(Tools::new().add("login", "Log in", login).add("fail", "Fails", fail))
        .build()
        .unwrap();
    let recorder = Arc::new(Recorder::default());
    assert!(server.observe(recorder.clone()), "the first observer is taken");
    assert!(!server.observe(Arc::new(Recorder::default())), "a server has one observer");
    let (addr, task) = serve(server).await;

    // A result, with its arguments redacted where the schema says secret.
    let reply = call(addr, "login", r#"{"user":"ann","password":"hunter2"}"#).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let seen = recorder.take();
    assert_eq!(
        seen,
        [Seen::Request {
            method: "tools/call".into(),
            name: Some("login".into()),
            outcome: Outcome::Success,
            arguments: Some(serde_json::json!({"user": "ann", "password": "[redacted]"})),
        }]
    );

    // A tool's error is a 200 with isError: the tool failed, not the protocol.
    let reply = call(addr, "fail", "{}").await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["result"]["isError"], true);
    // An unknown tool is a JSON-RPC error, its name a bounded "other".
    let reply = call(addr, "nope", "{}").await;
    assert_eq!(reply.json()["error"]["code"], -32602, "{}", reply.body);
    // A JSON-RPC refusal the transport maps to 404 (a method the modern wire does not serve)
    // is the server's: told once, as a JSON-RPC error, never also as an HTTP refusal.
    let body = format!(r#"{{"jsonrpc":"2.0","id":2,"method":"nothing/here","params":{{{META}}}}}"#);
    let mut headers = HEADERS.to_vec();
    headers.push(("mcp-method", "nothing/here"));
    let reply = roundtrip(ONE, addr, "POST", &headers, &body).await;
    assert_eq!((reply.status, reply.json()["error"]["code"].as_i64()), (404, Some(-32601)));
    // Refused by the transport before the server saw them: a foreign Host, a wrong type, a
    // head over its limits (its fields' bytes, walked; their number, not walked), each
    // labelled with the method its `Mcp-Method` names (the first, when there are two).
    let foreign = [("host", "evil.example:1"), HEADERS[0], HEADERS[1], ("mcp-method", "tools/list")];
    let reply = roundtrip(ONE, addr, "POST", &foreign, "{}").await;
    assert_eq!(reply.status, 403);
    let reply = roundtrip(ONE, addr, "POST", &[("content-type", "text/plain"), HEADERS[1]], "{}").await;
    assert_eq!(reply.status, 415);
    // Refused after the endpoint took the request (its type): labelled from its `Mcp-Method`
    // as sent — a method's name, a name longer than any method's, a value that is not text.
    for method in ["tools/call", "a/method/name/longer/than/any/of/mcp/s", "tools/\u{e9}"] {
        let wrong = [("content-type", "text/plain"), HEADERS[1], ("mcp-method", method)];
        let reply = roundtrip(ONE, addr, "POST", &wrong, "{}").await;
        assert_eq!(reply.status, 415, "{method}");
    }
    let long = "x".repeat(70 * 1024);
    let large = [("mcp-method", "prompts/get"), HEADERS[0], ("mcp-method", "tools/call"), ("x-long", &long)];
    let reply = roundtrip(ONE, addr, "POST", &large, "{}").await;
    assert_eq!(reply.status, 431);
    let many: Vec<(String, String)> = (0..60).map(|i| (format!("x-field-{i}"), "1".to_owned())).collect();
    let mut fields: Vec<(&str, &str)> = many.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    fields.push(("mcp-method", "resources/read"));
    let reply = roundtrip(ONE, addr, "POST", &fields, "{}").await;
    assert_eq!(reply.status, 431);
    assert_eq!(
        without_arguments(recorder.take()),
        [
            request("tools/call", Some("fail"), Outcome::ToolError),
            request("tools/call", Some("other"), Outcome::Error { code: -32602, refused: false }),
            request("other", None, Outcome::Error { code: -32601, refused: true }),
            Seen::Refused { status: 403, method: "tools/list" },
            Seen::Refused { status: 415, method: "unknown" },
            Seen::Refused { status: 415, method: "tools/call" },
            Seen::Refused { status: 415, method: "other" },
            Seen::Refused { status: 415, method: "unknown" },
            Seen::Refused { status: 431, method: "prompts/get" },
            Seen::Refused { status: 431, method: "resources/read" },
        ]
    );

    // A legacy session: opened at initialize, its requests under it.
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let reply = roundtrip(ONE, addr, "POST", &HEADERS[..2], init).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let seen = recorder.take();
    assert!(seen.contains(&Seen::Session(true)), "{seen:?}");
    assert!(seen.contains(&request("initialize", None, Outcome::Success)), "{seen:?}");
    assert_eq!(*recorder.started.lock().unwrap(), 5, "every request the server took up was started once");

    // A request of the session names it by a digest of its id, never the id (a credential).
    let id = reply.header("mcp-session-id").expect("a session id").to_owned();
    let mut headers = HEADERS[..2].to_vec();
    headers.extend([("mcp-session-id", id.as_str()), ("mcp-protocol-version", "2025-11-25")]);
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let reply = roundtrip(ONE, addr, "POST", &headers, list).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let seen = recorder.take();
    let label = mcp_http::session_label(&id);
    assert!(seen.contains(&Seen::InSession { method: "tools/list".into(), session: label }), "{seen:?}");
    assert!(!format!("{seen:?}").contains(&id), "the id itself: {seen:?}");

    task.abort();
}

/// The endpoint tells its bytes and its own refusals itself (no layer in front of it); the
/// other routes — HTTP+SSE, and the fallback's `404` — are observed by the layer around them,
/// each request once.
#[tokio::test(flavor = "multi_thread")]
async fn the_endpoint_and_the_other_routes_are_each_observed_once() {
    let server =
        Server::builder("observed", "1").tools(Tools::new().add("login", "Log in", login)).build().unwrap();
    let recorder = Arc::new(Recorder::default());
    assert!(server.observe(recorder.clone()));
    let (addr, task) = serve(server).await;

    let arguments = r#"{"user":"ann","password":"hunter2"}"#;
    let reply = call(addr, "login", arguments).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let sent = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"#.len()
        + META.len()
        + r#","name":"login","arguments":}}"#.len()
        + arguments.len();
    assert_eq!(*recorder.bytes.lock().unwrap(), [(sent as u64, reply.body.len() as u64)]);
    recorder.take();

    // The fallback, behind the observing layer: a path nothing serves.
    let reply = roundtrip(ONE, addr, "POST /nope", &[HEADERS[0], ("mcp-method", "tools/list")], "{}").await;
    assert_eq!(reply.status, 404);
    // HTTP+SSE's routes: a foreign Origin, refused by their Host/Origin guard inside the layer.
    let foreign = [HEADERS[0], ("origin", "https://evil.example"), ("mcp-method", "tools/call")];
    let reply = roundtrip(ONE, addr, "POST /messages?sessionId=x", &foreign, "{}").await;
    assert_eq!(reply.status, 403);
    // The endpoint's own Host/Origin check, done by its handler.
    let reply = roundtrip(ONE, addr, "POST", &foreign, "{}").await;
    assert_eq!(reply.status, 403);
    assert_eq!(
        recorder.take(),
        [
            Seen::Refused { status: 404, method: "tools/list" },
            Seen::Refused { status: 403, method: "tools/call" },
            Seen::Refused { status: 403, method: "tools/call" },
        ]
    );
    assert_eq!(recorder.bytes.lock().unwrap().len(), 4, "bytes told once a request");
    task.abort();
}

/// An observer that does not watch the transport is told the requests the server served and
/// nothing of what the transport refused; the transport's own checks stay in place (the head's
/// limits first, then `Host`).
#[tokio::test(flavor = "multi_thread")]
async fn an_observer_that_does_not_watch_the_transport_is_told_only_the_servers_requests() {
    let server =
        Server::builder("observed", "1").tools(Tools::new().add("login", "Log in", login)).build().unwrap();
    let recorder = Arc::new(Recorder { ignores_transport: true, ..Recorder::default() });
    assert!(server.observe(recorder.clone()));
    let (addr, task) = serve(server).await;

    let reply = call(addr, "login", r#"{"user":"ann","password":"hunter2"}"#).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let reply =
        roundtrip(ONE, addr, "POST", &[("host", "evil.example:1"), HEADERS[0], HEADERS[1]], "{}").await;
    assert_eq!(reply.status, 403, "Host is still checked");
    let long = "x".repeat(70 * 1024);
    let reply =
        roundtrip(ONE, addr, "POST", &[HEADERS[0], HEADERS[1], ("x-long", long.as_str())], "{}").await;
    assert_eq!(reply.status, 431, "the head's limits are still checked");
    assert_eq!(
        without_arguments(recorder.take()),
        [request("tools/call", Some("login"), Outcome::Success)],
        "no refusal told"
    );
    task.abort();
}

/// A list of observers given to a server: each member is told directly, and only what it
/// watches — starts to those that watch them, the transport's bytes and refusals to those that
/// watch the transport, every request's end to all — however deep the lists are nested.
#[tokio::test(flavor = "multi_thread")]
async fn each_member_of_a_list_is_told_only_what_it_watches() {
    use mcp_server::observe::Observers;
    let server =
        Server::builder("observed", "1").tools(Tools::new().add("login", "Log in", login)).build().unwrap();
    let all = Arc::new(Recorder::default());
    let ends_only =
        Arc::new(Recorder { ignores_transport: true, ignores_starts: true, ..Recorder::default() });
    let inner = Observers::new().with(ends_only.clone()).into_observer().unwrap();
    let nested = Observers::new()
        .with(Arc::new(Observers::new().with(inner).with(Arc::new(Observers::new()))))
        .into_observer()
        .unwrap();
    let list = Observers::new().with(all.clone()).with(nested).into_observer().unwrap();
    assert!(list.watches_starts() && list.watches_transport());
    let starting = mcp_server::observe::narrowed(&list, |o| o.watches_starts());
    assert_eq!(starting.len(), 1, "only the recorder that watches starts");
    assert_eq!(mcp_server::observe::narrowed(&list, |_| true).len(), 2, "the lists flattened");
    assert!(server.observe(list));
    let (addr, task) = serve(server).await;

    let reply = call(addr, "login", r#"{"user":"ann","password":"hunter2"}"#).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let reply =
        roundtrip(ONE, addr, "POST", &[("host", "evil.example:1"), HEADERS[0], HEADERS[1]], "{}").await;
    assert_eq!(reply.status, 403);

    let served = request("tools/call", Some("login"), Outcome::Success);
    assert_eq!(
        without_arguments(all.take()),
        [served.clone(), Seen::Refused { status: 403, method: "unknown" }]
    );
    assert_eq!(*all.started.lock().unwrap(), 1);
    assert_eq!(all.bytes.lock().unwrap().len(), 2, "both requests' bytes");
    assert_eq!(without_arguments(ends_only.take()), [served], "the request's end, no refusal");
    assert_eq!(*ends_only.started.lock().unwrap(), 0, "no start told");
    assert!(ends_only.bytes.lock().unwrap().is_empty(), "no bytes told");
    task.abort();
}

/// `ServerConfig::rate_limit`: per caller × method × tool, listing included; beyond it a
/// `-31000` with `retryAfterMs`, answered `429` with `Retry-After` — and told to the observer
/// as the server's refusal, never as an HTTP one.
#[tokio::test(flavor = "multi_thread")]
async fn a_caller_over_its_rate_gets_429_with_retry_after() {
    let config = mcp_server::ServerConfig::default()
        .with_rate_limit(Some(mcp_server::RateLimit::new(2, std::time::Duration::from_secs(60))));
    let server = Server::builder("limited", "1")
        .tools(Tools::new().add("login", "Log in", login).add("fail", "Fails", fail))
        .config(config)
        .build()
        .unwrap();
    let recorder = Arc::new(Recorder::default());
    server.observe(recorder.clone());
    let (addr, task) = serve(server).await;

    for _ in 0..2 {
        assert_eq!(call(addr, "fail", "{}").await.status, 200);
    }
    let limited = call(addr, "fail", "{}").await;
    assert_eq!(limited.status, 429, "{}", limited.body);
    let error = &limited.json()["error"];
    assert_eq!(error["code"], mcp_types::code::RATE_LIMITED);
    let wait = error["data"]["retryAfterMs"].as_u64().expect("retryAfterMs");
    assert!(wait > 0 && wait <= 30_000, "{wait}");
    let seconds: u64 = limited.header("retry-after").expect("Retry-After").parse().unwrap();
    assert_eq!(seconds, wait.div_ceil(1000));
    // Another tool, and listing, have buckets of their own; listing is limited too.
    assert_eq!(call(addr, "login", r#"{"user":"a","password":"b"}"#).await.status, 200);
    let list = format!(r#"{{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{{{META}}}}}"#);
    let mut headers = HEADERS.to_vec();
    headers.push(("mcp-method", "tools/list"));
    let statuses: Vec<u16> = {
        let mut all = Vec::new();
        for _ in 0..3 {
            all.push(roundtrip(ONE, addr, "POST", &headers, &list).await.status);
        }
        all
    };
    assert_eq!(statuses, [200, 200, 429]);
    let seen = without_arguments(recorder.take());
    let limited = seen
        .iter()
        .filter(|s| {
            matches!(
                s,
                Seen::Request {
                    outcome: Outcome::Error { code: mcp_types::code::RATE_LIMITED, refused: true },
                    ..
                }
            )
        })
        .count();
    assert_eq!(limited, 2, "{seen:?}");
    assert!(!seen.iter().any(|s| matches!(s, Seen::Refused { .. })), "never an HTTP refusal too: {seen:?}");
    task.abort();
}

/// A `subscriptions/listen` stream counts as open from its acknowledgement until the client
/// goes away (the subscriptions gauge).
#[tokio::test]
async fn a_listen_stream_is_open_until_its_client_goes_away() {
    let server =
        Server::builder("observed", "1").tools(Tools::new().add("fail", "Fails", fail)).build().unwrap();
    let recorder = Arc::new(Recorder::default());
    assert!(server.observe(recorder.clone()));
    let (addr, task) = serve(server).await;
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{{{META},"notifications":{{"toolsListChanged":true}}}}}}"#
    );
    let mut headers = HEADERS.to_vec();
    headers.push(("mcp-method", "subscriptions/listen"));
    let stream =
        support::Open::start(ONE, addr, "POST", &headers, &body, "notifications/subscriptions/acknowledged")
            .await;
    assert_eq!(stream.status, 200, "{}", stream.text());
    assert_eq!(recorder.take(), [Seen::Subscription(true)]);
    drop(stream);
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let seen = recorder.seen.lock().unwrap().clone();
        if seen.contains(&Seen::Subscription(false)) {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "the stream never ended: {seen:?}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    task.abort();
}
