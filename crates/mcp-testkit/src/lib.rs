//! Test support for mcpkit (never a runtime dependency): where the specification lives, schema validation against `schema.json` of a
//! revision, and JSON equality that compares numbers by value.

#![warn(missing_docs)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;

pub mod process;
pub mod tls;

/// The specification data the tests read: `$MCPKIT_SPEC_DIR` when set, otherwise the repository's
/// own `spec/` folder (see `spec/README.md`).
pub fn spec_dir() -> PathBuf {
    let dir = std::env::var_os("MCPKIT_SPEC_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../spec"));
    assert!(
        dir.join("2026-07-28/schema.json").is_file(),
        "the MCP specification was not found at {} (set MCPKIT_SPEC_DIR)",
        dir.display()
    );
    dir
}

/// A retriever that refuses every external reference: the spec's schemas are self-contained,
/// and a schema that reaches out must fail, never fetch.
struct NoRetrieval;

impl jsonschema::Retrieve for NoRetrieval {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Err(format!("refusing to retrieve {uri}").into())
    }
}

type Cache = Mutex<HashMap<(String, String), Arc<jsonschema::Validator>>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

fn schema_of(revision: &str) -> Value {
    static SCHEMAS: OnceLock<Mutex<HashMap<String, Value>>> = OnceLock::new();
    let schemas = SCHEMAS.get_or_init(Default::default);
    let mut schemas = schemas.lock().unwrap();
    schemas
        .entry(revision.to_owned())
        .or_insert_with(|| {
            let path = spec_dir().join(revision).join("schema.json");
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            serde_json::from_str(&text).unwrap()
        })
        .clone()
}

fn validator(revision: &str, def: &str) -> Arc<jsonschema::Validator> {
    let key = (revision.to_owned(), def.to_owned());
    if let Some(v) = cache().lock().unwrap().get(&key) {
        return v.clone();
    }
    let full = schema_of(revision);
    // 2024-11-05 is draft-07 with `definitions`; later revisions are 2020-12 with `$defs`.
    let (defs_key, draft) = if full.get("$defs").is_some() {
        ("$defs", "https://json-schema.org/draft/2020-12/schema")
    } else {
        ("definitions", "http://json-schema.org/draft-07/schema#")
    };
    let defs = full[defs_key].clone();
    assert!(defs.get(def).is_some(), "{revision} schema has no definition {def}");
    let root = serde_json::json!({
        "$schema": draft,
        "$ref": format!("#/{defs_key}/{def}"),
        defs_key: defs,
    });
    let v = Arc::new(
        jsonschema::options()
            .with_retriever(NoRetrieval)
            .build(&root)
            .unwrap_or_else(|e| panic!("compiling {revision} {def}: {e}")),
    );
    cache().lock().unwrap().insert(key, v.clone());
    v
}

/// Asserts `value` is valid against definition `def` of revision `revision`'s schema.
pub fn assert_valid(revision: &str, def: &str, value: &Value) {
    let v = validator(revision, def);
    // The schema is the spec's own (trusted), so listing errors is safe here.
    let errors: Vec<String> =
        v.iter_errors(value).take(5).map(|e| format!("{e} at {}", e.instance_path())).collect();
    assert!(errors.is_empty(), "{value} is not a valid {revision} {def}: {errors:#?}");
}

/// True when `value` is valid against `def` of `revision`.
pub fn is_valid(revision: &str, def: &str, value: &Value) -> bool {
    validator(revision, def).is_valid(value)
}

/// JSON equality where numbers compare by value (JSON does not distinguish `50` and `50.0`).
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y || matches!((x.as_f64(), y.as_f64()), (Some(p), Some(q)) if p == q)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// Asserts a JSON-RPC message is valid for `revision`: against its envelope definition
/// (named per revision), and against the typed definition of its method where the schema has
/// one for a message of that direction.
pub fn assert_valid_message(revision: &str, message: &Value) {
    let modern_names = matches!(revision, "2025-11-25" | "2026-07-28");
    let def = if message.get("method").is_some() {
        if message.get("id").is_some() { "JSONRPCRequest" } else { "JSONRPCNotification" }
    } else if message.get("error").is_some() {
        if modern_names { "JSONRPCErrorResponse" } else { "JSONRPCError" }
    } else if modern_names {
        "JSONRPCResultResponse"
    } else {
        "JSONRPCResponse"
    };
    assert_valid(revision, def, message);
    let modern = revision == "2026-07-28";
    let typed = match message.get("method").and_then(Value::as_str) {
        Some("notifications/progress") => Some("ProgressNotification"),
        Some("notifications/message") => Some("LoggingMessageNotification"),
        Some("notifications/tools/list_changed") => Some("ToolListChangedNotification"),
        Some("notifications/prompts/list_changed") => Some("PromptListChangedNotification"),
        Some("notifications/resources/list_changed") => Some("ResourceListChangedNotification"),
        Some("notifications/resources/updated") => Some("ResourceUpdatedNotification"),
        Some("notifications/cancelled") => Some("CancelledNotification"),
        Some("notifications/subscriptions/acknowledged") if modern => {
            Some("SubscriptionsAcknowledgedNotification")
        }
        Some("sampling/createMessage") if !modern => Some("CreateMessageRequest"),
        Some("elicitation/create") if !modern && revision >= "2025-06-18" => Some("ElicitRequest"),
        Some("roots/list") if !modern => Some("ListRootsRequest"),
        _ => None,
    };
    if let Some(def) = typed {
        assert_valid(revision, def, message);
    }
}
