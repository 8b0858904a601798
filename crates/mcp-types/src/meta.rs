//! The `_meta` objects of requests, results and notifications.
//!
//! 2026-07-28 moves protocol state into `_meta`: every request names its protocol version and
//! the client's capabilities there. The types below model the reserved keys; every other key
//! (vendor metadata, trace context) stays in `extra`, untouched.

use crate::capabilities::ClientCapabilities;
use crate::common::{Implementation, LoggingLevel};
use crate::id::{ProgressToken, RequestId};
use crate::wire_struct;

/// Reserved `_meta` key names.
pub mod key {
    /// Opts a request into progress notifications.
    pub const PROGRESS_TOKEN: &str = "progressToken";
    /// The protocol version of a modern request.
    pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
    /// Client name and version.
    pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
    /// Client capabilities for this request.
    pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
    /// Minimum log level for this request.
    pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
    /// Server name and version, on results.
    pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
    /// Correlates a notification with its `subscriptions/listen` request.
    pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
    /// Legacy (2025-11-25) tasks: the task a message relates to.
    pub const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";
}

wire_struct! {
    /// `_meta` of a request (`RequestMetaObject`).
    ///
    /// On 2026-07-28 `protocolVersion` and `clientCapabilities` are required; the type keeps
    /// them optional so that a request lacking them still decodes and the server can answer
    /// with the precise `-32602` the spec asks for.
    #[derive(Default)]
    pub struct RequestMeta {
        /// Progress token for this request.
        opt progress_token: ProgressToken = "progressToken",
        /// The protocol version of this request (modern).
        opt protocol_version: String = "io.modelcontextprotocol/protocolVersion",
        /// The client's identity (modern, optional), shared: a client sends the same one with
        /// every request.
        opt client_info: std::sync::Arc<Implementation> = "io.modelcontextprotocol/clientInfo",
        /// The client's capabilities for this request (modern), shared with whoever passes them
        /// on (a server's handlers, a gateway's request to its upstream).
        opt client_capabilities: std::sync::Arc<ClientCapabilities> = "io.modelcontextprotocol/clientCapabilities",
        /// The minimum log level the client wants for this request (modern).
        opt log_level: LoggingLevel = "io.modelcontextprotocol/logLevel",
    }
}

impl RequestMeta {
    /// True when the request carries modern per-request metadata (either required key).
    pub fn is_modern(&self) -> bool {
        self.protocol_version.is_some() || self.client_capabilities.is_some()
    }
}

wire_struct! {
    /// `_meta` of a result (`ResultMetaObject`, `SubscriptionsListenResultMetaObject`).
    #[derive(Default)]
    pub struct ResultMeta {
        /// The server's identity (modern, SHOULD be on every result), shared: a server puts the
        /// same one on every result it sends.
        opt server_info: std::sync::Arc<Implementation> = "io.modelcontextprotocol/serverInfo",
        /// The subscription id, on a `subscriptions/listen` result.
        opt subscription_id: RequestId = "io.modelcontextprotocol/subscriptionId",
    }
}

wire_struct! {
    /// `_meta` of a notification (`NotificationMetaObject`).
    #[derive(Default)]
    pub struct NotificationMeta {
        /// The `subscriptions/listen` request this notification belongs to.
        opt subscription_id: RequestId = "io.modelcontextprotocol/subscriptionId",
    }
}
