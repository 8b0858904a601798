//! The demonstration server of `mcpkit serve`: a handful of tools, resources and prompts that
//! show what MCP can do — structured output, progress, cancellation, elicitation, sampling,
//! errors, templated resources and completion — for people trying MCP clients.

use std::time::Duration;

use mcp_server::{
    Args, Cancel, Completions, Json, Log, Peer, Progress, Prompts, Resources, Server, TaskHandle, ToolError,
    Tools, UriVars,
};
use mcp_types::extensions::ui::{ResourceUi, ToolUi};
use mcp_types::{
    CreateMessageRequestParams, ElicitAction, ElicitRequestFormParams, ElicitationSchema,
    PrimitiveSchemaDefinition, PromptMessage, Resource, ResourceTemplate, Role, SamplingContent,
    SamplingMessage, StringSchema, TaskSupport, Tool, ToolAnnotations,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    text: String,
}

/// Returns its `text` argument as one text block.
async fn echo(Args(EchoArgs { text }): Args<EchoArgs>) -> String {
    text
}

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    /// The first addend.
    a: f64,
    /// The second addend.
    b: f64,
}

#[derive(Serialize, JsonSchema)]
struct Sum {
    /// a + b
    sum: f64,
}

/// Structured output: the result also comes as `structuredContent` matching `outputSchema`.
async fn add(Args(AddArgs { a, b }): Args<AddArgs>) -> Json<Sum> {
    Json(Sum { sum: a + b })
}

#[derive(Deserialize, JsonSchema)]
struct CountdownArgs {
    /// How many seconds to count down (at most 60).
    seconds: u32,
}

/// Progress and cancellation: reports progress every second; cancel it and it stops.
async fn countdown(
    progress: Progress,
    cancel: Cancel,
    log: Log,
    Args(CountdownArgs { seconds }): Args<CountdownArgs>,
) -> Result<String, ToolError> {
    let seconds = seconds.min(60);
    for done in 0..seconds {
        progress
            .report(f64::from(done), Some(f64::from(seconds)), Some(&format!("{} s left", seconds - done)))
            .await;
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(1)) => {}
            _ = cancel.cancelled() => return Err(ToolError::new("cancelled")),
        }
    }
    progress.report(f64::from(seconds), Some(f64::from(seconds)), Some("lift-off")).await;
    log.info(format!("countdown of {seconds} s finished")).await;
    Ok("Lift-off!".to_owned())
}

/// Elicitation: asks the user for their name (a form), in either protocol era.
async fn greet_me(client: Peer) -> Result<String, ToolError> {
    let mut schema = ElicitationSchema::default();
    let name = StringSchema { description: Some("Your name".to_owned()), ..Default::default() };
    schema.properties.insert("name".to_owned(), PrimitiveSchemaDefinition::String(name));
    schema.required = Some(vec!["name".to_owned()]);
    let answer = client.elicit("name", ElicitRequestFormParams::new("What is your name?", schema)).await?;
    match answer.action {
        ElicitAction::Accept => {
            let name = answer
                .content
                .as_ref()
                .and_then(|c| c.get("name"))
                .and_then(|v| v.as_str())
                .unwrap_or("stranger");
            Ok(format!("Hello, {name}!"))
        }
        other => Err(ToolError::new(format!("no name given ({other})"))),
    }
}

/// The clock's app.
const CLOCK_URI: &str = "ui://mcpkit-demo/clock.html";

/// MCP Apps: the time, as text for any client and in an app for a host that renders apps.
async fn clock() -> String {
    format!("It is {} (UTC).", mcp_types::time::rfc3339(std::time::SystemTime::now()))
}

/// The clock's app: it shows the tool's result, sent by the host (`ui/notifications/tool-result`).
const CLOCK_HTML: &str = r#"<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>mcpkit clock</title>
<style>body{font:2rem system-ui,sans-serif;margin:1rem;text-align:center}</style></head>
<body><p id="time">…</p>
<script>
window.addEventListener("message", (event) => {
  const message = event.data || {};
  if (message.method === "ui/notifications/tool-result") {
    const text = (message.params?.content || []).find((c) => c.type === "text");
    if (text) document.getElementById("time").textContent = text.text;
  }
});
window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} }, "*");
</script></body>
</html>
"#;

#[derive(Deserialize, JsonSchema)]
struct ReportArgs {
    /// How many seconds the report takes (at most 600).
    seconds: u32,
}

/// Tasks: a long job that becomes a task for a client that takes tasks (it is polled, and can
/// be cancelled with `tasks/cancel`); it asks, as the task, whether to add the details.
async fn report(
    task: TaskHandle,
    client: Peer,
    Args(ReportArgs { seconds }): Args<ReportArgs>,
) -> Result<String, ToolError> {
    task.detach().await;
    tokio::time::sleep(Duration::from_secs(u64::from(seconds.min(600)))).await;
    let mut schema = ElicitationSchema::default();
    schema.properties.insert("details".to_owned(), PrimitiveSchemaDefinition::Boolean(Default::default()));
    schema.required = Some(vec!["details".to_owned()]);
    let form = ElicitRequestFormParams::new("The report is ready. Add the details?", schema);
    let details = match client.elicit("details", form).await {
        Ok(answer) => {
            answer.action == ElicitAction::Accept
                && answer.content.as_ref().and_then(|c| c.get("details")).and_then(|v| v.as_bool())
                    == Some(true)
        }
        // A client that cannot answer gets the short report.
        Err(mcp_server::AskError::Unsupported(_)) => false,
        Err(e) => return Err(e.into()),
    };
    let id = task.id().map(|id| format!(" (task {id})")).unwrap_or_default();
    Ok(if details {
        format!("Report after {seconds} s{id}: all went well. Details: nothing to add.")
    } else {
        format!("Report after {seconds} s{id}: all went well.")
    })
}

