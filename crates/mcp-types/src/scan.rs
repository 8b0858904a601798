//! One member of a JSON object read from its text, without decoding the rest.
//!
//! A result's `resultType` decides which type the whole result is decoded into; reading it
//! with serde first would parse (and check) every other member once more. This scanner only
//! walks the object's top level — strings skipped to their closing quote, nested objects and
//! arrays skipped by depth — and hands back the text of one member's value. It does not check
//! that what it skips is valid JSON: it is meant for text a decoder has already accepted (a
//! response's `result`, a `RawValue`), and on anything else it returns an error or a member
//! that the decoding which follows rejects, never a panic.

/// Why an object's text could not be scanned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScanError {
    /// The text is not a JSON object.
    NotAnObject,
    /// The text ends inside the object, or holds something no JSON value starts with.
    Malformed,
    /// The member appears twice at the top level.
    Duplicate,
}

/// The text of the value of `name` at the top level of the JSON object `json` (`None` when
/// the object has no such member). A member name written with escapes is compared unescaped.
pub(crate) fn member<'a>(json: &'a str, name: &str) -> Result<Option<&'a str>, ScanError> {
    let bytes = json.as_bytes();
    let mut at = whitespace(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return Err(ScanError::NotAnObject);
    }
    at = whitespace(bytes, at + 1);
    if bytes.get(at) == Some(&b'}') {
        return Ok(None);
    }
    let mut found = None;
    loop {
        if bytes.get(at) != Some(&b'"') {
            return Err(ScanError::Malformed);
        }
        let key_start = at;
        let (key_end, escaped) = string_end(bytes, key_start)?;
        let key = json.get(key_start + 1..key_end - 1).ok_or(ScanError::Malformed)?;
        at = whitespace(bytes, key_end);
        if bytes.get(at) != Some(&b':') {
            return Err(ScanError::Malformed);
        }
        let start = whitespace(bytes, at + 1);
        let end = value_end(bytes, start)?;
        let matches = if escaped {
            serde_json::from_str::<String>(&json[key_start..key_end]).is_ok_and(|k| k == name)
        } else {
            key == name
        };
        if matches {
            if found.is_some() {
                return Err(ScanError::Duplicate);
            }
            found = Some(json.get(start..end).ok_or(ScanError::Malformed)?);
        }
        at = whitespace(bytes, end);
        match bytes.get(at) {
            Some(b',') => at = whitespace(bytes, at + 1),
            Some(b'}') => return Ok(found),
            _ => return Err(ScanError::Malformed),
        }
    }
}

fn whitespace(bytes: &[u8], mut at: usize) -> usize {
    while matches!(bytes.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// The end (past the closing quote) of the string whose opening quote is at `at`, and whether
/// it holds an escape.
fn string_end(bytes: &[u8], at: usize) -> Result<(usize, bool), ScanError> {
    let mut escaped = false;
    let mut i = at + 1;
    loop {
        let rest = bytes.get(i..).ok_or(ScanError::Malformed)?;
        let next = memchr::memchr2(b'"', b'\\', rest).ok_or(ScanError::Malformed)?;
        i += next;
        if bytes[i] == b'"' {
            return Ok((i + 1, escaped));
        }
        escaped = true;
        i += 2;
    }
}

/// The end of the value that starts at `at`.
fn value_end(bytes: &[u8], at: usize) -> Result<usize, ScanError> {
    match bytes.get(at) {
        None => Err(ScanError::Malformed),
        Some(b'"') => string_end(bytes, at).map(|(end, _)| end),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            let mut i = at;
            loop {
                match bytes.get(i) {
                    None => return Err(ScanError::Malformed),
                    Some(b'"') => {
                        i = string_end(bytes, i)?.0;
                        continue;
                    }
                    Some(b'{' | b'[') => depth += 1,
                    Some(b'}' | b']') => {
                        depth -= 1;
                        if depth == 0 {
                            return Ok(i + 1);
                        }
                    }
                    Some(_) => {}
                }
                i += 1;
            }
        }
        Some(b',' | b'}' | b']' | b':') => Err(ScanError::Malformed),
        Some(_) => {
            let mut i = at;
            while !matches!(bytes.get(i), None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')) {
                i += 1;
            }
            Ok(i)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{ScanError, member};

    #[test]
    fn a_top_level_member_is_found_and_nested_or_quoted_ones_are_not() {
        let json = r#"{"content":[{"type":"text","text":"\"resultType\":\"task\""}],
            "structuredContent":{"resultType":"input_required","list":[1,{"x":"}"}]},
            "isError" : false , "resultType" : "complete" }"#;
        assert_eq!(member(json, "resultType"), Ok(Some(r#""complete""#)));
        assert_eq!(member(json, "isError"), Ok(Some("false")));
        assert_eq!(
            member(json, "content"),
            Ok(Some(r#"[{"type":"text","text":"\"resultType\":\"task\""}]"#))
        );
        assert_eq!(member(r#"{"content":[],"nested":{"resultType":"task"}}"#, "resultType"), Ok(None));
        assert_eq!(member("{}", "resultType"), Ok(None));
        assert_eq!(member(" { } ", "resultType"), Ok(None));
    }

    #[test]
    fn an_escaped_name_is_compared_unescaped() {
        assert_eq!(member(r#"{"result\u0054ype":"task"}"#, "resultType"), Ok(Some(r#""task""#)));
        assert_eq!(member(r#"{"a\"b":1,"resultType":2}"#, "a\"b"), Ok(Some("1")));
        assert_eq!(member(r#"{"a\\":1,"resultType":2}"#, "resultType"), Ok(Some("2")));
    }

    #[test]
    fn duplicates_and_what_is_not_an_object_are_errors() {
        assert_eq!(member(r#"{"resultType":"a","resultType":"b"}"#, "resultType"), Err(ScanError::Duplicate));
        assert_eq!(member(r#"[{"resultType":"a"}]"#, "resultType"), Err(ScanError::NotAnObject));
        assert_eq!(member("null", "resultType"), Err(ScanError::NotAnObject));
        for cut in [
            r#"{"resultType":"a""#,
            r#"{"resultType":"#,
            r#"{"a":[1,2"#,
            r#"{"a":"\"#,
            "{",
            r#"{"a" 1}"#,
            r#"{"a":}"#,
            r#"{,}"#,
        ] {
            assert_eq!(member(cut, "resultType"), Err(ScanError::Malformed), "{cut}");
        }
    }

    #[test]
    fn every_value_agrees_with_serde_json() {
        let values = [
            r#"{"resultType":"complete","content":[{"type":"text","text":"é \\ \" }]"}]}"#,
            r#"{"n":-1.5e3,"t":true,"z":null,"o":{"a":[[],{}]},"resultType":"input_required"}"#,
            "{\n\t\"resultType\"\r\n:\n\"task\"\n}",
            r#"{"resultType":7}"#,
            r#"{"resultType":null,"x":"y"}"#,
        ];
        for json in values {
            let parsed: serde_json::Map<String, serde_json::Value> = serde_json::from_str(json).unwrap();
            for (name, value) in &parsed {
                let text = member(json, name).unwrap().unwrap();
                assert_eq!(
                    &serde_json::from_str::<serde_json::Value>(text).unwrap(),
                    value,
                    "{name} in {json}"
                );
            }
        }
    }
}
