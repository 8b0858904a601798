//! Settings shared by the HTTP transports.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use super::auth::HttpAuth;

/// Settings of an HTTP transport ([`super::StreamableHttpTransport`] or
/// [`super::HttpSseTransport`]). Every limit has a default; build with [`HttpConfig::new`] and
/// the chaining setters, or set the public fields.
#[derive(Clone)]
#[non_exhaustive]
pub struct HttpConfig {
    /// The MCP endpoint (Streamable HTTP) or the SSE endpoint (HTTP+SSE). Requests go to this
    /// URL exactly as given; it is parsed when the transport is built.
    pub url: String,
    /// Headers sent on every request (`Authorization`, `User-Agent`, ...). The transport's own
    /// headers (`Content-Type`, `Accept`, the `MCP-*` family) take precedence over these.
    /// Values are marked sensitive and never logged.
    pub headers: HeaderMap,
    /// A prebuilt client (proxies, TLS roots, pools). Without one the transport builds its
    /// own with [`HttpConfig::connect_timeout`] and a redirect policy that follows only
    /// same-origin `307`/`308`.
    pub client: Option<reqwest::Client>,
    /// How long establishing a connection may take (only for a client the transport builds).
    pub connect_timeout: Duration,
    /// The largest JSON body or SSE event accepted; a larger one is an error, and no more
    /// than about this much is ever buffered for one message.
    pub max_message_size: usize,
    /// How much of the body of a non-2xx answer is kept in [`TransportError::Http`].
    ///
    /// [`TransportError::Http`]: crate::transport::TransportError::Http
    pub max_error_body: usize,
    /// The reconnection delay of an SSE stream when the server gave no `retry` field.
    pub default_retry: Duration,
    /// The longest wait before a reconnection: caps the backoff and an excessive `retry`.
    pub max_retry_delay: Duration,
    /// How many reconnections in a row a resumable stream may make without receiving
    /// anything new before the transport gives up on it.
    pub max_reconnect_attempts: u32,
    /// HTTP+SSE: how long opening the stream and receiving its `endpoint` event may take.
    pub endpoint_timeout: Duration,
    /// How long `close` waits for the `DELETE` of a legacy session.
    pub close_timeout: Duration,
    /// The authorization layer: asked for the credentials of every request, and told when the
    /// server refuses one ([`crate::auth::OAuthClient`] for MCP authorization). Its headers
    /// take precedence over [`HttpConfig::headers`].
    pub auth: Option<Arc<dyn HttpAuth>>,
    /// How many times one request may be refused (`401`, `403 insufficient_scope`) and sent
    /// again after [`HttpAuth::refused`] obtained a new token. The specification's step-up
    /// limit: 3.
    pub auth_attempts: u32,
}

impl HttpConfig {
    /// Settings for the endpoint at `url`, with the defaults: connect timeout 10 s, messages
    /// up to 16 MiB, error bodies kept up to 64 KiB, reconnection after 1 s (or the server's
    /// `retry`), backoff capped at 30 s, 5 fruitless reconnections, endpoint event within
    /// 10 s, `DELETE` within 2 s; no authorization layer, and at most 3 authorization attempts
    /// per request when one is set.
    pub fn new(url: impl Into<String>) -> Self {
        HttpConfig {
            url: url.into(),
            headers: HeaderMap::new(),
            client: None,
            connect_timeout: Duration::from_secs(10),
            max_message_size: 16 * 1024 * 1024,
            max_error_body: 64 * 1024,
            default_retry: Duration::from_secs(1),
            max_retry_delay: Duration::from_secs(30),
            max_reconnect_attempts: 5,
            endpoint_timeout: Duration::from_secs(10),
            close_timeout: Duration::from_secs(2),
            auth: None,
            auth_attempts: 3,
        }
    }

    /// Sets the authorization layer ([`HttpConfig::auth`]).
    pub fn auth(mut self, auth: Arc<dyn HttpAuth>) -> Self {
        self.auth = Some(auth);
        self
    }

    /// Sets [`HttpConfig::auth_attempts`].
    pub fn auth_attempts(mut self, attempts: u32) -> Self {
        self.auth_attempts = attempts;
        self
    }

    /// Adds (or replaces) a header sent on every request.
    pub fn header(mut self, name: HeaderName, mut value: HeaderValue) -> Self {
        value.set_sensitive(true);
        self.headers.insert(name, value);
        self
    }

    /// Uses a prebuilt client.
    pub fn client(mut self, client: reqwest::Client) -> Self {
        self.client = Some(client);
        self
    }

    /// Sets [`HttpConfig::connect_timeout`].
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Sets [`HttpConfig::max_message_size`].
    pub fn max_message_size(mut self, bytes: usize) -> Self {
        self.max_message_size = bytes;
        self
    }

    /// Sets [`HttpConfig::max_error_body`].
    pub fn max_error_body(mut self, bytes: usize) -> Self {
        self.max_error_body = bytes;
        self
    }

    /// Sets [`HttpConfig::default_retry`].
    pub fn default_retry(mut self, delay: Duration) -> Self {
        self.default_retry = delay;
        self
    }

    /// Sets [`HttpConfig::max_retry_delay`].
    pub fn max_retry_delay(mut self, delay: Duration) -> Self {
        self.max_retry_delay = delay;
        self
    }

    /// Sets [`HttpConfig::max_reconnect_attempts`].
    pub fn max_reconnect_attempts(mut self, attempts: u32) -> Self {
        self.max_reconnect_attempts = attempts;
        self
    }

    /// Sets [`HttpConfig::endpoint_timeout`].
    pub fn endpoint_timeout(mut self, timeout: Duration) -> Self {
        self.endpoint_timeout = timeout;
        self
    }

    /// Sets [`HttpConfig::close_timeout`].
    pub fn close_timeout(mut self, timeout: Duration) -> Self {
        self.close_timeout = timeout;
        self
    }
}

impl fmt::Debug for HttpConfig {
    /// Header names only: values (credentials) are never printed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpConfig")
            .field("url", &crate::wire::Redacted(&self.url).to_string())
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("client", &self.client.is_some())
            .field("connect_timeout", &self.connect_timeout)
            .field("max_message_size", &self.max_message_size)
            .field("max_error_body", &self.max_error_body)
            .field("default_retry", &self.default_retry)
            .field("max_retry_delay", &self.max_retry_delay)
            .field("max_reconnect_attempts", &self.max_reconnect_attempts)
            .field("endpoint_timeout", &self.endpoint_timeout)
            .field("close_timeout", &self.close_timeout)
            .field("auth", &self.auth.is_some())
            .field("auth_attempts", &self.auth_attempts)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_prints_header_values() {
        let config = HttpConfig::new("http://127.0.0.1:1/mcp")
            .header(reqwest::header::AUTHORIZATION, HeaderValue::from_static("Bearer secret-token"));
        let printed = format!("{config:?}");
        assert!(printed.contains("authorization"), "{printed}");
        assert!(!printed.contains("secret-token"), "{printed}");
        assert!(config.headers[reqwest::header::AUTHORIZATION].is_sensitive());
    }

    #[test]
    fn debug_never_prints_the_url_password() {
        let printed = format!("{:?}", HttpConfig::new("http://me:hunter2@127.0.0.1:1/mcp"));
        assert!(printed.contains("me:***@127.0.0.1:1/mcp"), "{printed}");
        assert!(!printed.contains("hunter2"), "{printed}");
    }
}
