//! The JSON-RPC envelope: any message, with its params or result kept as raw JSON text.
//!
//! A message is parsed once: the envelope scan validates the whole input and keeps `params`
//! (or `result`) as a [`RawValue`] slice, which the router later decodes straight into the
//! method's typed params — no intermediate `Value` tree, and nothing is re-serialized when a
//! message is only forwarded.

mod decode;

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

use crate::error::ErrorObject;
use crate::id::RequestId;
use crate::method::{NotificationMethod, RequestMethod};

pub use decode::{DecodeError, DecodeErrorKind, DecodeOptions, Incoming, decode, decode_message};

/// Raw JSON text of a `params` or `result` member.
pub type RawJson = Box<RawValue>;

/// Any JSON-RPC message.
#[derive(Debug, Clone)]
pub enum Message {
    /// A request (has an id, expects a response).
    Request(Request),
    /// A notification (no id, no response).
    Notification(Notification),
    /// A response to a request.
    Response(Response),
}

/// A request with any method; unknown methods are data, not errors.
#[derive(Debug, Clone)]
pub struct Request {
    /// The request id, echoed by the response.
    pub id: RequestId,
    /// The method name.
    pub method: String,
    /// The params object as raw JSON, when present.
    pub params: Option<RawJson>,
}

/// A notification with any method.
#[derive(Debug, Clone)]
pub struct Notification {
    /// The method name.
    pub method: String,
    /// The params object as raw JSON, when present.
    pub params: Option<RawJson>,
}

/// The `id` of a response. Only an error response may lack a usable id: the request's id could
/// not be read.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ResponseId {
    /// The id of the request answered.
    Id(RequestId),
    /// `"id": null` — what JSON-RPC 2.0 (and so legacy MCP) sends when the id was unreadable.
    Null,
    /// No `id` member — what 2026-07-28 sends when the id was unreadable.
    Absent,
}

impl ResponseId {
    /// The request id, if there is one.
    pub fn request_id(&self) -> Option<&RequestId> {
        match self {
            ResponseId::Id(id) => Some(id),
            _ => None,
        }
    }
}

impl From<RequestId> for ResponseId {
    fn from(id: RequestId) -> Self {
        ResponseId::Id(id)
    }
}

/// A response: a result or an error, never both.
#[derive(Debug, Clone)]
pub struct Response {
    /// The id of the request answered.
    pub id: ResponseId,
    /// The raw result, or the error.
    pub result: Result<RawJson, ErrorObject>,
}

impl Request {
    /// A request with typed params.
    pub fn new<P: Serialize>(
        id: impl Into<RequestId>,
        method: impl Into<String>,
        params: &P,
    ) -> serde_json::Result<Self> {
        Ok(Request {
            id: id.into(),
            method: method.into(),
            params: Some(serde_json::value::to_raw_value(params)?),
        })
    }

    /// A request for method `M`.
    pub fn typed<M: RequestMethod>(id: impl Into<RequestId>, params: &M::Params) -> serde_json::Result<Self> {
        Self::new(id, M::METHOD, params)
    }

    /// Decodes the params as `T`; an absent `params` decodes as `{}`. A failure is the
    /// `-32602` error to answer with.
    pub fn params_as<T: serde::de::DeserializeOwned>(&self) -> Result<T, ErrorObject> {
        parse_params(self.params.as_deref(), &self.method)
    }
}

impl Notification {
    /// A notification with typed params.
    pub fn new<P: Serialize>(method: impl Into<String>, params: &P) -> serde_json::Result<Self> {
        Ok(Notification { method: method.into(), params: Some(serde_json::value::to_raw_value(params)?) })
    }

    /// A notification for method `M`.
    pub fn typed<M: NotificationMethod>(params: &M::Params) -> serde_json::Result<Self> {
        Self::new(M::METHOD, params)
    }

    /// Decodes the params as `T`; an absent `params` decodes as `{}`.
    pub fn params_as<T: serde::de::DeserializeOwned>(&self) -> Result<T, ErrorObject> {
        parse_params(self.params.as_deref(), &self.method)
    }
}

fn parse_params<T: serde::de::DeserializeOwned>(
    raw: Option<&RawValue>,
    method: &str,
) -> Result<T, ErrorObject> {
    let text = raw.map_or("{}", RawValue::get);
    serde_json::from_str(text)
        .map_err(|e| ErrorObject::invalid_params(format!("Invalid params for {method}: {e}")))
}

impl Response {
    /// A result response with a typed result.
    pub fn ok<R: Serialize>(id: RequestId, result: &R) -> serde_json::Result<Self> {
        Ok(Response { id: ResponseId::Id(id), result: Ok(serde_json::value::to_raw_value(result)?) })
    }

    /// An error response.
    pub fn error(id: impl Into<ResponseId>, error: ErrorObject) -> Self {
        Response { id: id.into(), result: Err(error) }
    }

    /// Decodes the result as `T`.
    pub fn result_as<T: serde::de::DeserializeOwned>(
        &self,
    ) -> Result<Result<T, serde_json::Error>, &ErrorObject> {
        match &self.result {
            Ok(raw) => Ok(serde_json::from_str(raw.get())),
            Err(e) => Err(e),
        }
    }
}

impl Message {
    /// Serializes to compact JSON bytes.
    pub fn to_vec(&self) -> Vec<u8> {
        // Serializing these shapes cannot fail: keys are strings and raw members are already
        // valid JSON.
        serde_json::to_vec(self).unwrap_or_default()
    }
}

impl Serialize for Message {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Message::Request(r) => r.serialize(serializer),
            Message::Notification(n) => n.serialize(serializer),
            Message::Response(r) => r.serialize(serializer),
        }
    }
}

impl Serialize for Request {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("jsonrpc", "2.0")?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("method", &self.method)?;
        if let Some(p) = &self.params {
            map.serialize_entry("params", p)?;
        }
        map.end()
    }
}

impl Serialize for Notification {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("jsonrpc", "2.0")?;
        map.serialize_entry("method", &self.method)?;
        if let Some(p) = &self.params {
            map.serialize_entry("params", p)?;
        }
        map.end()
    }
}

impl Serialize for Response {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("jsonrpc", "2.0")?;
        match &self.id {
            ResponseId::Id(id) => map.serialize_entry("id", id)?,
            ResponseId::Null => map.serialize_entry("id", &())?,
            ResponseId::Absent => {}
        }
        match &self.result {
            Ok(raw) => map.serialize_entry("result", raw)?,
            Err(e) => map.serialize_entry("error", e)?,
        }
        map.end()
    }
}

impl From<Request> for Message {
    fn from(r: Request) -> Self {
        Message::Request(r)
    }
}

impl From<Notification> for Message {
    fn from(n: Notification) -> Self {
        Message::Notification(n)
    }
}

impl From<Response> for Message {
    fn from(r: Response) -> Self {
        Message::Response(r)
    }
}
