//! Asking the client for input — elicitation, sampling, roots — with one call that serves both
//! eras.
//!
//! * **Modern (2026-07-28, MRTR):** if the retried request already carries the answer under the
//!   given key, the call returns it at once. Otherwise the call records the request and never
//!   completes; the router notices the handler is blocked on the client, drops its future and
//!   answers with an `InputRequiredResult` whose integrity-protected `requestState` carries the
//!   answers gathered so far. The client's retry runs the handler again from the start, and
//!   this time the call returns the answer. Handlers therefore keep side effects after their
//!   questions, or make them idempotent.
//! * **Legacy (a session):** the call sends a real server→client request and awaits the answer.
//!
//! A capability the client did not declare is never asked for: modern requests fail with
//! `-32021` naming it; legacy calls return [`AskError::Unsupported`].

use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_types::methods::{CreateMessage, Elicit, ListRoots};
use mcp_types::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitRequestFormParams,
    ElicitRequestParams, ElicitRequestURLParams, ElicitResult, ElicitationCapability, ErrorObject,
    InlineRequest, InputRequest, InputResponse, ListRootsParams, ListRootsResult, RequestMethod,
    RootsCapability, SamplingCapability,
};
use serde::de::DeserializeOwned;

use crate::call::{AskState, Call, Mode};
use crate::extract::{FromCall, Rejection};
use crate::request_state;
use crate::session::SessionClosed;
use crate::sink::MessageSink;

/// Why asking the client failed.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum AskError {
    /// The client did not declare the capability (legacy sessions; modern requests fail with
    /// `-32021` instead).
    #[error("the client does not support {0}")]
    Unsupported(&'static str),
    /// The client answered with a JSON-RPC error.
    #[error("the client refused: {0}")]
    Rejected(ErrorObject),
    /// The client's answer did not have the expected shape.
    #[error("the client's answer is invalid: {0}")]
    InvalidAnswer(String),
    /// The connection to the client is gone.
    #[error("the client connection is closed")]
    Closed,
    /// The client did not answer a legacy server→client request within
    /// [`ServerConfig::peer_request_timeout`](crate::ServerConfig::peer_request_timeout); the
    /// request is abandoned and a late answer is discarded.
    #[error("the client did not answer within {} ms", .0.as_millis())]
    TimedOut(std::time::Duration),
}

impl From<SessionClosed> for AskError {
    fn from(_: SessionClosed) -> Self {
        AskError::Closed
    }
}

/// A hold on a modern request's interruption ([`Peer::hold`]), released when dropped.
#[must_use = "the hold is released as soon as the guard is dropped"]
pub struct Hold(Arc<AskState>);

impl Drop for Hold {
    fn drop(&mut self) {
        self.0.held.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

impl std::fmt::Debug for Hold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Hold")
    }
}

/// The extractor for asking the client: elicitation, sampling and roots.
#[derive(Clone)]
pub struct Peer {
    mode: Mode,
    sink: Arc<dyn MessageSink>,
    capabilities: Arc<ClientCapabilities>,
    asks: Arc<AskState>,
    /// How long a legacy server→client request waits for its answer.
    timeout: std::time::Duration,
}

impl FromCall for Peer {
    fn from_call(call: &Call) -> Result<Self, Rejection> {
        // Asking is possible from here on; the arguments are still in the call (`Args`, the
        // one extractor that takes them, runs after every `FromCall`).
        call.bind_request_state();
        Ok(Peer {
            mode: call.mode.clone(),
            sink: call.sink.clone(),
            capabilities: call.client_capabilities.clone(),
            asks: call.asks.clone(),
            timeout: call.server.peer_request_timeout,
        })
    }
}

impl Peer {
    /// Binds the states this request's questions are sealed in to `arguments`, for a handler
    /// that took them with [`Call::arguments_unbound`]: call it before asking anything, with
    /// the arguments as they were taken. Does nothing when the request's states are bound
    /// already (the handler took them with [`Call::arguments`], or a `Peer` was extracted
    /// before) or when the request is legacy (no state).
    pub fn bind_arguments(&self, arguments: Option<&mcp_types::JsonObject>) {
        if matches!(self.mode, Mode::Modern) {
            self.asks.bind(arguments);
        }
    }

    /// The client's declared capabilities.
    pub fn capabilities(&self) -> &ClientCapabilities {
        &self.capabilities
    }

