//! The client: connect to a server of any era, then call it with typed methods.

mod apps;
mod cache;
mod calls;
mod connect;
mod handshake;
mod listen;
mod options;
mod params;
mod skills;
mod task;
mod tools;
mod traced;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use mcp_schema::Limits;
use mcp_types::{
    ClientCapabilities, Era, ErrorObject, Implementation, InputRequest, InputRequiredResult, InputResponse,
    InputResponses, LoggingLevel, MrtrResult, ProtocolVersion, RawJson, ResultKind, ServerCapabilities,
    ServerNotification, code,
};
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio::sync::broadcast;

use crate::engine::{Engine, SendOptions};
use crate::error::ClientError;
use crate::handler::Handlers;
use crate::transport::{RequestHeaders, TransportError, TransportKind};

pub use apps::App;
pub use listen::{Subscription, SubscriptionEvent};
pub use options::{Detected, EraCache, ListLimits, QueueLimits, RequestOptions};
pub use skills::LoadedSkill;
pub use task::{TaskFn, ToolOutcome};

use cache::ResultCache;
use tools::ToolTable;
use traced::Traced;

/// The versions this client speaks, newest first.
pub const SUPPORTED_VERSIONS: [ProtocolVersion; 5] = [
    ProtocolVersion::V2026_07_28,
    ProtocolVersion::V2025_11_25,
    ProtocolVersion::V2025_06_18,
    ProtocolVersion::V2025_03_26,
    ProtocolVersion::V2024_11_05,
];

/// The largest buffer a request's serialization starts with (one large request must not make
/// every later one allocate as much).
const MAX_SIZE_HINT: usize = 16 * 1024;

/// The default of [`ClientBuilder::max_request_timeout`]: one hour.
const DEFAULT_MAX_REQUEST_TIMEOUT: Duration = Duration::from_secs(3600);

/// Builds a [`Client`]: identity, handlers, and how to find the server's era.
///
/// Every budget of a client is set here, each bounded by default, whatever the server does:
///
/// | budget | default | setting |
/// |---|---|---|
/// | one call, restarted by progress when asked | 300 s | [`ClientBuilder::request_timeout`] |
/// | one call, from its start | 1 h | [`ClientBuilder::max_request_timeout`] |
/// | the era probe | 5 s | [`ClientBuilder::probe_timeout`] |
/// | `input_required` rounds of one call | 8 | [`ClientBuilder::max_input_rounds`] |
/// | one listing (bytes, items, pages) | 16 MiB, 10,000, 10,000 | [`ClientBuilder::list_limits`] |
/// | inbound messages waiting for the core | 64 | [`ClientBuilder::queue_limits`] ([`QueueLimits::inbound`]) |
/// | notifications waiting for one call | 256 | [`QueueLimits::call_events`] |
/// | events waiting for a subscription's reader | 1,024 | [`QueueLimits::subscription_events`] |
/// | notifications a [`Client::notifications`] receiver may fall behind by before it lags | 256 | fixed |
/// | server→client requests answered at once | 16 | [`QueueLimits::server_requests`] |
/// | output schemas | [`Limits::default`] | [`ClientBuilder::validate_output`] |
///
/// The HTTP transports' own bounds (message size, connect timeout, SSE line length, ...) are
/// in [`HttpConfig`](crate::transport::http::HttpConfig) where that feature is on.
#[derive(Debug, Clone)]
pub struct ClientBuilder {
    pub(crate) info: Arc<Implementation>,
    pub(crate) handlers: Handlers,
    pub(crate) pinned: Option<ProtocolVersion>,
    pub(crate) probe_timeout: Duration,
    pub(crate) request_timeout: Option<Duration>,
    pub(crate) max_request_timeout: Option<Duration>,
    pub(crate) max_input_rounds: u32,
    pub(crate) log_level: Option<LoggingLevel>,
    pub(crate) era_cache: Option<EraCache>,
    pub(crate) validate_output: bool,
    pub(crate) schema_limits: Limits,
    pub(crate) discover_on_connect: bool,
    pub(crate) list_limits: ListLimits,
    pub(crate) queue_limits: QueueLimits,
    pub(crate) trace_context: Option<TraceContext>,
    pub(crate) observer: Option<Observer>,
    pub(crate) tasks: bool,
    pub(crate) apps: bool,
}

/// What is told about each request ([`ClientBuilder::observe`]).
#[derive(Clone)]
pub(crate) struct Observer(Arc<dyn crate::observe::RequestObserver>);

impl std::fmt::Debug for Observer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Observer(..)")
    }
}

/// Where a client finds the trace context of the request it is about to send
/// ([`ClientBuilder::trace_context`]).
#[derive(Clone)]
pub(crate) struct TraceContext(Arc<dyn Fn() -> mcp_types::trace::TraceContext + Send + Sync>);

