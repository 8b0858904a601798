//! MRTR on the server: reading the answers a retried request carries, running a handler so
//! that a question to the client interrupts it, and answering with an `InputRequiredResult`.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use mcp_types::{ErrorObject, InputRequests, InputRequiredResult, InputResponse, InputResponses, JsonObject};

use super::{Ctx, Failure, Routed};
use crate::call::AskState;
use crate::request_state::{self, StateError};
use crate::server::Server;

/// The answers a request brings, and the digest that binds state to it when the request
/// brought a state (verifying it needed the digest; otherwise it is computed only if the
/// handler can ask, see `Call::bind_request_state`).
pub(super) struct Answers {
    pub(super) answers: BTreeMap<String, InputResponse>,
    pub(super) digest: Option<String>,
    /// What the previous round's handler carried (`Peer::pass_input_required`).
    pub(super) carried: Option<String>,
}

/// How a handler run ended.
pub(super) enum Run<T> {
    Done(T),
    /// Blocked on the client (MRTR) or on a capability it lacks.
    Interrupted,
    TimedOut,
    /// The handler panicked: the request is answered `-32603`, and the server goes on.
    Panicked,
}

/// Awaits a boxed handler future, a panic caught as `Err(())`.
pub(super) async fn caught<F: Future + ?Sized>(mut fut: Pin<Box<F>>) -> Result<F::Output, ()> {
    std::future::poll_fn(|cx| match poll_caught(&mut fut, cx) {
        Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
        Ok(Poll::Pending) => Poll::Pending,
        Err(()) => Poll::Ready(Err(())),
    })
    .await
}

/// Polls a boxed handler future, a panic caught as `Err(())` (the handler's state is dropped
/// with it, never polled again).
pub(super) fn poll_caught<F: Future + ?Sized>(
    inner: &mut Pin<Box<F>>,
    cx: &mut Context<'_>,
) -> Result<Poll<F::Output>, ()> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| inner.as_mut().poll(cx))).map_err(drop)
}

/// Polls the handler; when it is pending and has asked the client for something, it is
/// interrupted (its future dropped with this one).
struct Interruptible<F> {
    inner: Pin<Box<F>>,
    asks: Arc<AskState>,
}

impl<F: Future> Future for Interruptible<F> {
    type Output = Run<F::Output>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Ok(polled) = poll_caught(&mut self.inner, cx) else {
            return Poll::Ready(Run::Panicked);
        };
        match polled {
            Poll::Ready(v) => Poll::Ready(Run::Done(v)),
            // Every question asked during this poll is registered by now (even those of
            // concurrently joined futures), so all of them go into one InputRequiredResult.
            Poll::Pending if self.asks.interrupted() => Poll::Ready(Run::Interrupted),
            Poll::Pending => Poll::Pending,
        }
    }
}

pub(super) async fn run<F: Future>(fut: F, asks: Arc<AskState>, timeout: Option<Duration>) -> Run<F::Output> {
    let run = Interruptible { inner: Box::pin(fut), asks };
    match timeout {
        Some(limit) => tokio::time::timeout(limit, run).await.unwrap_or(Run::TimedOut),
        None => run.await,
    }
}

impl Server {
    /// Verifies `requestState` and merges its answers with `inputResponses` (modern only;
    /// legacy requests never carry either).
    pub(super) fn answers(
        &self,
        ctx: &Ctx<'_>,
        method: &str,
        subject: &str,
        arguments: Option<&JsonObject>,
        state: Option<&str>,
        responses: Option<InputResponses>,
    ) -> Result<Answers, Failure> {
        if !ctx.modern() {
            return Ok(Answers { answers: BTreeMap::new(), digest: None, carried: None });
        }
        let mut digest = None;
        let (mut answers, carried) = match state {
            Some(state) => {
                let digest = digest.insert(request_state::digest(method, subject, arguments));
                request_state::open_carrying(&self.inner.key, state, method, digest, &caller(ctx)).map_err(
                    |e| {
                        let message = match e {
                            StateError::Tampered => {
                                "requestState is invalid (it failed integrity verification)"
                            }
                            StateError::Expired => {
                                "requestState has expired; send the request again without it"
                            }
                            StateError::Mismatch => "requestState belongs to a different request",
                            StateError::OtherCaller => "requestState was issued to another caller",
                        };
                        Failure::bad_request(ErrorObject::invalid_params(message))
                    },
                )?
            }
            None => (BTreeMap::new(), None),
        };
        // Answers of this round override earlier ones; unknown keys are kept but never asked
        // for, so they are ignored (the spec asks servers to ignore what they do not need).
        answers.extend(responses.unwrap_or_default());
        Ok(Answers { answers, digest, carried })
    }

    /// The reply for an interrupted handler: `-32021` when it needed a capability the client
    /// lacks, else an `InputRequiredResult` whose state carries every answer so far.
    pub(super) fn input_required(&self, ctx: &Ctx<'_>, asks: &AskState) -> Routed {
        if let Some(required) = asks.missing.lock().unwrap_or_else(|e| e.into_inner()).take() {
            return Err(Failure::bad_request(ErrorObject::missing_client_capability(required)));
        }
        let Some(digest) = asks.digest() else {
            // Only a `Peer` asks, and making one binds the state first; a state that is not
            // bound to the request's arguments is never sealed.
            return Err(Failure::after_dispatch(ErrorObject::internal(
                "the handler asked the client without a request binding",
            )));
        };
        let pending = std::mem::take(&mut *asks.pending.lock().unwrap_or_else(|e| e.into_inner()));
        let requests: InputRequests = pending.into_iter().collect();
        // A handler that passed on another server's questions carries that server's state,
        // and the answers are that server's to keep: none are sealed here.
        let carry = asks.carry_out.lock().unwrap_or_else(|e| e.into_inner()).take();
        let answers = if carry.is_some() { BTreeMap::new() } else { asks.answers.clone() };
        let state = request_state::seal_carrying(
            &self.inner.key,
            asks.method(),
            digest.to_owned(),
            caller(ctx),
            answers,
            carry,
            self.inner.config.request_state_ttl,
        );
        let result = InputRequiredResult {
            input_requests: Some(requests),
            request_state: Some(state),
            meta: None,
            extra: Default::default(),
        };
        ctx.finish(result)
    }
}

/// The caller a state is bound to: the principal the transport authenticated, if any.
fn caller(ctx: &Ctx<'_>) -> String {
    request_state::caller(ctx.principal.as_deref())
}

#[cfg(test)]
#[path = "mrtr_tests.rs"]
mod tests;
