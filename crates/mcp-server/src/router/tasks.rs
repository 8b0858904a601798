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
use crate::call::AskState;
use crate::server::Server;
use crate::task::{Outcome, TaskRecord};
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
                        Ok(result) => match serde_json::to_value(&result) {
                            Ok(serde_json::Value::Object(result)) => Outcome::Completed(result),
                            _ => stopped("the tool's result could not be serialized"),
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

    /// The caller's task, or the refusal to answer about it.
    async fn owned_task(&self, ctx: &Ctx<'_>, id: &str) -> Result<TaskRecord, Failure> {
        if !tasks::declared(&ctx.capabilities) {
            return Err(undeclared());
        }
        let owner = crate::request_state::caller(ctx.principal.as_deref());
        self.inner.tasks.get(id, &owner).await.map_err(store_failed)?.ok_or_else(|| unknown(id))
    }

    /// `tasks/get`: the task with the payload of its status.
    pub(super) async fn get_task(&self, ctx: &Ctx<'_>, params: TaskIdParams) -> Routed {
        let task = self.owned_task(ctx, &params.task_id).await?;
        ctx.finish_task(task.to_wire(ResultType::Complete))
    }

    /// `tasks/update`: delivers answers to the task's outstanding questions (others are
    /// ignored) and acknowledges.
    pub(super) async fn update_task(&self, ctx: &Ctx<'_>, params: UpdateTaskParams) -> Routed {
        let task = self.owned_task(ctx, &params.task_id).await?;
        if !task.status.is_terminal() {
            self.inner.tasks.answer(&task.id, params.input_responses).await;
        }
        ctx.finish(EmptyResult::default())
    }

    /// `tasks/cancel`: asks the task's work to stop and acknowledges (a finished task is
    /// left as it is).
    pub(super) async fn cancel_task(&self, ctx: &Ctx<'_>, params: TaskIdParams) -> Routed {
        let task = self.owned_task(ctx, &params.task_id).await?;
        if !task.status.is_terminal() {
            self.inner.tasks.cancel(&task.id);
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
