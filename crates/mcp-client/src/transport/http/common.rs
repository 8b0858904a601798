//! What both HTTP transports share: the client and its headers, error mapping, bounded body
//! reads, and the inbound channel that ends with exactly one `Closed`.

use std::collections::VecDeque;
use std::sync::{Mutex, RwLock};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use reqwest::header::{self, HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, Url};

use super::auth::{Refusal, is_refusal};
use super::config::HttpConfig;
use super::h1::{Direct, Response};
use super::sse::{SseError, SseEvent, SseParser};
use crate::transport::{Deadline, Inbound, InboundSender, Outgoing, OutgoingKind, TransportError};
use crate::wire;

pub(crate) const MCP_PROTOCOL_VERSION: HeaderName =
    HeaderName::from_static(mcp_types::headers::PROTOCOL_VERSION);
pub(crate) const MCP_SESSION_ID: HeaderName = HeaderName::from_static(mcp_types::headers::SESSION_ID);
pub(crate) const MCP_METHOD: HeaderName = HeaderName::from_static(mcp_types::headers::METHOD);
pub(crate) const MCP_NAME: HeaderName = HeaderName::from_static(mcp_types::headers::NAME);
pub(crate) const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

pub(crate) const JSON: HeaderValue = HeaderValue::from_static("application/json");
pub(crate) const EVENT_STREAM: HeaderValue = HeaderValue::from_static("text/event-stream");
pub(crate) const JSON_OR_EVENT_STREAM: HeaderValue =
    HeaderValue::from_static("application/json, text/event-stream");

/// How long the body of a non-2xx answer may take to arrive; what came by then is kept.
const ERROR_BODY_TIMEOUT: Duration = Duration::from_secs(5);
/// The headers a request adds to the extra ones, at most: content type, accept, protocol
/// version, session, method, name, a few `Mcp-Param-*`, authorization, host, user agent.
const REQUEST_HEADERS: usize = 16;
/// How many same-origin `307`/`308` redirects a request built here follows.
pub(crate) const MAX_REDIRECTS: usize = 5;

/// The client, the URL and the extra headers.
pub(crate) struct HttpCore {
    pub(crate) client: reqwest::Client,
    pub(crate) url: Url,
    pub(crate) config: HttpConfig,
    headers: RwLock<HeaderMap>,
    /// mcp-client's own connections, for a plain `http://` URL ([`super::h1`]).
    direct: Option<Direct>,
}

