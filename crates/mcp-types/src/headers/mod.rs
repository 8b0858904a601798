//! SEP-2243 on the wire, in one place for the client and the server: which tool arguments are
//! mirrored into `Mcp-Param-{Name}` headers, how a value is written into a header (`Mcp-Name`
//! too) and read back, and when a header agrees with the argument it mirrors. Pure functions:
//! no IO, no HTTP types; the transports turn these answers into header maps and errors.
//!
//! The rules, from the 2026-07-28 transports page and its `x-mcp-header` clarification:
//!
//! * The annotation "MUST only appear on properties that are statically reachable from the
//!   inputSchema root via a chain of `properties` keys"; the chain never passes through `items`,
//!   `oneOf`/`anyOf`/`allOf`/`not`, `if`/`then`/`else`, `$ref` or any other keyword. An
//!   annotation anywhere else, on a property that is not a string, integer or boolean, that is
//!   not an HTTP token, or that repeats another ignoring case makes the whole tool invalid.
//! * The value is read at the annotated property's exact `properties` path in the arguments;
//!   when nothing (or `null`) is there, the header is omitted.
//! * A string is sent as is when it is visible ASCII (inner spaces allowed) without leading or
//!   trailing spaces and does not itself look like the sentinel; otherwise as
//!   `=?base64?{Base64 of its UTF-8}?=`. Integers are written in decimal (an integer written as
//!   a float past 2^53 as serde_json writes the number), booleans as `true` / `false`.
//!
//! [`table`] holds the cases both sides run.

mod base64;
#[doc(hidden)]
pub mod table;
#[cfg(test)]
mod tests;

use std::fmt;

use crate::json::{JsonObject, JsonValue};

/// The standard headers' names, lower-case as HTTP/2 sends them and `http::HeaderName` keeps
/// them (names are case-insensitive): one home for the client that sends them and the server
/// that checks them.
pub const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// `Mcp-Session-Id` (legacy revisions' sessions).
pub const SESSION_ID: &str = "mcp-session-id";
/// `Mcp-Method` (2026-07-28).
pub const METHOD: &str = "mcp-method";
/// `Mcp-Name` (2026-07-28).
pub const NAME: &str = "mcp-name";

const SENTINEL_PREFIX: &str = "=?base64?";
const SENTINEL_SUFFIX: &str = "?=";
/// 2^53: past it, an `f64` no longer holds every integer.
const SAFE_INTEGER_LIMIT: f64 = 9_007_199_254_740_992.0;

/// The primitive type of a mirrored property.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Primitive {
    /// `"type": "string"`.
    String,
    /// `"type": "integer"`.
    Integer,
    /// `"type": "boolean"`.
    Boolean,
}

/// One mirrored argument, as an input schema declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamHeader {
    /// The `{Name}` of `Mcp-Param-{Name}`, as declared (compare it ignoring case).
    pub name: String,
    /// The `properties` keys from the schema root to the annotated property.
    pub path: Vec<String>,
    /// The property's declared type (a `null` alternative aside).
    pub kind: Primitive,
}

/// Why a tool's `x-mcp-header` annotations make it invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidAnnotation(pub String);

/// Why a header value in the sentinel form does not decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidSentinel {
    /// The text between `=?base64?` and `?=` is not canonical padded standard Base64.
    #[error("invalid Base64")]
    Base64,
    /// The decoded bytes are not UTF-8.
    #[error("Base64 value is not UTF-8")]
    Utf8,
}

/// How an `Mcp-Param-{Name}` header disagrees with the argument it mirrors.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParamMismatch {
    /// The argument has a value and the header is absent.
    Missing,
    /// The header is present and the argument has no value.
    Unexpected,
    /// The header is in the sentinel form and does not decode.
    Undecodable(InvalidSentinel),
    /// Both are present and differ.
    Different {
        /// The header's decoded value.
        header: String,
        /// The argument, as JSON.
        body: String,
    },
}

impl ParamMismatch {
    /// The message for `-32020`, naming the header and the argument's path.
    pub fn describe(&self, param: &ParamHeader) -> String {
        let name = &param.name;
        let path = param.path.join(".");
        match self {
            Self::Missing => format!("Mcp-Param-{name} is missing"),
            Self::Unexpected => format!("Mcp-Param-{name} is present but {path} is not in the arguments"),
            Self::Undecodable(why) => format!("Mcp-Param-{name}: {why}"),
            Self::Different { header, body } => {
                format!(
                    "Mcp-Param-{name} header value {header:?} does not match body value {body:?} at {path}"
                )
            }
        }
    }
}

impl fmt::Display for Primitive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::String => "string",
            Self::Integer => "integer",
            Self::Boolean => "boolean",
        })
    }
}

