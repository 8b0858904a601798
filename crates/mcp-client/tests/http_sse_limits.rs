//! An oversized SSE event ends the stream it arrives on, but never takes with it the events
//! that came before it in the same chunk (what tests/fuzz_sse.rs found in the parser, seen
//! here through the transports over real sockets).

#[path = "http_transport/support.rs"]
#[allow(dead_code)] // this file uses only a few of the shared helpers
mod support;

use std::time::Duration;

use bytes::Bytes;
use mcp_client::transport::http::{HttpConfig, HttpSseTransport, StreamableHttpTransport};
use mcp_client::transport::{Inbound, Outgoing, OutgoingKind, RequestHeaders, Transport, TransportError};
use mcp_types::{ProtocolVersion, RequestId};
use serde_json::json;
use support::*;
use tokio::sync::mpsc;

const LIMIT: usize = 512;

fn oversized_event() -> String {
    format!("data: {}\n\n", "x".repeat(LIMIT + 1))
}

#[tokio::test]
async fn an_answer_followed_by_an_oversized_event_in_the_same_chunk_still_answers() {
    let server = raw_server(|_| {
        let answer = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": []}});
        sse_script(vec![(Duration::ZERO, format!("data: {answer}\n\n{}", oversized_event()))])
    })
    .await;
    let (tx, mut rx) = mcp_client::transport::inbound_channel();
    let config = HttpConfig::new(server.url("/mcp")).max_message_size(LIMIT);
    let transport = StreamableHttpTransport::new(config, tx).unwrap();
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let body =
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"_meta": meta, "name": "t"}});
    transport
        .send(Outgoing {
            body: Bytes::from(body.to_string()),
            kind: OutgoingKind::Request {
                id: RequestId::Number(1),
                method: "tools/call".into(),
                headers: RequestHeaders { name: Some("t".into()), ..RequestHeaders::default() },
            },
            protocol_version: Some(ProtocolVersion::V2026_07_28),
        })
        .await
        .unwrap();
    assert_eq!(next_message(&mut rx).await["id"], 1, "the answer before the oversized event");
    assert_quiet(&mut rx, Duration::from_millis(100)).await;
    transport.close().await;
}

#[tokio::test]
async fn an_oversized_event_in_the_endpoint_chunk_closes_the_http_sse_transport_at_once() {
    let (keep_open, mut hold) = mpsc::unbounded_channel::<mpsc::Sender<Bytes>>();
    let server = raw_server(move |_| {
        let (tx, response) = streamed("text/event-stream");
        let keep_open = keep_open.clone();
        tokio::spawn(async move {
            let hello = json!({"jsonrpc": "2.0", "method": "hello"});
            let chunk = format!("event: endpoint\ndata: /post\n\ndata: {hello}\n\n{}", oversized_event());
            let _ = tx.send(Bytes::from(chunk)).await;
            // Nothing more, but the stream stays open.
            let _ = keep_open.send(tx);
        });
        response
    })
    .await;
    let (tx, mut rx) = mcp_client::transport::inbound_channel();
    let config = HttpConfig::new(server.url("/sse")).max_message_size(LIMIT);
    let transport = HttpSseTransport::connect(config, tx).await.unwrap();
    assert_eq!(next_message(&mut rx).await["method"], "hello");
    match next(&mut rx).await {
        Inbound::Closed(TransportError::Unexpected(why)) => assert!(why.contains("limit"), "{why}"),
        other => panic!("expected Closed(Unexpected), got {other:?}"),
    }
    let _open = hold.recv().await;
    transport.close().await;
}
