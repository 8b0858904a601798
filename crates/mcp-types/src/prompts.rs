//! Prompts: `prompts/list`, `prompts/get` and `notifications/prompts/list_changed`.

use std::collections::BTreeMap;

use crate::common::{Icon, Role};
use crate::content::ContentBlock;
use crate::json::JsonObject;
use crate::meta::{RequestMeta, ResultMeta};
use crate::method::{JsonRpcNotification, JsonRpcRequest, JsonRpcResponse};
use crate::mrtr::{InputResponses, MrtrResult};
use crate::notifications::NotificationParams;
use crate::pagination::{Cursor, PaginatedRequestParams};
use crate::result::{CacheScope, ResultType};
use crate::wire_struct;

wire_struct! {
    /// A prompt or prompt template the server offers (`Prompt`).
    #[derive(Default)]
    pub struct Prompt {
        /// Programmatic name.
        req name: String = "name",
        /// Display name (2025-06-18 and later).
        opt title: String = "title",
        /// What the prompt provides.
        opt description: String = "description",
        /// The arguments the prompt accepts.
        opt arguments: Vec<PromptArgument> = "arguments",
        /// Icons for user interfaces (2025-11-25 and later).
        opt icons: Vec<Icon> = "icons",
        /// Metadata (`MetaObject`, 2025-06-18 and later).
        opt meta: JsonObject = "_meta",
    }
}

impl Prompt {
    /// A prompt with a name.
    pub fn new(name: impl Into<String>) -> Self {
        Prompt { name: name.into(), ..Default::default() }
    }
}

wire_struct! {
    /// An argument a prompt accepts (`PromptArgument`).
    #[derive(Default)]
    pub struct PromptArgument {
        /// Programmatic name.
        req name: String = "name",
        /// Display name (2025-06-18 and later).
        opt title: String = "title",
        /// What the argument is.
        opt description: String = "description",
        /// Whether it must be provided (default false).
        opt required: bool = "required",
    }
}

wire_struct! {
    /// A message of a prompt (`PromptMessage`).
    pub struct PromptMessage {
        /// Who speaks.
        req role: Role = "role",
        /// What is said.
        req content: ContentBlock = "content",
    }
}

impl PromptMessage {
    /// A message from `role`.
    pub fn new(role: Role, content: impl Into<ContentBlock>) -> Self {
        PromptMessage { role, content: content.into(), extra: JsonObject::new() }
    }

    /// A user message.
    pub fn user(content: impl Into<ContentBlock>) -> Self {
        PromptMessage::new(Role::User, content)
    }

    /// An assistant message.
    pub fn assistant(content: impl Into<ContentBlock>) -> Self {
        PromptMessage::new(Role::Assistant, content)
    }
}

wire_struct! {
    /// Params of `prompts/get` (`GetPromptRequestParams`).
    #[derive(Default)]
    pub struct GetPromptRequestParams {
        /// The prompt to get.
        req name: String = "name",
        /// Values of the prompt's arguments (strings only).
        opt arguments: BTreeMap<String, String> = "arguments",
        /// MRTR: answers to the server's input requests (2026-07-28).
        opt input_responses: InputResponses = "inputResponses",
        /// MRTR: the server's `requestState`, echoed (2026-07-28).
        opt request_state: String = "requestState",
        /// Request metadata (required on 2026-07-28).
        opt meta: RequestMeta = "_meta",
    }
}

impl GetPromptRequestParams {
    /// Params getting prompt `name` with no arguments.
    pub fn new(name: impl Into<String>) -> Self {
        GetPromptRequestParams { name: name.into(), ..Default::default() }
    }
}

wire_struct! {
    /// The complete result of `prompts/get` (`GetPromptResult`).
    #[derive(Default)]
    pub struct GetPromptResult {
        /// What the prompt is for.
        opt description: String = "description",
        /// The messages.
        req messages: Vec<PromptMessage> = "messages",
        /// The kind of result (required on 2026-07-28, absent before).
        opt result_type: ResultType = "resultType",
        /// Result metadata.
        opt meta: ResultMeta = "_meta",
    }
}

impl GetPromptResult {
    /// A result with these messages.
    pub fn new(messages: Vec<PromptMessage>) -> Self {
        GetPromptResult { messages, ..Default::default() }
    }
}