impl std::fmt::Debug for TraceContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TraceContext(..)")
    }
}

impl ClientBuilder {
    /// A client that calls itself `name` `version` (`clientInfo`).
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        ClientBuilder {
            info: Arc::new(Implementation::new(name, version)),
            handlers: Handlers::default(),
            pinned: None,
            probe_timeout: Duration::from_secs(5),
            request_timeout: Some(Duration::from_secs(300)),
            max_request_timeout: Some(DEFAULT_MAX_REQUEST_TIMEOUT),
            max_input_rounds: 8,
            log_level: None,
            era_cache: None,
            validate_output: true,
            schema_limits: Limits::default(),
            discover_on_connect: true,
            list_limits: ListLimits::default(),
            queue_limits: QueueLimits::default(),
            trace_context: None,
            observer: None,
            tasks: false,
            apps: false,
        }
    }

    /// Declares MCP Apps (`io.modelcontextprotocol/ui`, rendering `text/html;profile=mcp-app`):
    /// for a host that renders apps (servers may offer their app tools only to such clients).
    /// Off by default.
    pub fn apps(mut self, yes: bool) -> Self {
        self.apps = yes;
        self
    }

    /// Declares the tasks extension (`io.modelcontextprotocol/tasks`) to modern servers: a
    /// `tools/call` may then be answered with a task, which [`Client::call_tool`] follows to its
    /// end (polling, answering its questions with the handlers, cancelling it when dropped)
    /// and [`Client::call_tool_or_task`] returns as it is. Off by default.
    pub fn tasks(mut self, yes: bool) -> Self {
        self.tasks = yes;
        self
    }

    /// The full `clientInfo` (title, icons, ...).
    pub fn info(mut self, info: Implementation) -> Self {
        self.info = Arc::new(info);
        self
    }

    /// What the client answers when the server asks (elicitation, sampling, roots); also
    /// decides the capabilities the client declares.
    pub fn handlers(mut self, handlers: Handlers) -> Self {
        self.handlers = handlers;
        self
    }

    /// Speaks exactly `version`: no era detection (a legacy version means `initialize` with it,
    /// a modern one means per-request `_meta`).
    pub fn pin_version(mut self, version: ProtocolVersion) -> Self {
        self.pinned = Some(version);
        self
    }

    /// How long the `server/discover` probe of era detection may take (default 5 s). A probe
    /// the server took in but left unanswered means a legacy server (`initialize` follows); a
    /// probe the server never even took in (an HTTP server that accepted the connection but
    /// sent no answer, a child that does not read its stdin) fails the connection with
    /// [`ClientError::Timeout`].
    pub fn probe_timeout(mut self, timeout: Duration) -> Self {
        self.probe_timeout = timeout;
        self
    }

    /// The default timeout of every call, and of each step of the handshake but the probe
    /// (`initialize`, `notifications/initialized`, the discovery of a pinned or remembered
    /// version, opening the HTTP+SSE stream). Default 300 s; `None` waits forever. The clock
    /// starts before the request is sent, so a server that never answers the HTTP request
    /// times out as well; [`RequestOptions::reset_timeout_on_progress`] restarts it on progress.
    ///
    /// The time an HTTP authorization layer spends obtaining a token (after a refusal, which
    /// may wait for a person in a browser) does not count against any timeout, the probe's
    /// included: the HTTP transport pauses the request's clock meanwhile, and its deadlines move
    /// on by the time paused (see [`Deadline`](crate::transport::Deadline)).
    pub fn request_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// The default hard limit of every call, counted from its start, that progress
    /// notifications never extend (the specification's maximum timeout). Default 1 hour;
    /// `None` lets a call that keeps reporting progress run forever. A call's own
    /// [`RequestOptions::max_timeout`] takes precedence; [`RequestOptions::no_timeout`] lifts it.
    pub fn max_request_timeout(mut self, max: Option<Duration>) -> Self {
        self.max_request_timeout = max;
        self
    }

    /// How many `input_required` rounds one call may take before it fails (default 8).
    pub fn max_input_rounds(mut self, rounds: u32) -> Self {
        self.max_input_rounds = rounds;
        self
    }

    /// The log level to ask for: `_meta` of every modern request; `logging/setLevel` after a
    /// legacy `initialize` when the server has the `logging` capability.
    pub fn log_level(mut self, level: LoggingLevel) -> Self {
        self.log_level = Some(level);
        self
    }

    /// Remembers each server's era in `cache` and reuses what it already knows.
    pub fn era_cache(mut self, cache: EraCache) -> Self {
        self.era_cache = Some(cache);
        self
    }

    /// Validates `structuredContent` against the tool's `outputSchema` (default on; schemas
    /// are first checked against `limits`, and a schema over them is not used).
    pub fn validate_output(mut self, yes: bool, limits: Limits) -> Self {
        self.validate_output = yes;
        self.schema_limits = limits;
        self
    }

    /// The bounds of every listing that follows `nextCursor` (the `list_all_*` helpers, and the
    /// listing a `tools/call` makes first on modern HTTP to learn the tool's schema): 16 MiB,
    /// 10,000 items and 10,000 pages by default ([`ListLimits`]).
    /// [`RequestOptions::list_limits`] overrides them for one call.
    pub fn list_limits(mut self, limits: ListLimits) -> Self {
        self.list_limits = limits;
        self
    }

    /// The bounds of what the client queues for the server ([`QueueLimits`]: inbound messages,
    /// each call's notifications, each subscription's events, server→client requests answered
    /// at once). Each must be at least 1, or `connect_*` fails with
    /// [`ClientError::InvalidConfig`].
    pub fn queue_limits(mut self, limits: QueueLimits) -> Self {
        self.queue_limits = limits;
        self
    }

    /// The channel a transport built by hand delivers to (for
    /// [`ClientBuilder::connect_transport`]), of [`QueueLimits::inbound`] (at least 1); the
    /// built-in `connect_*` make theirs this way.
    pub fn inbound_channel(&self) -> (crate::transport::InboundSender, crate::transport::InboundReceiver) {
        crate::transport::inbound_channel_of(self.queue_limits.inbound)
    }

    /// With a pinned modern version, whether `connect` calls `server/discover` to learn the
    /// server's identity and capabilities (default true).
    pub fn discover_on_connect(mut self, yes: bool) -> Self {
        self.discover_on_connect = yes;
        self
    }

    /// Propagates trace context: before each request, `current()` gives the trace context the
    /// request belongs to (an application's current OpenTelemetry span and baggage, say: a
    /// `TraceParent` converts into one), and its `traceparent`, `tracestate` and `baggage` go in
    /// the request's `_meta` (W3C Trace Context and Baggage, SEP-414), over every transport. A
    /// request whose options or params already carry a `traceparent` keeps its own context.
    pub fn trace_context(
        mut self,
        current: impl Fn() -> mcp_types::trace::TraceContext + Send + Sync + 'static,
    ) -> Self {
        self.trace_context = Some(TraceContext(Arc::new(current)));
        self
    }

    /// Tells `observer` about every request this client sends: when it starts, and how it
    /// ended (`mcp_client::observe`). A tracer's watch gives the span the request is sent
    /// under, so that the server's span is its child.
    pub fn observe(mut self, observer: Arc<dyn crate::observe::RequestObserver>) -> Self {
        self.observer = Some(Observer(observer));
        self
    }
}

