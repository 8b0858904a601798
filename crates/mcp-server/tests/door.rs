//! The front door (`mcp_server::door`): what a request is classified as, which refusal kind
//! each check reports (and that errors after dispatch are answers), the duplicate-id and
//! cancellation rules, and the era rule for unreadable input — the one path every transport
//! takes.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use mcp_server::door::{self, Inbound};
use mcp_server::{Args, Classified, Connection, NullSink, Refusal, Reply, Server, State, Tools};
use mcp_types::ResponseId;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    text: String,
}

async fn echo(State(runs): State<Arc<AtomicUsize>>, Args(EchoArgs { text }): Args<EchoArgs>) -> String {
    runs.fetch_add(1, Ordering::SeqCst);
    text
}

struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

async fn forever(State(dropped): State<Arc<AtomicBool>>) -> &'static str {
    let _guard = DropFlag(dropped);
    std::future::pending::<()>().await;
    "never"
}

fn server(runs: Arc<AtomicUsize>, dropped: Arc<AtomicBool>) -> Server {
    Server::builder("door", "1")
        .state(runs)
        .state(dropped)
        .tools(Tools::new().add("echo", "Echo", echo).add("forever", "Never finishes", forever))
        .build()
        .unwrap()
}

fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

fn line(id: Value, method: &str, params: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).unwrap()
}

fn classify(bytes: &[u8]) -> Classified {
    match door::receive(bytes, false) {
        Ok(Inbound::Request(request)) => request,
        other => panic!("not a request: {other:?}"),
    }
}

/// One request through the front door on `connection`.
async fn through(server: &Server, connection: &Arc<Connection>, bytes: &[u8]) -> Option<Reply> {
    let request = classify(bytes);
    match door::admit(connection, &request) {
        Ok(in_flight) => server.run(request, &in_flight, None, None).await,
        Err(refusal) => Some(refusal),
    }
}

fn body(reply: &Reply) -> Value {
    serde_json::from_slice(&reply.to_vec()).unwrap()
}

#[test]
fn a_request_is_classified_once_into_its_era_meta_and_typed_params() {
    let mut params = json!({"name": "echo", "arguments": {"text": "hi"}});
    params["_meta"] = modern_meta();
    let call = classify(&line(json!(3), "tools/call", params));
    assert!(call.is_modern() && call.has_meta() && call.unreadable().is_none());
    assert_eq!(call.method(), "tools/call");
    assert_eq!(call.meta().protocol_version.as_deref(), Some("2026-07-28"));
    let named = call.named().expect("tools/call names a tool");
    // Borrowed from the typed params decoded at classification: nothing parsed the body again.
    assert!(matches!(named.name, Some(Cow::Borrowed("echo"))), "{:?}", named.name);
    assert!(matches!(&named.arguments, Some(Cow::Borrowed(a)) if a["text"] == "hi"));

    let legacy = classify(&line(json!("a"), "resources/read", json!({"uri": "file:///x"})));
    assert!(!legacy.is_modern() && !legacy.has_meta());
    assert!(matches!(legacy.named().unwrap().name, Some(Cow::Borrowed("file:///x"))));
    assert!(classify(&line(json!(1), "tools/list", json!({}))).named().is_none());

    // Params that do not decode keep the era their `_meta` says, and what the body names.
    let bad = classify(&line(
        json!(1),
        "tools/call",
        json!({"name": "echo", "requestState": 5, "_meta": modern_meta()}),
    ));
    assert!(bad.is_modern() && bad.unreadable().is_none());
    assert_eq!(bad.named().unwrap().name.as_deref(), Some("echo"));
    // An unreadable `_meta` leaves no era to tell: the -32602 is kept for the router.
    let unreadable = classify(&line(json!(1), "tools/call", json!({"name": "echo", "_meta": 5})));
    assert!(!unreadable.is_modern());
    assert_eq!(unreadable.unreadable().map(|e| e.code), Some(-32602));
}

