//! The complexity check: each limit, realistic schemas, and schema bombs.

use serde_json::{Map, Value, json};

use crate::{ComplexityError, Limits, Schema, SchemaError, check_complexity};

/// The doubling bomb of docs/DECISIONS.md trap 2: `d_k = allOf[$ref d_{k-1}, $ref d_{k-1}]`, with
/// the reference to `d_k` spelled `reference(k)`.
fn bomb(depth: usize, reference: impl Fn(usize) -> String) -> Value {
    let mut defs = Map::new();
    defs.insert("d_0".into(), json!({"type": "integer"}));
    for k in 1..=depth {
        let link = json!({"$ref": reference(k - 1)});
        defs.insert(format!("d_{k}"), json!({"allOf": [link.clone(), link]}));
    }
    json!({"$defs": defs, "$ref": reference(depth)})
}

fn pointer_bomb(depth: usize) -> Value {
    bomb(depth, |k| format!("#/$defs/d_{k}"))
}

fn expansion_error(schema: &Value) -> bool {
    matches!(check_complexity(schema, &Limits::default()), Err(ComplexityError::RefExpansion { .. }))
}

/// A tool schema using most of 2020-12: `$defs`, `$anchor`, `$ref`, composition, conditionals.
fn realistic_tool_schema() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://example.com/tools/create-order.json",
        "title": "create_order",
        "type": "object",
        "$defs": {
            "money": {
                "$anchor": "money",
                "type": "object",
                "properties": {
                    "amount": {"type": "number", "exclusiveMinimum": 0},
                    "currency": {"type": "string", "pattern": "^[A-Z]{3}$"}
                },
                "required": ["amount", "currency"],
                "additionalProperties": false
            },
            "address": {
                "type": "object",
                "properties": {
                    "street": {"type": "string"},
                    "country": {"enum": ["US", "CA", "DE"]},
                    "postalCode": {"type": "string"}
                },
                "required": ["street", "country"],
                "if": {"properties": {"country": {"const": "US"}}},
                "then": {"properties": {"postalCode": {"pattern": "^[0-9]{5}$"}}},
                "else": {"properties": {"postalCode": {"minLength": 3}}}
            },
            "line": {
                "type": "object",
                "properties": {
                    "sku": {"type": "string"},
                    "quantity": {"type": "integer", "minimum": 1},
                    "price": {"$ref": "#money"}
                },
                "required": ["sku", "quantity"]
            }
        },
        "properties": {
            "customer": {
                "anyOf": [
                    {"type": "string", "format": "email"},
                    {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}
                ]
            },
            "lines": {"type": "array", "items": {"$ref": "#/$defs/line"}, "minItems": 1},
            "shipping": {"allOf": [{"$ref": "#/$defs/address"}, {"required": ["postalCode"]}]},
            "total": {"$ref": "https://example.com/tools/create-order.json#/$defs/money"},
            "notes": {"oneOf": [{"type": "null"}, {"type": "string", "maxLength": 500}]}
        },
        "patternProperties": {"^x-": {}},
        "required": ["customer", "lines"],
        "not": {"required": ["internal"]},
        "unevaluatedProperties": false
    })
}

