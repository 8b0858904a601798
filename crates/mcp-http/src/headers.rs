//! The standard request headers of 2026-07-28 (`MCP-Protocol-Version`, `Mcp-Method`,
//! `Mcp-Name`, `Mcp-Param-*`), checked against the body: a mismatch is `400` `-32020`
//! (HeaderMismatch), so a proxy routing on headers and the server executing the body can
//! never disagree. What a header must say is `mcp_types::headers`' rule, shared with the
//! client; this module reads the header map and turns a disagreement into the error.

use http::header::AsHeaderName;
use http::{HeaderMap, HeaderName};
use mcp_types::headers::ParamHeader;
use mcp_types::{ErrorObject, JsonObject};

/// Decodes a header value that may use the Base64 sentinel form `=?base64?…?=`.
pub fn decode_value(raw: &str) -> Result<String, ErrorObject> {
    decode_borrowed(raw).map(std::borrow::Cow::into_owned)
}

fn decode_borrowed(raw: &str) -> Result<std::borrow::Cow<'_, str>, ErrorObject> {
    mcp_types::headers::decode_value_borrowed(raw)
        .map_err(|why| ErrorObject::header_mismatch(format!("Header mismatch: {why} in {raw:?}")))
}

/// The standard headers' names (`mcp_types::headers`), made once: a lookup by a `&str` parses
/// and checks the name again each time.
pub(crate) const MCP_PROTOCOL_VERSION: HeaderName =
    HeaderName::from_static(mcp_types::headers::PROTOCOL_VERSION);
pub(crate) const MCP_SESSION_ID: HeaderName = HeaderName::from_static(mcp_types::headers::SESSION_ID);
pub(crate) const MCP_METHOD: HeaderName = HeaderName::from_static(mcp_types::headers::METHOD);
const MCP_NAME: HeaderName = HeaderName::from_static(mcp_types::headers::NAME);

/// A header's one value, trimmed (header values read with `to_str` are visible ASCII and tabs,
/// so `trim_ascii` trims what `trim` would, without decoding characters).
fn header<K>(headers: &HeaderMap, name: K) -> Result<Option<&str>, ErrorObject>
where
    K: AsHeaderName + std::fmt::Display + Copy,
{
    let mut values = headers.get_all(name).iter();
    let Some(first) = values.next() else { return Ok(None) };
    if values.next().is_some() {
        return Err(ErrorObject::header_mismatch(format!("Header mismatch: {name} appears more than once")));
    }
    first
        .to_str()
        .map(|v| Some(v.trim_ascii()))
        .map_err(|_| ErrorObject::header_mismatch(format!("Header mismatch: {name} has invalid characters")))
}

fn required<K>(headers: &HeaderMap, name: K) -> Result<&str, ErrorObject>
where
    K: AsHeaderName + std::fmt::Display + Copy,
{
    header(headers, name)?
        .ok_or_else(|| ErrorObject::header_mismatch(format!("Header mismatch: {name} is missing")))
}

fn mismatch(name: &str, header: &str, body: &str) -> ErrorObject {
    ErrorObject::header_mismatch(format!(
        "Header mismatch: {name} header value {header:?} does not match body value {body:?}"
    ))
}

/// Checks the standard headers against the body of a modern request. `name` is what the body
/// names for `Mcp-Name` — the `name` of `tools/call`/`prompts/get`, the `uri` of
/// `resources/read` (`""` when the body lacks it) — and `None` for methods without one.
pub(crate) fn check_standard(
    headers: &HeaderMap,
    method: &str,
    protocol_version: &str,
    name: Option<&str>,
) -> Result<(), ErrorObject> {
    let version = required(headers, &MCP_PROTOCOL_VERSION)?;
    if version != protocol_version {
        return Err(mismatch("MCP-Protocol-Version", version, protocol_version));
    }
    let named = required(headers, &MCP_METHOD)?;
    if named != method {
        return Err(mismatch("Mcp-Method", named, method));
    }
    if let Some(body) = name {
        let value = decode_borrowed(required(headers, &MCP_NAME)?)?;
        if value != body {
            return Err(mismatch("Mcp-Name", &value, body));
        }
    }
    Ok(())
}

