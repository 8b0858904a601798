//! Tools: `tools/list`, `tools/call` and `notifications/tools/list_changed`.

use crate::common::Icon;
use crate::content::ContentBlock;
use crate::json::{JsonObject, JsonValue};
use crate::meta::{RequestMeta, ResultMeta};
use crate::method::{JsonRpcNotification, JsonRpcRequest, JsonRpcResponse};
use crate::mrtr::{InputResponses, MrtrResult};
use crate::notifications::NotificationParams;
use crate::pagination::{Cursor, PaginatedRequestParams};
use crate::result::{CacheScope, ResultType};
use crate::tasks::TaskMetadata;
use crate::{open_enum, wire_struct};

wire_struct! {
    /// A tool the server offers (`Tool`).
    ///
    /// `inputSchema` and `outputSchema` are kept as raw JSON objects, exactly as received, so
    /// that a gateway forwards them unchanged; validating them is the caller's business.
    pub struct Tool {
        /// Programmatic name, unique within the server.
        req name: String = "name",
        /// Display name (2025-06-18 and later).
        opt title: String = "title",
        /// What the tool does, for the model.
        opt description: String = "description",
        /// JSON Schema of the arguments (`"type": "object"` at the top).
        req input_schema: JsonObject = "inputSchema",
        /// JSON Schema of `structuredContent` (2025-06-18 and later; any type from 2026-07-28).
        opt output_schema: JsonObject = "outputSchema",
        /// Behaviour hints (2025-03-26 and later); untrusted unless the server is.
        opt annotations: ToolAnnotations = "annotations",
        /// Icons for user interfaces (2025-11-25 and later).
        opt icons: Vec<Icon> = "icons",
        /// Execution properties (2025-11-25 only: task support).
        opt execution: ToolExecution = "execution",
        /// Metadata (`MetaObject`, 2025-06-18 and later).
        opt meta: JsonObject = "_meta",
    }
}

impl Tool {
    /// A tool with a name and an input schema.
    pub fn new(name: impl Into<String>, input_schema: JsonObject) -> Self {
        Tool {
            name: name.into(),
            title: None,
            description: None,
            input_schema,
            output_schema: None,
            annotations: None,
            icons: None,
            execution: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }

    /// A tool that takes no arguments (input schema `{"type":"object"}`).
    pub fn without_arguments(name: impl Into<String>) -> Self {
        let mut schema = JsonObject::new();
        schema.insert("type".into(), JsonValue::String("object".into()));
        Tool::new(name, schema)
    }

    /// Sets `execution.taskSupport`: whether the tool runs as a task. A server that serves the
    /// tasks extension gives a task to a client that declares it (`optional`, `required`), and
    /// refuses a `required` tool to one that does not (`-32021`).
    pub fn with_task_support(mut self, support: TaskSupport) -> Self {
        self.execution.get_or_insert_with(ToolExecution::default).task_support = Some(support);
        self
    }

    /// Links the tool to an app (MCP Apps: `_meta.ui`, a `ui://` resource rendering its
    /// results, and who may call it).
    pub fn with_ui(mut self, ui: crate::extensions::ui::ToolUi) -> Self {
        crate::extensions::ui::set_tool_ui(&mut self, &ui);
        self
    }

    /// The tool's `execution.taskSupport` (absent: `forbidden`).
    pub fn task_support(&self) -> TaskSupport {
        self.execution.as_ref().and_then(|e| e.task_support.clone()).unwrap_or(TaskSupport::Forbidden)
    }

    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the display title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the behaviour hints.
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = Some(annotations);
        self
    }

    /// Sets the icons.
    pub fn with_icons(mut self, icons: Vec<Icon>) -> Self {
        self.icons = Some(icons);
        self
    }
}

wire_struct! {
    /// Hints about a tool's behaviour (`ToolAnnotations`, 2025-03-26 and later). Clients must
    /// treat them as untrusted unless they trust the server.
    #[derive(Default)]
    pub struct ToolAnnotations {
        /// Display name.
        opt title: String = "title",
        /// The tool does not modify its environment (default false).
        opt read_only_hint: bool = "readOnlyHint",
        /// The tool may perform destructive updates (default true; meaningful when not read-only).
        opt destructive_hint: bool = "destructiveHint",
        /// Repeating a call with the same arguments has no further effect (default false).
        opt idempotent_hint: bool = "idempotentHint",
        /// The tool interacts with an open world of external entities (default true).
        opt open_world_hint: bool = "openWorldHint",
    }
}