/// The `x-mcp-header` annotations of an input schema, in the schema's key order, or why the
/// tool is invalid.
pub fn param_headers(input_schema: &JsonObject) -> Result<Vec<ParamHeader>, InvalidAnnotation> {
    let mut found = Vec::new();
    walk_schema(input_schema, &mut Vec::new(), true, &mut found).map_err(InvalidAnnotation)?;
    let mut seen: Vec<String> = Vec::with_capacity(found.len());
    for header in &found {
        let lower = header.name.to_ascii_lowercase();
        if seen.contains(&lower) {
            return Err(InvalidAnnotation(format!(
                "x-mcp-header {:?} is declared twice (names are case-insensitive)",
                header.name
            )));
        }
        seen.push(lower);
    }
    Ok(found)
}

/// Keywords whose value is data, not a schema: an `x-mcp-header` key inside is no annotation.
const DATA_KEYWORDS: [&str; 4] = ["const", "default", "enum", "examples"];
/// Keywords whose value maps names to subschemas (none of them statically reachable).
const SCHEMA_MAPS: [&str; 4] = ["$defs", "definitions", "patternProperties", "dependentSchemas"];

fn walk(
    node: &JsonValue,
    path: &mut Vec<String>,
    reachable: bool,
    out: &mut Vec<ParamHeader>,
) -> Result<(), String> {
    match node {
        JsonValue::Object(map) => walk_schema(map, path, reachable, out),
        JsonValue::Array(items) => items.iter().try_for_each(|item| walk(item, path, false, out)),
        _ => Ok(()),
    }
}

fn walk_schema(
    map: &JsonObject,
    path: &mut Vec<String>,
    reachable: bool,
    out: &mut Vec<ParamHeader>,
) -> Result<(), String> {
    if let Some(annotation) = map.get("x-mcp-header") {
        let here = if path.is_empty() { "the schema root".to_owned() } else { path.join(".") };
        if !reachable || path.is_empty() {
            return Err(format!("x-mcp-header at {here} is not statically reachable through properties"));
        }
        let name = annotation.as_str().ok_or_else(|| format!("x-mcp-header at {here} is not a string"))?;
        check_header_name(name).map_err(|why| format!("x-mcp-header {name:?} at {here}: {why}"))?;
        let kind = primitive(map).map_err(|why| format!("x-mcp-header {name:?} at {here}: {why}"))?;
        out.push(ParamHeader { name: name.to_owned(), path: path.clone(), kind });
    }
    for (key, child) in map {
        match (key.as_str(), child) {
            ("x-mcp-header", _) => {}
            (k, _) if DATA_KEYWORDS.contains(&k) => {}
            ("properties", JsonValue::Object(properties)) => {
                for (property, schema) in properties {
                    path.push(property.clone());
                    let result = walk(schema, path, reachable, out);
                    path.pop();
                    result?;
                }
            }
            (k, JsonValue::Object(schemas)) if SCHEMA_MAPS.contains(&k) => {
                schemas.values().try_for_each(|schema| walk(schema, path, false, out))?;
            }
            // Any other keyword's subschemas (items, oneOf, not, if/then, ...) are not statically
            // reachable: an annotation inside them invalidates the tool.
            _ => walk(child, path, false, out)?,
        }
    }
    Ok(())
}

/// Whether `name` may follow `Mcp-Param-`: a non-empty HTTP field-name token (RFC 9110 §5.1).
pub fn check_header_name(name: &str) -> Result<(), &'static str> {
    if name.is_empty() {
        return Err("empty name");
    }
    let tchar = |c: u8| c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c);
    if !name.bytes().all(tchar) {
        return Err("not an HTTP field-name token (space, colon, control or non-ASCII character)");
    }
    Ok(())
}

fn primitive(schema: &JsonObject) -> Result<Primitive, &'static str> {
    let of = |t: &str| match t {
        "string" => Some(Primitive::String),
        "integer" => Some(Primitive::Integer),
        "boolean" => Some(Primitive::Boolean),
        _ => None,
    };
    const NOT_PRIMITIVE: &str = "only string, integer and boolean properties may be mirrored";
    match schema.get("type") {
        Some(JsonValue::String(t)) => of(t).ok_or(NOT_PRIMITIVE),
        Some(JsonValue::Array(types)) => {
            let mut found = None;
            for t in types {
                match t.as_str() {
                    Some("null") => {}
                    Some(t) if found.is_none() => found = Some(of(t).ok_or(NOT_PRIMITIVE)?),
                    Some(t) if of(t).is_some() => return Err("only one primitive type may be mirrored"),
                    _ => return Err(NOT_PRIMITIVE),
                }
            }
            found.ok_or(NOT_PRIMITIVE)
        }
        Some(_) => Err(NOT_PRIMITIVE),
        None => Err("the mirrored property must declare its type"),
    }
}

