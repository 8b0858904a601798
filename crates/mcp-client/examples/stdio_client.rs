//! A small MCP client over stdio: starts the server command given on the command line, prints
//! what it learnt about the server, lists the tools, calls the one you name, and fills in the
//! server's elicitation forms from stdin.
//!
//! ```text
//! cargo build -p mcpkit
//! cargo run -p mcp-client --example stdio_client -- target/debug/mcpkit serve --stdio
//! ```
//!
//! Without arguments it runs `mcpkit serve --stdio` from `PATH`. With the demonstration server,
//! call `greet_me` (arguments: empty) to be asked for your name, or `echo` with
//! `{"text": "hi"}`. Everything is read line by line from stdin, so it can be piped too:
//! `printf 'greet_me\n\nAda\n' | cargo run -p mcp-client --example stdio_client -- ...`.

use std::collections::BTreeMap;
use std::io::Write;

use mcp_client::transport::stdio::StdioCommand;
use mcp_client::{ClientBuilder, Handlers};
use mcp_types::{
    ElicitAction, ElicitRequestParams, ElicitResult, ElicitValue, ErrorObject, NumberKind,
    PrimitiveSchemaDefinition,
};
use serde_json::Value;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The server's command line: our arguments, or the demonstration server.
    let mut argv: Vec<String> = std::env::args().skip(1).collect();
    if argv.is_empty() {
        argv = ["mcpkit", "serve", "--stdio"].map(String::from).to_vec();
    }
    let command = StdioCommand::new(&argv[0]).args(&argv[1..]);

    // The handlers decide the capabilities the client declares: with an elicitation handler
    // the server may ask questions. The same handler serves both protocol eras (a real
    // server→client request on a legacy session, an `input_required` result on 2026-07-28).
    let handlers = Handlers::default().on_elicit(false, fill_in_form);

    // Spawns the server and finds out its era (a `server/discover` probe, else `initialize`).
    let client = ClientBuilder::new("mcp-client-example", env!("CARGO_PKG_VERSION"))
        .handlers(handlers)
        .connect_stdio(command)
        .await?;
    println!("protocol: {} ({:?} era)", client.protocol_version(), client.era());
    if let Some(info) = client.server_info() {
        println!("server:   {} {}", info.name, info.version);
    }

    // Every tool, page after page.
    println!("tools:");
    for tool in client.list_all_tools().await? {
        println!("  {:<10} {}", tool.name, tool.description.unwrap_or_default());
    }

    // One call, chosen on stdin.
    let name = match read_line("tool to call (empty to quit): ").await? {
        Some(name) if !name.is_empty() => name,
        _ => {
            client.close().await;
            return Ok(());
        }
    };
    let arguments = match read_line("arguments as a JSON object (empty for none): ").await? {
        Some(json) if !json.trim().is_empty() => serde_json::from_str(&json)?,
        _ => Value::Null,
    };
    match client.call_tool(&name, arguments).await {
        Ok(result) => {
            // A tool failure is a result too (`isError`), meant to be read like any other.
            let label = if result.is_error() { "tool error" } else { "result" };
            for block in &result.content {
                match block.as_text() {
                    Some(text) => println!("{label}: {text}"),
                    None => println!("{label}: {}", serde_json::to_string(block)?),
                }
            }
        }
        // A protocol error, a timeout, a lost connection: `e.outcome()` says whether the call
        // may have run.
        Err(e) => eprintln!("the call failed: {e}"),
    }

    // Stops the server process (closes its stdin, then signals it if it lingers).
    client.close().await;
    Ok(())
}

/// Shows a form-mode elicitation and fills in each field from stdin. A blank line leaves a
/// field out; end of input cancels the form.
async fn fill_in_form(params: ElicitRequestParams) -> Result<ElicitResult, ErrorObject> {
    let ElicitRequestParams::Form(form) = params else {
        // URL mode was not declared (`on_elicit(false, ..)`), so it never comes here.
        return Ok(ElicitResult::new(ElicitAction::Decline));
    };
    println!("\nthe server asks: {}", form.message);
    let mut content = BTreeMap::new();
    for (field, schema) in &form.requested_schema.properties {
        let answer =
            read_line(&format!("  {field}: ")).await.map_err(|e| ErrorObject::internal(e.to_string()))?;
        let Some(answer) = answer else {
            return Ok(ElicitResult::new(ElicitAction::Cancel));
        };
        if answer.is_empty() {
            continue;
        }
        // Typed as the schema asks; what does not parse is sent as text and the server decides.
        let value = match schema {
            PrimitiveSchemaDefinition::Boolean(_) => {
                ElicitValue::Bool(matches!(answer.to_ascii_lowercase().as_str(), "y" | "yes" | "true"))
            }
            PrimitiveSchemaDefinition::Number(n) if n.kind == NumberKind::Integer => {
                answer.parse::<i64>().map(ElicitValue::Integer).unwrap_or(ElicitValue::String(answer))
            }
            PrimitiveSchemaDefinition::Number(_) => {
                answer.parse::<f64>().map(ElicitValue::Number).unwrap_or(ElicitValue::String(answer))
            }
            _ => ElicitValue::String(answer),
        };
        content.insert(field.clone(), value);
    }
    Ok(ElicitResult::accept(content))
}

/// Prints `question` and reads one line from stdin, without its line ending; `None` at the end
/// of input. The read blocks, so it runs on a blocking thread.
async fn read_line(question: &str) -> std::io::Result<Option<String>> {
    print!("{question}");
    std::io::stdout().flush()?;
    let line = tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).map(|n| (n > 0).then_some(line))
    })
    .await
    .map_err(std::io::Error::other)??;
    Ok(line.map(|l| l.trim_end_matches(['\r', '\n']).to_owned()))
}
