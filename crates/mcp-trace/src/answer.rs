//! What an OTLP collector answers an export with: an `ExportTraceServiceResponse`, whose one
//! field, `partial_success`, says how many spans it rejected and why (OTLP/HTTP: a `200` may
//! still carry rejections, which the exporter must log and must not send again).

/// The most of an answer the exporter reads: the message is a few bytes; past this the rest is
/// left unread (and its connection with it).
pub(crate) const ANSWER_LIMIT: usize = 64 * 1024;

/// An `ExportTracePartialSuccess`: spans the collector rejected, and its message.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct PartialSuccess {
    pub(crate) rejected: i64,
    pub(crate) message: String,
}

impl PartialSuccess {
    /// The partial success in an encoded `ExportTraceServiceResponse`: `Some` only when the
    /// collector reported a rejection or a message, `None` for a full success (an empty
    /// answer, or an empty `partial_success`) and for bytes that are not the message.
    pub(crate) fn of(answer: &[u8]) -> Option<PartialSuccess> {
        let mut found = PartialSuccess::default();
        let mut response = Reader(answer);
        while !response.0.is_empty() {
            if let (1, Value::Bytes(inner)) = response.field()? {
                let mut partial = Reader(inner);
                while !partial.0.is_empty() {
                    match partial.field()? {
                        // int64, as a varint: two's complement in 64 bits.
                        (1, Value::Varint(n)) => found.rejected = n as i64,
                        (2, Value::Bytes(text)) => found.message = String::from_utf8_lossy(text).into_owned(),
                        _ => {}
                    }
                }
            }
        }
        (found.rejected != 0 || !found.message.is_empty()).then_some(found)
    }
}

enum Value<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed,
}

/// Protobuf's wire format, read field by field; unknown fields are skipped.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn varint(&mut self) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let (&byte, rest) = self.0.split_first()?;
            self.0 = rest;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.0.len() {
            return None;
        }
        let (taken, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(taken)
    }

    fn field(&mut self) -> Option<(u64, Value<'a>)> {
        let key = self.varint()?;
        let value = match key & 7 {
            0 => Value::Varint(self.varint()?),
            1 => {
                self.take(8)?;
                Value::Fixed
            }
            2 => {
                let length = usize::try_from(self.varint()?).ok()?;
                Value::Bytes(self.take(length)?)
            }
            5 => {
                self.take(4)?;
                Value::Fixed
            }
            _ => return None,
        };
        Some((key >> 3, value))
    }
}

#[cfg(test)]
mod tests {
    use opentelemetry_proto::tonic::collector::trace::v1::{
        ExportTracePartialSuccess, ExportTraceServiceResponse,
    };
    use prost::Message;

    use super::*;

    fn encoded(partial: Option<ExportTracePartialSuccess>) -> Vec<u8> {
        ExportTraceServiceResponse { partial_success: partial }.encode_to_vec()
    }

    #[test]
    fn a_rejection_and_its_message_are_read() {
        let answer = encoded(Some(ExportTracePartialSuccess {
            rejected_spans: 7,
            error_message: "spans too old".into(),
        }));
        assert_eq!(
            PartialSuccess::of(&answer),
            Some(PartialSuccess { rejected: 7, message: "spans too old".into() })
        );
        let message_only =
            encoded(Some(ExportTracePartialSuccess { rejected_spans: 0, error_message: "slow down".into() }));
        assert_eq!(
            PartialSuccess::of(&message_only),
            Some(PartialSuccess { rejected: 0, message: "slow down".into() })
        );
    }

    #[test]
    fn a_full_success_is_none() {
        assert_eq!(PartialSuccess::of(&[]), None);
        assert_eq!(PartialSuccess::of(&encoded(None)), None);
        assert_eq!(PartialSuccess::of(&encoded(Some(ExportTracePartialSuccess::default()))), None);
        // An empty partial_success, as some collectors always send it.
        assert_eq!(PartialSuccess::of(&[0x0a, 0x00]), None);
    }

    #[test]
    fn unknown_fields_are_skipped_and_broken_bytes_refused() {
        let mut answer = vec![0x10, 0x96, 0x01]; // field 2, varint 150
        answer.extend([0x1d, 1, 2, 3, 4]); // field 3, fixed32
        answer.extend([0x21, 1, 2, 3, 4, 5, 6, 7, 8]); // field 4, fixed64
        answer.extend(encoded(Some(ExportTracePartialSuccess {
            rejected_spans: 3,
            error_message: String::new(),
        })));
        assert_eq!(PartialSuccess::of(&answer), Some(PartialSuccess { rejected: 3, message: String::new() }));
        // A length past the end, a varint that never ends, a wire type that does not exist.
        assert_eq!(PartialSuccess::of(&[0x0a, 0x05, 0x08]), None);
        assert_eq!(
            PartialSuccess::of(&[0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
            None
        );
        assert_eq!(PartialSuccess::of(&[0x0f]), None);
        // JSON is not the message.
        assert_eq!(PartialSuccess::of(br#"{"partialSuccess":{}}"#), None);
    }
}
