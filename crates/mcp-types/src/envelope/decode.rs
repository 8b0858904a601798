//! Decoding bytes into messages, or into the precise error to answer with.
//!
//! Decoding is total: every well-formed JSON-RPC object becomes a [`Message`], whatever its
//! method. What is refused, and how (docs/DECISIONS.md):
//!
//! | input | error |
//! |---|---|
//! | not JSON (syntax, invalid UTF-8, a BOM, nesting past serde_json's limit) | `-32700` |
//! | JSON that is not an object (or an array, where batches are allowed) | `-32600` |
//! | a duplicate envelope member | `-32600` |
//! | `jsonrpc` missing or not `"2.0"` | `-32600`, with the id when it is readable |
//! | an id that is `null`, fractional, out of ±(2^53−1), over 1 KiB, or not a string/number | `-32600`, no id |
//! | `method` not a string; `params` not an object | `-32600`, with the id |
//! | both `result` and `error`, or a method with either | `-32600` |
//! | a batch where the revision forbids it, an empty batch | `-32600` |
//! | a response where only requests are expected | `-32600`, with the id |

use std::fmt;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

use super::{Message, Notification, RawJson, Request, Response, ResponseId};
use crate::__private::MapKey;
use crate::error::{ErrorObject, code};
use crate::id::{IdError, RequestId};

/// What the decoder accepts.
///
/// `#[non_exhaustive]`: built from [`DecodeOptions::new`] (a `const fn`, as are the setters)
/// or `Default`:
///
/// ```
/// use mcp_types::DecodeOptions;
///
/// const BATCHES: DecodeOptions = DecodeOptions::new().with_allow_batch(true);
/// assert!(BATCHES.allow_batch && BATCHES.accept_responses);
/// assert!(!DecodeOptions::default().with_accept_responses(false).accept_responses);
/// ```
///
/// ```compile_fail
/// let options = mcp_types::DecodeOptions { allow_batch: true, accept_responses: true };
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct DecodeOptions {
    /// Accept a JSON array of messages (only 2025-03-26 allows batches).
    pub allow_batch: bool,
    /// Accept responses. A server on a transport where the client never answers (modern
    /// stdio, an HTTP POST body in 2026-07-28) turns them off.
    pub accept_responses: bool,
}

impl DecodeOptions {
    /// The default: no batches, responses accepted (a `const` for options in constants).
    pub const fn new() -> Self {
        DecodeOptions { allow_batch: false, accept_responses: true }
    }

    /// Sets [`allow_batch`](Self::allow_batch).
    #[must_use]
    pub const fn with_allow_batch(mut self, allow_batch: bool) -> Self {
        self.allow_batch = allow_batch;
        self
    }

    /// Sets [`accept_responses`](Self::accept_responses).
    #[must_use]
    pub const fn with_accept_responses(mut self, accept_responses: bool) -> Self {
        self.accept_responses = accept_responses;
        self
    }
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions::new()
    }
}

/// What was wrong with the input, precisely enough to test against.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// Not JSON at all (`-32700`).
    NotJson,
    /// A UTF-8 byte-order mark before the JSON (`-32700`).
    ByteOrderMark,
    /// JSON, but not an object (`-32600`).
    NotAnObject,
    /// A member appears twice (`-32600`).
    DuplicateMember(&'static str),
    /// `jsonrpc` is missing or not `"2.0"` (`-32600`).
    BadVersion,
    /// The id is unacceptable (`-32600`).
    BadId(IdError),
    /// `method` is not a string (`-32600`).
    BadMethod,
    /// `params` is not an object (`-32600`).
    BadParams,
    /// `error` is not a valid error object (`-32600`).
    BadErrorObject,
    /// Neither a request, a notification nor a response (`-32600`).
    NotAMessage,
    /// A result response without an id (`-32600`).
    ResponseWithoutId,
    /// A batch where the revision forbids it (`-32600`).
    BatchNotAllowed,
    /// An empty batch `[]` (`-32600`).
    EmptyBatch,
    /// A response where a request was due (`-32600`).
    UnexpectedResponse,
}

/// A message that could not be decoded, with what to answer.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct DecodeError {
    /// What was wrong.
    pub kind: DecodeErrorKind,
    /// The id of the offending request, when it could be read.
    pub id: Option<RequestId>,
    /// A human-readable detail.
    pub detail: String,
}

