//! The tasks extension on the client (SEP-2663): a `tools/call` a server answers with a task
//! is followed to its end — polled at the interval the server asks, its questions answered by
//! the client's handlers, cancelled if the caller gives up — and `tasks/get`, `tasks/update`
//! and `tasks/cancel` for callers that hold a task themselves.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use mcp_types::extensions::tasks::{
    self, CancelTask, GetTask, TaskResult, TaskStatus, UpdateTask, UpdateTaskParams,
};
use mcp_types::{CallToolRequestParams, CallToolResult, ErrorObject, InputResponses, RawJson, TaskIdParams};
use serde_json::{Map, Value};

use super::{Client, Inner, RequestOptions, decode, invalid, params_map};
use crate::error::ClientError;

/// How often a task is polled when the server suggests nothing, and the bounds put on what it
/// suggests (a server cannot make the client spin, nor leave it waiting for minutes).
const DEFAULT_POLL: Duration = Duration::from_millis(500);
const MIN_POLL: Duration = Duration::from_millis(10);
const MAX_POLL: Duration = Duration::from_secs(5);

/// What a `tools/call` came to: its result, or the task the server made of it.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)]
pub enum ToolOutcome {
    /// The result, and its JSON exactly as the server sent it.
    Complete(CallToolResult, RawJson),
    /// The server made the call a task (`resultType: "task"`): its `CreateTaskResult`.
    Task(TaskResult),
}

/// A callback told each state of a task a call became (`RequestOptions::on_task`).
pub type TaskFn = Arc<dyn Fn(&TaskResult) + Send + Sync>;

/// True when a result's `resultType` is `task` (read without decoding the whole result).
pub(crate) fn is_task(raw: &RawJson) -> bool {
    (raw.get().contains("\"task\"") || raw.get().contains("\\u"))
        && mcp_types::ResultKind::of(raw.get()) == Ok(mcp_types::ResultKind::Task)
}

/// Cancels a task when the call following it is dropped before the task ended.
struct CancelOnDrop {
    inner: Option<(Arc<Inner>, String)>,
}

impl CancelOnDrop {
    fn disarm(&mut self) {
        self.inner = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some((inner, id)) = self.inner.take() else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        runtime.spawn(async move {
            let client = Client { inner };
            if let Err(e) = client.cancel_task(&id).await {
                tracing::debug!(target: "mcp_client", task = %id, "cancelling an abandoned task failed: {e}");
            }
        });
    }
}

impl Client {
    /// `tools/call`, returning the task when the server makes the call one instead of
    /// following it (for a caller that holds tasks itself: a gateway passing them on, a
    /// command that prints the handle). MRTR rounds before the task are still fulfilled.
    pub async fn call_tool_or_task(
        &self,
        params: &CallToolRequestParams,
        options: &RequestOptions,
    ) -> Result<ToolOutcome, ClientError> {
        let map = params_map(params)?;
        let raw = self.inner.call_raw("tools/call", &map, options, super::Mrtr::Fulfil, |_| {}).await?;
        if is_task(&raw) {
            self.check_declared(options)?;
            return decode::<TaskResult>("tools/call", &raw).map(ToolOutcome::Task);
        }
        let result: CallToolResult = decode("tools/call", &raw)?;
        Ok(ToolOutcome::Complete(result, raw))
    }

    /// `tasks/get`: the task's state, with its result or error once it has one.
    pub async fn get_task(&self, task_id: &str) -> Result<TaskResult, ClientError> {
        self.get_task_with(task_id, &RequestOptions::default()).await
    }

    /// [`Client::get_task`] with options.
    pub async fn get_task_with(
        &self,
        task_id: &str,
        options: &RequestOptions,
    ) -> Result<TaskResult, ClientError> {
        let options = self.task_options(options);
        self.request::<GetTask>(&TaskIdParams::new(task_id), &options).await
    }

    /// `tasks/update`: answers to some of the task's outstanding questions.
    pub async fn update_task(&self, task_id: &str, responses: InputResponses) -> Result<(), ClientError> {
        self.update_task_with(task_id, responses, &RequestOptions::default()).await
    }

    /// [`Client::update_task`] with options.
    pub async fn update_task_with(
        &self,
        task_id: &str,
        responses: InputResponses,
        options: &RequestOptions,
    ) -> Result<(), ClientError> {
        let options = self.task_options(options);
        self.request::<UpdateTask>(&UpdateTaskParams::new(task_id, responses), &options).await.map(drop)
    }

    /// `tasks/cancel`: asks the server to stop the task (it may finish anyway; `tasks/get`
    /// shows how it ended).
    pub async fn cancel_task(&self, task_id: &str) -> Result<(), ClientError> {
        self.cancel_task_with(task_id, &RequestOptions::default()).await
    }

