//! The line encoder.

/// Appends `json` to `out` as one line: the message, then a single `\n`.
///
/// Any raw `\n` or `\r` byte in `json` is replaced by a space, so the line never contains an
/// embedded line break, as the stdio transport requires. This cannot change the meaning of
/// serialized JSON: JSON strings cannot hold raw control characters (they must be escaped,
/// as `\n` and `\r`), so a raw line-break byte can only be insignificant whitespace between
/// tokens, e.g. from a pretty-printer — and a space is whitespace too. Both bytes are ASCII,
/// so replacing them never breaks a UTF-8 sequence.
///
/// `json` is expected to be one serialized JSON value; an empty one yields a blank line,
/// which the peer ignores.
pub fn encode_line(json: &[u8], out: &mut Vec<u8>) {
    out.reserve(json.len() + 1);
    let from = out.len();
    out.extend_from_slice(json);
    blank_line_breaks(&mut out[from..]);
    out.push(b'\n');
}

/// Turns `json` into one line in place, as [`encode_line`] would write it, without copying
/// the message: for an answer of a megabyte, the line is the buffer it was serialized into
/// (the `\n` fits in place when the buffer has room for one more byte).
pub fn into_line(mut json: Vec<u8>) -> Vec<u8> {
    blank_line_breaks(&mut json);
    json.push(b'\n');
    json
}

/// Replaces each raw `\n` and `\r` with a space. Serialized JSON rarely has any, so the bytes
/// are searched (SIMD) rather than rewritten one by one.
fn blank_line_breaks(json: &mut [u8]) {
    let mut at = 0;
    while let Some(i) = memchr::memchr2(b'\n', b'\r', &json[at..]) {
        json[at + i] = b' ';
        at += i + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::{encode_line, into_line};

    fn encode(json: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        encode_line(json, &mut out);
        out
    }

    #[test]
    fn appends_exactly_one_newline() {
        assert_eq!(encode(br#"{"jsonrpc":"2.0"}"#), b"{\"jsonrpc\":\"2.0\"}\n");
    }

    #[test]
    fn replaces_embedded_line_breaks_with_spaces() {
        let pretty = b"{\r\n  \"a\": 1,\n  \"b\": \"x\\ny\"\r}\n";
        let line = encode(pretty);
        assert_eq!(line, b"{    \"a\": 1,   \"b\": \"x\\ny\" } \n");
        assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
        assert!(!line.contains(&b'\r'));
    }

    #[test]
    fn appends_after_existing_output() {
        let mut out = b"{}\n".to_vec();
        encode_line(b"[]", &mut out);
        assert_eq!(out, b"{}\n[]\n");
    }

    #[test]
    fn empty_message_becomes_a_blank_line() {
        assert_eq!(encode(b""), b"\n");
    }

    #[test]
    fn into_line_writes_what_encode_line_writes_in_the_same_buffer() {
        for json in [&b"{\r\n  \"a\": 1,\n  \"b\": \"x\\ny\"\r}\n"[..], b"{}", b"", b"\n\r\n"] {
            let mut owned = Vec::with_capacity(json.len() + 1);
            owned.extend_from_slice(json);
            let buffer = owned.as_ptr();
            let line = into_line(owned);
            assert_eq!(line, encode(json), "{json:?}");
            // With room for the newline the message is not moved: no copy was made.
            assert_eq!(line.as_ptr(), buffer, "{json:?}");
        }
    }

    #[test]
    fn line_breaks_are_blanked_wherever_they_fall_in_a_large_message() {
        let mut json = vec![b'x'; 100_000];
        for i in [0, 1, 31, 32, 33, 4095, 65_536, 99_999] {
            json[i] = if i % 2 == 0 { b'\n' } else { b'\r' };
        }
        let line = encode(&json);
        assert_eq!(line.len(), json.len() + 1);
        assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
        assert!(!line.contains(&b'\r'));
        assert_eq!(line.iter().filter(|&&b| b == b' ').count(), 8);
        assert_eq!(into_line(json), line);
    }
}
