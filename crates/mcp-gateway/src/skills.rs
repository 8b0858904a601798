//! The upstreams' skills (the skills extension) through the gateway: listed together, each
//! skill under its own URIs unless another upstream serves a skill at the same path — then
//! the second one's are namespaced (`{prefix}+{uri}`, as resources are) — and `skills/get` and
//! `resources/directory/read` passed to the owner, its URIs translated both ways. The skills'
//! files are resources of the gateway's table, routed to their owner like any other.

use std::sync::Arc;

use mcp_server::skills::SkillSource;
use mcp_server::{BoxFuture, Call, Rejection};
use mcp_types::Resource;
use mcp_types::extensions::skills::{SKILL_MD, SkillEntry, SkillResources};

use crate::forward::namespaced;
use crate::upstream::{Lane, Upstream};

/// One listed skill: where it is downstream, and its owner's own URIs for it.
pub(crate) struct SkillRoute {
    pub(crate) upstream: Arc<Upstream>,
    /// The skill's directory downstream (`skill://…`, or `{prefix}+skill://…`).
    pub(crate) root: String,
    /// The namespace its URIs are served under, when another upstream has a skill at its path.
    pub(crate) namespace: Option<Arc<str>>,
}

/// The skills the gateway lists, and where each goes.
#[derive(Default)]
pub(crate) struct SkillRoutes {
    pub(crate) entries: Vec<SkillEntry>,
    pub(crate) routes: Vec<SkillRoute>,
    /// Some owner serves `resources/directory/read`.
    pub(crate) directory_read: bool,
}

/// `entry` as the gateway lists it: every URI in `namespace` when there is one.
pub(crate) fn downstream(mut entry: SkillEntry, namespace: Option<&str>) -> SkillEntry {
    if let Some(ns) = namespace {
        entry.uri = namespaced(ns, &entry.uri);
        if let SkillResources::Files(files) = &mut entry.resources {
            for file in files {
                file.uri = namespaced(ns, &file.uri);
            }
        }
    }
    entry
}

/// The directory of the skill whose `SKILL.md` is at `uri`.
pub(crate) fn root(uri: &str) -> Option<&str> {
    uri.strip_suffix(SKILL_MD)?.strip_suffix('/')
}

impl SkillRoute {
    /// The owner's URI for a downstream one.
    fn upstream_uri(&self, uri: &str) -> String {
        match &self.namespace {
            Some(ns) => {
                uri.strip_prefix(&**ns).and_then(|rest| rest.strip_prefix('+')).unwrap_or(uri).to_owned()
            }
            None => uri.to_owned(),
        }
    }

    /// The downstream URI for one of the owner's.
    fn downstream_uri(&self, uri: &str) -> String {
        match &self.namespace {
            Some(ns) => namespaced(ns, uri),
            None => uri.to_owned(),
        }
    }

    /// Whether the directory `uri` is this skill's, or within it.
    fn holds(&self, uri: &str) -> bool {
        uri == self.root || uri.strip_prefix(&*self.root).is_some_and(|rest| rest.starts_with('/'))
    }
}

/// The gateway's [`SkillSource`]: the routes of the last aggregation.
pub(crate) struct Source(pub(crate) Arc<SkillRoutes>);

impl SkillSource for Source {
    fn entries(&self) -> Arc<[SkillEntry]> {
        self.0.entries.clone().into()
    }

    fn directory_read(&self) -> bool {
        self.0.directory_read
    }

    fn get(&self, _call: Call, uri: String) -> BoxFuture<Option<Result<SkillEntry, Rejection>>> {
        let routes = self.0.clone();
        Box::pin(async move {
            let route = routes.routes.iter().find(|r| root(&uri) == Some(r.root.as_str()))?;
            let own = route.upstream_uri(&uri);
            let got = route
                .upstream
                .run(&Lane::Shared, true, |client| {
                    let own = own.clone();
                    async move { client.get_skill(&own).await }
                })
                .await;
            Some(got.map(|entry| downstream(entry, route.namespace.as_deref())).map_err(Rejection::Protocol))
        })
    }

    fn read_directory(
        &self,
        _call: Call,
        uri: String,
    ) -> BoxFuture<Option<Result<Vec<Resource>, Rejection>>> {
        let routes = self.0.clone();
        Box::pin(async move {
            // Within a skill: its owner answers. Above skills (`skill://acme` of
            // `skill://acme/billing/refunds`): every owner of a skill below, merged.
            let within = routes.routes.iter().filter(|r| r.holds(&uri)).max_by_key(|r| r.root.len());
            let owners: Vec<&SkillRoute> = match within {
                Some(route) => vec![route],
                None => {
                    let below = |r: &&SkillRoute| {
                        r.root.strip_prefix(&*uri).is_some_and(|rest| rest.starts_with('/'))
                    };
                    let mut owners: Vec<&SkillRoute> = Vec::new();
                    for route in routes.routes.iter().filter(below) {
                        let same = owners.iter().any(|o| {
                            Arc::ptr_eq(&o.upstream, &route.upstream) && o.namespace == route.namespace
                        });
                        if !same {
                            owners.push(route);
                        }
                    }
                    owners
                }
            };
            if owners.is_empty() {
                return None;
            }
            let mut children: Vec<Resource> = Vec::new();
            for route in owners {
                let own = route.upstream_uri(&uri);
                let listed = route
                    .upstream
                    .run(&Lane::Shared, true, |client| {
                        let own = own.clone();
                        async move { client.read_directory(&own).await }
                    })
                    .await;
                match listed {
                    Ok(listed) => {
                        for mut child in listed {
                            child.uri = route.downstream_uri(&child.uri);
                            if !children.iter().any(|c| c.uri == child.uri) {
                                children.push(child);
                            }
                        }
                    }
                    Err(e) => return Some(Err(Rejection::Protocol(e))),
                }
            }
            Some(Ok(children))
        })
    }
}
