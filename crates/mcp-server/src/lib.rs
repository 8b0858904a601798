//! The MCP server role: the API a Rust developer uses to write an MCP server, one dispatch
//! that serves modern (2026-07-28, stateless) and legacy (2025-11-25 and older, sessions)
//! clients from the same handlers, and the stdio transport.
//!
//! ```no_run
//! use mcp_server::{Args, Server, Tools};
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct EchoArgs {
//!     /// The text to send back.
//!     text: String,
//! }
//!
//! async fn echo(Args(EchoArgs { text }): Args<EchoArgs>) -> String {
//!     text
//! }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let server = Server::builder("echo-server", "1.0.0")
//!     .tools(Tools::new().add("echo", "Echo the text back", echo))
//!     .build()?;
//! server.serve_stdio().await?;
//! # Ok(()) }
//! ```
//!
//! What this crate does: registries of tools, resources, prompts and completions; handlers
//! as plain async functions with typed extractors; dispatch and validation for both eras;
//! MRTR with integrity-protected `requestState`; legacy sessions with server→client
//! requests; progress, logging, cancellation; change notifications; stdio serving.
//!
//! What it does not do: HTTP (a transport crate mounts [`Server`] over Streamable HTTP through
//! the front door, [`door`], and a [`Connection`] per session or exchange; a [`Refusal`] is
//! the transport's to turn into a status), or anything of the client role.

#![warn(missing_docs)]

mod call;
mod completion;
mod config;
mod connection;
mod context;
pub mod door;
mod extract;
mod handler;
pub mod hash;
mod interest;
pub mod observe;
mod peer;
pub mod policy;
mod principal;
mod prompts;
mod rate;
mod request_state;
mod resources;
mod router;
mod schema;
mod server;
mod session;
mod sink;
pub mod skills;
mod stdio;
#[cfg(unix)]
mod stdio_pipes;
pub mod task;
pub mod task_relay;
mod tools;
pub mod trust;
pub mod uri_template;

pub use call::Call;
pub use completion::{CompletionRequest, Completions};
pub use config::{Approvals, CachePolicy, ServerConfig};
pub use connection::{Connection, DuplicateId, InFlight};
pub use context::Change;
pub use door::{Classified, Refusal, Reply};
pub use extract::{
    Args, Cancel, ClientCaps, FromCall, FromCallLast, Log, Meta, Notifier, Progress, Rejection,
    ResponseStream, State, TaskHandle, Version,
};
pub use handler::{BoxFuture, Handler};
pub use interest::InterestHook;
pub use observe::{Observed, Observer, Outcome};
pub use peer::{AskError, Hold, Peer};
pub use principal::{AccessToken, Principal};
pub use prompts::{IntoPromptResult, PromptError, Prompts};
pub use rate::RateLimit;
pub use request_state::{StateError, StateKey};
pub use resources::{Blob, IntoContents, ResourceError, Resources, Uri, UriVars};
pub use schema::{object_schema, schema_for};
pub use server::{BuildError, Server, ServerBuilder};
pub use session::{LegacySession, PeerAnswer, SessionClosed, SessionHandle};
pub use sink::{ChannelSink, MessageSink, NullSink, SendFuture};
pub use skills::Skills;
/// The cancellation token transports hand to [`Server::handle_request`].
pub use tokio_util::sync::CancellationToken;
pub use tools::{IntoToolResult, Json, PassedResult, RegistrationError, ToolError, ToolOutput, Tools};
