//! The context of one request being served: who asked, in which era, where its notifications
//! go, how it is cancelled, and (for MRTR) which client answers it already has.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use mcp_types::{
    ClientCapabilities, InputRequest, InputResponse, JsonObject, ProgressToken, ProtocolVersion, RequestMeta,
};
use tokio_util::sync::CancellationToken;

use crate::server::ServerInner;
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
    pub(crate) server: Arc<ServerInner>,
    pub(crate) mode: Mode,
    pub(crate) version: ProtocolVersion,
    pub(crate) meta: RequestMeta,
    pub(crate) client_capabilities: ClientCapabilities,
    pub(crate) sink: Arc<dyn MessageSink>,
    pub(crate) cancel: CancellationToken,
    pub(crate) asks: Arc<AskState>,
    /// The method's arguments (tool arguments, prompt arguments), taken by `Args`.
    pub(crate) arguments: Option<JsonObject>,
    /// The resource URI being read and the template variables it matched.
    pub(crate) uri: Option<String>,
    pub(crate) uri_variables: BTreeMap<String, String>,
    /// The authenticated caller, when the transport authenticated the request.
    pub(crate) principal: crate::principal::SharedPrincipal,
}

impl Call {
    /// The protocol revision of this request.
    pub fn protocol_version(&self) -> ProtocolVersion {
        self.version
    }

    /// The request's `_meta`.
    pub fn meta(&self) -> &RequestMeta {
        &self.meta
    }

    /// The client's capabilities (per request when modern, from `initialize` when legacy).
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        &self.client_capabilities
    }

    /// The authenticated caller, when the transport authenticated the request.
    pub fn principal(&self) -> Option<&crate::Principal> {
        self.principal.as_deref()
    }

    /// The progress token, when the request asked for progress.
    pub(crate) fn progress_token(&self) -> Option<&ProgressToken> {
        self.meta.progress_token.as_ref()
    }
}

/// MRTR bookkeeping of one request (modern) — what the client already answered, and what the
/// handler asked for that is still missing.
#[derive(Default)]
pub(crate) struct AskState {
    /// Answers from `inputResponses` and from the verified `requestState` of earlier rounds.
    pub(crate) answers: BTreeMap<String, InputResponse>,
    pub(crate) pending: Mutex<Vec<(String, InputRequest)>>,
    pub(crate) missing: Mutex<Option<ClientCapabilities>>,
}

impl AskState {
    pub(crate) fn with_answers(answers: BTreeMap<String, InputResponse>) -> Self {
        AskState { answers, ..Default::default() }
    }

    /// True when the handler is blocked on something only the client can provide.
    pub(crate) fn interrupted(&self) -> bool {
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
