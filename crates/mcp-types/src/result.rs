//! What every result shares: `resultType`, `_meta`, and the caching hints of 2026-07-28.

use crate::meta::ResultMeta;
use crate::{open_enum, wire_struct};

open_enum! {
    /// The kind of a result (`ResultType`, 2026-07-28). Absent means `complete` (a legacy
    /// server); a value this revision does not define must be treated as invalid by clients.
    #[non_exhaustive]
    pub enum ResultType {
        /// The request completed; the result holds the final content.
        Complete = "complete",
        /// More input is needed: the result is an `InputRequiredResult` (MRTR).
        InputRequired = "input_required",
        /// The request goes on as a task: the result is a `CreateTaskResult` (the tasks
        /// extension, [`crate::extensions::tasks`]).
        Task = "task",
    }
}

open_enum! {
    /// Who may cache a cacheable result (`cacheScope`), like HTTP `Cache-Control`.
    #[non_exhaustive]
    pub enum CacheScope {
        /// No user-specific data: any client or intermediary may cache and share it.
        Public = "public",
        /// Cache only within the same authorization context.
        Private = "private",
    }
}

wire_struct! {
    /// A result with no content of its own (`EmptyResult`, `Result`): `ping`,
    /// `logging/setLevel`, `resources/subscribe` answer with it.
    #[derive(Default)]
    pub struct EmptyResult {
        /// The kind of result (modern revisions only).
        opt result_type: ResultType = "resultType",
        /// Result metadata.
        opt meta: ResultMeta = "_meta",
    }
}

/// The caching hint fields shared by cacheable results, as one value.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheHint {
    /// Milliseconds the client may consider the result fresh.
    pub ttl_ms: u64,
    /// Who may cache it.
    pub scope: CacheScope,
}

wire_struct! {
    /// The fields every cacheable result carries (`CacheableResult`).
    pub struct CacheableResult {
        /// The kind of result.
        opt result_type: ResultType = "resultType",
        /// Freshness lifetime in milliseconds.
        opt ttl_ms: u64 = "ttlMs",
        /// Who may cache it.
        opt cache_scope: CacheScope = "cacheScope",
        /// Result metadata.
        opt meta: ResultMeta = "_meta",
    }
}
