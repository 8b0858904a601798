//! Long-lived streams (`subscriptions/listen`, HTTP+SSE `GET /sse`) asked for far beyond their
//! slots: the refused ones get 503 and leave nothing behind, the admitted ones stay within the
//! budget. The peer holds every stream it is given and drops the refused connections, as a
//! client retrying later would; without the budget every stream would be admitted and held.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use crate::memory::{Baseline, MIB, own_process};
use crate::start;
use crate::support::{META, Open};

/// Streams asked for while memory is watched.
const ASKED: usize = 1000;
/// What the 1,000 streams cost when they are all admitted and held, measured with the budget
/// lifted (a debug build): 28.5 MiB of listen streams, 16.6 MiB of HTTP+SSE sessions.
const UNBOUNDED_LISTEN: usize = 28 * MIB;
const UNBOUNDED_SSE: usize = 16 * MIB;
/// Refused streams leave nothing behind; this is room for noise only.
const LIMIT: usize = 4 * MIB;

fn caller(i: usize) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 1, (i % 8) as u8 + 1))
}

async fn listen(from: IpAddr, addr: SocketAddr) -> Open {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":"l","method":"subscriptions/listen","params":{{{META},"notifications":{{"toolsListChanged":true}}}}}}"#
    );
    let headers = [
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "subscriptions/listen"),
    ];
    Open::start(from, addr, "POST", &headers, &body, "subscriptions/acknowledged").await
}

async fn sse(from: IpAddr, addr: SocketAddr) -> Open {
    Open::start(from, addr, "GET /sse", &[("accept", "text/event-stream")], "", "event: endpoint").await
}

/// Asks for `count` streams from 8 callers, keeping the admitted ones; returns them and the
/// number refused with 503 + Retry-After.
async fn ask<F: Future<Output = Open>>(count: usize, open: impl Fn(IpAddr) -> F) -> (Vec<Open>, usize) {
    let mut held = Vec::new();
    let mut refused = 0;
    for i in 0..count {
        let stream = open(caller(i)).await;
        match stream.status {
            200 => held.push(stream),
            503 => {
                assert!(stream.text().to_ascii_lowercase().contains("retry-after: 1"), "{}", stream.text());
                refused += 1;
            }
            other => panic!("unexpected status {other}: {}", stream.text()),
        }
    }
    (held, refused)
}

/// The budget: 16 streams in total, 4 per caller; connections are not what limits here.
fn budget(c: &mut mcp_http::HttpConfig) {
    c.max_streams = 16;
    c.max_streams_per_principal = 4;
    c.max_connections = 4 * ASKED;
}

#[tokio::test]
async fn listen_streams_far_beyond_their_slots_are_refused_and_memory_stays_flat() {
    if !own_process("streams::listen_streams_far_beyond_their_slots_are_refused_and_memory_stays_flat").await
    {
        return;
    }
    let (addr, _) = start(budget).await;
    // Warm-up: the slots fill (2 streams for each of 8 callers), and refusals begin.
    let (held, refused) = ask(64, |from| listen(from, addr)).await;
    assert_eq!((held.len(), refused), (16, 48), "the total of 16 is taken, the rest refused");
    let baseline = Baseline::now();
    let (more, refused) = ask(ASKED, |from| listen(from, addr)).await;
    baseline.assert_grew_less_than(LIMIT, UNBOUNDED_LISTEN, "1,000 more listen streams asked for");
    assert_eq!((more.len(), refused), (0, ASKED), "every slot is taken: all refused");
    drop(held);
}

#[tokio::test]
async fn sse_streams_far_beyond_their_slots_are_refused_and_memory_stays_flat() {
    if !own_process("streams::sse_streams_far_beyond_their_slots_are_refused_and_memory_stays_flat").await {
        return;
    }
    let (addr, _) = start(budget).await;
    let (held, refused) = ask(64, |from| sse(from, addr)).await;
    assert_eq!((held.len(), refused), (16, 48), "the total of 16 is taken, the rest refused");
    let baseline = Baseline::now();
    let (more, refused) = ask(ASKED, |from| sse(from, addr)).await;
    baseline.assert_grew_less_than(LIMIT, UNBOUNDED_SSE, "1,000 more GET /sse streams asked for");
    assert_eq!((more.len(), refused), (0, ASKED), "every slot is taken: all refused");
    drop(held);
}
