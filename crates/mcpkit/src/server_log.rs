//! The server's log messages (`notifications/message`) on stderr, at `--log-level` and above.
//!
//! mcp-client asks the server for that level (in `_meta` of every modern request; with
//! `logging/setLevel` after a legacy `initialize`), and every message is shown as one line,
//! `[level] logger: data`, made safe for the terminal. The lines go above a progress bar (see
//! [`crate::progress::print_line`]); stdout, the JSON channel, never carries them.

use std::future::Future;

use mcp_types::{LoggingLevel, LoggingMessageNotificationParams, ServerNotification};
use serde_json::Value;
use tokio::sync::broadcast::{self, error::RecvError, error::TryRecvError};

use crate::{progress, terminal};

/// `--log-level`: the least severe message shown, or none.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
    // Ask for no log messages and show none.
    Off,
}

impl LogLevel {
    /// The level to ask the server for; `None` for `off`.
    pub(crate) fn level(self) -> Option<LoggingLevel> {
        Some(match self {
            LogLevel::Debug => LoggingLevel::Debug,
            LogLevel::Info => LoggingLevel::Info,
            LogLevel::Notice => LoggingLevel::Notice,
            LogLevel::Warning => LoggingLevel::Warning,
            LogLevel::Error => LoggingLevel::Error,
            LogLevel::Critical => LoggingLevel::Critical,
            LogLevel::Alert => LoggingLevel::Alert,
            LogLevel::Emergency => LoggingLevel::Emergency,
            LogLevel::Off => return None,
        })
    }
}

/// `[level] logger: data` (`[level] data` without a logger): data that is a JSON string as its
/// text, anything else as compact JSON; on one line, without control characters.
pub(crate) fn log_line(p: &LoggingMessageNotificationParams) -> String {
    let data = match &p.data {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    let line = match &p.logger {
        Some(logger) => format!("[{}] {logger}: {data}", p.level.as_str()),
        None => format!("[{}] {data}", p.level.as_str()),
    };
    terminal::line(&line).into_owned()
}

/// Shows `n` when it is a log message at `min` or above.
pub(crate) fn show(n: &ServerNotification, min: LoggingLevel) {
    if let ServerNotification::LoggingMessage(p) = n
        && p.level >= min
    {
        progress::print_line(log_line(p));
    }
}

/// Runs `work` while showing the log messages that `notifications` receives (at `min` and
/// above), then those that came with its last answer. Without `logs`, just runs `work`.
pub(crate) async fn with_logs<T>(
    logs: Option<(broadcast::Receiver<ServerNotification>, LoggingLevel)>,
    work: impl Future<Output = T>,
) -> T {
    let Some((mut notifications, min)) = logs else { return work.await };
    tokio::pin!(work);
    let mut open = true;
    let result = loop {
        tokio::select! {
            // A message the server sent before its answer is shown before the answer is.
            biased;
            received = notifications.recv(), if open => match received {
                Ok(n) => show(&n, min),
                Err(RecvError::Lagged(lost)) => tracing::debug!("{lost} server notifications lost"),
                Err(RecvError::Closed) => open = false,
            },
            result = &mut work => break result,
        }
    };
    loop {
        match notifications.try_recv() {
            Ok(n) => show(&n, min),
            Err(TryRecvError::Lagged(_)) => continue,
            Err(_) => break,
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn message(value: Value) -> LoggingMessageNotificationParams {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_message_is_one_safe_line() {
        let text = message(json!({"level": "info", "logger": "db", "data": "two\nlines \u{1b}[2J"}));
        assert_eq!(log_line(&text), "[info] db: two\\u{a}lines \\u{1b}[2J");
        let object = message(json!({"level": "error", "data": {"code": 7, "why": "x"}}));
        assert_eq!(log_line(&object), r#"[error] {"code":7,"why":"x"}"#);
        assert_eq!(log_line(&message(json!({"level": "debug", "data": null}))), "[debug] null");
    }

    #[test]
    fn levels_map_to_the_protocol_and_off_to_none() {
        assert_eq!(LogLevel::Warning.level(), Some(LoggingLevel::Warning));
        assert_eq!(LogLevel::Emergency.level(), Some(LoggingLevel::Emergency));
        assert_eq!(LogLevel::Off.level(), None);
    }
}
