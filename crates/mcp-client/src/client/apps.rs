//! MCP Apps on the client (`io.modelcontextprotocol/ui`): which app a tool links to, and its
//! HTML with the metadata a host sandboxes it by (CSP, permissions, border).

use mcp_types::extensions::ui::{self, META_KEY, MIME_TYPE, ResourceUi, ToolUi};
use mcp_types::{ResourceContents, Tool};

use super::Client;
use crate::error::ClientError;

/// An app's HTML, as a host renders it.
#[derive(Debug, Clone)]
pub struct App {
    /// Its `ui://` URI.
    pub uri: String,
    /// The HTML document.
    pub html: String,
    /// What it asks of its sandbox: the origins it may reach, the browser features it wants.
    pub ui: ResourceUi,
}

fn invalid(message: String) -> ClientError {
    ClientError::InvalidAnswer { method: "resources/read".into(), message }
}

impl Client {
    /// The app `tool` links to (`_meta.ui`), if any.
    pub fn tool_app(tool: &Tool) -> Option<ToolUi> {
        ui::tool_ui(tool)
    }

    /// Reads the app at `uri` (a `ui://` resource): its HTML, and its metadata (from the
    /// contents, else from the resource's listing).
    pub async fn read_app(&self, uri: &str) -> Result<App, ClientError> {
        if !uri.starts_with(ui::SCHEME) {
            return Err(ClientError::Unsupported(format!("{uri} is not an app ({} URI)", ui::SCHEME)));
        }
        let result = self.read_resource(uri).await?;
        let contents = result.contents.into_iter().find(|c| match c {
            ResourceContents::Text(t) => t.uri == uri,
            ResourceContents::Blob(b) => b.uri == uri,
        });
        let (html, mime, meta) = match contents {
            Some(ResourceContents::Text(t)) => (t.text, t.mime_type, t.meta),
            Some(ResourceContents::Blob(b)) => {
                use base64::Engine as _;
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(b.blob.as_bytes())
                    .map_err(|e| invalid(format!("{uri}: {e}")))?;
                let html =
                    String::from_utf8(bytes).map_err(|_| invalid(format!("{uri} is not UTF-8 HTML")))?;
                (html, b.mime_type, b.meta)
            }
            None => return Err(invalid(format!("the answer holds no contents for {uri}"))),
        };
        if mime.as_deref() != Some(MIME_TYPE) {
            return Err(invalid(format!(
                "{uri} is {}, not an app ({MIME_TYPE})",
                mime.as_deref().unwrap_or("untyped")
            )));
        }
        let ui = meta
            .and_then(|m| m.get(META_KEY).cloned())
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default();
        Ok(App { uri: uri.to_owned(), html, ui })
    }
}
