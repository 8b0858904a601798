//! Schemas derived from Rust types (schemars, JSON Schema 2020-12).

use mcp_types::{JsonObject, JsonValue};
use schemars::JsonSchema;

/// The JSON Schema of `T` as an object. A tool's `inputSchema` must be an object schema with
/// `"type": "object"`; a type whose schema is not an object yields `{"type": "object"}`.
pub fn schema_for<T: JsonSchema>() -> JsonObject {
    let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let schema = generator.into_root_schema_for::<T>();
    match schema.to_value() {
        JsonValue::Object(mut object) => {
            if !object.contains_key("type") && !object.contains_key("$ref") {
                object.insert("type".into(), "object".into());
            }
            object
        }
        _ => object_schema(),
    }
}

/// `{"type": "object"}`: the schema of a tool without arguments.
pub fn object_schema() -> JsonObject {
    let mut object = JsonObject::new();
    object.insert("type".into(), "object".into());
    object
}
