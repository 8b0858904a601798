//! The tools that answer by themselves: content of every kind, an error result, progress,
//! logging, and a tool whose raw JSON Schema 2020-12 input schema must be listed unchanged.

use std::time::Duration;

use mcp_server::{Call, Log, Progress, ToolError, Tools};
use mcp_types::{CallToolResult, ContentBlock, JsonObject, JsonValue, TextResourceContents, Tool};
use serde_json::json;

use crate::{PNG_BASE64, WAV_BASE64};

/// The pause between the steps of the progress and logging tools.
const STEP: Duration = Duration::from_millis(50);

/// Adds this module's tools.
pub fn register(tools: Tools) -> Tools {
    tools
        .add("test_simple_text", "Tests simple text content response", simple_text)
        .add("test_image_content", "Tests image content response", image_content)
        .add("test_audio_content", "Tests audio content response", audio_content)
        .add("test_embedded_resource", "Tests embedded resource content response", embedded_resource)
        .add(
            "test_multiple_content_types",
            "Tests response with multiple content types (text, image, resource)",
            multiple_content_types,
        )
        .add("test_error_handling", "Tests error response handling", error_handling)
        .add("test_tool_with_progress", "Tests tool that reports progress notifications", with_progress)
        .add("test_tool_with_logging", "Tests tool that emits log messages during execution", with_logging)
        .add(
            "test_logging_tool",
            "Logs while it runs; a 2026-07-28 request without a logLevel receives no log messages",
            logging_tool,
        )
        .add(
            "test_reconnection",
            "Tests resuming a response stream; over stdio it simply answers after a short delay",
            reconnection,
        )
        .add_dyn(json_schema_tool(), echo_arguments)
        .add(
            "test_custom_header",
            "Echoes a value the client mirrors into the Mcp-Param-Value header",
            custom_header,
        )
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct CustomHeaderArgs {
    /// Mirrored into the `Mcp-Param-Value` HTTP header (SEP-2243).
    #[schemars(extend("x-mcp-header" = "Value"))]
    value: String,
}

/// A tool with an `x-mcp-header` parameter: the transport checks the header against the body.
async fn custom_header(
    mcp_server::Args(CustomHeaderArgs { value }): mcp_server::Args<CustomHeaderArgs>,
) -> String {
    format!("value: {value}")
}

async fn simple_text() -> &'static str {
    "This is a simple text response for testing."
}

async fn image_content() -> ContentBlock {
    ContentBlock::image(PNG_BASE64, "image/png")
}

async fn audio_content() -> ContentBlock {
    ContentBlock::audio(WAV_BASE64, "audio/wav")
}

/// Text contents of a resource with a MIME type.
pub(crate) fn text_contents(uri: &str, mime_type: &str, text: &str) -> TextResourceContents {
    TextResourceContents { mime_type: Some(mime_type.to_owned()), ..TextResourceContents::new(uri, text) }
}

async fn embedded_resource() -> ContentBlock {
    ContentBlock::resource(text_contents(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    ))
}

async fn multiple_content_types() -> Vec<ContentBlock> {
    vec![
        ContentBlock::text("Multiple content types test:"),
        ContentBlock::image(PNG_BASE64, "image/png"),
        ContentBlock::resource(text_contents(
            "test://mixed-content-resource",
            "application/json",
            r#"{"test":"data","value":123}"#,
        )),
    ]
}

/// A tool failure is a result with `isError: true`, not a JSON-RPC error.
async fn error_handling() -> ToolError {
    ToolError::new("This tool intentionally returns an error for testing")
}

async fn with_progress(progress: Progress) -> &'static str {
    for (step, value) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if step > 0 {
            tokio::time::sleep(STEP).await;
        }
        progress.report(value, Some(100.0), Some(&format!("Step {} of 3", step + 1))).await;
    }
    "Progress test completed"
}

async fn with_logging(log: Log) -> &'static str {
    let messages = ["Tool execution started", "Tool processing data", "Tool execution completed"];
    for (step, message) in messages.into_iter().enumerate() {
        if step > 0 {
            tokio::time::sleep(STEP).await;
        }
        log.info(message).await;
    }
    "Logging test completed"
}

/// Answers fast (the suite expects this response within 500 ms); whether its log messages
/// are sent is the router's decision, made from the request's `logLevel`.
async fn logging_tool(log: Log) -> &'static str {
    log.info("test_logging_tool started").await;
    log.debug("test_logging_tool is working").await;
    log.info("test_logging_tool finished").await;
    "Logging tool completed"
}

/// Ends its response stream at once (legacy Streamable HTTP resumes it: the client reconnects
/// with `GET` + `Last-Event-ID` after the `retry` delay and receives the result there), then
/// answers after a pause. Where streams are not resumable (stdio, modern HTTP) the close is a
/// no-op and the tool simply answers after the pause.
async fn reconnection(stream: mcp_server::ResponseStream) -> &'static str {
    stream.close();
    tokio::time::sleep(Duration::from_millis(200)).await;
    "Reconnection test completed"
}

/// The input schema of `json_schema_2020_12_tool`: JSON Schema 2020-12 keywords a client
/// must receive unchanged (`$schema`, `$defs` with an `$anchor`, `$ref`, `allOf`/`anyOf`,
/// `if`/`then`/`else`, `additionalProperties`).
pub fn json_schema_2020_12() -> JsonObject {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {
                    "street": {"type": "string"},
                    "city": {"type": "string"},
                    "postalCode": {"type": "string"}
                },
                "required": ["street", "city"]
            }
        },
        "properties": {
            "name": {"type": "string", "description": "The contact's name"},
            "address": {"$ref": "#/$defs/address"},
            "phone": {"type": "string"},
            "email": {"type": "string"},
            "contactType": {"type": "string", "enum": ["personal", "business"]},
            "company": {"type": "string"}
        },
        "required": ["name"],
        "allOf": [
            {"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}
        ],
        "if": {
            "properties": {"contactType": {"const": "business"}},
            "required": ["contactType"]
        },
        "then": {"required": ["company"]},
        "else": {"not": {"required": ["company"]}},
        "additionalProperties": false
    });
    match schema {
        JsonValue::Object(object) => object,
        _ => unreachable!("the schema literal is an object"),
    }
}

fn json_schema_tool() -> Tool {
    Tool::new("json_schema_2020_12_tool", json_schema_2020_12()).with_description(
        "Tests that a JSON Schema 2020-12 input schema ($defs, $ref, allOf, if/then/else) is listed unchanged",
    )
}

/// Echoes the (already schema-validated) arguments.
async fn echo_arguments(mut call: Call) -> Result<CallToolResult, ToolError> {
    let arguments = JsonValue::Object(call.arguments());
    Ok(CallToolResult::text(format!("Received arguments: {arguments}")))
}
