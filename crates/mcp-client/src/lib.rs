//! The MCP client role: one [`Client`] talks to any MCP server, of any revision, over stdio (a
//! child process) or HTTP, and finds out which revision by itself.
//!
//! ```no_run
//! # #[cfg(feature = "stdio")]
//! use mcp_client::transport::stdio::StdioCommand;
//! use mcp_client::{ClientBuilder, ClientError};
//! use serde_json::json;
//!
//! # #[cfg(feature = "stdio")]
//! async fn demo() -> Result<(), ClientError> {
//!     let client = ClientBuilder::new("my-host", "1.0.0")
//!         .connect_stdio(StdioCommand::new("mcpkit").args(["serve", "--stdio"]))
//!         .await?;
//!     println!("{} speaks {}", client.server_info().map(|i| i.name).unwrap_or_default(), client.protocol_version());
//!     for tool in client.list_all_tools().await? {
//!         println!("tool: {}", tool.name);
//!     }
//!     let result = client.call_tool("echo", json!({"text": "hi"})).await?;
//!     println!("{:?}", result.content);
//!     client.close().await;
//!     Ok(())
//! }
//! ```
//!
//! What it does, in layers:
//!
//! * [`transport`]: moves messages — a child process ([`transport::stdio`]), Streamable HTTP and
//!   the deprecated HTTP+SSE ([`transport::http`]), or any [`transport::Transport`] of yours;
//! * the engine (internal): ids, pending calls, routing of answers, progress and notifications,
//!   answers to server→client requests, cancellation when a call is dropped;
//! * [`Client`]: era detection and the handshake, `_meta` and HTTP routing headers, MRTR
//!   rounds, the version retry, caching, typed calls.
//!
//! Errors are [`ClientError`]s; [`ClientError::outcome`] says whether the request certainly did
//! not run, was answered, or has an unknown outcome.
//!
//! # Tracing
//!
//! * [`WIRE_TARGET`] (`mcp_client::wire`, level `trace`): the wire trace — every JSON-RPC
//!   message sent (`-> {json}`) or received (`<- {json}`), the exact bytes, whatever the
//!   transport; and one status line per HTTP exchange of the transports and of the
//!   authorization layer (`HTTP POST http://host/mcp -> 200 OK (text/event-stream)`, redirects,
//!   GET streams closing). URLs are shown without their query; headers, tokens, authorization
//!   codes and the bodies of authorization requests never are. Enable it with, for example,
//!   `RUST_LOG=mcp_client::wire=trace`; when it is off, nothing is formatted.
//! * `transport::stdio::STDERR_TARGET` (`mcp_client::server_stderr`, level `info`): the lines
//!   a stdio server writes to its stderr; `transport::stdio::STDERR_END_TARGET` (level `debug`)
//!   once it ends.
//! * [`IGNORED_TARGET`] (`mcp_client::ignored`, level `warn`): what the server sent that is
//!   not JSON-RPC and was ignored, with its start.
//! * `mcp_client` and `mcp_client::auth`: the client's own diagnostics.
#![warn(missing_docs)]

#[cfg(feature = "http")]
pub mod auth;
mod client;
mod engine;
pub mod error;
pub mod handler;
pub mod headers;
pub mod observe;
pub mod transport;
mod wire;

pub use client::{
    App, Client, ClientBuilder, Detected, EraCache, ListLimits, LoadedSkill, QueueLimits, RequestOptions,
    SUPPORTED_VERSIONS, Subscription, SubscriptionEvent, TaskFn, ToolOutcome, params_map,
};
pub use engine::ProgressFn;
pub use error::{ClientError, ListingBound, Outcome};
pub use handler::Handlers;
#[cfg(feature = "http")]
pub use reqwest;
pub use wire::{IGNORED_TARGET, WIRE_TARGET};
