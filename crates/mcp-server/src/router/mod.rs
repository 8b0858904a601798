//! Dispatch: one router serves modern (stateless, 2026-07-28) and legacy (session) requests
//! from the same handlers.
//!
//! A request carrying modern per-request `_meta` is served statelessly and validated in the
//! order docs/DECISIONS.md fixes (required `_meta` members → `-32602`; version → `-32022`; method →
//! `-32601`; client capability → `-32021`). `initialize` opens a legacy session on the
//! connection; requests without modern `_meta` are then served under the negotiated legacy
//! revision. Results are shaped for the era: `resultType` and caching hints for modern
//! clients, none for legacy ones.

mod features;
mod finish;
mod lifecycle;
mod listen;
mod mrtr;

use std::sync::Arc;

use mcp_types::{
    ClientCapabilities, ErrorObject, Notification, ProtocolVersion, RawJson, Request, RequestId, RequestMeta,
    Response, ResponseId, code,
};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::call::Mode;
use crate::connection::Connection;
use crate::principal::{Principal, SharedPrincipal};
use crate::server::Server;
use crate::session::SessionHandle;
use crate::sink::MessageSink;
use finish::{Finish, Finishing};

pub(crate) use listen::forward_to_session;

/// A reply to a request, with the HTTP status a Streamable HTTP transport answers with.
#[derive(Debug)]
pub struct Reply {
    /// The JSON-RPC response.
    pub response: Response,
    /// `200`, or `400`/`404` for a modern request refused before dispatch (and `-32021`).
    pub status: u16,
}

/// A failed request: the error and its HTTP status.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) error: ErrorObject,
    pub(crate) status: u16,
}

impl Failure {
    pub(crate) fn bad_request(error: ErrorObject) -> Self {
        Failure { error, status: 400 }
    }

    pub(crate) fn after_dispatch(error: ErrorObject) -> Self {
        Failure { error, status: 200 }
    }

    fn not_found(method: &str) -> Self {
        Failure { error: ErrorObject::method_not_found(method), status: 404 }
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
    pub(crate) meta: RequestMeta,
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) cancel: CancellationToken,
    /// Where this request's own messages go (notifications, legacy server→client requests).
    pub(crate) sink: Arc<dyn MessageSink>,
    /// The authenticated caller, when the transport authenticated the request.
    pub(crate) principal: SharedPrincipal,
}

