//! Transports: how bytes reach a server and come back. A transport moves JSON-RPC messages; it
//! never invents a protocol reply, never retries a request on its own and never interprets a
//! result. The client core ([`crate::Client`]) correlates ids, detects the era and runs MRTR on
//! top of any [`Transport`].
//!
//! Contract, for every implementation:
//!
//! * [`Transport::send`] hands one serialized message to the peer. Every message the peer sends
//!   back — responses, notifications, server→client requests, on whichever stream they arrive —
//!   is pushed, as the raw bytes of one JSON-RPC message, to the [`InboundSender`] the transport
//!   was built with, in the order it arrived on its stream. The channel is bounded: a transport
//!   waits for room before reading more from the server, so memory does not grow with what a
//!   server sends ahead of the core.
//! * When the transport is gone for good (the child exited, the HTTP+SSE stream ended and cannot
//!   be resumed), it pushes one [`Inbound::Closed`] and nothing after it.
//! * Errors of one message ([`TransportError`]) are returned from `send`; they never close the
//!   transport unless the transport really is gone.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use mcp_types::{ProtocolVersion, RequestId};

mod deadline;
#[cfg(feature = "http")]
pub mod http;

pub use deadline::{Deadline, Paused};
#[cfg(feature = "stdio")]
pub mod stdio;

/// A boxed future, as the object-safe [`Transport`] returns them.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Where a transport delivers what the server sent: a bounded channel. A transport waits for
/// room before it reads on (back-pressure: a stdio child blocks on its full stdout pipe, an HTTP
/// server on its full TCP window), so however many messages a server sends, at most
/// [`INBOUND_CAPACITY`] of them wait for the core. The receiving end must be read.
pub type InboundSender = tokio::sync::mpsc::Sender<Inbound>;
/// The receiving end the client core reads.
pub type InboundReceiver = tokio::sync::mpsc::Receiver<Inbound>;

/// How many inbound items ([`inbound_channel`]) wait for the core at most, by default
/// ([`QueueLimits::inbound`](crate::QueueLimits::inbound) sets it per client).
pub const INBOUND_CAPACITY: usize = crate::QueueLimits::DEFAULT_INBOUND;

/// The channel between a transport and the client core, of [`INBOUND_CAPACITY`].
pub fn inbound_channel() -> (InboundSender, InboundReceiver) {
    inbound_channel_of(INBOUND_CAPACITY)
}

/// The channel between a transport and the client core, of `capacity` (at least 1: a channel
/// of none cannot exist).
pub fn inbound_channel_of(capacity: usize) -> (InboundSender, InboundReceiver) {
    tokio::sync::mpsc::channel(capacity.max(1))
}

/// Something the server sent, or the end of the transport.
#[derive(Debug)]
pub enum Inbound {
    /// The bytes of one JSON-RPC message (one stdio line without its newline, one SSE event's
    /// data, one JSON body). Not yet decoded: the core decodes each message exactly once.
    Message(bytes::Bytes),
    /// A message that arrived on the response stream of the client's request `request` (legacy
    /// Streamable HTTP): a request or notification of the server's about that request. Handled
    /// as [`Inbound::Message`], the server's request with that request's tag
    /// ([`RequestOptions::tag`](crate::RequestOptions::tag)).
    Related {
        /// The message's bytes.
        message: bytes::Bytes,
        /// The client's request whose stream carried it.
        request: RequestId,
    },
    /// The response stream of request `id` ended without its answer and cannot be resumed
    /// (modern HTTP stream cut, legacy stream whose resumption failed). The call fails with
    /// this error; its outcome is unknown.
    Unanswered {
        /// The request whose answer will not come.
        id: RequestId,
        /// Why.
        error: TransportError,
    },
    /// The server process was replaced (stdio restart after a crash): every pending request
    /// failed with `error`, and the new process needs a new handshake (era probe, `initialize`).
    Restarted {
        /// What happened to the previous process.
        error: TransportError,
    },
    /// The transport is gone; nothing more will arrive. Pending requests fail with this error.
    Closed(TransportError),
}

/// One outgoing message, already serialized, with what an HTTP transport needs for headers.
#[derive(Debug, Clone)]
pub struct Outgoing {
    /// The complete JSON-RPC message (no trailing newline).
    pub body: bytes::Bytes,
    /// What kind of message it is.
    pub kind: OutgoingKind,
    /// The protocol version this message is sent under, for the `MCP-Protocol-Version` header:
    /// every modern message, and legacy messages after `initialize` (2025-06-18 and later).
    /// `None` for the legacy `initialize` request itself. Modern messages (a version whose era is
    /// modern) also get `Mcp-Method` and the [`RequestHeaders`].
    pub protocol_version: Option<ProtocolVersion>,
}

