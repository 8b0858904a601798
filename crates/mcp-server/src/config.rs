//! The server's settings: its limits (each with the default of docs/DECISIONS.md) and its
//! caching hints.

use std::time::Duration;

use mcp_types::{CacheScope, ProtocolVersion};

/// Caching hints for cacheable results (`ttlMs`, `cacheScope`; 2026-07-28).
#[derive(Debug, Clone, PartialEq)]
pub struct CachePolicy {
    /// Freshness of list results (`tools/list`, `prompts/list`, `resources/list`,
    /// `resources/templates/list`, `server/discover`).
    pub list_ttl: Duration,
    /// Scope of list results.
    pub list_scope: CacheScope,
    /// Freshness of `resources/read` results.
    pub read_ttl: Duration,
    /// Scope of `resources/read` results.
    pub read_scope: CacheScope,
}

impl Default for CachePolicy {
    fn default() -> Self {
        CachePolicy {
            list_ttl: Duration::from_secs(300),
            list_scope: CacheScope::Public,
            read_ttl: Duration::ZERO,
            read_scope: CacheScope::Private,
        }
    }
}

/// Server settings; every limit has the default of docs/DECISIONS.md.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Items per page of list results.
    pub page_size: usize,
    /// Caching hints.
    pub cache: CachePolicy,
    /// How long a tool call may run before it is cancelled.
    pub tool_timeout: Duration,
    /// How long an MRTR `requestState` stays valid.
    pub request_state_ttl: Duration,
    /// How long a legacy server→client request (sampling, elicitation) may wait for its answer.
    pub peer_request_timeout: Duration,
    /// Requests handled at once per connection (stdio back-pressure beyond it).
    pub max_in_flight: usize,
    /// Bytes of the requests in flight on a stdio connection, all together: past it the server
    /// stops reading until answers free room (back-pressure). A single request larger than
    /// this is still taken, alone.
    pub max_bytes_in_flight: usize,
    /// The most a legacy session keeps of its client's `initialize` (its `capabilities` and
    /// `clientInfo`, as JSON): a larger `initialize` is refused with `-32602`, so what a session
    /// holds is bounded by the server, not by the client (docs/DECISIONS.md).
    pub max_client_info_bytes: usize,
    /// Protocol versions served.
    pub versions: Vec<ProtocolVersion>,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            page_size: 1000,
            cache: CachePolicy::default(),
            tool_timeout: Duration::from_secs(60),
            request_state_ttl: Duration::from_secs(600),
            peer_request_timeout: Duration::from_secs(300),
            max_in_flight: 64,
            max_bytes_in_flight: 64 * 1024 * 1024,
            max_client_info_bytes: 64 * 1024,
            versions: ProtocolVersion::ALL.iter().rev().copied().collect(),
        }
    }
}
