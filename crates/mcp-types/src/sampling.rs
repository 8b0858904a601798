//! Sampling (`sampling/createMessage`): the server asks the client's model for a completion.
//!
//! Legacy revisions send it as a server→client JSON-RPC request
//! ([`LegacyCreateMessageRequest`]); 2026-07-28 embeds it in an `InputRequiredResult`
//! ([`CreateMessageRequest`]). Tool use in sampling (`tools`, `toolChoice`, `tool_use` and
//! `tool_result` blocks, array content) exists from 2025-11-25.

use crate::common::Role;
use crate::content::SamplingContent;
use crate::json::JsonObject;
use crate::meta::{RequestMeta, ResultMeta};
use crate::method::{InlineRequest, JsonRpcRequest};
use crate::tasks::TaskMetadata;
use crate::tools::Tool;
use crate::{open_enum, wire_struct};

open_enum! {
    /// Which servers' context the client should add to the prompt (`includeContext`).
    /// `thisServer` and `allServers` are deprecated; the client may ignore the request.
    #[non_exhaustive]
    pub enum IncludeContext {
        /// No added context (the default).
        None = "none",
        /// Context from the requesting server.
        ThisServer = "thisServer",
        /// Context from every connected server.
        AllServers = "allServers",
    }
}

open_enum! {
    /// How the model may use tools (`ToolChoice.mode`).
    #[non_exhaustive]
    pub enum ToolChoiceMode {
        /// The model decides (the default).
        Auto = "auto",
        /// The model must use at least one tool.
        Required = "required",
        /// The model must not use tools.
        None = "none",
    }
}

open_enum! {
    /// Why sampling stopped (`stopReason`, an open string).
    #[non_exhaustive]
    pub enum StopReason {
        /// Natural end of the assistant's turn.
        EndTurn = "endTurn",
        /// A stop sequence was produced.
        StopSequence = "stopSequence",
        /// The token limit was reached.
        MaxTokens = "maxTokens",
        /// The model wants to use tools.
        ToolUse = "toolUse",
    }
}

wire_struct! {
    /// Tool selection for sampling (`ToolChoice`, 2025-11-25 and later).
    #[derive(Default)]
    pub struct ToolChoice {
        /// The mode; absent means `auto`.
        opt mode: ToolChoiceMode = "mode",
    }
}

impl ToolChoice {
    /// A choice with this mode.
    pub fn new(mode: ToolChoiceMode) -> Self {
        ToolChoice { mode: Some(mode), extra: JsonObject::new() }
    }
}

wire_struct! {
    /// A hint for model selection (`ModelHint`).
    #[derive(Default)]
    pub struct ModelHint {
        /// A substring of a model name (`"sonnet"`, `"claude-3-5-sonnet"`).
        opt name: String = "name",
    }
}

impl ModelHint {
    /// A hint naming a model (family).
    pub fn new(name: impl Into<String>) -> Self {
        ModelHint { name: Some(name.into()), extra: JsonObject::new() }
    }
}

wire_struct! {
    /// The server's advisory model preferences (`ModelPreferences`). Priorities go from 0
    /// (unimportant) to 1 (most important).
    #[derive(Default)]
    pub struct ModelPreferences {
        /// Hints, evaluated in order.
        opt hints: Vec<ModelHint> = "hints",
        /// How much cost matters.
        opt cost_priority: f64 = "costPriority",
        /// How much speed (latency) matters.
        opt speed_priority: f64 = "speedPriority",
        /// How much intelligence matters.
        opt intelligence_priority: f64 = "intelligencePriority",
    }
}

wire_struct! {
    /// A message to or from the model (`SamplingMessage`).
    pub struct SamplingMessage {
        /// Who sent it.
        req role: Role = "role",
        /// One block, or (2025-11-25 and later) an array of blocks.
        req content: SamplingContent = "content",
        /// Metadata (2025-11-25 and later).
        opt meta: JsonObject = "_meta",
    }
}

impl SamplingMessage {
    /// A message with this role and content.
    pub fn new(role: Role, content: impl Into<SamplingContent>) -> Self {
        SamplingMessage { role, content: content.into(), meta: None, extra: JsonObject::new() }
    }

