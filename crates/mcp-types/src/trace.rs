//! W3C Trace Context in `_meta` (SEP-414): the keys `traceparent`, `tracestate` and `baggage`
//! carry a request's trace context over every transport, stdio included — the one exception to
//! the DNS-prefixed `_meta` keys. [`TraceParent`] reads and writes the `traceparent` value.

use std::fmt;

use crate::json::JsonObject;

/// The `_meta` key of the W3C `traceparent`.
pub const TRACEPARENT: &str = "traceparent";
/// The `_meta` key of the W3C `tracestate`.
pub const TRACESTATE: &str = "tracestate";
/// The `_meta` key of the W3C `baggage`.
pub const BAGGAGE: &str = "baggage";

/// A W3C `traceparent` (version `00`): the trace, the caller's span in it, and whether it is
/// sampled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TraceParent {
    /// The trace id (never all zero).
    pub trace_id: [u8; 16],
    /// The parent span's id (never all zero).
    pub span_id: [u8; 8],
    /// The `sampled` flag.
    pub sampled: bool,
}

fn hex<const N: usize>(text: &str) -> Option<[u8; N]> {
    if text.len() != N * 2 || !text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return None;
    }
    let mut out = [0u8; N];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[i * 2..i * 2 + 2], 16).ok()?;
    }
    Some(out)
}

impl TraceParent {
    /// Parses a `traceparent` value: `00-<32 hex>-<16 hex>-<2 hex>`, lower-case, ids not all
    /// zero. A later version's value is read by its first four fields, as the W3C text says.
    pub fn parse(value: &str) -> Option<TraceParent> {
        let value = value.trim();
        let mut parts = value.split('-');
        let version = parts.next()?;
        let (trace, span, flags) = (parts.next()?, parts.next()?, parts.next()?);
        let version = hex::<1>(version)?[0];
        if version == 0xff || (version == 0 && parts.next().is_some()) {
            return None;
        }
        let trace_id = hex::<16>(trace)?;
        let span_id = hex::<8>(span)?;
        let flags = hex::<1>(flags)?[0];
        if trace_id == [0; 16] || span_id == [0; 8] {
            return None;
        }
        Some(TraceParent { trace_id, span_id, sampled: flags & 1 == 1 })
    }

    /// The `traceparent` a request's `_meta` carries, when it carries a valid one.
    pub fn from_meta(extra: &JsonObject) -> Option<TraceParent> {
        extra.get(TRACEPARENT).and_then(|v| v.as_str()).and_then(TraceParent::parse)
    }

    /// The same trace, with `span_id` as the parent of what comes next.
    pub fn child(self, span_id: [u8; 8]) -> TraceParent {
        TraceParent { span_id, ..self }
    }
}

impl fmt::Display for TraceParent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("00-")?;
        for b in self.trace_id {
            write!(f, "{b:02x}")?;
        }
        f.write_str("-")?;
        for b in self.span_id {
            write!(f, "{b:02x}")?;
        }
        write!(f, "-{:02x}", u8::from(self.sampled))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_writes_the_w3c_form() {
        let text = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01";
        let tp = TraceParent::parse(text).unwrap();
        assert!(tp.sampled);
        assert_eq!(tp.to_string(), text);
        assert_eq!(tp.child([1; 8]).to_string(), "00-0af7651916cd43dd8448eb211c80319c-0101010101010101-01");
        for bad in [
            "",
            "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
            "00-0AF7651916CD43DD8448EB211C80319C-00f067aa0ba902b7-01",
            "ff-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01",
            "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01-extra",
        ] {
            assert_eq!(TraceParent::parse(bad), None, "{bad}");
        }
        // A later version is read by its first fields.
        assert!(TraceParent::parse("01-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-00-more").is_some());
    }
}
