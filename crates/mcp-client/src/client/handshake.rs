//! Connecting: era detection (the `server/discover` probe, `initialize` fallback, the
//! `-32022` retry), the legacy handshake, re-handshakes after a restart or an expired session.

use std::sync::{Arc, RwLock};

use mcp_types::{
    DiscoverResult, InitializeRequestParams, InitializeResult, ProtocolVersion, ServerCapabilities, code,
};
use serde_json::{Map, Value};

use super::{Client, ClientBuilder, Inner, SUPPORTED_VERSIONS, Session, decode, no_common, pick_version};
use crate::engine::{Engine, Failure, SendOptions};
use crate::error::ClientError;
use crate::transport::{InboundReceiver, Transport, TransportError, TransportKind};

/// How a handshake failed: for good, or in a way that says "try the HTTP+SSE transport".
pub(crate) enum HandshakeError {
    Fatal(ClientError),
    TryHttpSse(ClientError),
}

impl From<ClientError> for HandshakeError {
    fn from(e: ClientError) -> Self {
        HandshakeError::Fatal(e)
    }
}

enum Probe {
    Modern(Box<Session>),
    Legacy(ProtocolVersion),
}

impl ClientBuilder {
    /// Connects over any transport: `inbound` is the receiving end of the channel the
    /// transport was built with; `target` names the server in logs and in the era cache.
    pub async fn connect_transport(
        self,
        transport: Arc<dyn Transport>,
        inbound: InboundReceiver,
        target: impl Into<String>,
    ) -> Result<Client, ClientError> {
        match self.connect_inner(transport, inbound, target.into()).await {
            Ok(c) => Ok(c),
            Err(HandshakeError::Fatal(e) | HandshakeError::TryHttpSse(e)) => Err(e),
        }
    }

    pub(crate) async fn connect_inner(
        self,
        transport: Arc<dyn Transport>,
        inbound: InboundReceiver,
        target: String,
    ) -> Result<Client, HandshakeError> {
        if let Err(e) = self.queue_limits.validate() {
            transport.close().await;
            return Err(e.into());
        }
        let engine = Engine::start(transport.clone(), inbound, self.handlers.clone(), self.queue_limits);
        let initial = self.pinned.unwrap_or(ProtocolVersion::LATEST);
        let inner = Arc::new(Inner {
            engine,
            session: RwLock::new(Session {
                version: initial,
                server_info: None,
                capabilities: ServerCapabilities::default(),
                instructions: None,
                supported_versions: Vec::new(),
                generation: 0,
            }),
            config: self,
            handshake: tokio::sync::Mutex::new(()),
            cache: Default::default(),
            tools: Default::default(),
            modern_meta: RwLock::new(None),
            request_size: Default::default(),
            target,
        });
        let result = {
            let _guard = inner.handshake.lock().await;
            inner.handshake().await
        };
        if let Err(e) = result {
            transport.close().await;
            return Err(e);
        }
        let client = Client { inner };
        client.spawn_invalidation();
        Ok(client)
    }
}

impl Inner {
    fn cached(&self) -> Option<ProtocolVersion> {
        let cache = self.config.era_cache.as_ref()?;
        let detected = cache.get(&self.target)?;
        (detected.transport == self.engine.transport.kind()).then_some(detected.version)
    }

    fn remember(&self, version: ProtocolVersion) {
        if let Some(cache) = &self.config.era_cache {
            cache.put(&self.target, super::Detected { version, transport: self.engine.transport.kind() });
        }
    }

    /// The whole handshake. Caller holds the handshake lock.
    pub(crate) async fn handshake(self: &Arc<Self>) -> Result<(), HandshakeError> {
        self.cache.clear();
        let generation = self.engine.generation();
        let target = self.config.pinned.or_else(|| self.cached());
        let session = match target {
            Some(v) if v.is_modern() => self.modern(v, self.config.pinned.is_some()).await?,
            Some(v) => self.initialize(v).await?,
            // HTTP+SSE exists only in legacy revisions: no probe.
            None if self.engine.transport.kind() == crate::transport::TransportKind::HttpSse => {
                self.initialize(ProtocolVersion::LATEST_LEGACY).await?
            }
            None => match self.probe().await? {
                Probe::Modern(session) => *session,
                Probe::Legacy(v) => self.initialize(v).await?,
            },
        };
        let version = session.version;
        *self.session.write().unwrap_or_else(|p| p.into_inner()) = Session { generation, ..session };
        self.engine.set_version(version);
        self.remember(version);
        tracing::debug!(target: "mcp_client", server = %crate::wire::Redacted(&self.target), %version, "connected");
        Ok(())
    }

    /// Re-runs the handshake (the server process was replaced, or the legacy session expired).
    pub(crate) async fn rehandshake(self: &Arc<Self>) -> Result<(), ClientError> {
        let _guard = self.handshake.lock().await;
        match self.handshake().await {
            Ok(()) => Ok(()),
            Err(HandshakeError::Fatal(e) | HandshakeError::TryHttpSse(e)) => Err(e),
        }
    }

