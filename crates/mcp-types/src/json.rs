//! Plain JSON aliases shared by every wire type.

/// A JSON object (`JSONObject` in the schema). Keys are kept sorted (serde_json without
/// `preserve_order`): member order carries no meaning in JSON.
pub type JsonObject = serde_json::Map<String, serde_json::Value>;

/// Any JSON value (`JSONValue` in the schema).
pub type JsonValue = serde_json::Value;

/// A JSON array (`JSONArray` in the schema).
pub type JsonArray = Vec<serde_json::Value>;

/// The general `_meta` object (`MetaObject`) carried by content, resources and the like.
pub type MetaObject = JsonObject;

/// A text member written as serde_json writes a string, faster when it needs no escaping.
///
/// serde_json escapes a string a byte at a time (about ten instructions a byte, measured on a
/// 10 KB tool result: half of a `tools/call`'s cost). A long text with nothing to escape —
/// no `"`, no `\`, no control character, which is most text — is checked eight bytes at a
/// time and handed to the serializer as raw JSON text, so it is copied, not escaped (up to
/// 2 MiB; a larger text is escaped as before). The bytes written are the same either way. Like every `RawValue`, the raw form is meant for
/// serde_json's serializers (`to_vec`, `to_writer`, `to_value`, `to_raw_value`), which are
/// what the wire types are written with (a [`Response`](crate::Response) carries its result
/// as raw JSON too).
#[derive(Debug, Clone, Copy)]
pub struct Text<'a>(pub &'a str);

/// Below this length the detour (one allocation, one copy, one validating scan) costs more
/// than escaping a byte at a time saves.
const RAW_TEXT_FROM: usize = 512;

/// Above this length a text is escaped as before: the detour holds a second, exact-size copy
/// of the text while it is written, and for a text of several MiB that copy (a block of its own
/// the allocator maps and unmaps) costs more in memory held at the peak than the escaping saves.
const RAW_TEXT_UP_TO: usize = 2 * 1024 * 1024;

impl serde::Serialize for Text<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let text = self.0;
        if (RAW_TEXT_FROM..=RAW_TEXT_UP_TO).contains(&text.len()) && !needs_escaping(text.as_bytes()) {
            let mut quoted = String::with_capacity(text.len() + 2);
            quoted.push('"');
            quoted.push_str(text);
            quoted.push('"');
            // Cannot fail for a string with nothing to escape; if it did, the plain path
            // below still writes the right bytes.
            if let Ok(raw) = serde_json::value::RawValue::from_string(quoted) {
                return raw.serialize(serializer);
            }
        }
        serializer.serialize_str(text)
    }
}

/// Whether a JSON string of these bytes needs an escape: a `"`, a `\` or a control character
/// (below 0x20). Eight bytes are tested at once, by the usual carry tricks on a `u64`: for
/// each byte `b`, `(b - n) & !b & 0x80` is non-zero exactly when `b < n` (for `n <= 0x80`),
/// and a byte equal to `c` is one that `b ^ c` turns into zero.
fn needs_escaping(bytes: &[u8]) -> bool {
    const ONES: u64 = u64::MAX / 0xFF;
    const HIGH: u64 = ONES * 0x80;
    let below = |word: u64, n: u8| word.wrapping_sub(ONES * u64::from(n)) & !word & HIGH;
    let mut words = bytes.chunks_exact(8);
    for chunk in &mut words {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        let found = below(word, 0x20)
            | below(word ^ (ONES * u64::from(b'"')), 1)
            | below(word ^ (ONES * u64::from(b'\\')), 1);
        if found != 0 {
            return true;
        }
    }
    words.remainder().iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\')
}

#[cfg(test)]
mod tests {
    use super::{RAW_TEXT_FROM, RAW_TEXT_UP_TO, Text, needs_escaping};

    /// What serde_json writes for `text`, and what it writes through `Text`: the same bytes.
    fn same(text: &str) {
        assert_eq!(
            serde_json::to_string(&Text(text)).unwrap(),
            serde_json::to_string(text).unwrap(),
            "{text:?}"
        );
        let raw = serde_json::value::to_raw_value(&Text(text)).unwrap();
        assert_eq!(raw.get(), serde_json::to_string(text).unwrap());
        assert_eq!(serde_json::to_value(Text(text)).unwrap(), serde_json::Value::String(text.to_owned()));
    }

    #[test]
    fn every_byte_that_needs_an_escape_is_found_at_every_position() {
        for len in [1, 7, 8, 9, 15, 16, 17, 64, RAW_TEXT_FROM, RAW_TEXT_FROM + 7] {
            let plain = "é".repeat(len / 2) + &"a".repeat(len % 2);
            assert!(!needs_escaping(plain.as_bytes()), "{len}");
            for position in 0..len.min(70) {
                for bad in [b'"', b'\\', 0x00, 0x0A, 0x1F] {
                    let mut bytes = "a".repeat(len).into_bytes();
                    bytes[position] = bad;
                    assert!(needs_escaping(&bytes), "{bad:#x} at {position} of {len}");
                }
            }
        }
        // Next to the bytes that need escaping, nothing else does.
        for ok in [b' ', b'!', b'#', b'[', b']', 0x7F, 0x80, 0xFF] {
            assert!(!needs_escaping(&[ok; 16]), "{ok:#x}");
        }
    }

    #[test]
    fn texts_are_written_exactly_as_serde_json_writes_strings() {
        let long = "x".repeat(RAW_TEXT_FROM * 3);
        for text in [
            String::new(),
            "short".to_owned(),
            long.clone(),
            format!("{long}\""),
            format!("\\{long}"),
            // A backslash that would read as an escape if it were copied raw.
            format!("C:\\new\\table\\u0041{long}"),
            format!("{long}\n{long}"),
            format!("{long}\u{1}"),
            format!("{long}\u{7f}é😀"),
            "é".repeat(RAW_TEXT_FROM),
            "y".repeat(RAW_TEXT_UP_TO),
            "z".repeat(RAW_TEXT_UP_TO + 1),
        ] {
            same(&text);
        }
    }
}
