//! Resources: `resources/list`, `resources/templates/list`, `resources/read` and the
//! `notifications/resources/*` notifications.
//!
//! The contents types (`TextResourceContents`, `BlobResourceContents`, `ResourceContents`)
//! live in [`crate::content`], since embedded resources use them too. The legacy
//! `resources/subscribe` and `resources/unsubscribe` methods live in [`crate::legacy`].

use crate::common::{Annotations, Icon};
use crate::content::ResourceContents;
use crate::json::JsonObject;
use crate::meta::{NotificationMeta, RequestMeta, ResultMeta};
use crate::method::{JsonRpcNotification, JsonRpcRequest, JsonRpcResponse};
use crate::mrtr::{InputResponses, MrtrResult};
use crate::notifications::NotificationParams;
use crate::pagination::{Cursor, PaginatedRequestParams};
use crate::result::{CacheScope, ResultType};
use crate::wire_struct;

wire_struct! {
    /// A resource the server can read (`Resource`).
    #[derive(Default)]
    pub struct Resource {
        /// The URI of the resource.
        req uri: String = "uri",
        /// Programmatic name.
        req name: String = "name",
        /// Display name (2025-06-18 and later).
        opt title: String = "title",
        /// What the resource is.
        opt description: String = "description",
        /// MIME type, if known.
        opt mime_type: String = "mimeType",
        /// Size of the raw content in bytes, if known.
        opt size: u64 = "size",
        /// Hints for the client.
        opt annotations: Annotations = "annotations",
        /// Icons for user interfaces (2025-11-25 and later).
        opt icons: Vec<Icon> = "icons",
        /// Metadata (`MetaObject`, 2025-06-18 and later).
        opt meta: JsonObject = "_meta",
    }
}

impl Resource {
    /// A resource with a URI and a name.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Resource { uri: uri.into(), name: name.into(), ..Default::default() }
    }

    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the MIME type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Sets the display title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
}

wire_struct! {
    /// A family of resources described by an RFC 6570 URI template (`ResourceTemplate`).
    #[derive(Default)]
    pub struct ResourceTemplate {
        /// The URI template.
        req uri_template: String = "uriTemplate",
        /// Programmatic name.
        req name: String = "name",
        /// Display name (2025-06-18 and later).
        opt title: String = "title",
        /// What the resources are.
        opt description: String = "description",
        /// MIME type shared by all matching resources, if they share one.
        opt mime_type: String = "mimeType",
        /// Hints for the client.
        opt annotations: Annotations = "annotations",
        /// Icons for user interfaces (2025-11-25 and later).
        opt icons: Vec<Icon> = "icons",
        /// Metadata (`MetaObject`, 2025-06-18 and later).
        opt meta: JsonObject = "_meta",
    }
}

impl ResourceTemplate {
    /// A template with a URI template and a name.
    pub fn new(uri_template: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceTemplate { uri_template: uri_template.into(), name: name.into(), ..Default::default() }
    }

    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the MIME type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// Sets the display title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }
}

