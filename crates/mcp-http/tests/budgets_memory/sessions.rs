//! Thousands of `initialize` beyond the legacy session caps (per caller and in total): the
//! oldest sessions are evicted, the newest live, and memory stays flat. Each `initialize`
//! carries a 32 KiB client name, which its session keeps, so that keeping every session would
//! show plainly in the resident set.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use crate::memory::{Baseline, own_process};
use crate::start;
use crate::support::{ONE, TWO, roundtrip};

const PAD: usize = 32 * 1024;
/// Sessions opened past the caps while memory is watched.
const FLOOD: usize = 1000;

const JSON: [(&str, &str); 2] =
    [("content-type", "application/json"), ("accept", "application/json, text/event-stream")];

async fn initialize(from: IpAddr, addr: SocketAddr) -> String {
    let name = "n".repeat(PAD);
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"{name}","version":"1"}}}}}}"#
    );
    let reply = roundtrip(from, addr, "POST", &JSON, &body).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.header("mcp-session-id").expect("a session id").to_owned()
}

/// Whether the session still lives: 200 for a request in it, 404 once it was evicted.
async fn alive(addr: SocketAddr, session: &str) -> bool {
    let mut h = JSON.to_vec();
    h.push(("mcp-session-id", session));
    let reply = roundtrip(ONE, addr, "POST", &h, r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).await;
    match reply.status {
        200 => true,
        404 => false,
        other => panic!("unexpected status {other}: {}", reply.body),
    }
}

/// Opens `count` sessions, the i-th from `from(i)`, and returns their ids.
async fn flood(addr: SocketAddr, count: usize, from: impl Fn(usize) -> IpAddr) -> Vec<String> {
    let mut ids = Vec::with_capacity(count);
    for i in 0..count {
        ids.push(initialize(from(i), addr).await);
    }
    ids
}

/// What keeping every session of the flood would cost at least: its client names.
const UNBOUNDED: usize = FLOOD * PAD;

#[tokio::test]
async fn thousands_of_sessions_from_one_caller_keep_its_share_and_memory_flat() {
    if !own_process("sessions::thousands_of_sessions_from_one_caller_keep_its_share_and_memory_flat").await {
        return;
    }
    let (addr, _) = start(|c| c.max_sessions_per_principal = 16).await;
    // Warm-up: the caller reaches its share and evictions begin.
    flood(addr, 64, |_| ONE).await;
    let baseline = Baseline::now();
    let ids = flood(addr, FLOOD, |_| ONE).await;
    // The caller's 16 sessions hold 512 KiB of names; keeping all 1,000 would hold 31 MiB.
    baseline.assert_grew_less_than(UNBOUNDED / 4, UNBOUNDED, "1,000 sessions over a share of 16");
    for id in &ids[..16] {
        assert!(!alive(addr, id).await, "an old session outlived the cap");
    }
    for id in &ids[FLOOD - 16..] {
        assert!(alive(addr, id).await, "one of the newest 16 sessions was evicted");
    }
    assert!(!alive(addr, &ids[FLOOD - 17]).await, "the caller keeps exactly its share");
    // Another caller is not affected by this one's flood.
    let other = initialize(TWO, addr).await;
    assert!(alive(addr, &other).await);
}

#[tokio::test]
async fn thousands_of_sessions_across_callers_keep_the_total_and_memory_flat() {
    if !own_process("sessions::thousands_of_sessions_across_callers_keep_the_total_and_memory_flat").await {
        return;
    }
    let (addr, _) = start(|c| c.max_sessions = 32).await;
    // Four callers, each within its own share (64): the total of 32 is what evicts.
    let caller = |i: usize| IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1 + (i % 4) as u8));
    flood(addr, 128, caller).await;
    let baseline = Baseline::now();
    let ids = flood(addr, FLOOD, caller).await;
    baseline.assert_grew_less_than(UNBOUNDED / 4, UNBOUNDED, "1,000 sessions over a total of 32");
    for id in &ids[..32] {
        assert!(!alive(addr, id).await, "an old session outlived the cap");
    }
    for id in &ids[FLOOD - 32..] {
        assert!(alive(addr, id).await, "one of the newest 32 sessions was evicted");
    }
    assert!(!alive(addr, &ids[FLOOD - 33]).await, "exactly the total is kept");
}
