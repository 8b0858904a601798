//! Roots (`roots/list`): the directories and files the client lets the server work on.
//!
//! Legacy revisions send `roots/list` as a server→client JSON-RPC request
//! ([`LegacyListRootsRequest`]) and the client announces changes with
//! `notifications/roots/list_changed`; 2026-07-28 embeds the request in an
//! `InputRequiredResult` ([`ListRootsRequest`]) and has no change notification.

use crate::json::JsonObject;
use crate::meta::ResultMeta;
use crate::method::{InlineRequest, JsonRpcNotification, JsonRpcRequest};
use crate::notifications::NotificationParams;
use crate::wire_struct;

wire_struct! {
    /// A directory or file the server may operate on (`Root`).
    pub struct Root {
        /// The root's URI (`file://` for now).
        req uri: String = "uri",
        /// A human-readable name.
        opt name: String = "name",
        /// Metadata (2025-06-18 and later).
        opt meta: JsonObject = "_meta",
    }
}

impl Root {
    /// A root at this URI, without a name.
    pub fn new(uri: impl Into<String>) -> Self {
        Root { uri: uri.into(), name: None, meta: None, extra: JsonObject::new() }
    }

    /// Sets the display name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

wire_struct! {
    /// Params of `roots/list`: only `_meta` (legacy `RequestParams`; the 2026-07-28 inline
    /// request's optional `params`).
    #[derive(Default)]
    pub struct ListRootsParams {
        /// Metadata (legacy: may hold `progressToken`).
        opt meta: JsonObject = "_meta",
    }
}

wire_struct! {
    /// The client's answer to `roots/list` (`ListRootsResult`).
    #[derive(Default)]
    pub struct ListRootsResult {
        /// The roots.
        req roots: Vec<Root> = "roots",
        /// Result metadata (legacy revisions).
        opt meta: ResultMeta = "_meta",
    }
}

impl ListRootsResult {
    /// A result listing these roots.
    pub fn new(roots: Vec<Root>) -> Self {
        ListRootsResult { roots, ..Default::default() }
    }
}

crate::request_method!(
    /// `roots/list`: ask the client for its roots.
    ListRoots = "roots/list", ListRootsParams => ListRootsResult
);

/// `roots/list` embedded in an `InputRequiredResult` (`ListRootsRequest`, 2026-07-28).
pub type ListRootsRequest = InlineRequest<ListRoots>;

/// A server→client `roots/list` request (`ListRootsRequest` of legacy revisions).
pub type LegacyListRootsRequest = JsonRpcRequest<ListRoots>;

crate::notification_method!(
    /// `notifications/roots/list_changed`: the client's roots changed (legacy only).
    RootsListChanged = "notifications/roots/list_changed", NotificationParams
);

/// A complete `notifications/roots/list_changed` notification
/// (`RootsListChangedNotification`).
pub type RootsListChangedNotification = JsonRpcNotification<RootsListChanged>;

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
    fn example_results_round_trip() {
        let result: ListRootsResult = round_trip(json!({
            "roots": [
                {"uri": "file:///home/user/repos/frontend", "name": "Frontend Repository"},
                {"uri": "file:///home/user/repos/backend", "name": "Backend Repository"}
            ]
        }));
        assert_eq!(result.roots[1].name.as_deref(), Some("Backend Repository"));
        let root: Root = round_trip(json!({"uri": "file:///p", "_meta": {"k": [1]}}));
        assert_eq!(root.meta.unwrap()["k"], json!([1]));
        assert!(serde_json::from_value::<Root>(json!({"name": "x"})).is_err());
        assert!(serde_json::from_value::<ListRootsResult>(json!({})).is_err());
        assert_eq!(
            serde_json::to_value(ListRootsResult::new(vec![Root::new("file:///a").with_name("A")])).unwrap(),
            json!({"roots": [{"uri": "file:///a", "name": "A"}]})
        );
    }

    #[test]
    fn inline_request_with_and_without_params() {
        assert_eq!(ListRoots::METHOD, "roots/list");
        // The 2026 example carries a stray `id`: kept in `extra`.
        let req: ListRootsRequest = round_trip(json!({"id": "list-roots-example", "method": "roots/list"}));
        assert_eq!(req.params, None);
        assert_eq!(req.extra["id"], json!("list-roots-example"));
        let req: ListRootsRequest =
            round_trip(json!({"method": "roots/list", "params": {"_meta": {"a": 1}}}));
        assert_eq!(req.params.unwrap().meta.unwrap()["a"], json!(1));
        assert!(serde_json::from_value::<ListRootsRequest>(json!({"method": "roots/lists"})).is_err());
    }

    #[test]
    fn legacy_request_and_notification() {
        let req: LegacyListRootsRequest =
            serde_json::from_value(json!({"jsonrpc": "2.0", "id": 1, "method": "roots/list"})).unwrap();
        assert_eq!(req.params, ListRootsParams::default());
        let req: LegacyListRootsRequest = round_trip(json!({
            "jsonrpc": "2.0", "id": 2, "method": "roots/list", "params": {"_meta": {"progressToken": 5}}
        }));
        assert_eq!(req.params.meta.unwrap()["progressToken"], json!(5));
        assert_eq!(RootsListChanged::METHOD, "notifications/roots/list_changed");
        let note: RootsListChangedNotification =
            round_trip(json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed", "params": {}}));
        assert_eq!(note.params, NotificationParams::default());
    }
}
