//! SEP-2243 on the client: which tool arguments are mirrored into `Mcp-Param-*` headers, the
//! validation that drops tools with invalid `x-mcp-header` annotations, and the value encoding
//! (plain visible ASCII, else the `=?base64?…?=` sentinel).

use base64::Engine as _;
use serde_json::{Map, Value};

/// One mirrored argument: the path of `properties` keys from the root and the header name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamHeader {
    /// `properties` keys from the schema root to the annotated property.
    pub path: Vec<String>,
    /// The `{Name}` of `Mcp-Param-{Name}`.
    pub name: String,
}

/// The `x-mcp-header` annotations of an input schema, or why the tool must be rejected.
pub fn param_headers(input_schema: &Value) -> Result<Vec<ParamHeader>, String> {
    let mut found = Vec::new();
    walk(input_schema, &mut Vec::new(), true, &mut found)?;
    let mut seen: Vec<String> = Vec::with_capacity(found.len());
    for header in &found {
        let lower = header.name.to_ascii_lowercase();
        if seen.contains(&lower) {
            return Err(format!(
                "x-mcp-header {:?} is declared twice (names are case-insensitive)",
                header.name
            ));
        }
        seen.push(lower);
    }
    Ok(found)
}

fn walk(
    node: &Value,
    path: &mut Vec<String>,
    reachable: bool,
    out: &mut Vec<ParamHeader>,
) -> Result<(), String> {
    match node {
        Value::Object(map) => {
            if let Some(annotation) = map.get("x-mcp-header") {
                let here = if path.is_empty() { "the schema root".to_string() } else { path.join(".") };
                if !reachable || path.is_empty() {
                    return Err(format!(
                        "x-mcp-header at {here} is not statically reachable through properties"
                    ));
                }
                let name =
                    annotation.as_str().ok_or_else(|| format!("x-mcp-header at {here} is not a string"))?;
                check_name(name).map_err(|why| format!("x-mcp-header {name:?} at {here}: {why}"))?;
                check_primitive(map).map_err(|why| format!("x-mcp-header {name:?} at {here}: {why}"))?;
                out.push(ParamHeader { path: path.clone(), name: name.to_string() });
            }
            for (key, child) in map {
                if key == "properties" {
                    if let Value::Object(props) = child {
                        for (prop, schema) in props {
                            path.push(prop.clone());
                            let result = walk(schema, path, reachable, out);
                            path.pop();
                            result?;
                        }
                    }
                } else if key != "x-mcp-header"
                    && key != "const"
                    && key != "default"
                    && key != "enum"
                    && key != "examples"
                {
                    // Any other keyword's subschemas (items, oneOf, $defs, if/then, ...) are not
                    // statically reachable: an annotation inside them invalidates the tool.
                    walk(child, path, false, out)?;
                }
            }
            Ok(())
        }
        Value::Array(items) => items.iter().try_for_each(|item| walk(item, path, false, out)),
        _ => Ok(()),
    }
}

fn check_name(name: &str) -> Result<(), &'static str> {
    if name.is_empty() {
        return Err("empty name");
    }
    let tchar = |c: u8| c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c);
    if !name.bytes().all(tchar) {
        return Err("not an HTTP field-name token (space, colon, control or non-ASCII character)");
    }
    Ok(())
}

fn check_primitive(schema: &Map<String, Value>) -> Result<(), &'static str> {
    const ALLOWED: [&str; 3] = ["string", "integer", "boolean"];
    match schema.get("type") {
        Some(Value::String(t)) if ALLOWED.contains(&t.as_str()) => Ok(()),
        Some(Value::Array(types)) => {
            let mut primitive = 0;
            for t in types {
                match t.as_str() {
                    Some(t) if ALLOWED.contains(&t) => primitive += 1,
                    Some("null") => {}
                    _ => return Err("only string, integer and boolean properties may be mirrored"),
                }
            }
            if primitive == 1 { Ok(()) } else { Err("only one primitive type may be mirrored") }
        }
        Some(_) => Err("only string, integer and boolean properties may be mirrored"),
        None => Err("the mirrored property must declare its type"),
    }
}