    /// Before each call: a replaced server process needs a new handshake.
    pub(crate) async fn ensure_session(self: &Arc<Self>) -> Result<(), ClientError> {
        if self.session_current() {
            return Ok(());
        }
        // The handshake's future is large and rarely needed: boxed, it does not make every
        // request's future (moved at each await and spawn) carry its size.
        Box::pin(self.establish()).await
    }

    /// Whether the session matches the connection's current generation (no handshake needed).
    fn session_current(&self) -> bool {
        self.session.read().unwrap_or_else(|p| p.into_inner()).generation == self.engine.generation()
    }

    async fn establish(self: &Arc<Self>) -> Result<(), ClientError> {
        let _guard = self.handshake.lock().await;
        let current = self.session.read().unwrap_or_else(|p| p.into_inner()).generation;
        if current == self.engine.generation() {
            return Ok(());
        }
        match self.handshake().await {
            Ok(()) => Ok(()),
            Err(HandshakeError::Fatal(e) | HandshakeError::TryHttpSse(e)) => Err(e),
        }
    }

    fn discover_params(&self, version: ProtocolVersion) -> Map<String, Value> {
        use mcp_types::meta::key;
        let mut meta = Map::new();
        meta.insert(key::PROTOCOL_VERSION.into(), Value::String(version.as_str().into()));
        meta.insert(
            key::CLIENT_CAPABILITIES.into(),
            serde_json::to_value(self.capabilities(version)).unwrap_or_else(|_| Value::Object(Map::new())),
        );
        meta.insert(key::CLIENT_INFO.into(), serde_json::to_value(&self.config.info).unwrap_or(Value::Null));
        let mut params = Map::new();
        params.insert("_meta".into(), Value::Object(meta));
        params
    }

    async fn discover_once(
        &self,
        version: ProtocolVersion,
        timeout: Option<std::time::Duration>,
    ) -> Result<mcp_types::RawJson, Failure> {
        self.engine.set_version(version);
        let options = SendOptions {
            timeout,
            version: Some(version),
            headers: Default::default(),
            ..Default::default()
        };
        let request = self
            .engine
            .request_of("server/discover", &self.discover_params(version))
            .map_err(|error| Failure { error, delivered: false })?;
        self.engine.exchange(request, &options, |_| {}).await
    }

    /// The stdio/HTTP probe: `server/discover` with the newest version.
    async fn probe(self: &Arc<Self>) -> Result<Probe, HandshakeError> {
        let mut version = ProtocolVersion::LATEST;
        let mut retried = false;
        loop {
            let error = match self.discover_once(version, Some(self.config.probe_timeout)).await {
                Ok(raw) => return self.after_discover(&raw).map_err(Into::into),
                // Not even taken in (an HTTP server that accepted the connection and never
                // answered the POST): nothing says the server is legacy, and `initialize`
                // would only wait again. On stdio an unfinished write says nothing of the kind
                // (the line is still written, and a child that is slow to start reads it
                // later), so there the probe's timeout means legacy, as below.
                Err(Failure { error: error @ ClientError::Timeout(_), delivered: false })
                    if self.engine.transport.kind() != TransportKind::Stdio =>
                {
                    tracing::debug!(target: "mcp_client", "the server did not take the probe in");
                    return Err(error.into());
                }
                Err(failure) => failure.error,
            };
            match error {
                ClientError::Protocol(e) if e.code == code::UNSUPPORTED_PROTOCOL_VERSION => {
                    match pick_version(&e, false) {
                        Some(v) if v.is_modern() && !retried => {
                            retried = true;
                            version = v;
                        }
                        Some(v) if !v.is_modern() => return Ok(Probe::Legacy(v)),
                        _ => return Err(no_common(&e).into()),
                    }
                }
                ClientError::Protocol(e)
                    if e.code == code::MISSING_REQUIRED_CLIENT_CAPABILITY
                        || e.code == code::HEADER_MISMATCH =>
                {
                    // A recognized modern error: the server is modern but refused the probe.
                    return Err(ClientError::Protocol(e).into());
                }
                ClientError::Protocol(e) => {
                    tracing::debug!(target: "mcp_client", code = e.code, "probe refused; the server is legacy");
                    return Ok(Probe::Legacy(ProtocolVersion::LATEST_LEGACY));
                }
                ClientError::Timeout(_) => {
                    tracing::debug!(target: "mcp_client", "probe unanswered; the server is legacy");
                    return Ok(Probe::Legacy(ProtocolVersion::LATEST_LEGACY));
                }
                ClientError::Transport { error: TransportError::Http { status, .. }, .. }
                    if status != 401 && status != 403 && (400..500).contains(&status) =>
                {
                    tracing::debug!(target: "mcp_client", status, "probe refused over HTTP; the server is legacy");
                    return Ok(Probe::Legacy(ProtocolVersion::LATEST_LEGACY));
                }
                e => return Err(e.into()),
            }
        }
    }

    fn after_discover(&self, raw: &mcp_types::RawJson) -> Result<Probe, ClientError> {
        let result: DiscoverResult = decode("server/discover", raw)?;
        let common = SUPPORTED_VERSIONS
            .into_iter()
            .find(|v| result.supported_versions.iter().any(|s| s == v.as_str()))
            .ok_or_else(|| ClientError::NoCommonVersion { supported: result.supported_versions.clone() })?;
        if !common.is_modern() {
            return Ok(Probe::Legacy(common));
        }
        Ok(Probe::Modern(Box::new(session_from_discover(common, result))))
    }

