//! Observation: what a server tells an [`Observer`] about each request it served — method,
//! name, era, caller, outcome, duration — and what its transport tells it about requests it
//! refused before the server saw them. Metrics, request logs and traces are observers; the
//! server knows none of them.
//!
//! The outcome keeps the layers apart: a transport's refusal (an HTTP status), a JSON-RPC
//! error (its code), a tool's error (`isError: true` in a result) and success are four
//! different things, and an HTTP success rate alone would miss every tool that failed.
//!
//! Labels stay bounded: [`method_label`] maps any method outside MCP's own to `"other"`, and
//! the name of a tool or prompt is given only when it is in the server's own table.
//! Arguments, results, tokens and session ids are never given. Without an observer, nothing
//! of this runs.

use std::time::Duration;

use mcp_types::{ProtocolVersion, RequestId};

/// Told about every request a server served or its transport refused. Called on the request
/// path: keep it short (count, enqueue), never block.
pub trait Observer: Send + Sync + 'static {
    /// A request reached the server; [`Observer::finished`] follows, exactly once.
    fn started(&self, method: &'static str) {
        let _ = method;
    }

    /// A request the server served (or refused, or that was cancelled) is over.
    fn finished(&self, request: &Observed<'_>);

    /// A request the transport refused before the server saw it (an HTTP status).
    fn refused(&self, refused: &TransportRefusal<'_>) {
        let _ = refused;
    }

    /// A legacy session opened (`true`) or ended (`false`).
    fn session(&self, opened: bool) {
        let _ = opened;
    }

    /// Bytes a transport received (request bodies, lines) and sent (answers, stream events).
    fn bytes(&self, received: u64, sent: u64) {
        let _ = (received, sent);
    }
}

/// How a request ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A result.
    Success,
    /// A `tools/call` result with `isError: true`: the tool failed, the protocol did not.
    ToolError,
    /// A JSON-RPC error. `refused`: the server refused the request before (or instead of)
    /// running it (a malformed request, an unknown method, a missing capability); otherwise
    /// the request earned it after dispatch (an unknown tool, a handler's failure).
    Error {
        /// The JSON-RPC error code.
        code: i64,
        /// Refused rather than answered.
        refused: bool,
    },
    /// Cancelled (or its connection went away) before it was answered: nothing was sent.
    Cancelled,
}

impl Outcome {
    /// `success`, `tool_error`, `jsonrpc_error` or `cancelled`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::ToolError => "tool_error",
            Outcome::Error { .. } => "jsonrpc_error",
            Outcome::Cancelled => "cancelled",
        }
    }
}

/// A request that is over.
#[derive(Debug)]
#[non_exhaustive]
pub struct Observed<'a> {
    /// Its JSON-RPC id.
    pub id: &'a RequestId,
    /// Its method ([`method_label`]).
    pub method: &'static str,
    /// The tool (`tools/call`) or prompt (`prompts/get`) it names, when the server has one by
    /// that name; `Some("other")` when it names one the server does not have.
    pub name: Option<&'a str>,
    /// The revision it was served under: the modern one its `_meta` names, or its session's.
    pub version: Option<ProtocolVersion>,
    /// The caller's subject, when the transport authenticated it.
    pub subject: Option<&'a str>,
    /// How it ended.
    pub outcome: Outcome,
    /// From the server taking it up to its answer.
    pub duration: Duration,
}

impl<'a> Observed<'a> {
    /// A request for `method` ([`method_label`]) that ended with `outcome` after `duration`;
    /// the other members start empty.
    pub fn new(id: &'a RequestId, method: &'static str, outcome: Outcome, duration: Duration) -> Self {
        Observed { id, method, name: None, version: None, subject: None, outcome, duration }
    }
}

/// A request a transport refused before the server saw it.
#[derive(Debug)]
#[non_exhaustive]
pub struct TransportRefusal<'a> {
    /// Its method as the transport saw it (a header, or `"unknown"`), by [`method_label`].
    pub method: &'static str,
    /// The HTTP status it got.
    pub status: u16,
    /// The caller's subject, when known.
    pub subject: Option<&'a str>,
    /// From the transport taking it up to its refusal.
    pub duration: Duration,
}

impl<'a> TransportRefusal<'a> {
    /// A refusal with `status` of a request for `method` ([`method_label`]).
    pub fn new(method: &'static str, status: u16, subject: Option<&'a str>, duration: Duration) -> Self {
        TransportRefusal { method, status, subject, duration }
    }
}

/// The methods a client sends that MCP defines; any other is `"other"`, so that a label made
/// of it has a bounded number of values.
pub const METHODS: [&str; 15] = [
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "subscriptions/listen",
];

/// `method` when MCP defines it ([`METHODS`]), else `"other"`.
pub fn method_label(method: &str) -> &'static str {
    METHODS.iter().find(|m| **m == method).copied().unwrap_or("other")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_outside_mcp_are_other() {
        assert_eq!(method_label("tools/call"), "tools/call");
        assert_eq!(method_label("subscriptions/listen"), "subscriptions/listen");
        assert_eq!(method_label("tools/call2"), "other");
        assert_eq!(method_label(""), "other");
    }
}
