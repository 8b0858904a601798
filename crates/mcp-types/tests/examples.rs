//! Every example of the 2026-07-28 specification deserializes into the type of the same name,
//! serializes back to an equal JSON value, and that output validates against the schema.

use mcp_testkit as support;

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use mcp_types::*;

type Check = fn(&str, &Path) -> Result<(), String>;

fn round_trip<T: DeserializeOwned + Serialize>(def: &str, path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let original: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    mcp_types::__private::take_unknown_members();
    let typed: T = serde_json::from_str(&text).map_err(|e| format!("does not deserialize: {e}"))?;
    // Every member of a specification example must be modelled, not just carried in `extra`
    // (the one exception: the 2026 ListRootsRequest example carries a stray `id`).
    let unknown: Vec<String> = mcp_types::__private::take_unknown_members()
        .into_iter()
        .filter(|m| !(def == "ListRootsRequest" && m == "id"))
        .collect();
    if !unknown.is_empty() {
        return Err(format!("members decoded as unknown: {unknown:?}"));
    }
    let back = serde_json::to_value(&typed).map_err(|e| format!("does not serialize: {e}"))?;
    if !support::json_eq(&original, &back) {
        return Err(format!("round trip differs:\n  original: {original}\n  back:     {back}"));
    }
    support::assert_valid("2026-07-28", def, &back);
    Ok(())
}

macro_rules! table {
    ($($name:ident => $ty:ty),* $(,)?) => {{
        let mut t: BTreeMap<&'static str, Check> = BTreeMap::new();
        $( t.insert(stringify!($name), round_trip::<$ty>); )*
        t
    }};
}

#[test]
fn every_2026_example_round_trips_and_validates() {
    let checks = table! {
        AudioContent => AudioContent,
        BlobResourceContents => BlobResourceContents,
        BooleanSchema => BooleanSchema,
        CallToolRequest => CallToolRequest,
        CallToolRequestParams => CallToolRequestParams,
        CallToolResult => CallToolResult,
        CallToolResultResponse => CallToolResultResponse,
        CancelledNotification => CancelledNotification,
        CancelledNotificationParams => CancelledNotificationParams,
        ClientCapabilities => ClientCapabilities,
        CompleteRequest => CompleteRequest,
        CompleteRequestParams => CompleteRequestParams,
        CompleteResult => CompleteResult,
        CompleteResultResponse => CompleteResultResponse,
        CreateMessageRequest => CreateMessageRequest,
        CreateMessageRequestParams => CreateMessageRequestParams,
        CreateMessageResult => CreateMessageResult,
        DiscoverRequest => DiscoverRequest,
        DiscoverResult => DiscoverResult,
        DiscoverResultResponse => DiscoverResultResponse,
        ElicitRequest => ElicitRequest,
        ElicitRequestFormParams => ElicitRequestFormParams,
        ElicitRequestURLParams => ElicitRequestURLParams,
        ElicitResult => ElicitResult,
        EmbeddedResource => EmbeddedResource,
        GetPromptRequest => GetPromptRequest,
        GetPromptRequestParams => GetPromptRequestParams,
        GetPromptResult => GetPromptResult,
        GetPromptResultResponse => GetPromptResultResponse,
        HeaderMismatchError => HeaderMismatchError,
        ImageContent => ImageContent,
        InputRequests => InputRequests,
        InputRequiredResult => InputRequiredResult,
        InputResponses => InputResponses,
        InternalError => InternalError,
        InvalidParamsError => InvalidParamsError,
        ListPromptsRequest => ListPromptsRequest,
        ListPromptsResult => ListPromptsResult,
        ListPromptsResultResponse => ListPromptsResultResponse,
        ListResourceTemplatesRequest => ListResourceTemplatesRequest,
        ListResourceTemplatesResult => ListResourceTemplatesResult,
        ListResourceTemplatesResultResponse => ListResourceTemplatesResultResponse,
        ListResourcesRequest => ListResourcesRequest,
        ListResourcesResult => ListResourcesResult,
        ListResourcesResultResponse => ListResourcesResultResponse,
        ListRootsRequest => ListRootsRequest,
        ListRootsResult => ListRootsResult,
        ListToolsRequest => ListToolsRequest,
        ListToolsResult => ListToolsResult,
        ListToolsResultResponse => ListToolsResultResponse,
        LoggingMessageNotification => LoggingMessageNotification,
        LoggingMessageNotificationParams => LoggingMessageNotificationParams,
        MethodNotFoundError => MethodNotFoundError,
        MissingRequiredClientCapabilityError => MissingRequiredClientCapabilityError,
        ModelPreferences => ModelPreferences,
        NumberSchema => NumberSchema,
        PaginatedRequestParams => PaginatedRequestParams,
        ParseError => ParseError,
        ProgressNotification => ProgressNotification,
        ProgressNotificationParams => ProgressNotificationParams,
        PromptListChangedNotification => PromptListChangedNotification,
        ReadResourceRequest => ReadResourceRequest,
        ReadResourceResult => ReadResourceResult,
        ReadResourceResultResponse => ReadResourceResultResponse,
        Resource => Resource,
        ResourceLink => ResourceLink,
        ResourceListChangedNotification => ResourceListChangedNotification,
        ResourceUpdatedNotification => ResourceUpdatedNotification,
        ResourceUpdatedNotificationParams => ResourceUpdatedNotificationParams,
        Root => Root,
        SamplingMessage => SamplingMessage,
        ServerCapabilities => ServerCapabilities,
        StringSchema => StringSchema,
        SubscriptionsAcknowledgedNotification => SubscriptionsAcknowledgedNotification,
        SubscriptionsListenRequest => SubscriptionsListenRequest,
        SubscriptionsListenResult => SubscriptionsListenResult,
        SubscriptionsListenResultResponse => SubscriptionsListenResultResponse,
        TextContent => TextContent,
        TextResourceContents => TextResourceContents,
        TitledMultiSelectEnumSchema => TitledMultiSelectEnumSchema,
        TitledSingleSelectEnumSchema => TitledSingleSelectEnumSchema,
        Tool => Tool,
        ToolListChangedNotification => ToolListChangedNotification,
        ToolResultContent => ToolResultContent,
        ToolUseContent => ToolUseContent,
        UnsupportedProtocolVersionError => UnsupportedProtocolVersionError,
        UntitledMultiSelectEnumSchema => UntitledMultiSelectEnumSchema,
        UntitledSingleSelectEnumSchema => UntitledSingleSelectEnumSchema,
    };

    let root = support::spec_dir().join("2026-07-28/examples");
    let mut dirs: Vec<_> = std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().path()).collect();
    dirs.sort();
    let (mut checked, mut failures, mut unmapped) = (0, Vec::new(), Vec::new());
    for dir in dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let Some(check) = checks.get(name.as_str()) else {
            unmapped.push(name);
            continue;
        };
        let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        for file in files {
            checked += 1;
            if let Err(e) = check(&name, &file) {
                failures.push(format!("{}: {e}", file.display()));
            }
        }
    }
    assert!(unmapped.is_empty(), "example types with no Rust type: {unmapped:?}");
    assert!(failures.is_empty(), "{} of {checked} examples failed:\n{}", failures.len(), failures.join("\n"));
    assert_eq!(checked, 129, "every example file must be checked; none may be skipped");
}
