//! JSON-RPC error objects, MCP's error codes and the typed `data` of MCP-defined errors.

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::capabilities::ClientCapabilities;
use crate::json::JsonValue;
use crate::wire_struct;

/// Error codes used by MCP.
///
/// `-32000…-32019` are legacy and never emitted by mcpkit; `-32020…-32099` are reserved for
/// the specification.
pub mod code {
    /// Invalid JSON was received.
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid method parameters.
    pub const INVALID_PARAMS: i64 = -32602;
    /// Internal JSON-RPC error.
    pub const INTERNAL_ERROR: i64 = -32603;
    /// Resource not found (2025-11-25 and earlier; `-32602` from 2026-07-28 on).
    pub const RESOURCE_NOT_FOUND: i64 = -32002;
    /// HTTP headers disagree with the body, or are missing or malformed (2026-07-28).
    pub const HEADER_MISMATCH: i64 = -32020;
    /// The request needs a client capability that was not declared (2026-07-28).
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
    /// The requested protocol version is not supported (2026-07-28).
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;
    /// URL-mode elicitation is required before the request can proceed (2025-11-25 only).
    pub const URL_ELICITATION_REQUIRED: i64 = -32042;
    /// The caller sent this request too often (mcpkit's own, not the specification's; outside
    /// JSON-RPC's reserved range): `data.retryAfterMs` says when to try again. Over HTTP it
    /// comes with `429 Too Many Requests` and `Retry-After`.
    pub const RATE_LIMITED: i64 = -31000;
}

wire_struct! {
    /// A JSON-RPC error object (`Error` in the schema).
    ///
    /// Its `message` is for humans; programs match on `code` and `data`.
    pub struct ErrorObject {
        /// The error code.
        req code: i64 = "code",
        /// A short description.
        req message: String = "message",
        /// Additional information, defined by the code.
        opt data: JsonValue = "data",
    }
}

impl ErrorObject {
    /// An error with a code and message and no data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        ErrorObject { code, message: message.into(), data: None, extra: Default::default() }
    }

    /// Attaches `data`.
    pub fn with_data(mut self, data: impl Serialize) -> Self {
        // Serializing plain data into a `Value` cannot fail for the types used here (maps
        // with string keys); fall back to no data rather than panicking if a caller errs.
        self.data = serde_json::to_value(data).ok();
        self
    }

    /// `-32700`: the bytes were not JSON.
    pub fn parse_error(message: impl Into<String>) -> Self {
        Self::new(code::PARSE_ERROR, message)
    }

    /// `-32600`: the JSON is not a valid request.
    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(code::INVALID_REQUEST, message)
    }

    /// `-32601`: unknown (or removed) method.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(code::METHOD_NOT_FOUND, format!("Method not found: {method}"))
    }

    /// `-32602`: invalid parameters.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(code::INVALID_PARAMS, message)
    }

    /// `-32603`: internal error.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(code::INTERNAL_ERROR, message)
    }

    /// `-32020`: a header disagrees with the body.
    pub fn header_mismatch(message: impl Into<String>) -> Self {
        Self::new(code::HEADER_MISMATCH, message)
    }

    /// `-32021` with `data.requiredCapabilities`.
    pub fn missing_client_capability(required: ClientCapabilities) -> Self {
        Self::new(code::MISSING_REQUIRED_CLIENT_CAPABILITY, "Missing required client capability").with_data(
            MissingRequiredClientCapabilityData {
                required_capabilities: required,
                extra: Default::default(),
            },
        )
    }

    /// `-32022` with `data: {supported, requested}`.
    pub fn unsupported_version(supported: Vec<String>, requested: impl Into<String>) -> Self {
        Self::new(code::UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version").with_data(
            UnsupportedProtocolVersionData {
                supported,
                requested: requested.into(),
                extra: Default::default(),
            },
        )
    }

    /// Resource not found: `-32602` (2026-07-28) or `-32002` (legacy), with `data.uri`.
    pub fn resource_not_found(code: i64, uri: &str) -> Self {
        Self::new(code, format!("Resource not found: {uri}")).with_data(serde_json::json!({ "uri": uri }))
    }

    /// Decodes `data` as a typed value.
    pub fn data_as<T: DeserializeOwned>(&self) -> Option<T> {
        self.data.as_ref().and_then(|d| T::deserialize(d).ok())
    }
}

impl std::fmt::Display for ErrorObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

impl std::error::Error for ErrorObject {}

wire_struct! {
    /// `data` of an `UnsupportedProtocolVersionError` (`-32022`).
    pub struct UnsupportedProtocolVersionData {
        /// Versions the server supports; the client retries with one of them.
        req supported: Vec<String> = "supported",
        /// The version the client asked for, echoed.
        req requested: String = "requested",
    }
}

wire_struct! {
    /// `data` of a `MissingRequiredClientCapabilityError` (`-32021`).
    pub struct MissingRequiredClientCapabilityData {
        /// The capabilities the request needs (an object, like `clientCapabilities`).
        req required_capabilities: ClientCapabilities = "requiredCapabilities",
    }
}

/// `-32700` error object (`ParseError`).
pub type ParseError = ErrorObject;
/// `-32600` error object (`InvalidRequestError`).
pub type InvalidRequestError = ErrorObject;
/// `-32601` error object (`MethodNotFoundError`).
pub type MethodNotFoundError = ErrorObject;
/// `-32602` error object (`InvalidParamsError`).
pub type InvalidParamsError = ErrorObject;
/// `-32603` error object (`InternalError`).
pub type InternalError = ErrorObject;
/// `-32020` error response (`HeaderMismatchError`).
pub type HeaderMismatchError = crate::method::JsonRpcErrorResponse;
/// `-32021` error response (`MissingRequiredClientCapabilityError`); `data` is
/// [`MissingRequiredClientCapabilityData`].
pub type MissingRequiredClientCapabilityError = crate::method::JsonRpcErrorResponse;
/// `-32022` error response (`UnsupportedProtocolVersionError`); `data` is
/// [`UnsupportedProtocolVersionData`].
pub type UnsupportedProtocolVersionError = crate::method::JsonRpcErrorResponse;
/// `-32042` error response of 2025-11-25 (`URLElicitationRequiredError`).
pub type UrlElicitationRequiredError = crate::method::JsonRpcErrorResponse;
