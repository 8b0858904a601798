//! Property tests of `ResultKind::of`, which reads a result's `resultType` by walking its JSON
//! text instead of decoding it:
//!
//! * for any JSON object, written compactly or pretty, it says what the decoding rule says of the
//!   object's own `resultType` member (absent or `"complete"`, `"input_required"`, `"task"`, else
//!   an error), whatever the other members hold — the name `resultType` in nested objects, in
//!   strings, escaped quotes and backslashes, non-ASCII text;
//! * for any JSON value that is not an object, it is an error;
//! * it never panics, on any text at all, including text cut anywhere.

use mcp_types::ResultKind;
use proptest::prelude::*;
use serde_json::{Map, Value};

/// Strings that stress the walk: quotes, backslashes, braces, the member's own name.
fn text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        prop::sample::select(vec![
            "\"",
            "\\",
            "\\\"",
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            "resultType",
            "\"resultType\":",
            "task",
            "input_required",
            "complete",
            "é",
            "世界",
            "\u{0}",
            "\n",
            " ",
        ])
        .prop_map(str::to_owned),
        "[a-z]{0,6}",
        any::<String>(),
    ];
    prop::collection::vec(piece, 0..6).prop_map(|pieces| pieces.concat())
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec!["resultType", "content", "_meta", "isError", "x"]).prop_map(str::to_owned),
        1 => text(),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
        prop::sample::select(vec!["complete", "input_required", "task", "later", ""]).prop_map(Value::from),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..5)
                .prop_map(|members| Value::Object(Map::from_iter(members))),
        ]
    })
}

fn not_an_object() -> impl Strategy<Value = Value> {
    prop_oneof![
        value().prop_map(|v| Value::Array(vec![v])),
        text().prop_map(Value::String),
        any::<i64>().prop_map(Value::from),
        any::<bool>().prop_map(Value::Bool),
        Just(Value::Null),
    ]
}

fn object() -> impl Strategy<Value = Map<String, Value>> {
    prop::collection::vec((key(), value()), 0..6).prop_map(Map::from_iter)
}

/// The rule `MrtrResult` decodes by, read off the decoded object.
fn expected(object: &Map<String, Value>) -> Result<ResultKind, ()> {
    match object.get("resultType") {
        None => Ok(ResultKind::Complete),
        Some(Value::String(kind)) => match kind.as_str() {
            "complete" => Ok(ResultKind::Complete),
            "input_required" => Ok(ResultKind::InputRequired),
            "task" => Ok(ResultKind::Task),
            _ => Err(()),
        },
        Some(_) => Err(()),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn an_object_is_read_as_its_decoding_reads_it(object in object()) {
        let want = expected(&object);
        let compact = serde_json::to_string(&object).unwrap();
        let pretty = serde_json::to_string_pretty(&object).unwrap();
        prop_assert_eq!(ResultKind::of(&compact).map_err(|_| ()), want, "{}", compact);
        prop_assert_eq!(ResultKind::of(&pretty).map_err(|_| ()), want, "{}", pretty);
    }

    #[test]
    fn what_is_not_an_object_is_an_error(value in not_an_object()) {
        let text = serde_json::to_string(&value).unwrap();
        prop_assert!(ResultKind::of(&text).is_err(), "{}", text);
    }

    #[test]
    fn any_text_and_any_cut_of_an_object_is_answered_without_a_panic(
        object in object(),
        cut in any::<prop::sample::Index>(),
        noise in text(),
    ) {
        let compact = serde_json::to_string(&object).unwrap();
        let at = cut.index(compact.len() + 1);
        if let Some(head) = compact.get(..at) {
            let _ = ResultKind::of(head);
        }
        let _ = ResultKind::of(&noise);
        let _ = ResultKind::of(&format!("{{{noise}"));
    }
}
