//! MCP Apps (`io.modelcontextprotocol/ui`, SEP-1865): a server ships an interactive HTML view as
//! a `ui://` resource (`text/html;profile=mcp-app`) and links a tool to it (`_meta.ui` of the
//! tool: `resourceUri`, `visibility`); a host that supports apps renders the tool's results in
//! it, sandboxed, and forwards the view's own `tools/call` requests to the same server.

use crate::json::{JsonObject, JsonValue};
use crate::tools::Tool;
use crate::{ClientCapabilities, open_enum, wire_struct};

/// The extension's identifier, the key under `capabilities.extensions`.
pub const ID: &str = "io.modelcontextprotocol/ui";

/// The MIME type of an app's HTML.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The URI scheme of an app's resource.
pub const SCHEME: &str = "ui://";

/// The key of the tool's (and the resource's) app metadata in `_meta`.
pub const META_KEY: &str = "ui";

/// The deprecated flat key some servers still use for a tool's app (`_meta["ui/resourceUri"]`).
pub const DEPRECATED_RESOURCE_URI_KEY: &str = "ui/resourceUri";

open_enum! {
    /// Who may call a tool that has an app.
    #[non_exhaustive]
    pub enum Visibility {
        /// The model (the tool is in the agent's tool list).
        Model = "model",
        /// The app, from its own server's connection.
        App = "app",
    }
}

wire_struct! {
    /// A tool's link to its app (`_meta.ui` of the tool).
    #[derive(Default)]
    pub struct ToolUi {
        /// The `ui://` resource that renders the tool's results.
        opt resource_uri: String = "resourceUri",
        /// Who may call the tool (default: the model and the app).
        opt visibility: Vec<Visibility> = "visibility",
    }
}

impl ToolUi {
    /// A link to the app at `resource_uri`.
    pub fn new(resource_uri: impl Into<String>) -> Self {
        ToolUi { resource_uri: Some(resource_uri.into()), ..Default::default() }
    }

    /// Who may call the tool.
    pub fn with_visibility(mut self, visibility: Vec<Visibility>) -> Self {
        self.visibility = Some(visibility);
        self
    }

    /// Whether the model may call the tool (`visibility` absent, or naming the model).
    pub fn model_visible(&self) -> bool {
        self.visibility.as_ref().is_none_or(|v| v.contains(&Visibility::Model))
    }

    /// Whether the app may call the tool (`visibility` absent, or naming the app).
    pub fn app_visible(&self) -> bool {
        self.visibility.as_ref().is_none_or(|v| v.contains(&Visibility::App))
    }
}

wire_struct! {
    /// The origins an app may reach (its Content Security Policy), per kind.
    #[derive(Default)]
    pub struct Csp {
        /// Network requests (`connect-src`).
        opt connect_domains: Vec<String> = "connectDomains",
        /// Scripts, images, styles, fonts, media.
        opt resource_domains: Vec<String> = "resourceDomains",
        /// Nested frames (`frame-src`).
        opt frame_domains: Vec<String> = "frameDomains",
        /// The document's base URIs (`base-uri`).
        opt base_uri_domains: Vec<String> = "baseUriDomains",
    }
}

wire_struct! {
    /// The browser features an app asks for (each `{}` when asked).
    #[derive(Default)]
    pub struct Permissions {
        /// The camera.
        opt camera: JsonObject = "camera",
        /// The microphone.
        opt microphone: JsonObject = "microphone",
        /// The location.
        opt geolocation: JsonObject = "geolocation",
        /// Writing to the clipboard.
        opt clipboard_write: JsonObject = "clipboardWrite",
    }
}

wire_struct! {
    /// An app resource's metadata (`_meta.ui` of the resource and of its contents).
    #[derive(Default)]
    pub struct ResourceUi {
        /// The origins it may reach (none when absent).
        opt csp: Csp = "csp",
        /// The browser features it asks for.
        opt permissions: Permissions = "permissions",
        /// A dedicated origin for it (host-dependent format).
        opt domain: String = "domain",
        /// Whether the host should draw a border and background around it.
        opt prefers_border: bool = "prefersBorder",
    }
}

/// The app a tool links to: `_meta.ui` (or the deprecated `_meta["ui/resourceUri"]`).
pub fn tool_ui(tool: &Tool) -> Option<ToolUi> {
    let meta = tool.meta.as_ref()?;
    if let Some(ui) = meta.get(META_KEY).and_then(|v| serde_json::from_value::<ToolUi>(v.clone()).ok()) {
        if ui.resource_uri.is_some() || ui.visibility.is_some() {
            return Some(ui);
        }
    }
    let uri = meta.get(DEPRECATED_RESOURCE_URI_KEY)?.as_str()?;
    Some(ToolUi::new(uri))
}

/// Links `tool` to an app (its `_meta.ui`).
pub fn set_tool_ui(tool: &mut Tool, ui: &ToolUi) {
    let value = serde_json::to_value(ui).unwrap_or(JsonValue::Null);
    tool.meta.get_or_insert_with(JsonObject::new).insert(META_KEY.to_owned(), value);
}

/// The capabilities a client declares to be given apps (`mimeTypes` it renders).
pub fn client_capabilities() -> ClientCapabilities {
    let mut settings = JsonObject::new();
    settings.insert("mimeTypes".into(), JsonValue::Array(vec![MIME_TYPE.into()]));
    ClientCapabilities {
        extensions: Some([(ID.to_owned(), settings)].into_iter().collect()),
        ..Default::default()
    }
}

/// Whether `capabilities` declare the extension.
pub fn declared(capabilities: &ClientCapabilities) -> bool {
    capabilities.extensions.as_ref().is_some_and(|e| e.contains_key(ID))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_tool_links_to_its_app() {
        let mut tool = Tool::without_arguments("get_weather");
        assert!(tool_ui(&tool).is_none());
        set_tool_ui(&mut tool, &ToolUi::new("ui://weather/dashboard").with_visibility(vec![Visibility::App]));
        assert_eq!(
            serde_json::to_value(&tool).unwrap()["_meta"]["ui"],
            json!({"resourceUri": "ui://weather/dashboard", "visibility": ["app"]})
        );
        let ui = tool_ui(&tool).unwrap();
        assert!(ui.app_visible() && !ui.model_visible());
        let old: Tool = serde_json::from_value(json!({
            "name": "t", "inputSchema": {"type": "object"}, "_meta": {"ui/resourceUri": "ui://old"}
        }))
        .unwrap();
        assert_eq!(tool_ui(&old).unwrap().resource_uri.as_deref(), Some("ui://old"));
        assert!(tool_ui(&old).unwrap().model_visible());
    }

    #[test]
    fn resource_metadata_and_capabilities() {
        let ui: ResourceUi = serde_json::from_value(json!({
            "csp": {"connectDomains": ["https://api.example.com"]},
            "permissions": {"camera": {}}, "prefersBorder": true
        }))
        .unwrap();
        assert_eq!(ui.csp.unwrap().connect_domains.unwrap(), ["https://api.example.com"]);
        assert!(ui.permissions.unwrap().camera.is_some());
        assert_eq!(
            serde_json::to_value(client_capabilities()).unwrap(),
            json!({"extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}})
        );
        assert!(declared(&client_capabilities()));
    }
}
