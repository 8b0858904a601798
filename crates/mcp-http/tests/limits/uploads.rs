//! Bodies still being read count against the bytes in flight (`max_bodies_in_flight`): a
//! declared `Content-Length` is charged before the body is read, a chunked body as its chunks
//! arrive. Before, a body was charged only once it had been read whole, so any number of slow
//! uploads could be held at once, whatever the budget.

use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use super::{exchange, start};

const BUDGET: usize = 8 * 1024;

/// A `tools/list` padded with trailing spaces to `size` bytes (JSON allows the white space).
fn list_request(addr: std::net::SocketAddr, size: usize) -> String {
    let body = r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let body = format!("{body}{}", " ".repeat(size.saturating_sub(body.len())));
    format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{}\r\ncontent-type: application/json\r\naccept: application/json\r\nmcp-protocol-version: 2026-07-28\r\nmcp-method: tools/list\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        addr.port(),
        body.len()
    )
}

fn status(answer: &str) -> &str {
    answer.split(' ').nth(1).unwrap_or("")
}

/// Sends `request` until its answer has `wanted` status (the stalled upload ahead of it may not
/// have been taken in yet), for at most five seconds; returns the last answer.
async fn until_status(addr: std::net::SocketAddr, request: &str, wanted: &str) -> String {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let answer = exchange(addr, request).await;
        if status(&answer) == wanted || tokio::time::Instant::now() > deadline {
            return answer;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_declared_body_is_charged_before_it_is_read() {
    let addr = start(|c| c.max_bodies_in_flight = BUDGET).await;
    // 6 KiB announced, half of it sent, then nothing: the upload holds its 6 KiB from the start.
    let mut stalled = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{}\r\ncontent-type: application/json\r\naccept: application/json\r\ncontent-length: {}\r\n\r\n",
        addr.port(),
        6 * 1024
    );
    stalled.write_all(head.as_bytes()).await.unwrap();
    stalled.write_all(&[b' '; 3 * 1024]).await.unwrap();
    let request = list_request(addr, 4 * 1024);
    let refused = until_status(addr, &request, "503").await;
    assert_eq!(status(&refused), "503", "a 4 KiB request fit beside a stalled 6 KiB upload:\n{refused}");
    assert!(refused.to_ascii_lowercase().contains("retry-after: 1"), "{refused}");
    // The stalled upload gone, its bytes are given back.
    drop(stalled);
    let served = until_status(addr, &request, "200").await;
    assert_eq!(status(&served), "200", "{served}");
}

#[tokio::test]
async fn a_chunked_body_is_charged_as_it_arrives() {
    let addr = start(|c| c.max_bodies_in_flight = BUDGET).await;
    // A chunked upload (no length announced) that has sent 7 KiB and stalls.
    let mut stalled = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{}\r\ncontent-type: application/json\r\naccept: application/json\r\ntransfer-encoding: chunked\r\n\r\n",
        addr.port()
    );
    stalled.write_all(head.as_bytes()).await.unwrap();
    let chunk = format!("{:x}\r\n{}\r\n", 7 * 1024, " ".repeat(7 * 1024));
    stalled.write_all(chunk.as_bytes()).await.unwrap();
    let request = list_request(addr, 2 * 1024);
    let refused = until_status(addr, &request, "503").await;
    assert_eq!(
        status(&refused),
        "503",
        "a 2 KiB request fit beside 7 KiB of a stalled chunked upload:\n{refused}"
    );
    drop(stalled);
    let served = until_status(addr, &request, "200").await;
    assert_eq!(status(&served), "200", "{served}");
}

#[tokio::test]
async fn a_chunked_body_past_the_budget_is_refused_while_it_arrives() {
    let addr = start(|c| c.max_bodies_in_flight = BUDGET).await;
    let mut upload = TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{}\r\ncontent-type: application/json\r\naccept: application/json\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n",
        addr.port()
    );
    upload.write_all(head.as_bytes()).await.unwrap();
    // 12 KiB in 1 KiB chunks, never finished: the server must answer 503 without the rest.
    for _ in 0..12 {
        let chunk = format!("{:x}\r\n{}\r\n", 1024, " ".repeat(1024));
        if upload.write_all(chunk.as_bytes()).await.is_err() {
            break;
        }
    }
    let mut answer = String::new();
    let read = tokio::time::timeout(
        Duration::from_secs(10),
        tokio::io::AsyncReadExt::read_to_string(&mut upload, &mut answer),
    )
    .await;
    assert!(read.is_ok(), "no answer before the body ended");
    assert_eq!(status(&answer), "503", "{answer}");
}