impl HttpCore {
    pub(crate) fn new(mut config: HttpConfig) -> Result<Self, TransportError> {
        let shown = wire::Redacted(&config.url);
        let url = Url::parse(&config.url)
            .map_err(|e| TransportError::NotSent(format!("invalid URL \"{shown}\": {e}")))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(TransportError::NotSent(format!("not an http(s) URL: \"{shown}\"")));
        }
        let (client, direct) = match config.client.take() {
            Some(client) => (client, None),
            None => (build_client(config.connect_timeout)?, Direct::for_url(&url, config.connect_timeout)),
        };
        let mut headers = std::mem::take(&mut config.headers);
        for value in headers.values_mut() {
            value.set_sensitive(true);
        }
        Ok(HttpCore { client, url, config, headers: RwLock::new(headers), direct })
    }

    /// The extra headers, to which a request adds its own: a map with room for what a
    /// request adds (its own headers, the authorization's, `Host`, `User-Agent`), so that none
    /// of those makes it grow.
    pub(crate) fn headers(&self) -> HeaderMap {
        let extra = self.headers.read().unwrap_or_else(|e| e.into_inner());
        let mut headers = HeaderMap::with_capacity(extra.len() + REQUEST_HEADERS);
        headers.extend(extra.iter().map(|(name, value)| (name.clone(), value.clone())));
        headers
    }

    pub(crate) fn set_header(&self, name: HeaderName, mut value: HeaderValue) {
        value.set_sensitive(true);
        self.headers.write().unwrap_or_else(|e| e.into_inner()).insert(name, value);
    }

    pub(crate) fn remove_header(&self, name: &HeaderName) {
        self.headers.write().unwrap_or_else(|e| e.into_inner()).remove(name);
    }

    /// Sends one request with the extra headers already in `headers`, adding the authorization
    /// layer's; a refusal it can cure (`401`, `403 insufficient_scope`) is handed to it and the
    /// identical request sent again, at most [`HttpConfig::auth_attempts`] times. Returns the
    /// answer whatever its status, except a refusal that stays one: `Err(Http)`.
    pub(crate) async fn send(
        &self,
        method: Method,
        url: &Url,
        mut headers: HeaderMap,
        body: Option<Bytes>,
    ) -> Result<Response, TransportError> {
        let Some(auth) = &self.config.auth else {
            return self.send_once(method, url, &headers, body).await;
        };
        let mut attempts = 0;
        // What the last attempt's authorization replaced, to be put back before the next one
        // adds its own: each attempt sends the request's headers and that attempt's
        // authorization, and nothing of an earlier one.
        let mut replaced: Vec<(HeaderName, Option<HeaderValue>)> = Vec::new();
        loop {
            // Getting the headers may wait for another request's authorization flow: the
            // request's clock stands still meanwhile.
            let authorizing = Deadline::pause_current();
            let mut presented = auth
                .authorize(&method, url)
                .await
                .map_err(|e| TransportError::NotSent(format!("authorization failed: {e}")))?;
            drop(authorizing);
            for (name, previous) in replaced.drain(..).rev() {
                match previous {
                    Some(value) => headers.insert(name, value),
                    None => headers.remove(name),
                };
            }
            for (name, value) in presented.iter_mut() {
                value.set_sensitive(true);
                let previous = headers.insert(name.clone(), value.clone());
                replaced.push((name.clone(), previous));
            }
            let response = self.send_once(method.clone(), url, &headers, body.clone()).await?;
            let status = response.status().as_u16();
            if !is_refusal(status, response.headers()) {
                return Ok(response);
            }
            let refusal =
                Refusal::new(status, method.clone(), url.clone(), response.headers().clone(), presented);
            // The body is read (bounded) before the authorization flow, which may take long.
            let error = http_error(response, self.config.max_error_body).await;
            if attempts >= self.config.auth_attempts {
                tracing::warn!(status, attempts, "still refused after the last authorization attempt");
                return Err(error);
            }
            attempts += 1;
            // Obtaining a new token may wait for a person in a browser: not the server's time.
            let authorizing = Deadline::pause_current();
            let cured = auth.refused(&refusal).await;
            drop(authorizing);
            match cured {
                Ok(true) => tracing::debug!(status, attempts, "authorized again; sending the request again"),
                Ok(false) => return Err(error),
                Err(e) => {
                    tracing::warn!(status, error = %e, "authorization failed");
                    return Err(match error {
                        TransportError::Http { status, content_type, www_authenticate, body, .. } => {
                            let authorization = Some(format!("authorization failed: {e}"));
                            TransportError::Http {
                                status,
                                content_type,
                                www_authenticate,
                                body,
                                authorization,
                            }
                        }
                        other => other,
                    });
                }
            }
        }
    }

    pub(crate) async fn send_once(
        &self,
        method: Method,
        url: &Url,
        headers: &HeaderMap,
        body: Option<Bytes>,
    ) -> Result<Response, TransportError> {
        let sent = match &self.direct {
            Some(direct) if direct.serves(url) => direct.send(method.clone(), url, headers, body).await,
            _ => {
                let mut request = self.client.request(method.clone(), url.clone()).headers(headers.clone());
                if let Some(body) = body {
                    request = request.body(body);
                }
                request.send().await.map(Response::from_reqwest).map_err(send_error)
            }
        };
        match &sent {
            Ok(response) => wire::answered(&method, url, response.status(), response.headers()),
            Err(error) => wire::failed(&method, url, error),
        }
        sent
    }

    /// The delay before reconnection number `failures + 1` of a stream whose server asked
    /// for `retry`: the server's delay (or the default) doubled per fruitless attempt, capped.
    pub(crate) fn reconnect_delay(&self, retry: Option<Duration>, failures: u32) -> Duration {
        let base = retry.unwrap_or(self.config.default_retry);
        base.saturating_mul(1u32 << failures.min(16)).min(self.config.max_retry_delay)
    }
}

