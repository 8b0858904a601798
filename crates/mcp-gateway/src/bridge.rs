//! Passing an upstream's questions (elicitation, sampling, roots) on to the downstream caller
//! whose request caused them, in whatever era each side speaks.
//!
//! The downstream side is mcp-server's [`Peer`]: a legacy downstream session gets a real
//! server→client request; a modern (2026-07-28) downstream request ends with
//! `input_required`, and its retry runs the forwarding again, this time with the answer at
//! hand. Every question is keyed by a digest of its content, so the retry finds the answer to
//! the same question however the upstream numbered it.
//!
//! The upstream side is mcp-client's handlers. A modern upstream's `input_required` is
//! answered inside the forwarding call itself (the handlers run in its task: the task-local
//! [`DOWNSTREAM`] names the caller). A legacy upstream asks with a request of its own, which
//! mcp-client answers in a task of its own: over Streamable HTTP the request arrives on the
//! asking call's own stream, whose tag names the caller (`mcp_client::handler::request_tag`);
//! otherwise (stdio, HTTP+SSE) the caller is the one downstream request in flight through that
//! upstream that can be asked, and with several the question is refused rather than put to the
//! wrong user. A question put from such a task holds a modern caller's round open for a short
//! while ([`Peer::hold`]), so that the questions an upstream sends together reach the caller
//! together.

use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, Weak};

use mcp_client::Handlers;
use mcp_server::{AskError, Peer};
use mcp_types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ErrorObject, ListRootsResult,
};
use tokio_util::sync::CancellationToken;

tokio::task_local! {
    /// The downstream request the current forwarding runs for.
    pub(crate) static DOWNSTREAM: Arc<Downstream>;
}

/// A downstream request that may be asked questions.
pub(crate) struct Downstream {
    peer: Peer,
    /// Cancelled when the forwarding ends (its future completed or was dropped): a question
    /// still waiting for this caller is then abandoned.
    gone: CancellationToken,
    /// Notified when a question was put to the downstream request from another task.
    pub(crate) asked: tokio::sync::Notify,
    /// Questions put to it that it declared it can answer.
    declared: std::sync::atomic::AtomicUsize,
}

impl Downstream {
    pub(crate) fn new(peer: Peer) -> Arc<Downstream> {
        Arc::new(Downstream {
            peer,
            gone: CancellationToken::new(),
            asked: tokio::sync::Notify::new(),
            declared: std::sync::atomic::AtomicUsize::new(0),
        })
    }