impl DecodeError {
    fn new(kind: DecodeErrorKind, id: Option<RequestId>, detail: impl Into<String>) -> Self {
        DecodeError { kind, id, detail: detail.into() }
    }

    /// The JSON-RPC error code to answer with: `-32700` or `-32600`.
    pub fn code(&self) -> i64 {
        match self.kind {
            DecodeErrorKind::NotJson | DecodeErrorKind::ByteOrderMark => code::PARSE_ERROR,
            _ => code::INVALID_REQUEST,
        }
    }

    /// The error object to answer with.
    pub fn to_error_object(&self) -> ErrorObject {
        let title = if self.code() == code::PARSE_ERROR { "Parse error" } else { "Invalid request" };
        ErrorObject::new(self.code(), format!("{title}: {}", self.detail))
    }

    /// The error response to send. `null_id` selects `"id": null` (revisions before
    /// 2025-11-25, JSON-RPC 2.0) over omitting the id (2025-11-25 and 2026-07-28, whose
    /// schemas forbid a null id) when the id could not be read; see
    /// [`ProtocolVersion::omits_unknown_error_id`](crate::ProtocolVersion::omits_unknown_error_id).
    pub fn to_response(&self, null_id: bool) -> Response {
        let id = match (&self.id, null_id) {
            (Some(id), _) => ResponseId::Id(id.clone()),
            (None, true) => ResponseId::Null,
            (None, false) => ResponseId::Absent,
        };
        Response::error(id, self.to_error_object())
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.detail, self.code())
    }
}

impl std::error::Error for DecodeError {}

/// A decoded input: one message, or a batch (where allowed), each element decoded on its own.
#[derive(Debug)]
pub enum Incoming {
    /// A single message.
    Single(Message),
    /// A batch; each element is a message or that element's error.
    Batch(Vec<Result<Message, DecodeError>>),
}

/// Decodes one input that must hold a single message (no batch).
pub fn decode_message(bytes: &[u8], options: DecodeOptions) -> Result<Message, DecodeError> {
    match decode(bytes, DecodeOptions { allow_batch: false, ..options })? {
        Incoming::Single(m) => Ok(m),
        // Unreachable with allow_batch = false; answered as the batch refusal it would be.
        Incoming::Batch(_) => {
            Err(DecodeError::new(DecodeErrorKind::BatchNotAllowed, None, "batches are not allowed"))
        }
    }
}

/// Decodes one input (a line, an HTTP body) into a message or a batch.
pub fn decode(bytes: &[u8], options: DecodeOptions) -> Result<Incoming, DecodeError> {
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        return Err(DecodeError::new(
            DecodeErrorKind::ByteOrderMark,
            None,
            "a byte-order mark precedes the JSON",
        ));
    }
    let first = bytes.iter().copied().find(|b| !b.is_ascii_whitespace());
    if first == Some(b'[') {
        let items: Vec<RawJson> =
            serde_json::from_slice(bytes).map_err(|e| not_json_or(e, DecodeErrorKind::NotAnObject))?;
        if !options.allow_batch {
            return Err(DecodeError::new(
                DecodeErrorKind::BatchNotAllowed,
                None,
                "batches are not allowed in this protocol revision",
            ));
        }
        if items.is_empty() {
            return Err(DecodeError::new(DecodeErrorKind::EmptyBatch, None, "empty batch"));
        }
        let out = items.iter().map(|raw| decode_object(raw.get().as_bytes(), options)).collect();
        return Ok(Incoming::Batch(out));
    }
    decode_object(bytes, options).map(Incoming::Single)
}

fn not_json_or(e: serde_json::Error, otherwise: DecodeErrorKind) -> DecodeError {
    if e.is_syntax() || e.is_eof() || e.is_io() {
        DecodeError::new(DecodeErrorKind::NotJson, None, e.to_string())
    } else {
        DecodeError::new(otherwise, None, e.to_string())
    }
}

fn decode_object(bytes: &[u8], options: DecodeOptions) -> Result<Message, DecodeError> {
    let raw: RawEnvelope =
        serde_json::from_slice(bytes).map_err(|e| not_json_or(e, DecodeErrorKind::NotAnObject))?;
    raw.into_message(options)
}

/// The envelope's members, captured without interpretation so that every problem can be
/// reported precisely, and the id recovered, after the whole input is known to be JSON.
#[derive(Default)]
struct RawEnvelope {
    jsonrpc: Option<Value>,
    id: Option<Value>,
    method: Option<Value>,
    params: Option<RawJson>,
    result: Option<RawJson>,
    error: Option<RawJson>,
    duplicate: Option<&'static str>,
}

