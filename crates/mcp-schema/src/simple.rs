//! The plain schemas: a validator for the JSON Schema 2020-12 keywords that derived and
//! hand-written tool schemas use, built without `jsonschema`.
//!
//! Why it exists: `jsonschema` checks every schema against its meta-schema before compiling it,
//! and builds the 2020-12 meta-schema validator at run time the first time it does — 65 % of the
//! instructions `mcpkit serve` ran before its first answer, and a third of its heap
//! (docs/PERFORMANCE.md, "Memory and start-up"). Almost every tool schema is a handful of
//! `type`, `properties`, `required` and bounds, which take a few lines each to check exactly.
//!
//! The rule that keeps this safe: [`compile`] accepts a schema only when *every* keyword in it
//! is one this module implements (or an annotation, or an `x-` extension), and its value has the
//! shape the 2020-12 meta-schema demands. Anything else — an unknown or unsupported keyword, a
//! value of a doubtful shape, a `$ref`, another dialect — returns `None`, and the caller compiles
//! the schema with `jsonschema` as before, which validates it against the meta-schema and
//! refuses it if it is invalid. So a schema this module accepts is valid, and a schema it does
//! not understand is never treated as permissive.

use std::cmp::Ordering;
use std::collections::HashMap;

use serde_json::{Map, Number, Value};

/// The `$schema` this module accepts (the default dialect, as `schemars` writes it).
const DIALECT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// A compiled plain schema: the checks of one (sub)schema, all of which must pass.
#[derive(Debug)]
pub(crate) struct Node {
    checks: Vec<Check>,
}

#[derive(Debug)]
enum Check {
    /// The `false` schema.
    Never,
    /// `type`: a set of [`Kind`] bits.
    Type(u8),
    Enum(Vec<Value>),
    Const(Value),
    MinLength(u64),
    MaxLength(u64),
    Minimum(Number),
    Maximum(Number),
    ExclusiveMinimum(Number),
    ExclusiveMaximum(Number),
    MinItems(u64),
    MaxItems(u64),
    Items(Box<Node>),
    MinProperties(u64),
    MaxProperties(u64),
    Required(Vec<String>),
    /// `properties` and `additionalProperties` together: the latter applies to the members the
    /// former does not name (there is no `patternProperties` in a plain schema).
    Properties {
        named: HashMap<String, Node>,
        additional: Option<Box<Node>>,
    },
    AllOf(Vec<Node>),
    AnyOf(Vec<Node>),
    OneOf(Vec<Node>),
    Not(Box<Node>),
}

/// The seven JSON Schema types, as bits of a `type` set.
struct Kind;

impl Kind {
    const NULL: u8 = 1;
    const BOOLEAN: u8 = 2;
    const OBJECT: u8 = 4;
    const ARRAY: u8 = 8;
    const NUMBER: u8 = 16;
    const INTEGER: u8 = 32;
    const STRING: u8 = 64;

    fn named(name: &str) -> Option<u8> {
        Some(match name {
            "null" => Kind::NULL,
            "boolean" => Kind::BOOLEAN,
            "object" => Kind::OBJECT,
            "array" => Kind::ARRAY,
            "number" => Kind::NUMBER,
            "integer" => Kind::INTEGER,
            "string" => Kind::STRING,
            _ => return None,
        })
    }

    fn matches(set: u8, instance: &Value) -> bool {
        match instance {
            Value::Null => set & Kind::NULL != 0,
            Value::Bool(_) => set & Kind::BOOLEAN != 0,
            Value::Object(_) => set & Kind::OBJECT != 0,
            Value::Array(_) => set & Kind::ARRAY != 0,
            Value::String(_) => set & Kind::STRING != 0,
            Value::Number(n) => set & Kind::NUMBER != 0 || (set & Kind::INTEGER != 0 && is_integer(n)),
        }
    }
}

/// Compiles `schema` when it is a plain schema; `None` when it uses anything else.
pub(crate) fn compile(schema: &Value) -> Option<Node> {
    compile_node(schema, true)
}

