//! Client and server capabilities, for every revision.
//!
//! Legacy revisions exchange capabilities once in `initialize`; 2026-07-28 sends the client's
//! with every request (`_meta["io.modelcontextprotocol/clientCapabilities"]`) and the server's
//! in `server/discover`. One type serves both: members a revision lacks are simply absent.

use std::collections::BTreeMap;

use crate::json::JsonObject;
use crate::wire_struct;

wire_struct! {
    /// Capabilities a client supports (`ClientCapabilities`). Each declared capability is an
    /// object (`{}` when it has no settings).
    #[derive(Default)]
    pub struct ClientCapabilities {
        /// Elicitation of user input; `form` and/or `url` modes (empty object = form only).
        opt elicitation: ElicitationCapability = "elicitation",
        /// Sampling from the client's LLM.
        opt sampling: SamplingCapability = "sampling",
        /// Listing roots.
        opt roots: RootsCapability = "roots",
        /// Experimental, non-standard capabilities.
        opt experimental: BTreeMap<String, JsonObject> = "experimental",
        /// Extensions by identifier (2026-07-28), each with its settings object.
        opt extensions: BTreeMap<String, JsonObject> = "extensions",
        /// Experimental tasks support (2025-11-25 only).
        opt tasks: JsonObject = "tasks",
    }
}

wire_struct! {
    /// The client's `elicitation` capability.
    #[derive(Default)]
    pub struct ElicitationCapability {
        /// Form mode (in-band structured input).
        opt form: JsonObject = "form",
        /// URL mode (out-of-band interaction, 2025-11-25 and later).
        opt url: JsonObject = "url",
    }
}

impl ElicitationCapability {
    /// Form mode is supported when declared, or when neither mode is named (the spec's
    /// backward-compatible reading of `elicitation: {}`).
    pub fn supports_form(&self) -> bool {
        self.form.is_some() || self.url.is_none()
    }

    /// URL mode is supported only when declared.
    pub fn supports_url(&self) -> bool {
        self.url.is_some()
    }
}

wire_struct! {
    /// The client's `sampling` capability.
    #[derive(Default)]
    pub struct SamplingCapability {
        /// Context inclusion via `includeContext`.
        opt context: JsonObject = "context",
        /// Tool use via `tools` and `toolChoice`.
        opt tools: JsonObject = "tools",
    }
}

wire_struct! {
    /// The client's `roots` capability.
    #[derive(Default)]
    pub struct RootsCapability {
        /// Legacy only: the client sends `notifications/roots/list_changed`.
        opt list_changed: bool = "listChanged",
    }
}

wire_struct! {
    /// Capabilities a server supports (`ServerCapabilities`).
    #[derive(Default)]
    pub struct ServerCapabilities {
        /// The server offers tools.
        opt tools: ToolsCapability = "tools",
        /// The server offers resources.
        opt resources: ResourcesCapability = "resources",
        /// The server offers prompts.
        opt prompts: PromptsCapability = "prompts",
        /// The server offers argument completion.
        opt completions: JsonObject = "completions",
        /// The server emits log messages.
        opt logging: JsonObject = "logging",
        /// Experimental, non-standard capabilities.
        opt experimental: BTreeMap<String, JsonObject> = "experimental",
        /// Extensions by identifier (2026-07-28), each with its settings object.
        opt extensions: BTreeMap<String, JsonObject> = "extensions",
        /// Experimental tasks support (2025-11-25 only).
        opt tasks: JsonObject = "tasks",
    }
}

wire_struct! {
    /// The server's `tools` capability.
    #[derive(Default)]
    pub struct ToolsCapability {
        /// The server announces changes to the tool list.
        opt list_changed: bool = "listChanged",
    }
}

wire_struct! {
    /// The server's `prompts` capability.
    #[derive(Default)]
    pub struct PromptsCapability {
        /// The server announces changes to the prompt list.
        opt list_changed: bool = "listChanged",
    }
}

wire_struct! {
    /// The server's `resources` capability.
    #[derive(Default)]
    pub struct ResourcesCapability {
        /// The server announces changes to the resource list.
        opt list_changed: bool = "listChanged",
        /// Clients may subscribe to updates of individual resources.
        opt subscribe: bool = "subscribe",
    }
}
