//! The gateway: upstreams started from a configuration, their catalogs aggregated into one
//! mcp-server [`Server`] that any mcpkit transport serves, kept current as upstreams change,
//! come and go, and the configuration is reloaded.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arc_swap::ArcSwap;
use mcp_server::{Completions, Server, ServerConfig};
use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;

use crate::aggregate::{self, Memories, Routes, Seen, Tables};
use crate::config::{GatewayConfig, Settings, UpstreamConfig};
use crate::forward;
use crate::naming::Conflict;
use crate::status::{LeftOut, Status, UpstreamState};
use crate::upstream::{Events, Upstream};

/// How long changes are gathered before one aggregation covers them all.
const SETTLE: Duration = Duration::from_millis(20);
/// The `_meta` member of a list result naming the upstreams whose entries it leaves out.
pub const UNAVAILABLE_META: &str = "dev.mcpkit/unavailableUpstreams";
/// Resource updates waiting to be announced.
const UPDATES_QUEUE: usize = 1024;

/// Why the gateway could not start, or a reload was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GatewayError {
    /// Two upstreams offer the same name and the naming policy gives both that name (`never`,
    /// or a rename onto a taken name).
    #[error("name conflicts: {}", describe(.0))]
    Conflicts(Vec<Conflict>),
    /// The gateway's own server could not be built.
    #[error("{0}")]
    Server(String),
}

fn describe(conflicts: &[Conflict]) -> String {
    conflicts
        .iter()
        .map(|c| format!("{} {:?} is offered by {} and {}", c.kind, c.name, c.kept, c.left_out))
        .collect::<Vec<_>>()
        .join("; ")
}

struct Inner {
    server: Server,
    /// Where completions go (the tables route everything else).
    routes: Arc<ArcSwap<Routes>>,
    settings: ArcSwap<Settings>,
    upstreams: ArcSwap<Vec<Arc<Upstream>>>,
    memories: Mutex<Memories>,
    seen: Mutex<Seen>,
    report: Mutex<(Vec<Conflict>, Vec<LeftOut>, Vec<crate::status::SharedAppName>)>,
    events: Events,
    /// The resource URIs (downstream) the gateway's clients follow.
    followed: Arc<Followed>,
    options: GatewayOptions,
    closed: CancellationToken,
    /// One aggregation or reload at a time.
    applying: tokio::sync::Mutex<()>,
    /// Each upstream's own endpoint, by upstream name.
    views: ArcSwap<crate::view::Views>,
    /// Held while the views are made or brought up to date (one at a time).
    making_views: Mutex<()>,
    /// How each endpoint's server is configured (set at start).
    server_config: ServerConfig,
    /// The tools `approve_tools` names (set at start).
    approve: Arc<BTreeSet<String>>,
}

/// The resource URIs the gateway's clients follow (`Server::on_resource_interest`), and a
/// signal when they change.
#[derive(Default)]
pub(crate) struct Followed {
    uris: Mutex<BTreeSet<String>>,
    changed: Notify,
}

impl Followed {
    /// The interest hook of a server whose followed URIs are kept in `followed`; `also` is
    /// told too (the gateway's own set, whose signal makes the gateway follow again).
    fn hook(followed: Arc<Followed>, also: Arc<Followed>) -> impl Fn(&str, bool) + Send + Sync + 'static {
        move |uri, on| {
            let mut uris = followed.uris.lock().unwrap_or_else(|e| e.into_inner());
            if on {
                uris.insert(uri.to_owned());
            } else {
                uris.remove(uri);
            }
            drop(uris);
            also.changed.notify_one();
        }
    }
}

