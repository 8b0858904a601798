//! Fuzzes the client's SSE parser (`mcp_client::transport::http::sse::SseParser`): splitting
//! the body into chunks never changes the events, the error, the last event id or the retry
//! delay; no event is empty or over the limit; no id holds NUL, CR or LF; a failed parser stays
//! failed; and a line that never ends is refused instead of buffered.
#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use mcp_client::transport::http::sse::{SseError, SseEvent, SseParser};

/// Small, so oversized events and lines are reached often.
const LIMIT: usize = 48;

type Outcome = (Vec<SseEvent>, Option<SseError>, Option<String>, Option<Duration>);

fuzz_target!(|data: &[u8]| {
    // The first two bytes pick where the first piece ends and the size of the pieces after
    // it; the rest is the body.
    let [split_seed, chunk_seed, input @ ..] = data else {
        return;
    };
    let split = usize::from(*split_seed) * input.len() / 255;
    let chunk = usize::from(chunk_seed % 32) + 1;

    let whole = parse(input, input.len(), 1);
    assert_eq!(parse(input, split, chunk), whole, "split at {split}, then {chunk}-byte pieces");
    assert_eq!(parse(input, 0, 1), whole, "byte by byte");

    let (events, error, last_event_id, _) = &whole;
    for event in events {
        assert!(!event.data.is_empty() && event.data.len() <= LIMIT, "{event:?}");
        assert!(!event.event.contains(['\r', '\n']), "{event:?}");
        assert!(event.id.as_deref().is_none_or(|id| !id.is_empty() && !id.contains(['\0', '\r', '\n'])));
    }
    assert!(last_event_id.as_deref().is_none_or(|id| !id.contains(['\0', '\r', '\n'])));
    // Bounded buffering: an unfinished last line far over the limit has been refused.
    let unfinished = input.len() - input.iter().rposition(|&b| b == b'\n' || b == b'\r').map_or(0, |i| i + 1);
    if unfinished > LIMIT + 128 {
        assert!(error.is_some(), "{unfinished} bytes of one line buffered");
    }
});

/// Feeds the first `split` bytes of `input` as one piece and the rest in `chunk`-byte pieces,
/// until an error.
fn parse(input: &[u8], split: usize, chunk: usize) -> Outcome {
    let mut parser = SseParser::new(LIMIT);
    let mut events = Vec::new();
    let (head, tail) = input.split_at(split);
    let error = std::iter::once(head)
        .chain(tail.chunks(chunk))
        .find_map(|piece| parser.feed(piece, &mut events).err());
    if error.is_some() {
        let mut more = Vec::new();
        assert!(
            parser.feed(b"data: x\n\n", &mut more).is_err() && more.is_empty(),
            "a failed parser stays failed"
        );
    }
    (events, error, parser.last_event_id().map(str::to_owned), parser.retry())
}