fn compile_node(schema: &Value, root: bool) -> Option<Node> {
    let map = match schema {
        Value::Bool(true) => return Some(Node { checks: Vec::new() }),
        Value::Bool(false) => return Some(Node { checks: vec![Check::Never] }),
        Value::Object(map) => map,
        _ => return None,
    };
    let mut checks = Vec::with_capacity(map.len());
    let mut named = None;
    let mut additional = None;
    for (keyword, value) in map {
        let check = match keyword.as_str() {
            // The default dialect, named at the root only: a nested `$schema` starts an embedded
            // resource, which `jsonschema` handles.
            "$schema" if root && value.as_str() == Some(DIALECT_2020_12) => continue,
            "title" | "description" | "$comment" | "format" if value.is_string() => continue,
            "deprecated" | "readOnly" | "writeOnly" if value.is_boolean() => continue,
            "examples" if value.is_array() => continue,
            "default" => continue,
            // `uniqueItems: false` asserts nothing; `true` is left to `jsonschema`, which checks
            // uniqueness without comparing every pair.
            "uniqueItems" if value == &Value::Bool(false) => continue,
            "type" => Check::Type(type_set(value)?),
            // An empty `enum` is left to `jsonschema` (it admits nothing; rare enough not to matter).
            "enum" => Check::Enum(value.as_array().filter(|v| !v.is_empty())?.clone()),
            "const" => Check::Const(value.clone()),
            "minLength" => Check::MinLength(value.as_u64()?),
            "maxLength" => Check::MaxLength(value.as_u64()?),
            "minimum" => Check::Minimum(number(value)?),
            "maximum" => Check::Maximum(number(value)?),
            "exclusiveMinimum" => Check::ExclusiveMinimum(number(value)?),
            "exclusiveMaximum" => Check::ExclusiveMaximum(number(value)?),
            "minItems" => Check::MinItems(value.as_u64()?),
            "maxItems" => Check::MaxItems(value.as_u64()?),
            "items" => Check::Items(Box::new(compile_node(value, false)?)),
            "minProperties" => Check::MinProperties(value.as_u64()?),
            "maxProperties" => Check::MaxProperties(value.as_u64()?),
            "required" => Check::Required(required(value)?),
            "properties" => {
                named = Some(properties(value.as_object()?)?);
                continue;
            }
            "additionalProperties" => {
                additional = Some(Box::new(compile_node(value, false)?));
                continue;
            }
            "allOf" => Check::AllOf(schema_array(value)?),
            "anyOf" => Check::AnyOf(schema_array(value)?),
            "oneOf" => Check::OneOf(schema_array(value)?),
            "not" => Check::Not(Box::new(compile_node(value, false)?)),
            // Extensions (MCP's `x-mcp-header`, say) are annotations to every validator.
            other if other.starts_with("x-") => continue,
            _ => return None,
        };
        checks.push(check);
    }
    if named.is_some() || additional.is_some() {
        checks.push(Check::Properties { named: named.unwrap_or_default(), additional });
    }
    Some(Node { checks })
}

/// `type`: one type name, or a non-empty array of distinct ones (the meta-schema's rule).
fn type_set(value: &Value) -> Option<u8> {
    match value {
        Value::String(name) => Kind::named(name),
        Value::Array(names) if !names.is_empty() => {
            let mut set = 0;
            for name in names {
                let kind = Kind::named(name.as_str()?)?;
                if set & kind != 0 {
                    return None;
                }
                set |= kind;
            }
            Some(set)
        }
        _ => None,
    }
}

fn number(value: &Value) -> Option<Number> {
    value.as_number().cloned()
}

/// `required`: an array of distinct strings.
fn required(value: &Value) -> Option<Vec<String>> {
    let mut names: Vec<String> = Vec::new();
    for name in value.as_array()? {
        let name = name.as_str()?;
        if names.iter().any(|n| n == name) {
            return None;
        }
        names.push(name.to_owned());
    }
    Some(names)
}

fn properties(map: &Map<String, Value>) -> Option<HashMap<String, Node>> {
    map.iter().map(|(name, schema)| Some((name.clone(), compile_node(schema, false)?))).collect()
}

/// `allOf` / `anyOf` / `oneOf`: a non-empty array of schemas.
fn schema_array(value: &Value) -> Option<Vec<Node>> {
    let items = value.as_array().filter(|items| !items.is_empty())?;
    items.iter().map(|schema| compile_node(schema, false)).collect()
}

impl Node {
    /// True when `instance` satisfies every check.
    pub(crate) fn is_valid(&self, instance: &Value) -> bool {
        self.checks.iter().all(|check| check.holds(instance))
    }
}