wire_struct! {
    /// The result of `prompts/list` (`ListPromptsResult`).
    #[derive(Default)]
    pub struct ListPromptsResult {
        /// The prompts of this page.
        req prompts: Vec<Prompt> = "prompts",
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

wire_struct! {
    /// Identifies a prompt, for completion (`PromptReference`, `"type": "ref/prompt"`).
    #[derive(Default)]
    pub struct PromptReference [tag "type" = "ref/prompt"] {
        /// The prompt's name.
        req name: String = "name",
        /// Display name (2025-06-18 and later).
        opt title: String = "title",
    }
}

impl PromptReference {
    /// A reference to prompt `name`.
    pub fn new(name: impl Into<String>) -> Self {
        PromptReference { name: name.into(), ..Default::default() }
    }
}

crate::request_method!(
    /// `prompts/list`: list the server's prompts, a page at a time.
    ListPrompts = "prompts/list", PaginatedRequestParams => ListPromptsResult
);
crate::request_method!(
    /// `prompts/get`: get a prompt with its arguments filled in. On 2026-07-28 the answer may
    /// be an `InputRequiredResult`.
    GetPrompt = "prompts/get", GetPromptRequestParams => GetPromptResult
);
crate::notification_method!(
    /// `notifications/prompts/list_changed`: the prompt list changed.
    PromptListChanged = "notifications/prompts/list_changed", NotificationParams
);

/// A full `prompts/list` request.
pub type ListPromptsRequest = JsonRpcRequest<ListPrompts>;
/// A full `prompts/get` request.
pub type GetPromptRequest = JsonRpcRequest<GetPrompt>;
/// A full `prompts/list` response.
pub type ListPromptsResultResponse = JsonRpcResponse<ListPromptsResult>;
/// A full `prompts/get` response: complete, or input required (2026-07-28).
pub type GetPromptResultResponse = JsonRpcResponse<MrtrResult<GetPromptResult>>;
/// A full `notifications/prompts/list_changed` message.
pub type PromptListChangedNotification = JsonRpcNotification<PromptListChanged>;

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;
    use serde::de::DeserializeOwned;
    use serde_json::{Value, json};

    fn round_trip<T: Serialize + DeserializeOwned>(text: &str) -> T {
        let value: T = serde_json::from_str(text).unwrap();
        let back = serde_json::to_value(&value).unwrap();
        assert_eq!(back, serde_json::from_str::<Value>(text).unwrap(), "round trip of {text}");
        value
    }

    #[test]
    fn get_prompt_result_round_trips() {
        let r: GetPromptResult = round_trip(
            r#"{"resultType":"complete","description":"Code review prompt","messages":[{"role":"user","content":{"type":"text","text":"Please review this Python code"}},{"role":"assistant","content":{"type":"resource","resource":{"uri":"file:///a.py","text":"print()"}}}]}"#,
        );
        assert_eq!(r.messages[0].role, Role::User);
        assert_eq!(r.messages[0].content.as_text(), Some("Please review this Python code"));
        assert!(matches!(r.messages[1].content, ContentBlock::Resource(_)));
        let err = serde_json::from_str::<GetPromptResult>(r#"{"description":"x"}"#).unwrap_err();
        assert!(err.to_string().contains("missing field `messages`"), "{err}");
    }

    #[test]
    fn get_prompt_request_params() {
        let p: GetPromptRequestParams = round_trip(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"code_review","arguments":{"code":"def hello():\n    print('world')"}}"#,
        );
        assert_eq!(
            p.arguments.unwrap().get("code").map(String::as_str),
            Some("def hello():\n    print('world')")
        );
        // Prompt arguments are strings only.
        assert!(
            serde_json::from_str::<GetPromptRequestParams>(r#"{"name":"x","arguments":{"n":1}}"#).is_err()
        );
    }

    #[test]
    fn get_prompt_response_may_be_input_required() {
        let r: GetPromptResultResponse = round_trip(
            r#"{"jsonrpc":"2.0","id":"g","result":{"resultType":"input_required","requestState":"abc"}}"#,
        );
        assert!(matches!(r.result, MrtrResult::InputRequired(_)));
        let r: GetPromptResultResponse = round_trip(r#"{"jsonrpc":"2.0","id":"g","result":{"messages":[]}}"#);
        assert!(matches!(r.result, MrtrResult::Complete(ref g) if g.messages.is_empty()));
        assert!(
            serde_json::from_str::<GetPromptResultResponse>(
                r#"{"jsonrpc":"2.0","id":"g","result":{"resultType":"later","messages":[]}}"#
            )
            .is_err()
        );
    }

    #[test]
    fn list_prompts_result() {
        let r: ListPromptsResult = round_trip(
            r#"{"resultType":"complete","prompts":[{"name":"code_review","title":"Request Code Review","arguments":[{"name":"code","description":"The code to review","required":true}],"icons":[{"src":"https://example.com/review-icon.svg","mimeType":"image/svg+xml","sizes":["any"]}]}],"nextCursor":"next-page-cursor","ttlMs":600000,"cacheScope":"public"}"#,
        );
        let args = r.prompts[0].arguments.as_ref().unwrap();
        assert_eq!(args[0].required, Some(true));
        let _: ListPromptsRequest =
            round_trip(r#"{"jsonrpc":"2.0","id":3,"method":"prompts/list","params":{}}"#);
        let _: PromptListChangedNotification =
            round_trip(r#"{"jsonrpc":"2.0","method":"notifications/prompts/list_changed","params":{}}"#);
    }

    #[test]
    fn prompt_reference_is_tagged() {
        let r: PromptReference = round_trip(r#"{"type":"ref/prompt","name":"code_review"}"#);
        assert_eq!(r, PromptReference::new("code_review"));
        assert!(serde_json::from_str::<PromptReference>(r#"{"type":"ref/resource","name":"x"}"#).is_err());
        assert!(serde_json::from_str::<PromptReference>(r#"{"name":"x"}"#).is_err());
    }

    #[test]
    fn constructors() {
        assert_eq!(
            serde_json::to_value(GetPromptResult::new(vec![PromptMessage::user("hi")])).unwrap(),
            json!({"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]})
        );
        assert_eq!(PromptMessage::assistant("a").role, Role::Assistant);
        assert_eq!(serde_json::to_value(GetPromptRequestParams::new("p")).unwrap(), json!({"name":"p"}));
    }
}
