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
    out.extend(json.iter().map(|&b| match b {
        b'\n' | b'\r' => b' ',
        other => other,
    }));
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::encode_line;

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
}
