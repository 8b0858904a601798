//! Tools that announce list changes: each call notifies every open `subscriptions/listen`
//! stream (2026-07-28) and every legacy session that follows the list.

use std::sync::{Arc, OnceLock};

use mcp_server::{Change, Server, State, ToolError, Tools};

/// The server, handed to the handlers that announce changes.
///
/// Handlers get shared state through `State<T>`, registered before the server is built; the
/// server itself only exists after `build`, so the state is a cell filled right after. The
/// server then holds a reference to itself: it lives as long as the process, as intended.
#[derive(Clone, Default)]
pub struct ServerHandle(Arc<OnceLock<Server>>);

impl ServerHandle {
    /// Stores the built server (the first call wins).
    pub fn set(&self, server: Server) {
        let _ = self.0.set(server);
    }

    fn notify(&self, change: Change) -> Result<(), ToolError> {
        let server = self.0.get().ok_or_else(|| ToolError::new("the server is not running yet"))?;
        server.notify(change);
        Ok(())
    }
}

/// Adds this module's tools.
pub fn register(tools: Tools) -> Tools {
    tools
        .add(
            "test_trigger_tool_change",
            "Announces that the tool list changed (notifications/tools/list_changed)",
            trigger_tool_change,
        )
        .add(
            "test_trigger_prompt_change",
            "Announces that the prompt list changed (notifications/prompts/list_changed)",
            trigger_prompt_change,
        )
}

async fn trigger_tool_change(State(server): State<ServerHandle>) -> Result<&'static str, ToolError> {
    server.notify(Change::Tools)?;
    Ok("Tool list change announced")
}

async fn trigger_prompt_change(State(server): State<ServerHandle>) -> Result<&'static str, ToolError> {
    server.notify(Change::Prompts)?;
    Ok("Prompt list change announced")
}