/// What the handshake (or discovery) established.
#[derive(Debug, Clone)]
pub(crate) struct Session {
    pub(crate) version: ProtocolVersion,
    pub(crate) server_info: Option<Implementation>,
    pub(crate) capabilities: ServerCapabilities,
    pub(crate) instructions: Option<String>,
    pub(crate) supported_versions: Vec<String>,
    pub(crate) generation: u64,
}

pub(crate) struct Inner {
    pub(crate) engine: Arc<Engine>,
    pub(crate) config: ClientBuilder,
    pub(crate) session: RwLock<Session>,
    pub(crate) handshake: tokio::sync::Mutex<()>,
    pub(crate) cache: ResultCache,
    pub(crate) tools: ToolTable,
    /// The client's own `_meta` of a modern request (version, capabilities, identity, the
    /// configured log level) as JSON text, serialized once for the version it was made for:
    /// a call with no `_meta` entries of its own sends it as it is.
    pub(crate) modern_meta: RwLock<Option<(ProtocolVersion, Box<RawValue>)>>,
    /// The size of the last request serialized (at most [`MAX_SIZE_HINT`]): the next one's
    /// buffer starts at it.
    pub(crate) request_size: AtomicUsize,
    pub(crate) target: String,
}

/// A connection to one MCP server. Cheap to clone; every clone shares the connection. Calls
/// may run concurrently.
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.session();
        f.debug_struct("Client")
            .field("target", &crate::wire::Redacted(&self.inner.target).to_string())
            .field("version", &s.version)
            .field("transport", &self.transport_kind())
            .finish()
    }
}

impl Client {
    pub(crate) fn session(&self) -> Session {
        self.inner.session.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// One part of the session, read in place (not the whole session cloned for it).
    fn session_part<T>(&self, part: impl FnOnce(&Session) -> T) -> T {
        part(&self.inner.session.read().unwrap_or_else(|p| p.into_inner()))
    }

    /// The protocol version in use.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.inner.version()
    }

    /// The server's era: modern (per-request metadata) or legacy (`initialize`).
    pub fn era(&self) -> Era {
        self.protocol_version().era()
    }

