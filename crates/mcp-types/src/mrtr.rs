//! Multi round-trip requests (MRTR, 2026-07-28): a server that needs input from the client
//! (elicitation, sampling, roots) answers with an [`InputRequiredResult`]; the client fulfils
//! each [`InputRequest`] and retries the same request with `inputResponses` and the echoed
//! `requestState`.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::elicitation::{Elicit, ElicitResult};
use crate::json::{JsonObject, JsonValue};
use crate::meta::ResultMeta;
use crate::method::{InlineRequest, RequestMethod};
use crate::roots::{ListRoots, ListRootsResult};
use crate::sampling::{CreateMessage, CreateMessageResult};
use crate::strict;
use crate::wire_struct;

/// A request the server needs the client to fulfil (`InputRequest`), keyed by the server's
/// name for it in [`InputRequests`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum InputRequest {
    /// `elicitation/create`: ask the user.
    Elicit(InlineRequest<Elicit>),
    /// `sampling/createMessage`: ask the client's model.
    CreateMessage(InlineRequest<CreateMessage>),
    /// `roots/list`: ask for the client's roots.
    ListRoots(InlineRequest<ListRoots>),
    /// A method this revision does not define (an extension's), kept verbatim.
    Other(JsonObject),
}

impl InputRequest {
    /// The method name.
    pub fn method(&self) -> &str {
        match self {
            InputRequest::Elicit(_) => Elicit::METHOD,
            InputRequest::CreateMessage(_) => CreateMessage::METHOD,
            InputRequest::ListRoots(_) => ListRoots::METHOD,
            InputRequest::Other(o) => o.get("method").and_then(JsonValue::as_str).unwrap_or(""),
        }
    }
}

impl Serialize for InputRequest {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            InputRequest::Elicit(r) => r.serialize(serializer),
            InputRequest::CreateMessage(r) => r.serialize(serializer),
            InputRequest::ListRoots(r) => r.serialize(serializer),
            InputRequest::Other(o) => o.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for InputRequest {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let object = strict::object(deserializer)?;
        let method = strict::tag(&object, "method")?;
        Ok(match method.as_str() {
            Elicit::METHOD => InputRequest::Elicit(strict::from_object(object)?),
            CreateMessage::METHOD => InputRequest::CreateMessage(strict::from_object(object)?),
            ListRoots::METHOD => InputRequest::ListRoots(strict::from_object(object)?),
            _ => InputRequest::Other(object),
        })
    }
}

/// The client's answer to one [`InputRequest`] (`InputResponse`).
///
/// The wire does not name the method an answer belongs to (its key does), so decoding goes by
/// shape: `action` → elicitation, `roots` → roots, `model`/`role`/`content` → sampling; any
/// other value is kept as [`InputResponse::Other`] for the server to reject or re-ask.
// Variants are unboxed on purpose: an answer is decoded once and consumed at once, and boxing
// would add an allocation per answer to save stack space that is never held for long.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum InputResponse {
    /// The answer to `elicitation/create`.
    Elicit(ElicitResult),
    /// The answer to `sampling/createMessage`.
    CreateMessage(CreateMessageResult),
    /// The answer to `roots/list`.
    ListRoots(ListRootsResult),
    /// Anything else, verbatim (possibly invalid).
    Other(JsonValue),
}

impl Serialize for InputResponse {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            InputResponse::Elicit(r) => r.serialize(serializer),
            InputResponse::CreateMessage(r) => r.serialize(serializer),
            InputResponse::ListRoots(r) => r.serialize(serializer),
            InputResponse::Other(v) => v.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for InputResponse {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = strict::value(deserializer)?;
        let JsonValue::Object(object) = value else {
            return Ok(InputResponse::Other(value));
        };
        // A shape that matches a kind but fails its type is kept as Other, so one bad answer
        // does not make the whole request undecodable: the server names the problem instead.
        let attempt = if object.contains_key("action") {
            ElicitResult::deserialize(&JsonValue::Object(object.clone())).ok().map(InputResponse::Elicit)
        } else if object.contains_key("roots") {
            ListRootsResult::deserialize(&JsonValue::Object(object.clone()))
                .ok()
                .map(InputResponse::ListRoots)
        } else if object.contains_key("model") || object.contains_key("role") {
            CreateMessageResult::deserialize(&JsonValue::Object(object.clone()))
                .ok()
                .map(InputResponse::CreateMessage)
        } else {
            None
        };
        Ok(attempt.unwrap_or(InputResponse::Other(JsonValue::Object(object))))
    }
}

