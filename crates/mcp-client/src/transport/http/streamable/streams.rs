//! The streams of a Streamable HTTP session that outlive one read: a request's SSE answer
//! followed to its end (and, on legacy sessions, resumed with `GET` + `Last-Event-ID`), and the
//! standalone GET stream of a legacy session. Every event is pushed to the inbound channel as
//! it is taken from the body, so a full channel holds the server back (back-pressure).

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::transport::http::h1::Response;
use mcp_types::{ProtocolVersion, RequestId};
use reqwest::Method;
use reqwest::header::{self, HeaderValue};

use super::super::common::{EVENT_STREAM, LAST_EVENT_ID, SseEvents, StreamEnd, http_error, media_type};
use super::super::sse::SseParser;
use super::Shared;
use crate::transport::TransportError;
use crate::wire;

/// A stream that stayed open this long was healthy, even if it delivered nothing (idle streams
/// with keep-alive comments): its end does not count as a failed reconnection.
const HEALTHY_STREAM: Duration = Duration::from_secs(10);

impl Shared {
    /// Reads a request's SSE stream until its answer; a legacy stream that ends first is
    /// resumed with `GET` + `Last-Event-ID`.
    pub(super) async fn follow_request_stream(
        &self,
        id: &RequestId,
        mut response: Response,
        version: Option<ProtocolVersion>,
    ) {
        let modern = version.is_some_and(ProtocolVersion::is_modern);
        let version = version.or(self.lock().session_version);
        let mut parser = SseParser::new(self.core.config.max_message_size);
        let mut failures = 0;
        let mut resumed = false;
        loop {
            let id_before = parser.last_event_id().map(str::to_owned);
            let opened = Instant::now();
            let mut delivered = false;
            let mut answered = false;
            let mut events = SseEvents::default();
            let end = loop {
                match events.next(&mut response, &mut parser).await {
                    Ok(event) => {
                        delivered = true;
                        answered |= self.deliver(event, Some(id)).await;
                    }
                    Err(end) => break end,
                }
            };
            if resumed {
                wire::stream_closed(&Method::GET, &self.core.url);
            }
            if answered {
                return;
            }
            if let StreamEnd::TooLarge(e) = end {
                self.unanswered(id, TransportError::Unexpected(e.to_string())).await;
                return;
            }
            if modern {
                let error = "the response stream ended before the answer (modern streams are not resumable)";
                self.unanswered(id, TransportError::Lost(error.into())).await;
                return;
            }
            let Some(last) = parser.last_event_id().map(str::to_owned) else {
                let error = "the response stream ended before the answer, without an event id to resume from";
                self.unanswered(id, TransportError::Lost(error.into())).await;
                return;
            };
            if delivered || id_before.as_deref() != Some(&last) || opened.elapsed() >= HEALTHY_STREAM {
                failures = 0;
            } else {
                failures += 1;
            }
            response = match self.resume(&last, version, parser.retry(), &mut failures).await {
                Ok(response) => response,
                Err(e) => {
                    self.unanswered(id, e).await;
                    return;
                }
            };
            parser.restart();
            resumed = true;
        }
    }

    /// Reconnects a request's stream after the server's delay, with bounded attempts.
    pub(super) async fn resume(
        &self,
        last: &str,
        version: Option<ProtocolVersion>,
        retry: Option<Duration>,
        failures: &mut u32,
    ) -> Result<Response, TransportError> {
        loop {
            let attempts = self.core.config.max_reconnect_attempts;
            if *failures >= attempts {
                return Err(TransportError::Lost(format!(
                    "the response stream ended before the answer and {attempts} reconnections brought nothing"
                )));
            }
            tokio::time::sleep(self.core.reconnect_delay(retry, *failures)).await;
            tracing::debug!(last_event_id = last, "resuming a response stream");
            match self.get(Some(last), version).await {
                Ok(response) => return Ok(response),
                Err(TransportError::Http { status, .. }) if is_final(status) => {
                    return Err(TransportError::Lost(format!(
                        "the response stream ended before the answer and resuming it was refused (HTTP {status})"
                    )));
                }
                Err(e) => {
                    tracing::debug!(error = %e, "reconnection failed");
                    *failures += 1;
                }
            }
        }
    }

    /// Opens a GET stream of the session (the standalone one, or a resumption).
    pub(super) async fn get(
        &self,
        last_event_id: Option<&str>,
        version: Option<ProtocolVersion>,
    ) -> Result<Response, TransportError> {
        let mut headers = self.core.headers();
        headers.insert(header::ACCEPT, EVENT_STREAM);
        self.add_session_headers(&mut headers, version);
        if let Some(last) = last_event_id {
            let value = HeaderValue::from_bytes(last.as_bytes()).map_err(|_| {
                TransportError::Unexpected("an event id that cannot be sent back as a header".into())
            })?;
            headers.insert(LAST_EVENT_ID, value);
        }
        let response = self.core.send(Method::GET, &self.core.url, headers, None).await?;
        if !response.status().is_success() {
            return Err(http_error(response, self.core.config.max_error_body).await);
        }
        if media_type(&response).as_deref() != Some("text/event-stream") {
            return Err(TransportError::Unexpected("a GET was not answered with an SSE stream".into()));
        }
        Ok(response)
    }

    /// The standalone GET stream of a legacy session, reopened (with `Last-Event-ID` when the
    /// server numbers its events) until the session ends or reconnecting stops working.
    pub(super) async fn listen(
        self: Arc<Self>,
        version: ProtocolVersion,
        opened: tokio::sync::oneshot::Sender<()>,
    ) {
        let mut parser = SseParser::new(self.core.config.max_message_size);
        let mut failures = 0;
        let mut opened = Some(opened);
        loop {
            let last = parser.last_event_id().map(str::to_owned);
            let attempt = self.get(last.as_deref(), Some(version)).await;
            // The first attempt's outcome (open or refused) releases `session_ready`.
            if let Some(opened) = opened.take() {
                let _ = opened.send(());
            }
            match attempt {
                Ok(mut response) => {
                    parser.restart();
                    let opened = Instant::now();
                    let mut delivered = false;
                    let mut events = SseEvents::default();
                    let end = loop {
                        match events.next(&mut response, &mut parser).await {
                            Ok(event) => {
                                delivered = true;
                                self.deliver(event, None).await;
                            }
                            Err(end) => break end,
                        }
                    };
                    wire::stream_closed(&Method::GET, &self.core.url);
                    if let StreamEnd::TooLarge(e) = end {
                        tracing::warn!(error = %e, "GET stream dropped");
                        return;
                    }
                    if delivered
                        || parser.last_event_id() != last.as_deref()
                        || opened.elapsed() >= HEALTHY_STREAM
                    {
                        failures = 0;
                    } else {
                        failures += 1;
                    }
                }
                Err(TransportError::Http { status: 405, .. }) => {
                    tracing::debug!("the server offers no GET stream");
                    return;
                }
                Err(TransportError::Http { status, .. }) if is_final(status) => {
                    tracing::debug!(status, "the GET stream was refused");
                    return;
                }
                Err(e) => {
                    tracing::debug!(error = %e, "opening the GET stream failed");
                    failures += 1;
                }
            }
            if failures >= self.core.config.max_reconnect_attempts {
                tracing::warn!("the GET stream keeps failing; giving up on it");
                return;
            }
            tokio::time::sleep(self.core.reconnect_delay(parser.retry(), failures)).await;
        }
    }
}

/// A refusal that retrying will not change (4xx other than timeouts and rate limits).
fn is_final(status: u16) -> bool {
    (400..500).contains(&status) && status != 408 && status != 429
}
