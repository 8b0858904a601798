//! Dispatch: one router serves modern (stateless, 2026-07-28) and legacy (session) requests
//! from the same handlers.
//!
//! The router takes a request the front door (`crate::door`) classified once: its era, its
//! `_meta` and its typed params are already read, and nothing here parses the body again. A
//! request carrying modern per-request `_meta` is served statelessly and validated in the
//! order docs/DECISIONS.md fixes (required `_meta` members → `-32602`; version → `-32022`;
//! method → `-32601`; params → `-32602`; client capability → `-32021`). `initialize` opens a
//! legacy session on the connection; requests without modern `_meta` are then served under
//! the negotiated legacy revision. Results are shaped for the era: `resultType` and caching
//! hints for modern clients, none for legacy ones. What the router reports is a result, an
//! error after dispatch, or a [`Refusal`]; what a refusal means to a transport (an HTTP
//! status) is the transport's business.

mod approval;
mod features;
mod finish;
mod lifecycle;
mod listen;
mod mrtr;
mod skills;
mod tasks;
mod watch;

use std::sync::Arc;

use mcp_types::extensions::skills::{GetSkill, ListSkills, ReadDirectory};
use mcp_types::extensions::tasks::{CancelTask, GetTask, UpdateTask};
use mcp_types::methods::{
    CallTool, Complete, Discover, GetPrompt, ListPrompts, ListResourceTemplates, ListResources, ListTools,
    Ping, ReadResource, SetLevel, Subscribe, SubscriptionsListen, Unsubscribe,
};
use mcp_types::{
    ClientCapabilities, ErrorObject, Notification, ProtocolVersion, RawJson, Request, RequestId, RequestMeta,
    RequestMethod, Response, ResponseId, code,
};
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::call::Mode;
use crate::connection::Connection;
use crate::door::classify::{Classified, Params, Parts};
use crate::door::reply::{Refusal, Reply};
use crate::principal::{Principal, SharedPrincipal};
use crate::server::Server;
use crate::session::SessionHandle;
use crate::sink::MessageSink;
use finish::{Finish, Finishing};

pub(crate) use listen::forward_to_session;

/// A failed request: the error, and the refusal it is when the request did not get as far as
/// its handler (or a handler refused it for a missing capability).
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) error: ErrorObject,
    pub(crate) refusal: Option<Refusal>,
}

impl Failure {
    /// A request refused before it ran; the kind follows from the error's code.
    pub(crate) fn bad_request(error: ErrorObject) -> Self {
        let refusal = match error.code {
            code::MISSING_REQUIRED_CLIENT_CAPABILITY => Refusal::MissingCapability,
            code::UNSUPPORTED_PROTOCOL_VERSION => Refusal::UnsupportedVersion,
            code::METHOD_NOT_FOUND => Refusal::UnknownMethod,
            _ => Refusal::MalformedParams,
        };
        Failure { error, refusal: Some(refusal) }
    }

    /// An error the request earned after dispatch: an answer, not a refusal.
    pub(crate) fn after_dispatch(error: ErrorObject) -> Self {
        Failure { error, refusal: None }
    }

    fn refused(error: ErrorObject, refusal: Refusal) -> Self {
        Failure { error, refusal: Some(refusal) }
    }

    fn not_found(method: &str) -> Self {
        Self::refused(ErrorObject::method_not_found(method), Refusal::UnknownMethod)
    }
}

pub(crate) type Routed = Result<Option<RawJson>, Failure>;

/// What the router knows about the request being dispatched.
pub(crate) struct Ctx<'a> {
    pub(crate) server: &'a Server,
    pub(crate) connection: &'a Arc<Connection>,
    pub(crate) id: RequestId,
    pub(crate) mode: Mode,
    pub(crate) version: ProtocolVersion,
    /// Shared with the request's calls, which only read it.
    pub(crate) meta: Arc<RequestMeta>,
    /// The client's capabilities (a modern request's own, or its legacy session's), shared
    /// with the request's calls and the peer that may ask the client.
    pub(crate) capabilities: Arc<ClientCapabilities>,
    pub(crate) cancel: CancellationToken,
    /// Where this request's own messages go (notifications, legacy server→client requests).
    pub(crate) sink: Arc<dyn MessageSink>,
    /// The authenticated caller, when the transport authenticated the request.
    pub(crate) principal: SharedPrincipal,
    /// The request's watch, when it is observed: where a tool's failure (`isError`) is noted,
    /// and the tool it already looked up.
    pub(crate) watch: Option<&'a watch::Watch<'a>>,
    /// The request's span as the parent of what its handler sends on (only when traced).
    pub(crate) trace: Option<mcp_types::trace::TraceParent>,
}