impl Check {
    fn holds(&self, instance: &Value) -> bool {
        match (self, instance) {
            (Check::Never, _) => false,
            (Check::Type(set), _) => Kind::matches(*set, instance),
            (Check::Enum(values), _) => values.iter().any(|v| equal(v, instance)),
            (Check::Const(value), _) => equal(value, instance),
            (Check::MinLength(min), Value::String(s)) => s.chars().count() as u64 >= *min,
            (Check::MaxLength(max), Value::String(s)) => s.chars().count() as u64 <= *max,
            (Check::Minimum(min), Value::Number(n)) => compare(n, min) != Ordering::Less,
            (Check::Maximum(max), Value::Number(n)) => compare(n, max) != Ordering::Greater,
            (Check::ExclusiveMinimum(min), Value::Number(n)) => compare(n, min) == Ordering::Greater,
            (Check::ExclusiveMaximum(max), Value::Number(n)) => compare(n, max) == Ordering::Less,
            (Check::MinItems(min), Value::Array(items)) => items.len() as u64 >= *min,
            (Check::MaxItems(max), Value::Array(items)) => items.len() as u64 <= *max,
            (Check::Items(schema), Value::Array(items)) => items.iter().all(|item| schema.is_valid(item)),
            (Check::MinProperties(min), Value::Object(map)) => map.len() as u64 >= *min,
            (Check::MaxProperties(max), Value::Object(map)) => map.len() as u64 <= *max,
            (Check::Required(names), Value::Object(map)) => names.iter().all(|n| map.contains_key(n)),
            (Check::Properties { named, additional }, Value::Object(map)) => {
                map.iter().all(|(name, value)| match named.get(name) {
                    Some(schema) => schema.is_valid(value),
                    None => additional.as_ref().is_none_or(|schema| schema.is_valid(value)),
                })
            }
            (Check::AllOf(schemas), _) => schemas.iter().all(|s| s.is_valid(instance)),
            (Check::AnyOf(schemas), _) => schemas.iter().any(|s| s.is_valid(instance)),
            (Check::OneOf(schemas), _) => {
                let mut valid = schemas.iter().filter(|s| s.is_valid(instance));
                valid.next().is_some() && valid.next().is_none()
            }
            (Check::Not(schema), _) => !schema.is_valid(instance),
            // A keyword about strings, numbers, arrays or objects says nothing about other types.
            _ => true,
        }
    }
}

/// An integer in the sense of drafts 6 and later: any number without a fractional part.
fn is_integer(n: &Number) -> bool {
    n.is_u64() || n.is_i64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
}

/// Compares two JSON numbers by their mathematical value: an integer and a float are compared
/// exactly (converting a large `u64` to `f64` would round it).
fn compare(a: &Number, b: &Number) -> Ordering {
    match (integer(a), integer(b)) {
        (Some(a), Some(b)) => a.cmp(&b),
        (Some(a), None) => compare_float(float(b), a).reverse(),
        (None, Some(b)) => compare_float(float(a), b),
        (None, None) => float(a).partial_cmp(&float(b)).unwrap_or(Ordering::Equal),
    }
}

fn integer(n: &Number) -> Option<i128> {
    n.as_u64().map(i128::from).or_else(|| n.as_i64().map(i128::from))
}

fn float(n: &Number) -> f64 {
    // A number that is neither `u64` nor `i64` is an `f64` (no arbitrary precision here).
    n.as_f64().unwrap_or(f64::NAN)
}

/// Compares a float with an integer in `[-2^63, 2^64)` exactly.
fn compare_float(f: f64, i: i128) -> Ordering {
    const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;
    let whole = f.trunc();
    if whole >= TWO_POW_64 {
        return Ordering::Greater;
    }
    if whole < -TWO_POW_64 {
        return Ordering::Less;
    }
    // `whole` is an integer of magnitude below 2^64, which an i128 holds exactly.
    match (whole as i128).cmp(&i) {
        Ordering::Equal => (f - whole).partial_cmp(&0.0).unwrap_or(Ordering::Equal),
        unequal => unequal,
    }
}

/// JSON Schema equality (`enum`, `const`): numbers by value (`1` equals `1.0`), arrays item by
/// item, objects member by member.
fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(a), Value::Number(b)) => compare(a, b) == Ordering::Equal,
        (Value::Array(a), Value::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(a, b)| equal(a, b)),
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(key, a)| b.get(key).is_some_and(|b| equal(a, b)))
        }
        _ => a == b,
    }
}
