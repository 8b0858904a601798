//! The context of one request being served: who asked, in which era, where its notifications
//! go, how it is cancelled, and (for MRTR) which client answers it already has.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

use mcp_types::{
    ClientCapabilities, InputRequest, InputResponse, JsonObject, ProgressToken, ProtocolVersion, RequestMeta,
};
use tokio_util::sync::CancellationToken;

use crate::context::ServerContext;
use crate::principal::{Principal, SharedPrincipal};
use crate::request_state;
use crate::session::SessionHandle;
use crate::sink::MessageSink;

/// How the request is served.
#[derive(Clone)]
pub(crate) enum Mode {
    /// Stateless 2026-07-28: everything comes with the request.
    Modern,
    /// Inside a legacy session.
    Legacy(SessionHandle),
}

/// Everything a handler's extractors may read. Built by the router for each request.
pub struct Call {
    /// What the extractors read of the server: its state values, its change channel, the
    /// limits they apply — never the server itself (docs/ARCHITECTURE.md, the layering).
    pub(crate) server: Arc<ServerContext>,
    pub(crate) mode: Mode,
    pub(crate) version: ProtocolVersion,
    pub(crate) meta: Arc<RequestMeta>,
    pub(crate) client_capabilities: Arc<ClientCapabilities>,
    pub(crate) sink: Arc<dyn MessageSink>,
    pub(crate) cancel: CancellationToken,
    pub(crate) asks: Arc<AskState>,
    /// The method's arguments (tool arguments, prompt arguments), taken by `Args`.
    pub(crate) arguments: Option<JsonObject>,
    /// Set by [`Call::arguments_unbound`]: the handler binds a state itself
    /// ([`Peer::bind_arguments`](crate::Peer::bind_arguments)), only if it asks.
    pub(crate) binding_deferred: bool,
    /// The resource URI being read and the template variables it matched.
    pub(crate) uri: Option<String>,
    pub(crate) uri_variables: BTreeMap<String, String>,
    /// The authenticated caller, when the transport authenticated the request.
    pub(crate) principal: SharedPrincipal,
    /// This request's span as the parent of what the handler sends on (when traced).
    pub(crate) trace: Option<mcp_types::trace::TraceParent>,
}

impl Call {
    /// The `traceparent` to send with requests this handler makes to other servers, so that
    /// their spans are children of this request's: set when the server traces (an observer
    /// with `Observer::traces`), `None` otherwise.
    pub fn traceparent(&self) -> Option<mcp_types::trace::TraceParent> {
        self.trace
    }

    /// The trace context to send on with requests this handler makes to other servers: this
    /// request's span as their parent when the server traces ([`Call::traceparent`]), else the
    /// caller's `traceparent` unchanged (a hop that records nothing passes the trace through);
    /// the caller's `tracestate` and `baggage` with it, each only when valid and within W3C's
    /// limits (`mcp_types::trace`).
    pub fn trace_context(&self) -> mcp_types::trace::TraceContext {
        let caller = mcp_types::trace::TraceContext::from_meta(&self.meta.extra);
        match self.trace {
            Some(own) => caller.with_parent(own),
            None => caller,
        }
    }

    /// Sets the caching hint of this request's result (`ttlMs`, `cacheScope`; modern clients),
    /// instead of the server's [`CachePolicy`](crate::CachePolicy) — a handler passing on another
    /// server's result passes on its hint. Applies to `resources/read`.
    pub fn set_cache_hint(&self, ttl_ms: u64, scope: mcp_types::CacheScope) {
        *self.asks.cache_hint.lock().unwrap_or_else(|e| e.into_inner()) = Some((ttl_ms, scope));
    }

    /// The protocol revision of this request.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.version
    }

    /// The request's `_meta`.
    pub fn meta(&self) -> &RequestMeta {
        &self.meta
    }

    /// The client's capabilities (per request when modern, from `initialize` when legacy),
    /// shared: a handler that passes them on (a gateway's, to the server it calls for this
    /// client) clones the `Arc`, not the capabilities.
    pub fn client_capabilities(&self) -> &Arc<ClientCapabilities> {
        &self.client_capabilities
    }

    /// The legacy session the request was sent in; `None` for a modern (stateless) request.
    pub fn session(&self) -> Option<&SessionHandle> {
        match &self.mode {
            Mode::Legacy(session) => Some(session),
            Mode::Modern => None,
        }
    }

    /// The authenticated caller, when the transport authenticated the request.
    pub fn principal(&self) -> Option<&Principal> {
        self.principal.as_deref()
    }

    /// The progress token, when the request asked for progress.
    pub(crate) fn progress_token(&self) -> Option<&ProgressToken> {
        self.meta.progress_token.as_ref()
    }

    /// Computes, once, the digest that binds a `requestState` to this request (method,
    /// subject, arguments), while the arguments are still here to be hashed. Whatever may ask
    /// the client calls it first ([`Peer`](crate::Peer) when it is extracted, before `Args`
    /// takes the arguments), and so does [`Call::arguments`] (a dynamic tool may extract a
    /// `Peer` after taking them): a call that cannot ask never hashes its arguments. Legacy
    /// requests never carry a state, so they never need one.
    pub(crate) fn bind_request_state(&self) {
        if matches!(self.mode, Mode::Modern) && !self.binding_deferred {
            self.asks.bind(self.arguments.as_ref());
        }
    }
}

