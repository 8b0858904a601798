//! Connecting over the built-in transports.

#![cfg(any(feature = "stdio", feature = "http"))]

#[cfg(feature = "http")]
use super::handshake::HandshakeError;
use super::{Client, ClientBuilder};
use crate::error::ClientError;
#[cfg(feature = "http")]
use crate::transport::TransportKind;

impl ClientBuilder {
    /// Spawns the server command and connects over its stdin/stdout: probes with
    /// `server/discover`, falls back to `initialize` (unless a version is pinned).
    #[cfg(feature = "stdio")]
    pub async fn connect_stdio(
        self,
        command: crate::transport::stdio::StdioCommand,
    ) -> Result<Client, ClientError> {
        self.queue_limits.validate()?;
        let (tx, rx) = self.inbound_channel();
        let target = format!("stdio:{}", command.display());
        let transport =
            crate::transport::stdio::StdioTransport::spawn(command, tx).map_err(ClientError::transport)?;
        self.connect_transport(transport, rx, target).await
    }

    /// Connects to an HTTP endpoint: a modern request first; on a legacy answer, `initialize`
    /// over Streamable HTTP; when the endpoint refuses that POST with a `4xx`, the deprecated
    /// HTTP+SSE transport (GET for the event stream, POSTs to the announced endpoint).
    ///
    /// The detected era is remembered per URL ([`EraCache::global`](super::EraCache::global)
    /// unless [`ClientBuilder::era_cache`] names another) and reused by later connections; when
    /// a remembered era no longer works, it is forgotten and the era detected again.
    #[cfg(feature = "http")]
    pub async fn connect_http(
        mut self,
        config: crate::transport::http::HttpConfig,
    ) -> Result<Client, ClientError> {
        self.queue_limits.validate()?;
        let cache = self.era_cache.get_or_insert_with(super::EraCache::global).clone();
        let target = config.url.clone();
        if self.pinned.is_none() && cache.get(&target).is_some() {
            match self.clone().connect_http_once(config.clone()).await {
                Ok(client) => return Ok(client),
                // Unreachable or unresponsive: detecting again would only fail (or wait) again.
                Err(
                    e @ (ClientError::Transport { outcome: crate::Outcome::NotExecuted, .. }
                    | ClientError::Timeout(_)),
                ) => {
                    return Err(e);
                }
                Err(e) => {
                    let url = crate::wire::Redacted(&target);
                    tracing::info!(target: "mcp_client", %url, "remembered era failed ({e}); detecting again");
                    cache.forget(&target);
                }
            }
        }
        self.connect_http_once(config).await
    }

    #[cfg(feature = "http")]
    async fn connect_http_once(
        self,
        config: crate::transport::http::HttpConfig,
    ) -> Result<Client, ClientError> {
        use crate::transport::http::StreamableHttpTransport;
        let target = config.url.clone();
        let cached = self.era_cache.as_ref().and_then(|c| c.get(&target));
        if cached.is_none_or(|d| d.transport != TransportKind::HttpSse) {
            let (tx, rx) = self.inbound_channel();
            let transport =
                StreamableHttpTransport::new(config.clone(), tx).map_err(ClientError::transport)?;
            match self.clone().connect_inner(transport, rx, target.clone()).await {
                Ok(client) => return Ok(client),
                Err(HandshakeError::Fatal(e)) => return Err(e),
                Err(HandshakeError::TryHttpSse(e)) if self.pinned.is_some_and(|v| v.is_modern()) => {
                    return Err(e);
                }
                Err(HandshakeError::TryHttpSse(e)) => {
                    let url = crate::wire::Redacted(&target);
                    tracing::info!(target: "mcp_client", %url, "{e}; trying the HTTP+SSE transport");
                }
            }
        }
        self.connect_legacy_sse(config).await
    }

    /// Connects to an endpoint of the deprecated HTTP+SSE transport (2024-11-05) directly,
    /// without trying Streamable HTTP first: for a server configured as `"type": "sse"`.
    #[cfg(feature = "http")]
    pub async fn connect_http_sse(
        self,
        config: crate::transport::http::HttpConfig,
    ) -> Result<Client, ClientError> {
        self.queue_limits.validate()?;
        if self.pinned.is_some_and(|v| v.is_modern()) {
            return Err(ClientError::Unsupported(
                "the HTTP+SSE transport carries only the legacy revisions (2024-11-05 to 2025-11-25)".into(),
            ));
        }
        self.connect_legacy_sse(config).await
    }

    #[cfg(feature = "http")]
    async fn connect_legacy_sse(
        self,
        config: crate::transport::http::HttpConfig,
    ) -> Result<Client, ClientError> {
        use crate::transport::http::HttpSseTransport;
        let target = config.url.clone();
        let (tx, rx) = self.inbound_channel();
        // Bounded by the transport's endpoint timeout, and by the request timeout when shorter.
        let opening = HttpSseTransport::connect(config, tx);
        let opened = match self.request_timeout {
            Some(limit) => {
                tokio::time::timeout(limit, opening).await.map_err(|_| ClientError::Timeout(limit))?
            }
            None => opening.await,
        };
        let transport = opened.map_err(ClientError::transport)?;
        self.connect_transport(transport, rx, target).await
    }
}