/// Builds a server of the gateway's — its own endpoint, or an upstream's
/// ([`crate::view`]) — whose tables the gateway swaps in; `routes` are where its completions
/// and relayed tasks go, `followed` where its clients' resource interest is kept.
fn build_server(
    title: String,
    routes: &Arc<ArcSwap<Routes>>,
    followed: Arc<Followed>,
    gateway_followed: Arc<Followed>,
    config: ServerConfig,
    policy: Option<Arc<dyn mcp_server::policy::Policy>>,
    state_key: Option<&mcp_server::StateKey>,
) -> Result<Server, GatewayError> {
    let owners = routes.clone();
    let builder = Server::builder("mcpkit-gateway", env!("CARGO_PKG_VERSION"))
        .title(title)
        .approval_target(move |tool| {
            owners
                .load()
                .tool_owners
                .get(tool)
                .map(|upstream| format!("server {upstream:?} (through the gateway)"))
        })
        .on_resource_interest(Followed::hook(followed, gateway_followed))
        .completions(Completions::new().fallback(forward::complete(routes.clone())))
        .serve_tools(true)
        .serve_prompts(true)
        .serve_resources(true)
        .config(config);
    let builder = match policy {
        Some(policy) => builder.policy(policy),
        None => builder,
    };
    let builder = match state_key {
        Some(key) => builder.request_state_key(key.clone()),
        None => builder,
    };
    let server = builder.build().map_err(|e| GatewayError::Server(e.to_string()))?;
    server.set_task_relay(Some(Arc::new(crate::tasks::Relay { routes: routes.clone() })));
    Ok(server)
}

/// Serves `tables` on `server`, swapping in only the lists that changed (`seen` holds what
/// it serves now).
/// Builds `view`'s tables from its upstream's listings, under the upstream's own names, and
/// serves them.
fn fill_view(view: &crate::view::View, up: &Arc<Upstream>, settings: &Settings) {
    let mut tables = {
        let mut memories = view.memories.lock().unwrap_or_else(|e| e.into_inner());
        aggregate::aggregate(std::slice::from_ref(up), settings, &mut memories, aggregate::Names::Own)
    };
    view.routes.store(Arc::new(std::mem::take(&mut tables.routes)));
    install(&view.server, &view.seen, tables);
}

fn install(server: &Server, seen_now: &Mutex<Seen>, tables: Tables) {
    let Tables { tools, prompts, resources, skills, seen, .. } = tables;
    let skills = (!skills.entries.is_empty() || skills.directory_read).then(|| {
        Arc::new(crate::skills::Source(Arc::new(skills))) as Arc<dyn mcp_server::skills::SkillSource>
    });
    server.set_skill_source(skills);
    let mut old = seen_now.lock().unwrap_or_else(|e| e.into_inner());
    // The tables hold no registration problem any more (taken entry by entry).
    if old.tools != seen.tools {
        let _ = server.set_tools(tools);
    }
    if old.prompts != seen.prompts {
        let _ = server.set_prompts(prompts);
    }
    if old.resources != seen.resources || old.templates != seen.templates {
        let _ = server.set_resources(resources);
    }
    *old = seen;
}

/// Gives an HTTP upstream its authorization — an OAuth client with stored credentials, a
/// token source — or `None` (the upstream's configured headers only). Asked once per upstream,
/// when it is started (and for each upstream a reload adds or changes).
pub type UpstreamAuth =
    Arc<dyn Fn(&UpstreamConfig) -> Option<Arc<dyn mcp_client::transport::http::HttpAuth>> + Send + Sync>;

/// Told, for each request sent to an upstream, the upstream's name, how long it took and
/// whether the upstream answered (a result or an error of its own) rather than timed out or
/// failed on the transport.
pub type UpstreamTiming = Arc<dyn Fn(&str, std::time::Duration, bool) + Send + Sync>;

/// How a gateway is started, beyond its configuration.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct GatewayOptions {
    upstream_auth: Option<UpstreamAuth>,
    upstream_timing: Option<UpstreamTiming>,
    upstream_requests: Option<Arc<dyn mcp_client::observe::RequestObserver>>,
    policy: Option<Arc<dyn mcp_server::policy::Policy>>,
    state_key: Option<mcp_server::StateKey>,
}

