//! Property tests of the client's SSE parser over arbitrary bytes: the stable-toolchain
//! counterpart of `fuzz/fuzz_targets/sse_parser.rs` and `fuzz/fuzz_targets/last_event_id.rs`.
//!
//! * Splitting the body into chunks anywhere never changes the events, the error, the last
//!   event id or the retry delay.
//! * Without an error, the events are those of a whole-input reference model of the event
//!   stream rules; with one, they are a prefix of them. No event is empty or over the limit.
//! * Buffering is bounded: a line that never ends, or data lines adding up past the limit, are
//!   refused; a failed parser stays failed.
//! * What the server writes (`mcp_http::codec`: priming and message events with ids) reads back
//!   as the same data, ids and retry, and the last event id goes back as a `Last-Event-ID` the
//!   server parses into the stream and sequence number it minted.

use std::time::Duration;

use bytes::Bytes;
use mcp_client::transport::http::sse::{SseError, SseEvent, SseParser};
use proptest::prelude::*;

/// Small, so that oversized events and lines are reached often.
const LIMIT: usize = 48;
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Everything a parser says about a body.
#[derive(Debug, Clone, PartialEq)]
struct Outcome {
    events: Vec<SseEvent>,
    error: Option<SseError>,
    last_event_id: Option<String>,
    retry: Option<Duration>,
}

/// Feeds `input` to a parser with `limit`: the first `head` bytes, then pieces of `sizes`
/// (cycled), stopping at the first error.
fn parse(input: &[u8], limit: usize, head: usize, sizes: &[usize]) -> Outcome {
    let mut parser = SseParser::new(limit);
    let mut events = Vec::new();
    let (first, mut rest) = input.split_at(head.min(input.len()));
    let mut error = parser.feed(first, &mut events).err();
    for &size in sizes.iter().cycle() {
        if rest.is_empty() || error.is_some() {
            break;
        }
        let (piece, tail) = rest.split_at(size.clamp(1, rest.len()));
        rest = tail;
        error = parser.feed(piece, &mut events).err();
    }
    if error.is_some() {
        let mut more = Vec::new();
        assert!(parser.feed(b"data: x\n\n", &mut more).is_err(), "a failed parser stays failed");
        assert!(more.is_empty());
    }
    let last_event_id = parser.last_event_id().map(str::to_owned);
    Outcome { events, error, last_event_id, retry: parser.retry() }
}

fn whole(input: &[u8], limit: usize) -> Outcome {
    parse(input, limit, input.len(), &[1])
}

/// The event stream rules applied to the whole input at once, without a size limit.
fn model(input: &[u8]) -> Outcome {
    let input = input.strip_prefix(BOM).unwrap_or(input);
    let mut lines = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < input.len() {
        match input[i] {
            b'\n' => lines.push(&input[start..i]),
            b'\r' => {
                lines.push(&input[start..i]);
                if input.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
            }
            _ => {
                i += 1;
                continue;
            }
        }
        i += 1;
        start = i;
    }
    // What follows the last line ending is an unfinished line: ignored.
    let (mut data, mut event_type, mut id, mut last, mut retry) =
        (Vec::new(), String::new(), String::new(), String::new(), None);
    let mut events = Vec::new();
    for line in lines {
        if line.is_empty() {
            last.clone_from(&id);
            data.pop();
            let event = std::mem::take(&mut event_type);
            if !data.is_empty() {
                let event = if event.is_empty() { "message".to_owned() } else { event };
                let id = (!last.is_empty()).then(|| last.clone());
                events.push(SseEvent { event, data: Bytes::from(std::mem::take(&mut data)), id });
            }
            continue;
        }
        if line[0] == b':' {
            continue;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                (&line[..colon], line[colon + 1..].strip_prefix(b" ").unwrap_or(&line[colon + 1..]))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"event" => event_type = String::from_utf8_lossy(value).into_owned(),
            b"data" => {
                data.extend_from_slice(value);
                data.push(b'\n');
            }
            b"id" if !value.contains(&0) => id = String::from_utf8_lossy(value).into_owned(),
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                let millis = std::str::from_utf8(value).unwrap().parse().unwrap_or(u64::MAX);
                retry = Some(Duration::from_millis(millis));
            }
            _ => {}
        }
    }
    Outcome { events, error: None, last_event_id: (!last.is_empty()).then_some(last), retry }
}

/// Bodies made mostly of the pieces the rules care about, so that real events form often.
fn body() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        4 => prop::sample::select(vec![
            &b"data:"[..], b"data: ", b"data", b"id: ", b"id:", b"id", b"event: ", b"event:x", b"retry: ",
            b"retry:", b"\n", b"\r", b"\r\n", b"\n\n", b":", b": c", b" ", b"\0", b"7", b"12", b"x", b"{}", BOM,
            b"\xEF\xBB", b"\xFF",
        ])
        .prop_map(<[u8]>::to_vec),
        1 => prop::collection::vec(any::<u8>(), 0..24),
        1 => (1..LIMIT * 3).prop_map(|n| vec![b'a'; n]),
    ];
    prop_oneof![
        3 => prop::collection::vec(piece, 0..48).prop_map(|pieces| pieces.concat()),
        1 => prop::collection::vec(any::<u8>(), 0..256),
    ]
}

