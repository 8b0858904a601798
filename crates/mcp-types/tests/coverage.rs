//! Every definition in the 2026-07-28 and 2025-11-25 schemas has a Rust counterpart (checked at
//! compile time by naming it), or is an abstract base the schema only uses for inheritance.

use std::collections::BTreeSet;

use mcp_testkit as support;
use mcp_types::*;

macro_rules! covered {
    ($($def:ident $(=> $ty:ty)?),* $(,)?) => {{
        let mut names = BTreeSet::new();
        $( covered!(@one $def $(=> $ty)?); names.insert(stringify!($def)); )*
        names
    }};
    (@one $def:ident) => { let _: Option<$def> = None; };
    (@one $def:ident => $ty:ty) => { let _: Option<$ty> = None; };
}

/// Abstract bases: the schema uses them only as the parents of concrete types (each concrete
/// type carries their members), or as the unconstrained fallbacks of a union.
const ABSTRACT: &[&str] = &[
    "BaseMetadata",               // name + title, inlined into every named object
    "Request",                    // method + params, the parent of every request
    "Notification",               // method + params, the parent of every notification
    "Result",                     // _meta + resultType, the parent of every result (EmptyResult is it)
    "PaginatedRequest",           // the parent of the list requests
    "ClientResult",               // union of results by method: decoded per method by the requester
    "ServerResult",               // likewise
    "TaskAugmentedRequestParams", // the `task` member, present on CallToolRequestParams etc.
];

#[test]
fn every_schema_definition_has_a_rust_type() {
    let covered = covered! {
        Annotations, AudioContent, BlobResourceContents, BooleanSchema, CacheableResult, CallToolRequest,
        CallToolRequestParams, CallToolResult, CallToolResultResponse, CancelTaskRequest, CancelTaskResult,
        CancelledNotification, CancelledNotificationParams, ClientCapabilities, ClientNotification, ClientRequest,
        CompleteRequest, CompleteRequestParams, CompleteResult, CompleteResultResponse, ContentBlock,
        CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult, CreateTaskResult, Cursor,
        DiscoverRequest, DiscoverResult, DiscoverResultResponse, ElicitRequest, ElicitRequestFormParams,
        ElicitRequestParams, ElicitRequestURLParams, ElicitResult, ElicitationCompleteNotification,
        EmbeddedResource, EmptyResult, EnumSchema, Error => ErrorObject, GetPromptRequest, GetPromptRequestParams,
        GetPromptResult, GetPromptResultResponse, GetTaskPayloadRequest, GetTaskPayloadResult, GetTaskRequest,
        GetTaskResult, HeaderMismatchError, Icon, Icons, ImageContent, Implementation, InitializeRequest,
        InitializeRequestParams, InitializeResult, InitializedNotification, InputRequest, InputRequests,
        InputRequiredResult, InputResponse, InputResponseRequestParams, InputResponses, InternalError,
        InvalidParamsError, InvalidRequestError, JSONArray => JsonArray, JSONObject => JsonObject,
        JSONRPCErrorResponse => JsonRpcErrorResponse, JSONRPCMessage => Message,
        JSONRPCNotification => Notification, JSONRPCRequest => Request, JSONRPCResponse => Response,
        JSONRPCResultResponse => Response, JSONValue => JsonValue, LegacyTitledEnumSchema, ListPromptsRequest,
        ListPromptsResult, ListPromptsResultResponse, ListResourceTemplatesRequest, ListResourceTemplatesResult,
        ListResourceTemplatesResultResponse, ListResourcesRequest, ListResourcesResult,
        ListResourcesResultResponse, ListRootsRequest, ListRootsResult, ListTasksRequest, ListTasksResult,
        ListToolsRequest, ListToolsResult, ListToolsResultResponse, LoggingLevel, LoggingMessageNotification,
        LoggingMessageNotificationParams, MetaObject, MethodNotFoundError, MissingRequiredClientCapabilityError,
        ModelHint, ModelPreferences, MultiSelectEnumSchema, NotificationMetaObject => NotificationMeta,
        NotificationParams, NumberSchema, PaginatedRequestParams, PaginatedResult, ParseError, PingRequest,
        PrimitiveSchemaDefinition, ProgressNotification, ProgressNotificationParams, ProgressToken, Prompt,
        PromptArgument, PromptListChangedNotification, PromptMessage, PromptReference, ReadResourceRequest,
        ReadResourceRequestParams, ReadResourceResult, ReadResourceResultResponse, RelatedTaskMetadata, RequestId,
        RequestMetaObject => RequestMeta, RequestParams, Resource, ResourceContents, ResourceLink,
        ResourceListChangedNotification, ResourceRequestParams, ResourceTemplate, ResourceTemplateReference,
        ResourceUpdatedNotification, ResourceUpdatedNotificationParams, ResultMetaObject => ResultMeta, ResultType,
        Role, Root, RootsListChangedNotification, SamplingMessage, SamplingMessageContentBlock,
        ServerCapabilities, ServerNotification, ServerRequest, SetLevelRequest, SetLevelRequestParams,
        SingleSelectEnumSchema, StringSchema, SubscribeRequest, SubscribeRequestParams, SubscriptionFilter,
        SubscriptionsAcknowledgedNotification, SubscriptionsAcknowledgedNotificationParams,
        SubscriptionsListenRequest, SubscriptionsListenRequestParams, SubscriptionsListenResult,
        SubscriptionsListenResultMetaObject => ResultMeta, SubscriptionsListenResultResponse, Task, TaskMetadata,
        TaskStatus, TaskStatusNotification, TaskStatusNotificationParams, TextContent, TextResourceContents,
        TitledMultiSelectEnumSchema, TitledSingleSelectEnumSchema, Tool, ToolAnnotations, ToolChoice,
        ToolExecution, ToolListChangedNotification, ToolResultContent, ToolUseContent,
        URLElicitationRequiredError => UrlElicitationRequiredError, UnsubscribeRequest, UnsubscribeRequestParams,
        UnsupportedProtocolVersionError, UntitledMultiSelectEnumSchema, UntitledSingleSelectEnumSchema,
    };
    for revision in ["2026-07-28", "2025-11-25"] {
        let path = support::spec_dir().join(revision).join("schema.json");
        let schema: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let defs: BTreeSet<&str> = schema["$defs"].as_object().unwrap().keys().map(String::as_str).collect();
        let missing: Vec<_> =
            defs.iter().filter(|d| !covered.contains(**d) && !ABSTRACT.contains(*d)).collect();
        assert!(missing.is_empty(), "{revision} definitions without a Rust type: {missing:?}");
    }
}