wire_struct! {
    /// The result of `resources/list` (`ListResourcesResult`).
    #[derive(Default)]
    pub struct ListResourcesResult {
        /// The resources of this page.
        req resources: Vec<Resource> = "resources",
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
    /// The result of `resources/templates/list` (`ListResourceTemplatesResult`).
    #[derive(Default)]
    pub struct ListResourceTemplatesResult {
        /// The templates of this page.
        req resource_templates: Vec<ResourceTemplate> = "resourceTemplates",
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
    /// Params naming one resource (`ResourceRequestParams`), the base of read, subscribe and
    /// unsubscribe params.
    #[derive(Default)]
    pub struct ResourceRequestParams {
        /// The URI of the resource.
        req uri: String = "uri",
        /// Request metadata (required on 2026-07-28).
        opt meta: RequestMeta = "_meta",
    }
}

wire_struct! {
    /// Params of `resources/read` (`ReadResourceRequestParams`).
    #[derive(Default)]
    pub struct ReadResourceRequestParams {
        /// The URI of the resource to read.
        req uri: String = "uri",
        /// MRTR: answers to the server's input requests (2026-07-28).
        opt input_responses: InputResponses = "inputResponses",
        /// MRTR: the server's `requestState`, echoed (2026-07-28).
        opt request_state: String = "requestState",
        /// Request metadata (required on 2026-07-28).
        opt meta: RequestMeta = "_meta",
    }
}

impl ReadResourceRequestParams {
    /// Params reading `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        ReadResourceRequestParams { uri: uri.into(), ..Default::default() }
    }
}

wire_struct! {
    /// The complete result of `resources/read` (`ReadResourceResult`).
    #[derive(Default)]
    pub struct ReadResourceResult {
        /// The contents: the resource itself and any sub-resources.
        req contents: Vec<ResourceContents> = "contents",
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

impl ReadResourceResult {
    /// A result with these contents.
    pub fn new(contents: Vec<ResourceContents>) -> Self {
        ReadResourceResult { contents, ..Default::default() }
    }
}

wire_struct! {
    /// Params of `notifications/resources/updated` (`ResourceUpdatedNotificationParams`).
    #[derive(Default)]
    pub struct ResourceUpdatedNotificationParams {
        /// The URI of the updated resource (possibly a sub-resource of the subscribed one).
        req uri: String = "uri",
        /// Notification metadata.
        opt meta: NotificationMeta = "_meta",
    }
}

impl ResourceUpdatedNotificationParams {
    /// Params announcing an update of `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        ResourceUpdatedNotificationParams { uri: uri.into(), ..Default::default() }
    }
}

crate::request_method!(
    /// `resources/list`: list the server's resources, a page at a time.
    ListResources = "resources/list", PaginatedRequestParams => ListResourcesResult
);
crate::request_method!(
    /// `resources/templates/list`: list the server's resource templates, a page at a time.
    ListResourceTemplates = "resources/templates/list", PaginatedRequestParams => ListResourceTemplatesResult
);
crate::request_method!(
    /// `resources/read`: read a resource. On 2026-07-28 the answer may be an
    /// `InputRequiredResult`.
    ReadResource = "resources/read", ReadResourceRequestParams => ReadResourceResult
);
crate::notification_method!(
    /// `notifications/resources/list_changed`: the resource list changed.
    ResourceListChanged = "notifications/resources/list_changed", NotificationParams
);
crate::notification_method!(
    /// `notifications/resources/updated`: a subscribed resource changed.
    ResourceUpdated = "notifications/resources/updated", ResourceUpdatedNotificationParams
);

/// A full `resources/list` request.
pub type ListResourcesRequest = JsonRpcRequest<ListResources>;
/// A full `resources/list` response.
pub type ListResourcesResultResponse = JsonRpcResponse<ListResourcesResult>;
/// A full `resources/templates/list` request.
pub type ListResourceTemplatesRequest = JsonRpcRequest<ListResourceTemplates>;
/// A full `resources/templates/list` response.
pub type ListResourceTemplatesResultResponse = JsonRpcResponse<ListResourceTemplatesResult>;
/// A full `resources/read` request.
pub type ReadResourceRequest = JsonRpcRequest<ReadResource>;
/// A full `resources/read` response: complete, or input required (2026-07-28).
pub type ReadResourceResultResponse = JsonRpcResponse<MrtrResult<ReadResourceResult>>;
/// A full `notifications/resources/list_changed` message.
pub type ResourceListChangedNotification = JsonRpcNotification<ResourceListChanged>;
/// A full `notifications/resources/updated` message.
pub type ResourceUpdatedNotification = JsonRpcNotification<ResourceUpdated>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::Role;
    use crate::content::{BlobResourceContents, TextResourceContents};
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
    fn resource_round_trips() {
        let r: Resource = round_trip(
            r#"{"uri":"file:///project/README.md","name":"README.md","title":"Project Documentation","mimeType":"text/markdown","size":1024,"annotations":{"audience":["user"],"priority":0.8,"lastModified":"2025-01-12T15:00:58Z"}}"#,
        );
        assert_eq!(r.size, Some(1024));
        assert_eq!(r.annotations.unwrap().audience, Some(vec![Role::User]));
        let err = serde_json::from_str::<Resource>(r#"{"uri":"file:///x"}"#).unwrap_err();
        assert!(err.to_string().contains("missing field `name`"), "{err}");
    }

    #[test]
    fn read_result_mixes_text_and_blob() {
        let r: ReadResourceResult = round_trip(
            r#"{"resultType":"complete","contents":[{"uri":"file:///a.rs","mimeType":"text/x-rust","text":"fn main() {}"},{"uri":"file:///b.png","blob":"iVBO"}],"ttlMs":60000,"cacheScope":"private"}"#,
        );
        assert!(matches!(r.contents[0], ResourceContents::Text(_)));
        assert!(matches!(r.contents[1], ResourceContents::Blob(_)));
        assert_eq!(r.cache_scope, Some(CacheScope::Private));
        let legacy: ReadResourceResult = round_trip(r#"{"contents":[]}"#);
        assert_eq!(legacy.ttl_ms, None);
        assert!(serde_json::from_str::<ReadResourceResult>(r#"{"contents":[{"uri":"x"}]}"#).is_err());
        assert_eq!(
            serde_json::to_value(ReadResourceResult::new(vec![
                TextResourceContents::new("file:///t", "t").into(),
                BlobResourceContents::new("file:///b", "AA==").into(),
            ]))
            .unwrap(),
            json!({"contents":[{"uri":"file:///t","text":"t"},{"uri":"file:///b","blob":"AA=="}]})
        );
    }

    #[test]
    fn read_response_may_be_input_required() {
        let resp: ReadResourceResultResponse = round_trip(
            r#"{"jsonrpc":"2.0","id":2,"result":{"resultType":"input_required","inputRequests":{}}}"#,
        );
        assert!(matches!(resp.result, MrtrResult::InputRequired(_)));
        let resp: ReadResourceResultResponse =
            round_trip(r#"{"jsonrpc":"2.0","id":2,"result":{"contents":[{"uri":"u","text":"t"}]}}"#);
        assert!(matches!(resp.result, MrtrResult::Complete(ref r) if r.contents.len() == 1));
    }

    #[test]
    fn read_request_params() {
        let req: ReadResourceRequest = round_trip(
            r#"{"jsonrpc":"2.0","id":"r","method":"resources/read","params":{"uri":"file:///x","requestState":"st","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
        );
        assert_eq!(req.params.uri, "file:///x");
        assert_eq!(req.params.request_state.as_deref(), Some("st"));
        let err = serde_json::from_str::<ReadResourceRequest>(
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/read"}"#,
        )
        .unwrap_err();
        assert!(err.to_string().contains("uri"), "{err}");
        let p: ResourceRequestParams = round_trip(r#"{"uri":"file:///y","_meta":{"progressToken":1}}"#);
        assert_eq!(p.uri, "file:///y");
    }

    #[test]
    fn templates_and_notifications() {
        let r: ListResourceTemplatesResult = round_trip(
            r#"{"resultType":"complete","resourceTemplates":[{"uriTemplate":"file:///{path}","name":"Project Files","title":"📁 Project Files","icons":[{"src":"https://example.com/f.png"}]}],"nextCursor":"n","ttlMs":3600000,"cacheScope":"public"}"#,
        );
        assert_eq!(r.resource_templates[0].uri_template, "file:///{path}");
        let l: ListResourcesResult = round_trip(r#"{"resources":[{"uri":"u","name":"n"}],"nextCursor":"c"}"#);
        assert_eq!(l.resources[0], Resource::new("u", "n"));
        let n: ResourceUpdatedNotification = round_trip(
            r#"{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///project/src/main.rs"}}"#,
        );
        assert_eq!(n.params, ResourceUpdatedNotificationParams::new("file:///project/src/main.rs"));
        let n: ResourceListChangedNotification = round_trip(
            r#"{"jsonrpc":"2.0","method":"notifications/resources/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"listen-1"}}}"#,
        );
        assert!(n.params.meta.unwrap().subscription_id.is_some());
        let _: ListResourcesRequest =
            round_trip(r#"{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"cursor":"c"}}"#);
        let _: ListResourceTemplatesRequest =
            round_trip(r#"{"jsonrpc":"2.0","id":1,"method":"resources/templates/list","params":{}}"#);
    }
}