    /// The transport in use.
    pub fn transport_kind(&self) -> TransportKind {
        self.inner.engine.transport.kind()
    }

    /// The server's name and version, when it gave them.
    pub fn server_info(&self) -> Option<Implementation> {
        self.session_part(|s| s.server_info.clone())
    }

    /// The server's capabilities.
    pub fn server_capabilities(&self) -> ServerCapabilities {
        self.session_part(|s| s.capabilities.clone())
    }

    /// The server's instructions, when it gave any.
    pub fn instructions(&self) -> Option<String> {
        self.session_part(|s| s.instructions.clone())
    }

    /// The versions the server said it supports (`server/discover`), or the negotiated one.
    pub fn server_versions(&self) -> Vec<String> {
        self.session_part(|s| s.supported_versions.clone())
    }

    /// The capabilities this client declares.
    pub fn client_capabilities(&self) -> ClientCapabilities {
        self.inner.capabilities(self.protocol_version())
    }

    /// Notifications the server sends outside any call (legacy list changes, resource updates,
    /// log messages). Each receiver sees every notification sent after it subscribed.
    pub fn notifications(&self) -> broadcast::Receiver<ServerNotification> {
        self.inner.engine.subscribe()
    }

    /// Why the transport is gone, once it is (a stdio server that exited and was not restarted,
    /// a transport closed by [`Client::close`]); `None` while it is usable. A pool polls this to
    /// learn that a connection needs replacing without sending anything.
    pub fn closed(&self) -> Option<String> {
        self.inner.engine.closed_error().map(|e| e.to_string())
    }

    /// Closes the connection (stdio: the child is stopped; legacy HTTP: the session deleted).
    pub async fn close(&self) {
        self.inner.engine.transport.close().await;
    }

    /// Sends any request by method type, with MRTR and the version retry, and decodes its
    /// result.
    pub async fn request<M: mcp_types::RequestMethod>(
        &self,
        params: &M::Params,
        options: &RequestOptions,
    ) -> Result<M::Result, ClientError> {
        let params = params_map(params)?;
        self.inner.call::<M::Result>(M::METHOD, params, options).await
    }

    /// Sends a request once and returns what a modern server answered — its result, or its
    /// `input_required` — without fulfilling input requests: for a client that passes them on
    /// to someone else (a gateway, to its own caller) and retries with
    /// `inputResponses`/`requestState` set in `params`. Nothing is taken from the cache; on a legacy
    /// server this is [`Client::request`].
    pub async fn request_mrtr<M: mcp_types::RequestMethod>(
        &self,
        params: &M::Params,
        options: &RequestOptions,
    ) -> Result<MrtrResult<M::Result>, ClientError>
    where
        M::Result: DeserializeOwned,
    {
        match self.request_mrtr_raw::<M>(params, options).await? {
            MrtrResult::Complete(raw) => decode(M::METHOD, &raw).map(MrtrResult::Complete),
            MrtrResult::InputRequired(required) => Ok(MrtrResult::InputRequired(required)),
            MrtrResult::Task(created) => Ok(MrtrResult::Task(created)),
        }
    }

    /// [`Client::request_mrtr`], with a complete result left as the JSON text the server sent
    /// (a gateway passes it on as it came, without decoding it and encoding it again); its
    /// questions and its task are decoded as there.
    pub async fn request_mrtr_raw<M: mcp_types::RequestMethod>(
        &self,
        params: &M::Params,
        options: &RequestOptions,
    ) -> Result<MrtrResult<RawJson>, ClientError> {
        self.request_mrtr_raw_map::<M>(&params_map(params)?, options).await
    }

    /// [`Client::request_mrtr_raw`] with the params as the JSON object they are sent as (a
    /// gateway has a caller's arguments as one already, and need not copy them into another).
    pub async fn request_mrtr_raw_map<M: mcp_types::RequestMethod>(
        &self,
        params: &Map<String, Value>,
        options: &RequestOptions,
    ) -> Result<MrtrResult<RawJson>, ClientError> {
        let raw = self.inner.call_raw(M::METHOD, params, options, Mrtr::Pass, |_| {}).await?;
        // Decoded once, into the type its `resultType` names (not into a JSON tree first).
        match ResultKind::of(raw.get()).map_err(|e| invalid(M::METHOD, e))? {
            ResultKind::Task => {
                self.check_declared(options)?;
                decode(M::METHOD, &raw).map(MrtrResult::Task)
            }
            ResultKind::InputRequired => decode(M::METHOD, &raw).map(MrtrResult::InputRequired),
            ResultKind::Complete => Ok(MrtrResult::Complete(raw)),
        }
    }