impl Ctx<'_> {
    pub(crate) fn modern(&self) -> bool {
        matches!(self.mode, Mode::Modern)
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
struct Carried {
    cancel: CancellationToken,
    sink: Arc<dyn MessageSink>,
    principal: SharedPrincipal,
}

/// Only `_meta` of the params, read before anything else to decide the era.
#[derive(Deserialize)]
struct MetaProbe {
    #[serde(rename = "_meta")]
    meta: Option<RequestMeta>,
}

/// Methods a modern (2026-07-28) request may name.
const MODERN_METHODS: &[&str] = &[
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "subscriptions/listen",
];

impl Server {
    /// Handles one request on `connection`. Returns `None` when there is nothing to send
    /// (the request was cancelled, or its subscription stream ended with the connection).
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
    /// legacy server→client requests) sent to `sink` — the response stream of an HTTP
    /// exchange — instead of the connection's sink.
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
        let id = request.id.clone();
        match self.route(connection, request, Carried { cancel, sink, principal }).await {
            Ok(Some(result)) => {
                Some(Reply { response: Response { id: ResponseId::Id(id), result: Ok(result) }, status: 200 })
            }
            Ok(None) => None,
            Err(failure) => {
                Some(Reply { response: Response::error(id, failure.error), status: failure.status })
            }
        }
    }

    /// Handles a notification from the client.
    pub fn handle_notification(&self, connection: &Arc<Connection>, notification: Notification) {
        match notification.method.as_str() {
            "notifications/cancelled" => {
                match notification.params_as::<mcp_types::CancelledNotificationParams>() {
                    Ok(params) => {
                        if let Some(id) = params.request_id {
                            connection.cancel(&id);
                        }
                    }
                    Err(e) => tracing::debug!(error = %e.message, "ignoring a malformed cancellation"),
                }
            }
            "notifications/initialized" | "notifications/roots/list_changed" | "notifications/progress" => {}
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

    async fn route(&self, connection: &Arc<Connection>, request: Request, carried: Carried) -> Routed {
        let probe: MetaProbe = request.params_as().map_err(Failure::bad_request)?;
        let meta = probe.meta.unwrap_or_default();
        if meta.is_modern() {
            return self.route_modern(connection, request, meta, carried).await;
        }
        if request.method == "initialize" {
            return self.initialize(connection, &request);
        }
        if let Some(session) = connection.session() {
            return self.route_legacy(connection, session, request, meta, carried).await;
        }
        if request.method == "ping" {
            return serialize(&mcp_types::EmptyResult::default()).map(Some);
        }
        Err(Failure::bad_request(ErrorObject::invalid_params(format!(
            "{} needs `_meta` with `{}` and `{}` (2026-07-28), or an `initialize` handshake first (legacy revisions)",
            request.method,
            mcp_types::meta::key::PROTOCOL_VERSION,
            mcp_types::meta::key::CLIENT_CAPABILITIES,
        ))))
    }

    async fn route_modern(
        &self,
        connection: &Arc<Connection>,
        request: Request,
        meta: RequestMeta,
        carried: Carried,
    ) -> Routed {
        let Carried { cancel, sink, principal } = carried;
        let Some(requested) = meta.protocol_version.clone() else {
            return Err(Failure::bad_request(ErrorObject::invalid_params(format!(
                "`_meta` lacks `{}`",
                mcp_types::meta::key::PROTOCOL_VERSION
            ))));
        };
        let Some(capabilities) = meta.client_capabilities.clone() else {
            return Err(Failure::bad_request(ErrorObject::invalid_params(format!(
                "`_meta` lacks `{}`",
                mcp_types::meta::key::CLIENT_CAPABILITIES
            ))));
        };
        let version = ProtocolVersion::parse(&requested).filter(|v| v.is_modern() && self.serves(*v));
        let Some(version) = version else {
            return Err(Failure::bad_request(ErrorObject::unsupported_version(
                self.modern_versions(),
                requested,
            )));
        };
        if !MODERN_METHODS.contains(&request.method.as_str()) || !self.method_served(&request.method) {
            return Err(Failure::not_found(&request.method));
        }
        let ctx = Ctx {
            server: self,
            connection,
            id: request.id.clone(),
            mode: Mode::Modern,
            version,
            meta,
            capabilities,
            cancel,
            sink,
            principal,
        };
        self.dispatch(&ctx, &request).await
    }

    async fn route_legacy(
        &self,
        connection: &Arc<Connection>,
        session: SessionHandle,
        request: Request,
        meta: RequestMeta,
        carried: Carried,
    ) -> Routed {
        let Carried { cancel, sink, principal } = carried;
        let ctx = Ctx {
            server: self,
            connection,
            id: request.id.clone(),
            version: session.version,
            capabilities: session.client_capabilities.clone(),
            mode: Mode::Legacy(session),
            meta,
            cancel,
            sink,
            principal,
        };
        match request.method.as_str() {
            "ping" => ctx.finish(mcp_types::EmptyResult::default()),
            "logging/setLevel" => self.set_level(&ctx, &request),
            "resources/subscribe" | "resources/unsubscribe" if self.inner.serves_resources() => {
                self.subscribe(&ctx, &request)
            }
            method
                if MODERN_METHODS.contains(&method)
                    && method != "server/discover"
                    && method != "subscriptions/listen" =>
            {
                if !self.method_served(method) {
                    return Err(Failure::after_dispatch(ErrorObject::method_not_found(method)));
                }
                self.dispatch(&ctx, &request).await
            }
            method => Err(Failure::after_dispatch(ErrorObject::method_not_found(method))),
        }
    }

    async fn dispatch(&self, ctx: &Ctx<'_>, request: &Request) -> Routed {
        let parse = |e: ErrorObject| Failure::bad_request(e);
        match request.method.as_str() {
            "server/discover" => self.discover(ctx),
            "tools/list" => self.list_tools(ctx, request.params_as().map_err(parse)?),
            "tools/call" => self.call_tool(ctx, request.params_as().map_err(parse)?).await,
            "resources/list" => self.list_resources(ctx, request.params_as().map_err(parse)?),
            "resources/templates/list" => self.list_templates(ctx, request.params_as().map_err(parse)?),
            "resources/read" => self.read_resource(ctx, request.params_as().map_err(parse)?).await,
            "prompts/list" => self.list_prompts(ctx, request.params_as().map_err(parse)?),
            "prompts/get" => self.get_prompt(ctx, request.params_as().map_err(parse)?).await,
            "completion/complete" => self.complete(ctx, request.params_as().map_err(parse)?).await,
            "subscriptions/listen" => self.listen(ctx, request.params_as().map_err(parse)?).await,
            other => Err(Failure::not_found(other)),
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
        match method.split('/').next() {
            Some("tools") => inner.serves_tools(),
            Some("prompts") => inner.serves_prompts(),
            Some("resources") => inner.serves_resources(),
            Some("completion") => inner.serves_prompts() || inner.serves_resources(),
            _ => true,
        }
    }
}

/// The error code for "this URI names no resource" in the request's era.
pub(crate) fn resource_not_found(ctx: &Ctx<'_>, uri: &str) -> Failure {
    let code = if ctx.modern() { code::INVALID_PARAMS } else { ctx.version.resource_not_found_code() };
    Failure::after_dispatch(ErrorObject::resource_not_found(code, uri))
}
