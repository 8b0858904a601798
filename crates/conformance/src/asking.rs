//! Tools that ask the client during the call — sampling and elicitation. One handler serves
//! both eras: in a legacy session [`Peer`] sends a real server→client request and awaits the
//! answer; on 2026-07-28 the router answers `input_required` and the retried request carries
//! the answer.

use mcp_server::{Args, AskError, Peer, ToolError, Tools};
use mcp_types::{
    BooleanSchema, CreateMessageRequestParams, CreateMessageResult, ElicitRequestFormParams, ElicitResult,
    ElicitationSchema, LegacyTitledEnumSchema, NumberKind, NumberSchema, SamplingContent, SamplingMessage,
    StringSchema, TitledEnumItems, TitledEnumOption, TitledMultiSelectEnumSchema,
    TitledSingleSelectEnumSchema, UntitledEnumItems, UntitledMultiSelectEnumSchema,
    UntitledSingleSelectEnumSchema,
};
use schemars::JsonSchema;
use serde::Deserialize;

/// Adds this module's tools.
pub fn register(tools: Tools) -> Tools {
    tools
        .add("test_sampling", "Tests server-initiated sampling (LLM completion request)", sampling)
        .add("test_elicitation", "Tests server-initiated elicitation (user input request)", elicitation)
        .add(
            "test_elicitation_sep1034_defaults",
            "Tests elicitation with default values for every primitive type (SEP-1034)",
            elicitation_defaults,
        )
        .add(
            "test_elicitation_sep1330_enums",
            "Tests elicitation with every enum schema variant (SEP-1330)",
            elicitation_enums,
        )
        .add(
            "test_missing_capability",
            "Needs the client's sampling capability; a 2026-07-28 request without it is refused with -32021",
            missing_capability,
        )
        .add(
            "test_streaming_elicitation",
            "Asks the user for input: input_required on 2026-07-28, never a server-to-client request",
            streaming_elicitation,
        )
}

/// A sampling request of one user text message.
pub(crate) fn text_sampling(prompt: &str, max_tokens: u64) -> CreateMessageRequestParams {
    CreateMessageRequestParams::new(vec![SamplingMessage::user(SamplingContent::text(prompt))], max_tokens)
}

/// The text the model produced (its text blocks, joined).
pub(crate) fn sampled_text(result: &CreateMessageResult) -> String {
    let texts: Vec<&str> = result.content.blocks().iter().filter_map(|b| b.as_text()).collect();
    texts.join("\n")
}

/// `action=<action>, content=<content as JSON>`.
pub(crate) fn describe(result: &ElicitResult) -> String {
    let content = serde_json::to_string(&result.content).unwrap_or_else(|_| "null".into());
    format!("action={}, content={content}", result.action)
}

/// A string field of an accepted form, if the user gave one.
pub(crate) fn accepted_string<'a>(result: &'a ElicitResult, field: &str) -> Option<&'a str> {
    let accepted = result.action == mcp_types::ElicitAction::Accept;
    result.content.as_ref().filter(|_| accepted)?.get(field)?.as_str()
}

/// A form field of free text.
pub(crate) fn string_field(description: &str) -> StringSchema {
    StringSchema { description: Some(description.to_owned()), ..Default::default() }
}

/// What the client could not do, as the tool's error result.
pub(crate) fn failed(what: &str, error: AskError) -> ToolError {
    ToolError::new(format!("{what} failed: {error}"))
}

#[derive(Deserialize, JsonSchema)]
struct SamplingArgs {
    /// The prompt to send to the LLM.
    prompt: String,
}

async fn sampling(peer: Peer, Args(args): Args<SamplingArgs>) -> Result<String, ToolError> {
    let answer = peer.sample("sampling", text_sampling(&args.prompt, 100)).await;
    let answer = answer.map_err(|e| failed("Sampling", e))?;
    Ok(format!("LLM response: {}", sampled_text(&answer)))
}

#[derive(Deserialize, JsonSchema)]
struct ElicitationArgs {
    /// The message to show the user.
    message: String,
}

async fn elicitation(peer: Peer, Args(args): Args<ElicitationArgs>) -> Result<String, ToolError> {
    let schema = ElicitationSchema::new()
        .with_property("username", string_field("User's response"), true)
        .with_property("email", string_field("User's email address"), true);
    let answer = peer.elicit("elicitation", ElicitRequestFormParams::new(args.message, schema)).await;
    let answer = answer.map_err(|e| failed("Elicitation", e))?;
    Ok(format!("User response: {}", describe(&answer)))
}