/// A tree node whose children are tree nodes.
fn recursive_schema() -> Value {
    json!({
        "$defs": {
            "node": {
                "type": "object",
                "properties": {
                    "value": {"type": "number"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
                    "parent": {"$ref": "#"}
                }
            }
        },
        "$ref": "#/$defs/node"
    })
}

#[test]
fn default_limits_are_the_documented_ones() {
    let limits = Limits::default();
    assert_eq!(limits.max_bytes, 256 * 1024);
    assert_eq!(limits.max_depth, 64);
    assert_eq!(limits.max_subschemas, 10_000);
    assert_eq!(limits.max_ref_expansion, 100_000);
    assert_eq!(limits.max_pattern_len, 1_000);
}

#[test]
fn defaults_accept_a_realistic_tool_schema() {
    let schema = realistic_tool_schema();
    assert_eq!(check_complexity(&schema, &Limits::default()), Ok(()));
    let compiled = Schema::compile_untrusted(&schema, &Limits::default()).expect("compiles");
    let order = json!({
        "customer": {"id": 7},
        "lines": [{"sku": "A-1", "quantity": 2, "price": {"amount": 9.5, "currency": "EUR"}}],
        "shipping": {"street": "Main St", "country": "US", "postalCode": "12345"},
        "total": {"amount": 19, "currency": "EUR"}
    });
    assert_eq!(compiled.validate(&order), Ok(()));
    let mut bad = order.clone();
    bad["shipping"]["postalCode"] = json!("ABC");
    // A peer's schema reports a violation without locating it; the same schema compiled as
    // trusted names the path.
    assert_eq!(compiled.validate(&bad).expect_err("not a US zip").path, "");
    let trusted = Schema::compile(&schema).expect("compiles");
    assert_eq!(trusted.validate(&bad).expect_err("not a US zip").path, "/shipping/postalCode");
}

#[test]
fn too_large_is_rejected_early() {
    let schema = json!({"description": "x".repeat(300 * 1024)});
    let limits = Limits::default();
    match check_complexity(&schema, &limits) {
        Err(ComplexityError::TooLarge { bytes, limit }) => {
            assert_eq!(limit, 256 * 1024);
            assert!(bytes > limit, "{bytes}");
        }
        other => panic!("{other:?}"),
    }
    let small = Limits { max_bytes: 16, ..limits };
    assert!(matches!(
        check_complexity(&json!({"type": "string"}), &small),
        Err(ComplexityError::TooLarge { .. })
    ));
    assert_eq!(check_complexity(&json!({"type": "int"}), &small), Ok(()));
}

#[test]
fn too_deep_is_rejected() {
    let mut schema = json!({"type": "string"});
    for _ in 0..70 {
        schema = json!({"properties": {"a": schema}});
    }
    assert_eq!(
        check_complexity(&schema, &Limits::default()),
        Err(ComplexityError::TooDeep { depth: 65, limit: 64 })
    );
    // Depth counts every JSON container, schema or not.
    let limits = Limits { max_depth: 3, ..Limits::default() };
    assert_eq!(check_complexity(&json!({"default": [[1]]}), &limits), Ok(()));
    assert!(matches!(
        check_complexity(&json!({"default": [[[1]]]}), &limits),
        Err(ComplexityError::TooDeep { .. })
    ));
}

#[test]
fn too_many_subschemas_is_rejected() {
    let properties: Map<String, Value> = (0..10_001).map(|i| (format!("p{i}"), json!(true))).collect();
    let schema = json!({"properties": properties});
    assert!(matches!(
        check_complexity(&schema, &Limits::default()),
        Err(ComplexityError::TooManySubschemas { count: 10_001, limit: 10_000 })
    ));
    // Every subschema position counts: 1 root + 11 below.
    let schema = json!({
        "properties": {"a": {}}, "patternProperties": {"^b": {}}, "$defs": {"c": {}},
        "items": [{}, {}], "anyOf": [{}], "not": {}, "if": {}, "then": {}, "else": {},
        "additionalProperties": false, "default": {"properties": {"x": {}}}
    });
    let limits = |max_subschemas| Limits { max_subschemas, ..Limits::default() };
    assert_eq!(check_complexity(&schema, &limits(12)), Ok(()));
    assert!(matches!(
        check_complexity(&schema, &limits(11)),
        Err(ComplexityError::TooManySubschemas { count: 12, limit: 11 })
    ));
}

#[test]
fn long_patterns_are_rejected() {
    let long = "a".repeat(1_001);
    let limit = Limits::default();
    let pattern = json!({"properties": {"x": {"type": "string", "pattern": long}}});
    let keyed = json!({"patternProperties": {long.clone(): {}}});
    let names = json!({"propertyNames": {"pattern": long}});
    for schema in [pattern, keyed, names] {
        assert_eq!(
            check_complexity(&schema, &limit),
            Err(ComplexityError::PatternTooLong { len: 1_001, limit: 1_000 })
        );
    }
    let fits = json!({"pattern": "é".repeat(1_000)});
    assert_eq!(check_complexity(&fits, &limit), Ok(()));
}

#[test]
fn ref_expansion_is_counted_exactly_for_simple_refs() {
    // root 1 + $defs/a 4 (1 + its ref to b) + $defs/b 3 (1 + 2 properties) + its ref to a 4 = 12
    let schema = json!({
        "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"properties": {"x": {}, "y": {}}}},
        "$ref": "#/$defs/a"
    });
    let limits = |max_ref_expansion| Limits { max_ref_expansion, ..Limits::default() };
    assert_eq!(check_complexity(&schema, &limits(12)), Ok(()));
    assert_eq!(
        check_complexity(&schema, &limits(11)),
        Err(ComplexityError::RefExpansion { expansions: 12, limit: 11 })
    );
}

#[test]
fn schema_bomb_at_depth_30_is_rejected() {
    let schema = pointer_bomb(30);
    assert!(serde_json::to_vec(&schema).unwrap().len() < 3_000);
    match check_complexity(&schema, &Limits::default()) {
        Err(ComplexityError::RefExpansion { expansions, limit }) => {
            assert_eq!(limit, 100_000);
            assert!(expansions > limit);
        }
        other => panic!("bomb accepted: {other:?}"),
    }
    let compiled = Schema::compile_untrusted(&schema, &Limits::default());
    assert!(matches!(compiled, Err(SchemaError::TooComplex(ComplexityError::RefExpansion { .. }))));
    // A small bomb is within the limits.
    assert_eq!(check_complexity(&pointer_bomb(10), &Limits::default()), Ok(()));
}

#[test]
fn schema_bombs_through_anchors_and_ids_are_rejected() {
    let by_anchor = |k: usize| format!("#a{k}");
    let mut anchored = bomb(30, by_anchor);
    for (name, def) in anchored["$defs"].as_object_mut().unwrap() {
        def["$anchor"] = json!(format!("a{}", &name[2..]));
    }
    assert!(expansion_error(&anchored));

    assert!(expansion_error(&bomb(30, |k| format!("#/%24defs/d_{k}"))));
    assert!(expansion_error(&bomb(30, |k| format!("json-schema:///#/$defs/d_{k}"))));

    let mut by_id = bomb(30, |k| format!("urn:bomb#/$defs/d_{k}"));
    by_id["$id"] = json!("urn:bomb");
    assert!(expansion_error(&by_id));

    // Each definition its own resource, referred to by relative URI.
    let mut resources = bomb(30, |k| format!("d{k}.json"));
    for (name, def) in resources["$defs"].as_object_mut().unwrap() {
        def["$id"] = json!(format!("d{}.json", &name[2..]));
    }
    resources["$id"] = json!("https://example.com/schemas/root.json");
    assert!(expansion_error(&resources));

    let mut dynamic = bomb(30, |k| format!("#/$defs/d_{k}"));
    let text = serde_json::to_string(&dynamic).unwrap().replace("\"$ref\"", "\"$dynamicRef\"");
    dynamic = serde_json::from_str(&text).unwrap();
    assert!(expansion_error(&dynamic));
}

#[test]
fn bomb_inside_a_nested_resource_is_rejected() {
    // Fragment-only refs resolve against the nested resource, whose `$defs` hold the bomb.
    let inner = pointer_bomb(30);
    let mut inner_resource = inner.clone();
    inner_resource["$id"] = json!("https://example.com/inner.json");
    let schema = json!({
        "$defs": {"d_30": {"type": "string"}, "inner": inner_resource},
        "$ref": "https://example.com/inner.json"
    });
    assert!(expansion_error(&schema));
}

#[test]
fn recursive_schemas_are_accepted() {
    let schema = recursive_schema();
    assert_eq!(check_complexity(&schema, &Limits::default()), Ok(()));
    let compiled = Schema::compile_untrusted(&schema, &Limits::default()).expect("compiles");
    let tree = json!({"value": 1, "children": [{"value": 2, "children": [{"value": 3}]}]});
    assert!(compiled.is_valid(&tree));
    let bad = json!({"value": 1, "children": [{"value": 2, "children": [{"value": "3"}]}]});
    assert!(compiled.validate(&bad).is_err());
    let trusted = Schema::compile(&schema).expect("compiles");
    assert_eq!(trusted.validate(&bad).expect_err("3 is a string").path, "/children/0/children/0/value");
    // A self-referencing cycle without any other content is fine too.
    let cycle =
        json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"});
    assert_eq!(check_complexity(&cycle, &Limits::default()), Ok(()));
}

#[test]
fn long_reference_chains_do_not_overflow_the_stack() {
    let n = 5_000;
    let defs: Map<String, Value> =
        (0..n).map(|k| (format!("d{k}"), json!({"$ref": format!("#/$defs/d{}", k + 1)}))).collect();
    let schema = json!({"$defs": defs, "$ref": "#/$defs/d0"});
    // Every definition counts its whole chain (quadratic), so lift the expansion limit.
    let limits = Limits { max_ref_expansion: u64::MAX, ..Limits::default() };
    assert_eq!(check_complexity(&schema, &limits), Ok(()));
}

#[test]
fn compile_untrusted_applies_the_guard() {
    let limits = Limits { max_subschemas: 2, ..Limits::default() };
    let schema = json!({"properties": {"a": {}, "b": {}}});
    assert!(Schema::compile(&schema).is_ok());
    assert!(matches!(
        Schema::compile_untrusted(&schema, &limits),
        Err(SchemaError::TooComplex(ComplexityError::TooManySubschemas { .. }))
    ));
    let deep = Limits { max_depth: 1, ..Limits::default() };
    assert!(matches!(
        Schema::compile_untrusted(&schema, &deep),
        Err(SchemaError::TooComplex(ComplexityError::TooDeep { .. }))
    ));
    assert!(Schema::compile_untrusted(&schema, &Limits::default()).is_ok());
}

#[test]
fn branching_recursion_in_a_peer_schema_cannot_make_validation_exponential() {
    // Two definitions that recurse into each other through `anyOf`: small enough to pass the
    // guard, but locating an error in a deep instance walks 2^depth branches. A peer's schema
    // therefore answers from the memoized validity check alone.
    let schema = json!({
        "$defs": {
            "a": {"anyOf": [{"type": "array", "items": {"$ref": "#/$defs/a"}}, {"type": "array", "items": {"$ref": "#/$defs/b"}}]},
            "b": {"anyOf": [{"type": "array", "items": {"$ref": "#/$defs/b"}}, {"type": "array", "items": {"$ref": "#/$defs/a"}}]}
        },
        "$ref": "#/$defs/a"
    });
    let compiled = Schema::compile_untrusted(&schema, &Limits::default()).expect("passes the guard");
    let mut instance = json!(1);
    for _ in 0..40 {
        instance = json!([instance]);
    }
    let violation = compiled.validate(&instance).expect_err("1 is not an array");
    assert_eq!(violation.message, "the value does not match the schema");
}