fn chunking() -> impl Strategy<Value = (usize, Vec<usize>)> {
    (0..256usize, prop::collection::vec(1..24usize, 1..6))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn chunking_never_changes_the_outcome(input in body(), (head, sizes) in chunking()) {
        let whole = whole(&input, LIMIT);
        prop_assert_eq!(&parse(&input, LIMIT, head, &sizes), &whole);
        prop_assert_eq!(&parse(&input, LIMIT, 0, &[1]), &whole, "byte by byte");
    }

    #[test]
    fn the_events_follow_the_rules_and_the_limit(input in body()) {
        let got = whole(&input, LIMIT);
        let expected = model(&input);
        for event in &got.events {
            prop_assert!(!event.data.is_empty() && event.data.len() <= LIMIT, "{event:?}");
            prop_assert!(!event.event.contains(['\r', '\n']));
            prop_assert!(event.id.as_deref().is_none_or(|id| !id.is_empty() && !id.contains(['\0', '\r', '\n'])));
        }
        match got.error {
            None => prop_assert_eq!(&got, &expected),
            Some(_) => prop_assert!(expected.events.starts_with(&got.events), "{got:?} is no prefix of {expected:?}"),
        }
        // Nothing the model accepts over the limit gets through.
        if expected.events.iter().any(|e| e.data.len() > LIMIT) {
            prop_assert!(whole(&input, LIMIT).error.is_some());
        }
        // Without a limit that matters, the parser is the model.
        prop_assert_eq!(whole(&input, usize::MAX), expected);
    }

    #[test]
    fn a_line_that_never_ends_is_refused(line in prop::collection::vec(any::<u8>().prop_filter("no line ending", |b| *b != b'\n' && *b != b'\r'), LIMIT + 128..LIMIT * 6), (head, sizes) in chunking()) {
        let got = parse(&line, LIMIT, head, &sizes);
        prop_assert_eq!(got.error, Some(SseError::TooLarge { limit: LIMIT }));
    }

    #[test]
    fn an_event_is_accepted_exactly_when_its_data_fits(values in prop::collection::vec("[^\r\n]{0,20}", 1..12)) {
        let mut input = Vec::new();
        for value in &values {
            input.extend_from_slice(format!("data: {value}\n").as_bytes());
        }
        input.push(b'\n');
        let data = values.join("\n");
        let got = whole(&input, LIMIT);
        if data.is_empty() {
            prop_assert!(got.events.is_empty() && got.error.is_none());
        } else if data.len() <= LIMIT {
            prop_assert_eq!(got.events, vec![SseEvent { event: "message".into(), data: Bytes::from(data), id: None }]);
        } else {
            prop_assert!(got.events.is_empty());
            prop_assert_eq!(got.error, Some(SseError::TooLarge { limit: LIMIT }));
        }
    }

    #[test]
    fn what_the_server_writes_reads_back_and_resumes(
        stream in "[A-Za-z0-9_-]{1,22}",
        first in 0..u64::MAX / 2,
        retry in 0..u32::MAX,
        messages in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..40), 0..6),
        (head, sizes) in chunking(),
    ) {
        let id = |n: usize| format!("{stream}.{}", first + n as u64);
        let mut body = mcp_http::codec::priming(&id(0), Duration::from_millis(retry.into())).to_vec();
        let mut expected = Vec::new();
        for (n, json) in messages.iter().enumerate() {
            body.extend_from_slice(&mcp_http::codec::event_with_id(&id(n + 1), json));
            let data: Vec<u8> = json.iter().map(|&b| if b == b'\n' || b == b'\r' { b' ' } else { b }).collect();
            if !data.is_empty() {
                expected.push(SseEvent { event: "message".into(), data: Bytes::from(data), id: Some(id(n + 1)) });
            }
        }
        let got = parse(&body, usize::MAX, head, &sizes);
        prop_assert_eq!(got.events, expected);
        prop_assert_eq!(got.retry, Some(Duration::from_millis(retry.into())));
        let last = got.last_event_id.expect("every event carries an id");
        prop_assert_eq!(&last, &id(messages.len()));
        // The client sends it back as is; the server reads it the way its GET handler does.
        let header = http::HeaderValue::from_bytes(last.as_bytes()).expect("a valid header value");
        let seen = header.to_str().expect("visible ASCII");
        prop_assert_eq!(mcp_http::codec::parse_id(seen.trim()), Some((stream.as_str(), first + messages.len() as u64)));
    }

    #[test]
    fn any_last_event_id_the_parser_keeps_has_no_line_break_or_nul(input in body()) {
        let got = whole(&input, usize::MAX);
        if let Some(id) = got.last_event_id {
            prop_assert!(!id.is_empty() && !id.contains(['\0', '\r', '\n']));
            // If it can go back as a header at all, it goes back unchanged.
            if let Ok(value) = http::HeaderValue::from_bytes(id.as_bytes()) {
                prop_assert_eq!(value.as_bytes(), id.as_bytes());
            }
        }
    }
}