/// The kind of an [`Outgoing`] message.
#[derive(Debug, Clone)]
pub enum OutgoingKind {
    /// A request; its answer is delivered through the inbound channel.
    Request {
        /// Its id.
        id: RequestId,
        /// Its method (the `Mcp-Method` header on modern HTTP).
        method: String,
        /// Extra routing headers (modern HTTP only; other transports ignore them).
        headers: RequestHeaders,
    },
    /// A notification.
    Notification {
        /// Its method.
        method: String,
    },
    /// A response to a server→client request (legacy only).
    Response,
}

/// The HTTP routing headers of one modern request (SEP-2243). Transports other than HTTP
/// ignore them. The values are final: already encoded (base64 sentinel where needed).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestHeaders {
    /// `Mcp-Name`: `params.name` of tools/call and prompts/get, `params.uri` of resources/read.
    pub name: Option<String>,
    /// `Mcp-Param-<Name>` headers: `(Name, value)`.
    pub params: Vec<(String, String)>,
    /// The `Authorization` of this one request, in every era, instead of the transport's own
    /// ([`http::HttpAuth`] is not asked, and a refusal is not retried): for a client acting
    /// for a caller whose credential it holds on purpose (a gateway passing its caller's token
    /// on, or one exchanged for it).
    pub authorization: Option<Credential>,
}

/// An HTTP `Authorization` value (`Bearer …`) for one request. Its `Debug` never shows it; the
/// transports send it marked sensitive, so no log shows it either.
#[derive(Clone, PartialEq, Eq)]
pub struct Credential(std::sync::Arc<str>);

impl Credential {
    /// `Bearer TOKEN`.
    pub fn bearer(token: &str) -> Self {
        Credential(format!("Bearer {token}").into())
    }

    /// The whole header value. Sensitive: never log it.
    pub fn value(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Credential(***)")
    }
}

/// What a refusal's body says, for the error's message: a JSON-RPC error's `message`, or the
/// first line of a text body (at most 200 characters); `None` when it says nothing readable.
fn http_reason(content_type: Option<&str>, body: &[u8]) -> Option<String> {
    const MAX: usize = 200;
    let json = content_type.is_some_and(|t| t.starts_with("application/json"));
    if json {
        let value: serde_json::Value = serde_json::from_slice(body).ok()?;
        let message = value.get("error")?.get("message")?.as_str()?;
        return Some(message.chars().take(MAX).collect());
    }
    let text = std::str::from_utf8(body).ok()?;
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    // An HTML error page says nothing useful on one line.
    if line.starts_with('<') {
        return None;
    }
    let mut reason: String = line.chars().take(MAX).collect();
    if line.chars().count() > MAX {
        reason.push('…');
    }
    Some(reason)
}

/// Why one message could not be delivered, or why the transport ended.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// The message never left: connection refused, child not running, write failed before any
    /// byte went out. The request was definitely not executed.
    #[error("not sent: {0}")]
    NotSent(String),
    /// The connection broke after the message (or part of it) went out: the server may or may
    /// not have executed it.
    #[error("connection lost: {0}")]
    Lost(String),
    /// The HTTP server answered with a status other than 2xx. `body` holds at most 64 KiB of
    /// the response body; the core inspects it (a JSON-RPC error inside a `400` identifies a
    /// modern server; `404` on a legacy session means the session expired).
    #[error(
        "HTTP status {status}{}{}",
        http_reason(content_type.as_deref(), body).map(|reason| format!(": {reason}")).unwrap_or_default(),
        authorization.as_ref().map(|why| format!(" ({why})")).unwrap_or_default()
    )]
    Http {
        /// The status code.
        status: u16,
        /// `Content-Type` of the answer, if any.
        content_type: Option<String>,
        /// `WWW-Authenticate`, if any (for the authorization layer).
        www_authenticate: Option<String>,
        /// The (bounded) body.
        body: bytes::Bytes,
        /// Why the authorization layer could not cure a `401` or `403` (a login needed, a
        /// refused token request), when it tried.
        authorization: Option<String>,
    },
    /// The server answered with something that is not MCP (wrong content type, an SSE stream
    /// where none may be, an endpoint event pointing to another origin, ...).
    #[error("unexpected answer: {0}")]
    Unexpected(String),
    /// The child process exited (stdio) with this status.
    #[error("server process exited ({0})")]
    Exited(String),
    /// The transport was closed by the client.
    #[error("transport closed")]
    Closed,
}

