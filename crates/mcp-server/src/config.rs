//! The server's settings: its limits (each with the default of docs/DECISIONS.md) and its
//! caching hints.

use std::time::Duration;

use mcp_types::{CacheScope, ProtocolVersion};

/// Caching hints for cacheable results (`ttlMs`, `cacheScope`; 2026-07-28).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
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

impl CachePolicy {
    /// Sets [`list_ttl`](Self::list_ttl).
    #[must_use]
    pub fn with_list_ttl(mut self, list_ttl: Duration) -> Self {
        self.list_ttl = list_ttl;
        self
    }

    /// Sets [`list_scope`](Self::list_scope).
    #[must_use]
    pub fn with_list_scope(mut self, list_scope: CacheScope) -> Self {
        self.list_scope = list_scope;
        self
    }

    /// Sets [`read_ttl`](Self::read_ttl).
    #[must_use]
    pub fn with_read_ttl(mut self, read_ttl: Duration) -> Self {
        self.read_ttl = read_ttl;
        self
    }

    /// Sets [`read_scope`](Self::read_scope).
    #[must_use]
    pub fn with_read_scope(mut self, read_scope: CacheScope) -> Self {
        self.read_scope = read_scope;
        self
    }
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
///
/// Built from its defaults and changed by field or with the `with_*` setters (it is
/// `#[non_exhaustive]`, so a limit added later is no breaking change):
///
/// ```
/// use std::time::Duration;
/// use mcp_server::{CachePolicy, ServerConfig};
///
/// let config = ServerConfig::default()
///     .with_page_size(50)
///     .with_tool_timeout(Duration::from_secs(5))
///     .with_cache(CachePolicy::default().with_list_ttl(Duration::from_secs(60)));
/// assert_eq!(config.page_size, 50);
/// assert_eq!(config.tool_timeout, Duration::from_secs(5));
/// assert_eq!(config.cache.list_ttl, Duration::from_secs(60));
/// assert_eq!(config.max_in_flight, ServerConfig::default().max_in_flight);
/// ```
///
/// A struct literal does not compile outside this crate:
///
/// ```compile_fail
/// let config = mcp_server::ServerConfig { page_size: 50, ..Default::default() };
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
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
    /// Which tool calls need a person's approval before they run (none by default).
    pub approvals: Approvals,
    /// Requests allowed per caller × method × tool (none by default).
    pub rate_limit: Option<crate::rate::RateLimit>,
    /// How tasks are made and kept (the tasks extension).
    pub tasks: crate::task::TaskConfig,
}

impl ServerConfig {
    /// Sets [`tasks`](Self::tasks).
    #[must_use]
    pub fn with_tasks(mut self, tasks: crate::task::TaskConfig) -> Self {
        self.tasks = tasks;
        self
    }

    /// Sets [`page_size`](Self::page_size).
    #[must_use]
    pub fn with_page_size(mut self, page_size: usize) -> Self {
        self.page_size = page_size;
        self
    }

    /// Sets [`cache`](Self::cache).
    #[must_use]
    pub fn with_cache(mut self, cache: CachePolicy) -> Self {
        self.cache = cache;
        self
    }

    /// Sets [`tool_timeout`](Self::tool_timeout).
    #[must_use]
    pub fn with_tool_timeout(mut self, tool_timeout: Duration) -> Self {
        self.tool_timeout = tool_timeout;
        self
    }

    /// Sets [`request_state_ttl`](Self::request_state_ttl).
    #[must_use]
    pub fn with_request_state_ttl(mut self, request_state_ttl: Duration) -> Self {
        self.request_state_ttl = request_state_ttl;
        self
    }

    /// Sets [`peer_request_timeout`](Self::peer_request_timeout).
    #[must_use]
    pub fn with_peer_request_timeout(mut self, peer_request_timeout: Duration) -> Self {
        self.peer_request_timeout = peer_request_timeout;
        self
    }

    /// Sets [`max_in_flight`](Self::max_in_flight).
    #[must_use]
    pub fn with_max_in_flight(mut self, max_in_flight: usize) -> Self {
        self.max_in_flight = max_in_flight;
        self
    }

    /// Sets [`max_bytes_in_flight`](Self::max_bytes_in_flight).
    #[must_use]
    pub fn with_max_bytes_in_flight(mut self, max_bytes_in_flight: usize) -> Self {
        self.max_bytes_in_flight = max_bytes_in_flight;
        self
    }

    /// Sets [`max_client_info_bytes`](Self::max_client_info_bytes).
    #[must_use]
    pub fn with_max_client_info_bytes(mut self, max_client_info_bytes: usize) -> Self {
        self.max_client_info_bytes = max_client_info_bytes;
        self
    }

    /// Sets [`versions`](Self::versions).
    #[must_use]
    pub fn with_versions(mut self, versions: Vec<ProtocolVersion>) -> Self {
        self.versions = versions;
        self
    }

    /// Sets [`rate_limit`](Self::rate_limit).
    #[must_use]
    pub fn with_rate_limit(mut self, rate_limit: Option<crate::rate::RateLimit>) -> Self {
        self.rate_limit = rate_limit;
        self
    }

    /// Sets [`approvals`](Self::approvals).
    #[must_use]
    pub fn with_approvals(mut self, approvals: Approvals) -> Self {
        self.approvals = approvals;
        self
    }
}

/// Which tool calls a person must approve before they run. The server asks the caller's client
/// with an approval form (`mcp_types::elicitation::approval`: the tool, where it runs, its
/// arguments with secrets redacted) and runs the tool only on an approving answer; a decline
/// is a tool error saying nothing ran. A modern client without form elicitation is refused with
/// `-32021`; a legacy one gets a tool error saying approval could not be asked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Approvals {
    /// Tools annotated `destructiveHint: true` (explicitly: the spec's default of `true` for an
    /// unannotated tool does not count, or every tool would ask).
    pub destructive: bool,
    /// These tools, by name, whatever their annotations.
    pub tools: std::collections::BTreeSet<String>,
    /// Callers (token subjects) whose calls run without approval.
    pub exempt: std::collections::BTreeSet<String>,
}

impl Approvals {
    /// None: no call is asked about.
    pub fn none() -> Self {
        Approvals::default()
    }

    /// Tools annotated `destructiveHint: true`.
    pub fn destructive() -> Self {
        Approvals { destructive: true, ..Approvals::default() }
    }

    /// Adds a tool that always needs approval.
    #[must_use]
    pub fn with_tool(mut self, name: impl Into<String>) -> Self {
        self.tools.insert(name.into());
        self
    }

    /// Adds a caller (token subject) never asked.
    #[must_use]
    pub fn with_exempt(mut self, subject: impl Into<String>) -> Self {
        self.exempt.insert(subject.into());
        self
    }

    /// Whether anything needs approval.
    pub fn any(&self) -> bool {
        self.destructive || !self.tools.is_empty()
    }

    /// Whether `tool`, called by `subject`, needs approval.
    pub fn needed(&self, tool: &mcp_types::Tool, subject: Option<&str>) -> bool {
        let marked = (self.destructive
            && tool.annotations.as_ref().and_then(|a| a.destructive_hint) == Some(true))
            || self.tools.contains(&tool.name);
        marked && !self.is_exempt(subject)
    }

    /// Whether `subject` is never asked (whatever named the tool: these settings or a policy).
    pub fn is_exempt(&self, subject: Option<&str>) -> bool {
        subject.is_some_and(|s| self.exempt.contains(s))
    }
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
            approvals: Approvals::default(),
            rate_limit: None,
            tasks: crate::task::TaskConfig::default(),
        }
    }
}
