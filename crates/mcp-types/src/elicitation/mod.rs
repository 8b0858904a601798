//! Elicitation (`elicitation/create`): the server asks the user, through the client, for
//! structured input (form mode, 2025-06-18 on) or to visit a URL (URL mode, 2025-11-25 on).
//!
//! 2025-06-18 and 2025-11-25 send it as a server→client JSON-RPC request
//! ([`LegacyElicitRequest`]); 2026-07-28 embeds it in an `InputRequiredResult`
//! ([`ElicitRequest`], no `id`/`jsonrpc`).
//!
//! The primitive schemas of a form share `"type"` values (`"string"` is a plain string, a
//! single-select enum, a titled single-select enum or a legacy `enumNames` enum), so
//! [`PrimitiveSchemaDefinition`] is dispatched by shape: `type` plus the presence of
//! `oneOf` / `enumNames` / `enum` / `items.anyOf` / `items.enum`.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{ErrorObject, code};
use crate::json::{JsonObject, JsonValue};
use crate::meta::{NotificationMeta, RequestMeta, ResultMeta};
use crate::method::{InlineRequest, JsonRpcNotification, JsonRpcRequest};
use crate::strict;
use crate::tasks::TaskMetadata;
use crate::{open_enum, wire_struct};

open_enum! {
    /// The kind of elicitation (`mode`). Absent means form mode.
    #[non_exhaustive]
    pub enum ElicitMode {
        /// In-band structured input through a form.
        Form = "form",
        /// Out-of-band interaction at a URL (2025-11-25 and later).
        Url = "url",
    }
}

wire_struct! {
    /// The restricted JSON Schema of a form (`requestedSchema`): an object whose top-level
    /// properties are primitive, without nesting.
    #[derive(Default)]
    pub struct ElicitationSchema [tag "type" = "object"] {
        /// The fields of the form, by name.
        req properties: BTreeMap<String, PrimitiveSchemaDefinition> = "properties",
        /// Names of required fields.
        opt required: Vec<String> = "required",
        /// The JSON Schema dialect URI (`$schema`, 2025-11-25 and later).
        opt schema: String = "$schema",
    }
}

impl ElicitationSchema {
    /// An empty object schema.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a field, marking it required when `required` is true.
    pub fn with_property(
        mut self,
        name: impl Into<String>,
        schema: impl Into<PrimitiveSchemaDefinition>,
        required: bool,
    ) -> Self {
        let name = name.into();
        if required {
            self.required.get_or_insert_with(Vec::new).push(name.clone());
        }
        self.properties.insert(name, schema.into());
        self
    }
}

wire_struct! {
    /// Params of a form-mode elicitation (`ElicitRequestFormParams`; the whole params object
    /// in 2025-06-18).
    pub struct ElicitRequestFormParams {
        /// `"form"` or absent (both mean form mode); kept as sent.
        opt mode: ElicitMode = "mode",
        /// What is being asked, shown to the user.
        req message: String = "message",
        /// The form's schema.
        req requested_schema: ElicitationSchema = "requestedSchema",
        /// Request metadata (legacy: `progressToken`).
        opt meta: RequestMeta = "_meta",
        /// Task augmentation (2025-11-25 only).
        opt task: TaskMetadata = "task",
    }
}

impl ElicitRequestFormParams {
    /// Form params with this message and schema (`mode` omitted, which means form).
    pub fn new(message: impl Into<String>, requested_schema: ElicitationSchema) -> Self {
        ElicitRequestFormParams {
            mode: None,
            message: message.into(),
            requested_schema,
            meta: None,
            task: None,
            extra: JsonObject::new(),
        }
    }
}

wire_struct! {
    /// Params of a URL-mode elicitation (`ElicitRequestURLParams`, 2025-11-25 and later).
    pub struct ElicitRequestURLParams [tag "mode" = "url"] {
        /// Why the interaction is needed, shown to the user.
        req message: String = "message",
        /// The URL the user should open.
        req url: String = "url",
        /// Opaque identifier of the elicitation (required in 2025-11-25, absent in 2026-07-28).
        opt elicitation_id: String = "elicitationId",
        /// Request metadata (legacy: `progressToken`).
        opt meta: RequestMeta = "_meta",
        /// Task augmentation (2025-11-25 only).
        opt task: TaskMetadata = "task",
    }
}

impl ElicitRequestURLParams {
    /// URL params with this message and URL.
    pub fn new(message: impl Into<String>, url: impl Into<String>) -> Self {
        ElicitRequestURLParams {
            message: message.into(),
            url: url.into(),
            elicitation_id: None,
            meta: None,
            task: None,
            extra: JsonObject::new(),
        }
    }
}

