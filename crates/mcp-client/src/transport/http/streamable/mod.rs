//! Streamable HTTP: every message is a POST to the MCP endpoint, answered with JSON or with an
//! SSE stream.
//!
//! * **Modern (2026-07-28):** no sessions; every POST carries `MCP-Protocol-Version`,
//!   `Mcp-Method` and, for requests, `Mcp-Name` and the `Mcp-Param-*` headers; a response
//!   stream that breaks before its answer is not resumable, so the request is reported
//!   unanswered at once; closing a stream is how a request is cancelled.
//! * **Legacy (2025-03-26 … 2025-11-25):** the `Mcp-Session-Id` minted by the `initialize`
//!   answer is echoed on every later request; a response stream that ends early is resumed with
//!   `GET` + `Last-Event-ID` after the server's `retry` delay; the standalone `GET` stream
//!   carries the server's own messages; `DELETE` ends the session.
//!
//! A request's POST runs in the caller's task, up to the status and headers of its answer. A
//! JSON answer is then read by the caller too ([`Sent::Answer`]): the common call costs no task
//! and no hand-off. An SSE answer is followed by a task of its own, which `abandon` aborts
//! (closing the connection); dropping the caller's future does the same for everything before.
//! Whatever a stream brings is pushed to the inbound channel as it is read, waiting for room
//! there: a full channel holds the server back (back-pressure).

mod streams;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::transport::http::h1::Response;
use mcp_types::{ProtocolVersion, RequestId};
use reqwest::header::{self, HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, StatusCode, Url};
use tokio::task::AbortHandle;
use tokio_util::sync::CancellationToken;

use super::common::{
    HttpCore, Inbox, JSON, JSON_OR_EVENT_STREAM, MCP_METHOD, MCP_NAME, MCP_PROTOCOL_VERSION, MCP_SESSION_ID,
    ReadError, SseEvents, add_authorization, http_error, media_type, per_request_authorization, read_bounded,
};
use super::config::HttpConfig;
use super::sse::{SseEvent, SseParser};
use crate::transport::{
    BoxFuture, Deadline, Inbound, InboundSender, Outgoing, OutgoingKind, Sent, Transport, TransportError,
    TransportKind, not_the_response, response_id,
};
use crate::wire;

/// The Streamable HTTP client transport (modern stateless requests and legacy sessions).
pub struct StreamableHttpTransport {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for StreamableHttpTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let url = crate::wire::Redacted(self.shared.core.url.as_str()).to_string();
        f.debug_struct("StreamableHttpTransport").field("url", &url).finish()
    }
}

struct Shared {
    core: HttpCore,
    inbox: Inbox,
    state: Mutex<State>,
    closed: AtomicBool,
    /// Cancelled when the transport closes: requests still waiting for their answer's headers
    /// in their callers' tasks end at once, as the tasks of SSE answers are aborted.
    closing: CancellationToken,
    next_task: AtomicU64,
}

#[derive(Default)]
struct State {
    /// The legacy session, once the server named one.
    session_id: Option<HeaderValue>,
    /// The version of the legacy session (from `session_ready`).
    session_version: Option<ProtocolVersion>,
    /// The task of each request whose SSE answer is still being read, with a task number so
    /// that a finished task never removes its successor's entry.
    requests: HashMap<RequestId, (u64, AbortHandle)>,
    /// The standalone GET stream.
    listen: Option<AbortHandle>,
}

impl StreamableHttpTransport {
    /// A transport for the endpoint `config.url`, delivering what the server sends to
    /// `inbound`. Nothing is sent yet. Fails (`NotSent`) on a URL that is not `http(s)` or a
    /// client that cannot be built. Must be used inside a tokio runtime.
    pub fn new(config: HttpConfig, inbound: InboundSender) -> Result<Arc<Self>, TransportError> {
        let shared = Shared {
            core: HttpCore::new(config)?,
            inbox: Inbox::new(inbound),
            state: Mutex::default(),
            closed: AtomicBool::new(false),
            closing: CancellationToken::new(),
            next_task: AtomicU64::new(0),
        };
        Ok(Arc::new(StreamableHttpTransport { shared: Arc::new(shared) }))
    }