impl TransportError {
    /// True when the message certainly did not reach the server.
    pub fn definitely_not_sent(&self) -> bool {
        matches!(self, TransportError::NotSent(_) | TransportError::Closed)
    }
}

/// Which wire family a transport is; the core adapts cancellation and headers to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransportKind {
    /// Newline-delimited JSON over a child's stdin/stdout.
    Stdio,
    /// Streamable HTTP (modern or legacy sessions).
    StreamableHttp,
    /// The deprecated HTTP+SSE transport of 2024-11-05.
    HttpSse,
}

/// A transport. Object-safe; the client holds an `Arc<dyn Transport>`.
pub trait Transport: Send + Sync + 'static {
    /// Its kind.
    fn kind(&self) -> TransportKind;

    /// Sends one message.
    ///
    /// * stdio: resolves once the line is written and flushed.
    /// * Streamable HTTP: a request's POST resolves once the response status and headers are in
    ///   (2xx: the JSON body or every SSE event is then pushed to the inbound channel by a task
    ///   of the transport; non-2xx: [`TransportError::Http`]); a notification's or response's
    ///   POST resolves on its `202`.
    /// * HTTP+SSE: resolves on the `202` of the POST to the endpoint; answers come on the stream.
    ///
    /// The client's timeouts cover this call: the future may be dropped before it resolves
    /// (then [`Transport::abandon`] follows for a request). Dropping it must leave the transport
    /// usable for the next message. Time the send of a request waits for something other than
    /// the server (an authorization flow) does not count when the transport pauses the
    /// request's clock meanwhile ([`Deadline::pause_current`], polled within this future).
    fn send(&self, message: Outgoing) -> BoxFuture<'_, Result<(), TransportError>>;

    /// Sends one request, like [`Transport::send`], and lets the caller read its answer itself
    /// where the transport can ([`Sent::Answer`]) instead of through the inbound channel: the
    /// client core's call path, which then takes a request's answer in the calling task, with
    /// no hand-off to another task. Resolves, like `send`, once the request is delivered (on
    /// HTTP: the answer's status and headers are in).
    ///
    /// The default sends with [`Transport::send`], the answer coming through the inbound
    /// channel ([`Sent::Inbound`]).
    fn send_request(&self, message: Outgoing) -> BoxFuture<'_, Result<Sent, TransportError>> {
        Box::pin(async move { self.send(message).await.map(|()| Sent::Inbound) })
    }

    /// The client no longer wants the answer to `id` (cancelled, timed out, dropped). HTTP
    /// closes that request's response stream (the modern cancellation signal); stdio does
    /// nothing (the core sends `notifications/cancelled`).
    fn abandon(&self, id: &RequestId);

    /// A legacy session is established (`initialize` answered, `notifications/initialized`
    /// sent) under `version`. Streamable HTTP opens the standalone GET stream (a `405` means the
    /// server offers none, which is fine) and keeps it open, resuming with `Last-Event-ID`.
    /// Called again after a re-initialize. Other transports ignore it.
    ///
    /// Resolves once the GET stream is open (its response headers are in) or was refused, within
    /// the transport's connect timeout: requests sent afterwards can rely on the stream existing,
    /// so a server that answers on "any open GET stream" is never raced.
    fn session_ready(&self, version: ProtocolVersion) -> BoxFuture<'_, ()>;

    /// Forgets a legacy session (after a `404`), so the next `initialize` starts a new one.
    fn reset_session(&self) {}

    /// Closes the transport: stdio closes stdin, waits, then SIGTERM, then SIGKILL; Streamable
    /// HTTP sends `DELETE` for a legacy session; HTTP+SSE drops its stream. Pushes
    /// [`Inbound::Closed`] unless already closed. Idempotent.
    fn close(&self) -> BoxFuture<'_, ()>;
}

/// Where the answer to a request sent with [`Transport::send_request`] comes from.
pub enum Sent {
    /// The inbound channel: the answer (or the request's [`Inbound::Unanswered`]) is pushed
    /// there, as for [`Transport::send`].
    Inbound,
    /// This future, which reads the answer: it yields the bytes the server answered the
    /// request with, or `None` when they could not be read (the transport then reported the
    /// request with an [`Inbound::Unanswered`]). The client core decodes them as any message
    /// and checks that they are the response to the request (the request fails at once when
    /// they are not), so the transport need not parse them first. Dropping the future abandons
    /// the answer (HTTP: the connection is closed).
    Answer(BoxFuture<'static, Option<bytes::Bytes>>),
}

impl std::fmt::Debug for Sent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Sent::Inbound => "Sent::Inbound",
            Sent::Answer(_) => "Sent::Answer",
        })
    }
}