impl Ctx<'_> {
    pub(crate) fn modern(&self) -> bool {
        matches!(self.mode, Mode::Modern)
    }

    /// Shapes and serializes a `tools/call` result, noting a tool's failure for the observer.
    pub(crate) fn finish_tool(&self, result: crate::tools::ToolOutput) -> Routed {
        if let (Some(watch), true) = (self.watch, result.is_error()) {
            watch.tool_error.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        match result {
            crate::tools::ToolOutput::Built(result) => self.finish(result),
            crate::tools::ToolOutput::Passed(result) => {
                result.finish(self.modern(), &self.server.inner.info).map(Some).map_err(|e| {
                    Failure::after_dispatch(ErrorObject::internal(format!(
                        "the result could not be serialized: {e}"
                    )))
                })
            }
        }
    }

    /// Shapes and serializes a result.
    pub(crate) fn finish<T: Finish + Serialize>(&self, mut result: T) -> Routed {
        result.finish(&Finishing { modern: self.modern(), info: &self.server.inner.info });
        serialize(&result).map(Some)
    }
}

pub(crate) fn serialize<T: Serialize>(value: &T) -> Result<RawJson, Failure> {
    serde_json::value::to_raw_value(value).map_err(|e| {
        Failure::after_dispatch(ErrorObject::internal(format!("the result could not be serialized: {e}")))
    })
}

/// What the transport hands over with a request besides the request itself.
struct Carried<'a> {
    cancel: CancellationToken,
    sink: Arc<dyn MessageSink>,
    principal: SharedPrincipal,
    /// The request's watch (only when the request is observed).
    watch: Option<&'a watch::Watch<'a>>,
    /// The request's span as the parent of what its handler sends on (only when traced).
    trace: Option<mcp_types::trace::TraceParent>,
}

/// Methods a modern (2026-07-28) request may name.
const MODERN_METHODS: &[&str] = &[
    Discover::METHOD,
    ListTools::METHOD,
    CallTool::METHOD,
    ListResources::METHOD,
    ListResourceTemplates::METHOD,
    ReadResource::METHOD,
    ListPrompts::METHOD,
    GetPrompt::METHOD,
    Complete::METHOD,
    SubscriptionsListen::METHOD,
    GetTask::METHOD,
    UpdateTask::METHOD,
    CancelTask::METHOD,
    ListSkills::METHOD,
    GetSkill::METHOD,
    ReadDirectory::METHOD,
];

impl Server {
    /// Handles one request on `connection`. Returns `None` when there is nothing to send
    /// (its subscription stream ended with the connection). Unlike [`Server::run`], the
    /// request is not registered as in flight, and `cancel` is only handed to the handlers.
    pub async fn handle_request(
        &self,
        connection: &Arc<Connection>,
        request: Request,
        cancel: CancellationToken,
    ) -> Option<Reply> {
        let sink = connection.sink.clone();
        self.handle_request_on(connection, request, cancel, sink).await
    }

    /// Like [`Server::handle_request`], with this request's own messages (progress, logging,
    /// legacy server→client requests) sent to `sink` instead of the connection's sink.
    pub async fn handle_request_on(
        &self,
        connection: &Arc<Connection>,
        request: Request,
        cancel: CancellationToken,
        sink: Arc<dyn MessageSink>,
    ) -> Option<Reply> {
        self.handle_request_as(connection, request, cancel, sink, None).await
    }

    /// Like [`Server::handle_request_on`], for a request the transport authenticated:
    /// handlers see `principal` through the [`Principal`] extractor. The transport must have
    /// verified it (an HTTP transport with authorization on does, before any JSON-RPC
    /// processing); the router trusts it as given.
    pub async fn handle_request_as(
        &self,
        connection: &Arc<Connection>,
        request: Request,
        cancel: CancellationToken,
        sink: Arc<dyn MessageSink>,
        principal: Option<Arc<Principal>>,
    ) -> Option<Reply> {
        self.reply(connection, Classified::classify(request), cancel, sink, principal).await
    }