#[tokio::test]
async fn each_check_reports_its_refusal_and_errors_after_dispatch_are_answers() {
    let runs = Arc::new(AtomicUsize::new(0));
    let server = server(runs.clone(), Arc::default());
    let connection = Connection::new(Arc::new(NullSink));
    let with_meta = |meta: Value, extra: Value| {
        let mut params = extra;
        params["_meta"] = meta;
        params
    };
    let cases = [
        (
            "tools/list",
            with_meta(json!({"io.modelcontextprotocol/clientCapabilities": {}}), json!({})),
            Some(Refusal::MissingMeta),
            -32602,
        ),
        (
            "tools/list",
            with_meta(json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"}), json!({})),
            Some(Refusal::MissingMeta),
            -32602,
        ),
        (
            "tools/list",
            with_meta(
                json!({"io.modelcontextprotocol/protocolVersion": "1999-01-01", "io.modelcontextprotocol/clientCapabilities": {}}),
                json!({}),
            ),
            Some(Refusal::UnsupportedVersion),
            -32022,
        ),
        ("ping", with_meta(modern_meta(), json!({})), Some(Refusal::UnknownMethod), -32601),
        ("no/such", with_meta(modern_meta(), json!({})), Some(Refusal::UnknownMethod), -32601),
        ("tools/call", with_meta(modern_meta(), json!({"name": 5})), Some(Refusal::MalformedParams), -32602),
        (
            "tools/list",
            with_meta(modern_meta(), json!({"cursor": "not-a-cursor"})),
            Some(Refusal::MalformedParams),
            -32602,
        ),
        ("tools/call", json!({"name": "echo", "_meta": 5}), Some(Refusal::MalformedParams), -32602),
        ("tools/list", json!({}), Some(Refusal::NeedsHandshake), -32602),
        ("tools/call", with_meta(modern_meta(), json!({"name": "nope"})), None, -32602),
    ];
    for (id, (method, params, refusal, code)) in cases.into_iter().enumerate() {
        let reply = through(&server, &connection, &line(json!(id), method, params.clone())).await.unwrap();
        assert_eq!(reply.refusal, refusal, "{method} {params}");
        assert_eq!(body(&reply)["error"]["code"], code, "{method} {params}");
        assert_eq!(body(&reply)["id"], id, "{method} {params}");
    }
    assert_eq!(runs.load(Ordering::SeqCst), 0, "no refused request ran a tool");

    let ok = with_meta(modern_meta(), json!({"name": "echo", "arguments": {"text": "hi"}}));
    let reply = through(&server, &connection, &line(json!(99), "tools/call", ok)).await.unwrap();
    assert_eq!(reply.refusal, None);
    assert_eq!(body(&reply)["result"]["content"][0]["text"], "hi");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_duplicate_id_is_refused_and_a_request_cancelled_before_it_started_never_runs() {
    let runs = Arc::new(AtomicUsize::new(0));
    let dropped = Arc::new(AtomicBool::new(false));
    let server = server(runs.clone(), dropped.clone());
    let connection = Connection::new(Arc::new(NullSink));
    let call = |tool: &str| {
        line(
            json!(7),
            "tools/call",
            json!({"name": tool, "arguments": {"text": "x"}, "_meta": modern_meta()}),
        )
    };

    let first = classify(&call("echo"));
    let in_flight = door::admit(&connection, &first).unwrap();
    let second = classify(&call("echo"));
    let Err(refusal) = door::admit(&connection, &second) else { panic!("a second id 7 was admitted") };
    assert_eq!(refusal.refusal, Some(Refusal::DuplicateId));
    assert_eq!(body(&refusal)["error"]["code"], -32600);
    assert_eq!(body(&refusal)["id"], 7);

    // Cancelled before it started (a cancellation read right behind it): never run.
    assert!(connection.cancel(&mcp_types::RequestId::from(7)));
    assert!(server.run(first, &in_flight, None, None).await.is_none());
    assert_eq!(runs.load(Ordering::SeqCst), 0);
    drop(in_flight);

    // Cancelled while running: the handler's future is dropped and nothing is answered.
    let request = classify(&call("forever"));
    let in_flight = door::admit(&connection, &request).unwrap();
    let token = in_flight.token().clone();
    let run = server.run(request, &in_flight, None, None);
    let cancel = async {
        tokio::task::yield_now().await;
        token.cancel();
    };
    let (reply, ()) = tokio::join!(run, cancel);
    assert!(reply.is_none());
    assert!(dropped.load(Ordering::SeqCst), "the handler's future was dropped");
}

#[tokio::test]
async fn unreadable_input_is_answered_by_the_era_of_its_session() {
    let server = server(Arc::default(), Arc::default());
    let unreadable =
        door::receive(br#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#, false).unwrap_err();
    // Before any session, 2025-11-25 and 2026-07-28: no id.
    let reply = unreadable.reply(None);
    assert_eq!(reply.refusal, Some(Refusal::Unreadable));
    assert_eq!(reply.response.id, ResponseId::Absent);
    // A session of a revision before 2025-11-25: `"id": null`.
    let connection = Connection::new(Arc::new(NullSink));
    let init = line(
        json!(0),
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    assert!(through(&server, &connection, &init).await.unwrap().refusal.is_none());
    assert_eq!(unreadable.reply(connection.session().as_ref()).response.id, ResponseId::Null);
    assert!(body(&unreadable.reply(connection.session().as_ref())).get("id").is_some_and(Value::is_null));
}

/// A transport that read the clock when it took a request up says so
/// (`Classified::received_at`), and the observer's duration runs from that reading; without
/// one, from the server taking the request up.
#[tokio::test]
async fn an_observed_duration_runs_from_when_the_transport_took_the_request_up() {
    use mcp_server::observe::{Observed, Observer};
    use std::sync::Mutex;
    use std::time::{Duration, Instant};
    #[derive(Default)]
    struct Durations(Mutex<Vec<Duration>>);
    impl Observer for Durations {
        fn finished(&self, request: &Observed<'_>) {
            self.0.lock().unwrap().push(request.duration);
        }
    }
    let server = server(Arc::default(), Arc::default());
    let durations = Arc::new(Durations::default());
    assert!(server.observe(durations.clone()));
    let connection = Arc::new(Connection::new(Arc::new(NullSink)));
    let bytes = line(
        json!(1),
        "tools/call",
        json!({"_meta": modern_meta(), "name": "echo", "arguments": {"text": "a"}}),
    );

    let mut request = classify(&bytes);
    request.received_at(Instant::now() - Duration::from_secs(30));
    let in_flight = door::admit(&connection, &request).unwrap();
    assert!(server.run(request, &in_flight, None, None).await.is_some());
    drop(in_flight);
    assert!(through(&server, &connection, &bytes).await.is_some());

    let durations = durations.0.lock().unwrap().clone();
    assert_eq!(durations.len(), 2);
    assert!(durations[0] >= Duration::from_secs(30), "from the transport's reading: {:?}", durations[0]);
    assert!(durations[1] < Duration::from_secs(30), "from the server's own: {:?}", durations[1]);
}
