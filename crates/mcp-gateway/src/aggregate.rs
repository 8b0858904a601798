//! Building the gateway server's tables from the upstreams' catalogs: every item under its
//! downstream name, routed to its owner; what could not be served reported, never dropped
//! silently.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use mcp_server::{Prompts, Resources, Tools};
use mcp_types::extensions::skills::SkillResources;
use mcp_types::extensions::ui;
use mcp_types::{Prompt, Resource, ResourceTemplate, Tool};

use crate::config::Settings;
use crate::forward;
use crate::naming::{self, Conflict, Memory, Offer};
use crate::skills::{SkillRoute, SkillRoutes};
use crate::status::LeftOut;
use crate::upstream::{Catalog, Upstream};

/// The memories of the naming, kept across aggregations.
#[derive(Debug, Default)]
pub(crate) struct Memories {
    tools: Memory,
    prompts: Memory,
}

/// What an aggregation produced; `Eq` on what clients can see, so an aggregation that changed
/// nothing announces nothing.
pub(crate) struct Tables {
    pub(crate) routes: Routes,
    pub(crate) tools: Tools,
    pub(crate) prompts: Prompts,
    pub(crate) resources: Resources,
    pub(crate) skills: SkillRoutes,
    pub(crate) seen: Seen,
    pub(crate) conflicts: Vec<Conflict>,
    pub(crate) left_out: Vec<LeftOut>,
    /// App tool names several upstreams share (no alias on the gateway's endpoint).
    pub(crate) shared_app_names: Vec<crate::status::SharedAppName>,
}

/// Where a completion goes: the owner of a prompt (by its downstream name) or of a resource
/// template (by its downstream template), with the owner's own name for it.
#[derive(Default)]
pub(crate) struct Routes {
    /// Each tool's upstream, by downstream name (how the approval form names where it runs).
    pub(crate) tool_owners: HashMap<String, String>,
    pub(crate) prompts: HashMap<String, (Arc<Upstream>, String)>,
    pub(crate) templates: HashMap<String, (Arc<Upstream>, String)>,
    /// Each listed resource's owner and the owner's URI for it, by downstream URI.
    pub(crate) resources: HashMap<String, (Arc<Upstream>, String)>,
    /// The downstream URI of an upstream's resource served namespaced, by (upstream, its URI).
    pub(crate) namespaced: HashMap<(String, String), String>,
    /// Every upstream, by name (where a relayed task's requests go).
    pub(crate) upstreams: HashMap<String, Arc<Upstream>>,
    /// Each tool's and prompt's downstream name, by (upstream, its own name).
    pub(crate) tool_names: HashMap<(String, String), String>,
    pub(crate) prompt_names: HashMap<(String, String), String>,
}

/// The lists as clients see them, with each entry's owner.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Seen {
    pub(crate) tools: Vec<(usize, Tool)>,
    pub(crate) prompts: Vec<(usize, Prompt)>,
    pub(crate) resources: Vec<(usize, Resource)>,
    pub(crate) templates: Vec<(usize, ResourceTemplate)>,
}

/// No renames (an upstream's own endpoint).
static NO_RENAMES: std::collections::BTreeMap<String, String> = std::collections::BTreeMap::new();

/// Whose names the tables use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Names {
    /// The gateway's: prefixes and renames as configured.
    Gateway,
    /// The upstream's own (one upstream's own endpoint): no prefix, no rename.
    Own,
}

fn offers<'a>(
    upstreams: &'a [Arc<Upstream>],
    catalogs: &'a [Arc<Catalog>],
    settings: &'a Settings,
    own: Names,
    names: impl Fn(&'a Catalog) -> Vec<&'a str>,
) -> Vec<Offer<'a>> {
    upstreams
        .iter()
        .zip(catalogs)
        .map(|(up, catalog)| Offer {
            upstream: up.name(),
            prefix: up.config.prefix.as_deref().unwrap_or(up.name()),
            policy: match own {
                Names::Gateway => up.config.naming.unwrap_or(settings.naming),
                Names::Own => crate::config::Naming::Never,
            },
            rename: match own {
                Names::Gateway => &up.config.rename,
                Names::Own => &NO_RENAMES,
            },
            names: names(catalog),
        })
        .collect()
}