/// The headers for one call: `(Name, encoded value)` for every annotated argument present and
/// not null, in declaration order.
pub fn header_values(
    headers: &[ParamHeader],
    arguments: Option<&Map<String, Value>>,
) -> Vec<(String, String)> {
    let Some(arguments) = arguments else { return Vec::new() };
    let mut out = Vec::with_capacity(headers.len());
    for header in headers {
        let mut value = None;
        let mut level = Some(arguments);
        for (i, key) in header.path.iter().enumerate() {
            let Some(map) = level else { break };
            let v = map.get(key);
            if i + 1 == header.path.len() {
                value = v;
            } else {
                level = v.and_then(Value::as_object);
            }
        }
        let text = match value {
            Some(Value::String(s)) => encode_value(s),
            Some(Value::Bool(b)) => b.to_string(),
            Some(Value::Number(n)) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
                (Some(i), _, _) => i.to_string(),
                (_, Some(u), _) => u.to_string(),
                (_, _, Some(f)) if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 => {
                    format!("{}", f as i64)
                }
                // Beyond 2^53 (or a fraction): the number as JSON writes it, which the server
                // compares by value. Leaving the header out made the server refuse the call.
                _ => n.to_string(),
            },
            _ => continue,
        };
        out.push((header.name.clone(), text));
    }
    out
}

/// Encodes a value for `Mcp-Name` or `Mcp-Param-*`: as is when it is visible ASCII or inner
/// spaces with no leading or trailing whitespace and does not look like the sentinel, else
/// `=?base64?<base64 of UTF-8>?=`.
pub fn encode_value(value: &str) -> String {
    let visible = value.bytes().all(|b| (0x20..=0x7e).contains(&b));
    let padded = value.starts_with(' ') || value.ends_with(' ');
    let sentinel = value.starts_with("=?base64?") && value.ends_with("?=");
    let plain = visible && !padded && !sentinel;
    if plain {
        value.to_string()
    } else {
        format!("=?base64?{}?=", base64::engine::general_purpose::STANDARD.encode(value.as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn encodes_values_as_the_spec_table_says() {
        assert_eq!(encode_value("us-west1"), "us-west1");
        assert_eq!(encode_value("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
        assert_eq!(encode_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(encode_value("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(encode_value("=?base64?literal?="), "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=");
        assert_eq!(encode_value("a\tb"), "=?base64?YQli?=");
        assert_eq!(encode_value(""), "");
        assert_eq!(encode_value("inner space"), "inner space");
    }

    #[test]
    fn finds_nested_annotations_and_extracts_values() {
        let schema = json!({"type":"object","properties":{
            "region":{"type":"string","x-mcp-header":"Region"},
            "n":{"type":"integer","x-mcp-header":"N"},
            "flag":{"type":["boolean","null"],"x-mcp-header":"Flag"},
            "outer":{"type":"object","properties":{"inner":{"type":"string","x-mcp-header":"Inner"}}},
            "q":{"type":"string"}}});
        let headers = param_headers(&schema).unwrap();
        assert_eq!(headers.len(), 4);
        let args = json!({"region":"eu","n":42,"flag":null,"outer":{"inner":"x y"},"q":"SELECT 1"});
        let mut values = header_values(&headers, args.as_object());
        values.sort();
        assert_eq!(
            values,
            vec![("Inner".into(), "x y".into()), ("N".into(), "42".into()), ("Region".into(), "eu".into())]
        );
    }

    #[test]
    fn numbers_beyond_the_safe_integers_are_mirrored_too() {
        // Found by tests/fuzz_headers.rs: an integer written as a float past 2^53 (valid for an
        // `integer` property) got no header, and the server refused the call (-32020).
        let schema = json!({"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"}}});
        let headers = param_headers(&schema).unwrap();
        let values = |n: Value| header_values(&headers, json!({ "n": n }).as_object());
        assert_eq!(values(json!(1e20)), vec![("N".into(), "1e+20".into())]);
        assert_eq!(
            values(json!(-1.1350019016785793e48)),
            vec![("N".into(), "-1.1350019016785793e+48".into())]
        );
        assert_eq!(values(json!(2.5)), vec![("N".into(), "2.5".into())]);
        assert_eq!(values(json!(3.0)), vec![("N".into(), "3".into())]);
        assert_eq!(values(json!(u64::MAX)), vec![("N".into(), u64::MAX.to_string())]);
    }

    #[test]
    fn rejects_invalid_annotations() {
        let bad = [
            json!({"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}),
            json!({"type":"object","properties":{"a":{"type":"object","x-mcp-header":"A"}}}),
            json!({"type":"object","properties":{"a":{"type":"array","x-mcp-header":"A"}}}),
            json!({"type":"object","properties":{"a":{"type":"null","x-mcp-header":"A"}}}),
            json!({"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}),
            json!({"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"},"b":{"type":"string","x-mcp-header":"a"}}}),
            json!({"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A B"}}}),
            json!({"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A:B"}}}),
            json!({"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Régión"}}}),
            json!({"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A\u{1}"}}}),
            json!({"type":"object","properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}),
            json!({"type":"object","oneOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}),
            json!({"type":"object","$defs":{"d":{"type":"string","x-mcp-header":"A"}}}),
        ];
        for schema in bad {
            assert!(param_headers(&schema).is_err(), "{schema}");
        }
    }
}