    /// [`Client::request`], also returning the result exactly as the server sent it (for
    /// printing or forwarding it byte for byte).
    pub async fn request_raw<M: mcp_types::RequestMethod>(
        &self,
        params: &M::Params,
        options: &RequestOptions,
    ) -> Result<(M::Result, mcp_types::RawJson), ClientError> {
        let params = params_map(params)?;
        let raw = self.inner.call_raw(M::METHOD, &params, options, Mrtr::Fulfil, |_| {}).await?;
        Ok((decode(M::METHOD, &raw)?, raw))
    }
}

/// A request's params as the JSON object they are sent as (what [`Client::request_mrtr_raw_map`]
/// takes): a type that serializes to nothing (`null`) is no params, anything else but an
/// object is an error.
pub fn params_map<T: serde::Serialize>(params: &T) -> Result<Map<String, Value>, ClientError> {
    match serde_json::to_value(params) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(Value::Null) => Ok(Map::new()),
        Ok(other) => Err(ClientError::InvalidAnswer {
            method: "(params)".into(),
            message: format!("params must serialize to an object, not {other}"),
        }),
        Err(e) => Err(ClientError::InvalidAnswer { method: "(params)".into(), message: e.to_string() }),
    }
}

impl Inner {
    pub(crate) fn capabilities(&self, version: ProtocolVersion) -> ClientCapabilities {
        let mut caps = self.config.handlers.capabilities();
        if version.is_modern()
            && let Some(roots) = caps.roots.as_mut()
        {
            roots.list_changed = None;
        }
        if version.is_modern() && self.config.tasks {
            task::with_tasks(&mut caps);
        }
        if self.config.apps {
            let declared = mcp_types::extensions::ui::client_capabilities().extensions.unwrap_or_default();
            caps.extensions.get_or_insert_with(Default::default).extend(declared);
        }
        caps
    }

    fn version(&self) -> ProtocolVersion {
        self.session.read().unwrap_or_else(|p| p.into_inner()).version
    }

    fn set_version(&self, version: ProtocolVersion) {
        self.session.write().unwrap_or_else(|p| p.into_inner()).version = version;
        self.engine.set_version(version);
    }

    /// One logical call: cache, MRTR rounds, typed decoding.
    pub(crate) async fn call<R: DeserializeOwned>(
        self: &Arc<Self>,
        method: &str,
        params: Map<String, Value>,
        options: &RequestOptions,
    ) -> Result<R, ClientError> {
        let raw = self.call_raw(method, &params, options, Mrtr::Fulfil, |_| {}).await?;
        decode(method, &raw)
    }

    /// Like [`Inner::call`], returning the complete result's raw JSON.
    pub(crate) async fn call_raw(
        self: &Arc<Self>,
        method: &str,
        params: &Map<String, Value>,
        options: &RequestOptions,
        mrtr: Mrtr,
        mut on_tagged: impl FnMut(mcp_types::Notification),
    ) -> Result<RawJson, ClientError> {
        let context = self.request_context(params, options);
        let start = || self.watch(method, params, &context);
        if let Err(e) = self.ensure_session().await {
            // The request failed before it could be sent (a handshake again, refused): told so.
            if let Some(watch) = start() {
                crate::observe::Watching::new(watch)
                    .finish(crate::observe::RequestOutcome::of(method, &Err(e.clone())));
            }
            return Err(e);
        }
        let cache_key =
            if self.version().is_modern() { cache::ResultCache::key(method, params) } else { None };
        if let Some(key) = &cache_key
            && !options.bypass_cache
            && mrtr == Mrtr::Fulfil
            && let Some(hit) = self.cache.get(key)
        {
            return Ok(hit);
        }
        let watch = start();
        let traced = match watch.as_ref().and_then(|w| w.traceparent()) {
            // Sent under the watch's span: it replaces whatever parent the request had.
            Some(own) => Some(Traced { context: context.with_parent(own), replace: true }),
            None => (!context.is_empty()).then_some(Traced { context, replace: false }),
        };
        let Some(watch) = watch else {
            return self
                .rounds(method, params, options, mrtr, traced.as_ref(), cache_key, &mut on_tagged, None)
                .await;
        };
        let mut watching = crate::observe::Watching::new(watch);
        let result = self
            .rounds(
                method,
                params,
                options,
                mrtr,
                traced.as_ref(),
                cache_key,
                &mut on_tagged,
                Some(&mut watching.last_id),
            )
            .await;
        watching.finish(crate::observe::RequestOutcome::of(method, &result));
        result
    }

