//! Legacy sessions are capped in total and per caller (here: per peer address); a new session
//! past a cap evicts the idlest one, whose id then gets 404 and whose GET stream ends.

use std::net::{IpAddr, SocketAddr};

use mcp_http::HttpConfig;
use mcp_server::{Server, Tools};

use crate::support::{ONE, Open, TWO, roundtrip};

async fn hello() -> &'static str {
    "hello"
}

async fn start(tune: impl FnOnce(&mut HttpConfig)) -> SocketAddr {
    let server =
        Server::builder("sessions", "1").tools(Tools::new().add("hello", "Hello", hello)).build().unwrap();
    let bound = mcp_http::bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = bound.local_addr();
    let mut config = HttpConfig::for_bind(addr);
    tune(&mut config);
    tokio::spawn(mcp_http::serve(server, bound, Some(config)));
    addr
}

const JSON: [(&str, &str); 2] =
    [("content-type", "application/json"), ("accept", "application/json, text/event-stream")];

async fn initialize(from: IpAddr, addr: SocketAddr) -> String {
    let reply = roundtrip(
        from,
        addr,
        "POST",
        &JSON,
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#,
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.header("mcp-session-id").expect("a session id").to_owned()
}

/// A request in the session (which also marks it used): its status, 404 once it is gone.
async fn use_session(addr: SocketAddr, session: &str) -> u16 {
    let mut h = JSON.to_vec();
    h.push(("mcp-session-id", session));
    let reply = roundtrip(ONE, addr, "POST", &h, r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#).await;
    if reply.status == 200 {
        assert_eq!(reply.json()["result"]["tools"][0]["name"], "hello", "{}", reply.body);
    }
    reply.status
}

async fn alive(addr: SocketAddr, sessions: &[String]) -> Vec<bool> {
    let mut out = Vec::new();
    for s in sessions {
        out.push(match use_session(addr, s).await {
            200 => true,
            404 => false,
            other => panic!("unexpected status {other}"),
        });
    }
    out
}

#[tokio::test]
async fn sessions_per_caller_are_capped_and_the_idlest_is_evicted() {
    let addr = start(|c| c.max_sessions_per_principal = 4).await;
    let mut ids = Vec::new();
    for _ in 0..4 {
        ids.push(initialize(ONE, addr).await);
    }
    // The second session opens a GET stream, then the others are used again: the second is
    // now the idlest (the oldest is not).
    let get = [("accept", "text/event-stream"), ("mcp-session-id", ids[1].as_str())];
    let mut stream = Open::start(ONE, addr, "GET", &get, "", "\r\n\r\n").await;
    assert_eq!(stream.status, 200, "{}", stream.text());
    for i in [0, 2, 3] {
        assert_eq!(use_session(addr, &ids[i]).await, 200);
    }
    ids.push(initialize(ONE, addr).await);
    // The evicted session's GET stream ends (the chunked body is terminated) and its id is 404.
    stream.read_until("\r\n0\r\n\r\n").await;
    assert_eq!(alive(addr, &ids).await, [true, false, true, true, true]);
    // Another peer's sessions do not count against this one's.
    let other = initialize(TWO, addr).await;
    assert_eq!(use_session(addr, &other).await, 200);
    // Many more sessions from one peer: it keeps exactly its share, the newest.
    for _ in 0..40 {
        ids.push(initialize(ONE, addr).await);
    }
    let alive = alive(addr, &ids).await;
    assert_eq!(alive.iter().filter(|a| **a).count(), 4, "{alive:?}");
    assert!(alive[alive.len() - 4..].iter().all(|a| *a), "the newest work: {alive:?}");
    assert_eq!(use_session(addr, &other).await, 200);
}

#[tokio::test]
async fn sessions_in_total_are_capped_across_callers() {
    let addr = start(|c| c.max_sessions = 5).await;
    let mut ids = Vec::new();
    for i in 0..12 {
        ids.push(initialize(if i % 2 == 0 { ONE } else { TWO }, addr).await);
    }
    let alive = alive(addr, &ids).await;
    assert_eq!(alive, [vec![false; 7], vec![true; 5]].concat(), "the 5 newest remain");
}