    /// Routes a classified request and turns the outcome into the reply to send.
    pub(crate) async fn reply(
        &self,
        connection: &Arc<Connection>,
        request: Classified,
        cancel: CancellationToken,
        sink: Arc<dyn MessageSink>,
        principal: Option<Arc<Principal>>,
    ) -> Option<Reply> {
        let watch = self
            .inner
            .observer
            .get()
            .map(|watching| watch::Watch::new(self, watching, connection, &request, principal.as_ref()));
        let id = request.id.clone();
        let trace = watch.as_ref().and_then(|w| w.span.as_ref()).map(crate::observe::SpanIds::traceparent);
        let routed = match self.limited(&request, principal.as_deref()) {
            Some(refused) => Err(refused),
            None => {
                self.route(
                    connection,
                    request,
                    Carried { cancel, sink, principal, watch: watch.as_ref(), trace },
                )
                .await
            }
        };
        if let Some(watch) = watch {
            watch.finish(match &routed {
                Ok(Some(_)) => crate::observe::Outcome::Success,
                Ok(None) => crate::observe::Outcome::Cancelled,
                Err(failure) => crate::observe::Outcome::Error {
                    code: failure.error.code,
                    refused: failure.refusal.is_some(),
                },
            });
        }
        match routed {
            Ok(Some(result)) => Some(Reply {
                response: Response { id: ResponseId::Id(id), result: Ok(result) },
                refusal: None,
            }),
            Ok(None) => None,
            Err(failure) => {
                Some(Reply { response: Response::error(id, failure.error), refusal: failure.refusal })
            }
        }
    }

    /// The refusal of a request over its caller's rate limit (`ServerConfig::rate_limit`):
    /// per caller (the token's subject, else `anonymous`) × method × tool or prompt (names the
    /// server does not have are one `other`). `ping` is never limited.
    fn limited(&self, request: &Classified, principal: Option<&Principal>) -> Option<Failure> {
        let limit = self.inner.config.rate_limit.as_ref()?;
        let limiter = self.inner.limiter.as_ref()?;
        if request.method == Ping::METHOD {
            return None;
        }
        let method = crate::observe::method_label(&request.method);
        let name = match &request.params {
            Params::CallTool(p) => Some(p.name.as_str()).filter(|n| self.inner.tools.load().get(n).is_some()),
            Params::GetPrompt(p) => {
                Some(p.name.as_str()).filter(|n| self.inner.prompts.load().get(n).is_some())
            }
            _ => Some(""),
        }
        .unwrap_or("other");
        let caller = principal.and_then(|p| p.subject.as_deref()).unwrap_or("anonymous");
        let wait = limiter.take(limit, None, caller, method, name).err()?;
        let what = if name.is_empty() { method.to_owned() } else { format!("{method} {name}") };
        Some(rate_limited(&what, wait, None))
    }

    /// Handles a notification from the client.
    pub fn handle_notification(&self, connection: &Arc<Connection>, notification: Notification) {
        use mcp_types::NotificationMethod;
        use mcp_types::methods::{Cancelled, Initialized, Progress, RootsListChanged};
        match notification.method.as_str() {
            Cancelled::METHOD => match notification.params_as::<mcp_types::CancelledNotificationParams>() {
                Ok(params) => {
                    if let Some(id) = params.request_id {
                        connection.cancel(&id);
                    }
                }
                Err(e) => tracing::debug!(error = %e.message, "ignoring a malformed cancellation"),
            },
            Initialized::METHOD | RootsListChanged::METHOD | Progress::METHOD => {}
            other => tracing::debug!(method = other, "ignoring notification"),
        }
    }

    /// Handles a response from the client (the answer to a legacy server→client request).
    pub fn handle_response(&self, connection: &Arc<Connection>, response: Response) {
        let delivered = match (connection.session(), response.id.request_id()) {
            (Some(session), Some(id)) => session.complete(id, response.result),
            _ => false,
        };
        if !delivered {
            tracing::debug!(id = ?response.id, "ignoring a response nobody waits for");
        }
    }

