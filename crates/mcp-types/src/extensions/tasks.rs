//! The tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663): a server may answer a
//! `tools/call` with a task handle (`resultType: "task"`) instead of its result; the client
//! polls `tasks/get`, answers the task's questions with `tasks/update` and may `tasks/cancel`.
//!
//! Not the experimental tasks of 2025-11-25 ([`crate::tasks`]): the methods share names, but
//! the shapes differ (`ttlMs`, `pollIntervalMs`, a flat `CreateTaskResult`, the outcome
//! inlined in `tasks/get`, acknowledgements that carry no task), and this extension exists
//! only under 2026-07-28.

use crate::json::JsonObject;
use crate::meta::{NotificationMeta, RequestMeta, ResultMeta};
use crate::mrtr::{InputRequests, InputResponses};
use crate::result::{EmptyResult, ResultType};
use crate::tasks::TaskIdParams;
use crate::{ClientCapabilities, ErrorObject, wire_struct};

pub use crate::tasks::TaskStatus;

/// The extension's identifier, the key under `capabilities.extensions`.
pub const ID: &str = "io.modelcontextprotocol/tasks";

/// True when `capabilities` declare the extension (a modern request's per-request
/// capabilities: only those count).
pub fn declared(capabilities: &ClientCapabilities) -> bool {
    capabilities.extensions.as_ref().is_some_and(|e| e.contains_key(ID))
}

/// The capabilities a client must declare to be given tasks (the `data.requiredCapabilities`
/// of `-32021`).
pub fn required() -> ClientCapabilities {
    ClientCapabilities {
        extensions: Some([(ID.to_owned(), JsonObject::new())].into_iter().collect()),
        ..Default::default()
    }
}