impl std::fmt::Debug for GatewayOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GatewayOptions")
            .field("upstream_auth", &self.upstream_auth.is_some())
            .field("policy", &self.policy.is_some())
            .finish()
    }
}

impl GatewayOptions {
    /// No options: upstreams get their configured headers only.
    pub fn new() -> Self {
        Self::default()
    }

    /// Tells `timing` how long each request to an upstream took (upstream latency metrics).
    /// Called on the request path: record and return.
    pub fn upstream_timing(
        mut self,
        timing: impl Fn(&str, std::time::Duration, bool) + Send + Sync + 'static,
    ) -> Self {
        self.upstream_timing = Some(Arc::new(timing));
        self
    }

    /// Tells `observer` about every request sent to an upstream, as mcp-client tells it
    /// (`ClientBuilder::observe`): a tracer's `CLIENT` span per upstream request, between the
    /// gateway's own span and the upstream's.
    pub fn upstream_requests(mut self, observer: Arc<dyn mcp_client::observe::RequestObserver>) -> Self {
        self.upstream_requests = Some(observer);
        self
    }

    /// The key the gateway's server protects what it hands its callers with — MRTR request
    /// states, the ids of the upstreams' tasks it passes on — so that replicas given the same
    /// key accept each other's (default: a random key per process).
    pub fn request_state_key(mut self, key: mcp_server::StateKey) -> Self {
        self.state_key = Some(key);
        self
    }

    /// Decides who may see and use which of the gateway's tools, prompts and resources (its
    /// downstream names; `mcp_server::policy`): every list is filtered and every use checked.
    /// Set at start: a reload does not change it.
    pub fn policy(mut self, policy: Arc<dyn mcp_server::policy::Policy>) -> Self {
        self.policy = Some(policy);
        self
    }

    /// Authorizes HTTP upstreams with what `auth` gives each (see [`UpstreamAuth`]): a `401`
    /// from the upstream goes to it (a token refreshed, or the failure it reports), and the
    /// refused request is sent again.
    pub fn upstream_auth(
        mut self,
        auth: impl Fn(&UpstreamConfig) -> Option<Arc<dyn mcp_client::transport::http::HttpAuth>>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        self.upstream_auth = Some(Arc::new(auth));
        self
    }

    fn auth_for(&self, config: &UpstreamConfig) -> Option<Arc<dyn mcp_client::transport::http::HttpAuth>> {
        if matches!(config.transport, crate::config::Transport::Stdio { .. })
            || config.credentials == crate::config::Credentials::None
        {
            return None;
        }
        self.upstream_auth.as_ref().and_then(|auth| auth(config))
    }
}

/// A running gateway. Cheap to clone.
#[derive(Clone)]
pub struct Gateway {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gateway").field("upstreams", &self.inner.upstreams.load().len()).finish()
    }
}

fn server_config(config: &GatewayConfig) -> ServerConfig {
    // A forwarded call may take as long as its upstream's timeout; the gateway's own limit
    // must not cut it shorter.
    let longest = config.upstreams.iter().map(|u| u.request_timeout).max().unwrap_or_default();
    ServerConfig::default()
        .with_tool_timeout(longest.max(Duration::from_secs(60)) + Duration::from_secs(5))
        .with_approvals(config.settings.approvals.clone())
        .with_rate_limit(config.settings.rate_limit)
}

impl Gateway {
    /// Starts every upstream of `config`, waits for the eager ones to be ready or to have
    /// failed (each within its start timeout), and aggregates what they offer. Fails when the
    /// naming gives two items the same name.
    pub async fn start(config: GatewayConfig) -> Result<Gateway, GatewayError> {
        Self::start_with(config, GatewayOptions::default()).await
    }

