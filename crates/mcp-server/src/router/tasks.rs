//! The tasks extension in the router: a `tools/call` that becomes a task, the task's work run
//! to its end in the background, and `tasks/get`, `tasks/update`, `tasks/cancel`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use mcp_types::extensions::tasks::{self, UpdateTaskParams};
use mcp_types::{EmptyResult, ErrorObject, ResultType, TaskIdParams};
use tokio_util::sync::CancellationToken;

use super::features::settle;
use super::mrtr::Run;
use super::{Ctx, Failure, Routed};
use crate::call::{AskState, Call};
use crate::server::Server;
use crate::task::{Outcome, TaskRecord};
use crate::task_relay::{self as relay, RelayedTask, TaskRelay};
use crate::tools::{ToolEntry, ToolRun};

/// The handler's future, boxed (it moves to the task's own runner when it becomes a task).
type Running = Pin<Box<dyn Future<Output = ToolRun> + Send>>;

/// How a call that can become a task went before it did, or that it did.
// Moved once, never held: boxing the result would cost every call an allocation.
#[allow(clippy::large_enum_variant)]
pub(super) enum Step {
    /// It finished, or asked the client (MRTR), before becoming a task.
    Ran(Run<ToolRun>),
    /// It becomes a task: its work goes on.
    Detached(Running),
    /// It is answered with another server's task (`TaskHandle::relay`): the handler is done.
    Relayed,
}

/// Polls the handler until it finishes, asks the client (an MRTR round: the questions of a
/// call come before its task), or would wait on anything else past `grace` (it becomes a
/// task then).
struct UntilDetached<'a> {
    running: Option<Running>,
    asks: &'a AskState,
    /// `None`: at the first wait; else when this sleep is over (or never, for a call that
    /// becomes a task only when its handler says so).
    grace: Option<Pin<Box<tokio::time::Sleep>>>,
    on_wait: bool,
}

impl Future for UntilDetached<'_> {
    type Output = Step;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Step> {
        let this = &mut *self;
        let Some(running) = this.running.as_mut() else {
            return Poll::Pending;
        };
        let Ok(polled) = super::mrtr::poll_caught(running, cx) else {
            return Poll::Ready(Step::Ran(Run::Panicked));
        };
        match polled {
            Poll::Ready(done) => return Poll::Ready(Step::Ran(Run::Done(done))),
            Poll::Pending if this.asks.interrupted() => return Poll::Ready(Step::Ran(Run::Interrupted)),
            Poll::Pending if this.asks.relayed.get().is_some() => {
                this.running = None;
                return Poll::Ready(Step::Relayed);
            }
            Poll::Pending => {}
        }
        let asked = this.asks.detach.load(std::sync::atomic::Ordering::Acquire);
        let elapsed = asked
            || this.on_wait
                && match this.grace.as_mut() {
                    None => true,
                    Some(sleep) => sleep.as_mut().poll(cx).is_ready(),
                };
        match (elapsed, this.running.take()) {
            (true, Some(running)) => Poll::Ready(Step::Detached(running)),
            (_, running) => {
                this.running = running;
                Poll::Pending
            }
        }
    }
}

/// Runs the handler until it finishes, asks the client, or becomes a task: at its first wait
/// after `grace` when `on_wait`, else only when it calls `TaskHandle::detach`.
pub(super) async fn until_detached(
    running: impl Future<Output = ToolRun> + Send + 'static,
    asks: &AskState,
    grace: Duration,
    on_wait: bool,
) -> Step {
    let grace = (on_wait && !grace.is_zero()).then(|| Box::pin(tokio::time::sleep(grace)));
    UntilDetached { running: Some(Box::pin(running)), asks, grace, on_wait }.await
}

/// The refusal of a `tasks/*` request from a client that did not declare the extension.
fn undeclared() -> Failure {
    Failure::bad_request(ErrorObject::missing_client_capability(tasks::required()))
}

fn unknown(id: &str) -> Failure {
    Failure::after_dispatch(ErrorObject::invalid_params(format!("Task not found: {id}")))
}

fn store_failed(e: crate::task::TaskStoreError) -> Failure {
    Failure::after_dispatch(ErrorObject::internal(e.to_string()))
}

fn relay_failed(rejection: crate::extract::Rejection) -> Failure {
    match rejection {
        crate::extract::Rejection::Protocol(e) => Failure::after_dispatch(e),
        other => Failure::after_dispatch(ErrorObject::internal(other.to_string())),
    }
}

/// Which task a `tasks/*` request names: one of this server's, or one it relays.
// Built once per `tasks/*` request and matched at once: boxing the record would only add an
// allocation.
#[allow(clippy::large_enum_variant)]
enum Named {
    Own(TaskRecord),
    Relayed(Arc<dyn TaskRelay>, RelayedTask),
}