open_enum! {
    /// Whether a tool supports task-augmented execution (`ToolExecution.taskSupport`,
    /// 2025-11-25 only).
    #[non_exhaustive]
    pub enum TaskSupport {
        /// The tool must not be called as a task (the default).
        Forbidden = "forbidden",
        /// The tool may be called as a task or not.
        Optional = "optional",
        /// The tool must be called as a task.
        Required = "required",
    }
}

wire_struct! {
    /// Execution properties of a tool (`ToolExecution`, 2025-11-25 only).
    #[derive(Default)]
    pub struct ToolExecution {
        /// Task support; absent means forbidden.
        opt task_support: TaskSupport = "taskSupport",
    }
}

wire_struct! {
    /// Params of `tools/call` (`CallToolRequestParams`).
    #[derive(Default)]
    pub struct CallToolRequestParams {
        /// The tool to call.
        req name: String = "name",
        /// The arguments.
        opt arguments: JsonObject = "arguments",
        /// MRTR: answers to the server's input requests (2026-07-28).
        opt input_responses: InputResponses = "inputResponses",
        /// MRTR: the server's `requestState`, echoed (2026-07-28).
        opt request_state: String = "requestState",
        /// Run as a task (2025-11-25 only).
        opt task: TaskMetadata = "task",
        /// Request metadata (required on 2026-07-28).
        opt meta: RequestMeta = "_meta",
    }
}

impl CallToolRequestParams {
    /// A call of `name` with no arguments.
    pub fn new(name: impl Into<String>) -> Self {
        CallToolRequestParams { name: name.into(), ..Default::default() }
    }

    /// Sets the arguments.
    pub fn with_arguments(mut self, arguments: JsonObject) -> Self {
        self.arguments = Some(arguments);
        self
    }
}

wire_struct! {
    /// The complete result of `tools/call` (`CallToolResult`).
    ///
    /// A tool failure is reported here with `isError: true` (so the model can see it), not
    /// as a JSON-RPC error. The constructors leave `resultType` unset: the server fills it
    /// according to the negotiated revision.
    #[derive(Default)]
    pub struct CallToolResult {
        /// Unstructured result.
        req content: Vec<ContentBlock> = "content",
        /// Structured result (2025-06-18 and later): an object until 2025-11-25, any JSON from
        /// 2026-07-28. An explicit `null` reads as absent.
        opt structured_content: JsonValue = "structuredContent",
        /// The call failed (default false).
        opt is_error: bool = "isError",
        /// The kind of result (required on 2026-07-28, absent before).
        opt result_type: ResultType = "resultType",
        /// Result metadata.
        opt meta: ResultMeta = "_meta",
    }
}

impl CallToolResult {
    /// A successful result with these blocks.
    pub fn new(content: Vec<ContentBlock>) -> Self {
        CallToolResult { content, ..Default::default() }
    }

    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        CallToolResult::new(vec![ContentBlock::text(text)])
    }

    /// A failed result (`isError: true`) with one text block describing the failure.
    pub fn error(message: impl Into<String>) -> Self {
        CallToolResult { is_error: Some(true), ..CallToolResult::text(message) }
    }

    /// A successful structured result; `content` carries its JSON text too, as the spec
    /// asks for clients that do not read `structuredContent`.
    pub fn structured(value: JsonValue) -> Self {
        CallToolResult { structured_content: Some(value.clone()), ..CallToolResult::text(value.to_string()) }
    }

    /// True when `isError` is set.
    pub fn is_error(&self) -> bool {
        self.is_error == Some(true)
    }
}

wire_struct! {
    /// The result of `tools/list` (`ListToolsResult`).
    #[derive(Default)]
    pub struct ListToolsResult {
        /// The tools of this page.
        req tools: Vec<Tool> = "tools",
        /// Cursor of the next page.
        opt next_cursor: Cursor = "nextCursor",
        /// Freshness lifetime in milliseconds (required on 2026-07-28).
        opt ttl_ms: u64 = "ttlMs",
        /// Who may cache the result (required on 2026-07-28).
        opt cache_scope: CacheScope = "cacheScope",
        /// The kind of result (required on 2026-07-28, absent before).
        opt result_type: ResultType = "resultType",
        /// Result metadata.
        opt meta: ResultMeta = "_meta",
    }
}

