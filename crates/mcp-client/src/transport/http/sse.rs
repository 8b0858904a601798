//! A sans-IO parser of `text/event-stream` bodies, following the WHATWG "event stream
//! interpretation" rules: lines end with CRLF, LF or CR; a leading byte-order mark is ignored;
//! lines starting with `:` are comments; the fields are `event`, `data` (several are joined
//! with `\n`), `id` (ignored when it contains NUL; it persists as the last event id) and `retry`
//! (ASCII digits only); a blank line dispatches the event. One departure, because every MCP
//! event carries a JSON message: an event whose data is empty — no `data` field, or only empty
//! ones — is not dispatched, but its `id` and `retry` still count. That is how MCP servers prime
//! a stream for resumption (`id: 7`, `retry: 500`, `data: `).
//!
//! The parser owns its buffers, so bytes may arrive split at any point. Memory is bounded: an
//! event (or a single line, comments included) larger than the limit is an error, after which
//! the parser refuses further input.

use std::time::Duration;

use bytes::Bytes;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The event type: the `event` field, or `message` when the event named none.
    pub event: String,
    /// The data lines, joined with `\n`; never empty.
    pub data: Bytes,
    /// The last event id when the event was dispatched (`None` while it is empty).
    pub id: Option<String>,
}

/// Why the parser stopped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SseError {
    /// An event or a line exceeded the size limit.
    #[error("an SSE event exceeds the limit of {limit} bytes")]
    TooLarge {
        /// The limit that was exceeded.
        limit: usize,
    },
}

/// The UTF-8 byte-order mark.
const BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];
/// Room for a field name and its colon on top of the event limit, so that an event whose data
/// is exactly the limit is accepted.
const FIELD_SLACK: usize = 64;

/// The incremental parser. Feed it the body as it arrives; it returns the events completed.
#[derive(Debug, Clone)]
pub struct SseParser {
    max_event_size: usize,
    /// The current, unterminated line.
    line: Vec<u8>,
    /// The previous byte was CR: a following LF belongs to the same line ending.
    after_cr: bool,
    /// How much of a leading BOM has been seen; `None` once past the start of the stream.
    bom: Option<usize>,
    data: Vec<u8>,
    event_type: String,
    id_buffer: String,
    last_event_id: String,
    retry: Option<Duration>,
    failed: bool,
}

impl SseParser {
    /// A parser for a new stream, refusing events larger than `max_event_size` bytes.
    pub fn new(max_event_size: usize) -> Self {
        SseParser {
            max_event_size,
            line: Vec::new(),
            after_cr: false,
            bom: Some(0),
            data: Vec::new(),
            event_type: String::new(),
            id_buffer: String::new(),
            last_event_id: String::new(),
            retry: None,
            failed: false,
        }
    }

    /// The last event id of the stream (the `Last-Event-ID` to resume with); `None` while it
    /// is empty. An `id` field counts once its event is complete (a blank line), whether or
    /// not that event had data.
    pub fn last_event_id(&self) -> Option<&str> {
        (!self.last_event_id.is_empty()).then_some(self.last_event_id.as_str())
    }

    /// The reconnection delay the server asked for with `retry`, if it did.
    pub fn retry(&self) -> Option<Duration> {
        self.retry
    }

    /// Prepares for the body of a reconnection: an incomplete event of the previous body is
    /// discarded, while the last event id and the reconnection delay are kept.
    pub fn restart(&mut self) {
        self.line.clear();
        self.data.clear();
        self.event_type.clear();
        self.id_buffer = self.last_event_id.clone();
        self.after_cr = false;
        self.bom = Some(0);
        self.failed = false;
    }

    /// Consumes the next bytes of the body and appends the events they complete to `events`.
    /// The events completed before an error are appended too, so how the body is split into
    /// chunks never changes which events come out.
    pub fn feed(&mut self, mut chunk: &[u8], events: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if self.failed {
            return Err(self.too_large());
        }
        while let Some(matched) = self.bom {
            let Some(&byte) = chunk.first() else { return Ok(()) };
            if byte == BOM[matched] {
                chunk = &chunk[1..];
                self.bom = (matched + 1 < BOM.len()).then_some(matched + 1);
            } else {
                // Not a BOM after all: the bytes taken so far are content (they are no line
                // endings, so they simply start the first line).
                self.line.extend_from_slice(&BOM[..matched]);
                self.bom = None;
            }
        }
        while !chunk.is_empty() {
            if self.after_cr {
                self.after_cr = false;
                if chunk[0] == b'\n' {
                    chunk = &chunk[1..];
                    continue;
                }
            }
            match chunk.iter().position(|&b| b == b'\n' || b == b'\r') {
                None => {
                    self.append(chunk)?;
                    break;
                }
                Some(end) => {
                    self.append(&chunk[..end])?;
                    self.after_cr = chunk[end] == b'\r';
                    chunk = &chunk[end + 1..];
                    let line = std::mem::take(&mut self.line);
                    let result = self.process_line(&line, events);
                    // Keep the allocation for the next line.
                    self.line = line;
                    self.line.clear();
                    result?;
                }
            }
        }
        Ok(())
    }