    /// Counts a question the caller can answer.
    fn declared(&self) {
        self.declared.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// A question the caller did not declare it can answer (`what`), which a legacy upstream
    /// asked because the gateway's shared connection declares everything. A legacy caller
    /// refuses it as a client without the capability would (`peer` answers so). A modern
    /// caller: when the upstream asked something the caller can answer along with it (within
    /// [`GATHERING`]), the upstream could go on without this one — it is refused to the
    /// upstream, which decides; when it asked nothing else, this is what the upstream needs
    /// and the caller's request fails with `-32021` naming the capability (`asking` does that).
    async fn undeclared<T>(
        &self,
        what: &str,
        asking: impl Future<Output = Result<T, ErrorObject>>,
    ) -> Result<T, ErrorObject> {
        if self.peer.is_modern() {
            tokio::time::sleep(GATHERING).await;
            if self.declared.load(std::sync::atomic::Ordering::Relaxed) > 0 {
                return Err(undeclared(what));
            }
        }
        asking.await
    }
}

/// The downstream requests in flight through one upstream connection (the shared one, or a
/// session's own child) that could be asked a question.
#[derive(Default)]
pub(crate) struct Callers(Mutex<Vec<Arc<Downstream>>>);

impl Callers {
    fn list(&self) -> std::sync::MutexGuard<'_, Vec<Arc<Downstream>>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many are in flight.
    pub(crate) fn len(&self) -> usize {
        self.list().len()
    }
}

/// Registers a downstream request with its upstream connection for the forwarding's duration.
pub(crate) struct Registration {
    callers: Arc<Callers>,
    downstream: Arc<Downstream>,
}

impl Registration {
    pub(crate) fn new(callers: Arc<Callers>, downstream: Arc<Downstream>) -> Registration {
        callers.list().push(downstream.clone());
        Registration { callers, downstream }
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.downstream.gone.cancel();
        self.callers.list().retain(|d| !Arc::ptr_eq(d, &self.downstream));
    }
}

/// The downstream request a question from the connection of `callers` belongs to.
fn caller(callers: &Weak<Callers>) -> Result<Arc<Downstream>, ErrorObject> {
    if let Ok(current) = DOWNSTREAM.try_with(Arc::clone) {
        return Ok(current);
    }
    if let Some(tagged) = mcp_client::handler::request_tag().and_then(|tag| tag.downcast::<Downstream>().ok())
    {
        return Ok(tagged);
    }
    let Some(callers) = callers.upgrade() else {
        return Err(ErrorObject::internal("the gateway is closing"));
    };
    let list = callers.list();
    match list.as_slice() {
        [only] => Ok(only.clone()),
        [] => Err(ErrorObject::internal(
            "the gateway has no request in flight for this server whose client could answer",
        )),
        _ => Err(ErrorObject::internal(format!(
            "the gateway cannot tell which of its {} requests in flight to this server the question belongs to",
            list.len()
        ))),
    }
}

fn key(kind: &str, params: &impl serde::Serialize) -> String {
    let text = serde_json::to_string(params).unwrap_or_default();
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    format!("gw-{kind}-{:016x}", hasher.finish())
}

fn refused(error: AskError) -> ErrorObject {
    match error {
        AskError::Rejected(error) => error,
        AskError::Unsupported(what) => ErrorObject::new(
            mcp_types::code::METHOD_NOT_FOUND,
            format!("the gateway's client does not support {what}"),
        ),
        other => ErrorObject::internal(other.to_string()),
    }
}

/// How long a question put to a modern caller from another task (a legacy upstream's own
/// request) holds the caller's round open for the next: questions the upstream sends
/// together then reach the caller in one `input_required`, as a modern server would put them.
/// The round ends when the last hold does, so a burst is gathered whole however the machine's
/// load spreads its arrival, as long as no gap within it exceeds this.
const GATHERING: std::time::Duration = std::time::Duration::from_millis(25);

/// The refusal of a question the caller did not declare it can answer, as a client without
/// the capability would answer it.
fn undeclared(what: &str) -> ErrorObject {
    ErrorObject::new(
        mcp_types::code::METHOD_NOT_FOUND,
        format!("the gateway's client does not support {what}"),
    )
}

async fn ask<T>(
    downstream: Arc<Downstream>,
    question: impl Future<Output = Result<T, AskError>>,
) -> Result<T, ErrorObject> {
    // A question put from outside the forwarding's own task (a legacy upstream's request,
    // answered in mcp-client's task) holds the caller's request open for [`GATHERING`]:
    // whatever wakes the forwarding meanwhile (the upstream's acknowledgement of the call,
    // another question's wake-up) then finds the round still gathering, and the upstream's
    // questions sent together reach a modern caller in one `input_required`.
    let outside = downstream.peer.is_modern() && DOWNSTREAM.try_with(|_| ()).is_err();
    let hold = outside.then(|| downstream.peer.hold());
    let mut question = std::pin::pin!(question);
    // The first poll puts the question to the downstream request (a modern one records it and
    // stays pending for good); the forwarding is then woken, so that mcp-server sees the
    // question and answers `input_required` (modern) or waits for the answer (legacy).
    let first = std::future::poll_fn(|cx| std::task::Poll::Ready(question.as_mut().poll(cx))).await;
    if let std::task::Poll::Ready(answer) = first {
        return answer.map_err(refused);
    }
    if let Some(hold) = hold {
        tokio::select! {
            () = tokio::time::sleep(GATHERING) => {}
            () = downstream.gone.cancelled() => {}
        }
        drop(hold);
    }
    downstream.asked.notify_one();
    tokio::select! {
        answer = question => answer.map_err(refused),
        () = downstream.gone.cancelled() => Err(ErrorObject::internal("the request that caused this question has ended")),
    }
}

/// The handlers of an upstream connection whose callers are `callers`. A connection of one
/// downstream session (a `per-session` child) declares only what that session's client
/// declared (`only`): the upstream sees the client's capabilities, as if it were connected
/// directly. The shared connection declares them all and refuses, per caller, what that
/// caller cannot answer.
pub(crate) fn handlers(callers: Weak<Callers>, only: Option<&mcp_types::ClientCapabilities>) -> Handlers {
    let (u1, u2, u3) = (callers.clone(), callers.clone(), callers);
    let mut handlers = Handlers::default();
    let elicitation = only.map_or(Some(true), |c| c.elicitation.as_ref().map(|e| e.url.is_some()));
    if let Some(url_mode) = elicitation {
        handlers = handlers.on_elicit(url_mode, move |params: ElicitRequestParams| {
            let caller = caller(&u1);
            async move {
                let downstream = caller?;
                let peer = downstream.peer.clone();
                let declared = peer.capabilities().elicitation.as_ref();
                match params {
                    ElicitRequestParams::Form(form) => {
                        let k = key("elicit", &form);
                        if declared.is_some_and(|e| e.supports_form()) {
                            downstream.declared();
                            return ask(downstream, peer.elicit(&k, form)).await;
                        }
                        let asking = ask(downstream.clone(), peer.elicit(&k, form));
                        downstream.undeclared("form elicitation", asking).await
                    }
                    ElicitRequestParams::Url(url) => {
                        let k = key("elicit-url", &url);
                        if declared.is_some_and(|e| e.supports_url()) {
                            downstream.declared();
                            return ask(downstream, peer.elicit_url(&k, url)).await;
                        }
                        let asking = ask(downstream.clone(), peer.elicit_url(&k, url));
                        downstream.undeclared("URL elicitation", asking).await
                    }
                    _ => Err(ErrorObject::invalid_params("an elicitation mode the gateway does not know")),
                }
            }
        });
    }
    if only.is_none_or(|c| c.sampling.is_some()) {
        handlers = handlers.on_sample(move |params: CreateMessageRequestParams| {
            let caller = caller(&u2);
            async move {
                let downstream = caller?;
                let peer = downstream.peer.clone();
                let k = key("sample", &params);
                if peer.capabilities().sampling.is_none() {
                    let asking = ask(downstream.clone(), peer.sample(&k, params));
                    return downstream.undeclared("sampling", asking).await;
                }
                downstream.declared();
                let answer: Result<CreateMessageResult, _> = ask(downstream, peer.sample(&k, params)).await;
                answer
            }
        });
    }
    if only.is_none_or(|c| c.roots.is_some()) {
        handlers = handlers.on_roots(false, move || {
            let caller = caller(&u3);
            async move {
                let downstream = caller?;
                let peer = downstream.peer.clone();
                if peer.capabilities().roots.is_none() {
                    let asking = ask(downstream.clone(), peer.roots("gw-roots"));
                    return downstream.undeclared("roots", asking).await;
                }
                downstream.declared();
                let answer: Result<ListRootsResult, _> = ask(downstream, peer.roots("gw-roots")).await;
                answer
            }
        });
    }
    handlers
}