    /// A user message.
    pub fn user(content: impl Into<SamplingContent>) -> Self {
        Self::new(Role::User, content)
    }

    /// An assistant message.
    pub fn assistant(content: impl Into<SamplingContent>) -> Self {
        Self::new(Role::Assistant, content)
    }
}

wire_struct! {
    /// Params of `sampling/createMessage` (`CreateMessageRequestParams`).
    pub struct CreateMessageRequestParams {
        /// The conversation.
        req messages: Vec<SamplingMessage> = "messages",
        /// The most tokens to sample.
        req max_tokens: u64 = "maxTokens",
        /// A system prompt the client may modify or omit.
        opt system_prompt: String = "systemPrompt",
        /// Context to add to the prompt (deprecated values need `sampling.context`).
        opt include_context: IncludeContext = "includeContext",
        /// Sampling temperature.
        opt temperature: f64 = "temperature",
        /// Sequences that stop sampling.
        opt stop_sequences: Vec<String> = "stopSequences",
        /// Provider-specific metadata passed through to the LLM provider.
        opt metadata: JsonObject = "metadata",
        /// Model preferences.
        opt model_preferences: ModelPreferences = "modelPreferences",
        /// Tools the model may use (2025-11-25 and later; needs `sampling.tools`).
        opt tools: Vec<Tool> = "tools",
        /// How the model may use the tools (2025-11-25 and later).
        opt tool_choice: ToolChoice = "toolChoice",
        /// Request metadata (legacy: `progressToken`).
        opt meta: RequestMeta = "_meta",
        /// Task augmentation (2025-11-25 only).
        opt task: TaskMetadata = "task",
    }
}

impl CreateMessageRequestParams {
    /// Params for these messages and token limit, everything else unset.
    pub fn new(messages: Vec<SamplingMessage>, max_tokens: u64) -> Self {
        CreateMessageRequestParams {
            messages,
            max_tokens,
            system_prompt: None,
            include_context: None,
            temperature: None,
            stop_sequences: None,
            metadata: None,
            model_preferences: None,
            tools: None,
            tool_choice: None,
            meta: None,
            task: None,
            extra: JsonObject::new(),
        }
    }
}

wire_struct! {
    /// The client's answer to `sampling/createMessage` (`CreateMessageResult`).
    pub struct CreateMessageResult {
        /// Who produced the message (normally the assistant).
        req role: Role = "role",
        /// The sampled content: one block or (2025-11-25 and later) an array.
        req content: SamplingContent = "content",
        /// The model that generated it.
        req model: String = "model",
        /// Why sampling stopped, when known.
        opt stop_reason: StopReason = "stopReason",
        /// Metadata.
        opt meta: ResultMeta = "_meta",
    }
}