/// Defines a wire struct with the members of `DetailedTask` (the `Task` members and the
/// payload its status inlines) and the given leading and trailing members.
macro_rules! detailed_task {
    ($(#[$m:meta])* $name:ident { $($lead:tt)* } { $($trail:tt)* }) => {
        wire_struct! {
            $(#[$m])*
            pub struct $name {
                $($lead)*
                /// The task's identifier (unguessable: it is the handle to its state).
                req task_id: String = "taskId",
                /// Its current status.
                req status: TaskStatus = "status",
                /// A human-readable description of the status.
                opt status_message: String = "statusMessage",
                /// ISO 8601 creation time.
                req created_at: String = "createdAt",
                /// ISO 8601 time of the last update.
                req last_updated_at: String = "lastUpdatedAt",
                /// Milliseconds from creation the task is kept; required on the wire, `null`
                /// for unlimited.
                req ttl_ms: Option<u64> = "ttlMs",
                /// Suggested polling interval in milliseconds.
                opt poll_interval_ms: u64 = "pollIntervalMs",
                /// `input_required`: every outstanding question, by key.
                opt input_requests: InputRequests = "inputRequests",
                /// `completed`: the original request's result (a `CallToolResult`).
                opt result: JsonObject = "result",
                /// `failed`: the JSON-RPC error the request ended with.
                opt error: ErrorObject = "error",
                $($trail)*
            }
        }
    };
}

detailed_task!(
    /// A task as a result: `CreateTaskResult` (`resultType: "task"`, no payload) answering
    /// the request that made it, and `GetTaskResult` (`resultType: "complete"`, with the
    /// payload of its status) answering `tasks/get`.
    TaskResult {
        /// `task` on a `CreateTaskResult`, `complete` on a `GetTaskResult`.
        opt result_type: ResultType = "resultType",
    } {
        /// Result metadata.
        opt meta: ResultMeta = "_meta",
    }
);

detailed_task!(
    /// Params of `notifications/tasks`: the task as `tasks/get` would show it at that moment.
    TaskNotificationParams {} {
        /// Notification metadata.
        opt meta: NotificationMeta = "_meta",
    }
);

impl TaskResult {
    /// True for a `CreateTaskResult` (`resultType: "task"`).
    pub fn is_created(&self) -> bool {
        self.result_type == Some(ResultType::Task)
    }

    /// The same task as notification params (its `_meta` left behind).
    pub fn to_notification(&self) -> TaskNotificationParams {
        TaskNotificationParams {
            task_id: self.task_id.clone(),
            status: self.status.clone(),
            status_message: self.status_message.clone(),
            created_at: self.created_at.clone(),
            last_updated_at: self.last_updated_at.clone(),
            ttl_ms: self.ttl_ms,
            poll_interval_ms: self.poll_interval_ms,
            input_requests: self.input_requests.clone(),
            result: self.result.clone(),
            error: self.error.clone(),
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

/// `CreateTaskResult`: a [`TaskResult`] with `resultType: "task"` and no payload.
pub type CreateTaskResult = TaskResult;
/// `GetTaskResult`: a [`TaskResult`] with `resultType: "complete"` and its status' payload.
pub type GetTaskResult = TaskResult;

wire_struct! {
    /// Params of `tasks/update` (`UpdateTaskRequest`).
    pub struct UpdateTaskParams {
        /// The task's identifier.
        req task_id: String = "taskId",
        /// Answers to outstanding `inputRequests`, by their keys.
        req input_responses: InputResponses = "inputResponses",
        /// Request metadata.
        opt meta: RequestMeta = "_meta",
    }
}

impl UpdateTaskParams {
    /// Params answering some of a task's questions.
    pub fn new(task_id: impl Into<String>, input_responses: InputResponses) -> Self {
        UpdateTaskParams { task_id: task_id.into(), input_responses, meta: None, extra: JsonObject::new() }
    }
}

crate::request_method!(
    /// `tasks/get`: a task's state, with its outcome once it has one.
    GetTask = "tasks/get", TaskIdParams => GetTaskResult
);
crate::request_method!(
    /// `tasks/update`: answers to a task's questions; acknowledged with an empty result.
    UpdateTask = "tasks/update", UpdateTaskParams => EmptyResult
);
crate::request_method!(
    /// `tasks/cancel`: asks for a task to stop; acknowledged with an empty result (the
    /// outcome shows on `tasks/get`).
    CancelTask = "tasks/cancel", TaskIdParams => EmptyResult
);
crate::notification_method!(
    /// `notifications/tasks`: a task's state changed (sent on `subscriptions/listen` to a
    /// client that asked for the task's id).
    TaskChanged = "notifications/tasks", TaskNotificationParams
);

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{InputResponse, RequestMethod};

    fn round_trip<T: serde::Serialize + serde::de::DeserializeOwned>(value: serde_json::Value) -> T {
        let decoded: T = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(serde_json::to_value(&decoded).unwrap(), value);
        decoded
    }

    #[test]
    fn a_created_task_is_flat_and_names_its_units() {
        let created: CreateTaskResult = round_trip(json!({
            "resultType": "task", "taskId": "786512e2", "status": "working",
            "createdAt": "2025-11-25T10:30:00Z", "lastUpdatedAt": "2025-11-25T10:40:00Z",
            "ttlMs": 60000, "pollIntervalMs": 5000
        }));
        assert!(created.is_created());
        assert_eq!(created.ttl_ms, Some(60000));
        assert_eq!(created.poll_interval_ms, Some(5000));
        let missing_ttl = serde_json::from_value::<TaskResult>(json!({
            "taskId": "t", "status": "working", "createdAt": "a", "lastUpdatedAt": "a"
        }));
        assert!(missing_ttl.unwrap_err().to_string().contains("ttlMs"));
    }

    #[test]
    fn get_inlines_the_payload_of_its_status() {
        let done: GetTaskResult = round_trip(json!({
            "resultType": "complete", "taskId": "t", "status": "completed", "createdAt": "a",
            "lastUpdatedAt": "b", "ttlMs": null,
            "result": {"content": [{"type": "text", "text": "Hello, Luca!"}], "isError": false}
        }));
        assert!(!done.is_created());
        assert_eq!(done.result.as_ref().unwrap()["content"][0]["text"], json!("Hello, Luca!"));
        let asking: GetTaskResult = round_trip(json!({
            "resultType": "complete", "taskId": "t", "status": "input_required", "createdAt": "a",
            "lastUpdatedAt": "b", "ttlMs": 1000,
            "inputRequests": {"name": {"method": "elicitation/create", "params": {
                "mode": "form", "message": "Name?",
                "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
            }}}
        }));
        assert_eq!(asking.input_requests.as_ref().unwrap()["name"].method(), "elicitation/create");
        let failed: GetTaskResult = round_trip(json!({
            "resultType": "complete", "taskId": "t", "status": "failed", "createdAt": "a",
            "lastUpdatedAt": "b", "ttlMs": 1000, "statusMessage": "rate limited",
            "error": {"code": -32603, "message": "API rate limit exceeded"}
        }));
        assert_eq!(failed.error.as_ref().unwrap().code, -32603);
        let note = failed.to_notification();
        assert_eq!(serde_json::to_value(&note).unwrap()["error"]["code"], json!(-32603));
        assert!(serde_json::to_value(&note).unwrap().get("resultType").is_none());
    }

    #[test]
    fn methods_and_capabilities() {
        assert_eq!(GetTask::METHOD, "tasks/get");
        assert_eq!(UpdateTask::METHOD, "tasks/update");
        assert_eq!(CancelTask::METHOD, "tasks/cancel");
        let update: UpdateTaskParams = round_trip(json!({
            "taskId": "t", "inputResponses": {"name": {"action": "accept", "content": {"name": "Luca"}}}
        }));
        assert!(matches!(update.input_responses["name"], InputResponse::Elicit(_)));
        assert!(serde_json::from_value::<UpdateTaskParams>(json!({"taskId": "t"})).is_err());
        assert!(!declared(&ClientCapabilities::default()));
        assert!(declared(&required()));
        assert_eq!(
            serde_json::to_value(required()).unwrap(),
            json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})
        );
    }
}
