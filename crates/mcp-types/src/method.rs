//! One zero-sized type per method ties its name, params and result together, and generic
//! message shapes built on that tie.
//!
//! ```
//! use mcp_types::{RequestMethod, methods::CallTool};
//! assert_eq!(CallTool::METHOD, "tools/call");
//! ```
//!
//! Typed message shapes: [`JsonRpcRequest<M>`] (a full request), [`JsonRpcNotification<M>`],
//! [`JsonRpcResponse<R>`], [`JsonRpcErrorResponse`], and [`InlineRequest<M>`] (a request
//! embedded in an MRTR result).

use std::fmt::{self, Debug};
use std::marker::PhantomData;

use serde::de::{self, DeserializeOwned, IgnoredAny, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::__private::MapKey;
use crate::error::ErrorObject;
use crate::id::RequestId;
use crate::json::JsonObject;

/// What a message payload must be able to do.
pub trait Payload: Serialize + DeserializeOwned + Debug + Clone + PartialEq + Send + Sync + 'static {}
impl<T: Serialize + DeserializeOwned + Debug + Clone + PartialEq + Send + Sync + 'static> Payload for T {}

/// A request method: its wire name, params type and (complete) result type.
pub trait RequestMethod: 'static {
    /// The `method` string.
    const METHOD: &'static str;
    /// The `params` object.
    type Params: Payload;
    /// The result of a complete answer.
    type Result: Payload;
}

/// A notification method: its wire name and params type.
pub trait NotificationMethod: 'static {
    /// The `method` string.
    const METHOD: &'static str;
    /// The `params` object.
    type Params: Payload;
}

/// Defines a zero-sized request method type.
#[macro_export]
#[doc(hidden)]
macro_rules! request_method {
    ($(#[$m:meta])* $name:ident = $method:literal, $params:ty => $result:ty) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $name;
        impl $crate::RequestMethod for $name {
            const METHOD: &'static str = $method;
            type Params = $params;
            type Result = $result;
        }
    };
}

/// Defines a zero-sized notification method type.
#[macro_export]
#[doc(hidden)]
macro_rules! notification_method {
    ($(#[$m:meta])* $name:ident = $method:literal, $params:ty) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $name;
        impl $crate::NotificationMethod for $name {
            const METHOD: &'static str = $method;
            type Params = $params;
        }
    };
}

/// Deserializes params that may be absent: an absent `params` reads as `{}`, so that methods
/// whose params are all optional accept a bare request and the others name the missing member.
fn params_or_empty<P: DeserializeOwned, E: de::Error>(params: Option<P>) -> Result<P, E> {
    match params {
        Some(p) => Ok(p),
        None => P::deserialize(serde_json::Value::Object(JsonObject::new())).map_err(E::custom),
    }
}

fn check_version<E: de::Error>(jsonrpc: Option<MapKey<'_>>) -> Result<(), E> {
    match jsonrpc {
        Some(v) if v.as_str() == "2.0" => Ok(()),
        Some(v) => Err(E::invalid_value(de::Unexpected::Str(v.as_str()), &"\"2.0\"")),
        None => Err(E::missing_field("jsonrpc")),
    }
}

fn check_method<E: de::Error>(method: Option<MapKey<'_>>, expected: &'static str) -> Result<(), E> {
    match method {
        Some(m) if m.as_str() == expected => Ok(()),
        Some(m) => Err(E::invalid_value(de::Unexpected::Str(m.as_str()), &expected)),
        None => Err(E::missing_field("method")),
    }
}

macro_rules! set_once {
    ($slot:ident, $map:ident, $name:literal) => {{
        if $slot.is_some() {
            return Err(de::Error::duplicate_field($name));
        }
        $slot = Some($map.next_value()?);
    }};
}

/// A complete JSON-RPC request for method `M`: `{"jsonrpc":"2.0","id":…,"method":M,"params":…}`.
pub struct JsonRpcRequest<M: RequestMethod> {
    /// The request id.
    pub id: RequestId,
    /// The params.
    pub params: M::Params,
}

impl<M: RequestMethod> JsonRpcRequest<M> {
    /// A request with this id and params.
    pub fn new(id: impl Into<RequestId>, params: M::Params) -> Self {
        JsonRpcRequest { id: id.into(), params }
    }
}

impl<M: RequestMethod> Debug for JsonRpcRequest<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JsonRpcRequest")
            .field("method", &M::METHOD)
            .field("id", &self.id)
            .field("params", &self.params)
            .finish()
    }
}

impl<M: RequestMethod> Clone for JsonRpcRequest<M> {
    fn clone(&self) -> Self {
        JsonRpcRequest { id: self.id.clone(), params: self.params.clone() }
    }
}