    /// Asks the user to fill in a form (`elicitation/create`, form mode). An accepted answer
    /// whose content does not match `requestedSchema` is not returned: on a modern request the
    /// question is asked again; in a legacy session the call fails with
    /// [`AskError::InvalidAnswer`].
    pub async fn elicit(&self, key: &str, params: ElicitRequestFormParams) -> Result<ElicitResult, AskError> {
        let supported =
            self.capabilities.elicitation.as_ref().is_some_and(ElicitationCapability::supports_form);
        if !supported {
            return self
                .missing(
                    "form elicitation",
                    ClientCapabilities {
                        elicitation: Some(ElicitationCapability::default()),
                        ..Default::default()
                    },
                )
                .await;
        }
        let schema = serde_json::to_value(&params.requested_schema)
            .ok()
            .and_then(|s| mcp_schema::Schema::compile(&s).ok());
        let check = move |answer: &ElicitResult| -> Result<(), String> {
            match (&answer.action, &answer.content, &schema) {
                (mcp_types::ElicitAction::Accept, Some(content), Some(schema)) => {
                    let content = serde_json::to_value(content).map_err(|e| e.to_string())?;
                    schema
                        .validate(&content)
                        .map_err(|v| format!("the form answer does not match the request: {v}"))
                }
                _ => Ok(()),
            }
        };
        let params = ElicitRequestParams::Form(params);
        self.ask::<Elicit>(
            key,
            params,
            InputRequest::Elicit,
            |r| match r {
                InputResponse::Elicit(e) => Some(e.clone()),
                _ => None,
            },
            check,
        )
        .await
    }

    /// Asks the user to visit a URL (`elicitation/create`, URL mode, 2025-11-25 and later).
    pub async fn elicit_url(
        &self,
        key: &str,
        mut params: ElicitRequestURLParams,
    ) -> Result<ElicitResult, AskError> {
        let supported =
            self.capabilities.elicitation.as_ref().is_some_and(ElicitationCapability::supports_url);
        if !supported {
            let required = ElicitationCapability { url: Some(Default::default()), ..Default::default() };
            return self
                .missing(
                    "URL elicitation",
                    ClientCapabilities { elicitation: Some(required), ..Default::default() },
                )
                .await;
        }
        if matches!(self.mode, Mode::Legacy(_)) && params.elicitation_id.is_none() {
            // 2025-11-25 requires an id to correlate `notifications/elicitation/complete`.
            params.elicitation_id = Some(format!("{key}-{}", request_state::nonce()));
        }
        self.ask::<Elicit>(
            key,
            ElicitRequestParams::Url(params),
            InputRequest::Elicit,
            |r| match r {
                InputResponse::Elicit(e) => Some(e.clone()),
                _ => None,
            },
            |_| Ok(()),
        )
        .await
    }

