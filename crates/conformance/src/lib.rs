//! The server the official MCP conformance suite runs against: every fixture tool, resource,
//! resource template and prompt of `docs/CONFORMANCE.md` §4, for both protocol eras, written only
//! against the public API of `mcp-server` and `mcp-types` — as any user of the SDK would.
//!
//! [`server`] builds it; the `conformance-server` binary serves it over stdio, and tests build
//! the same server in memory.
//!
//! The fixtures:
//!
//! * content tools (`test_simple_text`, `test_image_content`, ...), progress and logging
//!   tools, the tool returning an `isError` result, and `json_schema_2020_12_tool` whose raw
//!   2020-12 schema is listed unchanged ([`tools`]);
//! * tools that ask the client — sampling, elicitation, roots — whose one handler serves both
//!   eras: a real server→client request in a legacy session, an `InputRequiredResult` (MRTR)
//!   on 2026-07-28 ([`asking`], [`input_required`]);
//! * tools that announce list changes to `subscriptions/listen` streams ([`changes`]);
//! * tools that become tasks for a client that declares the tasks extension ([`tasks`]);
//! * skills served as resources, listed by `skills/list` ([`skills`]);
//! * static resources, a resource template, prompts and completions ([`resources`],
//!   [`prompts`]).

pub mod asking;
pub mod changes;
pub mod input_required;
pub mod prompts;
pub mod resources;
pub mod skills;
pub mod tasks;
pub mod tools;

use mcp_server::{BuildError, Server, Tools};

/// The server's name (`serverInfo.name`).
pub const NAME: &str = "mcpkit-conformance-server";

/// The instructions the server gives the client's model.
pub const INSTRUCTIONS: &str =
    "This server exposes the fixtures of the MCP conformance suite; its tools exist to be tested, not used.";

/// The 1×1 PNG every image fixture carries, base64-encoded.
pub const PNG_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// The WAV the audio fixture carries, base64-encoded.
pub const WAV_BASE64: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

/// Builds the conformance server.
pub fn server() -> Server {
    try_server().expect("the conformance fixtures are a valid server definition")
}

/// Builds the conformance server, reporting a registration problem instead of panicking.
pub fn try_server() -> Result<Server, BuildError> {
    let handle = changes::ServerHandle::default();
    let tools =
        [tools::register, asking::register, input_required::register, changes::register, tasks::register]
            .into_iter()
            .fold(Tools::new(), |tools, register| register(tools));
    let server = Server::builder(NAME, env!("CARGO_PKG_VERSION"))
        .instructions(INSTRUCTIONS)
        .tools(tools)
        .resources(resources::resources())
        .skills(skills::skills())
        .prompts(prompts::prompts())
        .completions(prompts::completions())
        .state(handle.clone())
        .build()?;
    handle.set(server.clone());
    Ok(server)
}
