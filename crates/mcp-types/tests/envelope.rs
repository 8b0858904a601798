//! The envelope decoder against a table of malformed and well-formed inputs: each input maps
//! to exactly one outcome (message kind, or error kind + code + recovered id).

use mcp_types::{
    DecodeErrorKind as K, DecodeOptions, IdError, Incoming, Message, RequestId, ResponseId, decode,
    decode_message,
};

const STRICT: DecodeOptions = DecodeOptions::new();
const SERVER: DecodeOptions = DecodeOptions::new().with_accept_responses(false);
const BATCH: DecodeOptions = DecodeOptions::new().with_allow_batch(true);

fn err(input: &str, options: DecodeOptions) -> mcp_types::DecodeError {
    match decode(input.as_bytes(), options) {
        Err(e) => e,
        Ok(m) => panic!("{input:?} decoded to {m:?}, expected an error"),
    }
}

#[test]
fn malformed_envelopes_get_their_exact_error() {
    let n = |i: i64| Some(RequestId::Number(i));
    let s = |v: &str| Some(RequestId::String(v.into()));
    #[rustfmt::skip]
    let table: Vec<(&str, DecodeOptions, K, i64, Option<RequestId>)> = vec![
        // not JSON → -32700, no id
        ("", STRICT, K::NotJson, -32700, None),
        ("{", STRICT, K::NotJson, -32700, None),
        ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"", STRICT, K::NotJson, -32700, None),
        ("not json", STRICT, K::NotJson, -32700, None),
        ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"} trailing", STRICT, K::NotJson, -32700, None),
        ("\u{feff}{\"jsonrpc\":\"2.0\",\"method\":\"x\"}", STRICT, K::ByteOrderMark, -32700, None),
        // a duplicate with broken JSON after it is still a parse error, not -32600
        ("{\"id\":1,\"id\":2,\"method\":", STRICT, K::NotJson, -32700, None),
        // JSON but not an object → -32600
        ("42", STRICT, K::NotAnObject, -32600, None),
        ("\"tools/list\"", STRICT, K::NotAnObject, -32600, None),
        ("null", STRICT, K::NotAnObject, -32600, None),
        ("true", STRICT, K::NotAnObject, -32600, None),
        // jsonrpc member
        ("{\"id\":1,\"method\":\"x\"}", STRICT, K::BadVersion, -32600, n(1)),
        ("{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"x\"}", STRICT, K::BadVersion, -32600, n(1)),
        ("{\"jsonrpc\":2.0,\"id\":\"a\",\"method\":\"x\"}", STRICT, K::BadVersion, -32600, s("a")),
        // ids
        ("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"x\"}", STRICT, K::BadId(IdError::Null), -32600, None),
        ("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"x\"}", STRICT, K::BadId(IdError::NotInteger), -32600, None),
        ("{\"jsonrpc\":\"2.0\",\"id\":1e3,\"method\":\"x\"}", STRICT, K::BadId(IdError::NotInteger), -32600, None),
        ("{\"jsonrpc\":\"2.0\",\"id\":9007199254740992,\"method\":\"x\"}", STRICT, K::BadId(IdError::OutOfRange), -32600, None),
        ("{\"jsonrpc\":\"2.0\",\"id\":-9007199254740992,\"method\":\"x\"}", STRICT, K::BadId(IdError::OutOfRange), -32600, None),
        ("{\"jsonrpc\":\"2.0\",\"id\":18446744073709551615,\"method\":\"x\"}", STRICT, K::BadId(IdError::OutOfRange), -32600, None),
        ("{\"jsonrpc\":\"2.0\",\"id\":[1],\"method\":\"x\"}", STRICT, K::BadId(IdError::WrongType), -32600, None),
        ("{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"x\"}", STRICT, K::BadId(IdError::WrongType), -32600, None),
        ("{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"x\"}", STRICT, K::BadId(IdError::WrongType), -32600, None),
        // duplicate members
        ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"method\":\"tools/call\"}", STRICT, K::DuplicateMember("method"), -32600, n(1)),
        ("{\"jsonrpc\":\"2.0\",\"id\":1,\"id\":2,\"method\":\"x\"}", STRICT, K::DuplicateMember("id"), -32600, None),
        ("{\"jsonrpc\":\"2.0\",\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"x\"}", STRICT, K::DuplicateMember("jsonrpc"), -32600, n(3)),
        ("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"x\",\"params\":{},\"params\":{}}", STRICT, K::DuplicateMember("params"), -32600, n(4)),
        // method and params
        ("{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":7}", STRICT, K::BadMethod, -32600, n(5)),
        ("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"x\",\"params\":[1,2]}", STRICT, K::BadParams, -32600, n(6)),
        ("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"x\",\"params\":\"p\"}", STRICT, K::BadParams, -32600, n(6)),
        ("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"x\",\"result\":{}}", STRICT, K::NotAMessage, -32600, n(7)),
        // response shapes
        ("{\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{},\"error\":{\"code\":1,\"message\":\"m\"}}", STRICT, K::NotAMessage, -32600, n(8)),
        ("{\"jsonrpc\":\"2.0\",\"result\":{}}", STRICT, K::ResponseWithoutId, -32600, None),
        ("{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":{\"code\":\"x\",\"message\":\"m\"}}", STRICT, K::BadErrorObject, -32600, n(9)),
        ("{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":{\"code\":1.5,\"message\":\"m\"}}", STRICT, K::BadErrorObject, -32600, n(9)),
        ("{\"jsonrpc\":\"2.0\",\"id\":9,\"error\":{\"message\":\"m\"}}", STRICT, K::BadErrorObject, -32600, n(9)),
        ("{\"jsonrpc\":\"2.0\",\"id\":10}", STRICT, K::NotAMessage, -32600, n(10)),
        ("{\"jsonrpc\":\"2.0\"}", STRICT, K::NotAMessage, -32600, None),
        ("{}", STRICT, K::BadVersion, -32600, None),
        // a response where a request was due
        ("{\"jsonrpc\":\"2.0\",\"id\":11,\"result\":{}}", SERVER, K::UnexpectedResponse, -32600, n(11)),
        ("{\"jsonrpc\":\"2.0\",\"id\":\"r\",\"error\":{\"code\":-1,\"message\":\"m\"}}", SERVER, K::UnexpectedResponse, -32600, s("r")),
        // batches
        ("[{\"jsonrpc\":\"2.0\",\"method\":\"x\"}]", STRICT, K::BatchNotAllowed, -32600, None),
        ("[]", BATCH, K::EmptyBatch, -32600, None),
        ("[1,", BATCH, K::NotJson, -32700, None),
    ];
    for (input, options, kind, code, id) in table {
        let e = err(input, options);
        assert_eq!(e.kind, kind, "kind for {input:?}");
        assert_eq!(e.code(), code, "code for {input:?}");
        assert_eq!(e.id, id, "id for {input:?}");
        assert_eq!(e.to_error_object().code, code);
    }
}