    /// The MCP endpoint.
    pub fn url(&self) -> &Url {
        &self.shared.core.url
    }

    /// The legacy session id the server assigned, if any.
    pub fn session_id(&self) -> Option<String> {
        self.shared.lock().session_id.as_ref().and_then(|v| v.to_str().ok()).map(str::to_owned)
    }

    /// Adds or replaces a header sent on every later request (an `Authorization` refreshed by
    /// the authorization layer, for example). The value is never logged.
    pub fn set_header(&self, name: HeaderName, value: HeaderValue) {
        self.shared.core.set_header(name, value);
    }

    /// Stops sending a header set with [`HttpConfig::headers`] or
    /// [`StreamableHttpTransport::set_header`].
    pub fn remove_header(&self, name: &HeaderName) {
        self.shared.core.remove_header(name);
    }
}

impl Drop for StreamableHttpTransport {
    fn drop(&mut self) {
        // Dropped without `close`: stop every task; there is no way to send a DELETE here.
        self.shared.abort_all();
    }
}

impl Transport for StreamableHttpTransport {
    fn kind(&self) -> TransportKind {
        TransportKind::StreamableHttp
    }

    fn send(&self, message: Outgoing) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async move {
            let id = match &message.kind {
                OutgoingKind::Request { id, .. } => Some(id.clone()),
                OutgoingKind::Notification { .. } | OutgoingKind::Response => None,
            };
            // A JSON answer is read by a task of the transport, as `send` promises.
            if let (Sent::Answer(reading), Some(id)) = (self.send_request(message).await?, id) {
                self.shared.read_in_task(id, reading);
            }
            Ok(())
        })
    }

    fn send_request(&self, message: Outgoing) -> BoxFuture<'_, Result<Sent, TransportError>> {
        Box::pin(async move {
            if self.shared.closed.load(Ordering::Acquire) {
                return Err(TransportError::Closed);
            }
            match &message.kind {
                OutgoingKind::Request { id, .. } => {
                    let id = id.clone();
                    self.shared.send_request(id, message).await
                }
                OutgoingKind::Notification { .. } | OutgoingKind::Response => {
                    self.shared.send_one_way(message).await.map(|()| Sent::Inbound)
                }
            }
        })
    }

    fn abandon(&self, id: &RequestId) {
        if let Some((_, task)) = self.shared.lock().requests.remove(id) {
            task.abort();
        }
    }

    fn session_ready(&self, version: ProtocolVersion) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if self.shared.closed.load(Ordering::Acquire) {
                return;
            }
            let (opened, wait) = tokio::sync::oneshot::channel();
            {
                let mut state = self.shared.lock();
                state.session_version = Some(version);
                if let Some(previous) = state.listen.take() {
                    previous.abort();
                }
                let shared = self.shared.clone();
                state.listen = Some(tokio::spawn(shared.listen(version, opened)).abort_handle());
            }
            // Bounded: a GET that hangs before its headers must not hold the handshake.
            let bound = self.shared.core.config.connect_timeout + Duration::from_secs(5);
            let _ = tokio::time::timeout(bound, wait).await;
        })
    }

    fn reset_session(&self) {
        let mut state = self.shared.lock();
        state.session_id = None;
        state.session_version = None;
        if let Some(listen) = state.listen.take() {
            listen.abort();
        }
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if self.shared.closed.swap(true, Ordering::AcqRel) {
                return;
            }
            let listening = self.shared.lock().listen.as_ref().is_some_and(|task| !task.is_finished());
            self.shared.abort_all();
            if listening {
                wire::stream_closed(&Method::GET, &self.shared.core.url);
            }
            self.shared.inbox.close(TransportError::Closed).await;
            let (session, version) = {
                let mut state = self.shared.lock();
                (state.session_id.take(), state.session_version.take())
            };
            if let Some(session) = session {
                let timeout = self.shared.core.config.close_timeout;
                match tokio::time::timeout(timeout, self.shared.delete(session, version)).await {
                    Ok(Ok(status)) => tracing::debug!(%status, "session DELETE answered"),
                    Ok(Err(e)) => tracing::debug!(error = %e, "session DELETE failed"),
                    Err(_) => tracing::debug!("session DELETE timed out"),
                }
            }
        })
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn abort_all(&self) {
        self.closing.cancel();
        let mut state = self.lock();
        for (_, (_, task)) in state.requests.drain() {
            task.abort();
        }
        if let Some(listen) = state.listen.take() {
            listen.abort();
        }
    }

    fn forget_request(&self, id: &RequestId, task: u64) -> Option<(u64, AbortHandle)> {
        let mut state = self.lock();
        match state.requests.get(id) {
            Some((number, _)) if *number == task => state.requests.remove(id),
            _ => None,
        }
    }

    async fn unanswered(&self, id: &RequestId, error: TransportError) {
        tracing::debug!(?id, %error, "request unanswered");
        self.inbox.push(Inbound::Unanswered { id: id.clone(), error }).await;
    }

    /// Pushes a `message` event, once the inbound channel has room; true when it is the
    /// response to `id`.
    async fn deliver(&self, event: SseEvent, id: Option<&RequestId>) -> bool {
        if event.event != "message" {
            tracing::debug!(event = %event.event, "ignoring an SSE event of another type");
            return false;
        }
        let answers = id.is_some_and(|id| response_id(&event.data).as_ref() == Some(id));
        match id {
            Some(request) if !answers => {
                self.inbox.push(Inbound::Related { message: event.data, request: request.clone() }).await
            }
            _ => self.inbox.push(Inbound::Message(event.data)).await,
        }
        answers
    }

    /// The session id and the version header, on any request of the session.
    fn add_session_headers(&self, headers: &mut HeaderMap, version: Option<ProtocolVersion>) {
        if let Some(version) = version {
            headers.insert(MCP_PROTOCOL_VERSION, HeaderValue::from_static(version.as_str()));
        }
        if let Some(session) = &self.lock().session_id {
            headers.insert(MCP_SESSION_ID, session.clone());
        }
    }

    fn post_headers(&self, message: &Outgoing) -> Result<HeaderMap, TransportError> {
        let mut headers = self.core.headers();
        headers.insert(header::CONTENT_TYPE, JSON);
        headers.insert(header::ACCEPT, JSON_OR_EVENT_STREAM);
        self.add_session_headers(&mut headers, message.protocol_version);
        add_authorization(&mut headers, message)?;
        if message.protocol_version.is_some_and(ProtocolVersion::is_modern) {
            let method = match &message.kind {
                OutgoingKind::Request { method, .. } | OutgoingKind::Notification { method } => Some(method),
                OutgoingKind::Response => None,
            };
            if let Some(method) = method {
                headers.insert(MCP_METHOD, header_value("Mcp-Method", method)?);
            }
            if let OutgoingKind::Request { headers: routing, .. } = &message.kind {
                if let Some(name) = &routing.name {
                    headers.insert(MCP_NAME, header_value("Mcp-Name", name)?);
                }
                for (name, value) in &routing.params {
                    let header =
                        HeaderName::from_bytes(format!("mcp-param-{name}").as_bytes()).map_err(|_| {
                            TransportError::NotSent(format!("invalid header name Mcp-Param-{name}"))
                        })?;
                    headers.insert(header, header_value("Mcp-Param-*", value)?);
                }
            }
        }
        Ok(headers)
    }

    /// Remembers the session id an answer carries.
    fn capture_session(&self, response: &Response) {
        let Some(value) = response.headers().get(MCP_SESSION_ID) else { return };
        let bytes = value.as_bytes();
        if bytes.is_empty() || !bytes.iter().all(|b| (0x21..=0x7E).contains(b)) {
            tracing::warn!("ignoring an Mcp-Session-Id that is not visible ASCII");
            return;
        }
        let mut value = value.clone();
        value.set_sensitive(true);
        self.lock().session_id = Some(value);
    }

    /// POSTs a message; a 2xx answer is returned with its session id captured.
    async fn post(&self, message: &Outgoing) -> Result<Response, TransportError> {
        let headers = self.post_headers(message)?;
        let body = Some(message.body.clone());
        let response = if per_request_authorization(message) {
            self.core.send_once(Method::POST, &self.core.url, &headers, body).await?
        } else {
            self.core.send(Method::POST, &self.core.url, headers, body).await?
        };
        if !response.status().is_success() {
            return Err(http_error(response, self.core.config.max_error_body).await);
        }
        self.capture_session(&response);
        Ok(response)
    }

    /// A notification or a response: `202` expected; anything in a 2xx body is delivered.
    async fn send_one_way(&self, message: Outgoing) -> Result<(), TransportError> {
        let mut response = self.post(&message).await?;
        let limit = self.core.config.max_message_size;
        match media_type(&response).as_deref() {
            Some("application/json") => match read_bounded(&mut response, limit).await {
                Ok(body) if !body.iter().all(u8::is_ascii_whitespace) => {
                    self.inbox.push(Inbound::Message(body)).await;
                }
                Ok(_) => {}
                Err(ReadError::TooLarge) => tracing::debug!("oversized body after a notification dropped"),
                Err(ReadError::Broken(e)) => tracing::debug!(error = %e, "body after a notification broke"),
            },
            Some("text/event-stream") => {
                let mut parser = SseParser::new(limit);
                let mut events = SseEvents::default();
                while let Ok(event) = events.next(&mut response, &mut parser).await {
                    self.deliver(event, None).await;
                }
            }
            // 202 without a body, as the specification says.
            _ => {}
        }
        Ok(())
    }

    /// Sends a request in the caller's task, up to the status and headers of its answer: a
    /// JSON answer is left to the caller to read ([`Sent::Answer`]); an SSE answer is followed
    /// by a task of its own. Ends at once when the transport closes meanwhile.
    async fn send_request(
        self: &Arc<Self>,
        id: RequestId,
        message: Outgoing,
    ) -> Result<Sent, TransportError> {
        let closing = self.closing.clone();
        tokio::select! {
            biased;
            sent = self.answer_of(id, message) => sent,
            () = closing.cancelled() => Err(TransportError::Closed),
        }
    }

    async fn answer_of(self: &Arc<Self>, id: RequestId, message: Outgoing) -> Result<Sent, TransportError> {
        let response = self.post(&message).await?;
        let limit = self.core.config.max_message_size;
        let status = response.status();
        if status == StatusCode::ACCEPTED || response.content_length() == Some(0) {
            let error = format!("the server answered the request with HTTP {status} and no body");
            self.unanswered(&id, TransportError::Unexpected(error)).await;
            return Ok(Sent::Inbound);
        }
        match media_type(&response).as_deref() {
            Some("application/json") => {
                if response.content_length().is_some_and(|len| len > limit as u64) {
                    let error = format!("the answer exceeds the limit of {limit} bytes");
                    return Err(TransportError::Unexpected(error));
                }
                let shared = self.clone();
                Ok(Sent::Answer(Box::pin(async move { shared.read_answer(&id, response).await })))
            }
            Some("text/event-stream") => {
                let shared = self.clone();
                let version = message.protocol_version;
                self.in_task(id, move |id| async move {
                    shared.follow_request_stream(&id, response, version).await
                });
                Ok(Sent::Inbound)
            }
            other => {
                let what = match other {
                    Some(media) => format!("content type {media}"),
                    None => "no content type".to_owned(),
                };
                Err(TransportError::Unexpected(format!(
                    "the server answered the request with {what} instead of application/json or text/event-stream"
                )))
            }
        }
    }

    /// Reads a JSON answer whole (bounded): `None` when it could not be read (the request is
    /// then reported unanswered). Whether it is the response to `id` is not looked at here: the
    /// client core decodes it anyway and finds out ([`Sent::Answer`]); [`Self::read_in_task`]
    /// checks for itself.
    async fn read_answer(&self, id: &RequestId, mut response: Response) -> Option<bytes::Bytes> {
        let limit = self.core.config.max_message_size;
        let closing = self.closing.clone();
        let read = tokio::select! {
            biased;
            read = read_bounded(&mut response, limit) => read,
            // The inbound channel says the transport closed; the call hears it from there.
            () = closing.cancelled() => return None,
        };
        match read {
            Ok(body) => return Some(body),
            Err(ReadError::TooLarge) => {
                let error = format!("the answer exceeds the limit of {limit} bytes");
                self.unanswered(id, TransportError::Unexpected(error)).await;
            }
            Err(ReadError::Broken(e)) => self.unanswered(id, TransportError::Lost(e)).await,
        }
        None
    }

    /// Reads a JSON answer in a task of its own, pushing it to the inbound channel
    /// ([`Transport::send`] of a request).
    fn read_in_task(self: &Arc<Self>, id: RequestId, reading: BoxFuture<'static, Option<bytes::Bytes>>) {
        let shared = self.clone();
        self.in_task(id, move |id| async move {
            let Some(body) = reading.await else { return };
            match not_the_response(&body, &id) {
                None => shared.inbox.push(Inbound::Message(body)).await,
                Some(error) => {
                    if !body.iter().all(u8::is_ascii_whitespace) {
                        shared.inbox.push(Inbound::Message(body)).await;
                    }
                    shared.unanswered(&id, TransportError::Unexpected(error)).await;
                }
            }
        });
    }

    /// Runs what remains of request `id`'s exchange in a task that [`Transport::abandon`]
    /// aborts, with the request's clock.
    fn in_task<F: Future<Output = ()> + Send + 'static>(
        self: &Arc<Self>,
        id: RequestId,
        run: impl FnOnce(RequestId) -> F,
    ) {
        let task = self.next_task.fetch_add(1, Ordering::Relaxed);
        let mut state = self.lock();
        let shared = self.clone();
        let task_id = id.clone();
        // The request's clock goes with it, to be paused while it is authorized.
        let clock = Deadline::current();
        let running = run(id.clone());
        let handle = tokio::spawn(async move {
            match clock {
                Some(clock) => clock.scope(running).await,
                None => running.await,
            }
            shared.forget_request(&task_id, task);
        });
        if let Some((_, previous)) = state.requests.insert(id, (task, handle.abort_handle())) {
            // The same id while the previous one is still being read: the previous answer
            // can no longer be told apart, so its stream is closed.
            previous.abort();
        }
    }

    async fn delete(
        &self,
        session: HeaderValue,
        version: Option<ProtocolVersion>,
    ) -> Result<StatusCode, TransportError> {
        let mut headers = self.core.headers();
        headers.insert(MCP_SESSION_ID, session);
        if let Some(version) = version {
            headers.insert(MCP_PROTOCOL_VERSION, HeaderValue::from_static(version.as_str()));
        }
        let response = self.core.send(Method::DELETE, &self.core.url, headers, None).await?;
        Ok(response.status())
    }
}