impl<M: RequestMethod> PartialEq for JsonRpcRequest<M> {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id && self.params == other.params
    }
}

impl<M: RequestMethod> Serialize for JsonRpcRequest<M> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(4))?;
        map.serialize_entry("jsonrpc", "2.0")?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("method", M::METHOD)?;
        map.serialize_entry("params", &self.params)?;
        map.end()
    }
}

impl<'de, M: RequestMethod> Deserialize<'de> for JsonRpcRequest<M> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<M>(PhantomData<M>);
        impl<'de, M: RequestMethod> Visitor<'de> for V<M> {
            type Value = JsonRpcRequest<M>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "a JSON-RPC {} request", M::METHOD)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let (mut jsonrpc, mut id, mut method, mut params) = (None, None, None, None);
                while let Some(key) = map.next_key::<MapKey<'de>>()? {
                    match key.as_str() {
                        "jsonrpc" => set_once!(jsonrpc, map, "jsonrpc"),
                        "id" => set_once!(id, map, "id"),
                        "method" => set_once!(method, map, "method"),
                        "params" => set_once!(params, map, "params"),
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                check_version(jsonrpc)?;
                check_method(method, M::METHOD)?;
                Ok(JsonRpcRequest {
                    id: id.ok_or_else(|| de::Error::missing_field("id"))?,
                    params: params_or_empty(params)?,
                })
            }
        }
        deserializer.deserialize_map(V(PhantomData))
    }
}

/// A complete JSON-RPC notification for method `M`.
pub struct JsonRpcNotification<M: NotificationMethod> {
    /// The params.
    pub params: M::Params,
}

impl<M: NotificationMethod> JsonRpcNotification<M> {
    /// A notification with these params.
    pub fn new(params: M::Params) -> Self {
        JsonRpcNotification { params }
    }
}

impl<M: NotificationMethod> Debug for JsonRpcNotification<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JsonRpcNotification")
            .field("method", &M::METHOD)
            .field("params", &self.params)
            .finish()
    }
}

impl<M: NotificationMethod> Clone for JsonRpcNotification<M> {
    fn clone(&self) -> Self {
        JsonRpcNotification { params: self.params.clone() }
    }
}

impl<M: NotificationMethod> PartialEq for JsonRpcNotification<M> {
    fn eq(&self, other: &Self) -> bool {
        self.params == other.params
    }
}

impl<M: NotificationMethod> Serialize for JsonRpcNotification<M> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("jsonrpc", "2.0")?;
        map.serialize_entry("method", M::METHOD)?;
        map.serialize_entry("params", &self.params)?;
        map.end()
    }
}

impl<'de, M: NotificationMethod> Deserialize<'de> for JsonRpcNotification<M> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<M>(PhantomData<M>);
        impl<'de, M: NotificationMethod> Visitor<'de> for V<M> {
            type Value = JsonRpcNotification<M>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "a JSON-RPC {} notification", M::METHOD)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let (mut jsonrpc, mut method, mut params) = (None, None, None);
                while let Some(key) = map.next_key::<MapKey<'de>>()? {
                    match key.as_str() {
                        "jsonrpc" => set_once!(jsonrpc, map, "jsonrpc"),
                        "method" => set_once!(method, map, "method"),
                        "params" => set_once!(params, map, "params"),
                        "id" => return Err(de::Error::unknown_field("id", &["jsonrpc", "method", "params"])),
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                check_version(jsonrpc)?;
                check_method(method, M::METHOD)?;
                Ok(JsonRpcNotification { params: params_or_empty(params)? })
            }
        }
        deserializer.deserialize_map(V(PhantomData))
    }
}

/// A JSON-RPC result response carrying `R`: `{"jsonrpc":"2.0","id":…,"result":R}`.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonRpcResponse<R> {
    /// The id of the request answered.
    pub id: RequestId,
    /// The result.
    pub result: R,
}

impl<R: Serialize> Serialize for JsonRpcResponse<R> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("jsonrpc", "2.0")?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("result", &self.result)?;
        map.end()
    }
}

impl<'de, R: DeserializeOwned> Deserialize<'de> for JsonRpcResponse<R> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<R>(PhantomData<R>);
        impl<'de, R: DeserializeOwned> Visitor<'de> for V<R> {
            type Value = JsonRpcResponse<R>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON-RPC result response")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let (mut jsonrpc, mut id, mut result) = (None, None, None::<R>);
                while let Some(key) = map.next_key::<MapKey<'de>>()? {
                    match key.as_str() {
                        "jsonrpc" => set_once!(jsonrpc, map, "jsonrpc"),
                        "id" => set_once!(id, map, "id"),
                        "result" => set_once!(result, map, "result"),
                        other => return Err(de::Error::unknown_field(other, &["jsonrpc", "id", "result"])),
                    }
                }
                check_version(jsonrpc)?;
                Ok(JsonRpcResponse {
                    id: id.ok_or_else(|| de::Error::missing_field("id"))?,
                    result: result.ok_or_else(|| de::Error::missing_field("result"))?,
                })
            }
        }
        deserializer.deserialize_map(V(PhantomData))
    }
}