impl Server {
    /// Makes the call a task (kept before it is answered) and runs its work to its end in
    /// the background; answers with the `CreateTaskResult`.
    pub(super) async fn detach(
        &self,
        ctx: &Ctx<'_>,
        entry: Arc<ToolEntry>,
        name: String,
        running: Running,
        asks: Arc<AskState>,
        cancel: CancellationToken,
    ) -> Routed {
        let tasks = &self.inner.tasks;
        let owner = crate::request_state::caller(ctx.principal.as_deref());
        let live = tasks.create(owner, cancel).await.map_err(store_failed)?;
        // From here on, what the handler asks is the task's to ask.
        let _ = asks.task.set(live.clone());
        let created = live.created().await;
        let tasks = tasks.clone();
        let shutdown = self.inner.shutdown.clone();
        let ttl = tasks.config.ttl;
        tokio::spawn(async move {
            let expiry = async {
                match ttl {
                    Some(ttl) => tokio::time::sleep(ttl).await,
                    None => std::future::pending().await,
                }
            };
            // The work runs as its own tokio task: a handler that panics fails its task
            // instead of leaving it working for ever.
            let mut work = tokio::spawn(running);
            let stopped = |why: &str| Outcome::Failed(ErrorObject::internal(why));
            let outcome = tokio::select! {
                biased;
                _ = live.cancel.cancelled() => Outcome::Cancelled,
                _ = shutdown.cancelled() => stopped("the server shut down before the task finished"),
                _ = expiry => stopped("the task outlived its ttlMs"),
                done = &mut work => match done {
                    Ok(done) => match settle(&entry, &name, done) {
                        Ok(result) => match result.into_object() {
                            Ok(result) => Outcome::Completed(result),
                            Err(_) => stopped("the tool's result could not be serialized"),
                        },
                        Err(error) => Outcome::Failed(error),
                    },
                    Err(e) if e.is_panic() => stopped(&format!("tool {name} failed: its handler panicked")),
                    Err(_) => stopped("the task's work was stopped"),
                },
            };
            work.abort();
            // Whatever the handler still held (its questions' waiters) is dropped with it.
            drop(asks);
            tasks.finish(&live, outcome).await;
        });
        ctx.finish_task(created)
    }

    /// Answers a call its handler relayed (`TaskHandle::relay`) with the other server's task
    /// under an id of this server's, bound to the caller.
    pub(super) fn relayed(&self, ctx: &Ctx<'_>, asks: &AskState) -> Routed {
        let Some(relayed) = asks.relayed.get() else {
            return Err(Failure::after_dispatch(ErrorObject::internal("the relayed task was lost")));
        };
        let (created, route) = &**relayed;
        let mut task = created.clone();
        let owner = crate::request_state::caller(ctx.principal.as_deref());
        let named = RelayedTask { route: route.clone(), id: std::mem::take(&mut task.task_id) };
        task.task_id = relay::seal(&self.inner.key, &owner, &named);
        task.result_type = Some(ResultType::Task);
        ctx.finish_task(task)
    }

    /// The caller's task, or the refusal to answer about it.
    async fn named_task(&self, ctx: &Ctx<'_>, id: &str) -> Result<Named, Failure> {
        if !tasks::declared(&ctx.capabilities) {
            return Err(undeclared());
        }
        let owner = crate::request_state::caller(ctx.principal.as_deref());
        if relay::is_relayed(id) {
            let relay = self.inner.task_relay.load_full().ok_or_else(|| unknown(id))?;
            let task = relay::open(&self.inner.key, &owner, id).ok_or_else(|| unknown(id))?;
            return Ok(Named::Relayed((*relay).clone(), task));
        }
        let own = self.inner.tasks.get(id, &owner).await.map_err(store_failed)?;
        own.map(Named::Own).ok_or_else(|| unknown(id))
    }

    /// The context a relay is asked in.
    fn relay_call(ctx: &Ctx<'_>, method: &'static str, id: &str) -> Call {
        ctx.call(Arc::new(AskState::new(method, id.to_owned(), Default::default(), None)), None, None)
    }

    /// `tasks/get`: the task with the payload of its status.
    pub(super) async fn get_task(&self, ctx: &Ctx<'_>, params: TaskIdParams) -> Routed {
        match self.named_task(ctx, &params.task_id).await? {
            Named::Own(task) => ctx.finish_task(task.to_wire(ResultType::Complete)),
            Named::Relayed(relay, task) => {
                let call = Self::relay_call(ctx, "tasks/get", &params.task_id);
                let mut got = relay.get(call, task).await.map_err(relay_failed)?;
                got.task_id = params.task_id;
                got.result_type = Some(ResultType::Complete);
                ctx.finish_task(got)
            }
        }
    }

    /// `tasks/update`: delivers answers to the task's outstanding questions (others are
    /// ignored) and acknowledges.
    pub(super) async fn update_task(&self, ctx: &Ctx<'_>, params: UpdateTaskParams) -> Routed {
        match self.named_task(ctx, &params.task_id).await? {
            Named::Own(task) => {
                if !task.status.is_terminal() {
                    self.inner.tasks.answer(&task.id, params.input_responses).await;
                }
            }
            Named::Relayed(relay, task) => {
                let call = Self::relay_call(ctx, "tasks/update", &params.task_id);
                relay.update(call, task, params.input_responses).await.map_err(relay_failed)?;
            }
        }
        ctx.finish(EmptyResult::default())
    }

    /// `tasks/cancel`: asks the task's work to stop and acknowledges (a finished task is
    /// left as it is).
    pub(super) async fn cancel_task(&self, ctx: &Ctx<'_>, params: TaskIdParams) -> Routed {
        match self.named_task(ctx, &params.task_id).await? {
            Named::Own(task) => {
                if !task.status.is_terminal() {
                    self.inner.tasks.cancel(&task.id);
                }
            }
            Named::Relayed(relay, task) => {
                let call = Self::relay_call(ctx, "tasks/cancel", &params.task_id);
                relay.cancel(call, task).await.map_err(relay_failed)?;
            }
        }
        ctx.finish(EmptyResult::default())
    }
}

impl Ctx<'_> {
    /// Serializes a task result (`resultType` is already the one it must carry: `task` for a
    /// `CreateTaskResult`, `complete` for a `GetTaskResult`).
    fn finish_task(&self, mut task: tasks::TaskResult) -> Routed {
        let mut meta = task.meta.take().unwrap_or_default();
        meta.server_info = Some(self.server.inner.info.clone());
        task.meta = Some(meta);
        super::serialize(&task).map(Some)
    }
}