/// Input requests by key (`InputRequests`).
pub type InputRequests = BTreeMap<String, InputRequest>;

/// Input responses by key (`InputResponses`).
pub type InputResponses = BTreeMap<String, InputResponse>;

wire_struct! {
    /// A result saying the request needs client input first (`InputRequiredResult`).
    #[derive(Default)]
    pub struct InputRequiredResult [tag "resultType" = "input_required"] {
        /// What the client must fulfil, by key.
        opt input_requests: InputRequests = "inputRequests",
        /// Opaque server state the client echoes byte-exact on the retry.
        opt request_state: String = "requestState",
        /// Result metadata.
        opt meta: ResultMeta = "_meta",
    }
}

wire_struct! {
    /// The MRTR members of a retried request's params (`InputResponseRequestParams`).
    #[derive(Default)]
    pub struct InputResponseRequestParams {
        /// The answers, keyed as the server keyed its requests.
        opt input_responses: InputResponses = "inputResponses",
        /// The server's `requestState`, echoed.
        opt request_state: String = "requestState",
        /// Request metadata.
        opt meta: crate::meta::RequestMeta = "_meta",
    }
}

/// The result of a request that may need client input: complete, input required, or (the tasks
/// extension) a task.
///
/// Decoding follows `resultType`: `"input_required"` → [`MrtrResult::InputRequired`];
/// `"task"` → [`MrtrResult::Task`]; `"complete"` or absent (a legacy server) →
/// [`MrtrResult::Complete`]; any other value is invalid, as the spec requires of unrecognized
/// result types.
// Unboxed for the same reason as `InputResponse`: a transient value on the result path.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum MrtrResult<T> {
    /// The request completed.
    Complete(T),
    /// The client must fulfil input requests and retry.
    InputRequired(InputRequiredResult),
    /// The request goes on as a task (`resultType: "task"`, the tasks extension: a
    /// `tools/call` of a client that declared it).
    Task(crate::extensions::tasks::TaskResult),
}

/// What a result's `resultType` says it is: the rule [`MrtrResult`] decodes by, read from the
/// result's JSON text alone, so that the result is then decoded once, into its own type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultKind {
    /// `"complete"`, or no `resultType` (a legacy server's results have none).
    Complete,
    /// `"input_required"`.
    InputRequired,
    /// `"task"` (the tasks extension).
    Task,
}

impl ResultKind {
    /// The kind of the result whose JSON text is `json` (an object a decoder has accepted, such
    /// as a response's `result`): only the object's top level is walked, nothing is decoded but
    /// the `resultType` member. An unrecognized `resultType`, one that is not a string, or a
    /// `json` that is not an object is an error, as decoding it would be.
    pub fn of(json: &str) -> Result<ResultKind, String> {
        // Cheap before the walk: the name must be in the text, unless it is written with escapes.
        if !json.trim_start().starts_with('{') {
            return Err("a result must be an object".to_owned());
        }
        if !json.contains("resultType") && !json.contains("\\u") {
            return Ok(ResultKind::Complete);
        }
        let value = match crate::scan::member(json, "resultType") {
            Ok(None) => return Ok(ResultKind::Complete),
            Ok(Some(value)) => value,
            Err(crate::scan::ScanError::NotAnObject) => return Err("a result must be an object".to_owned()),
            Err(crate::scan::ScanError::Duplicate) => return Err("duplicate field `resultType`".to_owned()),
            Err(crate::scan::ScanError::Malformed) => {
                return Err("a result that is not valid JSON".to_owned());
            }
        };
        let kind = match value.strip_prefix('"').and_then(|v| v.strip_suffix('"')) {
            Some(plain) if !plain.contains('\\') => std::borrow::Cow::Borrowed(plain),
            Some(_) => match serde_json::from_str::<String>(value) {
                Ok(unescaped) => std::borrow::Cow::Owned(unescaped),
                Err(_) => return Err("resultType must be a string".to_owned()),
            },
            None => return Err("resultType must be a string".to_owned()),
        };
        match kind.as_ref() {
            "complete" => Ok(ResultKind::Complete),
            "input_required" => Ok(ResultKind::InputRequired),
            "task" => Ok(ResultKind::Task),
            other => Err(format!("unrecognized resultType {other:?}")),
        }
    }
}

