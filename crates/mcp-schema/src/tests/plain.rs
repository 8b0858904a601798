//! Plain schemas: which schemas the crate's own validator takes, that it agrees with
//! `jsonschema` on every instance, and that everything else still goes through `jsonschema`'s
//! meta-schema check.

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use crate::{Schema, SchemaError, full_validator};

const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// What `schemars` derives for a struct of a string, an optional list, a `u32` and an enum.
fn derived_schema() -> Value {
    json!({
        "$schema": DIALECT,
        "title": "SearchArgs",
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to look for.", "minLength": 1},
            "tags": {"type": ["array", "null"], "items": {"type": "string"}, "default": null},
            "limit": {"type": "integer", "format": "uint32", "minimum": 0, "maximum": 100},
            "order": {"oneOf": [
                {"type": "string", "const": "newest", "description": "Newest first."},
                {"type": "string", "enum": ["oldest"]}
            ]},
            "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1.5}
        },
        "required": ["query", "limit"],
        "additionalProperties": false,
        "x-mcp-header": {"query": "Query"}
    })
}

#[test]
fn derived_schemas_are_plain_and_checked_exactly() {
    let schema = Schema::compile(&derived_schema()).expect("compiles");
    assert!(schema.is_plain());
    assert!(schema.is_valid(&json!({"query": "x", "limit": 5, "order": "newest", "ratio": 0.5})));
    assert!(schema.is_valid(&json!({"query": "é", "limit": 100.0, "tags": null})));
    for bad in [
        json!({"limit": 5}),
        json!({"query": "", "limit": 5}),
        json!({"query": "x", "limit": 5.5}),
        json!({"query": "x", "limit": 101}),
        json!({"query": "x", "limit": -1}),
        json!({"query": "x", "limit": 1, "tags": [1]}),
        json!({"query": "x", "limit": 1, "order": "sideways"}),
        json!({"query": "x", "limit": 1, "ratio": 1.5}),
        json!({"query": "x", "limit": 1, "ratio": 0}),
        json!({"query": "x", "limit": 1, "other": true}),
        json!("not an object"),
    ] {
        assert!(!schema.is_valid(&bad), "{bad}");
    }
}

#[test]
fn a_plain_schema_reports_the_violation_jsonschema_reports() {
    let source = derived_schema();
    let schema = Schema::compile(&source).expect("compiles");
    let full = full_validator(&source).expect("compiles");
    for bad in [
        json!({"query": "x", "limit": 1, "tags": ["a", 2]}),
        json!({"limit": 5}),
        json!({"query": "x", "limit": 1, "other": true}),
    ] {
        let violation = schema.validate(&bad).expect_err("invalid");
        let expected = full.validate(&bad).expect_err("invalid");
        assert_eq!(violation.message, expected.to_string(), "{bad}");
        assert_eq!(violation.path, expected.instance_path().to_string(), "{bad}");
    }
    let violation = schema.validate(&json!({"query": "x", "limit": 1, "tags": ["a", 2]})).expect_err("");
    assert_eq!(violation.path, "/tags/1");
}

#[test]
fn invalid_schemas_are_not_plain_and_are_refused() {
    for invalid in [
        json!({"type": "strin"}),
        json!({"type": []}),
        json!({"type": ["string", "string"]}),
        json!({"type": 5}),
        json!({"minLength": -1}),
        json!({"maxItems": "3"}),
        json!({"minimum": "0"}),
        json!({"required": "a"}),
        json!({"required": ["a", "a"]}),
        json!({"required": [1]}),
        json!({"properties": {"a": 5}}),
        json!({"properties": []}),
        json!({"additionalProperties": "no"}),
        json!({"items": [{"type": "string"}]}),
        json!({"allOf": []}),
        json!({"anyOf": {}}),
        json!({"not": 1}),
        json!({"enum": "a"}),
        json!({"title": 1}),
        json!({"deprecated": "yes"}),
        json!({"examples": {}}),
        json!({"uniqueItems": 1}),
        json!({"properties": {"a": {"type": "object", "properties": {"b": {"minLength": 1.5}}}}}),
    ] {
        let result = Schema::compile(&invalid);
        assert!(matches!(result, Err(SchemaError::Invalid(_))), "{invalid}: {result:?}");
    }
}

