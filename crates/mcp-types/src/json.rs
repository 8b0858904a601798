//! Plain JSON aliases shared by every wire type.

/// A JSON object (`JSONObject` in the schema). Keys are kept sorted (serde_json without
/// `preserve_order`): member order carries no meaning in JSON.
pub type JsonObject = serde_json::Map<String, serde_json::Value>;

/// Any JSON value (`JSONValue` in the schema).
pub type JsonValue = serde_json::Value;

/// A JSON array (`JSONArray` in the schema).
pub type JsonArray = Vec<serde_json::Value>;

/// The general `_meta` object (`MetaObject`) carried by content, resources and the like.
pub type MetaObject = JsonObject;