    async fn route(&self, connection: &Arc<Connection>, request: Classified, carried: Carried<'_>) -> Routed {
        if let Params::Unreadable(error, _) = &request.params {
            return Err(Failure::bad_request(error.clone()));
        }
        if request.is_modern() {
            return self.route_modern(connection, request, carried).await;
        }
        if request.is_initialize() {
            // An `initialize` whose params do not decode is answered, not refused (legacy).
            let parts = request.into_parts();
            return match parts.params {
                Params::Initialize(params) => {
                    self.initialize(connection, params, carried.principal.as_deref())
                }
                Params::Invalid(error, _) => Err(Failure::after_dispatch(error)),
                _ => Err(Failure::after_dispatch(ErrorObject::method_not_found(&parts.method))),
            };
        }
        if let Some(session) = connection.session() {
            return self.route_legacy(connection, session, request, carried).await;
        }
        if request.method == Ping::METHOD {
            return serialize(&mcp_types::EmptyResult::default()).map(Some);
        }
        Err(Failure::refused(
            ErrorObject::invalid_params(format!(
                "{} needs `_meta` with `{}` and `{}` (2026-07-28), or an `initialize` handshake first (legacy revisions)",
                request.method,
                mcp_types::meta::key::PROTOCOL_VERSION,
                mcp_types::meta::key::CLIENT_CAPABILITIES,
            )),
            Refusal::NeedsHandshake,
        ))
    }

    async fn route_modern(
        &self,
        connection: &Arc<Connection>,
        request: Classified,
        carried: Carried<'_>,
    ) -> Routed {
        let Carried { cancel, sink, principal, watch, trace } = carried;
        let Parts { id, method, meta, params, .. } = request.into_parts();
        let Some(requested) = meta.protocol_version.as_deref() else {
            return Err(Failure::refused(
                ErrorObject::invalid_params(format!(
                    "`_meta` lacks `{}`",
                    mcp_types::meta::key::PROTOCOL_VERSION
                )),
                Refusal::MissingMeta,
            ));
        };
        let Some(capabilities) = meta.client_capabilities.clone() else {
            return Err(Failure::refused(
                ErrorObject::invalid_params(format!(
                    "`_meta` lacks `{}`",
                    mcp_types::meta::key::CLIENT_CAPABILITIES
                )),
                Refusal::MissingMeta,
            ));
        };
        let version = ProtocolVersion::parse(requested).filter(|v| v.is_modern() && self.serves(*v));
        let Some(version) = version else {
            return Err(Failure::refused(
                ErrorObject::unsupported_version(self.modern_versions(), requested),
                Refusal::UnsupportedVersion,
            ));
        };
        if !MODERN_METHODS.contains(&method.as_str()) || !self.method_served(&method) {
            return Err(Failure::not_found(&method));
        }
        let ctx = Ctx {
            server: self,
            connection,
            id,
            mode: Mode::Modern,
            version,
            meta: Arc::new(meta),
            capabilities,
            cancel,
            sink,
            principal,
            watch,
            trace,
        };
        self.dispatch(&ctx, &method, params).await
    }

    async fn route_legacy(
        &self,
        connection: &Arc<Connection>,
        session: SessionHandle,
        request: Classified,
        carried: Carried<'_>,
    ) -> Routed {
        let Carried { cancel, sink, principal, watch, trace } = carried;
        let Parts { id, method, meta, params, .. } = request.into_parts();
        let served = match method.as_str() {
            Ping::METHOD => return serialize(&mcp_types::EmptyResult::default()).map(Some),
            SetLevel::METHOD => true,
            Subscribe::METHOD | Unsubscribe::METHOD => self.inner.serves_resources(),
            // The tasks extension exists only under 2026-07-28 (legacy tasks are not served).
            Discover::METHOD
            | SubscriptionsListen::METHOD
            | GetTask::METHOD
            | UpdateTask::METHOD
            | CancelTask::METHOD => false,
            other => MODERN_METHODS.contains(&other) && self.method_served(other),
        };
        if !served {
            return Err(Failure::after_dispatch(ErrorObject::method_not_found(&method)));
        }
        let ctx = Ctx {
            server: self,
            connection,
            id,
            version: session.version,
            capabilities: Arc::new(session.client_capabilities.clone()),
            mode: Mode::Legacy(session),
            meta: Arc::new(meta),
            cancel,
            sink,
            principal,
            watch,
            trace,
        };
        match params {
            Params::SetLevel(params) => self.set_level(&ctx, params),
            Params::Subscribe(params) => self.subscribe(&ctx, &params.uri, true),
            Params::Unsubscribe(params) => self.subscribe(&ctx, &params.uri, false),
            params => self.dispatch(&ctx, &method, params).await,
        }
    }