    /// The rounds of one logical call: each answer, MRTR's questions fulfilled, the result
    /// cached. `last_id` is told the id of each attempt.
    #[allow(clippy::too_many_arguments)]
    async fn rounds(
        self: &Arc<Self>,
        method: &str,
        params: &Map<String, Value>,
        options: &RequestOptions,
        mrtr: Mrtr,
        traced: Option<&Traced>,
        cache_key: Option<String>,
        on_tagged: &mut impl FnMut(mcp_types::Notification),
        mut last_id: Option<&mut Option<mcp_types::RequestId>>,
    ) -> Result<RawJson, ClientError> {
        let mut answers: Option<params::InputAnswers> = None;
        let mut rounds = 0u32;
        loop {
            let raw = self
                .send(method, params, answers.as_ref(), options, traced, on_tagged, last_id.as_deref_mut())
                .await?;
            if mrtr == Mrtr::Pass || !self.version().is_modern() || !is_input_required(&raw) {
                if let Some(key) = cache_key {
                    self.cache.put(key, &raw);
                }
                return Ok(raw);
            }
            let required: InputRequiredResult = match serde_json::from_str::<MrtrResult<Value>>(raw.get()) {
                Ok(MrtrResult::InputRequired(r)) => r,
                Ok(MrtrResult::Complete(_) | MrtrResult::Task(_)) => return Ok(raw),
                Err(e) => return Err(invalid(method, e)),
            };
            rounds += 1;
            if rounds > self.config.max_input_rounds {
                return Err(ClientError::InputRequired(format!(
                    "{method} still needs input after {} rounds",
                    self.config.max_input_rounds
                )));
            }
            let responses = Box::pin(self.fulfil(required.input_requests.unwrap_or_default())).await?;
            answers = Some((responses, required.request_state));
        }
    }

    /// Answers a server's input requests with the handlers, all at once (a person may be asked
    /// two things together, and a task shows them outstanding together): the answers, or the
    /// first that could not be given.
    async fn fulfil(&self, requests: mcp_types::InputRequests) -> Result<InputResponses, ClientError> {
        let handlers = &self.config.handlers;
        let answering = requests.into_iter().map(|(key, request)| {
            Box::pin(async move {
                let answer = match request {
                    InputRequest::Elicit(r) => match r.params {
                        Some(p) => handlers.elicit(p).await.map(InputResponse::Elicit),
                        None => Err(ErrorObject::invalid_params("elicitation/create without params")),
                    },
                    InputRequest::CreateMessage(r) => match r.params {
                        Some(p) => handlers.sample(p).await.map(InputResponse::CreateMessage),
                        None => Err(ErrorObject::invalid_params("sampling/createMessage without params")),
                    },
                    InputRequest::ListRoots(_) => handlers.roots().await.map(InputResponse::ListRoots),
                    InputRequest::Other(o) => Err(ErrorObject::method_not_found(
                        o.get("method").and_then(Value::as_str).unwrap_or("(no method)"),
                    )),
                    // A kind a later mcp-types knows (InputRequest is non-exhaustive) but no handler does.
                    other => Err(ErrorObject::method_not_found(other.method())),
                };
                (key, answer)
            })
        });
        let mut responses = InputResponses::new();
        for (key, answer) in join_all(answering.collect()).await {
            match answer {
                Ok(a) => {
                    responses.insert(key, a);
                }
                Err(e) => {
                    return Err(ClientError::InputRequired(format!("input request {key:?}: {}", e.message)));
                }
            }
        }
        Ok(responses)
    }

    /// One request on the wire with the era's metadata and headers, the `-32022` version retry
    /// and (legacy HTTP) re-initialization after the session expired.
    ///
    /// The params are serialized here, once per attempt, from what the caller built: no copy of
    /// them is made on the way.
    #[allow(clippy::too_many_arguments)]
    async fn send(
        self: &Arc<Self>,
        method: &str,
        params: &Map<String, Value>,
        input: Option<&params::InputAnswers>,
        options: &RequestOptions,
        traced: Option<&Traced>,
        on_tagged: &mut impl FnMut(mcp_types::Notification),
        mut last_id: Option<&mut Option<mcp_types::RequestId>>,
    ) -> Result<RawJson, ClientError> {
        let mut version_retried = false;
        let mut session_retried = false;
        loop {
            let version = self.version();
            let id = self.engine.next_id();
            let body = self.encode(&id, method, params, input, version, options, traced)?;
            if let Some(last_id) = last_id.as_deref_mut() {
                *last_id = Some(id.clone());
            }
            let mut headers = self.headers(method, params, version);
            headers.authorization = options.authorization.clone();
            let send_options = SendOptions {
                timeout: if options.untimed { None } else { options.timeout.or(self.config.request_timeout) },
                max_timeout: options.max_timeout.or(if options.untimed {
                    None
                } else {
                    self.config.max_request_timeout
                }),
                reset_on_progress: options.reset_timeout_on_progress,
                progress: options.progress.clone(),
                version: Some(version),
                headers,
                tag: options.tag.clone(),
            };
            let answer = self.engine.exchange_body(id, method, body, &send_options, &mut *on_tagged).await;
            // A session gone (`404`) when the request is refused is cured by a new session and
            // the same request; once it was delivered (the `404` came when its stream was taken
            // up again) it may have run, and its outcome is the caller's to judge.
            let refused_outright = matches!(&answer, Err(failure) if !failure.delivered);
            match answer.map_err(|failure| failure.error) {
                Err(ClientError::Protocol(e))
                    if e.code == code::UNSUPPORTED_PROTOCOL_VERSION
                        && version.is_modern()
                        && !version_retried =>
                {
                    version_retried = true;
                    let next = pick_version(&e, true).ok_or_else(|| no_common(&e))?;
                    tracing::info!(target: "mcp_client", "server asked for another version; retrying with {next}");
                    self.set_version(next);
                }
                Err(ClientError::Transport { error: TransportError::Http { status: 404, .. }, .. })
                    if !version.is_modern()
                        && self.engine.transport.kind() == TransportKind::StreamableHttp
                        && refused_outright
                        && !session_retried =>
                {
                    session_retried = true;
                    tracing::info!(target: "mcp_client", "session expired (404); initializing again");
                    self.engine.transport.reset_session();
                    // Boxed: rare, and as large as the rest of the request's future.
                    Box::pin(self.rehandshake()).await?;
                }
                other => return other,
            }
        }
    }