#[test]
fn schemas_beyond_the_plain_keywords_go_to_jsonschema() {
    for (schema, good, bad) in [
        (json!({"type": "string", "pattern": "^a"}), json!("ab"), json!("ba")),
        (json!({"$defs": {"s": {"type": "string"}}, "$ref": "#/$defs/s"}), json!("a"), json!(1)),
        (json!({"uniqueItems": true}), json!([1, 2]), json!([1, 1.0])),
        (json!({"multipleOf": 3}), json!(9), json!(10)),
        (json!({"patternProperties": {"^x": {"type": "integer"}}}), json!({"xa": 1}), json!({"xa": "1"})),
        (json!({"if": {"type": "string"}, "then": {"minLength": 2}}), json!("ab"), json!("a")),
        (
            json!({"properties": {"a": {"$schema": DIALECT, "type": "integer"}}}),
            json!({"a": 1}),
            json!({"a": "1"}),
        ),
        (
            json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "integer"}),
            json!(1),
            json!("1"),
        ),
        (json!({"unknownKeyword": 1, "type": "null"}), json!(null), json!(1)),
    ] {
        let compiled = Schema::compile(&schema).expect("compiles");
        assert!(!compiled.is_plain(), "{schema}");
        assert!(compiled.is_valid(&good), "{schema} {good}");
        assert!(!compiled.is_valid(&bad), "{schema} {bad}");
    }
}

#[test]
fn a_peer_plain_schema_is_guarded_and_reports_no_detail() {
    let schema = Schema::compile_untrusted(&derived_schema(), &crate::Limits::default()).expect("compiles");
    assert!(schema.is_plain());
    let violation = schema.validate(&json!({"limit": 1})).expect_err("query is required");
    assert_eq!(violation.message, "the value does not match the schema");
}

/// Numbers chosen to catch lossy comparisons: integers beyond 2^53, the ends of `i64` and
/// `u64`, floats equal to integers, fractions either side of them.
fn number() -> impl Strategy<Value = Value> {
    prop_oneof![(-3i64..4).prop_map(Value::from), prop::sample::select(numbers())]
}

fn numbers() -> Vec<Value> {
    vec![
        json!(0),
        json!(1),
        json!(-1),
        json!(0.0),
        json!(1.0),
        json!(-1.5),
        json!(2.5),
        json!(9_007_199_254_740_993u64),
        json!(9_007_199_254_740_992u64),
        json!(i64::MIN + 1),
        json!(u64::MAX - 1),
        json!(9_007_199_254_740_992.0),
        json!(i64::MIN),
        json!(-9_223_372_036_854_775_808.0),
        json!(u64::MAX),
        json!(18_446_744_073_709_551_616.0),
        json!(18_446_744_073_709_551_615u64),
        json!(1e300),
        json!(-1e300),
    ]
}

fn name() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["a", "b", "c"]).prop_map(str::to_owned)
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number(),
        prop::sample::select(vec!["", "a", "ab", "é", "éé", "abc"]).prop_map(Value::from),
    ]
}

fn instance() -> impl Strategy<Value = Value> {
    let nested = scalar().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(prop_oneof![name(), Just("d".to_owned())], inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    });
    // Mostly scalars, which most keywords are about; containers for the applicators.
    prop_oneof![2 => scalar(), 1 => nested]
}