impl<T: Serialize> Serialize for MrtrResult<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            MrtrResult::Complete(t) => t.serialize(serializer),
            MrtrResult::InputRequired(r) => r.serialize(serializer),
            MrtrResult::Task(t) => t.serialize(serializer),
        }
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for MrtrResult<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = strict::value(deserializer)?;
        let kind = value.get("resultType").map(|v| v.as_str());
        match kind {
            Some(Some("input_required")) => InputRequiredResult::deserialize(value)
                .map(MrtrResult::InputRequired)
                .map_err(serde::de::Error::custom),
            Some(Some("task")) => crate::extensions::tasks::TaskResult::deserialize(value)
                .map(MrtrResult::Task)
                .map_err(serde::de::Error::custom),
            None | Some(Some("complete")) => {
                T::deserialize(value).map(MrtrResult::Complete).map_err(serde::de::Error::custom)
            }
            Some(Some(other)) => {
                Err(serde::de::Error::custom(format_args!("unrecognized resultType {other:?}")))
            }
            Some(None) => Err(serde::de::Error::custom("resultType must be a string")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{MrtrResult, ResultKind};

    #[test]
    fn the_result_type_is_read_as_decoding_reads_it() {
        let cases = [
            (r#"{"content":[]}"#, Ok(ResultKind::Complete)),
            (r#"{"content":[],"resultType":"complete"}"#, Ok(ResultKind::Complete)),
            (r#"{"resultType": "input_required","inputRequests":{}}"#, Ok(ResultKind::InputRequired)),
            (r#"{"resultType":"task","task":{}}"#, Ok(ResultKind::Task)),
            (r#"{"result\u0054ype":"task"}"#, Ok(ResultKind::Task)),
            (r#"{"resultType":"t\u0061sk"}"#, Ok(ResultKind::Task)),
            // Only the top level counts, not a member of a value or a text.
            (r#"{"content":[{"type":"text","text":"\"resultType\":\"task\""}]}"#, Ok(ResultKind::Complete)),
            (r#"{"structuredContent":{"resultType":"input_required"}}"#, Ok(ResultKind::Complete)),
        ];
        for (json, kind) in cases {
            assert_eq!(ResultKind::of(json), kind, "{json}");
        }
        let unknown = ResultKind::of(r#"{"resultType":"later"}"#).unwrap_err();
        assert_eq!(unknown, "unrecognized resultType \"later\"");
        for not_a_string in [r#"{"resultType":3}"#, r#"{"resultType":null}"#, r#"{"resultType":{"a":1}}"#] {
            assert_eq!(ResultKind::of(not_a_string).unwrap_err(), "resultType must be a string");
        }
        assert!(ResultKind::of(r#"{"resultType":"a","resultType":"b"}"#).unwrap_err().contains("duplicate"));
        assert!(ResultKind::of("[]").is_err());
    }

    #[test]
    fn the_kind_agrees_with_the_decoding_of_every_kind() {
        let complete = r#"{"resultType":"complete","content":[]}"#;
        let asks = r#"{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list"}}}"#;
        for (json, kind) in [(complete, ResultKind::Complete), (asks, ResultKind::InputRequired)] {
            let decoded: MrtrResult<serde_json::Value> = serde_json::from_str(json).unwrap();
            let decoded_kind = match decoded {
                MrtrResult::Complete(_) => ResultKind::Complete,
                MrtrResult::InputRequired(_) => ResultKind::InputRequired,
                MrtrResult::Task(_) => ResultKind::Task,
            };
            assert_eq!((ResultKind::of(json), decoded_kind), (Ok(kind), kind));
        }
        let unknown = r#"{"resultType":"later"}"#;
        assert!(serde_json::from_str::<MrtrResult<serde_json::Value>>(unknown).is_err());
        assert!(ResultKind::of(unknown).is_err());
    }
}
