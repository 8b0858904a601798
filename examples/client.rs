//! An MCP client written with mcpkit's libraries: starts a server (any command line) or connects
//! to a URL, finds out which protocol revision it speaks, lists its tools, calls one and prints
//! the result.
//!
//! ```text
//! cargo run -p mcpkit --example client -- forecast '{"city":"Oslo"}' target/debug/examples/weather_server
//! cargo run -p mcpkit --example client -- echo '{"text":"hi"}' http://127.0.0.1:8080/mcp
//! ```

use std::process::ExitCode;

use mcp_client::ClientBuilder;
use mcp_client::transport::http::HttpConfig;
use mcp_client::transport::stdio::StdioCommand;
use mcp_types::Era;
use serde_json::Value;

const USAGE: &str = "usage: client TOOL ARGUMENTS_JSON (URL | COMMAND [ARG...])";

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("client: {e}");
            ExitCode::from(2)
        }
    }
}

async fn run() -> Result<ExitCode, Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [tool, arguments, server, server_args @ ..] = args.as_slice() else {
        return Err(USAGE.into());
    };
    let arguments: Value = serde_json::from_str(arguments)?;

    // Connecting finds out the server's era: the stateless 2026-07-28 revision, or a legacy one
    // with an `initialize` handshake. Everything below works the same with both.
    let builder = ClientBuilder::new("example-client", "1.0.0");
    let client = if server.starts_with("http://") || server.starts_with("https://") {
        builder.connect_http(HttpConfig::new(server)).await?
    } else {
        // The server runs as a child process; `close` (or dropping the client) stops it.
        builder.connect_stdio(StdioCommand::new(server).args(server_args)).await?
    };
    let name = client.server_info().map(|info| info.name).unwrap_or_default();
    let era = if client.era() == Era::Modern { "modern" } else { "legacy" };
    println!("server {name}, protocol {} ({era} era)", client.protocol_version());

    // Lists are paged; `list_all_tools` follows the cursors.
    let listed = client.list_all_tools().await;
    let called = client.call_tool(tool, arguments).await;
    client.close().await;
    for tool in listed? {
        println!("tool {}: {}", tool.name, tool.description.unwrap_or_default());
    }

    // A tool's failure is a result too (`isError`); a protocol or transport error is an `Err`.
    let result = called?;
    let outcome = if result.is_error() { "failed" } else { "says" };
    for block in &result.content {
        match block.as_text() {
            Some(text) => println!("{tool} {outcome}: {text}"),
            None => println!("{tool} {outcome}: {}", serde_json::to_string(block)?),
        }
    }
    if let Some(structured) = &result.structured_content {
        println!("structured: {structured}");
    }
    Ok(if result.is_error() { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}