    fn too_large(&self) -> SseError {
        SseError::TooLarge { limit: self.max_event_size }
    }

    fn fail(&mut self) -> SseError {
        self.failed = true;
        self.line = Vec::new();
        self.data = Vec::new();
        self.too_large()
    }

    fn append(&mut self, bytes: &[u8]) -> Result<(), SseError> {
        if self.line.len() + bytes.len() + self.data.len() > self.max_event_size.saturating_add(FIELD_SLACK) {
            return Err(self.fail());
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    fn process_line(&mut self, line: &[u8], events: &mut Vec<SseEvent>) -> Result<(), SseError> {
        if line.is_empty() {
            return self.dispatch(events);
        }
        if line[0] == b':' {
            return Ok(());
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        match field {
            b"event" => self.event_type = String::from_utf8_lossy(value).into_owned(),
            b"data" => {
                self.data.extend_from_slice(value);
                self.data.push(b'\n');
            }
            b"id" if !value.contains(&0) => self.id_buffer = String::from_utf8_lossy(value).into_owned(),
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                // All digits, so only overflow can fail: saturate.
                let millis = std::str::from_utf8(value).ok().and_then(|s| s.parse().ok()).unwrap_or(u64::MAX);
                self.retry = Some(Duration::from_millis(millis));
            }
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self, events: &mut Vec<SseEvent>) -> Result<(), SseError> {
        self.last_event_id.clone_from(&self.id_buffer);
        self.data.pop(); // the newline after the last data line
        if self.data.is_empty() {
            self.event_type.clear();
            return Ok(());
        }
        if self.data.len() > self.max_event_size {
            return Err(self.fail());
        }
        let event = if self.event_type.is_empty() {
            "message".to_owned()
        } else {
            std::mem::take(&mut self.event_type)
        };
        events.push(SseEvent {
            event,
            data: Bytes::from(std::mem::take(&mut self.data)),
            id: self.last_event_id().map(str::to_owned),
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(event: &str, data: &str, id: Option<&str>) -> SseEvent {
        SseEvent { event: event.to_owned(), data: Bytes::from(data.to_owned()), id: id.map(str::to_owned) }
    }

    /// One `feed`, its events or its error.
    fn feed(parser: &mut SseParser, chunk: &[u8]) -> Result<Vec<SseEvent>, SseError> {
        let mut events = Vec::new();
        parser.feed(chunk, &mut events).map(|()| events)
    }

    fn parse_all(input: &[u8]) -> (Vec<SseEvent>, Option<String>, Option<Duration>) {
        let mut parser = SseParser::new(1024);
        let events = feed(&mut parser, input).unwrap();
        (events, parser.last_event_id().map(str::to_owned), parser.retry())
    }

    /// Feeds `input` split at every pair of boundaries, and checks the result never changes.
    fn assert_chunking_invariant(input: &[u8]) {
        let whole = parse_all(input);
        for i in 0..=input.len() {
            for j in i..=input.len() {
                let mut parser = SseParser::new(1024);
                let mut events = feed(&mut parser, &input[..i]).unwrap();
                events.extend(feed(&mut parser, &input[i..j]).unwrap());
                events.extend(feed(&mut parser, &input[j..]).unwrap());
                let split = (events, parser.last_event_id().map(str::to_owned), parser.retry());
                assert_eq!(split, whole, "split at {i} and {j}");
            }
        }
    }

    const SAMPLE: &[u8] = b"\xEF\xBB\xBF: a comment\r\n\
        id: event-1\r\nretry: 500\r\ndata: \r\n\r\n\
        event: message\ndata: {\"a\":1}\n\n\
        data:first\rdata: second\r\r\
        id: 9\ndata\n\n\
        event: endpoint\r\ndata: /messages?x=1\r\n\r\n\
        data: unterminated";

    #[test]
    fn parses_a_stream_with_every_feature() {
        let (events, last, retry) = parse_all(SAMPLE);
        assert_eq!(
            events,
            vec![
                ev("message", "{\"a\":1}", Some("event-1")),
                ev("message", "first\nsecond", Some("event-1")),
                ev("endpoint", "/messages?x=1", Some("9")),
            ]
        );
        assert_eq!(last.as_deref(), Some("9"));
        assert_eq!(retry, Some(Duration::from_millis(500)));
    }

    #[test]
    fn empty_data_is_not_dispatched() {
        let (events, last, _) = parse_all(b"data\n\nid: 1\ndata:\n\nid: 2\ndata: \n\n");
        assert!(events.is_empty());
        assert_eq!(last.as_deref(), Some("2"));
        // Two empty data lines make one newline: not empty.
        let (events, _, _) = parse_all(b"data:\ndata:\n\n");
        assert_eq!(events, vec![ev("message", "\n", None)]);
    }

    #[test]
    fn an_event_without_data_is_not_dispatched_but_its_id_and_retry_count() {
        let (events, last, retry) = parse_all(b"id: p\nretry: 250\n\n");
        assert!(events.is_empty());
        assert_eq!(last.as_deref(), Some("p"));
        assert_eq!(retry, Some(Duration::from_millis(250)));
    }

    #[test]
    fn chunking_at_every_boundary_gives_the_same_result() {
        assert_chunking_invariant(SAMPLE);
        assert_chunking_invariant(b"data: a\r\n\r\ndata: b\r\rdata: c\n\r\n");
    }

    #[test]
    fn a_byte_order_mark_counts_only_at_the_start() {
        let (events, _, _) = parse_all(b"\xEF\xBB\xBFdata: x\n\n");
        assert_eq!(events, vec![ev("message", "x", None)]);
        // A partial BOM is content: the first line is then no known field.
        let (events, _, _) = parse_all(b"\xEF\xBBdata: x\n\ndata: y\n\n");
        assert_eq!(events, vec![ev("message", "y", None)]);
        // A BOM later in the stream is not stripped (it makes an unknown field).
        let (events, _, _) = parse_all(b"data: x\n\n\xEF\xBB\xBFdata: y\n\n");
        assert_eq!(events, vec![ev("message", "x", None)]);
    }

    #[test]
    fn id_with_nul_and_bad_retry_are_ignored() {
        let (events, last, retry) =
            parse_all(b"id: ok\nretry: 10\n\nid: b\0ad\nretry: 5x\nretry: \ndata: d\n\n");
        assert_eq!(events, vec![ev("message", "d", Some("ok"))]);
        assert_eq!(last.as_deref(), Some("ok"));
        assert_eq!(retry, Some(Duration::from_millis(10)));
    }

    #[test]
    fn an_empty_id_resets_the_last_event_id() {
        let (events, last, _) = parse_all(b"id: 1\ndata: a\n\nid\ndata: b\n\n");
        assert_eq!(events, vec![ev("message", "a", Some("1")), ev("message", "b", None)]);
        assert_eq!(last, None);
    }

    #[test]
    fn only_one_leading_space_is_stripped_and_unknown_fields_are_ignored() {
        let (events, _, _) = parse_all(b"data:  two\nfoo: bar\nevent:x\n\n");
        assert_eq!(events, vec![ev("x", " two", None)]);
    }

    #[test]
    fn an_incomplete_event_is_dropped_on_restart_but_the_id_survives() {
        let mut parser = SseParser::new(1024);
        assert!(feed(&mut parser, b"id: 4\nretry: 7\ndata: \n\nid: 5\ndata: half").unwrap().is_empty());
        parser.restart();
        assert_eq!(parser.last_event_id(), Some("4"));
        assert_eq!(parser.retry(), Some(Duration::from_millis(7)));
        let events = feed(&mut parser, b"data: whole\n\n").unwrap();
        assert_eq!(events, vec![ev("message", "whole", Some("4"))]);
    }

    #[test]
    fn oversized_events_and_lines_are_refused() {
        let mut parser = SseParser::new(16);
        assert_eq!(
            feed(&mut parser, b"data: 0123456789abcdef\n\n").unwrap(),
            vec![ev("message", "0123456789abcdef", None)]
        );
        let mut parser = SseParser::new(16);
        let err = feed(&mut parser, b"data: 0123456789abcdefX\n\n").unwrap_err();
        assert_eq!(err, SseError::TooLarge { limit: 16 });
        assert!(feed(&mut parser, b"data: a\n\n").is_err(), "a failed parser stays failed");
        // Many data lines add up.
        let mut parser = SseParser::new(16);
        let err = (0..20).find_map(|_| feed(&mut parser, b"data: 0123\n").err());
        assert_eq!(err, Some(SseError::TooLarge { limit: 16 }));
        // A never-ending line (even a comment) is refused without buffering it all.
        let mut parser = SseParser::new(16);
        let err = (0..1000).find_map(|_| feed(&mut parser, b": xxxxxxxxxxxxxxx").err());
        assert_eq!(err, Some(SseError::TooLarge { limit: 16 }));
        assert!(parser.line.capacity() < 1024);
    }

    #[test]
    fn events_completed_before_an_error_in_the_same_chunk_are_delivered() {
        // Found by the chunking property (tests/fuzz_sse.rs): an answer followed, in the same
        // chunk, by an oversized event was lost, though it came out when the chunk was split.
        let input = b"data: answer\n\ndata: 0123456789abcdefX\n\n";
        let mut parser = SseParser::new(16);
        let mut events = Vec::new();
        let err = parser.feed(input, &mut events).unwrap_err();
        assert_eq!(err, SseError::TooLarge { limit: 16 });
        assert_eq!(events, vec![ev("message", "answer", None)]);
        let mut split = SseParser::new(16);
        let mut split_events = Vec::new();
        split.feed(&input[..14], &mut split_events).unwrap();
        assert_eq!(split.feed(&input[14..], &mut split_events), Err(err));
        assert_eq!(split_events, events);
    }
}