    /// [`Gateway::start`] with `options`.
    pub async fn start_with(config: GatewayConfig, options: GatewayOptions) -> Result<Gateway, GatewayError> {
        let routes: Arc<ArcSwap<Routes>> = Arc::default();
        let followed = Arc::new(Followed::default());
        let server_config = server_config(&config);
        let server = build_server(
            "mcpkit gateway".to_owned(),
            &routes,
            followed.clone(),
            followed.clone(),
            server_config.clone(),
            options.policy.clone(),
            options.state_key.as_ref(),
        )?;
        let (updates, updated) = mpsc::channel(UPDATES_QUEUE);
        let events = Events {
            changed: Arc::new(Notify::new()),
            updates,
            timing: options.upstream_timing.clone(),
            requests: options.upstream_requests.clone(),
        };
        let upstreams: Vec<Arc<Upstream>> = config
            .upstreams
            .iter()
            .map(|c| {
                Upstream::start(c.clone(), options.auth_for(c), config.settings.list_timeout, events.clone())
            })
            .collect();
        settle(&upstreams).await;
        let gateway = Gateway {
            inner: Arc::new(Inner {
                server,
                routes,
                settings: ArcSwap::from_pointee(config.settings.clone()),
                upstreams: ArcSwap::from_pointee(upstreams),
                memories: Mutex::new(Memories::default()),
                seen: Mutex::new(Seen::default()),
                report: Mutex::new((Vec::new(), Vec::new(), Vec::new())),
                events,
                followed,
                options,
                closed: CancellationToken::new(),
                applying: tokio::sync::Mutex::new(()),
                views: ArcSwap::default(),
                making_views: Mutex::new(()),
                approve: Arc::new(config.settings.approvals.tools.clone()),
                server_config,
            }),
        };
        let tables = gateway.tables(&gateway.inner.upstreams.load(), &config.settings);
        let fatal = fatal_conflicts(&tables.conflicts);
        if !fatal.is_empty() {
            gateway.close().await;
            return Err(GatewayError::Conflicts(fatal));
        }
        gateway.apply(tables);
        tokio::spawn(watch(Arc::downgrade(&gateway.inner), updated));
        Ok(gateway)
    }

    /// The server to serve (over stdio, Streamable HTTP or HTTP+SSE).
    pub fn server(&self) -> Server {
        self.inner.server.clone()
    }

    /// The gateway's status: each upstream's state and counters, conflicts, entries left out.
    pub fn status(&self) -> Status {
        let upstreams = self.inner.upstreams.load();
        let (conflicts, left_out, shared_app_names) =
            self.inner.report.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let seen = self.inner.seen.lock().unwrap_or_else(|e| e.into_inner());
        Status {
            upstreams: upstreams.iter().map(|u| u.status()).collect(),
            conflicts,
            left_out,
            shared_app_names,
            tools: seen.tools.len(),
            prompts: seen.prompts.len(),
            resources: seen.resources.len(),
            resource_templates: seen.templates.len(),
        }
    }

    /// Applies a new configuration: upstreams whose configuration is unchanged keep running
    /// (and their connections); new and changed ones are started; removed ones are closed.
    /// Refused — with everything left as it was — when the new naming gives two items one
    /// name.
    pub async fn reload(&self, config: GatewayConfig) -> Result<(), GatewayError> {
        let _applying = self.inner.applying.lock().await;
        let current = self.inner.upstreams.load_full();
        let by_name: HashMap<&str, &Arc<Upstream>> = current.iter().map(|u| (u.name(), u)).collect();
        let mut next = Vec::with_capacity(config.upstreams.len());
        let mut started = Vec::new();
        for c in &config.upstreams {
            match by_name.get(c.name.as_str()) {
                Some(existing) if same(&existing.config, c) => next.push((*existing).clone()),
                _ => {
                    let auth = self.inner.options.auth_for(c);
                    let up = Upstream::start(
                        c.clone(),
                        auth,
                        config.settings.list_timeout,
                        self.inner.events.clone(),
                    );
                    started.push(up.clone());
                    next.push(up);
                }
            }
        }
        settle(&started).await;
        let tables = self.tables(&next, &config.settings);
        let fatal = fatal_conflicts(&tables.conflicts);
        if !fatal.is_empty() {
            for up in started {
                up.close().await;
            }
            return Err(GatewayError::Conflicts(fatal));
        }
        let kept: Vec<&Arc<Upstream>> = next.iter().collect();
        let retired: Vec<Arc<Upstream>> =
            current.iter().filter(|u| !kept.iter().any(|k| Arc::ptr_eq(k, u))).cloned().collect();
        self.inner.settings.store(Arc::new(config.settings));
        self.inner.upstreams.store(Arc::new(next));
        self.apply(tables);
        for up in retired {
            up.close().await;
        }
        tracing::info!("configuration reloaded");
        Ok(())
    }

