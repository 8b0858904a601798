//! Client errors. Every failure says what is known about the request's fate ([`Outcome`]),
//! so a caller can decide whether retrying is safe.

use std::time::Duration;

use mcp_types::ErrorObject;

use crate::transport::TransportError;

/// What is known about a request that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The server certainly did not execute it (it never left, or the server refused it before
    /// running it: an HTTP `4xx` without a JSON-RPC answer, a protocol error that precedes
    /// execution). Safe to retry.
    NotExecuted,
    /// The server answered with a JSON-RPC error: it processed the request and said no.
    Answered,
    /// Nobody knows: the connection or process died, or the call timed out or was cancelled
    /// after the request went out. Retry only what is read-only or idempotent.
    Unknown,
}

/// Which bound of [`ListLimits`](crate::ListLimits) a listing passed, and its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ListingBound {
    /// The bytes of all pages' results together ([`ListLimits::max_bytes`](crate::ListLimits::max_bytes)).
    Bytes(usize),
    /// The items of all pages together ([`ListLimits::max_items`](crate::ListLimits::max_items)).
    Items(usize),
    /// The number of pages ([`ListLimits::max_pages`](crate::ListLimits::max_pages)).
    Pages(usize),
}

impl std::fmt::Display for ListingBound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ListingBound::Bytes(n) => write!(f, "the client's bound of {n} bytes (ListLimits::max_bytes)"),
            ListingBound::Items(n) => write!(f, "the client's bound of {n} items (ListLimits::max_items)"),
            ListingBound::Pages(n) => write!(f, "the client's bound of {n} pages (ListLimits::max_pages)"),
        }
    }
}

/// Why a client call failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The server answered with a JSON-RPC error.
    #[error("server error {}: {}", .0.code, .0.message)]
    Protocol(ErrorObject),
    /// The transport failed.
    #[error("transport: {error}")]
    Transport {
        /// The transport's error.
        error: TransportError,
        /// What is known about the request.
        outcome: Outcome,
    },
    /// No answer within the timeout; the request was cancelled.
    #[error("no answer within {0:?}")]
    Timeout(Duration),
    /// The answer could not be understood (not the shape the method's result has).
    #[error("invalid answer to {method}: {message}")]
    InvalidAnswer {
        /// The request's method.
        method: String,
        /// What was wrong.
        message: String,
    },
    /// The server's answer to this request arrived but is not a valid JSON-RPC response (both
    /// `result` and `error`, an `error` that is no error object, a `jsonrpc` other than `"2.0"`,
    /// ...): the exchange is over without a usable answer. The server may have executed the
    /// request.
    #[error("malformed answer to {method}: {message}")]
    MalformedAnswer {
        /// The request's method.
        method: String,
        /// What was wrong.
        message: String,
    },
    /// A `list_all_*` helper stopped following `nextCursor`: the pages together passed one of
    /// the bounds of [`ListLimits`](crate::ListLimits). Every page was answered; none is kept.
    #[error("{method}: the listing exceeds {bound}")]
    ListingTooLarge {
        /// The list method.
        method: String,
        /// The bound that was passed.
        bound: ListingBound,
    },
    /// The server needs input the client cannot give (no handler for it), or asked for input
    /// more times than allowed.
    #[error("cannot complete the request: {0}")]
    InputRequired(String),
    /// The server speaks no protocol version this client supports.
    #[error("no common protocol version (server supports {supported:?})")]
    NoCommonVersion {
        /// What the server offered.
        supported: Vec<String>,
    },
    /// The operation does not exist in the negotiated revision or the server did not declare
    /// the capability.
    #[error("not supported: {0}")]
    Unsupported(String),
    /// A `structuredContent` that does not match the tool's `outputSchema`.
    #[error("structuredContent of {tool} does not match its outputSchema: {message}")]
    InvalidStructuredContent {
        /// The tool.
        tool: String,
        /// The violation.
        message: String,
    },
    /// The task the call became was cancelled (the tasks extension): by `tasks/cancel`, from
    /// this client or another holder of its id.
    #[error("task {0} was cancelled")]
    TaskCancelled(String),
    /// The client was closed.
    #[error("client closed")]
    Closed,
    /// The client's own settings are unusable (a [`QueueLimits`](crate::QueueLimits) bound of
    /// 0, ...): it refused to connect.
    #[error("invalid client settings: {0}")]
    InvalidConfig(String),
}

impl ClientError {
    /// What is known about the request's fate.
    pub fn outcome(&self) -> Outcome {
        match self {
            ClientError::Protocol(_) => Outcome::Answered,
            ClientError::Transport { outcome, .. } => *outcome,
            ClientError::Timeout(_) => Outcome::Unknown,
            ClientError::InvalidAnswer { .. } => Outcome::Unknown,
            ClientError::MalformedAnswer { .. } => Outcome::Unknown,
            ClientError::ListingTooLarge { .. } => Outcome::Answered,
            ClientError::InputRequired(_) => Outcome::NotExecuted,
            ClientError::NoCommonVersion { .. } => Outcome::NotExecuted,
            ClientError::Unsupported(_) => Outcome::NotExecuted,
            ClientError::InvalidStructuredContent { .. } => Outcome::Answered,
            ClientError::TaskCancelled(_) => Outcome::Answered,
            ClientError::Closed => Outcome::NotExecuted,
            ClientError::InvalidConfig(_) => Outcome::NotExecuted,
        }
    }

    /// The JSON-RPC error, when the server answered with one.
    pub fn error_object(&self) -> Option<&ErrorObject> {
        match self {
            ClientError::Protocol(e) => Some(e),
            _ => None,
        }
    }

    pub(crate) fn transport(error: TransportError) -> Self {
        let outcome = match &error {
            TransportError::NotSent(_) | TransportError::Closed => Outcome::NotExecuted,
            TransportError::Http { status, .. } if (400..500).contains(status) => Outcome::NotExecuted,
            _ => Outcome::Unknown,
        };
        ClientError::Transport { error, outcome }
    }

    pub(crate) fn lost(error: TransportError) -> Self {
        let outcome = if error.definitely_not_sent() { Outcome::NotExecuted } else { Outcome::Unknown };
        ClientError::Transport { error, outcome }
    }
}

/// `error` followed by its sources on one line (`error sending request: client error (Connect):
/// tcp connect error: Connection refused (os error 111)`), each source left out when the text
/// so far already says it (many errors repeat their source in their own message).
pub fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let said = cause.to_string();
        if !said.is_empty() && !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        source = cause.source();
    }
    text
}
