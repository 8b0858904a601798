//! Tasks (the tasks extension) from the shell: `call --detach` prints the task a call became
//! instead of following it, and `mcpkit task get|wait|cancel ID` polls, follows or cancels it.

use std::process::ExitCode;

use mcp_client::{Client, RequestOptions};
use mcp_types::extensions::tasks::{TaskResult, TaskStatus};
use serde_json::Value;

use crate::output;
use crate::status::Status;

/// What `mcpkit task` does with a task.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub(crate) enum Action {
    /// Its state, with its result (or error) once it has one.
    Get,
    /// Follow it to its end, answering its questions, and print its result as `call` does.
    Wait,
    /// Ask the server to stop it.
    Cancel,
}

/// `task ID: working` with the server's message, for a person (and the progress line).
pub(crate) fn line(task: &TaskResult) -> String {
    let mut line = format!("task {}: {}", task.task_id, task.status.as_str());
    if let Some(message) = task.status_message.as_deref() {
        let message: String = message.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
        if !message.trim().is_empty() {
            line.push_str(" — ");
            line.push_str(message.trim());
        }
    }
    if let Some(asked) = task.input_requests.as_ref().filter(|r| !r.is_empty()) {
        let keys: Vec<&str> = asked.keys().map(String::as_str).collect();
        line.push_str(&format!(" (asks: {})", keys.join(", ")));
    }
    line
}

/// Prints a task: its JSON with `json`, else its state line, then its result (as `call`
/// prints one) or its error. The exit status says how it ended: 0 working or completed, 1 a
/// tool error, 4 failed or cancelled.
pub(crate) fn print(json: bool, task: &TaskResult) -> anyhow::Result<ExitCode> {
    if json {
        output::print(true, &serde_json::to_value(task)?, |_| String::new())?;
    } else {
        let mut text = line(task);
        if let Some(result) = &task.result {
            text.push('\n');
            text.push_str(&output::call(&Value::Object(result.clone())));
        }
        if let Some(error) = &task.error {
            text.push_str(&format!("\nerror {}: {}", error.code, crate::terminal::line(&error.message)));
        }
        output::write_text(&text)?;
    }
    Ok(match task.status {
        TaskStatus::Completed
            if task.result.as_ref().and_then(|r| r.get("isError")) == Some(&Value::Bool(true)) =>
        {
            Status::ToolError.exit_code()
        }
        TaskStatus::Failed | TaskStatus::Cancelled => Status::Protocol.exit_code(),
        _ => ExitCode::SUCCESS,
    })
}

/// `mcpkit task ACTION ID`.
pub(crate) async fn run(
    client: &Client,
    action: Action,
    id: &str,
    json: bool,
    options: RequestOptions,
) -> anyhow::Result<ExitCode> {
    let found = |e: mcp_client::ClientError| match e.error_object() {
        // `tasks/*` answers -32602 for a task it does not know (or no longer keeps).
        Some(o) if o.code == mcp_types::error::code::INVALID_PARAMS => {
            crate::status::tag(Status::NotFound, anyhow::Error::new(e))
        }
        _ => anyhow::Error::new(e),
    };
    match action {
        Action::Get => print(json, &client.get_task(id).await.map_err(found)?),
        Action::Cancel => {
            client.cancel_task(id).await.map_err(found)?;
            // The acknowledgement says nothing of the outcome: show where the task is now.
            let now = client.get_task(id).await?;
            if !json {
                eprintln!("cancellation of task {id} requested");
            }
            print(json, &now).map(|_| ExitCode::SUCCESS)
        }
        Action::Wait => {
            let task = client.get_task(id).await.map_err(found)?;
            let (result, raw) = client.follow_task(task, &options).await?;
            output::print_raw(json, &raw, output::call)?;
            Ok(if result.is_error == Some(true) { Status::ToolError.exit_code() } else { ExitCode::SUCCESS })
        }
    }
}