/// The `x-mcp-header` annotations of a tool's input schema, nested ones included. A schema
/// whose annotations are invalid has none to check: clients drop such a tool, and a server
/// cannot ask a header the rule does not define.
pub fn annotated_parameters(schema: &JsonObject) -> Vec<ParamHeader> {
    mcp_types::headers::param_headers(schema).unwrap_or_default()
}

/// Checks `Mcp-Param-{Name}` headers against the tool arguments they mirror.
pub fn check_parameters(
    headers: &HeaderMap,
    annotations: &[ParamHeader],
    arguments: Option<&JsonObject>,
) -> Result<(), ErrorObject> {
    for param in annotations {
        let raw = header(headers, format!("mcp-param-{}", param.name.to_ascii_lowercase()).as_str())?;
        param
            .verify(raw, arguments)
            .map_err(|e| ErrorObject::header_mismatch(format!("Header mismatch: {}", e.describe(param))))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;
    use mcp_types::JsonValue;
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
        let p = Some("get weather");
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

    fn table_headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (name, value) in pairs {
            // As a client's transport writes them: `Mcp-Param-` and the declared name.
            let name = http::HeaderName::from_bytes(format!("Mcp-Param-{name}").as_bytes()).unwrap();
            h.append(name, HeaderValue::from_str(value).unwrap());
        }
        h
    }

    fn table_check(schema: &str, arguments: &str, headers: &[(&str, &str)]) -> Result<(), ErrorObject> {
        let schema: JsonObject = serde_json::from_str(schema).unwrap();
        let arguments: JsonValue = serde_json::from_str(arguments).unwrap();
        check_parameters(&table_headers(headers), &annotated_parameters(&schema), arguments.as_object())
    }

    #[test]
    fn the_shared_table_is_accepted_and_its_refusals_refused() {
        use mcp_types::headers::table::{MIRRORS, REFUSALS};
        for row in MIRRORS {
            let checked = table_check(row.schema, row.arguments, row.headers);
            assert!(checked.is_ok(), "{}: {:?}", row.what, checked.map_err(|e| e.message));
        }
        for row in REFUSALS {
            let refused = table_check(row.schema, row.arguments, row.headers).unwrap_err();
            assert_eq!(refused.code, -32020, "{}", row.what);
            assert!(
                refused.message.starts_with("Header mismatch: Mcp-Param-"),
                "{}: {}",
                row.what,
                refused.message
            );
        }
    }

    #[test]
    fn the_shared_table_decodes_the_same() {
        for row in mcp_types::headers::table::DECODINGS {
            let decoded = decode_value(row.raw);
            assert_eq!(decoded.as_ref().ok().map(String::as_str), row.decoded, "{}", row.raw);
            if let Err(e) = decoded {
                assert_eq!(e.code, -32020, "{}", row.raw);
            }
        }
    }

    #[test]
    fn a_nested_parameter_is_checked_at_its_path() {
        let schema = json!({"type": "object", "properties": {"outer": {"type": "object",
            "properties": {"inner": {"type": "string", "x-mcp-header": "Inner"}}}}});
        let annotations = annotated_parameters(schema.as_object().unwrap());
        let args = json!({"outer": {"inner": "x"}});
        assert!(check_parameters(&map(&[("mcp-param-inner", "x")]), &annotations, args.as_object()).is_ok());
        let wrong = check_parameters(&map(&[("mcp-param-inner", "y")]), &annotations, args.as_object());
        assert!(wrong.unwrap_err().message.contains("outer.inner"));
        assert!(check_parameters(&map(&[]), &annotations, args.as_object()).is_err());
        let twice = map(&[("mcp-param-inner", "x"), ("mcp-param-inner", "x")]);
        assert!(check_parameters(&twice, &annotations, args.as_object()).is_err(), "repeated");
    }
}
