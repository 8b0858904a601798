//! The dispatch rule (docs/CONFORMANCE.md §3) when a request's body and its session header
//! disagree about the era: a request whose `_meta` is 2026-07-28's is served as 2026-07-28,
//! whatever `Mcp-Session-Id` it carries. Real sockets on 127.0.0.1, port 0.

use std::sync::Arc;
use std::time::Duration;

use mcp_server::{Args, Cancel, ResponseStream, Server, State, Tools};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Notify;

#[allow(dead_code)]
#[path = "support/raw_http.rs"]
mod support;

#[derive(Deserialize, JsonSchema)]
struct RegionArgs {
    #[schemars(extend("x-mcp-header" = "Region"))]
    region: String,
}

/// Counts its runs: it must not run for a refused request.
#[derive(Clone, Default)]
struct Runs(Arc<std::sync::atomic::AtomicUsize>);

impl Runs {
    fn get(&self) -> usize {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

async fn region(State(runs): State<Runs>, Args(RegionArgs { region }): Args<RegionArgs>) -> String {
    runs.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    region
}

/// `parked` signals when it starts and when its future is dropped (cancelled); it never ends.
#[derive(Clone, Default)]
struct Parked {
    entered: Arc<Notify>,
    dropped: Arc<Notify>,
}

struct NotifyOnDrop(Arc<Notify>);

impl Drop for NotifyOnDrop {
    fn drop(&mut self) {
        self.0.notify_one();
    }
}

async fn parked(State(parked): State<Parked>) -> &'static str {
    let _dropped = NotifyOnDrop(parked.dropped.clone());
    parked.entered.notify_one();
    std::future::pending::<()>().await;
    "never"
}

/// `watching` signals when it starts and when it sees its cancellation (`Cancel`), which it
/// waits for.
#[derive(Clone, Default)]
struct Watching {
    entered: Arc<Notify>,
    saw_cancel: Arc<Notify>,
    finished: Arc<Notify>,
}

async fn watching(cancel: Cancel, State(watching): State<Watching>) -> &'static str {
    watching.entered.notify_one();
    cancel.cancelled().await;
    watching.saw_cancel.notify_one();
    "cancelled"
}

/// `lingering` runs for 300 ms unless cancelled first, and signals which.
async fn lingering(cancel: Cancel, State(watching): State<Watching>) -> &'static str {
    watching.entered.notify_one();
    tokio::select! {
        () = cancel.cancelled() => {
            watching.saw_cancel.notify_one();
            "cancelled"
        }
        () = tokio::time::sleep(Duration::from_millis(300)) => {
            watching.finished.notify_one();
            "finished"
        }
    }
}

/// Asks to end its response stream (legacy: the client resumes with `Last-Event-ID`).
async fn polled(stream: ResponseStream) -> &'static str {
    stream.close();
    "polled"
}

struct Running {
    addr: std::net::SocketAddr,
    runs: Runs,
    parked: Parked,
    watching: Watching,
}

async fn start() -> Running {
    let (runs, parked_state, watching_state) = (Runs::default(), Parked::default(), Watching::default());
    let server = Server::builder("dispatch-test", "1")
        .state(runs.clone())
        .state(parked_state.clone())
        .state(watching_state.clone())
        .tools(
            Tools::new()
                .add("region", "Region", region)
                .add("parked", "Parked", parked)
                .add("polled", "Polled", polled)
                .add("watching", "Watching", watching)
                .add("lingering", "Lingering", lingering)
                .add_tool(
                    mcp_types::Tool::without_arguments("tasked")
                        .with_task_support(mcp_types::TaskSupport::Optional),
                    parked,
                ),
        )
        .build()
        .unwrap();
    let bound = mcp_http::bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = bound.local_addr();
    let mut config = mcp_http::HttpConfig::for_bind(addr);
    // Frequent keep-alive comments: a closed connection is noticed at the next write.
    config.keep_alive = Duration::from_millis(50);
    tokio::spawn(mcp_http::serve(server, bound, Some(config)));
    Running { addr, runs, parked: parked_state, watching: watching_state }
}

