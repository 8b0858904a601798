//! What the gateway reports about itself: each upstream's state and counters, the conflicts
//! of its naming, and the entries it had to leave out.

use serde::Serialize;

use crate::naming::Conflict;

/// Where an upstream is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum UpstreamState {
    /// A lazy upstream nobody has needed yet.
    Idle,
    /// Connecting and listing.
    Starting,
    /// Serving.
    Ready,
    /// Failed; reconnecting with backoff. Its entries are left out of every list.
    Down,
    /// Closed with the gateway (or removed by a reload).
    Closed,
}

impl UpstreamState {
    /// The state as written in the status.
    pub fn as_str(self) -> &'static str {
        match self {
            UpstreamState::Idle => "idle",
            UpstreamState::Starting => "starting",
            UpstreamState::Ready => "ready",
            UpstreamState::Down => "down",
            UpstreamState::Closed => "closed",
        }
    }
}

/// One upstream's status.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct UpstreamStatus {
    /// Its name in the configuration.
    pub name: String,
    /// `stdio`, `http` or `sse`.
    pub transport: String,
    /// What the upstream is shown of who calls: `gateway`, `none`, `passthrough` or
    /// `token-exchange` (its `credentials`).
    pub credentials: String,
    /// Its state.
    pub state: UpstreamState,
    /// The protocol revision in use, when connected.
    pub protocol_version: Option<String>,
    /// `modern` (2026-07-28) or `legacy` (a session), when connected.
    pub era: Option<String>,
    /// The server's name and version, when connected and given.
    pub server: Option<String>,
    /// How many tools it offers (0 unless ready).
    pub tools: usize,
    /// How many prompts.
    pub prompts: usize,
    /// How many resources.
    pub resources: usize,
    /// How many resource templates.
    pub resource_templates: usize,
    /// The last failure (connect, listing or transport).
    pub last_error: Option<String>,
    /// When it happened (RFC 3339, UTC).
    pub last_error_at: Option<String>,
    /// Successful connects (more than one: it was reconnected).
    pub connects: u64,
    /// Reconnections after the first connect (`connects - 1`, or 0).
    pub restarts: u64,
    /// Requests forwarded.
    pub requests: u64,
    /// Requests that failed for a reason other than the upstream's own JSON-RPC error.
    pub failures: u64,
    /// Requests in flight now.
    pub in_flight: usize,
    /// Requests waiting now for one of its `max_concurrency` slots.
    pub waiting: usize,
    /// `shared` (one child or connection for every client) or `per-session`.
    pub sharing: String,
    /// Downstream sessions with a child of their own now (`per-session`).
    pub sessions: usize,
    /// Children started for sessions so far (`per-session`).
    pub session_starts: u64,
    /// Read-only requests sent again after their connection failed under them.
    pub retries: u64,
    /// The circuit breaker: `closed`, `open` (requests fail fast) or `half-open` (the next
    /// request is a probe).
    pub circuit: String,
    /// How many times the breaker opened.
    pub circuit_opens: u64,
    /// Requests failed fast while it was open.
    pub fast_failures: u64,
}

/// An upstream entry the gateway could not serve (an invalid name or schema).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LeftOut {
    /// The upstream.
    pub upstream: String,
    /// Why, naming the entry.
    pub reason: String,
}

/// A tool name two or more upstreams' apps call their tools by (MCP Apps): on the gateway's
/// endpoint it is no alias of any of them (their tools are listed under the gateway's names);
/// each app is served under its own names on its upstream's own endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SharedAppName {
    /// The name.
    pub name: String,
    /// The upstreams whose app tools have it.
    pub upstreams: Vec<String>,
}

/// The gateway's status (`mcpkit gateway`'s `/status`).
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Status {
    /// Every upstream, in configuration order.
    pub upstreams: Vec<UpstreamStatus>,
    /// Names two upstreams wanted; the second's entry is left out.
    pub conflicts: Vec<Conflict>,
    /// Entries left out for being invalid.
    pub left_out: Vec<LeftOut>,
    /// App tool names several upstreams share (a notice, not a failure).
    pub shared_app_names: Vec<SharedAppName>,
    /// Tools served.
    pub tools: usize,
    /// Prompts served.
    pub prompts: usize,
    /// Resources served.
    pub resources: usize,
    /// Resource templates served.
    pub resource_templates: usize,
}