    /// The request as it goes on the wire, serialized once: `params` with the era's `_meta`
    /// (modern: version, capabilities, client info, log level; always: the caller's entries;
    /// with a progress callback, the id as `progressToken`).
    #[allow(clippy::too_many_arguments)]
    fn encode(
        &self,
        id: &mcp_types::RequestId,
        method: &str,
        params: &Map<String, Value>,
        input: Option<&params::InputAnswers>,
        version: ProtocolVersion,
        options: &RequestOptions,
        traced: Option<&Traced>,
    ) -> Result<bytes::Bytes, ClientError> {
        let to_vec = |meta: params::WireMeta<'_>| {
            let wire = params::WireRequest { id, method, params: params::WireParams { params, input, meta } };
            // Sized like the last request (calls tend to look alike): the buffer then grows
            // seldom, where doubling from nothing reallocated it five or six times a call.
            let mut body = Vec::with_capacity(self.request_size.load(Ordering::Relaxed));
            serde_json::to_writer(&mut body, &wire).map(|()| {
                self.request_size.store(body.len().min(MAX_SIZE_HINT), Ordering::Relaxed);
                body
            })
        };
        let own_meta = params.contains_key("_meta")
            || traced.is_some()
            || !options.meta.is_empty()
            || options.client_capabilities.is_some()
            || options.progress.is_some()
            || options.log_level.is_some();
        let body = if own_meta {
            let mut meta = params::caller_meta(params, &options.meta);
            if let Some(traced) = traced {
                traced.write(&mut meta.extra);
            }
            if version.is_modern() {
                meta.protocol_version = Some(version.as_str().to_owned());
                meta.client_capabilities = Some(match &options.client_capabilities {
                    Some(caps) => caps.clone(),
                    None => Arc::new(self.capabilities(version)),
                });
                meta.client_info = Some(self.config.info.clone());
                if let Some(level) = options.log_level.or(self.config.log_level) {
                    meta.log_level = Some(level);
                }
            }
            if options.progress.is_some() {
                meta.progress_token = Some(id.clone());
            }
            to_vec(params::WireMeta::Typed(&meta))
        } else if version.is_modern() {
            self.with_modern_meta(version, |meta| to_vec(params::WireMeta::Raw(meta)))
        } else {
            to_vec(params::WireMeta::None)
        };
        body.map(bytes::Bytes::from).map_err(|e| invalid(method, e))
    }

    /// Runs `f` with the client's own `_meta` of a modern request under `version`, as JSON
    /// text made once per version (the same as `encode` makes for a call without entries of its
    /// own).
    fn with_modern_meta<T>(&self, version: ProtocolVersion, f: impl FnOnce(&RawValue) -> T) -> T {
        {
            let cached = self.modern_meta.read().unwrap_or_else(|p| p.into_inner());
            if let Some((made_for, meta)) = &*cached
                && *made_for == version
            {
                return f(meta);
            }
        }
        let meta = mcp_types::RequestMeta {
            protocol_version: Some(version.as_str().to_owned()),
            client_capabilities: Some(Arc::new(self.capabilities(version))),
            client_info: Some(self.config.info.clone()),
            log_level: self.config.log_level,
            ..Default::default()
        };
        // Serializing these plain structures cannot fail.
        let meta = serde_json::value::to_raw_value(&meta).unwrap_or_default();
        let out = f(&meta);
        *self.modern_meta.write().unwrap_or_else(|p| p.into_inner()) = Some((version, meta));
        out
    }

    /// The routing headers of a request (modern Streamable HTTP).
    fn headers(&self, method: &str, params: &Map<String, Value>, version: ProtocolVersion) -> RequestHeaders {
        let mut headers = RequestHeaders::default();
        if version.is_modern() && self.engine.transport.kind() == TransportKind::StreamableHttp {
            let name_key = match method {
                "tools/call" | "prompts/get" => Some("name"),
                "resources/read" => Some("uri"),
                "tasks/get" | "tasks/update" | "tasks/cancel" => Some("taskId"),
                _ => None,
            };
            if let Some(k) = name_key
                && let Some(Value::String(name)) = params.get(k)
            {
                headers.name = Some(crate::headers::encode_value(name));
            }
            if method == "tools/call"
                && let Some(Value::String(name)) = params.get("name")
            {
                let arguments = params.get("arguments").and_then(Value::as_object);
                if let Some(entry) = self.tools.get(name) {
                    headers.params = crate::headers::header_values(&entry.headers, arguments);
                }
            }
        }
        headers
    }
}

