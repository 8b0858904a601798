//! What a tool returns, and how it becomes a `CallToolResult`.

use mcp_types::{CallToolResult, ContentBlock, JsonObject, JsonValue};
use schemars::JsonSchema;
use serde::Serialize;

/// Structured output: serialized into `structuredContent` (and, for clients that predate
/// structured output, also as a text block); `T`'s schema becomes the tool's `outputSchema`.
#[derive(Debug, Clone)]
pub struct Json<T>(pub T);

/// A tool failure: reported to the model as a result with `isError: true`, not as a protocol
/// error. Any `std::error::Error` converts into it, so handlers can use `?`.
#[derive(Debug, Clone)]
pub struct ToolError {
    content: Vec<ContentBlock>,
}

impl ToolError {
    /// A failure described by a message.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError { content: vec![ContentBlock::text(message.into())] }
    }

    /// A failure described by arbitrary content.
    pub fn with_content(content: Vec<ContentBlock>) -> Self {
        ToolError { content }
    }

    /// The `isError: true` result.
    pub fn into_result(self) -> CallToolResult {
        let mut result = CallToolResult::new(self.content);
        result.is_error = Some(true);
        result
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text: Vec<&str> = self.content.iter().filter_map(ContentBlock::as_text).collect();
        f.write_str(&text.join(" "))
    }
}

impl<E: std::error::Error> From<E> for ToolError {
    fn from(e: E) -> Self {
        ToolError::new(e.to_string())
    }
}

/// Converts a handler's return value into a tool result.
pub trait IntoToolResult: Send + 'static {
    /// The result.
    fn into_tool_result(self) -> CallToolResult;

    /// The `outputSchema` this return type guarantees, if any.
    fn output_schema() -> Option<JsonObject> {
        None
    }
}

impl IntoToolResult for CallToolResult {
    fn into_tool_result(self) -> CallToolResult {
        self
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::text(self)
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::text(self)
    }
}

impl IntoToolResult for ContentBlock {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::new(vec![self])
    }
}

impl IntoToolResult for Vec<ContentBlock> {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::new(self)
    }
}

impl IntoToolResult for () {
    fn into_tool_result(self) -> CallToolResult {
        CallToolResult::new(Vec::new())
    }
}

impl IntoToolResult for ToolError {
    fn into_tool_result(self) -> CallToolResult {
        self.into_result()
    }
}

impl<T: Serialize + JsonSchema + Send + 'static> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> CallToolResult {
        match serde_json::to_value(&self.0) {
            Ok(value) => {
                // The text block carries the same JSON for clients without structured output.
                let text = value.to_string();
                let mut result = CallToolResult::new(vec![ContentBlock::text(text)]);
                result.structured_content = Some(value);
                result
            }
            Err(e) => ToolError::new(format!("the tool's output could not be serialized: {e}")).into_result(),
        }
    }

    fn output_schema() -> Option<JsonObject> {
        Some(crate::schema::schema_for::<T>())
    }
}

impl<T: IntoToolResult, E: Into<ToolError> + Send + 'static> IntoToolResult for Result<T, E> {
    fn into_tool_result(self) -> CallToolResult {
        match self {
            Ok(t) => t.into_tool_result(),
            Err(e) => e.into().into_result(),
        }
    }

    fn output_schema() -> Option<JsonObject> {
        T::output_schema()
    }
}

impl From<JsonValue> for Json<JsonValue> {
    fn from(value: JsonValue) -> Self {
        Json(value)
    }
}