/// A JSON POST to `/mcp`, closing the connection after the answer.
fn request(addr: std::net::SocketAddr, headers: &[(&str, &str)], body: &str) -> String {
    let mut all = vec![("connection", "close"), ("content-type", "application/json")];
    all.extend_from_slice(headers);
    support::request(addr, "POST", &all, body)
}

/// One POST; the status, the head and the (decoded) body.
async fn post(addr: std::net::SocketAddr, headers: &[(&str, &str)], body: &str) -> (u16, String, String) {
    post_to(addr, "/mcp", headers, body).await
}

async fn post_to(
    addr: std::net::SocketAddr,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    let mut all = vec![("content-type", "application/json")];
    all.extend_from_slice(headers);
    let reply = support::roundtrip(support::ONE, addr, &format!("POST {path}"), &all, body).await;
    (reply.status, reply.head, reply.body)
}

/// The JSON-RPC message of an answer: a JSON body, or the `data:` of an SSE one.
fn message(body: &str) -> Value {
    let data = body.lines().filter_map(|l| l.strip_prefix("data:")).find(|d| d.trim().starts_with('{'));
    let start = body.find('{').unwrap_or_else(|| panic!("no JSON in {body:?}"));
    let end = body.rfind('}').unwrap();
    serde_json::from_str(data.unwrap_or(&body[start..=end]).trim()).unwrap()
}

const ACCEPT: (&str, &str) = ("accept", "application/json, text/event-stream");

/// A legacy (2025-11-25) session: its id.
async fn session(addr: std::net::SocketAddr) -> String {
    let body = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
    let (status, head, _) = post(addr, &[ACCEPT], body).await;
    assert_eq!(status, 200);
    let line = head
        .lines()
        .find_map(|l| l.split_once(':').filter(|(k, _)| k.eq_ignore_ascii_case("mcp-session-id")));
    line.expect("a session id").1.trim().to_owned()
}

fn modern_call(tool: &str, arguments: Value) -> String {
    json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}},
        "name": tool, "arguments": arguments}})
    .to_string()
}

#[tokio::test]
async fn a_session_header_does_not_exempt_a_modern_request_from_the_header_checks() {
    let server = start().await;
    let addr = server.addr;
    let id = session(addr).await;
    let sid = ("mcp-session-id", id.as_str());
    let body = modern_call("region", json!({"region": "eu"}));
    let version = ("mcp-protocol-version", "2026-07-28");
    let method = ("mcp-method", "tools/call");
    let name = ("mcp-name", "region");
    let param = ("mcp-param-region", "eu");
    let refused: [(&str, Vec<(&str, &str)>); 6] = [
        ("no standard headers at all", vec![ACCEPT, sid]),
        ("no MCP-Protocol-Version", vec![ACCEPT, sid, method, name, param]),
        (
            "a legacy MCP-Protocol-Version",
            vec![ACCEPT, sid, ("mcp-protocol-version", "2025-11-25"), method, name, param],
        ),
        (
            "Mcp-Method contradicts the body",
            vec![ACCEPT, sid, version, ("mcp-method", "tools/list"), name, param],
        ),
        ("Mcp-Name contradicts the body", vec![ACCEPT, sid, version, method, ("mcp-name", "other"), param]),
        (
            "Mcp-Param-Region contradicts the body",
            vec![ACCEPT, sid, version, method, name, ("mcp-param-region", "us")],
        ),
    ];
    for (what, headers) in refused {
        let (status, _, reply) = post(addr, &headers, &body).await;
        let reply = message(&reply);
        assert_eq!((status, reply["error"]["code"].clone()), (400, json!(-32020)), "{what}: {reply}");
        assert_eq!(reply["id"], 7, "{what}");
        mcp_testkit::assert_valid_message("2026-07-28", &reply);
    }
    assert_eq!(server.runs.get(), 0, "no refused request ran the tool");
    // With the headers right, it is served as 2026-07-28 (the session is not used).
    let (status, head, reply) = post(addr, &[ACCEPT, sid, version, method, name, param], &body).await;
    let reply = message(&reply);
    assert_eq!(status, 200, "{reply}");
    mcp_testkit::assert_valid_message("2026-07-28", &reply);
    assert_eq!(reply["result"]["content"][0]["text"], "eu");
    assert_eq!(reply["result"]["resultType"], "complete");
    assert!(!head.to_ascii_lowercase().contains("mcp-session-id"), "{head}");
    assert_eq!(server.runs.get(), 1);
}

