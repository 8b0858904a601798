//! Experimental tasks (2025-11-25 only): a request augmented with `task` returns a
//! [`CreateTaskResult`] at once, and the requestor polls `tasks/get`, fetches the outcome with
//! `tasks/result`, and may `tasks/cancel` or `tasks/list`.
//!
//! 2026-07-28 removed tasks; these types exist so that a legacy peer can be served and a
//! gateway can forward its traffic unchanged.

use serde::de::DeserializeOwned;

use crate::json::{JsonObject, JsonValue};
use crate::meta::{NotificationMeta, RequestMeta, ResultMeta};
use crate::method::{JsonRpcNotification, JsonRpcRequest};
use crate::pagination::PaginatedRequestParams;
use crate::{open_enum, wire_struct};

wire_struct! {
    /// The `task` member of a task-augmented request's params (`TaskMetadata`).
    #[derive(Default)]
    pub struct TaskMetadata {
        /// Requested time in milliseconds to keep the task after its creation.
        opt ttl: u64 = "ttl",
    }
}

wire_struct! {
    /// Associates a message with a task (`RelatedTaskMetadata`), carried in `_meta` under
    /// [`crate::meta::key::RELATED_TASK`].
    pub struct RelatedTaskMetadata {
        /// The task's identifier.
        req task_id: String = "taskId",
    }
}

open_enum! {
    /// The state of a task (`TaskStatus`).
    #[non_exhaustive]
    pub enum TaskStatus {
        /// The request is being processed.
        Working = "working",
        /// The receiver needs input from the requestor (e.g. an elicitation) to continue.
        InputRequired = "input_required",
        /// Finished successfully; the outcome is available via `tasks/result`.
        Completed = "completed",
        /// Finished with an error.
        Failed = "failed",
        /// Cancelled before completion.
        Cancelled = "cancelled",
    }
}

impl TaskStatus {
    /// True for the states a task never leaves (`completed`, `failed`, `cancelled`).
    pub fn is_terminal(&self) -> bool {
        matches!(self, TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled)
    }
}

wire_struct! {
    /// The state of a task (`Task`).
    pub struct Task {
        /// The task's identifier.
        req task_id: String = "taskId",
        /// Its current status.
        req status: TaskStatus = "status",
        /// A human-readable description of the status.
        opt status_message: String = "statusMessage",
        /// ISO 8601 creation time.
        req created_at: String = "createdAt",
        /// ISO 8601 time of the last update.
        req last_updated_at: String = "lastUpdatedAt",
        /// Retention in milliseconds from creation; required on the wire, `null` = unlimited.
        req ttl: Option<u64> = "ttl",
        /// Suggested polling interval in milliseconds.
        opt poll_interval: u64 = "pollInterval",
    }
}

wire_struct! {
    /// The immediate answer to a task-augmented request (`CreateTaskResult`).
    pub struct CreateTaskResult {
        /// The task created.
        req task: Task = "task",
        /// Result metadata.
        opt meta: ResultMeta = "_meta",
    }
}

wire_struct! {
    /// Params naming one task: `tasks/get`, `tasks/result`, `tasks/cancel`.
    pub struct TaskIdParams {
        /// The task's identifier.
        req task_id: String = "taskId",
        /// Request metadata.
        opt meta: RequestMeta = "_meta",
    }
}

impl TaskIdParams {
    /// Params naming this task.
    pub fn new(task_id: impl Into<String>) -> Self {
        TaskIdParams { task_id: task_id.into(), meta: None, extra: JsonObject::new() }
    }
}

