//! Choices docs/DECISIONS.md records for the HTTP endpoint, each driven over a real socket: the
//! budget of request bytes in flight, one GET stream per session, and a request sent without an
//! id (a notification) that is acknowledged but never run.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_http::HttpConfig;
use mcp_server::{Server, State, Tools};
use tokio::sync::Semaphore;

#[derive(Clone)]
struct Shared {
    runs: Arc<AtomicUsize>,
    gate: Arc<Semaphore>,
}

async fn count(State(shared): State<Shared>) -> &'static str {
    shared.runs.fetch_add(1, Ordering::SeqCst);
    "counted"
}

async fn held(State(shared): State<Shared>) -> &'static str {
    shared.gate.acquire().await.unwrap().forget();
    "released"
}

struct Endpoint {
    url: String,
    shared: Shared,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn start(tune: impl FnOnce(&mut HttpConfig)) -> Endpoint {
    let shared = Shared { runs: Arc::new(AtomicUsize::new(0)), gate: Arc::new(Semaphore::new(0)) };
    let server = Server::builder("decided", "1")
        .state(shared.clone())
        .tools(Tools::new().add("count", "Counts its runs", count).add("held", "Waits for the gate", held))
        .build()
        .unwrap();
    let bound = mcp_http::bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = bound.local_addr();
    let mut config = HttpConfig::for_bind(addr);
    tune(&mut config);
    let task = tokio::spawn(mcp_http::serve(server, bound, Some(config)));
    Endpoint { url: format!("http://{addr}/mcp"), shared, task }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder().timeout(Duration::from_secs(10)).build().unwrap()
}

const META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

/// A modern `tools/call` of `tool`, padded with an unused argument to about `size` bytes.
fn modern_call(tool: &str, size: usize) -> String {
    let head = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{tool}","_meta":{META},"arguments":{{"pad":""#
    );
    let tail = r#""}}}"#;
    let pad = "x".repeat(size.saturating_sub(head.len() + tail.len()));
    format!("{head}{pad}{tail}")
}

fn modern_post(http: &reqwest::Client, url: &str, tool: &str, body: String) -> reqwest::RequestBuilder {
    http.post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool)
        .body(body)
}

#[tokio::test]
async fn request_bytes_beyond_the_budget_in_flight_get_503_until_the_holder_finishes() {
    // 4 KiB of bodies in flight; each request below carries 3 KiB.
    let endpoint = start(|c| c.max_bodies_in_flight = 4096).await;
    let http = client();
    let holder = tokio::spawn(modern_post(&http, &endpoint.url, "held", modern_call("held", 3000)).send());
    // Wait until the holder is running (its bytes are counted for as long as it runs).
    let mut tries = 0;
    let refused = loop {
        tries += 1;
        assert!(tries < 500, "the budget of bytes in flight never refused a request");
        let reply =
            modern_post(&http, &endpoint.url, "count", modern_call("count", 3000)).send().await.unwrap();
        if reply.status() == 503 {
            break reply;
        }
        assert_eq!(reply.status(), 200);
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(refused.headers()["retry-after"], "1");
    // A small request still fits beside the holder.
    let small = modern_post(&http, &endpoint.url, "count", modern_call("count", 200)).send().await.unwrap();
    assert_eq!(small.status(), 200);
    endpoint.shared.gate.add_permits(1);
    assert_eq!(holder.await.unwrap().unwrap().status(), 200);
    // The holder's bytes are returned with its answer.
    let again = modern_post(&http, &endpoint.url, "count", modern_call("count", 3000)).send().await.unwrap();
    assert_eq!(again.status(), 200);
}

async fn legacy_session(http: &reqwest::Client, url: &str) -> String {
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
    let reply = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(init)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);
    let session = reply.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let initialized = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .body(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(initialized.status(), 202);
    session
}

#[tokio::test]
async fn a_session_has_one_get_stream_and_a_second_is_409() {
    let endpoint = start(|_| {}).await;
    let http = client();
    let session = legacy_session(&http, &endpoint.url).await;
    let get = || {
        http.get(&endpoint.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-11-25")
            .send()
    };
    let first = get().await.unwrap();
    assert_eq!(first.status(), 200);
    let second = get().await.unwrap();
    assert_eq!(second.status(), 409);
    // Once the first stream is gone, the session may open another.
    drop(first);
    let mut reopened = None;
    for _ in 0..100 {
        let reply = get().await.unwrap();
        if reply.status() == 200 {
            reopened = Some(reply);
            break;
        }
        assert_eq!(reply.status(), 409);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(reopened.is_some(), "the closed stream was never released");
}

#[tokio::test]
async fn a_request_sent_without_an_id_is_acknowledged_and_never_run() {
    let endpoint = start(|_| {}).await;
    let http = client();
    // Modern: a tools/call with no id.
    let body =
        format!(r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"count","_meta":{META}}}}}"#);
    let reply = modern_post(&http, &endpoint.url, "count", body).send().await.unwrap();
    assert_eq!(reply.status(), 202);
    assert_eq!(reply.text().await.unwrap(), "");
    // Legacy: the same inside a session.
    let session = legacy_session(&http, &endpoint.url).await;
    let reply = http
        .post(&endpoint.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .body(r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"count"}}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 202);
    // A real call afterwards runs, and is the only run there was.
    let reply = modern_post(&http, &endpoint.url, "count", modern_call("count", 0)).send().await.unwrap();
    assert_eq!(reply.status(), 200);
    assert_eq!(endpoint.shared.runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_session_unused_past_its_idle_limit_is_closed() {
    // A limit of a second (swept every 250 ms), pings ten times as often: a stall of the
    // machine short of a second cannot expire the session in use.
    let endpoint = start(|c| c.session_idle = Duration::from_secs(1)).await;
    let http = client();
    let idle = legacy_session(&http, &endpoint.url).await;
    let kept = legacy_session(&http, &endpoint.url).await;
    let ping = |session: String| {
        http.post(&endpoint.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-11-25")
            .body(r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#)
            .send()
    };
    // One session is used every 100 ms, the other not at all, for twice the limit.
    for _ in 0..20 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(ping(kept.clone()).await.unwrap().status(), 200, "a session in use was closed");
    }
    assert_eq!(ping(idle).await.unwrap().status(), 404, "the idle session outlived its limit");
}
