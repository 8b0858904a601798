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
