//! Small shapes shared by many messages: implementation info, icons, annotations, roles and
//! log levels.

use serde::{Deserialize, Serialize};

use crate::{open_enum, wire_struct};

wire_struct! {
    /// Name and version of an MCP implementation (`Implementation`), client or server.
    #[derive(Default)]
    pub struct Implementation {
        /// Programmatic name.
        req name: String = "name",
        /// Version string.
        req version: String = "version",
        /// Display name.
        opt title: String = "title",
        /// Human-readable description.
        opt description: String = "description",
        /// Icons for user interfaces.
        opt icons: Vec<Icon> = "icons",
        /// Home page.
        opt website_url: String = "websiteUrl",
    }
}

impl Implementation {
    /// An implementation with just a name and version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation { name: name.into(), version: version.into(), ..Default::default() }
    }
}

open_enum! {
    /// The background an icon is designed for.
    pub enum IconTheme {
        /// For light backgrounds.
        Light = "light",
        /// For dark backgrounds.
        Dark = "dark",
    }
}

wire_struct! {
    /// An icon for a tool, prompt, resource or implementation (`Icon`).
    pub struct Icon {
        /// `https:` or `data:` URI of the image.
        req src: String = "src",
        /// MIME type, when the server's is missing or generic.
        opt mime_type: String = "mimeType",
        /// Sizes such as `"48x48"` or `"any"`.
        opt sizes: Vec<String> = "sizes",
        /// The background this icon is designed for.
        opt theme: IconTheme = "theme",
    }
}

wire_struct! {
    /// A bare `{icons?}` object (`Icons`), the mixin of everything that can carry icons.
    #[derive(Default)]
    pub struct Icons {
        /// The icons.
        opt icons: Vec<Icon> = "icons",
    }
}

open_enum! {
    /// The sender or recipient of a message (`Role`).
    pub enum Role {
        /// The user.
        User = "user",
        /// The assistant (model).
        Assistant = "assistant",
    }
}

wire_struct! {
    /// Hints for how a client uses or displays an object (`Annotations`).
    #[derive(Default)]
    pub struct Annotations {
        /// Who the object is intended for.
        opt audience: Vec<Role> = "audience",
        /// Importance from 0 (least) to 1 (most).
        opt priority: f64 = "priority",
        /// ISO 8601 time of the last modification.
        opt last_modified: String = "lastModified",
    }
}

/// Syslog severity of a log message (`LoggingLevel`), ordered from least to most severe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoggingLevel {
    /// Detailed debugging information.
    Debug,
    /// General informational messages.
    Info,
    /// Normal but significant events.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// System is unusable.
    Emergency,
}

impl LoggingLevel {
    /// The wire string.
    pub fn as_str(self) -> &'static str {
        match self {
            LoggingLevel::Debug => "debug",
            LoggingLevel::Info => "info",
            LoggingLevel::Notice => "notice",
            LoggingLevel::Warning => "warning",
            LoggingLevel::Error => "error",
            LoggingLevel::Critical => "critical",
            LoggingLevel::Alert => "alert",
            LoggingLevel::Emergency => "emergency",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_order_by_severity() {
        assert!(LoggingLevel::Debug < LoggingLevel::Info);
        assert!(LoggingLevel::Warning < LoggingLevel::Emergency);
        let l: LoggingLevel = serde_json::from_str("\"warning\"").unwrap();
        assert_eq!(l, LoggingLevel::Warning);
        assert_eq!(serde_json::to_string(&LoggingLevel::Critical).unwrap(), "\"critical\"");
    }

    #[test]
    fn unknown_members_and_values_round_trip() {
        let text =
            r#"{"name":"x","version":"1","x-vendor":{"a":[1,2]},"icons":[{"src":"data:,","theme":"sepia"}]}"#;
        let imp: Implementation = serde_json::from_str(text).unwrap();
        assert_eq!(imp.icons.as_ref().unwrap()[0].theme, Some(IconTheme::Other("sepia".into())));
        let back: serde_json::Value = serde_json::to_value(&imp).unwrap();
        let orig: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(back, orig);
    }

    #[test]
    fn duplicate_members_are_rejected() {
        let err =
            serde_json::from_str::<Implementation>(r#"{"name":"a","name":"b","version":"1"}"#).unwrap_err();
        assert!(err.to_string().contains("duplicate field `name`"), "{err}");
        let err =
            serde_json::from_str::<Implementation>(r#"{"name":"a","version":"1","x":1,"x":2}"#).unwrap_err();
        assert!(err.to_string().contains("duplicate field `x`"), "{err}");
    }

    #[test]
    fn null_optional_member_reads_as_absent() {
        let imp: Implementation = serde_json::from_str(r#"{"name":"a","version":"1","title":null}"#).unwrap();
        assert_eq!(imp.title, None);
        let err = serde_json::from_str::<Implementation>(r#"{"version":"1"}"#).unwrap_err();
        assert!(err.to_string().contains("missing field `name`"), "{err}");
    }
}