crate::request_method!(
    /// `tools/list`: list the server's tools, a page at a time.
    ListTools = "tools/list", PaginatedRequestParams => ListToolsResult
);
crate::request_method!(
    /// `tools/call`: call a tool. On 2026-07-28 the answer may be an `InputRequiredResult`.
    CallTool = "tools/call", CallToolRequestParams => CallToolResult
);
crate::notification_method!(
    /// `notifications/tools/list_changed`: the tool list changed.
    ToolListChanged = "notifications/tools/list_changed", NotificationParams
);

/// A full `tools/list` request.
pub type ListToolsRequest = JsonRpcRequest<ListTools>;
/// A full `tools/call` request.
pub type CallToolRequest = JsonRpcRequest<CallTool>;
/// A full `tools/list` response.
pub type ListToolsResultResponse = JsonRpcResponse<ListToolsResult>;
/// A full `tools/call` response: complete, or input required (2026-07-28).
pub type CallToolResultResponse = JsonRpcResponse<MrtrResult<CallToolResult>>;
/// A full `notifications/tools/list_changed` message.
pub type ToolListChangedNotification = JsonRpcNotification<ToolListChanged>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RequestMethod;
    use crate::id::RequestId;
    use serde::Serialize;
    use serde::de::DeserializeOwned;
    use serde_json::json;

    fn round_trip<T: Serialize + DeserializeOwned>(text: &str) -> T {
        let value: T = serde_json::from_str(text).unwrap();
        let back = serde_json::to_value(&value).unwrap();
        assert_eq!(back, serde_json::from_str::<JsonValue>(text).unwrap(), "round trip of {text}");
        value
    }

    #[test]
    fn tool_keeps_schemas_verbatim() {
        let text = r#"{"name":"list_users","title":"User List","description":"Returns a list of all users","inputSchema":{"type":"object","properties":{}},"outputSchema":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}}}"#;
        let tool: Tool = round_trip(text);
        assert_eq!(tool.output_schema.as_ref().unwrap().get("type"), Some(&json!("array")));
        let text = r#"{"name":"find","inputSchema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","oneOf":[{"required":["id"]},{"required":["name"]}],"additionalProperties":false}}"#;
        let tool: Tool = round_trip(text);
        assert_eq!(tool.input_schema.len(), 4);
        let err = serde_json::from_str::<Tool>(r#"{"name":"x"}"#).unwrap_err();
        assert!(err.to_string().contains("missing field `inputSchema`"), "{err}");
    }

    #[test]
    fn tool_2025_11_25_members_round_trip() {
        let text = r#"{"name":"t","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"},"annotations":{"readOnlyHint":true,"openWorldHint":false},"icons":[{"src":"https://example.com/i.png","sizes":["48x48"]}],"_meta":{"k":1}}"#;
        let tool: Tool = round_trip(text);
        assert_eq!(tool.execution.unwrap().task_support, Some(TaskSupport::Optional));
        let annotations = tool.annotations.unwrap();
        assert_eq!(annotations.read_only_hint, Some(true));
        assert_eq!(annotations.destructive_hint, None);
        let exec: ToolExecution = round_trip(r#"{"taskSupport":"sometimes"}"#);
        assert_eq!(exec.task_support, Some(TaskSupport::Other("sometimes".into())));
    }

    #[test]
    fn call_tool_request_round_trips() {
        let text = r#"{"jsonrpc":"2.0","id":"call-tool-example","method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{},"progressToken":"oivaizmir"},"name":"get_weather","arguments":{"location":"New York"}}}"#;
        let req: CallToolRequest = round_trip(text);
        assert_eq!(req.id, RequestId::String("call-tool-example".into()));
        assert_eq!(req.params.name, "get_weather");
        assert_eq!(req.params.arguments.as_ref().unwrap().get("location"), Some(&json!("New York")));
        assert_eq!(req.params.meta.unwrap().progress_token, Some(RequestId::String("oivaizmir".into())));
        assert_eq!(CallTool::METHOD, "tools/call");
    }

    #[test]
    fn call_tool_params_legacy_task_and_mrtr_members() {
        let p: CallToolRequestParams = round_trip(r#"{"name":"slow","arguments":{},"task":{"ttl":60000}}"#);
        assert_eq!(p.task.unwrap().ttl, Some(60000));
        let p: CallToolRequestParams = round_trip(
            r#"{"name":"t","inputResponses":{"confirm":{"action":"accept","content":{"ok":true}}},"requestState":"opaque=="}"#,
        );
        assert_eq!(p.request_state.as_deref(), Some("opaque=="));
        assert!(p.input_responses.unwrap().contains_key("confirm"));
        let err = serde_json::from_str::<CallToolRequestParams>(r#"{"arguments":{}}"#).unwrap_err();
        assert!(err.to_string().contains("missing field `name`"), "{err}");
    }

    #[test]
    fn call_tool_results() {
        let r: CallToolResult = round_trip(
            r#"{"resultType":"complete","content":[{"type":"text","text":"Found 2 users"}],"structuredContent":[{"id":"1"},{"id":"2"}]}"#,
        );
        assert_eq!(r.structured_content, Some(json!([{"id":"1"},{"id":"2"}])));
        assert_eq!(r.result_type, Some(ResultType::Complete));
        let legacy: CallToolResult = round_trip(r#"{"content":[],"isError":true}"#);
        assert!(legacy.is_error());
        assert_eq!(legacy.result_type, None);
        let err = serde_json::from_str::<CallToolResult>(r#"{"isError":false}"#).unwrap_err();
        assert!(err.to_string().contains("missing field `content`"), "{err}");
    }

    #[test]
    fn call_tool_response_may_be_input_required() {
        let complete: CallToolResultResponse = round_trip(
            r#"{"jsonrpc":"2.0","id":"call-tool-example","result":{"resultType":"complete","content":[{"type":"text","text":"72°F"}],"isError":false}}"#,
        );
        assert!(
            matches!(complete.result, MrtrResult::Complete(ref r) if r.content[0].as_text() == Some("72°F"))
        );
        let needs: CallToolResultResponse = round_trip(
            r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":"s"}}"#,
        );
        assert!(
            matches!(needs.result, MrtrResult::InputRequired(ref r) if r.request_state.as_deref() == Some("s"))
        );
    }

    #[test]
    fn helpers() {
        assert_eq!(
            serde_json::to_value(CallToolResult::text("hi")).unwrap(),
            json!({"content":[{"type":"text","text":"hi"}]})
        );
        assert_eq!(
            serde_json::to_value(CallToolResult::error("bad date")).unwrap(),
            json!({"content":[{"type":"text","text":"bad date"}],"isError":true})
        );
        let s = CallToolResult::structured(json!({"temperature":22.5}));
        assert_eq!(s.structured_content, Some(json!({"temperature":22.5})));
        assert_eq!(s.content[0].as_text(), Some(r#"{"temperature":22.5}"#));
        assert!(!s.is_error());
        assert_eq!(
            serde_json::to_value(Tool::without_arguments("now").with_description("d")).unwrap(),
            json!({"name":"now","description":"d","inputSchema":{"type":"object"}})
        );
        let mut args = JsonObject::new();
        args.insert("a".into(), json!(1));
        assert_eq!(
            serde_json::to_value(CallToolRequestParams::new("add").with_arguments(args)).unwrap(),
            json!({"name":"add","arguments":{"a":1}})
        );
    }

    #[test]
    fn list_tools_result_and_request() {
        let r: ListToolsResult = round_trip(
            r#"{"resultType":"complete","tools":[{"name":"get_weather","inputSchema":{"type":"object"}}],"nextCursor":"next-page-cursor","ttlMs":300000,"cacheScope":"public"}"#,
        );
        assert_eq!(r.ttl_ms, Some(300000));
        assert_eq!(r.cache_scope, Some(CacheScope::Public));
        assert_eq!(r.next_cursor.as_deref(), Some("next-page-cursor"));
        let req: ListToolsRequest =
            serde_json::from_str(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#).unwrap();
        assert_eq!(req.params, PaginatedRequestParams::default());
        let n: ToolListChangedNotification =
            serde_json::from_str(r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#).unwrap();
        assert_eq!(n.params, NotificationParams::default());
        assert!(
            serde_json::from_str::<ToolListChangedNotification>(r#"{"jsonrpc":"2.0","method":"tools/list"}"#)
                .is_err()
        );
    }
}
