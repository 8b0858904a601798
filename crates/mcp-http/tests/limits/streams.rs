//! Long-lived streams (`subscriptions/listen`) have a budget of their own, in total and per
//! caller (here: per peer address, authorization being off), and never hold the slots that
//! request work needs (`HttpConfig::max_in_flight`).

use std::net::{IpAddr, SocketAddr};

use mcp_http::HttpConfig;
use mcp_server::{Server, Tools};

use crate::support::{META, ONE, Open, TWO, roundtrip};

async fn hello() -> &'static str {
    "hello"
}

async fn start(tune: impl FnOnce(&mut HttpConfig)) -> SocketAddr {
    let server =
        Server::builder("streams", "1").tools(Tools::new().add("hello", "Hello", hello)).build().unwrap();
    let bound = mcp_http::bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = bound.local_addr();
    let mut config = HttpConfig::for_bind(addr);
    tune(&mut config);
    tokio::spawn(mcp_http::serve(server, bound, Some(config)));
    addr
}

fn headers(method: &str) -> Vec<(&str, &str)> {
    vec![
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", method),
    ]
}

/// Opens a `subscriptions/listen` stream; a 200 is read up to its acknowledgement.
async fn listen(from: IpAddr, addr: SocketAddr) -> Open {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":"l","method":"subscriptions/listen","params":{{{META},"notifications":{{"toolsListChanged":true}}}}}}"#
    );
    Open::start(from, addr, "POST", &headers("subscriptions/listen"), &body, "subscriptions/acknowledged")
        .await
}

async fn call(addr: SocketAddr) -> u16 {
    let body =
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{{META},"name":"hello"}}}}"#);
    let mut h = headers("tools/call");
    h.push(("mcp-name", "hello"));
    let reply = roundtrip(ONE, addr, "POST", &h, &body).await;
    if reply.status == 200 {
        assert_eq!(reply.json()["result"]["content"][0]["text"], "hello", "{}", reply.body);
    }
    reply.status
}

#[tokio::test]
async fn idle_listen_streams_do_not_starve_requests_and_have_their_own_budget() {
    let addr = start(|c| {
        c.max_in_flight = 2;
        c.max_streams = 5;
        c.max_streams_per_principal = 3;
    })
    .await;
    // More idle streams than there are request slots.
    let mut open = Vec::new();
    for _ in 0..3 {
        let stream = listen(ONE, addr).await;
        assert_eq!(stream.status, 200, "{}", stream.text());
        open.push(stream);
    }
    // Requests still get their slots, one after another and together.
    for _ in 0..3 {
        assert_eq!(call(addr).await, 200);
    }
    let (a, b) = tokio::join!(call(addr), call(addr));
    assert_eq!((a, b), (200, 200));
    // This peer has its share of streams: 503 + Retry-After.
    let refused = listen(ONE, addr).await;
    assert_eq!(refused.status, 503, "{}", refused.text());
    assert!(refused.text().to_ascii_lowercase().contains("retry-after: 1"), "{}", refused.text());
    // Another peer has a share of its own, up to the total.
    for _ in 0..2 {
        let stream = listen(TWO, addr).await;
        assert_eq!(stream.status, 200, "{}", stream.text());
        open.push(stream);
    }
    let refused = listen(TWO, addr).await;
    assert_eq!(refused.status, 503, "the total is taken: {}", refused.text());
    assert_eq!(call(addr).await, 200, "requests are still served with every stream slot taken");
    drop(open);
}

/// An HTTP+SSE `GET /sse` stream (2024-11-05), read up to its endpoint event.
async fn sse_stream(from: IpAddr, addr: SocketAddr) -> Open {
    Open::start(from, addr, "GET /sse", &[("accept", "text/event-stream")], "", "event: endpoint").await
}

#[tokio::test]
async fn http_sse_streams_take_stream_slots_too() {
    let addr = start(|c| {
        c.max_streams = 3;
        c.max_streams_per_principal = 2;
    })
    .await;
    let mut open = Vec::new();
    for _ in 0..2 {
        let stream = sse_stream(ONE, addr).await;
        assert_eq!(stream.status, 200, "{}", stream.text());
        open.push(stream);
    }
    let refused = sse_stream(ONE, addr).await;
    assert_eq!(refused.status, 503, "this peer has its share: {}", refused.text());
    let other = sse_stream(TWO, addr).await;
    assert_eq!(other.status, 200, "{}", other.text());
    open.push(other);
    let refused = listen(TWO, addr).await;
    assert_eq!(refused.status, 503, "the total is taken, by streams of either kind: {}", refused.text());
    assert_eq!(call(addr).await, 200);
    drop(open);
}
