//! Many clients at once sending request heads far over the limit (1 MiB each, never
//! finished): each is answered 431 and closed once it passes `max_header_bytes`, so the server
//! never holds more than the limit per connection, and nothing once they are refused. Without
//! the limit each connection's head would be buffered whole until the header read timeout.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::memory::{Baseline, MIB, Peak, own_process};
use crate::start;
use crate::support::{ONE, connect};

/// Clients sending an oversized head at once.
const CLIENTS: usize = 128;
/// The head each of them sends (it never ends).
const HEAD: usize = MIB;

/// Sends a head of `HEAD` bytes that never ends, and returns the status line of the answer
/// (empty when the connection ended without one).
async fn oversized_head(addr: SocketAddr, chunk: Arc<Vec<u8>>) -> String {
    let (mut reader, mut writer) = connect(ONE, addr).await.into_split();
    let sending = tokio::spawn(async move {
        let start = format!("POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{}\r\nx-big: ", addr.port());
        if writer.write_all(start.as_bytes()).await.is_err() {
            return writer;
        }
        for _ in 0..HEAD / chunk.len() {
            // The server closes the connection once the head is over its limit.
            if writer.write_all(&chunk).await.is_err() {
                break;
            }
        }
        writer
    });
    let mut answer = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        match tokio::time::timeout(Duration::from_secs(30), reader.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) | Err(_) => break,
            Ok(Ok(n)) => answer.extend_from_slice(&buf[..n]),
        }
    }
    // Keep the client's end open until the answer was read (as a hostile peer would).
    drop(sending.await);
    String::from_utf8_lossy(&answer).lines().next().unwrap_or("").to_owned()
}

#[tokio::test]
async fn many_oversized_heads_at_once_are_refused_with_431_and_memory_stays_flat() {
    if !own_process("heads::many_oversized_heads_at_once_are_refused_with_431_and_memory_stays_flat").await {
        return;
    }
    let (addr, _) = start(|c| c.max_connections = 2 * CLIENTS).await;
    let chunk = Arc::new(vec![b'a'; 16 * 1024]);
    // Warm-up: one round.
    let warm: Vec<_> = (0..CLIENTS).map(|_| tokio::spawn(oversized_head(addr, chunk.clone()))).collect();
    for client in warm {
        client.await.unwrap();
    }
    let baseline = Baseline::now();
    let peak = Peak::start();
    let mut statuses = Vec::new();
    for _ in 0..4 {
        let round: Vec<_> = (0..CLIENTS).map(|_| tokio::spawn(oversized_head(addr, chunk.clone()))).collect();
        for client in round {
            statuses.push(client.await.unwrap());
        }
    }
    let peak = peak.stop();
    // The limit (64 KiB, plus a read buffer) for every connection at once is under 16 MiB;
    // buffering the heads whole would take 128 MiB.
    baseline.assert_peak_less_than(&peak, 24 * MIB, CLIENTS * HEAD, "4 × 128 heads of 1 MiB at once");
    baseline.assert_grew_less_than(8 * MIB, CLIENTS * HEAD, "after 4 × 128 heads of 1 MiB");
    let refused = statuses.iter().filter(|s| s.starts_with("HTTP/1.1 431")).count();
    assert_eq!(refused, statuses.len(), "every oversized head gets 431: {:?}", &statuses[..4]);
}