/// The SEP-1034 form: one field of each primitive type, each with a default.
pub fn defaults_schema() -> ElicitationSchema {
    let number = |kind, default: serde_json::Number| NumberSchema {
        default: Some(default),
        ..NumberSchema::new(kind)
    };
    let score = serde_json::Number::from_f64(95.5).expect("95.5 is finite");
    let status = UntitledSingleSelectEnumSchema {
        values: vec!["active".into(), "inactive".into(), "pending".into()],
        default: Some("active".into()),
        ..Default::default()
    };
    let mut schema = ElicitationSchema::new()
        .with_property("name", StringSchema { default: Some("John Doe".into()), ..Default::default() }, false)
        .with_property("age", number(NumberKind::Integer, 30.into()), false)
        .with_property("score", number(NumberKind::Number, score), false)
        .with_property("status", status, false)
        .with_property("verified", BooleanSchema { default: Some(true), ..Default::default() }, false);
    schema.required = Some(Vec::new());
    schema
}

async fn elicitation_defaults(peer: Peer) -> Result<String, ToolError> {
    let message = "Please review and update the form fields with defaults";
    let params = ElicitRequestFormParams::new(message, defaults_schema());
    let answer = peer.elicit("sep1034_defaults", params).await.map_err(|e| failed("Elicitation", e))?;
    Ok(format!("Elicitation completed: {}", describe(&answer)))
}

fn options(pairs: [(&str, &str); 3]) -> Vec<TitledEnumOption> {
    pairs.into_iter().map(|(value, title)| TitledEnumOption::new(value, title)).collect()
}

fn strings(values: [&str; 3]) -> Vec<String> {
    values.into_iter().map(str::to_owned).collect()
}

/// The SEP-1330 form: each of the five enum schema shapes.
pub fn enums_schema() -> ElicitationSchema {
    let untitled_single = UntitledSingleSelectEnumSchema {
        values: strings(["option1", "option2", "option3"]),
        ..Default::default()
    };
    let titled_single = TitledSingleSelectEnumSchema {
        one_of: options([
            ("value1", "First Option"),
            ("value2", "Second Option"),
            ("value3", "Third Option"),
        ]),
        ..Default::default()
    };
    let legacy = LegacyTitledEnumSchema {
        values: strings(["opt1", "opt2", "opt3"]),
        enum_names: Some(strings(["Option One", "Option Two", "Option Three"])),
        ..Default::default()
    };
    let untitled_multi = UntitledMultiSelectEnumSchema {
        min_items: Some(1),
        max_items: Some(3),
        items: UntitledEnumItems { values: strings(["option1", "option2", "option3"]), ..Default::default() },
        ..Default::default()
    };
    let titled_multi = TitledMultiSelectEnumSchema {
        items: TitledEnumItems {
            any_of: options([
                ("value1", "First Choice"),
                ("value2", "Second Choice"),
                ("value3", "Third Choice"),
            ]),
            ..Default::default()
        },
        ..Default::default()
    };
    ElicitationSchema::new()
        .with_property("untitledSingle", untitled_single, false)
        .with_property("titledSingle", titled_single, false)
        .with_property("legacyEnum", legacy, false)
        .with_property("untitledMulti", untitled_multi, false)
        .with_property("titledMulti", titled_multi, false)
}

async fn elicitation_enums(peer: Peer) -> Result<String, ToolError> {
    let params = ElicitRequestFormParams::new("Please choose from each kind of list", enums_schema());
    let answer = peer.elicit("sep1330_enums", params).await.map_err(|e| failed("Elicitation", e))?;
    Ok(format!("Elicitation completed: {}", describe(&answer)))
}

/// Asks for sampling whatever the client declared: the router refuses a 2026-07-28 request
/// without the capability (`-32021`, `requiredCapabilities: {sampling: {}}`); a legacy
/// session gets an error result.
async fn missing_capability(peer: Peer) -> Result<String, ToolError> {
    let params = text_sampling("This request needs the sampling capability.", 50);
    let answer = peer.sample("missing_capability", params).await.map_err(|e| failed("Sampling", e))?;
    Ok(format!("LLM response: {}", sampled_text(&answer)))
}

async fn streaming_elicitation(peer: Peer) -> Result<String, ToolError> {
    let confirmed = BooleanSchema { description: Some("Continue?".into()), ..Default::default() };
    let schema = ElicitationSchema::new().with_property("confirmed", confirmed, true);
    let params = ElicitRequestFormParams::new("Please confirm to continue", schema);
    let answer = peer.elicit("confirmation", params).await.map_err(|e| failed("Elicitation", e))?;
    Ok(format!("User response: {}", describe(&answer)))
}
