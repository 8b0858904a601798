//! A gateway: one MCP endpoint in front of many MCP servers (upstreams) of any protocol era and
//! transport.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let config = mcp_gateway::config::load(std::path::Path::new("gateway.toml"))?;
//! let gateway = mcp_gateway::Gateway::start(config).await?;
//! gateway.server().serve_stdio().await?;
//! gateway.close().await;
//! # Ok(()) }
//! ```
//!
//! What it does: starts each upstream (a stdio command, a Streamable HTTP or HTTP+SSE URL)
//! through mcp-client, so era detection and retries are the client's; keeps each one's health
//! (reconnecting with backoff, leaving a down upstream's entries out); aggregates their tools,
//! prompts, resources and templates into one mcp-server [`Server`](mcp_server::Server) under a
//! naming policy; forwards each request to the owner with progress, cancellation and the
//! upstream's questions (elicitation, sampling, roots) passed to the right caller in either
//! era; and announces every change to connected clients.
//!
//! What it does not do: transports of its own (mcp-http and mcp-server's stdio serve the
//! server it builds), or protocol rules of its own (mcp-server and mcp-client hold them).

#![warn(missing_docs)]

mod aggregate;
mod bridge;
pub mod config;
mod credentials;
mod forward;
mod gateway;
mod naming;
mod skills;
mod status;
mod tasks;
mod upstream;
mod view;

pub use gateway::{Gateway, GatewayError, GatewayOptions, UNAVAILABLE_META, UpstreamAuth, UpstreamTiming};
pub use naming::Conflict;
pub use status::{LeftOut, SharedAppName, Status, UpstreamState, UpstreamStatus};