/// Defines a result (or params) type made of the [`Task`] members plus `_meta`, with
/// conversions from and to [`Task`].
macro_rules! task_shaped {
    ($(#[$m:meta])* $name:ident, $meta:ty, $metadoc:literal) => {
        wire_struct! {
            $(#[$m])*
            pub struct $name {
                /// The task's identifier.
                req task_id: String = "taskId",
                /// Its current status.
                req status: TaskStatus = "status",
                /// A human-readable description of the status.
                opt status_message: String = "statusMessage",
                /// ISO 8601 creation time.
                req created_at: String = "createdAt",
                /// ISO 8601 time of the last update.
                req last_updated_at: String = "lastUpdatedAt",
                /// Retention in milliseconds from creation; `null` = unlimited.
                req ttl: Option<u64> = "ttl",
                /// Suggested polling interval in milliseconds.
                opt poll_interval: u64 = "pollInterval",
                #[doc = $metadoc]
                opt meta: $meta = "_meta",
            }
        }

        impl From<Task> for $name {
            fn from(task: Task) -> Self {
                $name {
                    task_id: task.task_id,
                    status: task.status,
                    status_message: task.status_message,
                    created_at: task.created_at,
                    last_updated_at: task.last_updated_at,
                    ttl: task.ttl,
                    poll_interval: task.poll_interval,
                    meta: None,
                    extra: task.extra,
                }
            }
        }

        impl $name {
            /// The task members, without `_meta` (unknown members are kept).
            pub fn task(&self) -> Task {
                Task {
                    task_id: self.task_id.clone(),
                    status: self.status.clone(),
                    status_message: self.status_message.clone(),
                    created_at: self.created_at.clone(),
                    last_updated_at: self.last_updated_at.clone(),
                    ttl: self.ttl,
                    poll_interval: self.poll_interval,
                    extra: self.extra.clone(),
                }
            }
        }
    };
}

task_shaped!(
    /// The answer to `tasks/get` (`GetTaskResult`: `Result` and `Task` members in one object).
    GetTaskResult,
    ResultMeta,
    "Result metadata."
);

task_shaped!(
    /// The answer to `tasks/cancel` (`CancelTaskResult`: the task in its new state).
    CancelTaskResult,
    ResultMeta,
    "Result metadata."
);

task_shaped!(
    /// Params of `notifications/tasks/status` (`TaskStatusNotificationParams`).
    TaskStatusNotificationParams,
    NotificationMeta,
    "Notification metadata."
);

wire_struct! {
    /// The answer to `tasks/result` (`GetTaskPayloadResult`): the original request's result
    /// (e.g. a `CallToolResult`), whatever its shape. Every member but `_meta` is in `extra`.
    #[derive(Default)]
    pub struct GetTaskPayloadResult {
        /// Result metadata.
        opt meta: ResultMeta = "_meta",
    }
}

impl GetTaskPayloadResult {
    /// Decodes the payload as the original request's result type.
    pub fn decode<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        let value = serde_json::to_value(self)?;
        T::deserialize(value)
    }

    /// Wraps a result (anything that serializes to a JSON object) as a payload.
    pub fn encode<T: serde::Serialize>(result: &T) -> Result<Self, serde_json::Error> {
        let value: JsonValue = serde_json::to_value(result)?;
        serde_json::from_value(value)
    }
}

wire_struct! {
    /// The answer to `tasks/list` (`ListTasksResult`).
    pub struct ListTasksResult {
        /// The tasks.
        req tasks: Vec<Task> = "tasks",
        /// Cursor of the next page, when there is one.
        opt next_cursor: String = "nextCursor",
        /// Result metadata.
        opt meta: ResultMeta = "_meta",
    }
}

crate::request_method!(
    /// `tasks/get`: poll a task's state.
    GetTask = "tasks/get", TaskIdParams => GetTaskResult
);
crate::request_method!(
    /// `tasks/result`: fetch a finished task's result (blocks until it finishes).
    GetTaskPayload = "tasks/result", TaskIdParams => GetTaskPayloadResult
);
crate::request_method!(
    /// `tasks/cancel`: cancel a task.
    CancelTask = "tasks/cancel", TaskIdParams => CancelTaskResult
);
crate::request_method!(
    /// `tasks/list`: list tasks, paginated.
    ListTasks = "tasks/list", PaginatedRequestParams => ListTasksResult
);
crate::notification_method!(
    /// `notifications/tasks/status`: a task's status changed (optional for receivers).
    TaskStatusChanged = "notifications/tasks/status", TaskStatusNotificationParams
);

/// A complete `tasks/get` request (`GetTaskRequest`).
pub type GetTaskRequest = JsonRpcRequest<GetTask>;
/// A complete `tasks/result` request (`GetTaskPayloadRequest`).
pub type GetTaskPayloadRequest = JsonRpcRequest<GetTaskPayload>;
/// A complete `tasks/cancel` request (`CancelTaskRequest`).
pub type CancelTaskRequest = JsonRpcRequest<CancelTask>;
/// A complete `tasks/list` request (`ListTasksRequest`).
pub type ListTasksRequest = JsonRpcRequest<ListTasks>;
/// A complete `notifications/tasks/status` notification (`TaskStatusNotification`).
pub type TaskStatusNotification = JsonRpcNotification<TaskStatusChanged>;

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::RequestMethod;

    fn round_trip<T: serde::Serialize + DeserializeOwned>(value: JsonValue) -> T {
        let decoded: T = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(serde_json::to_value(&decoded).unwrap(), value);
        decoded
    }

    #[test]
    fn task_ttl_is_required_and_nullable() {
        let task: Task = round_trip(json!({
            "taskId": "t1", "status": "working", "createdAt": "2025-11-25T10:00:00Z",
            "lastUpdatedAt": "2025-11-25T10:00:01Z", "ttl": null, "pollInterval": 500
        }));
        assert_eq!(task.ttl, None);
        assert_eq!(task.poll_interval, Some(500));

        let task: Task = round_trip(json!({
            "taskId": "t1", "status": "completed", "createdAt": "a", "lastUpdatedAt": "b", "ttl": 60000
        }));
        assert_eq!(task.ttl, Some(60000));
        assert!(task.status.is_terminal());

        let err = serde_json::from_value::<Task>(json!({
            "taskId": "t1", "status": "working", "createdAt": "a", "lastUpdatedAt": "b"
        }))
        .unwrap_err();
        assert!(err.to_string().contains("missing field `ttl`"), "{err}");
    }

    #[test]
    fn unknown_status_is_kept() {
        let task: Task = round_trip(json!({
            "taskId": "t", "status": "paused", "createdAt": "a", "lastUpdatedAt": "b", "ttl": null
        }));
        assert_eq!(task.status, TaskStatus::Other("paused".into()));
        assert!(!task.status.is_terminal());
        assert_eq!(TaskStatus::InputRequired.as_str(), "input_required");
    }

    #[test]
    fn get_task_result_is_task_plus_meta() {
        let result: GetTaskResult = round_trip(json!({
            "taskId": "t", "status": "input_required", "statusMessage": "waiting for user",
            "createdAt": "a", "lastUpdatedAt": "b", "ttl": 1000,
            "_meta": {"io.modelcontextprotocol/related-task": {"taskId": "t"}}
        }));
        assert_eq!(result.status, TaskStatus::InputRequired);
        let meta = result.meta.as_ref().unwrap();
        let related: RelatedTaskMetadata =
            serde_json::from_value(meta.extra[crate::meta::key::RELATED_TASK].clone()).unwrap();
        assert_eq!(related.task_id, "t");
        let task = result.task();
        assert_eq!(task.status_message.as_deref(), Some("waiting for user"));
        let back = CancelTaskResult::from(task);
        assert_eq!(back.ttl, Some(1000));
        assert_eq!(back.meta, None);
    }

    #[test]
    fn create_task_result_and_list() {
        let created: CreateTaskResult = round_trip(json!({
            "task": {"taskId": "t", "status": "working", "createdAt": "a", "lastUpdatedAt": "a", "ttl": 5}
        }));
        assert_eq!(created.task.task_id, "t");
        let list: ListTasksResult = round_trip(json!({
            "tasks": [{"taskId": "t", "status": "failed", "createdAt": "a", "lastUpdatedAt": "b", "ttl": null}],
            "nextCursor": "c2"
        }));
        assert_eq!(list.tasks.len(), 1);
        assert_eq!(list.next_cursor.as_deref(), Some("c2"));
        assert!(serde_json::from_value::<CreateTaskResult>(json!({})).is_err());
    }

    #[test]
    fn payload_result_keeps_everything() {
        let payload: GetTaskPayloadResult = round_trip(json!({
            "content": [{"type": "text", "text": "done"}], "isError": false, "_meta": {"k": 1}
        }));
        assert_eq!(payload.extra["isError"], json!(false));
        let as_object: JsonObject = payload.decode().unwrap();
        assert_eq!(as_object["content"][0]["text"], json!("done"));
        let again = GetTaskPayloadResult::encode(&as_object).unwrap();
        assert_eq!(again, payload);
    }

    #[test]
    fn task_methods_and_messages() {
        assert_eq!(GetTask::METHOD, "tasks/get");
        assert_eq!(GetTaskPayload::METHOD, "tasks/result");
        assert_eq!(CancelTask::METHOD, "tasks/cancel");
        assert_eq!(ListTasks::METHOD, "tasks/list");
        let req: GetTaskRequest = round_trip(json!({
            "jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": {"taskId": "t"}
        }));
        assert_eq!(req.params.task_id, "t");
        assert!(
            serde_json::from_value::<CancelTaskRequest>(
                json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/cancel"})
            )
            .is_err()
        );
        let note: TaskStatusNotification = round_trip(json!({
            "jsonrpc": "2.0", "method": "notifications/tasks/status",
            "params": {"taskId": "t", "status": "completed", "createdAt": "a", "lastUpdatedAt": "b", "ttl": null}
        }));
        assert_eq!(note.params.status, TaskStatus::Completed);
        let meta: TaskMetadata = round_trip(json!({"ttl": 60000}));
        assert_eq!(meta.ttl, Some(60000));
    }
}