#[test]
fn overlong_string_id_is_rejected() {
    let id = "a".repeat(1025);
    let e = err(&format!("{{\"jsonrpc\":\"2.0\",\"id\":\"{id}\",\"method\":\"x\"}}"), STRICT);
    assert_eq!(e.kind, K::BadId(IdError::TooLong));
    let ok = "a".repeat(1024);
    assert!(
        decode(format!("{{\"jsonrpc\":\"2.0\",\"id\":\"{ok}\",\"method\":\"x\"}}").as_bytes(), STRICT)
            .is_ok()
    );
}

#[test]
fn deep_nesting_never_overflows_and_is_refused_when_read() {
    // The envelope scan keeps params as raw text (serde_json skips it iteratively), so a
    // 10,000-deep array is carried, not recursed into; reading it into a tree hits
    // serde_json's recursion limit (128) and is refused as invalid params.
    let deep = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{{\"a\":{}{}}}}}",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    let Message::Request(r) = decode_message(deep.as_bytes(), STRICT).unwrap() else { panic!() };
    let e = r.params_as::<mcp_types::JsonObject>().unwrap_err();
    assert_eq!(e.code, -32602);
    assert!(e.message.contains("recursion limit"), "{}", e.message);
    // Deep nesting in an ignored member is skipped without recursion too.
    let deep = format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"x\":{}{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    assert!(decode_message(deep.as_bytes(), STRICT).is_ok());
    // Unbalanced deep input is still a parse error.
    assert_eq!(err(&"[".repeat(100_000), BATCH).kind, K::NotJson);
}

#[test]
fn unknown_methods_and_members_are_data() {
    let m = decode_message(br#"{"jsonrpc":"2.0","id":"x-1","method":"vendor/frobnicate","params":{"a":[1,{"b":null}]},"extra":true}"#, STRICT).unwrap();
    let Message::Request(r) = m else { panic!("not a request") };
    assert_eq!(r.method, "vendor/frobnicate");
    assert_eq!(r.id, RequestId::String("x-1".into()));
    assert_eq!(r.params.unwrap().get(), r#"{"a":[1,{"b":null}]}"#);
}

#[test]
fn ids_are_echoed_exactly() {
    for (input, id) in [
        (r#"{"jsonrpc":"2.0","id":0,"method":"ping"}"#, RequestId::Number(0)),
        (r#"{"jsonrpc":"2.0","id":-7,"method":"ping"}"#, RequestId::Number(-7)),
        (r#"{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}"#, RequestId::Number(9007199254740991)),
        (r#"{"jsonrpc":"2.0","id":"1","method":"ping"}"#, RequestId::String("1".into())),
        (r#"{"jsonrpc":"2.0","id":"","method":"ping"}"#, RequestId::String("".into())),
    ] {
        let Message::Request(r) = decode_message(input.as_bytes(), STRICT).unwrap() else { panic!() };
        assert_eq!(r.id, id);
        let response = mcp_types::Response::ok(r.id.clone(), &serde_json::json!({})).unwrap();
        let text = String::from_utf8(Message::Response(response).to_vec()).unwrap();
        let echoed: serde_json::Value = serde_json::from_str(&text).unwrap();
        let sent: serde_json::Value = serde_json::from_str(input).unwrap();
        assert_eq!(echoed["id"], sent["id"], "id of {input}");
    }
}

#[test]
fn notifications_responses_and_null_params() {
    let m =
        decode_message(br#"{"jsonrpc":"2.0","method":"notifications/initialized","params":null}"#, STRICT)
            .unwrap();
    let Message::Notification(n) = m else { panic!() };
    assert!(n.params.is_none());

    let m = decode_message(
        br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
        STRICT,
    )
    .unwrap();
    let Message::Response(r) = m else { panic!() };
    assert_eq!(r.id, ResponseId::Null);
    assert_eq!(r.result.unwrap_err().code, -32700);

    let m =
        decode_message(br#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"m","data":{"k":1}}}"#, STRICT)
            .unwrap();
    let Message::Response(r) = m else { panic!() };
    assert_eq!(r.id, ResponseId::Absent);
}

#[test]
fn error_responses_for_unreadable_ids_follow_the_era() {
    let e = err(r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#, STRICT);
    let modern: serde_json::Value =
        serde_json::from_slice(&Message::Response(e.to_response(false)).to_vec()).unwrap();
    assert!(modern.get("id").is_none(), "{modern}");
    let legacy: serde_json::Value =
        serde_json::from_slice(&Message::Response(e.to_response(true)).to_vec()).unwrap();
    assert_eq!(legacy["id"], serde_json::Value::Null);
    assert_eq!(legacy["error"]["code"], -32600);
}

#[test]
fn batches_where_allowed_decode_element_by_element() {
    let input = br#"[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"1.0","id":2,"method":"b"},{"jsonrpc":"2.0","method":"c"}, 5]"#;
    let Incoming::Batch(items) = decode(input, BATCH).unwrap() else { panic!() };
    assert_eq!(items.len(), 4);
    assert!(matches!(&items[0], Ok(Message::Request(r)) if r.method == "a"));
    assert!(matches!(&items[1], Err(e) if e.kind == K::BadVersion && e.id == Some(RequestId::Number(2))));
    assert!(matches!(&items[2], Ok(Message::Notification(n)) if n.method == "c"));
    assert!(matches!(&items[3], Err(e) if e.kind == K::NotAnObject));
}

#[test]
fn typed_params_reject_duplicates_inside_params() {
    let m = decode_message(br#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/protocolVersion":"2025-11-25"}}}"#, STRICT).unwrap();
    let Message::Request(r) = m else { panic!() };
    #[derive(serde::Deserialize)]
    struct P {
        #[serde(rename = "_meta")]
        _meta: mcp_types::RequestMeta,
    }
    let e = r.params_as::<P>().err().expect("duplicate _meta key must be rejected");
    assert_eq!(e.code, -32602);
    assert!(e.message.contains("duplicate"), "{}", e.message);
}
