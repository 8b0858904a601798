//! Buffering helpers for enums that dispatch on a member: they read the input into a JSON
//! tree that rejects a duplicate member at any depth (a plain `serde_json::Value` keeps the
//! last silently, which would defeat the duplicate check of the typed variant decoded
//! from the tree).

use std::fmt;

use serde::de::{self, DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::json::{JsonObject, JsonValue};

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = JsonValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<JsonValue, E> {
        Ok(JsonValue::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<JsonValue, E> {
        Ok(JsonValue::from(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<JsonValue, E> {
        Ok(JsonValue::from(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<JsonValue, E> {
        Ok(JsonValue::from(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<JsonValue, E> {
        Ok(JsonValue::String(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<JsonValue, E> {
        Ok(JsonValue::String(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<JsonValue, E> {
        Ok(JsonValue::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<JsonValue, E> {
        Ok(JsonValue::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<JsonValue, D::Error> {
        value(deserializer)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<JsonValue, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(Strict(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(JsonValue::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<JsonValue, A::Error> {
        ObjectVisitor.visit_map(map).map(JsonValue::Object)
    }
}

struct ObjectVisitor;

impl<'de> Visitor<'de> for ObjectVisitor {
    type Value = JsonObject;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<JsonObject, A::Error> {
        let mut object = JsonObject::new();
        while let Some(key) = map.next_key::<String>()? {
            let Strict(value) = map.next_value()?;
            if object.contains_key(&key) {
                return Err(de::Error::custom(format_args!("duplicate field `{key}`")));
            }
            object.insert(key, value);
        }
        Ok(object)
    }
}

struct Strict(JsonValue);

impl<'de> serde::Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        value(deserializer).map(Strict)
    }
}

/// Reads any JSON value, rejecting duplicate members at any depth.
pub(crate) fn value<'de, D: Deserializer<'de>>(deserializer: D) -> Result<JsonValue, D::Error> {
    deserializer.deserialize_any(ValueVisitor)
}

/// Reads a JSON object, rejecting duplicate members at any depth.
pub(crate) fn object<'de, D: Deserializer<'de>>(deserializer: D) -> Result<JsonObject, D::Error> {
    deserializer.deserialize_map(ObjectVisitor)
}

/// The string discriminator `key` of `object`: an error when missing or not a string.
pub(crate) fn tag<E: de::Error>(object: &JsonObject, key: &'static str) -> Result<String, E> {
    match object.get(key) {
        Some(JsonValue::String(s)) => Ok(s.clone()),
        Some(_) => Err(E::invalid_type(de::Unexpected::Other("non-string discriminator"), &"a string")),
        None => Err(E::missing_field(key)),
    }
}

/// Decodes a buffered object as `T`.
pub(crate) fn from_object<T: DeserializeOwned, E: de::Error>(object: JsonObject) -> Result<T, E> {
    T::deserialize(JsonValue::Object(object)).map_err(E::custom)
}
