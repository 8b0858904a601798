//! Static complexity check of an untrusted JSON Schema, run before compiling it.
//!
//! Compiling and validating a schema costs time and memory in proportion to what the schema
//! expands to, not to its size: a ~2 KB schema whose `$defs` double through `allOf` expands to
//! 2^30 subschemas (docs/DECISIONS.md trap 2). [`check_complexity`] bounds that expansion without
//! compiling anything, in time and memory roughly linear in the size of the document (which it
//! bounds first) and the expansion limit.

mod expand;
mod index;

use serde_json::Value;

/// Bounds for [`check_complexity`].
///
/// The defaults are the limits docs/DECISIONS.md sets for a peer-supplied schema.
///
/// `#[non_exhaustive]`: built from `Default` and the `with_*` setters.
///
/// ```
/// let limits = mcp_schema::Limits::default().with_max_depth(8);
/// assert_eq!(limits.max_depth, 8);
/// let deep = serde_json::json!({"items": {"items": {"items": {"items": {"items": {
///     "items": {"items": {"items": {"items": {"type": "string"}}}}}}}}}});
/// assert!(mcp_schema::check_complexity(&deep, &limits).is_err());
/// assert!(mcp_schema::check_complexity(&deep, &mcp_schema::Limits::default()).is_ok());
/// ```
///
/// ```compile_fail
/// let limits = mcp_schema::Limits { max_depth: 8, ..Default::default() };
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// Largest serialized (compact JSON) size in bytes. Default 256 KiB (262,144).
    pub max_bytes: usize,
    /// Deepest nesting of JSON objects and arrays, the outermost one being depth 1.
    /// Default 64.
    pub max_depth: usize,
    /// Most subschemas, the root included: every value in a position where a schema goes
    /// (`properties`, `items`, `allOf`, `not`, `$defs`, …). Default 10,000.
    pub max_subschemas: usize,
    /// Most subschema visits if every `$ref` were expanded inline (see [`check_complexity`]).
    /// Default 100,000.
    pub max_ref_expansion: u64,
    /// Longest regular expression, in characters, in `pattern` or as a key of
    /// `patternProperties`. Default 1,000. Matching itself is bounded by the backtrack limit
    /// [`Schema::compile`](crate::Schema::compile) sets.
    pub max_pattern_len: usize,
}

impl Limits {
    /// Sets [`max_bytes`](Self::max_bytes).
    #[must_use]
    pub fn with_max_bytes(mut self, max_bytes: usize) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    /// Sets [`max_depth`](Self::max_depth).
    #[must_use]
    pub fn with_max_depth(mut self, max_depth: usize) -> Self {
        self.max_depth = max_depth;
        self
    }

    /// Sets [`max_subschemas`](Self::max_subschemas).
    #[must_use]
    pub fn with_max_subschemas(mut self, max_subschemas: usize) -> Self {
        self.max_subschemas = max_subschemas;
        self
    }

    /// Sets [`max_ref_expansion`](Self::max_ref_expansion).
    #[must_use]
    pub fn with_max_ref_expansion(mut self, max_ref_expansion: u64) -> Self {
        self.max_ref_expansion = max_ref_expansion;
        self
    }

    /// Sets [`max_pattern_len`](Self::max_pattern_len).
    #[must_use]
    pub fn with_max_pattern_len(mut self, max_pattern_len: usize) -> Self {
        self.max_pattern_len = max_pattern_len;
        self
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: 256 * 1024,
            max_depth: 64,
            max_subschemas: 10_000,
            max_ref_expansion: 100_000,
            max_pattern_len: 1_000,
        }
    }
}

