//! A request's span as its thread keeps it until the chunk is handed over: its values copied
//! (fixed fields in a list, strings in one buffer beside it; a numeric id as its number),
//! encoded as OTLP protobuf only at the hand-over, every waiting span of the chunk in one loop.
//! A server's span is copied straight from what the server tells (`Observed`), a client's from
//! its [`Span`].
//!
//! Why not encode each span as it ends: a small call's request path runs far more code than
//! the first-level instruction cache holds, so whatever code a call runs is fetched again on
//! every call, and a call pays about one miss for each line of code it runs. Encoding a span
//! runs a few dozen such lines; copying its values runs a few. At the hand-over, the encoder's
//! code is fetched once for the chunk's spans (measured with callgrind's cache simulation:
//! docs/PERFORMANCE.md). A command's span (`What::Command`, rare: one a command) is still
//! encoded at once.

use std::ops::Range;
use std::time::Duration;

use mcp_server::observe::{Observed, Outcome, SpanIds};

use super::{Failure, Id, Item, Kind, Request, Span, What};

/// A request's span, its strings as ranges of the chunk's [`Strings`].
pub(super) struct Pending {
    trace_id: [u8; 16],
    span_id: [u8; 8],
    parent: Option<[u8; 8]>,
    kind: Kind,
    end: u64,
    duration: Duration,
    method: &'static str,
    transport: &'static str,
    version: Option<&'static str>,
    failure: Option<Failure>,
    trace_state: Option<Range<usize>>,
    id: Kept,
    item: Option<(Item, Range<usize>)>,
    session: Option<Range<usize>>,
}

/// A pending span's request id: a number as it is (its digits are written at the hand-over),
/// a string's bytes in the chunk's [`Strings`].
enum Kept {
    None,
    Number(i64),
    Text(Range<usize>),
}

/// The strings of a chunk's pending spans, one after the other (each valid UTF-8 but the
/// id, which is bytes).
pub(super) type Strings = Vec<u8>;

/// Appends `s` to `strings`, and where it is.
fn keep(strings: &mut Strings, s: &[u8]) -> Range<usize> {
    let start = strings.len();
    strings.extend_from_slice(s);
    start..strings.len()
}

impl Pending {
    /// `span` kept, when it is a request's (`None`: a command's, to encode at once).
    pub(super) fn of(span: &Span<'_>, strings: &mut Strings) -> Option<Pending> {
        let What::Request(request) = &span.what else { return None };
        Some(Pending {
            trace_id: *span.trace_id,
            span_id: *span.span_id,
            parent: span.parent.copied(),
            kind: span.kind,
            end: span.end,
            duration: span.duration,
            method: request.method,
            transport: request.transport,
            version: request.version,
            failure: request.failure,
            trace_state: span.trace_state.map(|s| keep(strings, s.as_bytes())),
            id: match request.id {
                Id::None => Kept::None,
                Id::Number(n) => Kept::Number(n),
                Id::Text(text) => Kept::Text(keep(strings, text)),
            },
            item: request.item.map(|(kind, name)| (kind, keep(strings, name.as_bytes()))),
            session: request.session.map(|s| keep(strings, s.as_bytes())),
        })
    }

    /// A server's span of the request `r` (its ids `ids`, ended at `end`), kept straight from
    /// what the server tells: a span's values are copied once on the request's path, not
    /// gathered into a [`Span`] first.
    pub(super) fn served(
        ids: &SpanIds,
        end: u64,
        r: &Observed<'_>,
        transport: &'static str,
        strings: &mut Strings,
    ) -> Pending {
        Pending {
            trace_id: ids.trace_id,
            span_id: ids.span_id,
            parent: ids.parent,
            kind: Kind::Server,
            end,
            duration: r.duration,
            method: r.method,
            transport,
            version: r.version.map(|v| v.as_str()),
            failure: match r.outcome {
                Outcome::Success => None,
                Outcome::ToolError => Some(Failure::Tool),
                Outcome::Error { code, .. } => Some(Failure::Code(code)),
                Outcome::Cancelled => Some(Failure::Cancelled),
            },
            trace_state: ids.tracestate.as_deref().map(|s| keep(strings, s.as_bytes())),
            id: match r.id {
                mcp_types::RequestId::Number(n) => Kept::Number(*n),
                mcp_types::RequestId::String(s) => Kept::Text(keep(strings, s.as_bytes())),
            },
            item: r.name.map(|name| (Item::named_by(r.method), keep(strings, name.as_bytes()))),
            session: r.session.map(|s| keep(strings, s.as_bytes())),
        }
    }

    /// The span again, borrowing its strings from `strings`.
    pub(super) fn span<'a>(&'a self, strings: &'a [u8]) -> Span<'a> {
        let bytes = |range: &Range<usize>| strings.get(range.clone()).unwrap_or_default();
        // Kept from `&str`s: valid UTF-8 (an empty string, were they not).
        let at = |range: &Range<usize>| std::str::from_utf8(bytes(range)).unwrap_or_default();
        Span {
            trace_id: &self.trace_id,
            span_id: &self.span_id,
            parent: self.parent.as_ref(),
            trace_state: self.trace_state.as_ref().map(at),
            kind: self.kind,
            end: self.end,
            duration: self.duration,
            what: What::Request(Request {
                method: self.method,
                transport: self.transport,
                id: match &self.id {
                    Kept::None => Id::None,
                    Kept::Number(n) => Id::Number(*n),
                    Kept::Text(range) => Id::Text(bytes(range)),
                },
                item: self.item.as_ref().map(|(kind, name)| (*kind, at(name))),
                version: self.version,
                session: self.session.as_ref().map(at),
                failure: self.failure,
            }),
        }
    }
}