/// A JSON-RPC error response: `{"jsonrpc":"2.0","id"?:…,"error":{…}}` (`JSONRPCErrorResponse`,
/// and the MCP-specific `HeaderMismatchError`, `UnsupportedProtocolVersionError`, ...).
#[derive(Debug, Clone, PartialEq)]
pub struct JsonRpcErrorResponse {
    /// The id of the request answered; absent when it could not be read.
    pub id: Option<RequestId>,
    /// The error.
    pub error: ErrorObject,
}

impl Serialize for JsonRpcErrorResponse {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("jsonrpc", "2.0")?;
        if let Some(id) = &self.id {
            map.serialize_entry("id", id)?;
        }
        map.serialize_entry("error", &self.error)?;
        map.end()
    }
}

impl<'de> Deserialize<'de> for JsonRpcErrorResponse {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = JsonRpcErrorResponse;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON-RPC error response")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let (mut jsonrpc, mut id, mut error) = (None, None::<Option<RequestId>>, None);
                while let Some(key) = map.next_key::<MapKey<'de>>()? {
                    match key.as_str() {
                        "jsonrpc" => set_once!(jsonrpc, map, "jsonrpc"),
                        "id" => set_once!(id, map, "id"),
                        "error" => set_once!(error, map, "error"),
                        other => return Err(de::Error::unknown_field(other, &["jsonrpc", "id", "error"])),
                    }
                }
                check_version(jsonrpc)?;
                Ok(JsonRpcErrorResponse {
                    id: id.flatten(),
                    error: error.ok_or_else(|| de::Error::missing_field("error"))?,
                })
            }
        }
        deserializer.deserialize_map(V)
    }
}

/// A request embedded in a result rather than sent as a message: `{"method":M,"params"?:…}`.
///
/// 2026-07-28 carries server→client requests (elicitation, sampling, roots) this way inside an
/// `InputRequiredResult`. Members other than `method` and `params` are kept in `extra`.
pub struct InlineRequest<M: RequestMethod> {
    /// The params, when present.
    pub params: Option<M::Params>,
    /// Other members, kept so they round-trip.
    pub extra: JsonObject,
}

impl<M: RequestMethod> InlineRequest<M> {
    /// An inline request with these params.
    pub fn new(params: M::Params) -> Self {
        InlineRequest { params: Some(params), extra: JsonObject::new() }
    }
}

impl<M: RequestMethod> Debug for InlineRequest<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InlineRequest")
            .field("method", &M::METHOD)
            .field("params", &self.params)
            .field("extra", &self.extra)
            .finish()
    }
}

impl<M: RequestMethod> Clone for InlineRequest<M> {
    fn clone(&self) -> Self {
        InlineRequest { params: self.params.clone(), extra: self.extra.clone() }
    }
}

impl<M: RequestMethod> PartialEq for InlineRequest<M> {
    fn eq(&self, other: &Self) -> bool {
        self.params == other.params && self.extra == other.extra
    }
}

impl<M: RequestMethod> Serialize for InlineRequest<M> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("method", M::METHOD)?;
        if let Some(params) = &self.params {
            map.serialize_entry("params", params)?;
        }
        for (k, v) in &self.extra {
            if k != "method" && k != "params" {
                map.serialize_entry(k, v)?;
            }
        }
        map.end()
    }
}

impl<'de, M: RequestMethod> Deserialize<'de> for InlineRequest<M> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V<M>(PhantomData<M>);
        impl<'de, M: RequestMethod> Visitor<'de> for V<M> {
            type Value = InlineRequest<M>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "an inline {} request", M::METHOD)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let (mut method, mut params) = (None, None::<Option<M::Params>>);
                let mut extra = JsonObject::new();
                while let Some(key) = map.next_key::<MapKey<'de>>()? {
                    match key.as_str() {
                        "method" => set_once!(method, map, "method"),
                        "params" => set_once!(params, map, "params"),
                        other => {
                            crate::__private::note_unknown_member(other);
                            let value = map.next_value()?;
                            if extra.insert(other.to_owned(), value).is_some() {
                                return Err(de::Error::custom(format_args!("duplicate field `{other}`")));
                            }
                        }
                    }
                }
                check_method(method, M::METHOD)?;
                Ok(InlineRequest { params: params.flatten(), extra })
            }
        }
        deserializer.deserialize_map(V(PhantomData))
    }
}
