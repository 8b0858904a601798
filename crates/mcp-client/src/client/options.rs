//! Per-client settings and per-call options.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_types::{LoggingLevel, ProgressNotificationParams, ProtocolVersion};
use serde_json::{Map, Value};

use crate::engine::ProgressFn;
use crate::transport::TransportKind;

/// Options of one call.
#[derive(Clone, Default)]
pub struct RequestOptions {
    pub(crate) timeout: Option<Duration>,
    pub(crate) max_timeout: Option<Duration>,
    pub(crate) reset_timeout_on_progress: bool,
    pub(crate) progress: Option<ProgressFn>,
    pub(crate) log_level: Option<LoggingLevel>,
    pub(crate) meta: Map<String, Value>,
    pub(crate) bypass_cache: bool,
    pub(crate) retries: Option<u32>,
    pub(crate) untimed: bool,
    pub(crate) list_limits: Option<ListLimits>,
    pub(crate) client_capabilities: Option<std::sync::Arc<mcp_types::ClientCapabilities>>,
    pub(crate) tag: Option<crate::handler::Tag>,
    pub(crate) authorization: Option<crate::transport::Credential>,
    pub(crate) on_task: Option<super::task::TaskFn>,
}

/// Bounds of the `list_all_*` helpers (and of the listing a `tools/call` makes first to learn
/// the tool's schema), which follow `nextCursor` page after page: the bytes, items and pages of
/// one listing, all pages together. A server that hands out a fresh cursor with every page
/// would otherwise keep the client fetching and accumulating until memory runs out; past a
/// bound the listing fails with [`ClientError::ListingTooLarge`](crate::ClientError::ListingTooLarge)
/// naming it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListLimits {
    /// The results' JSON text, all pages together (default 16 MiB: as much as one HTTP message
    /// may hold, [`HttpConfig::max_message_size`](crate::transport::http::HttpConfig)). A page is
    /// counted before it is decoded.
    pub max_bytes: usize,
    /// The items (tools, resources, templates, prompts), all pages together (default 10,000).
    pub max_items: usize,
    /// The pages (default 10,000): a server looping its cursor with empty pages stops here.
    pub max_pages: usize,
}

impl ListLimits {
    /// Sets [`max_bytes`](Self::max_bytes).
    #[must_use]
    pub fn with_max_bytes(mut self, max_bytes: usize) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    /// Sets [`max_items`](Self::max_items).
    #[must_use]
    pub fn with_max_items(mut self, max_items: usize) -> Self {
        self.max_items = max_items;
        self
    }

    /// Sets [`max_pages`](Self::max_pages).
    #[must_use]
    pub fn with_max_pages(mut self, max_pages: usize) -> Self {
        self.max_pages = max_pages;
        self
    }
}

impl ListLimits {
    /// The default bound of a listing's bytes: 16 MiB.
    pub const DEFAULT_MAX_BYTES: usize = 16 * 1024 * 1024;
    /// The default bound of a listing's items: 10,000.
    pub const DEFAULT_MAX_ITEMS: usize = 10_000;
    /// The default bound of a listing's pages: 10,000.
    pub const DEFAULT_MAX_PAGES: usize = 10_000;
}

impl Default for ListLimits {
    fn default() -> Self {
        ListLimits {
            max_bytes: Self::DEFAULT_MAX_BYTES,
            max_items: Self::DEFAULT_MAX_ITEMS,
            max_pages: Self::DEFAULT_MAX_PAGES,
        }
    }
}

/// The bounds of what the client queues for a server, whatever the server sends
/// ([`ClientBuilder::queue_limits`](crate::ClientBuilder::queue_limits)). Each must be at least
/// 1: a client built with a 0 refuses to connect with
/// [`ClientError::InvalidConfig`](crate::ClientError::InvalidConfig) naming it (a queue of none
/// would stall the first message forever, and silently raising it would hide the mistake).
///
/// `#[non_exhaustive]`, like every limit set of this crate ([`ListLimits`],
/// [`RestartPolicy`](crate::transport::stdio::RestartPolicy),
/// [`ShutdownTimeouts`](crate::transport::ShutdownTimeouts)): built from `Default` and the
/// `with_*` setters.
///
/// ```
/// use mcp_client::{ListLimits, QueueLimits};
///
/// let queues = QueueLimits::default().with_inbound(16).with_server_requests(4);
/// assert_eq!((queues.inbound, queues.server_requests), (16, 4));
/// assert_eq!(queues.call_events, QueueLimits::DEFAULT_CALL_EVENTS);
/// let listing = ListLimits::default().with_max_pages(3);
/// assert_eq!(listing.max_pages, 3);
/// ```
///
/// ```compile_fail
/// let queues = mcp_client::QueueLimits { inbound: 16, ..Default::default() };
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct QueueLimits {
    /// Messages from the transport waiting for the client core (default 64). A transport waits
    /// for room before it reads on: past this the server is held back (a stdio child blocks on
    /// its full stdout pipe, an HTTP server on its full TCP window), nothing is dropped.
    pub inbound: usize,
    /// Progress and tagged notifications waiting for one call (default 256). The core never
    /// waits for a call: past this, a notification for a call that does not keep up is dropped
    /// and counted (a warning says how many when the call ends); the call's end always gets
    /// through.
    pub call_events: usize,
    /// Events waiting for a [`Subscription`](crate::Subscription)'s reader (default 1,024).
    /// Past this, change notifications are dropped and counted (a warning says how many); the
    /// end of the subscription always gets through.
    pub subscription_events: usize,
    /// Server→client requests (elicitation, sampling, roots, ping: legacy sessions) answered at
    /// once (default 16). A request beyond this is answered at once with a JSON-RPC error
    /// (`-32603`, saying the client is busy and naming the limit) instead of being queued; at
    /// most as many of these refusals wait to be sent, past which reading waits for the
    /// transport to take them (back-pressure, as for `inbound`).
    pub server_requests: usize,
}

