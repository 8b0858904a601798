//! The `test_input_required_result_*` tools: multi round-trip requests (MRTR, 2026-07-28).
//!
//! Each handler simply asks [`Peer`] for what it needs. On a first call the router answers
//! `input_required` with the questions and an integrity-protected `requestState`; the retry
//! carries the answers and runs the handler again from the start, and this time the questions
//! are answered at once. Questions asked together (`tokio::join!`) land in one
//! `InputRequiredResult`; questions asked one after the other take one round each.

use mcp_server::{ClientCaps, Peer, ToolError, Tools};
use mcp_types::{
    BooleanSchema, ElicitRequestFormParams, ElicitResult, ElicitationCapability, ElicitationSchema,
    ListRootsResult, StringSchema,
};

use crate::asking::{accepted_string, describe, failed, sampled_text, text_sampling};

/// Adds this module's tools.
pub fn register(tools: Tools) -> Tools {
    tools
        .add(
            "test_input_required_result_elicitation",
            "Asks the user's name through an InputRequiredResult (elicitation)",
            elicitation,
        )
        .add(
            "test_input_required_result_sampling",
            "Asks the client's model a question through an InputRequiredResult (sampling)",
            sampling,
        )
        .add(
            "test_input_required_result_list_roots",
            "Asks for the client's roots through an InputRequiredResult",
            list_roots,
        )
        .add(
            "test_input_required_result_request_state",
            "Asks for a confirmation; the answer must come back with the requestState",
            request_state,
        )
        .add(
            "test_input_required_result_multiple_inputs",
            "Asks for elicitation, sampling and roots at once, in one InputRequiredResult",
            multiple_inputs,
        )
        .add(
            "test_input_required_result_multi_round",
            "Asks two questions one after the other: two rounds of input_required",
            multi_round,
        )
        .add(
            "test_input_required_result_tampered_state",
            "Asks for a confirmation; a retry with an altered requestState is refused",
            tampered_state,
        )
        .add(
            "test_input_required_result_capabilities",
            "Asks only for what the client declared: sampling and/or elicitation",
            capabilities,
        )
}

/// `What is your name?` with one required string field, `name`.
pub fn name_form() -> ElicitRequestFormParams {
    let schema = ElicitationSchema::new().with_property("name", StringSchema::default(), true);
    ElicitRequestFormParams::new("What is your name?", schema)
}

/// A confirmation form with one required boolean field.
fn confirm_form(message: &str, field: &str) -> ElicitRequestFormParams {
    let schema = ElicitationSchema::new().with_property(field, BooleanSchema::default(), true);
    ElicitRequestFormParams::new(message, schema)
}

/// `Hello, <name>!` for an accepted form with a name; an error result otherwise.
fn greet(answer: &ElicitResult) -> Result<String, ToolError> {
    match accepted_string(answer, "name") {
        Some(name) => Ok(format!("Hello, {name}!")),
        None => Err(ToolError::new(format!("No name was given: {}", describe(answer)))),
    }
}

fn roots_text(roots: &ListRootsResult) -> String {
    let listed: Vec<String> = roots
        .roots
        .iter()
        .map(|r| match &r.name {
            Some(name) => format!("{} ({name})", r.uri),
            None => r.uri.clone(),
        })
        .collect();
    format!("Client roots: [{}]", listed.join(", "))
}

async fn elicitation(peer: Peer) -> Result<String, ToolError> {
    let answer = peer.elicit("user_name", name_form()).await.map_err(|e| failed("Elicitation", e))?;
    greet(&answer)
}

async fn sampling(peer: Peer) -> Result<String, ToolError> {
    let params = text_sampling("What is the capital of France?", 100);
    let answer = peer.sample("sample_request", params).await.map_err(|e| failed("Sampling", e))?;
    Ok(format!("Sampling result: {}", sampled_text(&answer)))
}

async fn list_roots(peer: Peer) -> Result<String, ToolError> {
    let roots = peer.roots("client_roots").await.map_err(|e| failed("Listing roots", e))?;
    Ok(roots_text(&roots))
}

async fn request_state(peer: Peer) -> Result<String, ToolError> {
    let form = confirm_form("Please confirm to continue", "ok");
    let answer = peer.elicit("confirm", form).await.map_err(|e| failed("Elicitation", e))?;
    let ok = answer.content.as_ref().and_then(|c| c.get("ok")).and_then(|v| v.as_bool());
    Ok(format!(
        "state-ok: the confirmation came back with the request state (ok={ok:?}, {})",
        describe(&answer)
    ))
}

async fn multiple_inputs(peer: Peer) -> Result<String, ToolError> {
    let (name, greeting, roots) = tokio::join!(
        peer.elicit("user_name", name_form()),
        peer.sample("greeting", text_sampling("Write a short greeting.", 100)),
        peer.roots("client_roots"),
    );
    let name = name.map_err(|e| failed("Elicitation", e))?;
    let greeting = greeting.map_err(|e| failed("Sampling", e))?;
    let roots = roots.map_err(|e| failed("Listing roots", e))?;
    Ok(format!("{} Greeting: {}. {}", greet(&name)?, sampled_text(&greeting), roots_text(&roots)))
}

async fn multi_round(peer: Peer) -> Result<String, ToolError> {
    let first = peer.elicit("step1", name_form()).await.map_err(|e| failed("Step 1", e))?;
    let color = ElicitationSchema::new().with_property("color", StringSchema::default(), true);
    let form = ElicitRequestFormParams::new("What is your favorite color?", color);
    let second = peer.elicit("step2", form).await.map_err(|e| failed("Step 2", e))?;
    Ok(format!("Both rounds completed: step1 {}; step2 {}", describe(&first), describe(&second)))
}

async fn tampered_state(peer: Peer) -> Result<String, ToolError> {
    let form = confirm_form("Please confirm to continue", "confirmed");
    let answer = peer.elicit("confirm", form).await.map_err(|e| failed("Elicitation", e))?;
    Ok(format!("The request state was intact: {}", describe(&answer)))
}

/// Asks for sampling only when the client declared it, and for elicitation only when it
/// declared that; both at once when it declared both.
async fn capabilities(ClientCaps(caps): ClientCaps, peer: Peer) -> Result<String, ToolError> {
    let sampling_declared = caps.sampling.is_some();
    let form_declared = caps.elicitation.as_ref().is_some_and(ElicitationCapability::supports_form);
    let sampling = async {
        if sampling_declared {
            Some(peer.sample("capability_sampling", text_sampling("Say hello.", 50)).await)
        } else {
            None
        }
    };
    let elicitation = async {
        if form_declared { Some(peer.elicit("capability_elicitation", name_form()).await) } else { None }
    };
    let (sampled, elicited) = tokio::join!(sampling, elicitation);
    let mut used = Vec::new();
    if let Some(answer) = sampled {
        let answer = answer.map_err(|e| failed("Sampling", e))?;
        used.push(format!("sampling: {}", sampled_text(&answer)));
    }
    if let Some(answer) = elicited {
        let answer = answer.map_err(|e| failed("Elicitation", e))?;
        used.push(format!("elicitation: {}", describe(&answer)));
    }
    if used.is_empty() {
        return Ok("The client declared neither sampling nor elicitation; nothing was asked".into());
    }
    Ok(format!("Used the declared capabilities: {}", used.join("; ")))
}
