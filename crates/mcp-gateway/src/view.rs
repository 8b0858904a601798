//! Each upstream's own endpoint: a server of the gateway's that offers one upstream's tools,
//! prompts, resources, templates, skills and apps under the upstream's own names and URIs,
//! routed to it as the gateway's endpoint routes them. An app calls its tools by the names its
//! own server gave them; where two upstreams' apps use one name the gateway's endpoint cannot
//! tell which app calls, and the app is served here instead (`/mcp/{upstream}` over HTTP).
//!
//! The same rules hold here as on the gateway's endpoint: the policy decides on each item as
//! it is named there (a renamed tool under its gateway name, a namespaced URI under its
//! namespaced form — an item the gateway's endpoint does not serve is refused), the tools
//! `approve_tools` names need approval under their own names here, and the rest of the
//! settings (destructive tools, exemptions, rate limits, timeouts) are the same.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use mcp_server::policy::{Decision, Item, NamedLimit, Policy, Question};
use mcp_server::{Approvals, Server};
use mcp_types::{Prompt, Resource, ResourceTemplate, Tool};

use crate::aggregate::{Memories, Routes, Seen};
use crate::gateway::Followed;

/// One upstream's own endpoint.
pub(crate) struct View {
    pub(crate) server: Server,
    pub(crate) routes: Arc<ArcSwap<Routes>>,
    /// The resource URIs (the upstream's own) this endpoint's clients follow.
    pub(crate) followed: Arc<Followed>,
    pub(crate) seen: Mutex<Seen>,
    pub(crate) memories: Mutex<Memories>,
}

/// The settings an upstream's own endpoint is built with: the gateway's, but for the tools
/// approvals name (the gateway's names, asked about by [`Translated`] instead).
pub(crate) fn view_approvals(gateway: &Approvals) -> Approvals {
    let mut approvals = gateway.clone();
    approvals.tools.clear();
    approvals
}

/// The gateway's policy and named approvals, asked about an upstream's own endpoint's items
/// under the names the gateway's endpoint gives them.
pub(crate) struct Translated {
    /// The gateway's policy; `None`: everything the gateway's endpoint serves is allowed.
    pub(crate) inner: Option<Arc<dyn Policy>>,
    pub(crate) upstream: String,
    /// The gateway endpoint's routes (its names for this upstream's items).
    pub(crate) gateway: Arc<ArcSwap<Routes>>,
    /// The tools `approve_tools` names (the gateway's names).
    pub(crate) approve: Arc<std::collections::BTreeSet<String>>,
}

/// An item as the gateway's endpoint names it: an owned copy under its gateway name or URI.
enum Renamed {
    Tool(Tool),
    Prompt(Prompt),
    Resource { uri: String, def: Option<Resource> },
    Template(ResourceTemplate),
}

impl Renamed {
    fn item(&self) -> Item<'_> {
        match self {
            Renamed::Tool(t) => Item::Tool(t),
            Renamed::Prompt(p) => Item::Prompt(p),
            Renamed::Resource { uri, def } => Item::Resource { uri, def: def.as_ref() },
            Renamed::Template(t) => Item::Template(t),
        }
    }
}

impl Translated {
    /// The item under the gateway's name; `None` when the gateway's endpoint does not serve
    /// it (a name left out by a conflict).
    fn renamed(&self, item: &Item<'_>) -> Option<Renamed> {
        let routes = self.gateway.load();
        let key = |name: &str| (self.upstream.clone(), name.to_owned());
        // A URI keeps its form unless the gateway serves it namespaced.
        let uri = |own: &str| routes.namespaced.get(&key(own)).cloned().unwrap_or_else(|| own.to_owned());
        match item {
            Item::Tool(tool) => {
                let mut tool = (*tool).clone();
                tool.name = routes.tool_names.get(&key(&tool.name))?.clone();
                Some(Renamed::Tool(tool))
            }
            Item::Prompt(prompt) => {
                let mut prompt = (*prompt).clone();
                prompt.name = routes.prompt_names.get(&key(&prompt.name))?.clone();
                Some(Renamed::Prompt(prompt))
            }
            Item::Resource { uri: own, def } => {
                let uri = uri(own);
                let def = def.map(|d| {
                    let mut d = d.clone();
                    d.uri = uri.clone();
                    d
                });
                Some(Renamed::Resource { uri, def })
            }
            Item::Template(template) => {
                let downstream = routes
                    .templates
                    .iter()
                    .find(|(_, (up, own))| up.name() == self.upstream && *own == template.uri_template)
                    .map(|(downstream, _)| downstream.clone())?;
                let mut template = (*template).clone();
                template.uri_template = downstream;
                Some(Renamed::Template(template))
            }
            // An item this gateway does not know how to name is not served here.
            _ => None,
        }
    }

    fn ask<T>(&self, question: &Question<'_>, absent: T, with: impl FnOnce(&Question<'_>) -> T) -> T {
        let Some(renamed) = self.renamed(&question.item) else { return absent };
        let translated = Question::new(question.principal, renamed.item(), question.arguments);
        with(&translated)
    }
}

impl Policy for Translated {
    fn decide(&self, question: &Question<'_>) -> Decision {
        let refused = Decision::Deny(vec!["not served by the gateway's endpoint".to_owned()]);
        self.ask(question, refused, |q| match &self.inner {
            Some(policy) => policy.decide(q),
            None => Decision::Allow,
        })
    }

    fn needs_approval(&self, question: &Question<'_>) -> bool {
        self.ask(question, false, |q| {
            matches!(q.item, Item::Tool(t) if self.approve.contains(&t.name))
                || self.inner.as_ref().is_some_and(|p| p.needs_approval(q))
        })
    }

    fn rate_limits(&self, question: &Question<'_>) -> Vec<NamedLimit> {
        self.ask(question, Vec::new(), |q| self.inner.as_ref().map(|p| p.rate_limits(q)).unwrap_or_default())
    }
}

/// The views by upstream name.
pub(crate) type Views = HashMap<String, Arc<View>>;
