//! The tasks extension's fixtures (`io.modelcontextprotocol/tasks`, SEP-2663): tools that
//! become tasks for a client that declares the extension, as the suite's `tasks-*` scenarios
//! name them.
//!
//! Each is an ordinary handler registered with task support (`Tool::with_task_support`): the
//! call becomes a task the first time the handler waits, or where it calls
//! [`TaskHandle::detach`] (a handler whose first wait is a question, which would otherwise be
//! an MRTR round of the call itself). What it asks afterwards is the task's `inputRequests`.

use std::time::Duration;

use mcp_server::{Args, Peer, TaskHandle, ToolError, Tools};
use mcp_types::{BooleanSchema, ElicitRequestFormParams, ElicitationSchema, TaskSupport, Tool};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::asking::{accepted_string, describe, failed};
use crate::input_required::name_form;

/// Adds this module's tools.
pub fn register(tools: Tools) -> Tools {
    let tool = |name: &str, description: &str, support: TaskSupport| {
        Tool::without_arguments(name).with_description(description).with_task_support(support)
    };
    tools
        .add("greet", "Says hello to NAME, at once (never a task)", greet)
        .add_tool(
            tool(
                "slow_compute",
                "Sleeps SECONDS, then says so; a task when the client takes tasks",
                TaskSupport::Optional,
            ),
            slow_compute,
        )
        .add_tool(
            tool(
                "failing_job",
                "Fails (a tool error) after about a second; only as a task",
                TaskSupport::Required,
            ),
            failing_job,
        )
        .add_tool(
            tool("protocol_error_job", "Crashes after a moment: its task fails", TaskSupport::Optional),
            protocol_error_job,
        )
        .add_tool(
            tool("confirm_delete", "Asks, as a task, whether to delete FILENAME", TaskSupport::Optional),
            confirm_delete,
        )
        .add_tool(
            tool("multi_input", "Asks, as a task, two questions at once", TaskSupport::Optional),
            multi_input,
        )
        .add_tool(
            tool(
                "test_tool_with_task",
                "Asks the user's name (MRTR), then greets them as a task",
                TaskSupport::Required,
            ),
            tool_with_task,
        )
}

#[derive(Deserialize, JsonSchema)]
struct GreetArgs {
    /// Who to greet.
    name: String,
}

async fn greet(Args(GreetArgs { name }): Args<GreetArgs>) -> String {
    format!("Hello, {name}!")
}

#[derive(Deserialize, JsonSchema)]
struct SlowArgs {
    /// How long to work, in seconds (0: answer at once).
    seconds: f64,
    /// A label to echo back.
    #[serde(default)]
    label: Option<String>,
}

async fn slow_compute(Args(SlowArgs { seconds, label }): Args<SlowArgs>) -> Result<String, ToolError> {
    if !(0.0..=3600.0).contains(&seconds) {
        return Err(ToolError::new("seconds must be between 0 and 3600"));
    }
    if seconds > 0.0 {
        tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
    }
    let label = label.map(|l| format!(" ({l})")).unwrap_or_default();
    Ok(format!("Computed for {seconds} s{label}"))
}

async fn failing_job() -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err(ToolError::new("The job failed: the input could not be processed"))
}

async fn protocol_error_job() -> String {
    tokio::time::sleep(Duration::from_millis(100)).await;
    panic!("protocol_error_job crashes on purpose");
}

fn confirm_form(message: String) -> ElicitRequestFormParams {
    let schema = ElicitationSchema::new().with_property("confirm", BooleanSchema::default(), true);
    ElicitRequestFormParams::new(message, schema)
}

fn confirmed(answer: &mcp_types::ElicitResult) -> bool {
    answer.action == mcp_types::ElicitAction::Accept
        && answer.content.as_ref().and_then(|c| c.get("confirm")).and_then(|v| v.as_bool()) == Some(true)
}

#[derive(Deserialize, JsonSchema)]
struct DeleteArgs {
    /// The file to delete.
    filename: String,
}

async fn confirm_delete(
    task: TaskHandle,
    peer: Peer,
    Args(DeleteArgs { filename }): Args<DeleteArgs>,
) -> Result<String, ToolError> {
    task.detach().await;
    let answer = peer
        .elicit("confirm", confirm_form(format!("Delete {filename}?")))
        .await
        .map_err(|e| failed("Elicitation", e))?;
    Ok(if confirmed(&answer) { format!("Deleted {filename}") } else { format!("Kept {filename}") })
}

async fn multi_input(task: TaskHandle, peer: Peer) -> Result<String, ToolError> {
    task.detach().await;
    let (first, second) = tokio::join!(
        peer.elicit("first", confirm_form("Go on with the first step?".into())),
        peer.elicit("second", confirm_form("Go on with the second step?".into())),
    );
    let first = first.map_err(|e| failed("Elicitation", e))?;
    let second = second.map_err(|e| failed("Elicitation", e))?;
    Ok(format!("first: {}; second: {}", describe(&first), describe(&second)))
}

async fn tool_with_task(task: TaskHandle, peer: Peer) -> Result<String, ToolError> {
    // Asked before the task exists: an MRTR round of the call itself.
    let answer = peer.elicit("user_name", name_form()).await.map_err(|e| failed("Elicitation", e))?;
    let Some(name) = accepted_string(&answer, "name").map(str::to_owned) else {
        return Err(ToolError::new(format!("No name was given: {}", describe(&answer))));
    };
    task.detach().await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    Ok(format!("Hello, {name}! (greeted by a task)"))
}
