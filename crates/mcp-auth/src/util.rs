//! Small shared helpers: base64url, randomness, strict JSON objects, clocks.

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// base64url without padding (RFC 7515 §2).
pub(crate) fn b64_encode(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

/// Strict base64url without padding: no `=`, no `+`/`/`, no whitespace, canonical trailing bits.
pub(crate) fn b64_decode(text: &str) -> Option<Vec<u8>> {
    URL_SAFE_NO_PAD.decode(text).ok()
}

/// Equality whose running time depends on the lengths only, not on where the bytes differ.
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `len` bytes from the operating system's CSPRNG.
pub(crate) fn random_bytes(len: usize) -> Result<Vec<u8>, getrandom::Error> {
    let mut buf = vec![0u8; len];
    getrandom::fill(&mut buf)?;
    Ok(buf)
}

/// Seconds since the Unix epoch of `now` (or the current time), with the fraction.
pub(crate) fn unix_seconds(now: Option<SystemTime>) -> f64 {
    let now = now.unwrap_or_else(SystemTime::now);
    match now.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs_f64(),
        Err(e) => -e.duration().as_secs_f64(),
    }
}

/// Parses `bytes` as one JSON object, refusing duplicate member names at every depth.
///
/// `serde_json::Value` keeps the last of duplicate members; for security-relevant JSON (JOSE
/// headers and claims) two parsers could then disagree on what a token says, so duplicates are
/// an error here (RFC 7515 §4 allows either rejecting them or taking the last).
pub(crate) fn parse_strict_object(bytes: &[u8]) -> Option<Map<String, Value>> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = de.deserialize_any(StrictVisitor).ok()?;
    de.end().ok()?;
    match value {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

struct StrictValue(Value);

impl<'de> serde::Deserialize<'de> for StrictValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrictVisitor).map(StrictValue)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value without duplicate object members")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Number::from_f64(v).map(Value::Number).ok_or_else(|| E::custom("number out of range"))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(StrictValue(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            if map.contains_key(&key) {
                return Err(de::Error::custom("duplicate object member"));
            }
            let StrictValue(v) = access.next_value()?;
            map.insert(key, v);
        }
        Ok(Value::Object(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_object_accepts_plain_objects() {
        let m = parse_strict_object(br#"{"a":1,"b":[true,null,"x",1.5,{"c":-2}]}"#).unwrap();
        assert_eq!(m["b"][4]["c"], -2);
        assert_eq!(m["b"][3], 1.5);
    }

    #[test]
    fn strict_object_refuses_duplicates_at_any_depth_and_non_objects() {
        assert!(parse_strict_object(br#"{"a":1,"a":2}"#).is_none());
        assert!(parse_strict_object(br#"{"a":{"b":1,"b":1}}"#).is_none());
        assert!(parse_strict_object(br#"{"a":[{"b":1,"b":1}]}"#).is_none());
        assert!(parse_strict_object(br#"[1]"#).is_none());
        assert!(parse_strict_object(br#""x""#).is_none());
        assert!(parse_strict_object(br#"{"a":1} x"#).is_none());
        assert!(parse_strict_object(b"").is_none());
    }

    #[test]
    fn b64_is_strict() {
        assert_eq!(b64_decode("AQAB"), Some(vec![1, 0, 1]));
        assert_eq!(b64_encode(&[0xfb, 0xff]), "-_8");
        assert!(b64_decode("AQAB=").is_none());
        assert!(b64_decode("+/8").is_none());
        assert!(b64_decode("A Q").is_none());
        // Non-canonical trailing bits.
        assert!(b64_decode("-_9").is_none());
    }
}