impl ParamHeader {
    /// The argument this header mirrors: the string, boolean or number at [`Self::path`];
    /// `None` when nothing, `null` or a non-primitive is there (then no header is sent).
    pub fn argument<'a>(&self, arguments: Option<&'a JsonObject>) -> Option<&'a JsonValue> {
        let (last, parents) = self.path.split_last()?;
        let mut level = arguments?;
        for key in parents {
            level = level.get(key)?.as_object()?;
        }
        level
            .get(last)
            .filter(|v| matches!(v, JsonValue::String(_) | JsonValue::Bool(_) | JsonValue::Number(_)))
    }

    /// Whether the header `raw` (`None`: absent; trimmed of surrounding whitespace) agrees with
    /// the arguments of a call.
    pub fn verify(&self, raw: Option<&str>, arguments: Option<&JsonObject>) -> Result<(), ParamMismatch> {
        match (raw, self.argument(arguments)) {
            (None, None) => Ok(()),
            (Some(_), None) => Err(ParamMismatch::Unexpected),
            (None, Some(_)) => Err(ParamMismatch::Missing),
            (Some(raw), Some(value)) => {
                let decoded = decode_value(raw).map_err(ParamMismatch::Undecodable)?;
                if header_matches(&decoded, value) {
                    Ok(())
                } else {
                    Err(ParamMismatch::Different { header: decoded, body: value.to_string() })
                }
            }
        }
    }
}

/// The headers for one call: `(Name, value)` for every annotated argument present, in the
/// order of `headers`.
pub fn header_values(headers: &[ParamHeader], arguments: Option<&JsonObject>) -> Vec<(String, String)> {
    headers.iter().filter_map(|h| Some((h.name.clone(), header_value(h.argument(arguments)?)?))).collect()
}

/// A primitive JSON value as a header value; `None` for `null`, arrays and objects.
pub fn header_value(value: &JsonValue) -> Option<String> {
    match value {
        JsonValue::String(s) => Some(encode_value(s)),
        JsonValue::Bool(b) => Some(b.to_string()),
        JsonValue::Number(n) => Some(match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => i.to_string(),
            (_, Some(u), _) => u.to_string(),
            (_, _, Some(f)) if f.fract() == 0.0 && f.abs() < SAFE_INTEGER_LIMIT => format!("{}", f as i64),
            // Past 2^53 (or a fraction): the number as serde_json writes it, which the other
            // side compares by value.
            _ => n.to_string(),
        }),
        _ => None,
    }
}

/// Encodes a string for `Mcp-Name` or `Mcp-Param-*`: as is when it is visible ASCII (inner
/// spaces allowed) with no leading or trailing space and does not look like the sentinel,
/// else `=?base64?…?=`.
pub fn encode_value(value: &str) -> String {
    let visible = value.bytes().all(|b| (0x20..=0x7e).contains(&b));
    let padded = value.starts_with(' ') || value.ends_with(' ');
    if visible && !padded && sentinel(value).is_none() {
        value.to_owned()
    } else {
        format!("{SENTINEL_PREFIX}{}{SENTINEL_SUFFIX}", base64::encode(value.as_bytes()))
    }
}

fn sentinel(raw: &str) -> Option<&str> {
    raw.strip_prefix(SENTINEL_PREFIX)?.strip_suffix(SENTINEL_SUFFIX)
}

/// Decodes a header value: the sentinel form to the string it carries, any other value as is.
pub fn decode_value(raw: &str) -> Result<String, InvalidSentinel> {
    decode_value_borrowed(raw).map(std::borrow::Cow::into_owned)
}

/// [`decode_value`], borrowing a value that is not in the sentinel form instead of copying it
/// (a server checks `Mcp-Name` on every call).
pub fn decode_value_borrowed(raw: &str) -> Result<std::borrow::Cow<'_, str>, InvalidSentinel> {
    match sentinel(raw) {
        Some(inner) => String::from_utf8(base64::decode(inner).ok_or(InvalidSentinel::Base64)?)
            .map(std::borrow::Cow::Owned)
            .map_err(|_| InvalidSentinel::Utf8),
        None => Ok(std::borrow::Cow::Borrowed(raw)),
    }
}

/// Whether a decoded header value is the argument `value`: strings exactly (case-sensitive),
/// booleans as `true` / `false`, numbers by value (`42.0` is `42`; past 2^53 an integer must
/// be written exactly).
pub fn header_matches(decoded: &str, value: &JsonValue) -> bool {
    match value {
        JsonValue::String(s) => s == decoded,
        JsonValue::Bool(b) => decoded == if *b { "true" } else { "false" },
        JsonValue::Number(n) => {
            if header_value(value).as_deref() == Some(decoded) {
                return true;
            }
            let exact = n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from));
            match (exact, decoded.parse::<i128>()) {
                (Some(body), Ok(header)) => return body == header,
                // Past 2^53 an f64 comparison would accept neighbouring integers.
                (Some(body), Err(_)) if body.unsigned_abs() > 1 << 53 => return false,
                _ => {}
            }
            decoded.parse::<f64>().ok().zip(n.as_f64()).is_some_and(|(h, b)| h.is_finite() && h == b)
        }
        _ => false,
    }
}
