//! Observation of the requests a client makes: a [`RequestObserver`] is told when a request
//! starts and how it ended, one logical request at a time (its MRTR rounds, its version retry
//! and its re-initialization are one request) — so that a tracer can record a `CLIENT` span per
//! request, the parent of the server's, and a metrics library can count them. Nothing of this
//! runs without an observer (`ClientBuilder::observe`); a result served from the client's cache
//! is not a request and is not told.
//!
//! The outcome keeps the layers apart as the server side does: a result, a tool's error
//! (`isError: true`), a JSON-RPC error (its code), and a failure of the transport or of the
//! answer, where an HTTP status is kept apart from the rest.

use mcp_types::trace::{TraceContext, TraceParent};
use mcp_types::{RequestId, RequestMethod};

use crate::error::ClientError;
use crate::transport::TransportKind;

/// Told about every request a client sends ([the module](self)). Called on the request path:
/// keep it short.
pub trait RequestObserver: Send + Sync + 'static {
    /// A request is about to be sent; the watch returned is told how it ended
    /// ([`RequestWatch::finish`]), and its [`RequestWatch::traceparent`] is sent as the
    /// request's. `None`: nothing to watch for this one.
    fn start(&self, request: &StartedRequest<'_>) -> Option<Box<dyn RequestWatch>>;
}

/// One request, as its watch follows it ([`RequestObserver::start`]).
pub trait RequestWatch: Send {
    /// The span the request belongs to as sent: the server's span becomes its child. `None`
    /// sends the request's own trace context unchanged.
    fn traceparent(&self) -> Option<TraceParent> {
        None
    }

    /// The request is over.
    fn finish(self: Box<Self>, finished: &FinishedRequest<'_>);
}

/// A request about to be sent.
#[derive(Debug)]
#[non_exhaustive]
pub struct StartedRequest<'a> {
    /// Its method.
    pub method: &'a str,
    /// The tool (`tools/call`) or prompt (`prompts/get`) it names.
    pub name: Option<&'a str>,
    /// The trace context it carries: its options' or params' own, else the client's
    /// (`ClientBuilder::trace_context`).
    pub context: &'a TraceContext,
    /// `pipe` (stdio) or `tcp` (HTTP), as OpenTelemetry's `network.transport` names them.
    pub transport: &'static str,
}

impl<'a> StartedRequest<'a> {
    /// A request of `method` naming `name`, carrying `context`, over `transport` (`pipe`,
    /// `tcp`): what a client tells its observer (and an observer's tests).
    pub fn new(
        method: &'a str,
        name: Option<&'a str>,
        context: &'a TraceContext,
        transport: &'static str,
    ) -> StartedRequest<'a> {
        StartedRequest { method, name, context, transport }
    }
}

/// A request that is over ([`RequestWatch::finish`]).
#[derive(Debug)]
#[non_exhaustive]
pub struct FinishedRequest<'a> {
    /// The id of its last attempt on the wire (`None` when none was sent).
    pub id: Option<&'a RequestId>,
    /// How it ended.
    pub outcome: RequestOutcome,
}

impl<'a> FinishedRequest<'a> {
    /// A request whose last attempt had `id`, ended as `outcome`.
    pub fn new(id: Option<&'a RequestId>, outcome: RequestOutcome) -> FinishedRequest<'a> {
        FinishedRequest { id, outcome }
    }
}

/// How a request ended, the layers apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RequestOutcome {
    /// A result.
    Success,
    /// A `tools/call` result with `isError: true`: the tool failed, the protocol did not.
    ToolError,
    /// A JSON-RPC error, by its code.
    Error {
        /// The JSON-RPC error code.
        code: i64,
    },
    /// Refused by HTTP without a JSON-RPC answer, by its status.
    Http {
        /// The HTTP status.
        status: u16,
    },
    /// No answer within the timeout.
    Timeout,
    /// Given up before it was answered: the caller dropped it.
    Cancelled,
    /// Anything else: the transport failed, the answer could not be used, the client closed.
    Failed,
}

impl RequestOutcome {
    /// What `result` says of a request of `method`: for `tools/call`, its `isError` read from
    /// the result's text.
    pub(crate) fn of(method: &str, result: &Result<mcp_types::RawJson, ClientError>) -> RequestOutcome {
        match result {
            Ok(raw) if method == mcp_types::methods::CallTool::METHOD && is_error(raw.get()) => {
                RequestOutcome::ToolError
            }
            Ok(_) => RequestOutcome::Success,
            Err(ClientError::Protocol(e)) => RequestOutcome::Error { code: e.code },
            Err(ClientError::Transport {
                error: crate::transport::TransportError::Http { status, .. },
                ..
            }) => RequestOutcome::Http { status: *status },
            Err(ClientError::Timeout(_)) => RequestOutcome::Timeout,
            Err(_) => RequestOutcome::Failed,
        }
    }
}

/// Whether a tool result's text says `isError: true` (its other members skipped, not built).
fn is_error(result: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Flag {
        #[serde(rename = "isError", default)]
        is_error: Option<bool>,
    }
    serde_json::from_str::<Flag>(result).is_ok_and(|f| f.is_error == Some(true))
}

/// A request being watched: told how it ended exactly once — [`Watching::finish`], or
/// [`RequestOutcome::Cancelled`] when the request's future is dropped first.
pub(crate) struct Watching {
    watch: Option<Box<dyn RequestWatch>>,
    /// The id of its last attempt on the wire.
    pub(crate) last_id: Option<RequestId>,
}

impl Watching {
    pub(crate) fn new(watch: Box<dyn RequestWatch>) -> Watching {
        Watching { watch: Some(watch), last_id: None }
    }

    pub(crate) fn finish(mut self, outcome: RequestOutcome) {
        self.tell(outcome);
    }

    fn tell(&mut self, outcome: RequestOutcome) {
        if let Some(watch) = self.watch.take() {
            watch.finish(&FinishedRequest::new(self.last_id.as_ref(), outcome));
        }
    }
}

impl Drop for Watching {
    fn drop(&mut self) {
        self.tell(RequestOutcome::Cancelled);
    }
}

/// OpenTelemetry's `network.transport` of a transport kind.
pub(crate) fn network_transport(kind: TransportKind) -> &'static str {
    match kind {
        TransportKind::Stdio => "pipe",
        TransportKind::StreamableHttp | TransportKind::HttpSse => "tcp",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_error_is_read_from_the_result_and_errors_kept_apart() {
        let raw = |text: &str| Ok(serde_json::value::RawValue::from_string(text.to_owned()).unwrap());
        let call = "tools/call";
        assert_eq!(
            RequestOutcome::of(call, &raw(r#"{"content":[],"isError":true}"#)),
            RequestOutcome::ToolError
        );
        assert_eq!(
            RequestOutcome::of(call, &raw(r#"{"content":[{"type":"text","text":"isError"}]}"#)),
            RequestOutcome::Success
        );
        assert_eq!(RequestOutcome::of("prompts/get", &raw(r#"{"isError":true}"#)), RequestOutcome::Success);
        let protocol = Err(ClientError::Protocol(mcp_types::ErrorObject::method_not_found("x")));
        assert_eq!(RequestOutcome::of(call, &protocol), RequestOutcome::Error { code: -32601 });
        let timeout = Err(ClientError::Timeout(std::time::Duration::from_secs(1)));
        assert_eq!(RequestOutcome::of(call, &timeout), RequestOutcome::Timeout);
        assert_eq!(RequestOutcome::of(call, &Err(ClientError::Closed)), RequestOutcome::Failed);
    }
}
