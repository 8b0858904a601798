//! Subscriptions (2026-07-28): `subscriptions/listen` opens a long-lived request on which the
//! server sends the notifications the client asked for, acknowledging them first with
//! `notifications/subscriptions/acknowledged`. Every notification on the stream names the
//! listen request in `_meta["io.modelcontextprotocol/subscriptionId"]`.

use crate::meta::{NotificationMeta, RequestMeta, ResultMeta};
use crate::method::{JsonRpcNotification, JsonRpcRequest, JsonRpcResponse};
use crate::result::ResultType;
use crate::wire_struct;

wire_struct! {
    /// Which notifications a client wants (`SubscriptionFilter`); in the acknowledgement, the
    /// ones the server agreed to send.
    #[derive(Default)]
    pub struct SubscriptionFilter {
        /// `notifications/tools/list_changed`.
        opt tools_list_changed: bool = "toolsListChanged",
        /// `notifications/prompts/list_changed`.
        opt prompts_list_changed: bool = "promptsListChanged",
        /// `notifications/resources/list_changed`.
        opt resources_list_changed: bool = "resourcesListChanged",
        /// `notifications/resources/updated` for these resource URIs.
        opt resource_subscriptions: Vec<String> = "resourceSubscriptions",
        /// `notifications/tasks` for these task ids (the tasks extension,
        /// [`crate::extensions::tasks`]).
        opt task_ids: Vec<String> = "taskIds",
    }
}

impl SubscriptionFilter {
    /// True when no notification is asked for.
    pub fn is_empty(&self) -> bool {
        self.tools_list_changed != Some(true)
            && self.prompts_list_changed != Some(true)
            && self.resources_list_changed != Some(true)
            && self.resource_subscriptions.as_ref().is_none_or(Vec::is_empty)
            && self.task_ids.as_ref().is_none_or(Vec::is_empty)
    }
}

wire_struct! {
    /// Params of `subscriptions/listen` (`SubscriptionsListenRequestParams`).
    #[derive(Default)]
    pub struct SubscriptionsListenRequestParams {
        /// The notifications wanted.
        req notifications: SubscriptionFilter = "notifications",
        /// Request metadata (required).
        opt meta: RequestMeta = "_meta",
    }
}

wire_struct! {
    /// The result of `subscriptions/listen`, sent when the server closes the stream
    /// (`SubscriptionsListenResult`). The schema requires `_meta` with the subscription id;
    /// it is kept optional so that a peer omitting it can still be read.
    #[derive(Default)]
    pub struct SubscriptionsListenResult {
        /// The kind of result.
        opt result_type: ResultType = "resultType",
        /// Result metadata, with `io.modelcontextprotocol/subscriptionId`.
        opt meta: ResultMeta = "_meta",
    }
}

wire_struct! {
    /// Params of `notifications/subscriptions/acknowledged`
    /// (`SubscriptionsAcknowledgedNotificationParams`).
    #[derive(Default)]
    pub struct SubscriptionsAcknowledgedNotificationParams {
        /// The notifications the server will send on this stream.
        req notifications: SubscriptionFilter = "notifications",
        /// Notification metadata, with `io.modelcontextprotocol/subscriptionId`.
        opt meta: NotificationMeta = "_meta",
    }
}

crate::request_method!(
    /// `subscriptions/listen`: open a notification stream (2026-07-28).
    SubscriptionsListen = "subscriptions/listen", SubscriptionsListenRequestParams => SubscriptionsListenResult
);
crate::notification_method!(
    /// `notifications/subscriptions/acknowledged`: the server confirms what it will send.
    SubscriptionsAcknowledged = "notifications/subscriptions/acknowledged", SubscriptionsAcknowledgedNotificationParams
);

/// A full `subscriptions/listen` request.
pub type SubscriptionsListenRequest = JsonRpcRequest<SubscriptionsListen>;
/// A full `subscriptions/listen` response.
pub type SubscriptionsListenResultResponse = JsonRpcResponse<SubscriptionsListenResult>;
/// A full `notifications/subscriptions/acknowledged` message.
pub type SubscriptionsAcknowledgedNotification = JsonRpcNotification<SubscriptionsAcknowledged>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::RequestId;
    use serde::Serialize;
    use serde::de::DeserializeOwned;
    use serde_json::Value;

    fn round_trip<T: Serialize + DeserializeOwned>(text: &str) -> T {
        let value: T = serde_json::from_str(text).unwrap();
        let back = serde_json::to_value(&value).unwrap();
        assert_eq!(back, serde_json::from_str::<Value>(text).unwrap(), "round trip of {text}");
        value
    }

    #[test]
    fn listen_request_round_trips() {
        let req: SubscriptionsListenRequest = round_trip(
            r#"{"jsonrpc":"2.0","id":"listen-1","method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}},"notifications":{"toolsListChanged":true,"resourceSubscriptions":["file:///project/config.json"]}}}"#,
        );
        let filter = &req.params.notifications;
        assert_eq!(filter.tools_list_changed, Some(true));
        assert_eq!(filter.prompts_list_changed, None);
        assert_eq!(
            filter.resource_subscriptions.as_deref(),
            Some(&["file:///project/config.json".to_string()][..])
        );
        assert!(!filter.is_empty());
        let err = serde_json::from_str::<SubscriptionsListenRequestParams>(r#"{"_meta":{}}"#).unwrap_err();
        assert!(err.to_string().contains("missing field `notifications`"), "{err}");
    }

    #[test]
    fn acknowledgement_and_result_carry_subscription_id() {
        let n: SubscriptionsAcknowledgedNotification = round_trip(
            r#"{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"listen-1"},"notifications":{"toolsListChanged":true,"resourceSubscriptions":["file:///project/config.json"]}}}"#,
        );
        assert_eq!(n.params.meta.unwrap().subscription_id, Some(RequestId::String("listen-1".into())));
        let r: SubscriptionsListenResult = round_trip(
            r#"{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":"listen-1"}}"#,
        );
        assert_eq!(r.meta.unwrap().subscription_id, Some(RequestId::String("listen-1".into())));
        let resp: SubscriptionsListenResultResponse = round_trip(
            r#"{"jsonrpc":"2.0","id":"listen-1","result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":"listen-1"}}}"#,
        );
        assert_eq!(resp.result.result_type, Some(ResultType::Complete));
    }

    #[test]
    fn empty_filter() {
        assert!(SubscriptionFilter::default().is_empty());
        let f: SubscriptionFilter =
            serde_json::from_str(r#"{"toolsListChanged":false,"resourceSubscriptions":[]}"#).unwrap();
        assert!(f.is_empty());
        let f: SubscriptionFilter = round_trip(r#"{"promptsListChanged":true,"x-future":1}"#);
        assert!(!f.is_empty());
    }
}
