//! `mcpkit app TOOL`: the app a tool links to (MCP Apps, `io.modelcontextprotocol/ui`) — its
//! `ui://` URI, what it asks of its sandbox (the origins it may reach, the browser features it
//! wants), and its HTML, printed or saved.

use std::process::ExitCode;

use anyhow::anyhow;
use mcp_client::Client;
use serde_json::{Value, json};

use crate::output;
use crate::status::{self, Status};

/// Runs `mcpkit app TOOL [--save DIR]`.
pub(crate) async fn run(
    client: &Client,
    tool: &str,
    save: Option<&std::path::Path>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let tools = client.list_all_tools().await?;
    let Some(found) = tools.iter().find(|t| t.name == tool) else {
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        return Err(status::tag(Status::NotFound, anyhow!("unknown tool {tool:?} ({})", names.join(", "))));
    };
    let Some(uri) = Client::tool_app(found).and_then(|ui| ui.resource_uri) else {
        return Err(status::tag(
            Status::NotFound,
            anyhow!("tool {tool:?} has no app (no _meta.ui.resourceUri)"),
        ));
    };
    let app = client.read_app(&uri).await?;
    let ui = serde_json::to_value(&app.ui)?;
    if let Some(dir) = save {
        crate::save::save_app(dir, &app.uri, &app.html)?;
    }
    if json {
        let mut value = json!({"uri": app.uri, "ui": ui, "bytes": app.html.len()});
        if save.is_none() {
            value["html"] = Value::String(app.html);
        }
        output::print(true, &value, |_| String::new())?;
    } else if save.is_some() {
        output::write_text(&summary(&app.uri, &ui, app.html.len()))?;
    } else {
        output::write_text(&app.html)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `app ui://…  (N bytes)` and what the app asks of its sandbox, one line each.
fn summary(uri: &str, ui: &Value, bytes: usize) -> String {
    let mut out = format!("app {uri} ({bytes} bytes)");
    let list = |v: Option<&Value>| -> Option<String> {
        let items: Vec<&str> = v?.as_array()?.iter().filter_map(Value::as_str).collect();
        (!items.is_empty()).then(|| items.join(" "))
    };
    let csp = ui.get("csp");
    for (key, label) in [
        ("connectDomains", "connects to"),
        ("resourceDomains", "loads from"),
        ("frameDomains", "frames"),
        ("baseUriDomains", "base URIs"),
    ] {
        if let Some(domains) = list(csp.and_then(|c| c.get(key))) {
            out.push_str(&format!("\n  {label}: {}", crate::terminal::line(&domains)));
        }
    }
    if let Some(permissions) = ui.get("permissions").and_then(Value::as_object).filter(|p| !p.is_empty()) {
        let names: Vec<&str> = permissions.keys().map(String::as_str).collect();
        out.push_str(&format!("\n  asks for: {}", names.join(", ")));
    }
    if let Some(border) = ui.get("prefersBorder").and_then(Value::as_bool) {
        out.push_str(&format!("\n  border: {}", if border { "yes" } else { "no" }));
    }
    out
}