fn header_value(what: &str, value: &str) -> Result<HeaderValue, TransportError> {
    HeaderValue::from_str(value).map_err(|_| TransportError::NotSent(format!("invalid {what} header value")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_answer_that_is_not_the_response_says_what_is_wrong() {
        let id = RequestId::Number(7);
        let why = |body: &str| not_the_response(body.as_bytes(), &id);
        assert_eq!(why(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#), None);
        assert_eq!(why(r#"{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"no"}}"#), None);
        assert_eq!(why("<html>"), Some("the server's application/json answer is not valid JSON".into()));
        assert_eq!(why(" \n"), Some("the server answered the request with an empty JSON body".into()));
        assert_eq!(
            why(r#"{"jsonrpc":"2.0","id":8,"result":{}}"#),
            Some("the server's JSON answer is the response to request 8, not to request 7".into())
        );
        assert_eq!(
            why(r#"{"jsonrpc":"2.0","id":"a","result":{}}"#),
            Some(r#"the server's JSON answer is the response to request "a", not to request 7"#.into())
        );
        assert_eq!(
            why(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#),
            Some("the server answered with an error for no request in particular: Parse error".into())
        );
        for body in [r#"{"jsonrpc":"2.0","method":"notifications/x"}"#, "[1,2]", r#"{"ok":true}"#] {
            assert_eq!(
                why(body),
                Some("the server's JSON answer is not a JSON-RPC response".into()),
                "{body}"
            );
        }
    }
}