#[derive(Deserialize, JsonSchema)]
struct HaikuArgs {
    /// What the haiku is about.
    topic: String,
}

/// Sampling: asks the client's model to write a haiku.
async fn haiku(client: Peer, Args(HaikuArgs { topic }): Args<HaikuArgs>) -> Result<String, ToolError> {
    let message =
        SamplingMessage::new(Role::User, SamplingContent::text(format!("Write a haiku about {topic}.")));
    let answer = client.sample("haiku", CreateMessageRequestParams::new(vec![message], 200)).await?;
    Ok(answer.content.blocks().iter().filter_map(|b| b.as_text()).collect::<Vec<_>>().join("\n"))
}

/// Roots: lists the directories and files the client shares (`--root` in mcpkit's client).
async fn roots(client: Peer) -> Result<String, ToolError> {
    let list = client.roots("roots").await?;
    if list.roots.is_empty() {
        return Ok("The client shares no roots.".to_owned());
    }
    let lines: Vec<String> = list
        .roots
        .iter()
        .map(|r| match &r.name {
            Some(name) => format!("{name}: {}", r.uri),
            None => r.uri.clone(),
        })
        .collect();
    Ok(lines.join("\n"))
}

#[derive(Deserialize, JsonSchema)]
struct FailArgs {
    /// What went wrong.
    reason: Option<String>,
}

/// Errors: a tool failure is a result with `isError: true`, which the model can read.
async fn fail(Args(FailArgs { reason }): Args<FailArgs>) -> Result<String, ToolError> {
    Err(ToolError::new(reason.unwrap_or_else(|| "this tool always fails".to_owned())))
}

#[derive(Deserialize, JsonSchema)]
struct PoemArgs {
    /// The subject of the poem.
    subject: String,
    /// A style: haiku, limerick or sonnet.
    style: Option<String>,
}

async fn poem_prompt(Args(PoemArgs { subject, style }): Args<PoemArgs>) -> Vec<PromptMessage> {
    let style = style.unwrap_or_else(|| "haiku".to_owned());
    vec![PromptMessage::user(format!("Write a {style} about {subject}."))]
}

async fn note(vars: UriVars) -> String {
    let id = vars.get("id").unwrap_or_default();
    format!("Note {id}: remember to try `mcpkit list tools`.")
}

/// The demonstration server, deciding who may see and use what by `policy` when given, and
/// serving the skills under `skills` when given.
pub(crate) fn server(
    policy: Option<std::sync::Arc<dyn mcp_server::policy::Policy>>,
    skills: Option<&std::path::Path>,
) -> Result<Server, mcp_server::BuildError> {
    let read_only = ToolAnnotations { read_only_hint: Some(true), ..Default::default() };
    let tools = Tools::new()
        .add_tool(
            Tool::without_arguments("echo")
                .with_description("Return the text argument unchanged")
                .with_annotations(read_only.clone()),
            echo,
        )
        .add_tool(
            Tool::without_arguments("add").with_description("Add two numbers").with_annotations(read_only),
            add,
        )
        .add("countdown", "Count down, reporting progress each second; cancellable", countdown)
        .add("greet_me", "Ask the user for their name (elicitation)", greet_me)
        .add("haiku", "Ask the client's model for a haiku (sampling)", haiku)
        .add("roots", "List the client's roots (roots)", roots)
        .add("fail", "Always fails, with isError: true", fail)
        .add_tool(
            Tool::without_arguments("clock")
                .with_description("The time, shown in an app (MCP Apps) by hosts that render apps")
                .with_ui(ToolUi::new(CLOCK_URI)),
            clock,
        )
        .add_tool(
            Tool::without_arguments("report")
                .with_description("Work SECONDS, then ask whether to add the details")
                .with_task_support(TaskSupport::Optional),
            report,
        );
    let resources = Resources::new()
        .text(
            Resource::new("demo://readme", "readme")
                .with_mime_type("text/markdown")
                .with_description("About this server"),
            "# mcpkit demo\n\nTools: echo, add, countdown, greet_me, haiku, roots, fail, report, clock.\n",
        )
        .template(
            ResourceTemplate::new("demo://notes/{id}", "note")
                .with_mime_type("text/plain")
                .with_description("A note by id"),
            note,
        );
    let resources = resources.app(
        Resource::new(CLOCK_URI, "clock").with_description("The clock tool's app"),
        CLOCK_HTML,
        ResourceUi { prefers_border: Some(true), ..Default::default() },
    );
    let prompts = Prompts::new().add("poem", "Ask for a poem about a subject", poem_prompt);
    let completions = Completions::new()
        .prompt_argument("poem", "style", Completions::from_list(&["haiku", "limerick", "sonnet"]))
        .template_variable("demo://notes/{id}", "id", Completions::from_list(&["1", "2", "3", "42"]));
    let builder = Server::builder("mcpkit-demo", env!("CARGO_PKG_VERSION"));
    let builder = match policy {
        Some(policy) => builder.policy(policy),
        None => builder,
    };
    let builder = match skills {
        Some(dir) => builder.skills(mcp_server::Skills::from_dir(dir)),
        None => builder,
    };
    builder
        .title("mcpkit demonstration server")
        .instructions("A demonstration server: try echo, add, countdown (progress), greet_me (elicitation), haiku (sampling), roots (roots), fail (errors), report (a task) and clock (an app).")
        .tools(tools)
        .resources(resources)
        .prompts(prompts)
        .completions(completions)
        .build()
}
