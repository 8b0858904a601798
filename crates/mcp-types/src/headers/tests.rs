use serde_json::{Value, json};

use super::table::{DECODINGS, INVALID, MIRRORS, NOT_ANNOTATIONS, REFUSALS};
use super::*;
use crate::json::JsonObject;

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn object(text: &str) -> JsonObject {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// `verify` over every annotation, with the headers given by declared name (looked up
/// ignoring case, as HTTP does).
fn verify_all(schema: &str, arguments: &str, headers: &[(&str, &str)]) -> Result<(), String> {
    let params = param_headers(&object(schema)).map_err(|e| e.0)?;
    let arguments = parse(arguments);
    for param in &params {
        let raw = headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(&param.name)).map(|(_, v)| *v);
        param.verify(raw, arguments.as_object()).map_err(|e| e.describe(param))?;
    }
    Ok(())
}

#[test]
fn the_table_mirrors_and_verifies() {
    for row in MIRRORS {
        let params = param_headers(&object(row.schema)).unwrap_or_else(|e| panic!("{}: {e}", row.what));
        let arguments = parse(row.arguments);
        let mut sent = header_values(&params, arguments.as_object());
        sent.sort();
        let expected: Vec<(String, String)> =
            row.headers.iter().map(|(n, v)| ((*n).to_owned(), (*v).to_owned())).collect();
        assert_eq!(sent, expected, "{}", row.what);
        assert_eq!(verify_all(row.schema, row.arguments, row.headers), Ok(()), "{}", row.what);
    }
}

#[test]
fn the_table_refusals_are_refused() {
    for row in REFUSALS {
        assert!(verify_all(row.schema, row.arguments, row.headers).is_err(), "{}", row.what);
    }
}

#[test]
fn the_table_decodes() {
    for row in DECODINGS {
        assert_eq!(decode_value(row.raw).ok().as_deref(), row.decoded, "{}", row.raw);
        if let Some(decoded) = row.decoded {
            assert_eq!(decode_value(&encode_value(decoded)).as_deref(), Ok(decoded), "{}", row.raw);
        }
    }
    assert_eq!(decode_value("=?base64?/w==?="), Err(InvalidSentinel::Utf8));
    assert_eq!(decode_value("=?base64?Zm9=?="), Err(InvalidSentinel::Base64));
}

#[test]
fn invalid_annotations_invalidate_the_tool() {
    for (what, schema) in INVALID {
        assert!(param_headers(&object(schema)).is_err(), "{what}: {schema}");
    }
    for (what, schema) in NOT_ANNOTATIONS {
        assert_eq!(param_headers(&object(schema)), Ok(Vec::new()), "{what}");
    }
}

#[test]
fn annotations_carry_their_path_and_type() {
    let found = json!({"type": "object", "properties": {
        "flag": {"type": ["null", "boolean"], "x-mcp-header": "Flag"},
        "outer": {"type": "object", "properties": {
            "inner": {"type": "integer", "x-mcp-header": "Inner"}}}}});
    let found = param_headers(found.as_object().unwrap()).unwrap();
    assert_eq!(
        found,
        vec![
            ParamHeader { name: "Flag".into(), path: vec!["flag".into()], kind: Primitive::Boolean },
            ParamHeader {
                name: "Inner".into(),
                path: vec!["outer".into(), "inner".into()],
                kind: Primitive::Integer
            },
        ]
    );
    let why = param_headers(&object(
        r#"{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}"#,
    ))
    .unwrap_err();
    assert!(why.0.contains("not statically reachable"), "{why}");
}

#[test]
fn numbers_compare_by_value_but_exactly_past_the_safe_integers() {
    assert!(header_matches("42", &json!(42)));
    assert!(header_matches("42.0", &json!(42)), "a float spelling of the same integer");
    assert!(header_matches("1e+20", &json!(1e20)));
    assert!(header_matches("100000000000000000000", &json!(1e20)));
    assert!(header_matches("18446744073709551615", &json!(u64::MAX)));
    assert!(!header_matches("18446744073709551614", &json!(u64::MAX)));
    assert!(!header_matches("1.8446744073709552e19", &json!(u64::MAX)), "inexact past 2^53");
    assert!(!header_matches("inf", &json!(1)));
    assert!(!header_matches("NaN", &json!(0)));
    assert!(!header_matches("42", &json!("4")));
    assert!(!header_matches("1", &json!(true)));
    assert!(!header_matches("null", &json!(null)));
}

#[test]
fn mismatches_name_the_header_and_the_path() {
    let param = ParamHeader {
        name: "Inner".into(),
        path: vec!["outer".into(), "inner".into()],
        kind: Primitive::String,
    };
    let args = json!({"outer": {"inner": "x"}});
    let e = param.verify(Some("y"), args.as_object()).unwrap_err();
    assert_eq!(e, ParamMismatch::Different { header: "y".into(), body: "\"x\"".into() });
    assert!(e.describe(&param).contains("outer.inner"), "{}", e.describe(&param));
    assert_eq!(param.verify(None, args.as_object()), Err(ParamMismatch::Missing));
    assert_eq!(param.verify(Some("x"), None), Err(ParamMismatch::Unexpected));
    assert_eq!(
        param.verify(Some("=?base64?eA=?="), args.as_object()),
        Err(ParamMismatch::Undecodable(InvalidSentinel::Base64))
    );
    assert_eq!(param.verify(Some("=?base64?eA==?="), args.as_object()), Ok(()));
}