/// Runs `futures` together; their outputs in their order.
async fn join_all<F: std::future::Future + Unpin>(mut futures: Vec<F>) -> Vec<F::Output> {
    let mut outputs: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (future, output) in futures.iter_mut().zip(outputs.iter_mut()) {
            if output.is_none() {
                match std::pin::Pin::new(future).poll(cx) {
                    std::task::Poll::Ready(value) => *output = Some(value),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending { std::task::Poll::Pending } else { std::task::Poll::Ready(()) }
    })
    .await;
    outputs.into_iter().flatten().collect()
}

fn is_input_required(raw: &RawJson) -> bool {
    // Cheap pre-check before the walk: the marker must appear in the text (unless escaped).
    (raw.get().contains("input_required") || raw.get().contains("\\u"))
        && ResultKind::of(raw.get()) == Ok(ResultKind::InputRequired)
}

/// What [`Inner::call_raw`] does with an `input_required` answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mrtr {
    /// Fulfils its input requests with the handlers and retries; a result may come from the
    /// cache.
    Fulfil,
    /// Returns it as it is, for a caller that passes the questions on (and never a cached
    /// result).
    Pass,
}

pub(crate) fn decode<R: DeserializeOwned>(method: &str, raw: &RawJson) -> Result<R, ClientError> {
    serde_json::from_str(raw.get()).map_err(|e| invalid(method, e))
}

pub(crate) fn invalid(method: &str, e: impl std::fmt::Display) -> ClientError {
    ClientError::InvalidAnswer { method: method.to_string(), message: e.to_string() }
}

/// A version from `data.supported` of a `-32022` error: the newest this client speaks (modern
/// ones only when `modern_only`).
pub(crate) fn pick_version(error: &ErrorObject, modern_only: bool) -> Option<ProtocolVersion> {
    let data: mcp_types::UnsupportedProtocolVersionData = error.data_as()?;
    SUPPORTED_VERSIONS
        .into_iter()
        .filter(|v| !modern_only || v.is_modern())
        .find(|v| data.supported.iter().any(|s| s == v.as_str()))
}

pub(crate) fn no_common(error: &ErrorObject) -> ClientError {
    let supported =
        error.data_as::<mcp_types::UnsupportedProtocolVersionData>().map(|d| d.supported).unwrap_or_default();
    ClientError::NoCommonVersion { supported }
}

#[cfg(test)]
mod tests {
    use super::is_input_required;

    fn raw(text: &str) -> mcp_types::RawJson {
        serde_json::value::RawValue::from_string(text.to_owned()).unwrap()
    }

    #[test]
    fn only_a_top_level_result_type_asks_for_input() {
        assert!(is_input_required(&raw(r#"{"resultType": "input_required","inputRequests":{}}"#)));
        assert!(is_input_required(&raw(r#"{"inputRequests":{},"result\u0054ype":"input_required"}"#)));
        // A legacy server's result has none; a modern one says complete.
        assert!(!is_input_required(&raw(r#"{"content":[]}"#)));
        assert!(!is_input_required(&raw(r#"{"content":[],"resultType":"complete"}"#)));
        // The member inside a value is not the member.
        assert!(!is_input_required(&raw(
            r#"{"content":[{"type":"text","text":"\"resultType\":\"input_required\""}]}"#
        )));
        assert!(!is_input_required(&raw(r#"{"structuredContent":{"resultType":"input_required"}}"#)));
        // Unrecognized: not a question (the decoding that follows says what is wrong).
        assert!(!is_input_required(&raw(r#"{"resultType":"later","x":"input_required"}"#)));
    }
}
