//! `mcpkit skill get|load|dir URI`: one skill of a server (the skills extension) — its entry,
//! its `SKILL.md` verified against the entry, a directory's files. Nothing of a skill is
//! fetched beyond what the command asks for.

use std::process::ExitCode;

use anyhow::anyhow;
use mcp_client::Client;
use serde_json::{Value, json};

use crate::output;
use crate::status::{self, Status};

/// What `mcpkit skill` does.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub(crate) enum Action {
    /// The skill's entry: frontmatter, files, digests.
    Get,
    /// Its SKILL.md, checked against its entry.
    Load,
    /// A directory's children.
    Dir,
}

fn not_found(e: mcp_client::ClientError, what: String) -> anyhow::Error {
    if e.error_object().is_some_and(|o| o.code == mcp_types::error::code::INVALID_PARAMS) {
        status::tag(Status::NotFound, anyhow::Error::new(e).context(what))
    } else {
        anyhow::Error::new(e)
    }
}

/// Runs `mcpkit skill ACTION URI`.
pub(crate) async fn run(client: &Client, action: Action, uri: &str, json: bool) -> anyhow::Result<ExitCode> {
    if !client.serves_skills() {
        return Err(status::tag(
            Status::Protocol,
            anyhow!("the server does not declare the skills extension (io.modelcontextprotocol/skills)"),
        ));
    }
    match action {
        Action::Get => {
            let entry = client.get_skill(uri).await.map_err(|e| not_found(e, format!("no skill {uri:?}")))?;
            output::print(json, &serde_json::to_value(&entry)?, entry_text)?;
        }
        Action::Load => {
            let entry = client.get_skill(uri).await.map_err(|e| not_found(e, format!("no skill {uri:?}")))?;
            let loaded = client.load_skill(&entry).await?;
            if json {
                let value = json!({"uri": entry.uri, "frontmatter": loaded.frontmatter, "text": loaded.text});
                output::print(true, &value, |_| String::new())?;
            } else {
                output::write_text(&loaded.text)?;
            }
        }
        Action::Dir => {
            let children = client
                .read_directory(uri)
                .await
                .map_err(|e| not_found(e, format!("no directory {uri:?}")))?;
            output::print(json, &json!({ "resources": children }), output::list)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A skill's entry for a person: its URI, frontmatter, and files with their sizes.
fn entry_text(entry: &Value) -> String {
    let mut out = entry.get("uri").and_then(Value::as_str).unwrap_or("?").to_owned();
    if let Some(frontmatter) = entry.get("frontmatter").and_then(Value::as_object) {
        for (key, value) in frontmatter {
            let value = match value {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            out.push_str(&format!("\n  {key}: {}", crate::terminal::line(&value)));
        }
    }
    match entry.get("resources") {
        Some(Value::Array(files)) => {
            out.push_str(&format!("\nfiles ({}):", files.len()));
            for file in files {
                let uri = file.get("uri").and_then(Value::as_str).unwrap_or("?");
                let size = file.get("size").and_then(Value::as_u64).unwrap_or(0);
                out.push_str(&format!("\n  {}  {size} bytes", crate::terminal::line(uri)));
            }
        }
        _ => out.push_str("\nfiles: dynamic (no manifest)"),
    }
    out
}