/// Params of `elicitation/create` (`ElicitRequestParams`), dispatched by `mode`: absent or
/// `"form"` → [`ElicitRequestParams::Form`], `"url"` → [`ElicitRequestParams::Url`], any other
/// string → [`ElicitRequestParams::Other`] (a mode of a newer revision, kept verbatim).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ElicitRequestParams {
    /// Form mode.
    Form(ElicitRequestFormParams),
    /// URL mode.
    Url(ElicitRequestURLParams),
    /// A mode this revision does not define.
    Other(JsonObject),
}

impl ElicitRequestParams {
    /// The mode string (`"form"` when absent).
    pub fn mode(&self) -> &str {
        match self {
            ElicitRequestParams::Form(_) => "form",
            ElicitRequestParams::Url(_) => "url",
            ElicitRequestParams::Other(o) => o.get("mode").and_then(JsonValue::as_str).unwrap_or(""),
        }
    }

    /// The message shown to the user, when there is one.
    pub fn message(&self) -> Option<&str> {
        match self {
            ElicitRequestParams::Form(p) => Some(&p.message),
            ElicitRequestParams::Url(p) => Some(&p.message),
            ElicitRequestParams::Other(o) => o.get("message").and_then(JsonValue::as_str),
        }
    }
}

impl From<ElicitRequestFormParams> for ElicitRequestParams {
    fn from(p: ElicitRequestFormParams) -> Self {
        ElicitRequestParams::Form(p)
    }
}

impl From<ElicitRequestURLParams> for ElicitRequestParams {
    fn from(p: ElicitRequestURLParams) -> Self {
        ElicitRequestParams::Url(p)
    }
}

impl Serialize for ElicitRequestParams {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ElicitRequestParams::Form(p) => p.serialize(serializer),
            ElicitRequestParams::Url(p) => p.serialize(serializer),
            ElicitRequestParams::Other(o) => o.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for ElicitRequestParams {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let object = strict::object(deserializer)?;
        match object.get("mode") {
            None | Some(JsonValue::Null) => Ok(ElicitRequestParams::Form(strict::from_object(object)?)),
            Some(JsonValue::String(mode)) => match mode.as_str() {
                "form" => Ok(ElicitRequestParams::Form(strict::from_object(object)?)),
                "url" => Ok(ElicitRequestParams::Url(strict::from_object(object)?)),
                _ => Ok(ElicitRequestParams::Other(object)),
            },
            Some(_) => Err(de::Error::custom("elicitation `mode` must be a string")),
        }
    }
}

pub mod approval;
mod schema;

pub use schema::*;

// ---------------------------------------------------------------------------------------------
// Result

open_enum! {
    /// What the user did (`ElicitResult.action`).
    pub enum ElicitAction {
        /// Submitted the form / agreed to the interaction.
        Accept = "accept",
        /// Explicitly declined.
        Decline = "decline",
        /// Dismissed without choosing.
        Cancel = "cancel",
    }
}

/// One submitted form value: a string, integer, number, boolean or array of strings.
///
/// Integers that fit `i64` decode as [`ElicitValue::Integer`]; other numbers (`30.5`, `30.0`)
/// as [`ElicitValue::Number`], so that each re-encodes as received.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitValue {
    /// Text (also dates, emails, URIs and single-select choices).
    String(String),
    /// A whole number.
    Integer(i64),
    /// Any other number.
    Number(f64),
    /// A boolean.
    Bool(bool),
    /// Multi-select choices.
    StringArray(Vec<String>),
}

impl ElicitValue {
    /// The text, for [`ElicitValue::String`].
    pub fn as_str(&self) -> Option<&str> {
        match self {
            ElicitValue::String(s) => Some(s),
            _ => None,
        }
    }

    /// The integer, for [`ElicitValue::Integer`].
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            ElicitValue::Integer(i) => Some(*i),
            _ => None,
        }
    }

    /// The value of either numeric variant as `f64`.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            ElicitValue::Integer(i) => Some(*i as f64),
            ElicitValue::Number(n) => Some(*n),
            _ => None,
        }
    }

    /// The boolean, for [`ElicitValue::Bool`].
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            ElicitValue::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The choices, for [`ElicitValue::StringArray`].
    pub fn as_strings(&self) -> Option<&[String]> {
        match self {
            ElicitValue::StringArray(v) => Some(v),
            _ => None,
        }
    }
}

impl From<String> for ElicitValue {
    fn from(v: String) -> Self {
        ElicitValue::String(v)
    }
}

impl From<&str> for ElicitValue {
    fn from(v: &str) -> Self {
        ElicitValue::String(v.to_owned())
    }
}

impl From<i64> for ElicitValue {
    fn from(v: i64) -> Self {
        ElicitValue::Integer(v)
    }
}

