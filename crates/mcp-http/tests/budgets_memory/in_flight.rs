//! The budget of request bytes in flight (`max_bodies_in_flight`): with it taken by calls that
//! hold 1 MiB each, many more such calls are refused with 503 + Retry-After and leave nothing
//! behind; the budget returns when the holders finish. Without it every call would be
//! admitted and its request (body, parsed message, arguments) kept while it waits.

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::task::JoinHandle;

use crate::memory::{Baseline, MIB, own_process};
use crate::support::{META, ONE, connect};
use crate::{Gate, start};

/// The pad each call carries.
const PAD: usize = MIB;
const BUDGET: usize = 8 * MIB;
/// Calls sent once the budget is taken, while memory is watched.
const MORE: usize = 64;

/// Sends a `held` call carrying `PAD` bytes; the task ends with the answer's status line.
async fn send_held(addr: SocketAddr) -> JoinHandle<String> {
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{{META},"name":"held","arguments":{{"pad":"{}"}}}}}}"#,
        "p".repeat(PAD)
    );
    let raw = format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{}\r\ncontent-type: application/json\r\naccept: application/json\r\nmcp-protocol-version: 2026-07-28\r\nmcp-method: tools/call\r\nmcp-name: held\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{call}",
        addr.port(),
        call.len()
    );
    let mut stream = connect(ONE, addr).await;
    stream.write_all(raw.as_bytes()).await.unwrap();
    drop(raw);
    tokio::spawn(async move {
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer).await;
        let text = String::from_utf8_lossy(&answer).into_owned();
        let status = text.lines().next().unwrap_or("").to_owned();
        if status.starts_with("HTTP/1.1 503") {
            assert!(text.to_ascii_lowercase().contains("retry-after: 1"), "{text}");
        }
        status
    })
}

/// Sends calls until one is refused; returns the admitted ones (running, held at the gate).
async fn take_the_budget(addr: SocketAddr, gate: &Gate) -> Vec<JoinHandle<String>> {
    let mut admitted = Vec::new();
    loop {
        let mut call = send_held(addr).await;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            if gate.entered.load(Ordering::SeqCst) > admitted.len() {
                admitted.push(call);
                break;
            }
            if call.is_finished() {
                let status = (&mut call).await.unwrap();
                assert!(status.starts_with("HTTP/1.1 503"), "{status}");
                return admitted;
            }
            assert!(tokio::time::Instant::now() < deadline, "a call neither ran nor was refused");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert!(admitted.len() <= BUDGET / PAD, "more calls admitted than the budget holds");
    }
}

#[tokio::test]
async fn calls_far_beyond_the_bytes_in_flight_are_refused_and_memory_stays_flat() {
    if !own_process("in_flight::calls_far_beyond_the_bytes_in_flight_are_refused_and_memory_stays_flat").await
    {
        return;
    }
    let (addr, gate) = start(|c| {
        c.max_bodies_in_flight = BUDGET;
        // Requests in flight are not what limits here.
        c.max_in_flight = 4 * MORE;
    })
    .await;
    let admitted = take_the_budget(addr, &gate).await;
    assert_eq!(admitted.len(), BUDGET / PAD - 1, "7 calls of a little over 1 MiB fit in 8 MiB");
    let baseline = Baseline::now();
    let mut refused = 0;
    let mut running = Vec::new();
    for _ in 0..MORE {
        let call = send_held(addr).await;
        // A refusal comes at once; a call admitted wrongly holds its request until the gate
        // opens, so a long wait still tells the two apart on a loaded machine.
        match tokio::time::timeout(Duration::from_secs(10), call).await {
            Ok(status) => {
                let status = status.unwrap();
                assert!(status.starts_with("HTTP/1.1 503"), "{status}");
                refused += 1;
            }
            // Admitted after all: it runs (and holds its request) until the gate opens.
            Err(_) => running.push(()),
        }
    }
    // Each admitted call would keep its body, its parsed message and its arguments: about
    // 3 MiB each, 192 MiB for all of them.
    baseline.assert_grew_less_than(16 * MIB, 3 * MORE * PAD, "64 calls of 1 MiB beyond the budget");
    assert_eq!(refused, MORE, "every call beyond the budget is refused");
    assert!(running.is_empty());
    // The holders finish and give their bytes back: a call fits again.
    gate.open.add_permits(admitted.len() + 1);
    for call in admitted {
        assert!(call.await.unwrap().starts_with("HTTP/1.1 200"));
    }
    let again = send_held(addr).await;
    let status = tokio::time::timeout(Duration::from_secs(30), again).await.expect("answered").unwrap();
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
}