impl CreateMessageResult {
    /// An assistant message from this model.
    pub fn new(model: impl Into<String>, content: impl Into<SamplingContent>) -> Self {
        CreateMessageResult {
            role: Role::Assistant,
            content: content.into(),
            model: model.into(),
            stop_reason: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

crate::request_method!(
    /// `sampling/createMessage`: ask the client's model for a message.
    CreateMessage = "sampling/createMessage", CreateMessageRequestParams => CreateMessageResult
);

/// Sampling embedded in an `InputRequiredResult` (`CreateMessageRequest`, 2026-07-28).
pub type CreateMessageRequest = InlineRequest<CreateMessage>;

/// A server→client sampling request (`CreateMessageRequest` of legacy revisions).
pub type LegacyCreateMessageRequest = JsonRpcRequest<CreateMessage>;

#[cfg(test)]
mod tests {
    use serde::Serialize;
    use serde::de::DeserializeOwned;
    use serde_json::json;

    use super::*;
    use crate::RequestMethod;
    use crate::content::SamplingContentBlock;
    use crate::json::JsonValue;

    fn round_trip<T: Serialize + DeserializeOwned>(value: JsonValue) -> T {
        let decoded: T = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(serde_json::to_value(&decoded).unwrap(), value);
        decoded
    }

    #[test]
    fn example_basic_request() {
        let req: CreateMessageRequest = round_trip(json!({
            "method": "sampling/createMessage",
            "params": {
                "messages": [{"role": "user", "content": {"type": "text", "text": "What is the capital of France?"}}],
                "modelPreferences": {"hints": [{"name": "claude-3-sonnet"}], "intelligencePriority": 0.8, "speedPriority": 0.5},
                "systemPrompt": "You are a helpful assistant.",
                "maxTokens": 100
            }
        }));
        let params = req.params.unwrap();
        assert_eq!(params.max_tokens, 100);
        assert_eq!(params.messages[0].content.blocks()[0].as_text(), Some("What is the capital of France?"));
        let prefs = params.model_preferences.unwrap();
        assert_eq!(prefs.hints.unwrap()[0].name.as_deref(), Some("claude-3-sonnet"));
        assert_eq!(prefs.intelligence_priority, Some(0.8));
        assert_eq!(CreateMessage::METHOD, "sampling/createMessage");
    }

    #[test]
    fn example_follow_up_with_tool_results() {
        let params: CreateMessageRequestParams = round_trip(json!({
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "What's the weather like in Paris and London?"}},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": "call_abc123", "name": "get_weather", "input": {"city": "Paris"}},
                    {"type": "tool_use", "id": "call_def456", "name": "get_weather", "input": {"city": "London"}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "toolUseId": "call_abc123",
                     "content": [{"type": "text", "text": "Weather in Paris: 18°C, partly cloudy"}]},
                    {"type": "tool_result", "toolUseId": "call_def456",
                     "content": [{"type": "text", "text": "Weather in London: 15°C, rainy"}]}
                ]}
            ],
            "tools": [{
                "name": "get_weather",
                "description": "Get current weather for a city",
                "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
            }],
            "maxTokens": 1000
        }));
        assert!(matches!(params.messages[1].content, SamplingContent::Many(ref v) if v.len() == 2));
        assert!(matches!(params.messages[2].content.blocks()[0], SamplingContentBlock::ToolResult(_)));
        assert_eq!(params.tools.unwrap()[0].name, "get_weather");
    }

    #[test]
    fn example_request_with_tools_and_choice() {
        let params: CreateMessageRequestParams = round_trip(json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "What's the weather like in Paris and London?"}}],
            "tools": [{
                "name": "get_weather",
                "description": "Get current weather for a city",
                "inputSchema": {"type": "object", "properties": {"city": {"type": "string", "description": "City name"}}, "required": ["city"]}
            }],
            "toolChoice": {"mode": "auto"},
            "maxTokens": 1000
        }));
        assert_eq!(params.tool_choice.unwrap().mode, Some(ToolChoiceMode::Auto));
    }

    #[test]
    fn legacy_request_with_every_member() {
        let req: LegacyCreateMessageRequest = round_trip(json!({
            "jsonrpc": "2.0", "id": 9, "method": "sampling/createMessage",
            "params": {
                "messages": [{"role": "user", "content": {"type": "image", "data": "AAAA", "mimeType": "image/png"}, "_meta": {"m": 1}}],
                "maxTokens": 50,
                "includeContext": "thisServer",
                "temperature": 0.7,
                "stopSequences": ["\n\n"],
                "metadata": {"provider": {"top_k": 3}},
                "toolChoice": {"mode": "required"},
                "_meta": {"progressToken": "tok"},
                "task": {"ttl": 60000}
            }
        }));
        let p = req.params;
        assert_eq!(p.include_context, Some(IncludeContext::ThisServer));
        assert_eq!(p.temperature, Some(0.7));
        assert_eq!(p.task.unwrap().ttl, Some(60000));
        assert_eq!(p.messages[0].meta.as_ref().unwrap()["m"], json!(1));
        assert_eq!(p.tool_choice.unwrap().mode, Some(ToolChoiceMode::Required));

        let err = serde_json::from_value::<CreateMessageRequestParams>(json!({"messages": []})).unwrap_err();
        assert!(err.to_string().contains("missing field `maxTokens`"), "{err}");
        let other: CreateMessageRequestParams =
            round_trip(json!({"messages": [], "maxTokens": 1, "includeContext": "someServers"}));
        assert_eq!(other.include_context, Some(IncludeContext::Other("someServers".into())));
    }

    #[test]
    fn example_results() {
        let result: CreateMessageResult = round_trip(json!({
            "role": "assistant",
            "content": {"type": "text", "text": "The capital of France is Paris."},
            "model": "claude-3-sonnet-20240307",
            "stopReason": "endTurn"
        }));
        assert_eq!(result.stop_reason, Some(StopReason::EndTurn));
        let result: CreateMessageResult = round_trip(json!({
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "call_abc123", "name": "get_weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "call_def456", "name": "get_weather", "input": {"city": "London"}}
            ],
            "model": "claude-3-sonnet-20240307",
            "stopReason": "toolUse"
        }));
        assert_eq!(result.content.blocks().len(), 2);
        assert_eq!(result.stop_reason, Some(StopReason::ToolUse));
        let custom: CreateMessageResult = round_trip(json!({
            "role": "assistant", "content": {"type": "text", "text": "x"}, "model": "m",
            "stopReason": "content_filter", "_meta": {"k": true}
        }));
        assert_eq!(custom.stop_reason, Some(StopReason::Other("content_filter".into())));
        assert!(
            serde_json::from_value::<CreateMessageResult>(
                json!({"role": "assistant", "content": {"type": "text", "text": "x"}})
            )
            .is_err()
        );
        assert_eq!(
            serde_json::to_value(CreateMessageResult::new("m", SamplingContent::text("hi"))).unwrap(),
            json!({"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"})
        );
    }

    #[test]
    fn messages_and_preferences() {
        let msg: SamplingMessage = round_trip(json!({
            "role": "user",
            "content": [
                {"type": "tool_result", "toolUseId": "call_123", "content": [{"type": "text", "text": "Result 1"}]},
                {"type": "tool_result", "toolUseId": "call_456", "content": [{"type": "text", "text": "Result 2"}]}
            ]
        }));
        assert_eq!(msg.role, Role::User);
        let prefs: ModelPreferences = round_trip(json!({
            "hints": [{"name": "claude-3-sonnet"}, {"name": "claude"}],
            "costPriority": 0.3, "speedPriority": 0.8, "intelligencePriority": 0.5
        }));
        assert_eq!(prefs.cost_priority, Some(0.3));
        let unknown: SamplingMessage =
            round_trip(json!({"role": "user", "content": {"type": "video", "url": "x"}}));
        assert!(matches!(unknown.content, SamplingContent::Single(SamplingContentBlock::Unknown(_))));
        assert_eq!(
            serde_json::to_value(SamplingMessage::user(SamplingContent::text("q"))).unwrap(),
            json!({"role": "user", "content": {"type": "text", "text": "q"}})
        );
    }

    #[test]
    fn input_requests_and_responses_examples() {
        use crate::mrtr::{InputRequest, InputRequests, InputResponse, InputResponses};
        let requests: InputRequests = round_trip(json!({
            "github_login": {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": "Please provide your GitHub username",
                    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
                }
            },
            "capital_of_france": {
                "method": "sampling/createMessage",
                "params": {
                    "messages": [{"role": "user", "content": {"type": "text", "text": "What is the capital of France?"}}],
                    "maxTokens": 100
                }
            }
        }));
        assert!(matches!(requests["github_login"], InputRequest::Elicit(_)));
        assert!(matches!(requests["capital_of_france"], InputRequest::CreateMessage(_)));
        let responses: InputResponses = round_trip(json!({
            "github_login": {"action": "accept", "content": {"name": "octocat"}},
            "capital_of_france": {
                "role": "assistant",
                "content": {"type": "text", "text": "The capital of France is Paris."},
                "model": "claude-3-sonnet-20240307",
                "stopReason": "endTurn"
            }
        }));
        assert!(matches!(responses["github_login"], InputResponse::Elicit(_)));
        assert!(matches!(responses["capital_of_france"], InputResponse::CreateMessage(_)));
    }
}
