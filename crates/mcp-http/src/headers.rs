//! The standard request headers of 2026-07-28 (`MCP-Protocol-Version`, `Mcp-Method`,
//! `Mcp-Name`, `Mcp-Param-*`), checked against the body: a mismatch is `400` `-32020`
//! (HeaderMismatch), so a proxy routing on headers and the server executing the body can
//! never disagree.

use base64::Engine as _;
use http::HeaderMap;
use mcp_types::{ErrorObject, JsonObject, JsonValue};

/// Decodes a header value that may use the Base64 sentinel form `=?base64?…?=`.
pub fn decode_value(raw: &str) -> Result<String, ErrorObject> {
    if let Some(inner) = raw.strip_prefix("=?base64?").and_then(|r| r.strip_suffix("?=")) {
        let bytes = base64::engine::general_purpose::STANDARD.decode(inner).map_err(|_| {
            ErrorObject::header_mismatch(format!("Header mismatch: invalid Base64 in {raw:?}"))
        })?;
        return String::from_utf8(bytes)
            .map_err(|_| ErrorObject::header_mismatch("Header mismatch: Base64 value is not UTF-8"));
    }
    Ok(raw.to_owned())
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Result<Option<&'a str>, ErrorObject> {
    let mut values = headers.get_all(name).iter();
    let Some(first) = values.next() else { return Ok(None) };
    if values.next().is_some() {
        return Err(ErrorObject::header_mismatch(format!("Header mismatch: {name} appears more than once")));
    }
    first
        .to_str()
        .map(|v| Some(v.trim()))
        .map_err(|_| ErrorObject::header_mismatch(format!("Header mismatch: {name} has invalid characters")))
}

fn required<'a>(headers: &'a HeaderMap, name: &str) -> Result<&'a str, ErrorObject> {
    header(headers, name)?
        .ok_or_else(|| ErrorObject::header_mismatch(format!("Header mismatch: {name} is missing")))
}

fn mismatch(name: &str, header: &str, body: &str) -> ErrorObject {
    ErrorObject::header_mismatch(format!(
        "Header mismatch: {name} header value {header:?} does not match body value {body:?}"
    ))
}

/// Checks the standard headers against the body of a modern request.
pub(crate) fn check_standard(
    headers: &HeaderMap,
    method: &str,
    protocol_version: &str,
    params: Option<&JsonObject>,
) -> Result<(), ErrorObject> {
    let version = required(headers, "mcp-protocol-version")?;
    if version != protocol_version {
        return Err(mismatch("MCP-Protocol-Version", version, protocol_version));
    }
    let named = required(headers, "mcp-method")?;
    if named != method {
        return Err(mismatch("Mcp-Method", named, method));
    }
    let source = match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    };
    if let Some(field) = source {
        let body = params.and_then(|p| p.get(field)).and_then(JsonValue::as_str).unwrap_or("");
        let value = decode_value(required(headers, "mcp-name")?)?;
        if value != body {
            return Err(mismatch("Mcp-Name", &value, body));
        }
    }
    Ok(())
}

/// The `x-mcp-header` annotations of a tool's input schema: header name → property name,
/// for top-level primitive properties.
pub fn annotated_parameters(schema: &JsonObject) -> Vec<(String, String)> {
    let Some(JsonValue::Object(properties)) = schema.get("properties") else { return Vec::new() };
    properties
        .iter()
        .filter_map(|(property, definition)| {
            let name = definition.get("x-mcp-header")?.as_str()?;
            Some((name.to_owned(), property.clone()))
        })
        .collect()
}

/// Checks `Mcp-Param-{Name}` headers against the tool arguments they mirror.
pub fn check_parameters(
    headers: &HeaderMap,
    annotations: &[(String, String)],
    arguments: Option<&JsonObject>,
) -> Result<(), ErrorObject> {
    for (name, property) in annotations {
        let header_name = format!("mcp-param-{}", name.to_ascii_lowercase());
        let header = header(headers, &header_name)?;
        let body = arguments.and_then(|a| a.get(property)).filter(|v| !v.is_null());
        match (header, body) {
            (None, None) => {}
            (Some(_), None) => {
                return Err(ErrorObject::header_mismatch(format!(
                    "Header mismatch: Mcp-Param-{name} is present but {property} is not in the arguments"
                )));
            }
            (None, Some(_)) => {
                return Err(ErrorObject::header_mismatch(format!(
                    "Header mismatch: Mcp-Param-{name} is missing"
                )));
            }
            (Some(raw), Some(value)) => {
                let decoded = decode_value(raw)?;
                let equal = match value {
                    JsonValue::String(s) => *s == decoded,
                    JsonValue::Bool(b) => decoded == b.to_string(),
                    JsonValue::Number(n) => {
                        decoded.parse::<f64>().ok().zip(n.as_f64()).is_some_and(|(h, b)| h == b)
                    }
                    _ => false,
                };
                if !equal {
                    return Err(mismatch(&format!("Mcp-Param-{name}"), &decoded, &value.to_string()));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;
    use serde_json::json;

    fn map(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn standard_headers_must_match_the_body() {
        let params = json!({"name": "get weather"});
        let p = params.as_object();
        let ok = map(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "=?base64?Z2V0IHdlYXRoZXI=?="),
        ]);
        assert!(check_standard(&ok, "tools/call", "2026-07-28", p).is_ok());
        let wrong = map(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "other"),
        ]);
        assert_eq!(check_standard(&wrong, "tools/call", "2026-07-28", p).unwrap_err().code, -32020);
        let case =
            map(&[("mcp-protocol-version", "2026-07-28"), ("mcp-method", "TOOLS/CALL"), ("mcp-name", "x")]);
        assert!(check_standard(&case, "tools/call", "2026-07-28", p).is_err(), "values are case-sensitive");
        let missing = map(&[("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/call")]);
        assert!(check_standard(&missing, "tools/call", "2026-07-28", p).is_err());
        assert!(
            check_standard(&map(&[("mcp-method", "tools/list")]), "tools/list", "2026-07-28", None).is_err()
        );
        let padded = map(&[("mcp-protocol-version", " 2026-07-28 "), ("mcp-method", " tools/list ")]);
        assert!(
            check_standard(&padded, "tools/list", "2026-07-28", None).is_ok(),
            "surrounding whitespace is accepted"
        );
    }

    #[test]
    fn parameters_are_decoded_and_compared() {
        let schema = json!({"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"},"q":{"type":"string"}}});
        let annotations = annotated_parameters(schema.as_object().unwrap());
        assert_eq!(annotations.len(), 2);
        let args = json!({"region": "us east", "n": 42, "q": "x"});
        let ok = map(&[("mcp-param-region", "=?base64?dXMgZWFzdA==?="), ("mcp-param-n", "42.0")]);
        assert!(check_parameters(&ok, &annotations, args.as_object()).is_ok());
        let missing = map(&[("mcp-param-n", "42")]);
        assert!(check_parameters(&missing, &annotations, args.as_object()).is_err());
        let bad_b64 = map(&[("mcp-param-region", "=?base64?dXMgZWFzdA=?="), ("mcp-param-n", "42")]);
        assert!(check_parameters(&bad_b64, &annotations, args.as_object()).is_err());
        let null_args = json!({"region": null});
        assert!(check_parameters(&map(&[]), &annotations, null_args.as_object()).is_ok());
    }
}
