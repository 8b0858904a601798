//! Generic params shapes (`RequestParams`, `NotificationParams`) and the notifications every
//! peer may send: `notifications/cancelled` and `notifications/progress`.

use crate::id::{ProgressToken, RequestId};
use crate::meta::{NotificationMeta, RequestMeta};
use crate::method::JsonRpcNotification;
use crate::wire_struct;

wire_struct! {
    /// Params of a request that has none of its own (`RequestParams`): `server/discover`,
    /// `ping`, ...
    #[derive(Default)]
    pub struct RequestParams {
        /// Request metadata (required on 2026-07-28).
        opt meta: RequestMeta = "_meta",
    }
}

wire_struct! {
    /// Params of a notification that has none of its own (`NotificationParams`): the
    /// `list_changed` notifications.
    #[derive(Default)]
    pub struct NotificationParams {
        /// Notification metadata.
        opt meta: NotificationMeta = "_meta",
    }
}

wire_struct! {
    /// Params of `notifications/cancelled` (`CancelledNotificationParams`).
    #[derive(Default)]
    pub struct CancelledNotificationParams {
        /// The request to cancel. Required in every revision except 2025-11-25, where a task
        /// is cancelled with `tasks/cancel` instead and this may be absent.
        opt request_id: RequestId = "requestId",
        /// Why, for logs or display.
        opt reason: String = "reason",
        /// Notification metadata.
        opt meta: NotificationMeta = "_meta",
    }
}

impl CancelledNotificationParams {
    /// Cancels `request_id`, optionally saying why.
    pub fn new(request_id: impl Into<RequestId>, reason: Option<String>) -> Self {
        CancelledNotificationParams { request_id: Some(request_id.into()), reason, ..Default::default() }
    }
}

wire_struct! {
    /// Params of `notifications/progress` (`ProgressNotificationParams`).
    pub struct ProgressNotificationParams {
        /// The token from the request's `_meta.progressToken`.
        req progress_token: ProgressToken = "progressToken",
        /// Progress so far; increases with each notification, may be fractional.
        req progress: f64 = "progress",
        /// Total amount of work, if known.
        opt total: f64 = "total",
        /// Human-readable progress message (2025-03-26 and later).
        opt message: String = "message",
        /// Notification metadata.
        opt meta: NotificationMeta = "_meta",
    }
}

impl ProgressNotificationParams {
    /// Progress for `token`, with an optional total.
    pub fn new(token: impl Into<ProgressToken>, progress: f64, total: Option<f64>) -> Self {
        ProgressNotificationParams {
            progress_token: token.into(),
            progress,
            total,
            message: None,
            meta: None,
            extra: Default::default(),
        }
    }
}

crate::notification_method!(
    /// `notifications/cancelled`: the sender no longer wants the result of a request.
    Cancelled = "notifications/cancelled", CancelledNotificationParams
);
crate::notification_method!(
    /// `notifications/progress`: progress of a long-running request.
    Progress = "notifications/progress", ProgressNotificationParams
);

/// A full `notifications/cancelled` message.
pub type CancelledNotification = JsonRpcNotification<Cancelled>;
/// A full `notifications/progress` message.
pub type ProgressNotification = JsonRpcNotification<Progress>;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cancelled_notification_round_trips() {
        let text = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"123","reason":"User requested cancellation"}}"#;
        let n: CancelledNotification = serde_json::from_str(text).unwrap();
        assert_eq!(n.params.request_id, Some(RequestId::String("123".into())));
        assert_eq!(n.params.reason.as_deref(), Some("User requested cancellation"));
        assert_eq!(
            serde_json::to_value(&n).unwrap(),
            serde_json::from_str::<serde_json::Value>(text).unwrap()
        );
        // 2025-11-25 allows an absent requestId.
        let p: CancelledNotificationParams = serde_json::from_str(r#"{"reason":"x"}"#).unwrap();
        assert_eq!(p.request_id, None);
        assert_eq!(
            serde_json::to_value(CancelledNotificationParams::new(7, None)).unwrap(),
            json!({"requestId": 7})
        );
    }

    #[test]
    fn progress_params() {
        let p: ProgressNotificationParams = serde_json::from_str(
            r#"{"progressToken":"oivaizmir","progress":50,"total":100,"message":"Reticulating splines..."}"#,
        )
        .unwrap();
        assert_eq!(p.progress, 50.0);
        assert_eq!(p.total, Some(100.0));
        assert_eq!(p.progress_token, RequestId::String("oivaizmir".into()));
        let p: ProgressNotificationParams =
            serde_json::from_str(r#"{"progressToken":1,"progress":0.5}"#).unwrap();
        assert_eq!(p.progress_token, RequestId::Number(1));
        let err = serde_json::from_str::<ProgressNotificationParams>(r#"{"progress":1}"#).unwrap_err();
        assert!(err.to_string().contains("missing field `progressToken`"), "{err}");
        assert_eq!(
            serde_json::to_value(ProgressNotificationParams::new("t", 1.5, None)).unwrap(),
            json!({"progressToken":"t","progress":1.5})
        );
    }

    #[test]
    fn generic_params_keep_meta() {
        let p: NotificationParams =
            serde_json::from_str(r#"{"_meta":{"io.modelcontextprotocol/subscriptionId":"listen-1","x":1}}"#)
                .unwrap();
        let meta = p.meta.unwrap();
        assert_eq!(meta.subscription_id, Some(RequestId::String("listen-1".into())));
        assert_eq!(meta.extra.get("x"), Some(&json!(1)));
        let r: RequestParams = serde_json::from_str(r#"{"_meta":{"progressToken":3}}"#).unwrap();
        assert_eq!(r.meta.unwrap().progress_token, Some(RequestId::Number(3)));
    }
}