impl QueueLimits {
    /// Sets [`inbound`](Self::inbound).
    #[must_use]
    pub fn with_inbound(mut self, inbound: usize) -> Self {
        self.inbound = inbound;
        self
    }

    /// Sets [`call_events`](Self::call_events).
    #[must_use]
    pub fn with_call_events(mut self, call_events: usize) -> Self {
        self.call_events = call_events;
        self
    }

    /// Sets [`subscription_events`](Self::subscription_events).
    #[must_use]
    pub fn with_subscription_events(mut self, subscription_events: usize) -> Self {
        self.subscription_events = subscription_events;
        self
    }

    /// Sets [`server_requests`](Self::server_requests).
    #[must_use]
    pub fn with_server_requests(mut self, server_requests: usize) -> Self {
        self.server_requests = server_requests;
        self
    }
}

impl QueueLimits {
    /// The default of [`QueueLimits::inbound`]: 64.
    pub const DEFAULT_INBOUND: usize = 64;
    /// The default of [`QueueLimits::call_events`]: 256.
    pub const DEFAULT_CALL_EVENTS: usize = 256;
    /// The default of [`QueueLimits::subscription_events`]: 1,024.
    pub const DEFAULT_SUBSCRIPTION_EVENTS: usize = 1024;
    /// The default of [`QueueLimits::server_requests`]: 16.
    pub const DEFAULT_SERVER_REQUESTS: usize = 16;

    /// Refuses a bound of 0, naming it.
    pub(crate) fn validate(&self) -> Result<(), crate::ClientError> {
        let bounds = [
            ("inbound", self.inbound),
            ("call_events", self.call_events),
            ("subscription_events", self.subscription_events),
            ("server_requests", self.server_requests),
        ];
        match bounds.iter().find(|(_, n)| *n == 0) {
            Some((name, _)) => Err(crate::ClientError::InvalidConfig(format!(
                "QueueLimits::{name} is 0; every queue of the client holds at least 1"
            ))),
            None => Ok(()),
        }
    }
}

impl Default for QueueLimits {
    fn default() -> Self {
        QueueLimits {
            inbound: Self::DEFAULT_INBOUND,
            call_events: Self::DEFAULT_CALL_EVENTS,
            subscription_events: Self::DEFAULT_SUBSCRIPTION_EVENTS,
            server_requests: Self::DEFAULT_SERVER_REQUESTS,
        }
    }
}

impl std::fmt::Debug for RequestOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestOptions")
            .field("timeout", &self.timeout)
            .field("max_timeout", &self.max_timeout)
            .field("untimed", &self.untimed)
            .field("reset_timeout_on_progress", &self.reset_timeout_on_progress)
            .field("progress", &self.progress.is_some())
            .field("log_level", &self.log_level)
            .field("bypass_cache", &self.bypass_cache)
            .field("retries", &self.retries)
            .field("list_limits", &self.list_limits)
            .field("client_capabilities", &self.client_capabilities)
            .field("on_task", &self.on_task.is_some())
            .finish()
    }
}

impl RequestOptions {
    /// Default options: the client's timeout, no progress.
    pub fn new() -> Self {
        Self::default()
    }

    /// Fails the call (and cancels the request) when no answer came within `timeout`. The
    /// clock starts before the request is sent: a server that accepts the connection but never
    /// answers the HTTP request times out too.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Fails the call (and cancels the request) `max` after it started, however much progress
    /// the server reports: the hard limit that
    /// [`RequestOptions::reset_timeout_on_progress`] never extends. Without it, the client's
    /// [`ClientBuilder::max_request_timeout`](crate::ClientBuilder::max_request_timeout)
    /// applies.
    pub fn max_timeout(mut self, max: Duration) -> Self {
        self.max_timeout = Some(max);
        self
    }