/// MRTR bookkeeping of one request (modern) — what the client already answered, and what the
/// handler asked for that is still missing.
pub(crate) struct AskState {
    /// Answers from `inputResponses` and from the verified `requestState` of earlier rounds.
    pub(crate) answers: BTreeMap<String, InputResponse>,
    pub(crate) pending: Mutex<Vec<(String, InputRequest)>>,
    pub(crate) missing: Mutex<Option<ClientCapabilities>>,
    /// The method and its subject (tool or prompt name, resource URI) a state is bound to.
    method: &'static str,
    subject: String,
    /// The digest of method, subject and arguments: set before the run when the request
    /// brought a state (verifying it needs it), else by [`Call::bind_request_state`].
    digest: OnceLock<String>,
    /// What the previous round carried to this one (`Peer::carried_state`).
    pub(crate) carried_in: Option<String>,
    /// What this round carries to the next (`Peer::pass_input_required`).
    pub(crate) carry_out: Mutex<Option<String>>,
    /// The caching hint the handler set for its result (`Call::set_cache_hint`).
    pub(crate) cache_hint: Mutex<Option<(u64, mcp_types::CacheScope)>>,
    /// Holds on the interruption (`Peer::hold`): while any is held, questions are gathered
    /// but do not interrupt the handler yet.
    pub(crate) held: std::sync::atomic::AtomicUsize,
    /// Set when the request became a task: from then on questions are the task's
    /// `inputRequests`, answered by `tasks/update`, and the handler waits for them.
    pub(crate) task: OnceLock<Arc<crate::task::Live>>,
    /// Set when the call can become a task (the tool has task support and the client
    /// declared the extension on this request).
    pub(crate) detachable: std::sync::atomic::AtomicBool,
    /// Set by `TaskHandle::detach`: the call becomes a task the next time it waits.
    pub(crate) detach: std::sync::atomic::AtomicBool,
    /// Set by `TaskHandle::relay`: the call is answered with another server's task (and the
    /// route to it), the handler dropped.
    pub(crate) relayed: OnceLock<Box<(mcp_types::extensions::tasks::TaskResult, String)>>,
}

impl AskState {
    /// `digest` is the one computed to verify the request's state, when it brought one.
    pub(crate) fn new(
        method: &'static str,
        subject: String,
        answers: BTreeMap<String, InputResponse>,
        digest: Option<String>,
    ) -> Self {
        AskState {
            answers,
            pending: Mutex::default(),
            missing: Mutex::default(),
            method,
            subject,
            digest: digest.map(OnceLock::from).unwrap_or_default(),
            carried_in: None,
            carry_out: Mutex::new(None),
            cache_hint: Mutex::new(None),
            held: std::sync::atomic::AtomicUsize::new(0),
            task: OnceLock::new(),
            detachable: std::sync::atomic::AtomicBool::new(false),
            detach: std::sync::atomic::AtomicBool::new(false),
            relayed: OnceLock::new(),
        }
    }

    /// The same, with what the previous round carried.
    pub(crate) fn carrying(mut self, carried: Option<String>) -> Self {
        self.carried_in = carried;
        self
    }

    /// Binds this request's states to `arguments`, unless they are bound already.
    pub(crate) fn bind(&self, arguments: Option<&JsonObject>) {
        self.digest.get_or_init(|| request_state::digest(self.method, &self.subject, arguments));
    }

    /// The method a state of this request is bound to.
    pub(crate) fn method(&self) -> &'static str {
        self.method
    }

    /// The digest a new state is sealed with; `None` when nothing that can ask was ever
    /// made for this request (then nothing was asked either).
    pub(crate) fn digest(&self) -> Option<&str> {
        self.digest.get().map(String::as_str)
    }

    /// True when the handler is blocked on something only the client can provide, and no
    /// hold keeps it running to gather more.
    pub(crate) fn interrupted(&self) -> bool {
        if self.held.load(std::sync::atomic::Ordering::Acquire) > 0 {
            return false;
        }
        self.missing.lock().unwrap_or_else(|e| e.into_inner()).is_some()
            || !self.pending.lock().unwrap_or_else(|e| e.into_inner()).is_empty()
    }

    pub(crate) fn ask(&self, key: &str, request: InputRequest) {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        if !pending.iter().any(|(k, _)| k == key) {
            pending.push((key.to_owned(), request));
        }
    }

    pub(crate) fn require(&self, capabilities: ClientCapabilities) {
        let mut missing = self.missing.lock().unwrap_or_else(|e| e.into_inner());
        match &mut *missing {
            Some(existing) => merge_capabilities(existing, capabilities),
            None => *missing = Some(capabilities),
        }
    }
}

fn merge_capabilities(into: &mut ClientCapabilities, from: ClientCapabilities) {
    if from.elicitation.is_some() {
        into.elicitation = from.elicitation;
    }
    if from.sampling.is_some() {
        into.sampling = from.sampling;
    }
    if from.roots.is_some() {
        into.roots = from.roots;
    }
}