#[tokio::test]
async fn an_unknown_session_id_on_a_modern_request_is_ignored() {
    let server = start().await;
    let headers = [
        ACCEPT,
        ("mcp-session-id", "no-such-session"),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "region"),
        ("mcp-param-region", "eu"),
    ];
    let (status, _, reply) =
        post(server.addr, &headers, &modern_call("region", json!({"region": "eu"}))).await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(message(&reply)["result"]["content"][0]["text"], "eu");
    // A legacy request with that id still has no session to use.
    let legacy = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    assert_eq!(post(server.addr, &headers[..2], legacy).await.0, 404);
}

/// Posts `body` on a connection of its own, waits until the tool signals `entered`, then closes
/// the connection mid-call.
async fn call_then_hang_up(
    addr: std::net::SocketAddr,
    headers: &[(&str, &str)],
    body: &str,
    entered: &Notify,
) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request(addr, headers, body).as_bytes()).await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), entered.notified()).await.expect("the tool did not start");
    drop(stream);
}

#[tokio::test]
async fn closing_the_stream_of_a_modern_request_in_a_session_cancels_it() {
    let server = start().await;
    let addr = server.addr;
    let id = session(addr).await;
    let headers = [
        ("accept", "text/event-stream"),
        ("mcp-session-id", id.as_str()),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "parked"),
    ];
    call_then_hang_up(addr, &headers, &modern_call("parked", json!({})), &server.parked.entered).await;
    tokio::time::timeout(Duration::from_secs(10), server.parked.dropped.notified())
        .await
        .expect("closing the stream did not cancel the request");
}

/// A modern request with no session whose client goes away mid-call: its handler is told
/// (`Cancel`) and may end as it chooses — not just dropped where it stood (docs/DECISIONS.md,
/// trap 6).
#[tokio::test]
async fn a_handler_sees_its_cancellation_when_a_modern_client_goes_away() {
    let server = start().await;
    let headers = [
        ACCEPT,
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "watching"),
    ];
    let call = modern_call("watching", json!({}));
    call_then_hang_up(server.addr, &headers, &call, &server.watching.entered).await;
    tokio::time::timeout(Duration::from_secs(10), server.watching.saw_cancel.notified())
        .await
        .expect("the handler never saw its cancellation");
}

/// A legacy client going away does not cancel its request (2025-11-25: a disconnect is not a
/// cancellation): the handler runs to its end.
#[tokio::test]
async fn a_legacy_request_runs_on_when_its_client_goes_away() {
    let server = start().await;
    let id = session(server.addr).await;
    let headers = [ACCEPT, ("mcp-session-id", id.as_str()), ("mcp-protocol-version", "2025-11-25")];
    let call =
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"lingering","arguments":{}}}"#;
    call_then_hang_up(server.addr, &headers, call, &server.watching.entered).await;
    tokio::select! {
        () = server.watching.finished.notified() => {}
        () = server.watching.saw_cancel.notified() => panic!("a legacy client going away cancelled its request"),
        () = tokio::time::sleep(Duration::from_secs(10)) => panic!("the tool neither finished nor was cancelled"),
    }
}

#[tokio::test]
async fn a_modern_request_in_a_session_is_not_resumable() {
    let server = start().await;
    let addr = server.addr;
    let id = session(addr).await;
    let headers = [
        ACCEPT,
        ("mcp-session-id", id.as_str()),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "polled"),
    ];
    // The tool asks to end its stream; only a resumable stream may be ended early, so the answer
    // comes on this exchange, with no event id to resume from.
    let (status, head, body) = post(addr, &headers, &modern_call("polled", json!({}))).await;
    assert_eq!(status, 200, "{body}");
    assert!(!body.lines().any(|l| l.starts_with("id:")), "an event id on a modern stream: {head}\n{body}");
    let reply = message(&body);
    mcp_testkit::assert_valid_message("2026-07-28", &reply);
    assert_eq!(reply["result"]["content"][0]["text"], "polled", "{reply}");
}