    /// Closes every upstream (stdio children stopped and reaped) and ends the subscriptions
    /// of connected clients.
    pub async fn close(&self) {
        self.inner.closed.cancel();
        self.inner.server.shutdown();
        for view in self.inner.views.load().values() {
            view.server.shutdown();
        }
        let upstreams = self.inner.upstreams.load_full();
        let mut closing = tokio::task::JoinSet::new();
        for up in upstreams.iter() {
            let up = up.clone();
            closing.spawn(async move { up.close().await });
        }
        while closing.join_next().await.is_some() {}
    }

    /// Names the upstreams whose entries the lists leave out because they are not available
    /// (down, or still starting), in the `_meta` of every list result.
    fn announce_unavailable(&self) {
        let upstreams = self.inner.upstreams.load();
        let unavailable: Vec<serde_json::Value> = upstreams
            .iter()
            .map(|u| u.status())
            .filter(|s| matches!(s.state, UpstreamState::Down | UpstreamState::Starting))
            .map(
                |s| serde_json::json!({"upstream": s.name, "state": s.state.as_str(), "error": s.last_error}),
            )
            .collect();
        let meta = |unavailable: Vec<serde_json::Value>| {
            (!unavailable.is_empty()).then(|| {
                let mut meta = serde_json::Map::new();
                meta.insert(UNAVAILABLE_META.to_owned(), serde_json::Value::Array(unavailable));
                meta
            })
        };
        // An upstream's own endpoint names its upstream when it is unavailable.
        for (name, view) in self.inner.views.load().iter() {
            let own = unavailable.iter().filter(|u| u["upstream"] == name.as_str()).cloned().collect();
            view.server.set_list_meta(meta(own));
        }
        self.inner.server.set_list_meta(meta(unavailable));
    }

    fn tables(&self, upstreams: &[Arc<Upstream>], settings: &Settings) -> Tables {
        let mut memories = self.inner.memories.lock().unwrap_or_else(|e| e.into_inner());
        aggregate::aggregate(upstreams, settings, &mut memories, aggregate::Names::Gateway)
    }

    /// Serves `tables`, announcing only the lists that changed; brings each upstream's own
    /// endpoint up to date.
    fn apply(&self, mut tables: Tables) {
        self.inner.routes.store(Arc::new(std::mem::take(&mut tables.routes)));
        let conflicts = std::mem::take(&mut tables.conflicts);
        let left_out = std::mem::take(&mut tables.left_out);
        let shared = std::mem::take(&mut tables.shared_app_names);
        for s in &shared {
            tracing::info!(name = %s.name, upstreams = ?s.upstreams, "an app tool name several upstreams share: no alias on the gateway's endpoint; each app is served on its upstream's own (/mcp/{{upstream}})");
        }
        for c in &conflicts {
            tracing::warn!(kind = c.kind, name = %c.name, kept = %c.kept, left_out = %c.left_out, "name conflict: the second upstream's entry is left out");
        }
        for l in &left_out {
            tracing::warn!(upstream = %l.upstream, "left out: {}", l.reason);
        }
        *self.inner.report.lock().unwrap_or_else(|e| e.into_inner()) = (conflicts, left_out, shared);
        install(&self.inner.server, &self.inner.seen, tables);
        self.apply_views();
        self.announce_unavailable();
        self.follow();
    }

