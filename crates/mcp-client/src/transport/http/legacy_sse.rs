//! The deprecated HTTP+SSE transport of 2024-11-05: `GET` the SSE endpoint; its first event,
//! `endpoint`, names the URI to POST every client message to; the server's messages (its
//! responses included) arrive as `message` events on the stream. The session lives as long as
//! the stream: when it ends, the transport is gone.

use std::sync::{Arc, Mutex};

use mcp_types::{ProtocolVersion, RequestId};
use reqwest::header::{self, HeaderName, HeaderValue};
use reqwest::{Method, Url};

use super::common::{
    EVENT_STREAM, HttpCore, Inbox, JSON, SseEvents, StreamEnd, add_authorization, http_error, media_type,
    per_request_authorization, read_bounded,
};
use super::config::HttpConfig;
use super::sse::{SseEvent, SseParser};
use crate::transport::{
    BoxFuture, Inbound, InboundSender, Outgoing, Transport, TransportError, TransportKind,
};

/// The HTTP+SSE client transport (2024-11-05).
pub struct HttpSseTransport {
    shared: Arc<Shared>,
    endpoint: Url,
    reader: Mutex<Option<tokio::task::AbortHandle>>,
}

impl std::fmt::Debug for HttpSseTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpSseTransport")
            .field("url", &crate::wire::Redacted(self.shared.core.url.as_str()).to_string())
            .field("endpoint", &crate::wire::Redacted(self.endpoint.as_str()).to_string())
            .finish()
    }
}

struct Shared {
    core: HttpCore,
    inbox: Inbox,
    /// Why the transport is gone, once it is.
    gone: Mutex<Option<TransportError>>,
}

impl Shared {
    /// Ends the transport once: later sends fail with `error`, and `Closed(error)` is pushed.
    async fn end(&self, error: TransportError) {
        let first = {
            let mut gone = self.gone.lock().unwrap_or_else(|e| e.into_inner());
            let first = gone.is_none();
            if first {
                *gone = Some(error.clone());
            }
            first
        };
        if first {
            self.inbox.close(error).await;
        }
    }

    /// Pushes a `message` event, once the inbound channel has room.
    async fn deliver(&self, event: SseEvent) {
        match event.event.as_str() {
            "message" => self.inbox.push(Inbound::Message(event.data)).await,
            "endpoint" => tracing::debug!("ignoring a repeated endpoint event"),
            other => tracing::debug!(event = other, "ignoring an SSE event of another type"),
        }
    }
}

impl HttpSseTransport {
    /// Opens the SSE stream at `config.url` and waits for its `endpoint` event, both together
    /// within `config.endpoint_timeout`. Fails with `Http` on a non-2xx answer, `Unexpected`
    /// when the answer is no SSE stream, the stream does not open or no endpoint comes in time,
    /// or the endpoint is on another origin.
    pub async fn connect(config: HttpConfig, inbound: InboundSender) -> Result<Arc<Self>, TransportError> {
        let core = HttpCore::new(config)?;
        let started = tokio::time::Instant::now();
        let limit = core.config.endpoint_timeout;
        let mut headers = core.headers();
        headers.insert(header::ACCEPT, EVENT_STREAM);
        let mut response =
            tokio::time::timeout_at(started + limit, core.send(Method::GET, &core.url, headers, None))
                .await
                .map_err(|_| {
                    TransportError::Unexpected(format!("the SSE stream did not open within {limit:?}"))
                })??;
        if !response.status().is_success() {
            return Err(http_error(response, core.config.max_error_body).await);
        }
        if media_type(&response).as_deref() != Some("text/event-stream") {
            return Err(TransportError::Unexpected(
                "the SSE endpoint did not answer with an SSE stream".into(),
            ));
        }
        let shared = Arc::new(Shared { core, inbox: Inbox::new(inbound), gone: Mutex::new(None) });
        let mut parser = SseParser::new(shared.core.config.max_message_size);
        let endpoint = tokio::time::timeout_at(started + limit, async {
            loop {
                let chunk = match response.chunk().await {
                    Ok(Some(chunk)) => chunk,
                    Ok(None) => {
                        break Err(TransportError::Lost(
                            "the SSE stream ended before the endpoint event".into(),
                        ));
                    }
                    Err(e) => break Err(TransportError::Lost(e)),
                };
                let mut events = Vec::new();
                let fed = parser.feed(&chunk, &mut events);
                let mut endpoint = None;
                for event in events {
                    if endpoint.is_none() && event.event == "endpoint" {
                        endpoint = Some(event.data);
                    } else {
                        // Messages around the endpoint event are delivered in order.
                        shared.deliver(event).await;
                    }
                }
                if let Some(endpoint) = endpoint {
                    // An oversized event after it ends the stream as soon as the reader runs.
                    break Ok(endpoint);
                }
                fed.map_err(|e| TransportError::Unexpected(e.to_string()))?;
            }
        })
        .await
        .map_err(|_| TransportError::Unexpected(format!("no endpoint event within {limit:?}")))??;
        let endpoint = resolve_endpoint(&shared.core.url, &endpoint)?;
        tracing::debug!(endpoint = endpoint.path(), "HTTP+SSE endpoint received");
        let reader = {
            let shared = shared.clone();
            tokio::spawn(async move {
                let mut events = SseEvents::default();
                let end = loop {
                    match events.next(&mut response, &mut parser).await {
                        Ok(event) => shared.deliver(event).await,
                        Err(end) => break end,
                    }
                };
                crate::wire::stream_closed(&Method::GET, &shared.core.url);
                shared
                    .end(match end {
                        StreamEnd::Ended => TransportError::Lost("the HTTP+SSE stream ended".into()),
                        StreamEnd::TooLarge(e) => TransportError::Unexpected(e.to_string()),
                    })
                    .await;
            })
        };
        Ok(Arc::new(HttpSseTransport { shared, endpoint, reader: Mutex::new(Some(reader.abort_handle())) }))
    }

