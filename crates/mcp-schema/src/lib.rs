//! JSON Schema as MCP uses it: tool `inputSchema` / `outputSchema` (2020-12 by default).
//!
//! What this crate does:
//! * compiles a schema once into a [`Schema`] that validates many instances;
//! * never dereferences a `$ref` outside the schema itself — the spec forbids fetching network
//!   `$ref`s, and the `jsonschema` crate's default features would (docs/DECISIONS.md trap 1); an
//!   unresolvable `$ref` makes the schema invalid instead of silently permissive;
//! * reports the first violation only, never the full list (listing every error of a hostile
//!   schema/instance pair can exhaust memory: docs/DECISIONS.md trap 2);
//! * checks schemas that come from a peer for complexity before compiling them
//!   ([`check_complexity`]).
//!
//! Plain schemas — only the keywords tool schemas usually have (`type`, `properties`,
//! `required`, bounds, `enum`, `anyOf` …, see `simple.rs`) — are checked by a small validator of
//! this crate, so that they cost neither `jsonschema`'s meta-schema validator (built once per
//! process, the larger part of a server's start-up) nor a `$ref` registry. Every other schema is
//! compiled by `jsonschema`, which checks it against its meta-schema and refuses it if invalid.
//!
//! What it does not do: fetch anything, or know about tools and messages.

#![warn(missing_docs)]

mod guard;
mod simple;

use std::sync::OnceLock;

use serde_json::Value;

pub use guard::{ComplexityError, Limits, check_complexity};

/// A compiled schema.
pub struct Schema {
    engine: Engine,
    /// A peer's schema: violations are reported without detail (see [`Schema::validate`]).
    untrusted: bool,
}

enum Engine {
    /// A plain schema, decided by this crate's validator. Describing a violation is left to
    /// `jsonschema` (the same messages and paths for every schema), compiled from `source` the
    /// first time an instance is invalid.
    Plain { node: simple::Node, source: Value, detail: OnceLock<Option<jsonschema::Validator>> },
    /// Every other schema.
    Full(jsonschema::Validator),
}

impl std::fmt::Debug for Schema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Schema").finish_non_exhaustive()
    }
}

/// Why a schema could not be compiled.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// The schema is not a valid JSON Schema, or refers to something outside itself.
    #[error("invalid JSON Schema: {0}")]
    Invalid(String),
    /// The schema is too complex to validate safely.
    #[error(transparent)]
    TooComplex(#[from] ComplexityError),
}

/// One violation of a schema by an instance.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}{}", if path.is_empty() { String::new() } else { format!(" (at {path})") })]
#[non_exhaustive]
pub struct Violation {
    /// What is wrong.
    pub message: String,
    /// A JSON Pointer to the offending part of the instance (empty for the root).
    pub path: String,
}

/// Most backtracking steps one regex match may take (fancy-regex's own default is 1,000,000).
const REGEX_BACKTRACK_LIMIT: usize = 100_000;

/// A retriever that refuses every external reference.
struct NoRetrieval;

impl jsonschema::Retrieve for NoRetrieval {
    fn retrieve(
        &self,
        uri: &jsonschema::Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Err(format!("external $ref {uri} is not fetched").into())
    }
}

impl Schema {
    /// Compiles a schema the application wrote itself (trusted: no complexity check).
    ///
    /// A plain schema (see the crate documentation) is checked by this crate's validator; any
    /// other is compiled by `jsonschema`, after its check against the meta-schema. Either way
    /// an invalid schema is an error here, never a schema that admits everything.
    ///
    /// Regexes (`pattern`, `patternProperties`) run on the `fancy-regex` engine with a backtrack
    /// limit of 100,000 per match: a match that would backtrack more fails, and the instance is
    /// reported invalid ("Max limit for backtracking count exceeded") instead of hanging.
    /// Patterns without backreferences or look-around run on the linear-time `regex` engine.
    pub fn compile(schema: &Value) -> Result<Self, SchemaError> {
        let engine = match simple::compile(schema) {
            Some(node) => Engine::Plain { node, source: schema.clone(), detail: OnceLock::new() },
            None => Engine::Full(full_validator(schema)?),
        };
        Ok(Schema { engine, untrusted: false })
    }

    /// Compiles a schema that came from a peer, after checking its complexity.
    pub fn compile_untrusted(schema: &Value, limits: &Limits) -> Result<Self, SchemaError> {
        check_complexity(schema, limits)?;
        let mut schema = Self::compile(schema)?;
        schema.untrusted = true;
        Ok(schema)
    }

    /// True when `instance` is valid.
    pub fn is_valid(&self, instance: &Value) -> bool {
        match &self.engine {
            Engine::Plain { node, .. } => node.is_valid(instance),
            Engine::Full(validator) => validator.is_valid(instance),
        }
    }

    /// True when this schema is checked by the crate's own validator for plain schemas rather
    /// than by `jsonschema` (see the crate documentation).
    pub fn is_plain(&self) -> bool {
        matches!(self.engine, Engine::Plain { .. })
    }

    /// The first violation, if any.
    ///
    /// Validity is decided by the memoizing `is_valid` first (fast even for recursive
    /// schemas); only an invalid instance is examined again for the first error, and only for
    /// schemas compiled with [`Schema::compile`]. Locating an error walks every branch of
    /// `anyOf`/`oneOf`, which a hostile recursive schema can make exponential in the depth of
    /// the instance, so a peer's schema ([`Schema::compile_untrusted`]) gets a violation
    /// without detail. The full error list is never built (docs/DECISIONS.md trap 2).
    ///
    /// The violation of a plain schema is described by `jsonschema`, compiled from the schema the
    /// first time an instance is invalid: the cost of its meta-schema validator falls on the
    /// first invalid call, not on the start of every process.
    pub fn validate(&self, instance: &Value) -> Result<(), Violation> {
        if self.is_valid(instance) {
            return Ok(());
        }
        let undetailed =
            || Violation { message: "the value does not match the schema".to_owned(), path: String::new() };
        if self.untrusted {
            return Err(undetailed());
        }
        let validator = match &self.engine {
            Engine::Full(validator) => validator,
            Engine::Plain { source, detail, .. } => {
                // A plain schema is valid by construction, so this compiles; should it not,
                // the instance is still refused.
                match detail.get_or_init(|| full_validator(source).ok()) {
                    Some(validator) => validator,
                    None => return Err(undetailed()),
                }
            }
        };
        match validator.validate(instance) {
            Ok(()) => Err(undetailed()),
            Err(e) => Err(Violation { message: e.to_string(), path: e.instance_path().to_string() }),
        }
    }
}

/// Compiles `schema` with `jsonschema`: checked against its meta-schema, `$ref`s resolved
/// inside the document only.
///
/// Regexes (`pattern`, `patternProperties`) run on the `fancy-regex` engine with a backtrack
/// limit of 100,000 per match: a match that would backtrack more fails, and the instance is
/// reported invalid ("Max limit for backtracking count exceeded") instead of hanging.
/// Patterns without backreferences or look-around run on the linear-time `regex` engine.
fn full_validator(schema: &Value) -> Result<jsonschema::Validator, SchemaError> {
    jsonschema::options()
        .with_retriever(NoRetrieval)
        .with_pattern_options(
            jsonschema::PatternOptions::fancy_regex().backtrack_limit(REGEX_BACKTRACK_LIMIT),
        )
        .should_validate_formats(false)
        .build(schema)
        .map_err(|e| SchemaError::Invalid(e.to_string()))
}

#[cfg(test)]
mod tests;