/// Why a schema was judged too complex. Each check stops as soon as its limit is passed, so a
/// reported count is where counting stopped: more than the limit, not necessarily the total.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ComplexityError {
    /// The serialized schema is larger than [`Limits::max_bytes`].
    #[error("schema too large: over {limit} bytes (counted {bytes})")]
    TooLarge {
        /// Bytes counted when the check stopped.
        bytes: usize,
        /// The limit.
        limit: usize,
    },
    /// The JSON value nests deeper than [`Limits::max_depth`].
    #[error("schema nested too deeply: depth {depth}, limit {limit}")]
    TooDeep {
        /// Depth reached when the check stopped.
        depth: usize,
        /// The limit.
        limit: usize,
    },
    /// The schema has more subschemas than [`Limits::max_subschemas`].
    #[error("schema has too many subschemas: over {limit} (counted {count})")]
    TooManySubschemas {
        /// Subschemas counted when the check stopped.
        count: usize,
        /// The limit.
        limit: usize,
    },
    /// Expanding the schema's `$ref`s would visit more than [`Limits::max_ref_expansion`]
    /// subschemas.
    #[error("schema expands through $ref to over {limit} subschemas (counted {expansions})")]
    RefExpansion {
        /// Expansions counted when the check stopped.
        expansions: u64,
        /// The limit.
        limit: u64,
    },
    /// A regular expression is longer than [`Limits::max_pattern_len`].
    #[error("regular expression too long: {len} characters, limit {limit}")]
    PatternTooLong {
        /// Length of the pattern in characters.
        len: usize,
        /// The limit.
        limit: usize,
    },
}

/// Checks an untrusted schema against `limits`, without compiling it.
///
/// The checks run in this order, each stopping at the first limit passed:
/// 1. serialized size, counted without building the string;
/// 2. nesting depth of the JSON value;
/// 3. number of subschemas, and the length of every `pattern` / `patternProperties` regex;
/// 4. `$ref` expansion: the number of subschema visits if every `$ref`, `$dynamicRef` and
///    `$recursiveRef` were replaced by its target, computed over the reference graph with
///    memoization as `size(s) = 1 + Σ size(subschema of s) + Σ size(target of a ref in s)`.
///    A reference back into a subschema still being expanded (a recursive schema) counts 1:
///    recursion through `$ref` is bounded by the instance, not by the schema.
///
/// References are resolved inside the document only (nothing is fetched). Where the target is
/// not certain without resolving URIs exactly (a reference naming a URI, an anchor, or a
/// resource declared with `$id`), every subschema the reference could name is a candidate: the
/// reference counts as its largest candidate, plus one for each further candidate examined.
/// The count can therefore overestimate, never underestimate, the expansion.
///
/// # Errors
///
/// The first limit passed, as a [`ComplexityError`].
pub fn check_complexity(schema: &Value, limits: &Limits) -> Result<(), ComplexityError> {
    check_size(schema, limits.max_bytes)?;
    check_depth(schema, limits.max_depth)?;
    let index = index::Index::build(schema, limits)?;
    expand::check(schema, &index, limits.max_ref_expansion)
}

/// An `io::Write` that counts bytes and fails once there are more than `limit`.
struct CountingWriter {
    count: usize,
    limit: usize,
}

impl std::io::Write for CountingWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.count = self.count.saturating_add(buf.len());
        if self.count > self.limit { Err(std::io::Error::other("size limit passed")) } else { Ok(buf.len()) }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn check_size(schema: &Value, limit: usize) -> Result<(), ComplexityError> {
    let mut writer = CountingWriter { count: 0, limit };
    // Serializing a `Value` only fails when the writer does.
    match serde_json::to_writer(&mut writer, schema) {
        Ok(()) => Ok(()),
        Err(_) => Err(ComplexityError::TooLarge { bytes: writer.count, limit }),
    }
}

fn check_depth(schema: &Value, limit: usize) -> Result<(), ComplexityError> {
    // Containers only, with their depth; an explicit stack, so any depth is safe to measure.
    let is_container = |v: &&Value| v.is_object() || v.is_array();
    let mut stack: Vec<(&Value, usize)> =
        Some(schema).filter(is_container).map(|v| (v, 1)).into_iter().collect();
    while let Some((value, depth)) = stack.pop() {
        if depth > limit {
            return Err(ComplexityError::TooDeep { depth, limit });
        }
        let below = |child| (child, depth + 1);
        match value {
            Value::Object(map) => stack.extend(map.values().filter(is_container).map(below)),
            Value::Array(items) => stack.extend(items.iter().filter(is_container).map(below)),
            _ => {}
        }
    }
    Ok(())
}