/// Bounded waits of a transport's shutdown.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ShutdownTimeouts {
    /// After closing stdin, how long the child gets to exit by itself.
    pub after_stdin_close: Duration,
    /// After SIGTERM, how long before SIGKILL.
    pub after_sigterm: Duration,
}

impl ShutdownTimeouts {
    /// Sets [`after_stdin_close`](Self::after_stdin_close).
    #[must_use]
    pub fn with_after_stdin_close(mut self, after_stdin_close: Duration) -> Self {
        self.after_stdin_close = after_stdin_close;
        self
    }

    /// Sets [`after_sigterm`](Self::after_sigterm).
    #[must_use]
    pub fn with_after_sigterm(mut self, after_sigterm: Duration) -> Self {
        self.after_sigterm = after_sigterm;
        self
    }
}

impl Default for ShutdownTimeouts {
    fn default() -> Self {
        ShutdownTimeouts { after_stdin_close: Duration::from_secs(2), after_sigterm: Duration::from_secs(2) }
    }
}

/// The id of a JSON-RPC response (a message with `result` or `error` and an `id`), read without
/// decoding the rest; `None` for requests, notifications and anything unreadable. Transports use
/// it to know whether the answer to a request has arrived on a stream (to resume or report a
/// stream that ended early); the core still decodes every message itself.
pub fn response_id(message: &[u8]) -> Option<RequestId> {
    #[derive(serde::Deserialize)]
    struct Peek {
        id: Option<RequestId>,
        result: Option<serde::de::IgnoredAny>,
        error: Option<serde::de::IgnoredAny>,
        method: Option<serde::de::IgnoredAny>,
    }
    let peek: Peek = serde_json::from_slice(message).ok()?;
    if peek.method.is_some() || (peek.result.is_none() && peek.error.is_none()) {
        return None;
    }
    peek.id
}

/// Why a JSON body is not the response to request `id`, or `None` when it is.
pub(crate) fn not_the_response(body: &[u8], id: &RequestId) -> Option<String> {
    let found = response_id(body);
    if found.as_ref() == Some(id) {
        return None;
    }
    if body.iter().all(u8::is_ascii_whitespace) {
        return Some("the server answered the request with an empty JSON body".into());
    }
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) else {
        return Some("the server's application/json answer is not valid JSON".into());
    };
    if let Some(other) = found {
        return Some(format!(
            "the server's JSON answer is the response to request {other}, not to request {id}"
        ));
    }
    let message = value.get("error").and_then(|e| e.get("message")).and_then(serde_json::Value::as_str);
    match message {
        Some(message) if value.get("id").is_none_or(serde_json::Value::is_null) => {
            Some(format!("the server answered with an error for no request in particular: {message}"))
        }
        _ => Some("the server's JSON answer is not a JSON-RPC response".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::TransportError;

    fn refusal(status: u16, content_type: Option<&str>, body: &str) -> String {
        TransportError::Http {
            status,
            content_type: content_type.map(str::to_owned),
            www_authenticate: None,
            body: bytes::Bytes::copy_from_slice(body.as_bytes()),
            authorization: None,
        }
        .to_string()
    }

    #[test]
    fn a_refusal_says_what_its_body_says() {
        assert_eq!(
            refusal(403, Some("text/plain; charset=utf-8"), "Host not allowed"),
            "HTTP status 403: Host not allowed"
        );
        let json =
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Header mismatch: Mcp-Method"}}"#;
        assert_eq!(
            refusal(400, Some("application/json"), json),
            "HTTP status 400: Header mismatch: Mcp-Method"
        );
        assert_eq!(refusal(404, None, ""), "HTTP status 404");
        assert_eq!(
            refusal(502, Some("text/html"), "<html><body>Bad gateway</body></html>"),
            "HTTP status 502"
        );
        assert_eq!(refusal(500, None, "\n  first line\nsecond"), "HTTP status 500: first line");
        let long = "x".repeat(300);
        assert_eq!(refusal(500, None, &long).chars().count(), "HTTP status 500: ".len() + 201);
    }
}