fn build_client(connect_timeout: Duration) -> Result<reqwest::Client, TransportError> {
    // Only 307/308 keep the method and the body, and only the same origin may see the
    // credentials in the extra headers; anything else comes back as the 3xx itself.
    let policy = reqwest::redirect::Policy::custom(|attempt| {
        let same_origin =
            attempt.previous().first().is_some_and(|first| first.origin() == attempt.url().origin());
        let keeps_method = matches!(attempt.status().as_u16(), 307 | 308);
        if same_origin && keeps_method && attempt.previous().len() <= MAX_REDIRECTS {
            wire::redirect(attempt.status(), attempt.url());
            attempt.follow()
        } else {
            attempt.stop()
        }
    });
    reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .redirect(policy)
        .user_agent(concat!("mcpkit-client/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| TransportError::NotSent(format!("cannot build the HTTP client: {e}")))
}

/// Maps a failed `send` of reqwest: a connection that was never made means the request was
/// never sent; anything later may have reached the server.
/// Whether `message` carries its own `Authorization` ([`RequestHeaders::authorization`]): then
/// the transport's [`HttpAuth`](super::HttpAuth) is neither asked nor told of a refusal.
///
/// [`RequestHeaders::authorization`]: crate::transport::RequestHeaders::authorization
pub(crate) fn per_request_authorization(message: &Outgoing) -> bool {
    matches!(&message.kind, OutgoingKind::Request { headers, .. } if headers.authorization.is_some())
}

/// Puts `message`'s own `Authorization`, if it has one, into `headers`, marked sensitive.
pub(crate) fn add_authorization(headers: &mut HeaderMap, message: &Outgoing) -> Result<(), TransportError> {
    if let OutgoingKind::Request { headers: routing, .. } = &message.kind
        && let Some(credential) = &routing.authorization
    {
        let mut value = HeaderValue::from_str(credential.value()).map_err(|_| {
            TransportError::NotSent("the request's Authorization value is not a valid header".into())
        })?;
        value.set_sensitive(true);
        headers.insert(header::AUTHORIZATION, value);
    }
    Ok(())
}

pub(crate) fn send_error(e: reqwest::Error) -> TransportError {
    let not_sent = e.is_connect() || e.is_builder();
    let text = error_text(e);
    if not_sent { TransportError::NotSent(text) } else { TransportError::Lost(text) }
}

/// The error with its causes (`error sending request: client error (Connect): tcp connect
/// error: Connection refused (os error 111)`), without the URL (its user information and
/// query may carry credentials). A cause that only repeats what is already said is left out.
pub(crate) fn error_text(e: reqwest::Error) -> String {
    crate::error::with_causes(&e.without_url())
}

/// The media type of an answer, lower-cased, without parameters.
pub(crate) fn media_type(response: &Response) -> Option<String> {
    let value = response.headers().get(header::CONTENT_TYPE)?.to_str().ok()?;
    Some(value.split(';').next().unwrap_or("").trim().to_ascii_lowercase())
}

pub(crate) fn content_type(response: &Response) -> Option<String> {
    response.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).map(str::to_owned)
}

/// A non-2xx answer as [`TransportError::Http`], with at most `limit` bytes of its body.
pub(crate) async fn http_error(mut response: Response, limit: usize) -> TransportError {
    let status = response.status().as_u16();
    let content_type = content_type(&response);
    let www_authenticate = response
        .headers()
        .get(header::WWW_AUTHENTICATE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    let mut body = BytesMut::new();
    let _ = tokio::time::timeout(ERROR_BODY_TIMEOUT, async {
        while body.len() < limit {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    let room = limit - body.len();
                    body.extend_from_slice(&chunk[..chunk.len().min(room)]);
                }
                _ => break,
            }
        }
    })
    .await;
    TransportError::Http { status, content_type, www_authenticate, body: body.freeze(), authorization: None }
}