    /// Where messages are POSTed (from the `endpoint` event).
    pub fn endpoint(&self) -> &Url {
        &self.endpoint
    }

    /// Adds or replaces a header sent on every later request. The value is never logged.
    pub fn set_header(&self, name: HeaderName, value: HeaderValue) {
        self.shared.core.set_header(name, value);
    }

    /// Stops sending a header.
    pub fn remove_header(&self, name: &HeaderName) {
        self.shared.core.remove_header(name);
    }

    fn stop_reader(&self) {
        if let Some(reader) = self.reader.lock().unwrap_or_else(|e| e.into_inner()).take() {
            reader.abort();
        }
    }
}

/// The endpoint event's URI, resolved against the SSE URL; only the same origin is accepted
/// (the extra headers, credentials included, go there).
fn resolve_endpoint(base: &Url, data: &[u8]) -> Result<Url, TransportError> {
    let text = std::str::from_utf8(data)
        .map_err(|_| TransportError::Unexpected("the endpoint event is not UTF-8".into()))?
        .trim();
    let endpoint =
        base.join(text).map_err(|e| TransportError::Unexpected(format!("invalid endpoint {text:?}: {e}")))?;
    if endpoint.origin() != base.origin() {
        return Err(TransportError::Unexpected(format!(
            "the endpoint event points to another origin ({})",
            endpoint.origin().ascii_serialization()
        )));
    }
    Ok(endpoint)
}

impl Drop for HttpSseTransport {
    fn drop(&mut self) {
        self.stop_reader();
    }
}

impl Transport for HttpSseTransport {
    fn kind(&self) -> TransportKind {
        TransportKind::HttpSse
    }

    fn send(&self, message: Outgoing) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async move {
            if let Some(error) = &*self.shared.gone.lock().unwrap_or_else(|e| e.into_inner()) {
                return Err(error.clone());
            }
            let mut headers = self.shared.core.headers();
            headers.insert(header::CONTENT_TYPE, JSON);
            add_authorization(&mut headers, &message)?;
            let core = &self.shared.core;
            let mut response = if per_request_authorization(&message) {
                core.send_once(Method::POST, &self.endpoint, &headers, Some(message.body)).await?
            } else {
                core.send(Method::POST, &self.endpoint, headers, Some(message.body)).await?
            };
            if !response.status().is_success() {
                return Err(http_error(response, self.shared.core.config.max_error_body).await);
            }
            // The body ("Accepted") means nothing; read a little of it so the connection can be
            // reused, but never wait long or buffer much.
            let limit = self.shared.core.config.max_error_body;
            let _ =
                tokio::time::timeout(std::time::Duration::from_secs(1), read_bounded(&mut response, limit))
                    .await;
            Ok(())
        })
    }

    fn abandon(&self, _id: &RequestId) {}

    fn session_ready(&self, _version: ProtocolVersion) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.stop_reader();
            self.shared.end(TransportError::Closed).await;
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_resolve_against_the_stream_url_and_stay_on_its_origin() {
        let base = Url::parse("http://127.0.0.1:8080/sse").unwrap();
        let same = resolve_endpoint(&base, b"/messages?sessionId=abc").unwrap();
        assert_eq!(same.as_str(), "http://127.0.0.1:8080/messages?sessionId=abc");
        let relative = resolve_endpoint(&base, b" messages?x=1 ").unwrap();
        assert_eq!(relative.as_str(), "http://127.0.0.1:8080/messages?x=1");
        let absolute = resolve_endpoint(&base, b"http://127.0.0.1:8080/post").unwrap();
        assert_eq!(absolute.as_str(), "http://127.0.0.1:8080/post");
        for other in [&b"http://evil.example/messages"[..], b"https://127.0.0.1:8080/m", b"//127.0.0.1:9/m"] {
            assert!(matches!(resolve_endpoint(&base, other), Err(TransportError::Unexpected(_))));
        }
    }
}
