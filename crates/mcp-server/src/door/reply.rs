//! What the server answers a request with: the response, and — when it refused the request
//! rather than answered it — the kind of refusal, for the transport to put in its own terms.

use mcp_types::{ErrorObject, Response, ResponseId};

/// Why the server refused a request instead of answering it. The JSON-RPC error is in the
/// reply; this says which check it failed, for a transport that has terms of its own for it
/// (mcp-http's HTTP statuses). Errors a request earns after dispatch (an unknown tool, a
/// resource not found, a handler's failure) are answers, not refusals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// Not a JSON-RPC message, or a malformed one (`-32700`/`-32600`).
    Unreadable,
    /// The params (or their `_meta`) do not decode as the method's, a cursor or a
    /// `requestState` is invalid (`-32602`).
    MalformedParams,
    /// A modern request's `_meta` lacks a member 2026-07-28 requires (`-32602`).
    MissingMeta,
    /// A modern request names a version this server does not serve as modern (`-32022`).
    UnsupportedVersion,
    /// A modern request names a method outside the modern set, or of a feature not served
    /// (`-32601`).
    UnknownMethod,
    /// A handler needs a client capability the request did not declare (`-32021`).
    MissingCapability,
    /// Neither modern `_meta` nor a legacy session: only `initialize` (or `ping`) may come
    /// first (`-32602`).
    NeedsHandshake,
    /// A request with this id is already in flight on the connection (`-32600`).
    DuplicateId,
    /// The caller sent this request too often (`code::RATE_LIMITED`, with
    /// `data.retryAfterMs`; `ServerConfig::rate_limit`).
    RateLimited,
}

/// The server's reply to a request: the response, and the refusal it is, if it is one.
#[derive(Debug)]
pub struct Reply {
    /// The JSON-RPC response.
    pub response: Response,
    /// `Some` when the request was refused before (or instead of) running; `None` for an
    /// answer, an error after dispatch included.
    pub refusal: Option<Refusal>,
}

impl Reply {
    pub(crate) fn refused(id: impl Into<ResponseId>, error: ErrorObject, refusal: Refusal) -> Self {
        Reply { response: Response::error(id, error), refusal: Some(refusal) }
    }

    /// The response as JSON bytes.
    pub fn to_vec(&self) -> Vec<u8> {
        // Serializing a response cannot fail: its raw members are already valid JSON.
        serde_json::to_vec(&self.response).unwrap_or_default()
    }
}