/// Why a bounded read failed.
pub(crate) enum ReadError {
    TooLarge,
    Broken(String),
}

/// Reads a whole body, refusing one larger than `limit` without buffering more than that.
pub(crate) async fn read_bounded(response: &mut Response, limit: usize) -> Result<Bytes, ReadError> {
    if response.content_length().is_some_and(|len| len > limit as u64) {
        return Err(ReadError::TooLarge);
    }
    let mut body = BytesMut::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if body.len() + chunk.len() > limit {
                    return Err(ReadError::TooLarge);
                }
                body.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok(body.freeze()),
            Err(e) => return Err(ReadError::Broken(e)),
        }
    }
}

/// How an SSE body ended.
pub(crate) enum StreamEnd {
    /// The server ended it (cleanly or not: either way it can be resumed).
    Ended,
    /// An event over the size limit.
    TooLarge(SseError),
}

/// The events of an SSE body, one at a time: the body is read only as fast as its events are
/// taken, so a consumer that waits (for room in the inbound channel) holds the server back
/// through TCP instead of buffering what it sends.
#[derive(Default)]
pub(crate) struct SseEvents {
    /// Events parsed from the last chunk and not taken yet (at most one chunk's worth).
    ready: VecDeque<SseEvent>,
}

impl SseEvents {
    /// The next event of `response`, or how the body ended. The events completed before an
    /// oversized one are still handed out (one may be the answer); a parser that failed, on
    /// this chunk or on one read before (the HTTP+SSE endpoint wait's), then ends the stream at
    /// once, without waiting for another chunk.
    pub(crate) async fn next(
        &mut self,
        response: &mut Response,
        parser: &mut SseParser,
    ) -> Result<SseEvent, StreamEnd> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Ok(event);
            }
            if let Err(e) = parser.feed(&[], &mut Vec::new()) {
                return Err(StreamEnd::TooLarge(e));
            }
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    let mut events = Vec::new();
                    // An error is reported once the events before it are taken (above).
                    let _ = parser.feed(&chunk, &mut events);
                    self.ready.extend(events);
                }
                Ok(None) => return Err(StreamEnd::Ended),
                Err(e) => {
                    tracing::debug!(error = %e, "SSE stream broke");
                    return Err(StreamEnd::Ended);
                }
            }
        }
    }
}

/// The inbound channel, closed exactly once: after the final message nothing is pushed. Every
/// push waits for room in the channel (back-pressure on whatever the transport reads).
pub(crate) struct Inbox(Mutex<Option<InboundSender>>);

impl Inbox {
    pub(crate) fn new(sender: InboundSender) -> Self {
        Inbox(Mutex::new(Some(sender)))
    }

    fn sender(&self) -> Option<InboundSender> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Pushes unless closed, once the channel has room.
    pub(crate) async fn push(&self, item: Inbound) {
        let Some(sender) = self.sender() else { return };
        let Ok(permit) = sender.reserve().await else { return };
        // Closed while waiting for room: nothing follows `Closed`.
        let open = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if open.is_some() {
            permit.send(item);
        }
    }

    /// Pushes `Closed(error)` and closes; false when already closed.
    pub(crate) async fn close(&self, error: TransportError) -> bool {
        let taken = self.0.lock().unwrap_or_else(|e| e.into_inner()).take();
        match taken {
            Some(sender) => {
                let _ = sender.send(Inbound::Closed(error)).await;
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn send_errors_name_their_cause_and_never_the_password() {
        // Bound and never listened on, held to the end: refused, and never handed to another
        // bind.
        let refused = tokio::net::TcpSocket::new_v4().unwrap();
        refused.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = refused.local_addr().unwrap();
        let url = Url::parse(&format!("http://me:hunter2@{addr}/mcp")).unwrap();
        let error = reqwest::Client::new().post(url).send().await.unwrap_err();
        let text = error_text(error);
        assert!(text.starts_with("error sending request: "), "{text}");
        assert!(text.to_ascii_lowercase().contains("connection refused"), "{text}");
        assert!(!text.contains("hunter2"), "{text}");
    }
}
