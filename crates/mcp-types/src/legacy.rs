//! The handshake era (2024-11-05 through 2025-11-25): `initialize`, `notifications/initialized`,
//! `ping`, `logging/setLevel` and `resources/subscribe`/`unsubscribe`. 2026-07-28 removed
//! all of them (`server/discover`, per-request `_meta` and `subscriptions/listen` replace them).
//!
//! # What differs on the wire between the legacy revisions
//!
//! Each item names the schema definitions or members involved; [`WireFeature`] has the same
//! facts as data.
//!
//! * **2024-11-05** — the baseline. Content is `text`, `image` and `resource` (`Annotated`
//!   mixin); sampling messages carry `text` or `image`; completion references are
//!   `ref/prompt` and `ref/resource` (`ResourceReference`); `Implementation` is
//!   `{name, version}`.
//! * **2025-03-26** — JSON-RPC batches (`JSONRPCBatchRequest`, `JSONRPCBatchResponse`: arrays
//!   of requests/notifications and of responses/errors); `AudioContent` (also in sampling);
//!   `Annotations` replaces `Annotated`; `ToolAnnotations` (`Tool.annotations`: `title`,
//!   `readOnlyHint`, `destructiveHint`, `idempotentHint`, `openWorldHint`);
//!   `ServerCapabilities.completions`; `notifications/progress` gains `message`.
//! * **2025-06-18** — batches removed again; `ContentBlock` with `resource_link`
//!   (`ResourceLink`); `CallToolResult.structuredContent` and `Tool.outputSchema`;
//!   elicitation (`elicitation/create` with `{message, requestedSchema}`,
//!   `ClientCapabilities.elicitation`, the `StringSchema`/`NumberSchema`/`BooleanSchema`/
//!   `EnumSchema` (`enum` + `enumNames`) field schemas); `title` on `Implementation`, `Tool`,
//!   `Prompt`, `PromptArgument`, `PromptReference`, `Resource`, `ResourceTemplate`
//!   (`BaseMetadata`); `_meta` on content blocks, resource contents, `Tool`, `Prompt`,
//!   `Resource` and `Root`; `completion/complete` gains `context`; `Annotations.lastModified`;
//!   `ResourceReference` is renamed `ResourceTemplateReference` (still `"ref/resource"` on
//!   the wire).
//! * **2025-11-25** — `Icon`s on `Implementation`, `Tool`, `Prompt`, `Resource`,
//!   `ResourceTemplate` and `ResourceLink`, plus `Implementation.description`/`websiteUrl`;
//!   URL-mode elicitation (`ElicitRequestURLParams` with `elicitationId`,
//!   `notifications/elicitation/complete`, the `-32042` `URLElicitationRequiredError`) and the
//!   `mode` member; titled and multi-select enum schemas (`LegacyTitledEnumSchema` keeps
//!   `enumNames`) and `default` on string and number schemas (boolean had it already);
//!   sampling with tools (`tools`, `toolChoice`, `ToolUseContent`, `ToolResultContent`, array
//!   content, `SamplingMessage._meta`, `ClientCapabilities.sampling.{context,tools}`);
//!   experimental tasks (`task` on request params, `tasks/get|result|cancel|list`,
//!   `notifications/tasks/status`, `tasks` capabilities, `Tool.execution.taskSupport`);
//!   every params object gets a named definition with `_meta`; `JSONRPCError` becomes
//!   `JSONRPCErrorResponse` with an optional `id`; `CancelledNotificationParams.requestId`
//!   becomes optional.

use crate::capabilities::{ClientCapabilities, ServerCapabilities};
use crate::common::{Implementation, LoggingLevel};
use crate::json::JsonObject;
use crate::meta::{RequestMeta, ResultMeta};
use crate::method::{JsonRpcNotification, JsonRpcRequest};
use crate::notifications::{NotificationParams, RequestParams};
use crate::result::EmptyResult;
use crate::version::ProtocolVersion;
use crate::wire_struct;

wire_struct! {
    /// Params of `initialize` (`InitializeRequestParams`).
    pub struct InitializeRequestParams {
        /// The newest revision the client supports.
        req protocol_version: String = "protocolVersion",
        /// What the client supports.
        req capabilities: ClientCapabilities = "capabilities",
        /// The client's name and version.
        req client_info: Implementation = "clientInfo",
        /// Request metadata.
        opt meta: RequestMeta = "_meta",
    }
}

