//! Log messages from server to client: `notifications/message`.
//!
//! The legacy `logging/setLevel` request lives in [`crate::legacy`]; on 2026-07-28 the client
//! names its minimum level per request in `_meta` instead.

use crate::common::LoggingLevel;
use crate::json::JsonValue;
use crate::meta::NotificationMeta;
use crate::method::JsonRpcNotification;
use crate::wire_struct;

wire_struct! {
    /// Params of `notifications/message` (`LoggingMessageNotificationParams`).
    pub struct LoggingMessageNotificationParams {
        /// Severity.
        req level: LoggingLevel = "level",
        /// Name of the logger that emitted the message.
        opt logger: String = "logger",
        /// The data to log: any JSON (a string, an object, ...; `null` included).
        req data: JsonValue = "data",
        /// Notification metadata.
        opt meta: NotificationMeta = "_meta",
    }
}

impl LoggingMessageNotificationParams {
    /// A log message at `level` carrying `data`.
    pub fn new(level: LoggingLevel, data: impl Into<JsonValue>) -> Self {
        LoggingMessageNotificationParams {
            level,
            logger: None,
            data: data.into(),
            meta: None,
            extra: Default::default(),
        }
    }

    /// Sets the logger name.
    pub fn with_logger(mut self, logger: impl Into<String>) -> Self {
        self.logger = Some(logger.into());
        self
    }
}

crate::notification_method!(
    /// `notifications/message`: a log message.
    LoggingMessage = "notifications/message", LoggingMessageNotificationParams
);

/// A full `notifications/message` message.
pub type LoggingMessageNotification = JsonRpcNotification<LoggingMessage>;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn log_message_round_trips() {
        let text = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","logger":"database","data":{"error":"Connection failed","details":{"host":"localhost","port":5432}}}}"#;
        let n: LoggingMessageNotification = serde_json::from_str(text).unwrap();
        assert_eq!(n.params.level, LoggingLevel::Error);
        assert_eq!(n.params.logger.as_deref(), Some("database"));
        assert_eq!(n.params.data["details"]["port"], json!(5432));
        assert_eq!(serde_json::to_value(&n).unwrap(), serde_json::from_str::<Value>(text).unwrap());
    }

    #[test]
    fn data_is_required_but_may_be_null() {
        let p: LoggingMessageNotificationParams =
            serde_json::from_str(r#"{"level":"info","data":null}"#).unwrap();
        assert_eq!(p.data, Value::Null);
        assert_eq!(serde_json::to_value(&p).unwrap(), json!({"level":"info","data":null}));
        let err =
            serde_json::from_str::<LoggingMessageNotificationParams>(r#"{"level":"info"}"#).unwrap_err();
        assert!(err.to_string().contains("missing field `data`"), "{err}");
        let err = serde_json::from_str::<LoggingMessageNotificationParams>(r#"{"data":"x"}"#).unwrap_err();
        assert!(err.to_string().contains("missing field `level`"), "{err}");
    }

    #[test]
    fn constructor() {
        let p = LoggingMessageNotificationParams::new(LoggingLevel::Warning, "disk almost full")
            .with_logger("fs");
        assert_eq!(
            serde_json::to_value(&p).unwrap(),
            json!({"level":"warning","logger":"fs","data":"disk almost full"})
        );
    }
}