#[tokio::test]
async fn a_modern_request_posted_to_an_http_sse_session_is_served_as_2026_07_28() {
    let server = start().await;
    let addr = server.addr;
    // A 2024-11-05 session: its stream names the URL to POST to.
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let get =
        format!("GET /sse HTTP/1.1\r\nhost: 127.0.0.1:{}\r\naccept: text/event-stream\r\n\r\n", addr.port());
    stream.write_all(get.as_bytes()).await.unwrap();
    let mut seen = String::new();
    let mut buf = [0u8; 1024];
    let endpoint = loop {
        if let Some(line) =
            seen.lines().find_map(|l| l.strip_prefix("data: ")).filter(|_| seen.contains("\n\n"))
        {
            break line.trim().to_owned();
        }
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf))
            .await
            .expect("no endpoint")
            .unwrap();
        assert!(n > 0, "the stream ended: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    };
    assert!(endpoint.starts_with("/messages?sessionId="), "{endpoint}");
    let body = modern_call("region", json!({"region": "eu"}));
    let (status, _, reply) = post_to(addr, &endpoint, &[ACCEPT], &body).await;
    let reply = message(&reply);
    assert_eq!((status, reply["error"]["code"].clone()), (400, json!(-32020)), "{reply}");
    assert_eq!(server.runs.get(), 0, "the refused request did not run the tool");
    let headers = [
        ACCEPT,
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "region"),
        ("mcp-param-region", "eu"),
    ];
    let (status, _, reply) = post_to(addr, &endpoint, &headers, &body).await;
    let reply = message(&reply);
    assert_eq!(status, 200, "{reply}");
    mcp_testkit::assert_valid_message("2026-07-28", &reply);
    assert_eq!(reply["result"]["content"][0]["text"], "eu", "answered on the POST itself");
    assert_eq!(server.runs.get(), 1);
}

/// `tasks/get`, `tasks/update` and `tasks/cancel` carry `Mcp-Name: <taskId>` (SEP-2663, for
/// routing to the instance holding the task): a missing or contradicting one is refused like
/// a tool's name, and the task is found with a matching one.
#[tokio::test]
async fn a_task_request_names_its_task_in_mcp_name() {
    let running = start().await;
    let caps = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": caps});
    let version = ("mcp-protocol-version", "2026-07-28");
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"_meta": meta, "name": "tasked", "arguments": {}}})
    .to_string();
    let (status, _, answer) =
        post(running.addr, &[ACCEPT, version, ("mcp-method", "tools/call"), ("mcp-name", "tasked")], &body)
            .await;
    assert_eq!(status, 200, "{answer}");
    let created = message(&answer);
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();

    for method in ["tasks/get", "tasks/cancel", "tasks/update"] {
        let body = json!({"jsonrpc": "2.0", "id": 2, "method": method,
                          "params": {"_meta": meta, "taskId": id, "inputResponses": {}}})
        .to_string();
        let method_header = ("mcp-method", method);
        for (case, name) in [("missing", None), ("contradicting", Some("another-task"))] {
            let mut headers = vec![ACCEPT, version, method_header];
            headers.extend(name.map(|n| ("mcp-name", n)));
            let (status, _, answer) = post(running.addr, &headers, &body).await;
            assert_eq!(status, 400, "{method}, Mcp-Name {case}: {answer}");
            assert_eq!(message(&answer)["error"]["code"], -32020, "{method}, Mcp-Name {case}");
        }
        let (status, _, answer) =
            post(running.addr, &[ACCEPT, version, method_header, ("mcp-name", id.as_str())], &body).await;
        assert_eq!(status, 200, "{method}: {answer}");
        assert_eq!(message(&answer)["result"]["resultType"], "complete", "{method}");
    }
}
