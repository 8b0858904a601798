//! The upstreams' tasks (the tasks extension), passed through: a modern upstream that makes a
//! call a task has it handed to the caller under an id of the gateway's server
//! (`TaskHandle::relay`) that names the upstream and the upstream's own id, bound to the
//! caller under the gateway's key. The caller's `tasks/get`, `tasks/update` and `tasks/cancel`
//! come here with that id decoded, and go to the upstream under its own id; a task
//! subscription (`subscriptions/listen` with `taskIds`) is served by polling the upstream.
//! Nothing is kept: any replica with the same key serves any replica's tasks, and a gateway
//! restarted still knows them.

use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use mcp_client::RequestOptions;
use mcp_server::task_relay::{RelayedTask, TaskRelay};
use mcp_server::{BoxFuture, Call, Rejection};
use mcp_types::extensions::tasks::TaskResult;
use mcp_types::{ErrorObject, InputResponses};
use tokio::sync::mpsc;

use crate::aggregate::Routes;
use crate::forward::{credentialed, traced};
use crate::upstream::Upstream;

/// How often a watched task is polled at most and at least, whatever its upstream suggests.
const MIN_POLL: Duration = Duration::from_millis(100);
const MAX_POLL: Duration = Duration::from_secs(5);

/// Answers for the upstreams' tasks (`Server::set_task_relay`).
pub(crate) struct Relay {
    pub(crate) routes: Arc<ArcSwap<Routes>>,
}

impl Relay {
    /// The upstream that runs `task`, if it is still configured.
    fn upstream(&self, task: &RelayedTask) -> Result<Arc<Upstream>, Rejection> {
        self.routes.load().upstreams.get(&task.route).cloned().ok_or_else(|| {
            Rejection::Protocol(ErrorObject::invalid_params(format!(
                "Task not found: the server {:?} that ran it is no longer configured",
                task.route
            )))
        })
    }
}

/// What a request about a task carries upstream: the caller's capabilities (its declaration
/// of the extension among them), its credentials where the upstream is to see who calls, its
/// trace context. The gateway's retries apply, not the client's.
async fn options(upstream: &Upstream, call: &Call) -> Result<RequestOptions, Rejection> {
    let options = RequestOptions::new().client_capabilities(call.client_capabilities().clone()).retries(0);
    credentialed(upstream, call, traced(call, options)).await
}

async fn get(upstream: &Arc<Upstream>, call: &Call, id: &str) -> Result<TaskResult, Rejection> {
    let options = options(upstream, call).await?;
    let lane = upstream.lane(call.session()).map_err(Rejection::Protocol)?;
    upstream
        .run(&lane, true, |client| {
            let options = options.clone();
            async move { client.get_task_with(id, &options).await }
        })
        .await
        .map_err(Rejection::Protocol)
}

impl TaskRelay for Relay {
    fn get(&self, call: Call, task: RelayedTask) -> BoxFuture<Result<TaskResult, Rejection>> {
        let upstream = self.upstream(&task);
        Box::pin(async move { get(&upstream?, &call, &task.id).await })
    }

    fn update(
        &self,
        call: Call,
        task: RelayedTask,
        responses: InputResponses,
    ) -> BoxFuture<Result<(), Rejection>> {
        let upstream = self.upstream(&task);
        Box::pin(async move {
            let upstream = upstream?;
            let options = options(&upstream, &call).await?;
            let lane = upstream.lane(call.session()).map_err(Rejection::Protocol)?;
            let responses = std::sync::Mutex::new(Some(responses));
            upstream
                .run(&lane, false, |client| {
                    let responses =
                        responses.lock().unwrap_or_else(|e| e.into_inner()).take().unwrap_or_default();
                    let (options, id) = (options.clone(), task.id.clone());
                    async move { client.update_task_with(&id, responses, &options).await }
                })
                .await
                .map_err(Rejection::Protocol)
        })
    }

    fn cancel(&self, call: Call, task: RelayedTask) -> BoxFuture<Result<(), Rejection>> {
        let upstream = self.upstream(&task);
        Box::pin(async move {
            let upstream = upstream?;
            let options = options(&upstream, &call).await?;
            let lane = upstream.lane(call.session()).map_err(Rejection::Protocol)?;
            upstream
                .run(&lane, false, |client| {
                    let (options, id) = (options.clone(), task.id.clone());
                    async move { client.cancel_task_with(&id, &options).await }
                })
                .await
                .map_err(Rejection::Protocol)
        })
    }

    /// Polls the upstream at the interval it suggests (kept within [`MIN_POLL`] and
    /// [`MAX_POLL`]) and sends each state that differs from the last, the first included,
    /// until the task ends, the upstream no longer knows it, or the stream is gone. A poll
    /// that fails otherwise (the upstream down for a moment) is tried again.
    fn watch(&self, call: Call, task: RelayedTask, changes: mpsc::Sender<TaskResult>) -> BoxFuture<()> {
        let upstream = self.upstream(&task);
        Box::pin(async move {
            let Ok(upstream) = upstream else { return };
            let mut last: Option<(mcp_types::extensions::tasks::TaskStatus, String)> = None;
            let mut interval = MIN_POLL;
            loop {
                match get(&upstream, &call, &task.id).await {
                    Ok(state) => {
                        let seen = (state.status.clone(), state.last_updated_at.clone());
                        let ended = state.status.is_terminal();
                        if let Some(ms) = state.poll_interval_ms {
                            interval = Duration::from_millis(ms).clamp(MIN_POLL, MAX_POLL);
                        }
                        if last.as_ref() != Some(&seen) {
                            last = Some(seen);
                            if changes.send(state).await.is_err() {
                                return;
                            }
                        }
                        if ended {
                            return;
                        }
                    }
                    Err(Rejection::Protocol(e)) if e.code == mcp_types::error::code::INVALID_PARAMS => return,
                    Err(e) => {
                        tracing::debug!(upstream = upstream.name(), task = %task.id, "polling a watched task failed: {e}");
                        interval = (interval * 2).min(MAX_POLL);
                    }
                }
                tokio::select! {
                    () = tokio::time::sleep(interval) => {}
                    () = changes.closed() => return,
                }
            }
        })
    }
}
