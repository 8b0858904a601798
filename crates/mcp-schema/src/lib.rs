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
//! What it does not do: fetch anything, or know about tools and messages.

#![warn(missing_docs)]

mod guard;

use serde_json::Value;

pub use guard::{ComplexityError, Limits, check_complexity};

/// A compiled schema.
pub struct Schema {
    validator: jsonschema::Validator,
    /// A peer's schema: violations are reported without detail (see [`Schema::validate`]).
    untrusted: bool,
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
    /// Regexes (`pattern`, `patternProperties`) run on the `fancy-regex` engine with a backtrack
    /// limit of 100,000 per match: a match that would backtrack more fails, and the instance is
    /// reported invalid ("Max limit for backtracking count exceeded") instead of hanging.
    /// Patterns without backreferences or look-around run on the linear-time `regex` engine.
    pub fn compile(schema: &Value) -> Result<Self, SchemaError> {
        let validator = jsonschema::options()
            .with_retriever(NoRetrieval)
            .with_pattern_options(
                jsonschema::PatternOptions::fancy_regex().backtrack_limit(REGEX_BACKTRACK_LIMIT),
            )
            .should_validate_formats(false)
            .build(schema)
            .map_err(|e| SchemaError::Invalid(e.to_string()))?;
        Ok(Schema { validator, untrusted: false })
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
        self.validator.is_valid(instance)
    }

    /// The first violation, if any.
    ///
    /// Validity is decided by the memoizing `is_valid` first (fast even for recursive
    /// schemas); only an invalid instance is examined again for the first error, and only for
    /// schemas compiled with [`Schema::compile`]. Locating an error walks every branch of
    /// `anyOf`/`oneOf`, which a hostile recursive schema can make exponential in the depth of
    /// the instance, so a peer's schema ([`Schema::compile_untrusted`]) gets a violation
    /// without detail. The full error list is never built (docs/DECISIONS.md trap 2).
    pub fn validate(&self, instance: &Value) -> Result<(), Violation> {
        if self.validator.is_valid(instance) {
            return Ok(());
        }
        if self.untrusted {
            return Err(Violation {
                message: "the value does not match the schema".to_owned(),
                path: String::new(),
            });
        }
        match self.validator.validate(instance) {
            Ok(()) => Ok(()),
            Err(e) => Err(Violation { message: e.to_string(), path: e.instance_path().to_string() }),
        }
    }
}

#[cfg(test)]
mod tests;