impl From<f64> for ElicitValue {
    fn from(v: f64) -> Self {
        ElicitValue::Number(v)
    }
}

impl From<bool> for ElicitValue {
    fn from(v: bool) -> Self {
        ElicitValue::Bool(v)
    }
}

impl From<Vec<String>> for ElicitValue {
    fn from(v: Vec<String>) -> Self {
        ElicitValue::StringArray(v)
    }
}

impl Serialize for ElicitValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ElicitValue::String(s) => serializer.serialize_str(s),
            ElicitValue::Integer(i) => serializer.serialize_i64(*i),
            ElicitValue::Number(n) => serializer.serialize_f64(*n),
            ElicitValue::Bool(b) => serializer.serialize_bool(*b),
            ElicitValue::StringArray(v) => v.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for ElicitValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ElicitValue;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string, number, boolean or array of strings")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ElicitValue, E> {
                Ok(ElicitValue::String(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<ElicitValue, E> {
                Ok(ElicitValue::String(v))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<ElicitValue, E> {
                Ok(ElicitValue::Bool(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<ElicitValue, E> {
                Ok(ElicitValue::Integer(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<ElicitValue, E> {
                Ok(match i64::try_from(v) {
                    Ok(i) => ElicitValue::Integer(i),
                    Err(_) => ElicitValue::Number(v as f64),
                })
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<ElicitValue, E> {
                Ok(ElicitValue::Number(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ElicitValue, A::Error> {
                let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
                while let Some(item) = seq.next_element::<String>()? {
                    items.push(item);
                }
                Ok(ElicitValue::StringArray(items))
            }
        }
        deserializer.deserialize_any(V)
    }
}

wire_struct! {
    /// The client's answer to `elicitation/create` (`ElicitResult`).
    pub struct ElicitResult {
        /// What the user did.
        req action: ElicitAction = "action",
        /// The submitted values, for an accepted form.
        opt content: BTreeMap<String, ElicitValue> = "content",
        /// Result metadata (legacy revisions).
        opt meta: ResultMeta = "_meta",
    }
}

impl ElicitResult {
    /// An answer with this action and no content.
    pub fn new(action: ElicitAction) -> Self {
        ElicitResult { action, content: None, meta: None, extra: JsonObject::new() }
    }

    /// An accepted form with these values.
    pub fn accept(content: BTreeMap<String, ElicitValue>) -> Self {
        ElicitResult { content: Some(content), ..Self::new(ElicitAction::Accept) }
    }
}

// ---------------------------------------------------------------------------------------------
// Methods, notifications, errors

crate::request_method!(
    /// `elicitation/create`: ask the user for input.
    Elicit = "elicitation/create", ElicitRequestParams => ElicitResult
);

/// An elicitation embedded in an `InputRequiredResult` (`ElicitRequest`, 2026-07-28).
pub type ElicitRequest = InlineRequest<Elicit>;

/// A server→client elicitation request (`ElicitRequest` of 2025-06-18 and 2025-11-25).
pub type LegacyElicitRequest = JsonRpcRequest<Elicit>;

wire_struct! {
    /// Params of `notifications/elicitation/complete`.
    pub struct ElicitationCompleteNotificationParams {
        /// The URL-mode elicitation that completed.
        req elicitation_id: String = "elicitationId",
        /// Notification metadata.
        opt meta: NotificationMeta = "_meta",
    }
}

crate::notification_method!(
    /// `notifications/elicitation/complete`: an out-of-band (URL) elicitation finished
    /// (2025-11-25 only).
    ElicitationComplete = "notifications/elicitation/complete", ElicitationCompleteNotificationParams
);

/// A complete `notifications/elicitation/complete` notification
/// (`ElicitationCompleteNotification`).
pub type ElicitationCompleteNotification = JsonRpcNotification<ElicitationComplete>;

wire_struct! {
    /// `data` of a `URLElicitationRequiredError` (`-32042`, 2025-11-25 only).
    pub struct UrlElicitationRequiredData {
        /// The URL elicitations the client must complete before retrying.
        req elicitations: Vec<ElicitRequestURLParams> = "elicitations",
    }
}

impl UrlElicitationRequiredData {
    /// Data listing these elicitations.
    pub fn new(elicitations: Vec<ElicitRequestURLParams>) -> Self {
        UrlElicitationRequiredData { elicitations, extra: JsonObject::new() }
    }

    /// The `-32042` error carrying this data.
    pub fn into_error(self, message: impl Into<String>) -> ErrorObject {
        ErrorObject::new(code::URL_ELICITATION_REQUIRED, message).with_data(self)
    }
}

#[cfg(test)]
mod tests;