/// One keyword of a plain schema whose value is not a schema.
fn leaf_keyword() -> impl Strategy<Value = (String, Value)> {
    let types = prop::sample::subsequence(
        vec!["null", "boolean", "object", "array", "number", "integer", "string"],
        1..3,
    )
    .prop_map(|t| if t.len() == 1 { json!(t[0]) } else { json!(t) });
    let count = (0u64..4).prop_map(Value::from);
    prop_oneof![
        3 => types.prop_map(|t| ("type".to_owned(), t)),
        1 => prop::collection::vec(instance(), 1..4).prop_map(|v| ("enum".to_owned(), Value::Array(v))),
        1 => instance().prop_map(|v| ("const".to_owned(), v)),
        2 => (prop::sample::select(vec!["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]), number())
            .prop_map(|(k, v)| (k.to_owned(), v)),
        2 => (
            prop::sample::select(vec![
                "minLength",
                "maxLength",
                "minItems",
                "maxItems",
                "minProperties",
                "maxProperties"
            ]),
            count
        )
            .prop_map(|(k, v)| (k.to_owned(), v)),
        1 => prop::sample::subsequence(vec!["a", "b", "c"], 0..3).prop_map(|r| ("required".to_owned(), json!(r))),
        1 => Just(("description".to_owned(), json!("annotation"))),
        1 => Just(("uniqueItems".to_owned(), json!(false))),
    ]
}

fn schema() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        1 => any::<bool>().prop_map(Value::Bool),
        6 => prop::collection::vec(leaf_keyword(), 0..4)
            .prop_map(|kw| Value::Object(kw.into_iter().collect::<Map<_, _>>())),
    ];
    leaf.prop_recursive(3, 20, 3, |inner| {
        let applicator = prop_oneof![
            prop::collection::btree_map(name(), inner.clone(), 0..3)
                .prop_map(|m| ("properties".to_owned(), Value::Object(m.into_iter().collect()))),
            inner.clone().prop_map(|s| ("additionalProperties".to_owned(), s)),
            inner.clone().prop_map(|s| ("items".to_owned(), s)),
            inner.clone().prop_map(|s| ("not".to_owned(), s)),
            (prop::sample::select(vec!["allOf", "anyOf", "oneOf"]), prop::collection::vec(inner, 1..3))
                .prop_map(|(k, v)| (k.to_owned(), Value::Array(v))),
        ];
        (prop::collection::vec(applicator, 1..3), prop::collection::vec(leaf_keyword(), 0..3))
            .prop_map(|(a, l)| Value::Object(a.into_iter().chain(l).collect::<Map<_, _>>()))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1_000))]

    /// The crate's validator and `jsonschema` agree on every generated plain schema and instance.
    #[test]
    fn plain_schemas_agree_with_jsonschema(schema in schema(), instances in prop::collection::vec(instance(), 1..12)) {
        let plain = Schema::compile(&schema).expect("a generated plain schema compiles");
        prop_assert!(plain.is_plain(), "{}", schema);
        let full = full_validator(&schema).expect("jsonschema accepts it too");
        for instance in &instances {
            prop_assert_eq!(plain.is_valid(instance), full.is_valid(instance), "{} / {}", schema, instance);
        }
    }
}

/// Every numeric keyword, with every bound of the pool, against every number of the pool: the
/// comparisons must be exact where integers and floats meet.
#[test]
fn numbers_compare_by_value_as_jsonschema_compares_them() {
    let keywords = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "const", "enum"];
    let mut schemas = vec![json!({"type": "integer"}), json!({"type": "number"})];
    for keyword in keywords {
        for bound in numbers() {
            let bound = if keyword == "enum" { json!([bound]) } else { bound };
            schemas.push(json!({ keyword: bound }));
        }
    }
    for schema in &schemas {
        let plain = Schema::compile(schema).expect("compiles");
        assert!(plain.is_plain(), "{schema}");
        let full = full_validator(schema).expect("compiles");
        for instance in numbers() {
            assert_eq!(plain.is_valid(&instance), full.is_valid(&instance), "{schema} / {instance}");
        }
    }
}