    /// [`Client::cancel_task`] with options.
    pub async fn cancel_task_with(&self, task_id: &str, options: &RequestOptions) -> Result<(), ClientError> {
        let options = self.task_options(options);
        self.request::<CancelTask>(&TaskIdParams::new(task_id), &options).await.map(drop)
    }

    /// Follows a task a call became to its end: polls `tasks/get` (at the server's
    /// `pollIntervalMs`, kept between 10 ms and 5 s), answers its questions with the client's
    /// handlers (each key once), and returns its result. A failed task is its JSON-RPC error;
    /// a cancelled one [`ClientError::TaskCancelled`]. Dropping the future cancels the task.
    pub async fn follow_task(
        &self,
        created: TaskResult,
        options: &RequestOptions,
    ) -> Result<(CallToolResult, RawJson), ClientError> {
        let id = created.task_id.clone();
        let mut guard = CancelOnDrop { inner: Some((self.inner.clone(), id.clone())) };
        let mut answered: HashSet<String> = HashSet::new();
        let mut task = created;
        loop {
            if let Some(on_task) = &options.on_task {
                on_task(&task);
            }
            match task.status {
                TaskStatus::Completed => {
                    guard.disarm();
                    let result = Value::Object(task.result.unwrap_or_default());
                    let raw =
                        serde_json::value::to_raw_value(&result).map_err(|e| invalid("tasks/get", e))?;
                    return Ok((decode("tasks/get", &raw)?, raw));
                }
                TaskStatus::Failed => {
                    guard.disarm();
                    let error = task.error.unwrap_or_else(|| {
                        ErrorObject::internal(task.status_message.unwrap_or_else(|| "the task failed".into()))
                    });
                    return Err(ClientError::Protocol(error));
                }
                TaskStatus::Cancelled => {
                    guard.disarm();
                    return Err(ClientError::TaskCancelled(id));
                }
                TaskStatus::InputRequired => {
                    let mut requests = task.input_requests.take().unwrap_or_default();
                    requests.retain(|key, _| !answered.contains(key));
                    if !requests.is_empty() {
                        answered.extend(requests.keys().cloned());
                        let responses = self.inner.fulfil(requests).await?;
                        self.update_task(&id, responses).await?;
                        // Answered: look again at once.
                        task = self.get_task_with(&id, options).await?;
                        continue;
                    }
                }
                _ => {}
            }
            let every = task.poll_interval_ms.map_or(DEFAULT_POLL, Duration::from_millis);
            tokio::time::sleep(every.clamp(MIN_POLL, MAX_POLL)).await;
            task = self.get_task_with(&id, options).await?;
            if task.task_id != id {
                return Err(ClientError::InvalidAnswer {
                    method: "tasks/get".into(),
                    message: format!("asked for task {id}, got task {}", task.task_id),
                });
            }
        }
    }

    /// A task answers only a client that declared the extension (on the request, or as the
    /// client's own capability): any other task is an invalid answer.
    pub(crate) fn check_declared(&self, options: &RequestOptions) -> Result<(), ClientError> {
        let declared = match &options.client_capabilities {
            Some(caps) => tasks::declared(caps),
            None => tasks::declared(&self.inner.capabilities(self.protocol_version())),
        };
        if declared {
            Ok(())
        } else {
            Err(ClientError::InvalidAnswer {
                method: "tools/call".into(),
                message:
                    "the server answered with a task, but this client did not declare the tasks extension"
                        .into(),
            })
        }
    }

    /// A `tools/call` result that is a task, followed to its end (when the client declared
    /// the extension).
    pub(crate) async fn finish_task(
        &self,
        raw: RawJson,
        options: &RequestOptions,
    ) -> Result<(CallToolResult, RawJson), ClientError> {
        self.check_declared(options)?;
        let created: TaskResult = decode("tools/call", &raw)?;
        self.follow_task(created, options).await
    }

    /// The options of a `tasks/*` request: never cached (a task's state changes), and with
    /// the extension declared whatever the client declares otherwise (a server refuses
    /// `tasks/*` to a client that did not).
    fn task_options(&self, options: &RequestOptions) -> RequestOptions {
        let mut caps = match &options.client_capabilities {
            Some(caps) => mcp_types::ClientCapabilities::clone(caps),
            None => self.inner.capabilities(self.protocol_version()),
        };
        with_tasks(&mut caps);
        RequestOptions { bypass_cache: true, client_capabilities: Some(Arc::new(caps)), ..options.clone() }
    }
}

/// Declares the tasks extension in `caps`.
pub(crate) fn with_tasks(caps: &mut mcp_types::ClientCapabilities) {
    if !tasks::declared(caps) {
        caps.extensions.get_or_insert_with(Default::default).insert(tasks::ID.to_owned(), Map::new());
    }
}