    /// Each upstream's own endpoint already made: its tables built again under the upstream's
    /// own names, closed when the upstream is gone. One is made on first use
    /// ([`Gateway::upstream_server`]): a gateway whose upstreams' own endpoints nobody uses
    /// builds no second set of tables.
    fn apply_views(&self) {
        let _making = self.inner.making_views.lock().unwrap_or_else(|e| e.into_inner());
        let upstreams = self.inner.upstreams.load();
        let settings = self.inner.settings.load();
        let current = self.inner.views.load();
        let mut next = crate::view::Views::new();
        for up in upstreams.iter() {
            let Some(view) = current.get(up.name()).cloned() else { continue };
            fill_view(&view, up, &settings);
            next.insert(up.name().to_owned(), view);
        }
        for (name, view) in current.iter() {
            if !next.contains_key(name) {
                view.server.shutdown();
            }
        }
        self.inner.views.store(Arc::new(next));
    }

    fn new_view(&self, upstream: &str) -> Result<Arc<crate::view::View>, GatewayError> {
        let routes: Arc<ArcSwap<Routes>> = Arc::default();
        let followed = Arc::new(Followed::default());
        let policy = crate::view::Translated {
            inner: self.inner.options.policy.clone(),
            upstream: upstream.to_owned(),
            gateway: self.inner.routes.clone(),
            approve: self.inner.approve.clone(),
        };
        let config = self
            .inner
            .server_config
            .clone()
            .with_approvals(crate::view::view_approvals(&self.inner.server_config.approvals));
        let server = build_server(
            format!("mcpkit gateway: {upstream}"),
            &routes,
            followed.clone(),
            self.inner.followed.clone(),
            config,
            Some(Arc::new(policy)),
            self.inner.options.state_key.as_ref(),
        )?;
        Ok(Arc::new(crate::view::View {
            server,
            routes,
            followed,
            seen: Mutex::new(Seen::default()),
            memories: Mutex::new(Memories::default()),
        }))
    }

    /// The server of upstream `name`'s own endpoint: its tools, prompts, resources, skills
    /// and apps under its own names and URIs, routed to it, kept current as the gateway's own
    /// endpoint is (`None`: no such upstream). Where two upstreams' apps call tools by the same
    /// name, the gateway's endpoint cannot tell which app calls; each app's calls reach the
    /// right upstream here. Over HTTP `mcpkit gateway` serves it at `/mcp/{name}`.
    pub fn upstream_server(&self, name: &str) -> Option<Server> {
        if let Some(view) = self.inner.views.load().get(name) {
            return Some(view.server.clone());
        }
        let making = self.inner.making_views.lock().unwrap_or_else(|e| e.into_inner());
        let current = self.inner.views.load_full();
        if let Some(view) = current.get(name) {
            return Some(view.server.clone());
        }
        let upstreams = self.inner.upstreams.load();
        let up = upstreams.iter().find(|u| u.name() == name)?;
        let view = match self.new_view(name) {
            Ok(view) => view,
            Err(e) => {
                tracing::warn!(upstream = name, "its own endpoint could not be made: {e}");
                return None;
            }
        };
        fill_view(&view, up, &self.inner.settings.load());
        let mut next = (*current).clone();
        next.insert(name.to_owned(), view.clone());
        self.inner.views.store(Arc::new(next));
        drop(making);
        self.announce_unavailable();
        Some(view.server.clone())
    }

    /// Whether `server` is still one of the upstreams' own endpoints (an upstream a reload
    /// removed, or replaced with another of its name, is not).
    pub fn upstream_server_is(&self, server: &Server) -> bool {
        self.inner.views.load().values().any(|view| view.server.same(server))
    }

