//! Request ids and progress tokens.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// The largest integer id accepted: ±(2^53 − 1), the range every JSON peer (JavaScript among
/// them) represents exactly.
pub const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

/// The longest string id accepted, in bytes (docs/DECISIONS.md: request id string ≤ 1 KiB).
pub const MAX_STRING_ID_LEN: usize = 1024;

/// A JSON-RPC request id: a string or an integer, never `null` (MCP forbids null ids).
///
/// Ids are echoed exactly as received: an integer stays an integer, a string stays a string.
/// Deserialization rejects what MCP forbids — `null`, fractional numbers, integers outside
/// ±(2^53 − 1), strings over [`MAX_STRING_ID_LEN`] bytes.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestId {
    /// An integer id.
    Number(i64),
    /// A string id.
    String(String),
}

impl RequestId {
    /// Checks an integer against the accepted range.
    pub fn from_i64(n: i64) -> Option<Self> {
        (-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER).contains(&n).then_some(RequestId::Number(n))
    }

    /// Classifies a JSON value as an id, or says why it is not one.
    pub fn from_value(value: &serde_json::Value) -> Result<Self, IdError> {
        match value {
            serde_json::Value::Null => Err(IdError::Null),
            serde_json::Value::String(s) if s.len() > MAX_STRING_ID_LEN => Err(IdError::TooLong),
            serde_json::Value::String(s) => Ok(RequestId::String(s.clone())),
            serde_json::Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    RequestId::from_i64(i).ok_or(IdError::OutOfRange)
                } else if n.is_u64() {
                    Err(IdError::OutOfRange)
                } else {
                    Err(IdError::NotInteger)
                }
            }
            _ => Err(IdError::WrongType),
        }
    }
}

/// Why a JSON value is not an acceptable request id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum IdError {
    /// `null` ids are forbidden by MCP.
    #[error("request id must not be null")]
    Null,
    /// A number with a fraction or exponent.
    #[error("request id must be an integer")]
    NotInteger,
    /// An integer outside ±(2^53 − 1).
    #[error("request id is outside ±(2^53-1)")]
    OutOfRange,
    /// A string over [`MAX_STRING_ID_LEN`] bytes.
    #[error("request id string is longer than 1024 bytes")]
    TooLong,
    /// Not a string or a number.
    #[error("request id must be a string or an integer")]
    WrongType,
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(s.to_owned())
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        RequestId::String(s)
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestId::Number(n) => serializer.serialize_i64(*n),
            RequestId::String(s) => serializer.serialize_str(s),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct IdVisitor;
        impl Visitor<'_> for IdVisitor {
            type Value = RequestId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an integer within ±(2^53-1)")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RequestId, E> {
                RequestId::from_i64(v).ok_or_else(|| E::custom(IdError::OutOfRange))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RequestId, E> {
                i64::try_from(v)
                    .ok()
                    .and_then(RequestId::from_i64)
                    .ok_or_else(|| E::custom(IdError::OutOfRange))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<RequestId, E> {
                Err(E::custom(IdError::NotInteger))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RequestId, E> {
                if v.len() > MAX_STRING_ID_LEN {
                    return Err(E::custom(IdError::TooLong));
                }
                Ok(RequestId::String(v.to_owned()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<RequestId, E> {
                Err(E::custom(IdError::Null))
            }
        }
        deserializer.deserialize_any(IdVisitor)
    }
}

/// A progress token (`ProgressToken`): a string or an integer chosen by the requester.
pub type ProgressToken = RequestId;
