//! Replicas without a shared store: with `HttpConfig::session_key`, a legacy session id is
//! sealed, and any server holding the same key takes the session up — a plain load balancer may
//! send each request of a session to another replica.

#[allow(dead_code)] // the tests here use part of the raw HTTP helpers
#[path = "support/raw_http.rs"]
mod support;

use mcp_http::{HttpConfig, SessionKey};
use mcp_server::{Args, Server, Tools};
use schemars::JsonSchema;
use serde::Deserialize;
use support::{ONE, Reply, roundtrip};

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    text: String,
}

async fn echo(Args(EchoArgs { text }): Args<EchoArgs>) -> String {
    text
}

/// A replica: its own server, its own port, the given key.
async fn replica(key: Option<[u8; 32]>) -> std::net::SocketAddr {
    let server =
        Server::builder("replica", "1").tools(Tools::new().add("echo", "Echo", echo)).build().unwrap();
    let bound = mcp_http::bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = bound.local_addr();
    let config = HttpConfig::for_bind(addr).session_key(key.map(SessionKey::from_bytes));
    tokio::spawn(mcp_http::serve(server, bound, Some(config)));
    addr
}

const HEADERS: [(&str, &str); 2] =
    [("content-type", "application/json"), ("accept", "application/json, text/event-stream")];

async fn post(addr: std::net::SocketAddr, session: Option<&str>, body: &str) -> Reply {
    let mut headers = HEADERS.to_vec();
    headers.push(("mcp-protocol-version", "2025-11-25"));
    if let Some(session) = session {
        headers.push(("mcp-session-id", session));
    }
    roundtrip(ONE, addr, "POST", &headers, body).await
}

async fn initialize(addr: std::net::SocketAddr) -> String {
    let reply = post(
        addr,
        None,
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"lb-client","version":"1"}}}"#,
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.header("mcp-session-id").expect("a session id").to_owned()
}

const CALL: &str =
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hop"}}}"#;

#[tokio::test(flavor = "multi_thread")]
async fn a_session_begun_on_one_replica_is_served_by_another_with_the_same_key() {
    let key = [42u8; 32];
    let (a, b) = (replica(Some(key)).await, replica(Some(key)).await);
    let session = initialize(a).await;
    let initialized =
        post(b, Some(&session), r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    assert_eq!(initialized.status, 202, "{}", initialized.body);
    // Requests alternate between the replicas, as a load balancer would send them.
    for (n, addr) in [b, a, b].into_iter().enumerate() {
        let reply = post(addr, Some(&session), CALL).await;
        assert_eq!(reply.status, 200, "request {n}: {}", reply.body);
        assert_eq!(reply.json()["result"]["content"][0]["text"], "hop", "request {n}");
    }
    // A legacy session speaks its negotiated revision on the other replica too: no modern
    // members in its results.
    let listed = post(b, Some(&session), r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#).await;
    assert_eq!(listed.status, 200, "{}", listed.body);
    assert!(listed.json()["result"].get("resultType").is_none(), "{}", listed.body);
    assert_eq!(listed.json()["result"]["tools"][0]["name"], "echo");
}

#[tokio::test(flavor = "multi_thread")]
async fn another_key_no_key_or_an_altered_id_is_no_session() {
    let (a, other, none) = (replica(Some([1; 32])).await, replica(Some([2; 32])).await, replica(None).await);
    let session = initialize(a).await;
    for (what, addr) in [("another key", other), ("no key", none)] {
        let reply = post(addr, Some(&session), CALL).await;
        assert_eq!(reply.status, 404, "{what}: {}", reply.body);
    }
    let mut altered = session.clone().into_bytes();
    let last = altered.len() - 2;
    altered[last] = if altered[last] == b'A' { b'B' } else { b'A' };
    let altered = String::from_utf8(altered).unwrap();
    let reply = post(a, Some(&altered), CALL).await;
    assert_eq!(reply.status, 404, "altered: {}", reply.body);
    // The genuine id still works.
    assert_eq!(post(a, Some(&session), CALL).await.status, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_key_ids_stay_random_and_local() {
    let a = replica(None).await;
    let session = initialize(a).await;
    assert_eq!(session.len(), 22, "128 random bits, base64url: {session}");
    assert_eq!(post(a, Some(&session), CALL).await.status, 200);
}
