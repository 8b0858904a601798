//! Property tests of the `Mcp-Name` / `Mcp-Param-*` value encoding (plain visible ASCII, else
//! the `=?base64?…?=` sentinel): the stable-toolchain counterpart of
//! `fuzz/fuzz_targets/param_header.rs`.
//!
//! * Whatever string is encoded (`mcp_types::headers::encode_value`, what the client sends) is
//!   a valid header value that the decoder (`mcp_types::headers::decode_value`, after the
//!   `to_str` and trim the server's header reader does) turns back into the same string.
//! * The decoder never panics on any header value; a value not in the sentinel form is
//!   taken as is; a value it decodes re-encodes to itself or to the plain form.
//! * The client's and the server's views agree: the `Mcp-Param-*` header the client mirrors
//!   for a string, boolean or integer argument (integers past 2^53 and written as floats too),
//!   at the top level or nested in object properties, passes the server's check
//!   (`mcp_http::codec::check_parameters`) against the same arguments, and the server refuses
//!   the call without it.

use http::{HeaderMap, HeaderName, HeaderValue};
use mcp_http::codec::{annotated_parameters, check_parameters};
use mcp_types::headers::{decode_value, encode_value, header_values, param_headers};
use proptest::prelude::*;
use serde_json::{Value, json};

const PREFIX: &str = "=?base64?";
const SUFFIX: &str = "?=";

/// Strings near the edges of the encoding: the sentinel and its parts, spaces and tabs at the
/// ends, controls, non-ASCII.
fn value() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        prop::sample::select(vec![
            PREFIX, SUFFIX, "=?", "?", "=", " ", "\t", "\r\n", "\0", "\u{7f}", "é", "世界", "a", "Zm9v",
            "==", "\u{a0}", "\u{2028}",
        ])
        .prop_map(str::to_owned),
        "[ -~]{0,8}",
        any::<String>(),
    ];
    prop::collection::vec(piece, 0..8).prop_map(|pieces| pieces.concat())
}

fn is_sentinel(raw: &str) -> bool {
    raw.strip_prefix(PREFIX).and_then(|r| r.strip_suffix(SUFFIX)).is_some()
}

/// What the server's header reader does with a value before decoding it.
fn server_reads(value: &HeaderValue) -> Option<&str> {
    value.to_str().ok().map(str::trim)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn encoded_values_decode_to_themselves(value in value()) {
        let encoded = encode_value(&value);
        prop_assert!(encoded.bytes().all(|b| (0x20..=0x7e).contains(&b)), "{encoded:?}");
        prop_assert!(encoded == value || is_sentinel(&encoded), "{encoded:?}");
        let header = HeaderValue::from_str(&encoded).expect("a valid header value");
        let seen = server_reads(&header).expect("visible ASCII");
        prop_assert_eq!(decode_value(seen), Ok(value));
    }

    #[test]
    fn the_server_decoder_never_panics_and_is_consistent(raw in prop_oneof![
        value(),
        "[A-Za-z0-9+/=]{0,16}".prop_map(|b| format!("{PREFIX}{b}{SUFFIX}")),
    ]) {
        match decode_value(&raw) {
            Ok(decoded) => {
                let again = encode_value(&decoded);
                if is_sentinel(&raw) {
                    prop_assert!(again == raw || again == decoded, "{raw:?} -> {decoded:?} -> {again:?}");
                } else {
                    prop_assert_eq!(&decoded, &raw, "a plain value is taken as is");
                }
                prop_assert_eq!(decode_value(&again), Ok(decoded));
            }
            Err(_) => {
                prop_assert!(is_sentinel(&raw), "only the sentinel form can fail: {raw:?}");
                let refused = mcp_http::codec::decode_value(&raw).unwrap_err();
                prop_assert_eq!(refused.code, -32020, "the server refuses it as a header mismatch");
            }
        }
    }

    #[test]
    fn the_server_decoder_takes_any_header_bytes(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        let mut raw = PREFIX.as_bytes().to_vec();
        raw.extend_from_slice(&bytes);
        raw.extend_from_slice(SUFFIX.as_bytes());
        for candidate in [&bytes[..], &raw[..]] {
            if let Some(seen) = HeaderValue::from_bytes(candidate).ok().as_ref().and_then(server_reads) {
                let _ = decode_value(seen);
            }
        }
    }

    #[test]
    fn the_server_accepts_what_the_client_mirrors(
        name in "[A-Za-z0-9!#$%&'*+.^_`|~-]{1,12}",
        argument in prop_oneof![
            value().prop_map(Value::from),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            // Integers written as floats (`1e20`, `3.0`) are integers to JSON Schema too.
            any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| Value::from(f.trunc())),
        ],
        depth in 0usize..3,
    ) {
        let kind = match &argument {
            Value::String(_) => "string",
            Value::Bool(_) => "boolean",
            _ => "integer",
        };
        // The annotated property `p`, under `depth` levels of object properties.
        let mut schema = json!({"type": kind, "x-mcp-header": name});
        let mut arguments = argument;
        for level in (0..depth).rev() {
            let key = format!("o{level}");
            schema = json!({"type": "object", "properties": {key.clone(): schema}});
            arguments = json!({ key: arguments });
        }
        let schema = json!({"type": "object", "properties": {"p": schema}});
        let arguments = json!({"p": arguments});
        let schema = schema.as_object().unwrap();
        let arguments = arguments.as_object();

        let mirrored = param_headers(schema).expect("a valid annotation");
        let mut headers = HeaderMap::new();
        for (name, value) in header_values(&mirrored, arguments) {
            // As the client's transport builds them.
            let header = HeaderName::from_bytes(format!("mcp-param-{name}").as_bytes()).expect("a token");
            headers.insert(header, HeaderValue::from_str(&value).expect("a valid header value"));
        }
        prop_assert_eq!(headers.len(), 1);

        let annotations = annotated_parameters(schema);
        let checked = check_parameters(&headers, &annotations, arguments);
        prop_assert!(checked.is_ok(), "{:?} for {headers:?}", checked.map_err(|e| e.message));
        let refused = check_parameters(&HeaderMap::new(), &annotations, arguments).map_err(|e| e.code);
        prop_assert_eq!(refused, Err(-32020), "the header is required");
    }
}
