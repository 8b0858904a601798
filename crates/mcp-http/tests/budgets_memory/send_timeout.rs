//! Many clients that ask for a large answer and never read it: once the send timeout passes
//! without write progress, their connections are closed and the answers they held freed, so
//! the resident set returns near its baseline, round after round. Without the timeout every
//! answer would stay in memory for as long as its client stays silent.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

use crate::memory::{Baseline, MIB, Peak, mib, own_process};
use crate::start;
use crate::support::META;

/// Clients stalled at once, each on an answer of `ANSWER` bytes (under the 4 MiB a message
/// may have).
const CLIENTS: usize = 32;
const ANSWER: usize = 3 * MIB;
/// What the stalled answers hold together while their clients are not cut off.
const HELD: usize = CLIENTS * ANSWER;
/// Long enough for all the answers to be made (one after another, in a debug build, on a busy
/// machine) before the first is cut off, so that they are all held at once.
const SEND_TIMEOUT: Duration = Duration::from_secs(4);
/// How long the clients stay silent before they read: the answers are made (about 2 s in a
/// debug build on a busy machine), then the send timeout passes. Reading earlier would be the
/// progress that keeps a connection alive.
const SILENT: Duration = Duration::from_secs(12);

/// Asks for a large answer with a tiny receive window, and does not read it.
async fn stall(addr: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut stream = socket.connect(addr).await.unwrap();
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{{META},"name":"big","arguments":{{"size":{ANSWER}}}}}}}"#
    );
    let raw = format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{}\r\ncontent-type: application/json\r\naccept: application/json\r\nmcp-protocol-version: 2026-07-28\r\nmcp-method: tools/call\r\nmcp-name: big\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{call}",
        addr.port(),
        call.len()
    );
    stream.write_all(raw.as_bytes()).await.unwrap();
    stream
}

/// Stalls `CLIENTS` clients at once; once the send timeout has passed, memory must be back
/// within `HELD / 4` of `baseline` (the answers freed, not kept for clients that never read),
/// and each client must find its connection cut (less than its answer, then the end).
async fn round(addr: SocketAddr, round: usize, baseline: &Baseline) {
    let mut stalled = Vec::new();
    for _ in 0..CLIENTS {
        stalled.push(stall(addr).await);
    }
    tokio::time::sleep(SILENT).await;
    baseline.settles_below(HELD / 4, Duration::from_secs(10)).await;
    baseline.assert_grew_less_than(HELD / 4, HELD, &format!("round {round}, its answers unread"));
    for mut client in stalled {
        let mut got = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(20), client.read_to_end(&mut got)).await;
        assert!(read.is_ok(), "round {round}: a stalled connection is still open");
        assert!(got.len() < ANSWER, "round {round}: a stalled client got its whole answer");
    }
}

#[tokio::test]
async fn answers_nobody_reads_are_freed_after_the_send_timeout_round_after_round() {
    if !own_process("send_timeout::answers_nobody_reads_are_freed_after_the_send_timeout_round_after_round")
        .await
    {
        return;
    }
    let (addr, _) = start(|c| c.send_timeout = SEND_TIMEOUT).await;
    let fresh = Baseline::now();
    let peak = Peak::start();
    // Round 1: the answers are made and held (most of each cannot leave), so memory rises by
    // about what they hold; the send timeout then cuts their connections.
    let mut stalled = Vec::new();
    for _ in 0..CLIENTS {
        stalled.push(stall(addr).await);
    }
    let high = fresh.rises_above(HELD / 3, Duration::from_secs(30)).await;
    if let Some(high) = high {
        assert!(high >= HELD / 3, "the stalled answers were never held ({:.1} MiB)", mib(high));
    }
    tokio::time::sleep(SILENT).await;
    let peak = peak.stop();
    for mut client in stalled {
        let mut got = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(20), client.read_to_end(&mut got)).await;
        assert!(read.is_ok(), "round 1: a stalled connection is still open");
        assert!(got.len() < ANSWER, "round 1: a stalled client got its whole answer");
    }
    // The allocator keeps part of what was freed for the next answers (glibc does not hand
    // every freed page back): the baseline is what is resident after the first round.
    let baseline = Baseline::now();
    eprintln!(
        "round 1: {:.1} MiB peak, {:.1} MiB still resident after the cut",
        mib(peak.growth_over(&fresh).unwrap_or(0)),
        mib(baseline.growth_over(&fresh).unwrap_or(0))
    );
    // Rounds 2 and 3 add nothing to it: every cut connection's answer was freed. Had the
    // answers been kept, each round would add what they hold.
    for n in 2..=3 {
        round(addr, n, &baseline).await;
    }
}
