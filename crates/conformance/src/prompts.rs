//! The prompts, and completions for their arguments and for the template's `id`.

use mcp_server::{Args, Completions, Peer, PromptError, Prompts};
use mcp_types::{ContentBlock, ElicitRequestFormParams, ElicitationSchema, PromptMessage};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::PNG_BASE64;
use crate::asking::{accepted_string, describe, string_field};
use crate::resources::TEMPLATE;
use crate::tools::text_contents;

/// The values `arg1` of `test_prompt_with_arguments` completes from.
pub const ARG1_VALUES: [&str; 3] = ["test-value-1", "test-value-2", "testing"];

/// The values `id` of the resource template completes from.
pub const ID_VALUES: [&str; 3] = ["123", "456", "789"];

/// The prompt table.
pub fn prompts() -> Prompts {
    Prompts::new()
        .add("test_simple_prompt", "A simple prompt without arguments", simple)
        .add("test_prompt_with_arguments", "A prompt with required arguments", with_arguments)
        .add(
            "test_prompt_with_embedded_resource",
            "A prompt that includes an embedded resource",
            with_embedded_resource,
        )
        .add("test_prompt_with_image", "A prompt that includes an image", with_image)
        .add(
            "test_input_required_result_prompt",
            "A prompt that first asks the user for context (InputRequiredResult on 2026-07-28)",
            input_required,
        )
}

/// The completion handlers.
pub fn completions() -> Completions {
    Completions::new()
        .prompt_argument("test_prompt_with_arguments", "arg1", Completions::from_list(&ARG1_VALUES))
        .template_variable(TEMPLATE, "id", Completions::from_list(&ID_VALUES))
}

async fn simple() -> PromptMessage {
    PromptMessage::user(ContentBlock::text("This is a simple prompt for testing."))
}

#[derive(Deserialize, JsonSchema)]
struct TwoArguments {
    /// First test argument
    arg1: String,
    /// Second test argument
    arg2: String,
}

async fn with_arguments(Args(args): Args<TwoArguments>) -> String {
    format!("Prompt with arguments: arg1='{}', arg2='{}'", args.arg1, args.arg2)
}

#[derive(Deserialize, JsonSchema)]
struct ResourceArgument {
    /// URI of the resource to embed
    #[serde(rename = "resourceUri")]
    resource_uri: String,
}

async fn with_embedded_resource(Args(args): Args<ResourceArgument>) -> Vec<PromptMessage> {
    let contents = text_contents(&args.resource_uri, "text/plain", "Embedded resource content for testing.");
    vec![
        PromptMessage::user(ContentBlock::resource(contents)),
        PromptMessage::user(ContentBlock::text("Please process the embedded resource above.")),
    ]
}

async fn with_image() -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(ContentBlock::image(PNG_BASE64, "image/png")),
        PromptMessage::user(ContentBlock::text("Please analyze the image above.")),
    ]
}

/// Asks for `user_context` (a form with one `context` field), then builds the messages.
async fn input_required(peer: Peer) -> Result<Vec<PromptMessage>, PromptError> {
    let schema =
        ElicitationSchema::new().with_property("context", string_field("Context for the prompt"), true);
    let form = ElicitRequestFormParams::new("Please provide context for this prompt", schema);
    let answer = peer.elicit("user_context", form).await.map_err(|e| PromptError(e.to_string()))?;
    let context = match accepted_string(&answer, "context") {
        Some(context) => context.to_owned(),
        None => format!("(no context given: {})", describe(&answer)),
    };
    Ok(vec![PromptMessage::user(ContentBlock::text(format!("Answer with this context in mind: {context}")))])
}
