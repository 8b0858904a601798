//! Fuzzes the `Last-Event-ID` path of a resumable stream end to end: what the server writes
//! (`mcp_http::codec`: a priming event, then message events with ids) reads back through the
//! client's SSE parser as the same data, ids and retry delay, however the body is split; the
//! last event id goes back as a header the server parses into the stream and sequence number
//! it minted. And the server's reading of any `Last-Event-ID` header never panics.
#![no_main]

use std::time::Duration;

use bytes::Bytes;
use http::HeaderValue;
use libfuzzer_sys::fuzz_target;
use mcp_client::transport::http::sse::{SseEvent, SseParser};
use mcp_http::codec::{event_with_id, parse_id, priming};

fuzz_target!(|input: (&[u8], String, u64, u32, u8, Vec<Vec<u8>>)| {
    let (header, stream, first, retry, chunk_seed, messages) = input;
    // As the GET handler reads the header.
    if let Some(text) = HeaderValue::from_bytes(header).ok().as_ref().and_then(|v| v.to_str().ok()) {
        let _ = parse_id(text.trim());
    }

    // Stream names as the server mints them (URL-safe Base64).
    let stream: String =
        stream.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_').collect();
    if stream.is_empty() {
        return;
    }
    let first = first / 2;
    let id = |n: usize| format!("{stream}.{}", first + n as u64);
    let retry = Duration::from_millis(retry.into());
    let mut body = priming(&id(0), retry).to_vec();
    let mut expected = Vec::new();
    for (n, json) in messages.iter().enumerate() {
        body.extend_from_slice(&event_with_id(&id(n + 1), json));
        let data: Vec<u8> = json.iter().map(|&b| if b == b'\n' || b == b'\r' { b' ' } else { b }).collect();
        if !data.is_empty() {
            expected.push(SseEvent { event: "message".into(), data: Bytes::from(data), id: Some(id(n + 1)) });
        }
    }

    let mut parser = SseParser::new(usize::MAX);
    let mut events = Vec::new();
    for piece in body.chunks(usize::from(chunk_seed) + 1) {
        parser.feed(piece, &mut events).expect("no limit to exceed");
    }
    assert_eq!(events, expected);
    assert_eq!(parser.retry(), Some(retry));
    let last = parser.last_event_id().expect("every event carries an id");
    assert_eq!(last, id(messages.len()));
    let header = HeaderValue::from_bytes(last.as_bytes()).expect("a valid header value");
    let seen = header.to_str().expect("visible ASCII").trim();
    assert_eq!(parse_id(seen), Some((stream.as_str(), first + messages.len() as u64)));
});