impl InitializeRequestParams {
    /// Params for this version, capabilities and client identity.
    pub fn new(
        protocol_version: impl Into<String>,
        capabilities: ClientCapabilities,
        client_info: Implementation,
    ) -> Self {
        InitializeRequestParams {
            protocol_version: protocol_version.into(),
            capabilities,
            client_info,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

wire_struct! {
    /// The server's answer to `initialize` (`InitializeResult`).
    pub struct InitializeResult {
        /// The revision the server chose (the client's if supported).
        req protocol_version: String = "protocolVersion",
        /// What the server supports.
        req capabilities: ServerCapabilities = "capabilities",
        /// The server's name and version.
        req server_info: Implementation = "serverInfo",
        /// How to use the server, e.g. for a model's system prompt.
        opt instructions: String = "instructions",
        /// Result metadata.
        opt meta: ResultMeta = "_meta",
    }
}

impl InitializeResult {
    /// A result for this version, capabilities and server identity.
    pub fn new(
        protocol_version: impl Into<String>,
        capabilities: ServerCapabilities,
        server_info: Implementation,
    ) -> Self {
        InitializeResult {
            protocol_version: protocol_version.into(),
            capabilities,
            server_info,
            instructions: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

wire_struct! {
    /// Params of `logging/setLevel` (`SetLevelRequestParams`).
    pub struct SetLevelRequestParams {
        /// The minimum level of log messages the client wants.
        req level: LoggingLevel = "level",
        /// Request metadata.
        opt meta: RequestMeta = "_meta",
    }
}

wire_struct! {
    /// Params of `resources/subscribe` (`SubscribeRequestParams`).
    pub struct SubscribeRequestParams {
        /// The resource to watch.
        req uri: String = "uri",
        /// Request metadata.
        opt meta: RequestMeta = "_meta",
    }
}

wire_struct! {
    /// Params of `resources/unsubscribe` (`UnsubscribeRequestParams`).
    pub struct UnsubscribeRequestParams {
        /// The resource to stop watching.
        req uri: String = "uri",
        /// Request metadata.
        opt meta: RequestMeta = "_meta",
    }
}

crate::request_method!(
    /// `initialize`: the first request of a legacy session.
    Initialize = "initialize", InitializeRequestParams => InitializeResult
);
crate::request_method!(
    /// `ping`: liveness check, either direction.
    Ping = "ping", RequestParams => EmptyResult
);
crate::request_method!(
    /// `logging/setLevel`: set the session's minimum log level.
    SetLevel = "logging/setLevel", SetLevelRequestParams => EmptyResult
);
crate::request_method!(
    /// `resources/subscribe`: get `notifications/resources/updated` for a resource.
    Subscribe = "resources/subscribe", SubscribeRequestParams => EmptyResult
);
crate::request_method!(
    /// `resources/unsubscribe`: stop those notifications.
    Unsubscribe = "resources/unsubscribe", UnsubscribeRequestParams => EmptyResult
);
crate::notification_method!(
    /// `notifications/initialized`: the client finished initialization.
    Initialized = "notifications/initialized", NotificationParams
);

/// A complete `initialize` request (`InitializeRequest`).
pub type InitializeRequest = JsonRpcRequest<Initialize>;
/// A complete `notifications/initialized` notification (`InitializedNotification`).
pub type InitializedNotification = JsonRpcNotification<Initialized>;
/// A complete `ping` request (`PingRequest`).
pub type PingRequest = JsonRpcRequest<Ping>;
/// A complete `logging/setLevel` request (`SetLevelRequest`).
pub type SetLevelRequest = JsonRpcRequest<SetLevel>;
/// A complete `resources/subscribe` request (`SubscribeRequest`).
pub type SubscribeRequest = JsonRpcRequest<Subscribe>;
/// A complete `resources/unsubscribe` request (`UnsubscribeRequest`).
pub type UnsubscribeRequest = JsonRpcRequest<Unsubscribe>;

/// A wire feature that some revisions have and others lack, with the revisions that have it
/// (facts taken from each revision's `schema.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum WireFeature {
    /// The `initialize` handshake, `ping`, `logging/setLevel`, `resources/subscribe`,
    /// `notifications/roots/list_changed`.
    Handshake,
    /// JSON-RPC batches (`JSONRPCBatchRequest`/`JSONRPCBatchResponse`).
    JsonRpcBatches,
    /// `AudioContent`.
    AudioContent,
    /// `Tool.annotations` (`ToolAnnotations`).
    ToolAnnotations,
    /// `ServerCapabilities.completions`.
    CompletionsCapability,
    /// `notifications/progress` `message`.
    ProgressMessage,
    /// `CallToolResult.structuredContent` and `Tool.outputSchema`.
    StructuredToolOutput,
    /// `elicitation/create` (form mode).
    Elicitation,
    /// `resource_link` content (`ResourceLink`).
    ResourceLink,
    /// `title` on implementations, tools, prompts, resources (`BaseMetadata`).
    Titles,
    /// `_meta` on content blocks, resource contents, tools, prompts, resources and roots.
    ObjectMeta,
    /// `completion/complete` `context`.
    CompletionContext,
    /// `icons` (`Icon`).
    Icons,
    /// URL-mode elicitation (`ElicitRequestURLParams`, `mode`).
    UrlElicitation,
    /// `notifications/elicitation/complete` and the `-32042` error.
    ElicitationComplete,
    /// Titled and multi-select enum schemas; `default` on string and number schemas.
    RichEnumSchemas,
    /// `tools`/`toolChoice` in sampling, `tool_use`/`tool_result` content.
    SamplingTools,
    /// Experimental tasks (`task` params, `tasks/*`, `notifications/tasks/status`).
    Tasks,
    /// Error responses whose `id` may be absent (`JSONRPCErrorResponse`).
    OptionalErrorId,
    /// `resultType` on results, MRTR, `server/discover`, per-request `_meta` state.
    Stateless,
}

impl WireFeature {
    /// Every feature.
    pub const ALL: [WireFeature; 20] = [
        WireFeature::Handshake,
        WireFeature::JsonRpcBatches,
        WireFeature::AudioContent,
        WireFeature::ToolAnnotations,
        WireFeature::CompletionsCapability,
        WireFeature::ProgressMessage,
        WireFeature::StructuredToolOutput,
        WireFeature::Elicitation,
        WireFeature::ResourceLink,
        WireFeature::Titles,
        WireFeature::ObjectMeta,
        WireFeature::CompletionContext,
        WireFeature::Icons,
        WireFeature::UrlElicitation,
        WireFeature::ElicitationComplete,
        WireFeature::RichEnumSchemas,
        WireFeature::SamplingTools,
        WireFeature::Tasks,
        WireFeature::OptionalErrorId,
        WireFeature::Stateless,
    ];

    /// The first revision with this feature.
    pub const fn since(self) -> ProtocolVersion {
        use ProtocolVersion::*;
        match self {
            WireFeature::Handshake => V2024_11_05,
            WireFeature::JsonRpcBatches
            | WireFeature::AudioContent
            | WireFeature::ToolAnnotations
            | WireFeature::CompletionsCapability
            | WireFeature::ProgressMessage => V2025_03_26,
            WireFeature::StructuredToolOutput
            | WireFeature::Elicitation
            | WireFeature::ResourceLink
            | WireFeature::Titles
            | WireFeature::ObjectMeta
            | WireFeature::CompletionContext => V2025_06_18,
            WireFeature::Icons
            | WireFeature::UrlElicitation
            | WireFeature::ElicitationComplete
            | WireFeature::RichEnumSchemas
            | WireFeature::SamplingTools
            | WireFeature::Tasks
            | WireFeature::OptionalErrorId => V2025_11_25,
            WireFeature::Stateless => V2026_07_28,
        }
    }

    /// The last revision with this feature; `None` while the newest revision has it.
    pub const fn until(self) -> Option<ProtocolVersion> {
        use ProtocolVersion::*;
        match self {
            WireFeature::JsonRpcBatches => Some(V2025_03_26),
            WireFeature::Handshake | WireFeature::ElicitationComplete | WireFeature::Tasks => {
                Some(V2025_11_25)
            }
            _ => None,
        }
    }

    /// True when revision `version` has this feature.
    pub fn in_version(self, version: ProtocolVersion) -> bool {
        version >= self.since() && self.until().is_none_or(|last| version <= last)
    }
}

#[cfg(test)]
mod tests {
    use serde::Serialize;
    use serde::de::DeserializeOwned;
    use serde_json::json;

    use super::*;
    use crate::json::JsonValue;
    use crate::{NotificationMethod, RequestMethod};

    fn round_trip<T: Serialize + DeserializeOwned>(value: JsonValue) -> T {
        let decoded: T = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(serde_json::to_value(&decoded).unwrap(), value);
        decoded
    }

    #[test]
    fn initialize_round_trips_across_revisions() {
        // 2024-11-05: bare capabilities, implementation without title.
        let req: InitializeRequest = round_trip(json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": "2024-11-05",
                "capabilities": {"roots": {"listChanged": true}, "sampling": {}},
                "clientInfo": {"name": "c", "version": "1.0"}
            }
        }));
        assert_eq!(req.params.protocol_version, "2024-11-05");
        assert_eq!(req.params.capabilities.roots.as_ref().unwrap().list_changed, Some(true));

        // 2025-11-25: _meta, icons, tasks capability, elicitation modes.
        let req: InitializeRequest = round_trip(json!({
            "jsonrpc": "2.0", "id": "i", "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"elicitation": {"form": {}, "url": {}}, "tasks": {"list": {}}},
                "clientInfo": {"name": "c", "version": "1", "icons": [{"src": "data:,"}]},
                "_meta": {"progressToken": 1}
            }
        }));
        assert!(req.params.capabilities.elicitation.unwrap().supports_url());
        assert!(req.params.meta.unwrap().progress_token.is_some());

        let err = serde_json::from_value::<InitializeRequestParams>(json!({
            "protocolVersion": "2025-06-18", "capabilities": {}
        }))
        .unwrap_err();
        assert!(err.to_string().contains("missing field `clientInfo`"), "{err}");
    }

    #[test]
    fn initialize_result_round_trips() {
        let result: InitializeResult = round_trip(json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {"listChanged": true}, "logging": {}, "completions": {}},
            "serverInfo": {"name": "s", "title": "Server", "version": "2"},
            "instructions": "Use the tools."
        }));
        assert_eq!(result.instructions.as_deref(), Some("Use the tools."));
        assert_eq!(result.server_info.title.as_deref(), Some("Server"));
        let built =
            InitializeResult::new("2025-11-25", ServerCapabilities::default(), Implementation::new("s", "1"));
        assert_eq!(
            serde_json::to_value(built).unwrap(),
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}})
        );
    }

    #[test]
    fn small_requests() {
        assert_eq!(Ping::METHOD, "ping");
        assert_eq!(Initialized::METHOD, "notifications/initialized");
        let ping: PingRequest =
            serde_json::from_value(json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})).unwrap();
        assert_eq!(ping.params, RequestParams::default());
        let set: SetLevelRequest = round_trip(json!({
            "jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "warning"}
        }));
        assert_eq!(set.params.level, LoggingLevel::Warning);
        assert!(
            serde_json::from_value::<SetLevelRequestParams>(json!({"level": "verbose"})).is_err(),
            "unknown levels are rejected"
        );
        let sub: SubscribeRequest = round_trip(json!({
            "jsonrpc": "2.0", "id": 3, "method": "resources/subscribe", "params": {"uri": "file:///a", "_meta": {"x": 1}}
        }));
        assert_eq!(sub.params.uri, "file:///a");
        let unsub: UnsubscribeRequest = round_trip(json!({
            "jsonrpc": "2.0", "id": 4, "method": "resources/unsubscribe", "params": {"uri": "file:///a"}
        }));
        assert_eq!(unsub.params.uri, "file:///a");
        assert!(
            serde_json::from_value::<SubscribeRequest>(
                json!({"jsonrpc": "2.0", "id": 5, "method": "resources/unsubscribe", "params": {"uri": "u"}})
            )
            .is_err()
        );
        let note: InitializedNotification =
            round_trip(json!({"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}}));
        assert_eq!(note.params, NotificationParams::default());
    }

    #[test]
    fn feature_table_agrees_with_version_predicates() {
        for v in ProtocolVersion::ALL {
            assert_eq!(WireFeature::JsonRpcBatches.in_version(v), v.allows_batches(), "{v}");
            assert_eq!(WireFeature::AudioContent.in_version(v), v.has_audio_content(), "{v}");
            assert_eq!(WireFeature::StructuredToolOutput.in_version(v), v.has_structured_content(), "{v}");
            assert_eq!(WireFeature::Elicitation.in_version(v), v.has_elicitation(), "{v}");
            assert_eq!(WireFeature::Icons.in_version(v), v.has_icons(), "{v}");
            assert_eq!(WireFeature::Tasks.in_version(v), v.has_legacy_tasks(), "{v}");
            assert_eq!(WireFeature::Handshake.in_version(v), v.has_initialize(), "{v}");
            assert_eq!(WireFeature::Stateless.in_version(v), v.is_modern(), "{v}");
        }
        for f in WireFeature::ALL {
            assert!(f.in_version(f.since()), "{f:?}");
            if let Some(last) = f.until() {
                assert!(last >= f.since(), "{f:?}");
            }
        }
        assert!(!WireFeature::ElicitationComplete.in_version(ProtocolVersion::V2026_07_28));
        assert!(WireFeature::UrlElicitation.in_version(ProtocolVersion::V2026_07_28));
    }
}