    /// Calls the method's handler with the params the front door decoded.
    ///
    /// The handlers that wait are boxed: each one's future is kilobytes, and held inline it
    /// would make every request's future (moved into each enclosing future, the spawned task,
    /// the HTTP handler's box) carry the largest of them — copies that cost more than one
    /// allocation of the one that runs.
    async fn dispatch(&self, ctx: &Ctx<'_>, method: &str, params: Params) -> Routed {
        match params {
            Params::Discover => self.discover(ctx),
            Params::ListTools(params) => self.list_tools(ctx, params),
            Params::CallTool(params) => Box::pin(self.call_tool(ctx, params)).await,
            Params::ListResources(params) => self.list_resources(ctx, params),
            Params::ListTemplates(params) => self.list_templates(ctx, params),
            Params::ReadResource(params) => Box::pin(self.read_resource(ctx, params)).await,
            Params::ListPrompts(params) => self.list_prompts(ctx, params),
            Params::GetPrompt(params) => Box::pin(self.get_prompt(ctx, params)).await,
            Params::Complete(params) => Box::pin(self.complete(ctx, params)).await,
            Params::Listen(params) => Box::pin(self.listen(ctx, params)).await,
            Params::GetTask(params) => Box::pin(self.get_task(ctx, params)).await,
            Params::UpdateTask(params) => Box::pin(self.update_task(ctx, params)).await,
            Params::CancelTask(params) => Box::pin(self.cancel_task(ctx, params)).await,
            Params::ListSkills(params) => self.list_skills(ctx, params),
            Params::GetSkill(params) => Box::pin(self.get_skill(ctx, params)).await,
            Params::ReadDirectory(params) => Box::pin(self.read_directory(ctx, params)).await,
            Params::Invalid(error, _) | Params::Unreadable(error, _) => Err(Failure::bad_request(error)),
            Params::Ping
            | Params::Initialize(_)
            | Params::SetLevel(_)
            | Params::Subscribe(_)
            | Params::Unsubscribe(_)
            | Params::Other => Err(Failure::not_found(method)),
        }
    }

    fn serves(&self, version: ProtocolVersion) -> bool {
        self.inner.config.versions.contains(&version)
    }

    fn modern_versions(&self) -> Vec<String> {
        self.inner.config.versions.iter().filter(|v| v.is_modern()).map(|v| v.as_str().to_owned()).collect()
    }

    /// A method of a feature the server does not declare is not served (`-32601`).
    fn method_served(&self, method: &str) -> bool {
        let inner = &self.inner;
        if method == ReadDirectory::METHOD {
            return inner.serves_skills();
        }
        match method.split('/').next() {
            Some("tools") => inner.serves_tools(),
            Some("prompts") => inner.serves_prompts(),
            Some("resources") => inner.serves_resources(),
            Some("completion") => inner.serves_prompts() || inner.serves_resources(),
            Some("tasks") => inner.serves_tasks() || inner.task_relay.load().is_some(),
            Some("skills") => inner.serves_skills(),
            _ => true,
        }
    }
}

/// The error code for "this URI names no resource" in the request's era.
pub(crate) fn resource_not_found(ctx: &Ctx<'_>, uri: &str) -> Failure {
    let code = if ctx.modern() { code::INVALID_PARAMS } else { ctx.version.resource_not_found_code() };
    Failure::after_dispatch(ErrorObject::resource_not_found(code, uri))
}

/// The refusal of a request over a rate limit: `-31000` with `data.retryAfterMs` (and the
/// policy's `rule` when one named the limit); HTTP answers it `429` with `Retry-After`.
pub(crate) fn rate_limited(what: &str, wait: std::time::Duration, rule: Option<&str>) -> Failure {
    let millis = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX).max(1);
    let mut data = serde_json::json!({ "retryAfterMs": millis });
    if let Some(rule) = rule {
        data["rule"] = rule.into();
    }
    let error = ErrorObject::new(
        code::RATE_LIMITED,
        format!("rate limited: too many {what} requests; try again in {millis} ms"),
    )
    .with_data(data);
    Failure::refused(error, Refusal::RateLimited)
}
