//! Fuzzes the `Mcp-Name` / `Mcp-Param-*` values (plain visible ASCII, else `=?base64?…?=`),
//! whose rules live in `mcp_types::headers`: any string encoded (`encode_value`, what the
//! client sends) is a valid header value the decoder (`decode_value`, after the server's
//! `to_str` and trim) turns back into the same string; the decoder never panics on any header
//! bytes, takes a value not in the sentinel form as is, and what it decodes re-encodes to a
//! value that decodes the same (the server refuses what it cannot decode with `-32020`); and
//! the `Mcp-Param-*` header mirrored for a call, top-level or nested, passes the server's check
//! (`mcp_http::codec::check_parameters`).
#![no_main]

use http::{HeaderMap, HeaderName, HeaderValue};
use libfuzzer_sys::fuzz_target;
use mcp_http::codec::{annotated_parameters, check_parameters};
use mcp_types::headers::{decode_value, encode_value, header_values, param_headers};
use serde_json::{Value, json};

fn is_sentinel(raw: &str) -> bool {
    raw.strip_prefix("=?base64?").and_then(|r| r.strip_suffix("?=")).is_some()
}

fuzz_target!(|input: (&str, &[u8], &str, f64)| {
    let (value, header, name, number) = input;

    let encoded = encode_value(value);
    let sent = HeaderValue::from_str(&encoded).expect("a valid header value");
    let seen = sent.to_str().expect("visible ASCII").trim();
    assert_eq!(decode_value(seen), Ok(value.to_owned()));

    let mut wrapped = b"=?base64?".to_vec();
    wrapped.extend_from_slice(header);
    wrapped.extend_from_slice(b"?=");
    for bytes in [header, &wrapped[..]] {
        let Some(raw) =
            HeaderValue::from_bytes(bytes).ok().and_then(|v| v.to_str().ok().map(|s| s.trim().to_owned()))
        else {
            continue;
        };
        match decode_value(&raw) {
            Ok(decoded) => {
                if !is_sentinel(&raw) {
                    assert_eq!(decoded, raw, "a plain value is taken as is");
                }
                assert_eq!(decode_value(&encode_value(&decoded)), Ok(decoded));
            }
            Err(_) => {
                assert!(is_sentinel(&raw), "{raw:?}");
                assert_eq!(mcp_http::codec::decode_value(&raw).map_err(|e| e.code), Err(-32020), "{raw:?}");
            }
        }
    }

    // The client's and the server's views of one mirrored argument: a string, and an integer
    // (written as a float, so also past 2^53).
    let name: String =
        name.chars().filter(|c| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(*c)).collect();
    if name.is_empty() {
        return;
    }
    agree(&name, "string", Value::from(value), false);
    agree(&name, "string", Value::from(value), true);
    if number.is_finite() {
        agree(&name, "integer", Value::from(number.trunc()), false);
        agree(&name, "integer", Value::from(number.trunc()), true);
    }
});

/// The `Mcp-Param-{name}` header mirrored for `argument` (at `p`, or `p.q` when `nested`)
/// passes the server's check.
fn agree(name: &str, kind: &str, argument: Value, nested: bool) {
    let mut property = json!({"type": kind, "x-mcp-header": name});
    let mut argument = argument;
    if nested {
        property = json!({"type": "object", "properties": {"q": property}});
        argument = json!({ "q": argument });
    }
    let schema = json!({"type": "object", "properties": {"p": property}});
    let schema = schema.as_object().expect("an object");
    let arguments = json!({ "p": argument });
    let mirrored = param_headers(schema).expect("a valid annotation");
    let mut headers = HeaderMap::new();
    for (name, value) in header_values(&mirrored, arguments.as_object()) {
        let header = HeaderName::from_bytes(format!("mcp-param-{name}").as_bytes()).expect("a token");
        headers.insert(header, HeaderValue::from_str(&value).expect("a valid header value"));
    }
    assert_eq!(headers.len(), 1, "{argument:?} not mirrored");
    let annotations = annotated_parameters(schema);
    let checked = check_parameters(&headers, &annotations, arguments.as_object());
    assert!(checked.is_ok(), "{argument:?}: {:?}", checked.map_err(|e| e.message));
}
