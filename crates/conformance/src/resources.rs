//! The resources: a static text, a static binary (the PNG fixture), a resource clients
//! subscribe to, and a template whose reads echo the matched `id`.

use mcp_server::{Resources, UriVars};
use mcp_types::{BlobResourceContents, Resource, ResourceContents, ResourceTemplate};
use serde_json::json;

use crate::PNG_BASE64;

/// The URI template of the template fixture.
pub const TEMPLATE: &str = "test://template/{id}/data";

/// The text of `test://static-text`.
pub const STATIC_TEXT: &str = "This is the content of the static text resource.";

/// The text of `test://watched-resource`.
pub const WATCHED_TEXT: &str = "This is the content of the watched resource.";

fn resource(uri: &str, name: &str, description: &str, mime_type: &str) -> Resource {
    Resource {
        description: Some(description.to_owned()),
        mime_type: Some(mime_type.to_owned()),
        ..Resource::new(uri, name)
    }
}

/// The resource table.
pub fn resources() -> Resources {
    let template = ResourceTemplate {
        description: Some("A resource template whose reads echo the id in the URI".into()),
        mime_type: Some("application/json".into()),
        ..ResourceTemplate::new(TEMPLATE, "template")
    };
    Resources::new()
        .text(
            resource("test://static-text", "static-text", "A static text resource for testing", "text/plain"),
            STATIC_TEXT,
        )
        .add(
            resource(
                "test://static-binary",
                "static-binary",
                "A static binary resource (a PNG image)",
                "image/png",
            ),
            static_binary,
        )
        .text(
            resource(
                "test://watched-resource",
                "watched-resource",
                "A resource clients may subscribe to for updates",
                "text/plain",
            ),
            WATCHED_TEXT,
        )
        .template(template, template_data)
}

/// The PNG fixture, sent as the base64 it already is.
async fn static_binary() -> ResourceContents {
    let blob = BlobResourceContents {
        mime_type: Some("image/png".into()),
        ..BlobResourceContents::new("test://static-binary", PNG_BASE64)
    };
    ResourceContents::Blob(blob)
}

/// `{"id": <id>, "templateTest": true, "data": "Data for ID: <id>"}`.
async fn template_data(vars: UriVars) -> String {
    let id = vars.get("id").unwrap_or_default();
    json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string()
}