    /// A pinned (or cached) modern version: optionally discover, retrying once on `-32022`.
    async fn modern(
        self: &Arc<Self>,
        version: ProtocolVersion,
        pinned: bool,
    ) -> Result<Session, HandshakeError> {
        if !self.config.discover_on_connect {
            return Ok(Session {
                version,
                server_info: None,
                capabilities: ServerCapabilities::default(),
                instructions: None,
                supported_versions: vec![version.as_str().to_string()],
                generation: 0,
            });
        }
        let mut version = version;
        let mut retried = false;
        loop {
            match self.discover_once(version, self.config.request_timeout).await.map_err(|f| f.error) {
                Ok(raw) => {
                    let result: DiscoverResult = decode("server/discover", &raw)?;
                    return Ok(session_from_discover(version, result));
                }
                Err(ClientError::Protocol(e)) if e.code == code::UNSUPPORTED_PROTOCOL_VERSION && !retried => {
                    retried = true;
                    match pick_version(&e, pinned) {
                        Some(v) if v.is_modern() => version = v,
                        Some(v) => return self.initialize(v).await,
                        None => return Err(no_common(&e).into()),
                    }
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// The legacy handshake: `initialize`, then `notifications/initialized`.
    async fn initialize(self: &Arc<Self>, version: ProtocolVersion) -> Result<Session, HandshakeError> {
        let params = InitializeRequestParams::new(
            version.as_str(),
            self.capabilities(version),
            mcp_types::Implementation::clone(&self.config.info),
        );
        let options =
            SendOptions { timeout: self.config.request_timeout, version: None, ..Default::default() };
        let request = self.engine.request_of("initialize", &params)?;
        let raw = match self.engine.request(request, &options, |_| {}).await {
            Ok(raw) => raw,
            Err(ClientError::Transport { error: TransportError::Http { status, .. }, .. })
                if self.engine.transport.kind() == TransportKind::StreamableHttp
                    && (400..500).contains(&status)
                    && status != 401
                    && status != 403 =>
            {
                return Err(HandshakeError::TryHttpSse(ClientError::Unsupported(format!(
                    "POST initialize answered {status}; not a Streamable HTTP endpoint"
                ))));
            }
            // A modern server after all (on stdio, a probe that timed out may already have made
            // the connection modern): use the modern version it names.
            Err(ClientError::Protocol(e)) if e.code == code::UNSUPPORTED_PROTOCOL_VERSION => {
                return match pick_version(&e, true) {
                    Some(v) if self.config.pinned.is_none_or(|p| p == v) => {
                        tracing::debug!(target: "mcp_client", "initialize refused with -32022; the server is modern");
                        Box::pin(self.modern(v, true)).await
                    }
                    _ => Err(no_common(&e).into()),
                };
            }
            Err(e) => return Err(e.into()),
        };
        let result: InitializeResult = decode("initialize", &raw)?;
        let negotiated =
            ProtocolVersion::parse(&result.protocol_version).filter(|v| !v.is_modern()).ok_or_else(|| {
                ClientError::NoCommonVersion { supported: vec![result.protocol_version.clone()] }
            })?;
        self.engine.set_version(negotiated);
        let timeout = self.config.request_timeout;
        self.engine.notify("notifications/initialized", None, Some(negotiated), timeout).await?;
        // The transport bounds this wait itself (the GET stream is optional); a shorter request
        // timeout bounds it further.
        let ready = self.engine.transport.session_ready(negotiated);
        match timeout {
            Some(limit) => {
                if tokio::time::timeout(limit, ready).await.is_err() {
                    tracing::debug!(target: "mcp_client", "the session's GET stream did not open within {limit:?}; going on without waiting");
                }
            }
            None => ready.await,
        }
        if let Some(level) = self.config.log_level
            && result.capabilities.logging.is_some()
        {
            let params = serde_json::json!({"level": level});
            let options = SendOptions {
                timeout: self.config.request_timeout,
                version: Some(negotiated),
                ..Default::default()
            };
            let request = self.engine.request_of("logging/setLevel", &params)?;
            if let Err(e) = self.engine.request(request, &options, |_| {}).await {
                tracing::warn!(target: "mcp_client", "logging/setLevel failed: {e}");
            }
        }
        Ok(Session {
            version: negotiated,
            server_info: Some(result.server_info),
            capabilities: result.capabilities,
            instructions: result.instructions,
            supported_versions: vec![negotiated.as_str().to_string()],
            generation: 0,
        })
    }
}

fn session_from_discover(version: ProtocolVersion, result: DiscoverResult) -> Session {
    Session {
        version,
        server_info: result.meta.and_then(|m| m.server_info).map(std::sync::Arc::unwrap_or_clone),
        capabilities: result.capabilities,
        instructions: result.instructions,
        supported_versions: result.supported_versions,
        generation: 0,
    }
}
