//! What one upstream offers: its tools, prompts, resources and templates, as last listed.

use mcp_client::{Client, ClientError, RequestOptions};
use mcp_types::extensions::skills::SkillEntry;
use mcp_types::{Prompt, Resource, ResourceTemplate, Tool};

/// An upstream's lists, fetched together after each connect and after each of its change
/// notifications.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Catalog {
    pub(crate) tools: Vec<Tool>,
    pub(crate) prompts: Vec<Prompt>,
    pub(crate) resources: Vec<Resource>,
    pub(crate) templates: Vec<ResourceTemplate>,
    /// Its skills (the skills extension), when it declares the extension.
    pub(crate) skills: Vec<SkillEntry>,
    /// It serves `resources/directory/read`.
    pub(crate) directory_read: bool,
}

/// Which lists to fetch again.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Stale {
    pub(crate) tools: bool,
    pub(crate) prompts: bool,
    pub(crate) resources: bool,
}

impl Stale {
    pub(crate) const ALL: Stale = Stale { tools: true, prompts: true, resources: true };

    pub(crate) fn any(self) -> bool {
        self.tools || self.prompts || self.resources
    }
}

impl Catalog {
    /// Fetches the lists `stale` names (the others are kept from `self`), each only when the
    /// server declares the feature. Every page is fetched fresh (no client cache).
    pub(crate) async fn refresh(&self, client: &Client, stale: Stale) -> Result<Catalog, ClientError> {
        let caps = client.server_capabilities();
        let options = RequestOptions::new().bypass_cache();
        let mut next = self.clone();
        if stale.tools {
            next.tools =
                if caps.tools.is_some() { client.list_all_tools_with(&options).await? } else { Vec::new() };
        }
        if stale.prompts {
            next.prompts = if caps.prompts.is_some() { client.list_all_prompts().await? } else { Vec::new() };
        }
        if stale.resources {
            if caps.resources.is_some() {
                next.resources = client.list_all_resources().await?;
                next.templates = client.list_all_resource_templates().await?;
            } else {
                next.resources = Vec::new();
                next.templates = Vec::new();
            }
            // Skills ride on resources: listed with them. A failing listing costs the skills
            // only, not the upstream's tools.
            next.skills = Vec::new();
            next.directory_read = false;
            if client.serves_skills() {
                let settings =
                    caps.extensions.as_ref().and_then(|e| e.get(mcp_types::extensions::skills::ID));
                next.directory_read = settings.and_then(|s| s.get("directoryRead")) == Some(&true.into());
                match client.list_all_skills().await {
                    Ok(skills) => next.skills = skills,
                    Err(e) => tracing::warn!("its skills could not be listed: {e}"),
                }
            }
        }
        Ok(next)
    }
}