/// Aggregates the catalogs of `upstreams` (those not ready offer nothing), under the names
/// `own` says.
pub(crate) fn aggregate(
    upstreams: &[Arc<Upstream>],
    settings: &Settings,
    memories: &mut Memories,
    own: Names,
) -> Tables {
    let catalogs: Vec<Arc<Catalog>> = upstreams.iter().map(|u| u.catalog()).collect();
    let sep = settings.separator.as_str();
    let tool_offers =
        offers(upstreams, &catalogs, settings, own, |c| c.tools.iter().map(|t| t.name.as_str()).collect());
    let tool_names = naming::name("tool", &tool_offers, sep, &mut memories.tools);
    let prompt_offers =
        offers(upstreams, &catalogs, settings, own, |c| c.prompts.iter().map(|p| p.name.as_str()).collect());
    let prompt_names = naming::name("prompt", &prompt_offers, sep, &mut memories.prompts);
    let mut conflicts = tool_names.conflicts;
    conflicts.extend(prompt_names.conflicts);
    let mut left_out = Vec::new();
    let mut seen = Seen::default();
    let mut routes = Routes {
        upstreams: upstreams.iter().map(|up| (up.name().to_owned(), up.clone())).collect(),
        ..Routes::default()
    };

    let mut prompts = Prompts::new();
    for (u, (up, catalog)) in upstreams.iter().zip(&catalogs).enumerate() {
        for (prompt, name) in catalog.prompts.iter().zip(&prompt_names.names[u]) {
            let Some(name) = name else { continue };
            let mut def = prompt.clone();
            def.name = name.clone();
            prompts = prompts.add_dyn(def.clone(), forward::prompt(up.clone(), prompt.name.clone()));
            let errors = prompts.take_errors();
            if errors.is_empty() {
                routes.prompts.insert(def.name.clone(), (up.clone(), prompt.name.clone()));
                routes.prompt_names.insert((up.name().to_owned(), prompt.name.clone()), def.name.clone());
                seen.prompts.push((u, def));
            }
            left_out.extend(
                errors.into_iter().map(|e| LeftOut { upstream: up.name().to_owned(), reason: e.to_string() }),
            );
        }
    }

    // Resources keep their URIs (clients and models quote them). A URI or template a second
    // upstream offers too is served namespaced for that upstream — `{prefix}+{uri}`, a valid
    // URI whose scheme names the upstream — and taken back off on the way up.
    let mut resources = Resources::new();
    let mut skills = SkillRoutes::default();
    let mut skill_roots: HashSet<String> = HashSet::new();
    let mut uris: HashSet<String> = HashSet::new();
    let mut templates: HashSet<String> = HashSet::new();
    for (u, (up, catalog)) in upstreams.iter().zip(&catalogs).enumerate() {
        let prefix: Arc<str> = Arc::from(up.config.prefix.as_deref().unwrap_or(up.name()));
        for resource in &catalog.resources {
            let mut def = resource.clone();
            let namespace = if uris.contains(&def.uri) {
                def.uri = forward::namespaced(&prefix, &def.uri);
                Some(prefix.clone())
            } else {
                None
            };
            if !uris.insert(def.uri.clone()) {
                tracing::warn!(upstream = up.name(), uri = %def.uri, "resource listed twice; the second is left out");
                continue;
            }
            let namespaced = namespace.is_some();
            resources = resources.add_dyn(def.clone(), forward::read(up.clone(), namespace));
            let errors = resources.take_errors();
            if errors.is_empty() {
                routes.resources.insert(def.uri.clone(), (up.clone(), resource.uri.clone()));
                if namespaced {
                    routes.namespaced.insert((up.name().to_owned(), resource.uri.clone()), def.uri.clone());
                }
                seen.resources.push((u, def));
            }
            left_out.extend(
                errors.into_iter().map(|e| LeftOut { upstream: up.name().to_owned(), reason: e.to_string() }),
            );
        }
        for template in &catalog.templates {
            let mut def = template.clone();
            let namespace = if templates.contains(&def.uri_template) {
                def.uri_template = forward::namespaced(&prefix, &def.uri_template);
                Some(prefix.clone())
            } else {
                None
            };
            if !templates.insert(def.uri_template.clone()) {
                tracing::warn!(upstream = up.name(), template = %def.uri_template, "template listed twice; the second is left out");
                continue;
            }
            resources = resources.template_dyn(def.clone(), forward::read(up.clone(), namespace));
            let errors = resources.take_errors();
            if errors.is_empty() {
                routes
                    .templates
                    .insert(def.uri_template.clone(), (up.clone(), template.uri_template.clone()));
                seen.templates.push((u, def));
            }
            left_out.extend(
                errors.into_iter().map(|e| LeftOut { upstream: up.name().to_owned(), reason: e.to_string() }),
            );
        }
        // Skills (the skills extension): a skill at a path another upstream's skill has is
        // served namespaced, all its URIs; its files are routed to it like resources (those its
        // owner does not list too).
        skills.directory_read |= catalog.directory_read && !catalog.skills.is_empty();
        for entry in &catalog.skills {
            let Some(own_root) = crate::skills::root(&entry.uri) else { continue };
            let namespace = skill_roots.contains(own_root).then(|| prefix.clone());
            let listed = crate::skills::downstream(entry.clone(), namespace.as_deref());
            let Some(root) = crate::skills::root(&listed.uri).map(str::to_owned) else { continue };
            if !skill_roots.insert(root.clone()) {
                tracing::warn!(upstream = up.name(), skill = %listed.uri, "skill listed twice; the second is left out");
                continue;
            }
            skill_roots.insert(own_root.to_owned());
            if let (SkillResources::Files(own), SkillResources::Files(files)) =
                (&entry.resources, &listed.resources)
            {
                for (own, file) in own.iter().zip(files) {
                    if !uris.insert(file.uri.clone()) {
                        continue;
                    }
                    let name = file.uri.rsplit('/').next().unwrap_or(&file.uri).to_owned();
                    let mut resource = Resource::new(&file.uri, name);
                    resource.size = Some(file.size);
                    resources =
                        resources.add_dyn(resource.clone(), forward::read(up.clone(), namespace.clone()));
                    if resources.take_errors().is_empty() {
                        routes.resources.insert(file.uri.clone(), (up.clone(), own.uri.clone()));
                        if namespace.is_some() {
                            routes
                                .namespaced
                                .insert((up.name().to_owned(), own.uri.clone()), file.uri.clone());
                        }
                        seen.resources.push((u, resource));
                    }
                }
            }
            skills.routes.push(SkillRoute { upstream: up.clone(), root, namespace });
            skills.entries.push(listed);
        }
    }
    // Tools come last: a tool's app (MCP Apps) is a `ui://` resource, whose downstream URI the
    // resources above decided; one the owner does not list is routed all the same. A renamed
    // tool that has an app stays callable (unlisted) by its own name, which its app uses.
    let mut tools = Tools::new();
    let mut aliases: std::collections::BTreeMap<String, Vec<(String, String)>> = Default::default();
    for (u, (up, catalog)) in upstreams.iter().zip(&catalogs).enumerate() {
        let prefix: Arc<str> = Arc::from(up.config.prefix.as_deref().unwrap_or(up.name()));
        for (tool, name) in catalog.tools.iter().zip(&tool_names.names[u]) {
            let Some(name) = name else { continue };
            let mut def = tool.clone();
            def.name = name.clone();
            let app = ui::tool_ui(tool);
            if let Some(uri) = app.as_ref().and_then(|a| a.resource_uri.clone()) {
                let downstream = match routes.namespaced.get(&(up.name().to_owned(), uri.clone())) {
                    Some(namespaced) => namespaced.clone(),
                    None if routes.resources.get(&uri).is_some_and(|(owner, _)| Arc::ptr_eq(owner, up)) => {
                        uri.clone()
                    }
                    None => {
                        // Not listed by its owner: routed here (namespaced if taken).
                        let taken = uris.contains(&uri);
                        let namespace = taken.then(|| prefix.clone());
                        let down = if taken { forward::namespaced(&prefix, &uri) } else { uri.clone() };
                        if uris.insert(down.clone()) {
                            let resource =
                                Resource::new(&down, tool.name.clone()).with_mime_type(ui::MIME_TYPE);
                            resources =
                                resources.add_dyn(resource.clone(), forward::read(up.clone(), namespace));
                            if resources.take_errors().is_empty() {
                                routes.resources.insert(down.clone(), (up.clone(), uri.clone()));
                                if taken {
                                    routes
                                        .namespaced
                                        .insert((up.name().to_owned(), uri.clone()), down.clone());
                                }
                                seen.resources.push((u, resource));
                            }
                        }
                        down
                    }
                };
                if downstream != uri {
                    let mut linked = app.clone().unwrap_or_default();
                    linked.resource_uri = Some(downstream);
                    ui::set_tool_ui(&mut def, &linked);
                }
            }
            let read_only = tool.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true);
            let legacy_tasks = tool.task_support() != mcp_types::TaskSupport::Forbidden;
            tools = tools.add_proxy(
                def.clone(),
                forward::tool(up.clone(), tool.name.clone(), read_only, legacy_tasks),
            );
            let errors = tools.take_errors();
            if errors.is_empty() {
                routes.tool_owners.insert(def.name.clone(), up.name().to_owned());
                routes.tool_names.insert((up.name().to_owned(), tool.name.clone()), def.name.clone());
                if app.is_some() && def.name != tool.name {
                    aliases
                        .entry(tool.name.clone())
                        .or_default()
                        .push((up.name().to_owned(), def.name.clone()));
                }
                seen.tools.push((u, def));
            }
            left_out.extend(
                errors.into_iter().map(|e| LeftOut { upstream: up.name().to_owned(), reason: e.to_string() }),
            );
        }
    }
    // An app calls its tools by their own names: a name only one upstream's app tools had is
    // an alias of that tool (unless a listed tool has it); one that two upstreams' app tools
    // had is no alias at all — nothing says which app calls — and their apps reach those tools
    // through their upstreams' own endpoints ([`crate::Gateway::upstream_server`]).
    let mut shared_app_names = Vec::new();
    for (own, mut owners) in aliases {
        if owners.len() == 1 {
            let (_, name) = owners.remove(0);
            tools.alias(&own, &name);
            continue;
        }
        let upstreams = owners.into_iter().map(|(up, _)| up).collect();
        shared_app_names.push(crate::status::SharedAppName { name: own, upstreams });
    }
    Tables { routes, tools, prompts, resources, skills, seen, conflicts, left_out, shared_app_names }
}