impl<'de> Deserialize<'de> for RawEnvelope {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawEnvelope;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON-RPC message object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawEnvelope, A::Error> {
                let mut env = RawEnvelope::default();
                // A duplicate is recorded, not raised at once: the rest of the input must still
                // be scanned so that broken JSON is reported as -32700, not -32600.
                macro_rules! take {
                    ($slot:ident, $name:literal) => {{
                        if env.$slot.is_some() {
                            env.duplicate.get_or_insert($name);
                            map.next_value::<IgnoredAny>()?;
                        } else {
                            env.$slot = Some(map.next_value()?);
                        }
                    }};
                }
                while let Some(key) = map.next_key::<MapKey<'de>>()? {
                    match key.as_str() {
                        "jsonrpc" => take!(jsonrpc, "jsonrpc"),
                        "id" => take!(id, "id"),
                        "method" => take!(method, "method"),
                        "params" => take!(params, "params"),
                        "result" => take!(result, "result"),
                        "error" => take!(error, "error"),
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(env)
            }
        }
        deserializer.deserialize_map(V)
    }
}

impl RawEnvelope {
    fn into_message(self, options: DecodeOptions) -> Result<Message, DecodeError> {
        use DecodeErrorKind as K;
        // The id is read first so that every later error can echo it.
        let id = match &self.id {
            None => None,
            Some(Value::Null) if self.method.is_none() && self.error.is_some() => None,
            Some(v) => match RequestId::from_value(v) {
                Ok(id) => Some(id),
                Err(e) => return Err(DecodeError::new(K::BadId(e), None, e.to_string())),
            },
        };
        if let Some(name) = self.duplicate {
            let id = if name == "id" { None } else { id };
            return Err(DecodeError::new(K::DuplicateMember(name), id, format!("duplicate member `{name}`")));
        }
        match &self.jsonrpc {
            Some(Value::String(v)) if v == "2.0" => {}
            _ => return Err(DecodeError::new(K::BadVersion, id, "`jsonrpc` must be \"2.0\"")),
        }
        if let Some(method) = self.method {
            let Value::String(method) = method else {
                return Err(DecodeError::new(K::BadMethod, id, "`method` must be a string"));
            };
            if self.result.is_some() || self.error.is_some() {
                return Err(DecodeError::new(
                    K::NotAMessage,
                    id,
                    "a message cannot have both `method` and `result`/`error`",
                ));
            }
            let params = match self.params {
                Some(p) if p.get().starts_with('{') => Some(p),
                Some(p) if p.get() == "null" => None,
                Some(_) => return Err(DecodeError::new(K::BadParams, id, "`params` must be an object")),
                None => None,
            };
            return Ok(match id {
                Some(id) => Message::Request(Request { id, method, params }),
                None => Message::Notification(Notification { method, params }),
            });
        }
        let response_id = match (id, &self.id) {
            (Some(id), _) => ResponseId::Id(id),
            (None, Some(_)) => ResponseId::Null,
            (None, None) => ResponseId::Absent,
        };
        let result = match (self.result, self.error) {
            (Some(_), Some(_)) => {
                return Err(DecodeError::new(
                    K::NotAMessage,
                    response_id.request_id().cloned(),
                    "a response cannot have both `result` and `error`",
                ));
            }
            (Some(result), None) => {
                if response_id.request_id().is_none() {
                    return Err(DecodeError::new(
                        K::ResponseWithoutId,
                        None,
                        "a result response needs an id",
                    ));
                }
                Ok(result)
            }
            (None, Some(error)) => match serde_json::from_str::<ErrorObject>(error.get()) {
                Ok(e) => Err(e),
                Err(e) => {
                    return Err(DecodeError::new(
                        K::BadErrorObject,
                        response_id.request_id().cloned(),
                        format!("invalid `error`: {e}"),
                    ));
                }
            },
            (None, None) => {
                return Err(DecodeError::new(
                    K::NotAMessage,
                    response_id.request_id().cloned(),
                    "neither a request, a notification nor a response",
                ));
            }
        };
        if !options.accept_responses {
            return Err(DecodeError::new(
                K::UnexpectedResponse,
                response_id.request_id().cloned(),
                "a response was sent where a request was due",
            ));
        }
        Ok(Message::Response(Response { id: response_id, result }))
    }
}
