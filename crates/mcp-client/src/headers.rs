//! SEP-2243 on the client. The rules (which arguments are mirrored into `Mcp-Param-*` headers,
//! which annotations make a tool invalid, how values are encoded) live in
//! [`mcp_types::headers`], shared with the server; this module names the parts the client
//! uses. A tool whose annotations are invalid is dropped from `tools/list` on HTTP
//! (`client::tools`); a call carries [`header_values`] of its arguments.

pub use mcp_types::headers::{InvalidAnnotation, ParamHeader, encode_value, header_values, param_headers};