    /// Asks the client's model for a completion (`sampling/createMessage`).
    pub async fn sample(
        &self,
        key: &str,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, AskError> {
        let sampling = self.capabilities.sampling.as_ref();
        let needs_tools = params.tools.is_some() || params.tool_choice.is_some();
        if sampling.is_none() || (needs_tools && sampling.is_some_and(|s| s.tools.is_none())) {
            let mut required = SamplingCapability::default();
            if needs_tools {
                required.tools = Some(Default::default());
            }
            return self
                .missing("sampling", ClientCapabilities { sampling: Some(required), ..Default::default() })
                .await;
        }
        self.ask::<CreateMessage>(
            key,
            params,
            InputRequest::CreateMessage,
            |r| match r {
                InputResponse::CreateMessage(m) => Some(m.clone()),
                _ => None,
            },
            |_| Ok(()),
        )
        .await
    }

    /// Asks for the client's roots (`roots/list`).
    pub async fn roots(&self, key: &str) -> Result<ListRootsResult, AskError> {
        if self.capabilities.roots.is_none() {
            return self
                .missing(
                    "roots",
                    ClientCapabilities { roots: Some(RootsCapability::default()), ..Default::default() },
                )
                .await;
        }
        self.ask::<ListRoots>(
            key,
            ListRootsParams::default(),
            InputRequest::ListRoots,
            |r| match r {
                InputResponse::ListRoots(l) => Some(l.clone()),
                _ => None,
            },
            |_| Ok(()),
        )
        .await
    }

    /// True on a modern (2026-07-28, MRTR) request; false in a legacy session.
    pub fn is_modern(&self) -> bool {
        matches!(self.mode, Mode::Modern)
    }

    /// The answers this modern request brought (its `inputResponses`, with those of earlier
    /// rounds a plain `requestState` kept), by key; empty in a legacy session. For a handler
    /// that passes questions on to another server (a gateway): after
    /// [`Peer::pass_input_required`], only the latest round's answers are here.
    pub fn answers(&self) -> BTreeMap<String, InputResponse> {
        self.asks.answers.clone()
    }

    /// What the previous round of this modern request carried to it
    /// ([`Peer::pass_input_required`]), verified with the rest of its `requestState`.
    pub fn carried_state(&self) -> Option<&str> {
        self.asks.carried_in.as_deref()
    }

    /// Ends this modern request with `input_required` asking exactly `requests` (their keys
    /// kept), its `requestState` carrying `carry` — another server's own state, say — back to
    /// [`Peer::carried_state`] on the retry, sealed and bound like any state of this server.
    /// Never completes (the request is interrupted, as when a question is asked); in a legacy
    /// session it fails at once with [`AskError::Unsupported`]: there, ask with
    /// [`Peer::elicit`] and the others.
    pub async fn pass_input_required(
        &self,
        requests: mcp_types::InputRequests,
        carry: Option<String>,
    ) -> Result<std::convert::Infallible, AskError> {
        if !self.is_modern() {
            return Err(AskError::Unsupported("input_required (a legacy session)"));
        }
        if self.asks.task.get().is_some() {
            return Err(AskError::Unsupported("input_required (a task)"));
        }
        *self.asks.carry_out.lock().unwrap_or_else(|e| e.into_inner()) = carry;
        for (key, request) in requests {
            self.asks.ask(&key, request);
        }
        std::future::pending().await
    }

    /// Keeps this modern request from being interrupted by its questions while the returned
    /// guard lives: questions put meanwhile are gathered, and reach the client together in
    /// one `input_required` once the last hold is dropped and the handler is polled again.
    /// For a handler whose questions are put from other tasks (a gateway relaying another
    /// server's concurrent requests), where a poll of the handler between two of them
    /// would otherwise end the round with the first alone. Dropping the guard does not wake
    /// the handler: whoever drops it wakes it. No effect in a legacy session.
    pub fn hold(&self) -> Hold {
        self.asks.held.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        Hold(self.asks.clone())
    }

    async fn missing<T>(&self, what: &'static str, required: ClientCapabilities) -> Result<T, AskError> {
        match &self.mode {
            Mode::Legacy(_) => Err(AskError::Unsupported(what)),
            // A task cannot end its call with `-32021` any more: the handler is told.
            Mode::Modern if self.asks.task.get().is_some() => Err(AskError::Unsupported(what)),
            Mode::Modern => {
                self.asks.require(required);
                std::future::pending().await
            }
        }
    }

    async fn ask<M>(
        &self,
        key: &str,
        params: M::Params,
        wrap: fn(InlineRequest<M>) -> InputRequest,
        answer: fn(&InputResponse) -> Option<M::Result>,
        check: impl Fn(&M::Result) -> Result<(), String>,
    ) -> Result<M::Result, AskError>
    where
        M: RequestMethod,
        M::Result: DeserializeOwned,
    {
        match &self.mode {
            Mode::Modern => {
                if let Some(found) = self.asks.answers.get(key).and_then(answer).filter(|a| check(a).is_ok())
                {
                    return Ok(found);
                }
                if let Some(task) = self.asks.task.get() {
                    return ask_in_task(task, key, wrap(InlineRequest::new(params)), answer, check).await;
                }
                // Missing, malformed or not matching the question: ask (again). The spec prefers a new InputRequiredResult
                // over an error when the client left something out.
                self.asks.ask(key, wrap(InlineRequest::new(params)));
                std::future::pending().await
            }
            Mode::Legacy(session) => {
                let params =
                    serde_json::to_value(&params).map_err(|e| AskError::InvalidAnswer(e.to_string()))?;
                let answer = tokio::time::timeout(
                    self.timeout,
                    session.request(self.sink.as_ref(), M::METHOD, &params),
                )
                .await
                .map_err(|_| AskError::TimedOut(self.timeout))??;
                match answer {
                    Ok(raw) => {
                        serde_json::from_str(raw.get()).map_err(|e| AskError::InvalidAnswer(e.to_string()))
                    }
                    Err(e) => Err(AskError::Rejected(e)),
                }
            }
        }
    }
}

/// How many times a task asks one question again after answers that do not fit it.
const TASK_ASKS: usize = 3;

/// Asks inside a task: the question becomes one of the task's `inputRequests` (under `key`, or
/// a fresh key when the task used that one before) and the handler waits for `tasks/update`.
/// An answer that does not fit the question asks it again, under a new key.
async fn ask_in_task<T>(
    task: &crate::task::Live,
    key: &str,
    request: InputRequest,
    answer: fn(&InputResponse) -> Option<T>,
    check: impl Fn(&T) -> Result<(), String>,
) -> Result<T, AskError> {
    let mut problem = String::new();
    for _ in 0..TASK_ASKS {
        let response = task.ask(key, request.clone()).await.await.map_err(|_| AskError::Closed)?;
        match answer(&response) {
            Some(found) => match check(&found) {
                Ok(()) => return Ok(found),
                Err(why) => problem = why,
            },
            None => problem = format!("the answer to {key} is not a {} result", request.method()),
        }
    }
    Err(AskError::InvalidAnswer(problem))
}