    /// Tells each upstream which of its resources the gateway's clients follow: a listed
    /// resource's owner, under its own URI; a URI under an upstream's namespace
    /// (`{prefix}+{uri}`), that upstream; any other URI (one a template yields), every upstream
    /// that offers templates.
    fn follow(&self) {
        let routes = self.inner.routes.load();
        let upstreams = self.inner.upstreams.load();
        let uris = self.inner.followed.uris.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let mut wanted: Vec<BTreeSet<String>> = vec![BTreeSet::new(); upstreams.len()];
        let index = |up: &Arc<Upstream>| upstreams.iter().position(|u| Arc::ptr_eq(u, up));
        for uri in &uris {
            if let Some((owner, own_uri)) = routes.resources.get(uri) {
                if let Some(i) = index(owner) {
                    wanted[i].insert(own_uri.clone());
                }
                continue;
            }
            let namespace = upstreams.iter().enumerate().find_map(|(i, u)| {
                crate::forward::unnamespaced(u.config.effective_prefix(), uri).map(|own| (i, own))
            });
            if let Some((i, own)) = namespace {
                wanted[i].insert(own);
                continue;
            }
            for (i, up) in upstreams.iter().enumerate() {
                if !up.catalog().templates.is_empty() {
                    wanted[i].insert(uri.clone());
                }
            }
        }
        // An upstream's own endpoint's clients follow its URIs as they are.
        for (name, view) in self.inner.views.load().iter() {
            if let Some(i) = upstreams.iter().position(|u| u.name() == name) {
                wanted[i]
                    .extend(view.followed.uris.lock().unwrap_or_else(|e| e.into_inner()).iter().cloned());
            }
        }
        for (up, uris) in upstreams.iter().zip(wanted) {
            up.follow(uris);
        }
    }

    async fn reaggregate(&self) {
        let _applying = self.inner.applying.lock().await;
        let upstreams = self.inner.upstreams.load_full();
        let settings = self.inner.settings.load_full();
        let tables = self.tables(&upstreams, &settings);
        self.apply(tables);
    }
}

/// Whether two configurations of an upstream are the same connection.
fn same(a: &UpstreamConfig, b: &UpstreamConfig) -> bool {
    a == b
}

/// The conflicts that make a start or a reload fail: tools and prompts (resources keep their
/// URIs, so a clash between two upstreams is reported, not fatal).
fn fatal_conflicts(conflicts: &[Conflict]) -> Vec<Conflict> {
    conflicts.iter().filter(|c| c.kind == "tool" || c.kind == "prompt").cloned().collect()
}

/// Waits until every upstream of `upstreams` has started (a lazy one: listed) or failed.
async fn settle(upstreams: &[Arc<Upstream>]) {
    let mut set = tokio::task::JoinSet::new();
    for up in upstreams {
        let up = up.clone();
        set.spawn(async move { up.wait_settled().await });
    }
    while set.join_next().await.is_some() {}
}

/// Re-aggregates when an upstream changed, and announces resource updates, until the gateway
/// closes.
async fn watch(inner: std::sync::Weak<Inner>, mut updated: mpsc::Receiver<(String, String)>) {
    let Some((changed, closed, followed)) =
        inner.upgrade().map(|i| (i.events.changed.clone(), i.closed.clone(), i.followed.clone()))
    else {
        return;
    };
    loop {
        tokio::select! {
            () = closed.cancelled() => return,
            () = changed.notified() => {
                tokio::time::sleep(SETTLE).await;
                let Some(inner) = inner.upgrade() else { return };
                Gateway { inner }.reaggregate().await;
            }
            () = followed.changed.notified() => {
                let Some(inner) = inner.upgrade() else { return };
                Gateway { inner }.follow();
            }
            update = updated.recv() => {
                let (Some((upstream, uri)), Some(inner)) = (update, inner.upgrade()) else { return };
                // Namespaced downstream: the update names the gateway's URI for it.
                let routes = inner.routes.load();
                let key = (upstream, uri);
                let downstream = routes.namespaced.get(&key).unwrap_or(&key.1);
                inner.server.resource_updated(downstream);
                if let Some(view) = inner.views.load().get(&key.0) {
                    view.server.resource_updated(&key.1);
                }
            }
        }
    }
}
