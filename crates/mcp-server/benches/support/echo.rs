//! The echo server of the Criterion benches, defined once: mcp-server's (`door`, `stdio`,
//! `tool_call`) and mcp-client's (`client`, its in-process HTTP server) include this file by
//! path. One tool, `echo`, that answers its `text` argument as one text content.
#![allow(dead_code)]

use mcp_server::{Args, Server, Tools};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
pub(crate) struct EchoArgs {
    /// The text to send back.
    text: String,
}

/// The tool's handler (for a bench that lists it under more names).
pub(crate) async fn echo(Args(EchoArgs { text }): Args<EchoArgs>) -> String {
    text
}

/// The tools with `echo` alone.
pub(crate) fn echo_tools() -> Tools {
    Tools::new().add("echo", "Echo the text back", echo)
}

/// A server named `bench` with [`echo_tools`].
pub(crate) fn echo_server() -> Server {
    Server::builder("bench", "1.0.0").tools(echo_tools()).build().expect("the server builds")
}
