//! Mounting the MCP endpoint into an existing axum application, next to its own routes.
//!
//! ```text
//! cargo run -p mcp-http --example axum_mount
//! curl -s http://127.0.0.1:3000/health
//! ```

use mcp_http::{HttpConfig, McpHttp};
use mcp_server::{Args, Server, Tools};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    text: String,
}

async fn echo(Args(EchoArgs { text }): Args<EchoArgs>) -> String {
    text
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server =
        Server::builder("mounted", "1.0.0").tools(Tools::new().add("echo", "Echo the text", echo)).build()?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
    let addr = listener.local_addr()?;
    // The allowlists follow the address the application listens on.
    let mcp = McpHttp::new(server, HttpConfig::for_bind(addr));
    let app = axum::Router::new().route("/health", axum::routing::get(|| async { "ok" })).merge(mcp.router());
    eprintln!("MCP at http://{addr}/mcp, health at http://{addr}/health");
    axum::serve(listener, app).await?;
    Ok(())
}