    /// Waits as long as it takes: no timeout and no maximum, not even the client's defaults
    /// (a [`RequestOptions::max_timeout`] set afterwards still applies).
    pub fn no_timeout(mut self) -> Self {
        self.untimed = true;
        self.timeout = None;
        self.max_timeout = None;
        self
    }

    /// Restarts the timeout whenever a progress notification arrives, up to the maximum
    /// ([`RequestOptions::max_timeout`]).
    pub fn reset_timeout_on_progress(mut self, yes: bool) -> Self {
        self.reset_timeout_on_progress = yes;
        self
    }

    /// Asks for progress notifications (sends a `progressToken`) and calls `f` for each.
    pub fn on_progress(mut self, f: impl Fn(&ProgressNotificationParams) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(f));
        self
    }

    /// Calls `f` with each state of the task a `tools/call` becomes (the tasks extension), as
    /// the client follows it: its status, its message, its questions.
    pub fn on_task(
        mut self,
        f: impl Fn(&mcp_types::extensions::tasks::TaskResult) + Send + Sync + 'static,
    ) -> Self {
        self.on_task = Some(std::sync::Arc::new(f));
        self
    }

    /// A value carried with this request to the handlers of the server's requests about it
    /// ([`handler::request_tag`](crate::handler::request_tag)): for a client acting for several
    /// callers at once (a gateway), so that a server's question reaches the caller whose
    /// request caused it.
    pub fn tag(mut self, tag: crate::handler::Tag) -> Self {
        self.tag = Some(tag);
        self
    }

    /// Sends this request (over HTTP) with `credential` as its `Authorization`, instead of the
    /// transport's own authorization: for a client acting for a caller whose credential it
    /// holds on purpose (a gateway passing its caller's token on, audience checked, or one
    /// exchanged for it). A refusal (`401`/`403`) fails the request; no login is attempted.
    /// Other transports ignore it.
    pub fn authorization(mut self, credential: crate::transport::Credential) -> Self {
        self.authorization = Some(credential);
        self
    }

    /// The capabilities this request declares (modern `_meta`), instead of the client's own:
    /// for a client acting for another one (a gateway declares its caller's), so that the
    /// server asks only what the real client can answer. Shared (`Arc`) or owned: a client
    /// acting for many requests of one caller passes the same capabilities without copying them.
    pub fn client_capabilities(
        mut self,
        capabilities: impl Into<std::sync::Arc<mcp_types::ClientCapabilities>>,
    ) -> Self {
        self.client_capabilities = Some(capabilities.into());
        self
    }

    /// The minimum log level the server should send for this request (modern servers).
    pub fn log_level(mut self, level: LoggingLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// An extra `_meta` entry (vendor metadata, trace context).
    pub fn meta(mut self, key: impl Into<String>, value: Value) -> Self {
        self.meta.insert(key.into(), value);
        self
    }

    /// Ignores cached results for this call (the fresh result still refreshes the cache).
    pub fn bypass_cache(mut self) -> Self {
        self.bypass_cache = true;
        self
    }

    /// How often a failed `tools/call` may be re-sent (each time with a new id): always when the
    /// request certainly was not executed, and after an unknown outcome only for tools the
    /// server marked read-only or idempotent. Default 1; 0 turns retries off.
    pub fn retries(mut self, n: u32) -> Self {
        self.retries = Some(n);
        self
    }

    /// The bounds of a listing made with these options (`list_all_tools_with`, and the listing
    /// `call_tool_with` makes first on modern HTTP), instead of the client's
    /// ([`ClientBuilder::list_limits`](crate::ClientBuilder::list_limits)).
    pub fn list_limits(mut self, limits: ListLimits) -> Self {
        self.list_limits = Some(limits);
        self
    }
}

/// What was learnt about a server's era, shared between clients to skip the probe next time
/// ("cache the result for the lifetime of the server process (stdio) or origin (HTTP)").
#[derive(Debug, Clone, Default)]
pub struct EraCache {
    entries: Arc<Mutex<HashMap<String, Detected>>>,
}

/// One remembered detection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Detected {
    /// The version that worked.
    pub version: ProtocolVersion,
    /// The transport that worked (Streamable HTTP or HTTP+SSE for URLs).
    pub transport: TransportKind,
}

impl EraCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The process-wide cache HTTP connections use unless the builder names another: the era
    /// of an origin is learnt once per process.
    pub fn global() -> EraCache {
        static GLOBAL: std::sync::OnceLock<EraCache> = std::sync::OnceLock::new();
        GLOBAL.get_or_init(EraCache::new).clone()
    }

    /// What is known about `key` (a URL or a command line).
    pub fn get(&self, key: &str) -> Option<Detected> {
        crate::engine::lock(&self.entries).get(key).copied()
    }

    pub(crate) fn put(&self, key: &str, detected: Detected) {
        crate::engine::lock(&self.entries).insert(key.to_string(), detected);
    }

    /// Forgets `key` (after the server changed).
    pub fn forget(&self, key: &str) {
        crate::engine::lock(&self.entries).remove(key);
    }
}
