//! Unit tests: compiling and validating, `$ref` containment, and (in `guard`) the complexity check.

mod guard;
mod plain;

use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::{Schema, SchemaError, Violation};

fn compile(schema: Value) -> Schema {
    Schema::compile(&schema).expect("schema compiles")
}

#[test]
fn validates_and_reports_the_first_violation_with_its_path() {
    let schema = compile(json!({
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}}
        },
        "required": ["name"]
    }));
    let good = json!({"name": "x", "tags": ["a"]});
    assert!(schema.is_valid(&good));
    assert_eq!(schema.validate(&good), Ok(()));

    let bad = json!({"name": "x", "tags": ["a", 2]});
    assert!(!schema.is_valid(&bad));
    let violation = schema.validate(&bad).expect_err("tags/1 is not a string");
    assert_eq!(violation.path, "/tags/1");
    assert!(violation.message.contains("string"), "{violation:?}");
    assert_eq!(violation.to_string(), format!("{} (at /tags/1)", violation.message));

    let missing = schema.validate(&json!({})).expect_err("name is required");
    assert_eq!(missing.path, "");
    assert!(missing.message.contains("name"), "{missing:?}");
}

#[test]
fn violation_display_omits_an_empty_path() {
    let at_root = Violation { message: "not an object".into(), path: String::new() };
    assert_eq!(at_root.to_string(), "not an object");
    let nested = Violation { message: "too long".into(), path: "/a/0".into() };
    assert_eq!(nested.to_string(), "too long (at /a/0)");
}

#[test]
fn defaults_to_2020_12_semantics() {
    let schema = compile(json!({"prefixItems": [{"type": "string"}], "items": false}));
    assert!(schema.is_valid(&json!(["a"])));
    assert!(!schema.is_valid(&json!(["a", 1])));
}

#[test]
fn detects_draft_07_from_dollar_schema() {
    // Array-form `items` with `additionalItems` is draft-07 tuple validation.
    let schema = compile(json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": {"name": {"type": "string"}},
        "type": "array",
        "items": [{"$ref": "#/definitions/name"}, {"type": "number"}],
        "additionalItems": false
    }));
    assert!(schema.is_valid(&json!(["a", 1])));
    assert!(!schema.is_valid(&json!([1, "a"])));
    assert!(!schema.is_valid(&json!(["a", 1, 2])));
}

#[test]
fn unresolvable_refs_make_the_schema_invalid() {
    for reference in [
        "https://example.invalid/schema.json",
        "other.json#/$defs/x",
        "file:///etc/passwd",
        "#/$defs/missing",
    ] {
        let result = Schema::compile(&json!({"$ref": reference}));
        assert!(matches!(result, Err(SchemaError::Invalid(_))), "{reference}: {result:?}");
    }
}

#[test]
fn local_refs_and_anchors_resolve() {
    let schema = compile(json!({
        "$defs": {"id": {"$anchor": "ident", "type": "string", "minLength": 1}},
        "properties": {"a": {"$ref": "#/$defs/id"}, "b": {"$ref": "#ident"}}
    }));
    assert!(schema.is_valid(&json!({"a": "x", "b": "y"})));
    let violation = schema.validate(&json!({"a": "x", "b": ""})).expect_err("b is empty");
    assert_eq!(violation.path, "/b");
}

/// A listener counting the connections it accepts, until told to stop (or 10 s at most).
struct Canary {
    port: u16,
    hits: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: thread::JoinHandle<()>,
}

impl Canary {
    fn start() -> Canary {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind canary");
        listener.set_nonblocking(true).expect("non-blocking canary");
        let port = listener.local_addr().expect("canary address").port();
        let hits = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (thread_hits, thread_stop) = (Arc::clone(&hits), Arc::clone(&stop));
        let thread = thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(10);
            while !thread_stop.load(Ordering::SeqCst) && Instant::now() < deadline {
                match listener.accept() {
                    Ok(_) => {
                        thread_hits.fetch_add(1, Ordering::SeqCst);
                    }
                    Err(_) => thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Canary { port, hits, stop, thread }
    }

    /// Waits a little for late connections, stops the listener and returns how many it saw.
    fn finish(self) -> usize {
        thread::sleep(Duration::from_millis(200));
        self.stop.store(true, Ordering::SeqCst);
        self.thread.join().expect("canary thread");
        self.hits.load(Ordering::SeqCst)
    }
}

#[test]
fn canary_external_refs_are_never_fetched() {
    let canary = Canary::start();
    let url = format!("http://127.0.0.1:{}/canary/profile-schema.json", canary.port);
    let schemas = [
        json!({"$ref": url}),
        json!({"type": "object", "properties": {"x": {"$ref": url}}}),
        json!({"$defs": {"p": {"$ref": format!("{url}#/$defs/profile")}}, "$ref": "#/$defs/p"}),
        json!({"$schema": url, "type": "object"}),
    ];
    let instance = json!({"x": {"name": "canary"}});
    for schema in &schemas {
        let strict = Schema::compile(schema);
        let guarded = Schema::compile_untrusted(schema, &crate::Limits::default());
        for compiled in [strict, guarded] {
            match compiled {
                Ok(schema) => {
                    let _ = schema.validate(&instance);
                    let _ = schema.is_valid(&instance);
                }
                Err(SchemaError::Invalid(_)) => {}
                Err(other) => panic!("unexpected error for {schema}: {other}"),
            }
        }
    }
    assert_eq!(canary.finish(), 0, "a $ref or $schema was fetched over the network");
}

#[test]
fn catastrophic_backtracking_is_cut_off() {
    // A backreference forces the backtracking engine; without a limit this takes ages.
    let schema = compile(json!({"type": "string", "pattern": "^(a|a)*\\1b$"}));
    let instance = json!("a".repeat(40));
    assert!(!schema.is_valid(&instance));
    let violation = schema.validate(&instance).expect_err("backtrack limit hit");
    assert!(violation.message.contains("backtrack"), "{violation:?}");
    assert!(schema.is_valid(&json!("aab")));
}
