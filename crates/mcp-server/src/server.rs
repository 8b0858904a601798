//! The server: its registries, its settings, and the context its requests' extractors share.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::Arc;

use arc_swap::ArcSwap;
use mcp_types::{
    Implementation, PromptsCapability, ResourcesCapability, ServerCapabilities, ToolsCapability,
};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::completion::Completions;
use crate::config::ServerConfig;
use crate::context::{Change, ServerContext, States};
use crate::extract::Notifier;
use crate::prompts::Prompts;
use crate::request_state::StateKey;
use crate::resources::Resources;
use crate::tools::{RegistrationError, Tools};

/// Why a server could not be built.
#[derive(Debug, Clone, thiserror::Error)]
#[error("the server definition is invalid: {}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
#[non_exhaustive]
pub struct BuildError(pub Vec<RegistrationError>);

pub(crate) struct ServerInner {
    /// Shared with every modern result's `_meta` (`io.modelcontextprotocol/serverInfo`).
    pub(crate) info: Arc<Implementation>,
    pub(crate) instructions: Option<String>,
    pub(crate) tools: ArcSwap<Tools>,
    pub(crate) prompts: ArcSwap<Prompts>,
    pub(crate) resources: ArcSwap<Resources>,
    pub(crate) completions: Completions,
    /// Members added to the `_meta` of every list result (`Server::set_list_meta`).
    pub(crate) list_meta: arc_swap::ArcSwapOption<mcp_types::JsonObject>,
    pub(crate) config: ServerConfig,
    pub(crate) key: StateKey,
    /// What a request's extractors read of the server (its state values, its change channel).
    pub(crate) context: Arc<ServerContext>,
    pub(crate) shutdown: CancellationToken,
    /// The resource URIs clients follow, counted when a hook wants them.
    pub(crate) interest: Arc<crate::interest::Interest>,
    /// Who may see and use what (`ServerBuilder::policy`).
    pub(crate) policy: Option<Arc<dyn crate::policy::Policy>>,
    /// The rate limits' buckets, when `ServerConfig::rate_limit` is set or a policy may name
    /// limits.
    pub(crate) limiter: Option<crate::rate::Limiter>,
    /// Where a tool runs, as the approval form names it (`ServerBuilder::approval_target`).
    pub(crate) approval_target: Option<ApprovalTarget>,
    /// Told about every request (`Server::observe`), with what it answers once for all; set
    /// at most once.
    pub(crate) observer: std::sync::OnceLock<crate::observe::Watching>,
    /// The tasks this server made (the tasks extension).
    pub(crate) tasks: Arc<crate::task::Tasks>,
    /// The skills it serves (the skills extension); their files are in `resources`.
    pub(crate) skills: Option<Arc<crate::skills::Skills>>,
    /// Skills another server serves, passed on (`Server::set_skill_source`).
    pub(crate) skill_source: arc_swap::ArcSwapOption<Arc<dyn crate::skills::SkillSource>>,
    /// Answers for tasks other servers run, passed on (`Server::set_task_relay`).
    pub(crate) task_relay: arc_swap::ArcSwapOption<Arc<dyn crate::task_relay::TaskRelay>>,
    serve_tools: bool,
    serve_prompts: bool,
    serve_resources: bool,
}

impl ServerInner {
    /// The capabilities this server declares, for `initialize` and `server/discover`.
    pub(crate) fn capabilities(&self, modern: bool) -> ServerCapabilities {
        let mut caps = ServerCapabilities::default();
        if self.serve_tools {
            caps.tools = Some(ToolsCapability { list_changed: Some(true), extra: Default::default() });
        }
        if self.serve_prompts {
            caps.prompts = Some(PromptsCapability { list_changed: Some(true), extra: Default::default() });
        }
        if self.serve_resources {
            caps.resources = Some(ResourcesCapability {
                list_changed: Some(true),
                subscribe: Some(true),
                extra: Default::default(),
            });
        }
        // Completion is declared only when something completes: a server without handlers
        // would answer every `completion/complete` with nothing.
        if (self.serve_prompts || self.serve_resources) && !self.completions.is_empty() {
            caps.completions = Some(Default::default());
        }
        if self.resources.load().has_apps() {
            let id = mcp_types::extensions::ui::ID.to_owned();
            caps.extensions.get_or_insert_with(Default::default).insert(id, Default::default());
        }
        let source = self.skill_source.load();
        if self.skills.is_some() || source.is_some() {
            let directory_read = self.skills.is_some() || source.as_ref().is_some_and(|s| s.directory_read());
            let mut settings = mcp_types::JsonObject::new();
            if directory_read {
                settings.insert("directoryRead".into(), true.into());
            }
            let id = mcp_types::extensions::skills::ID.to_owned();
            caps.extensions.get_or_insert_with(Default::default).insert(id, settings);
        }
        if !modern {
            // 2026-07-28 replaced the logging capability with per-request `logLevel`.
            caps.logging = Some(Default::default());
        } else if self.serves_tasks() {
            let id = mcp_types::extensions::tasks::ID.to_owned();
            caps.extensions.get_or_insert_with(Default::default).insert(id, Default::default());
        }
        caps
    }

    /// The skills extension is served: skills of its own, or another server's passed on.
    pub(crate) fn serves_skills(&self) -> bool {
        self.skills.is_some() || self.skill_source.load().is_some()
    }

    /// The tasks extension is served (2026-07-28) when a tool can become a task, or once one
    /// did (its tasks stay reachable when the tool is gone).
    pub(crate) fn serves_tasks(&self) -> bool {
        self.tools.load().makes_tasks() || self.tasks.made_any()
    }

    pub(crate) fn serves_tools(&self) -> bool {
        self.serve_tools
    }

    pub(crate) fn serves_prompts(&self) -> bool {
        self.serve_prompts
    }

    pub(crate) fn serves_resources(&self) -> bool {
        self.serve_resources
    }
}

/// An MCP server: cheap to clone, shared by every connection and transport.
#[derive(Clone)]
pub struct Server {
    pub(crate) inner: Arc<ServerInner>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("name", &self.inner.info.name).finish_non_exhaustive()
    }
}

impl Server {
    /// Starts building a server named `name` at `version`.
    pub fn builder(name: &str, version: &str) -> ServerBuilder {
        ServerBuilder {
            info: Implementation::new(name, version),
            instructions: None,
            tools: Tools::new(),
            prompts: Prompts::new(),
            resources: Resources::new(),
            completions: Completions::new(),
            config: ServerConfig::default(),
            key: None,
            states: HashMap::new(),
            serve: [None; 3],
            interest: None,
            approval_target: None,
            policy: None,
            task_store: None,
            skills: crate::skills::Skills::new(),
        }
    }

    /// The server's identity.
    pub fn info(&self) -> &Implementation {
        &self.inner.info
    }

    /// The server's settings.
    pub fn config(&self) -> &ServerConfig {
        &self.inner.config
    }

    /// Tells `observer` about every request from now on (metrics, request logs): what each
    /// was, how it ended and how long it took (`crate::observe`). A server has at most one
    /// observer (one that fans out serves several); `false` when it has one already.
    pub fn observe(&self, observer: Arc<dyn crate::observe::Observer>) -> bool {
        self.inner.observer.set(crate::observe::Watching::of(observer)).is_ok()
    }

    /// The observer, when one was set ([`Server::observe`]); transports tell it about the
    /// requests they refuse themselves and the bytes they move.
    pub fn observer(&self) -> Option<&Arc<dyn crate::observe::Observer>> {
        self.inner.observer.get().map(|watching| &watching.observer)
    }

    /// The definition of a tool, if there is one by that name (a copy: per request, prefer
    /// [`Server::tool_headers`], which shares what was computed at registration).
    pub fn tool(&self, name: &str) -> Option<mcp_types::Tool> {
        self.inner.tools.load().get(name).map(|e| e.def.clone())
    }

    /// The `x-mcp-header` annotations of a tool's input schema (the `Mcp-Param-*` headers a
    /// modern HTTP call must carry), if there is a tool by that name: computed when the tool
    /// was registered, shared, never cloned. Empty when it has none, or when they are invalid.
    pub fn tool_headers(&self, name: &str) -> Option<Arc<[mcp_types::headers::ParamHeader]>> {
        self.inner.tools.load().get(name).map(|e| e.headers.clone())
    }

    /// Serves the skills of `source` (a gateway's upstreams'), or no longer (`None`): listed
    /// after the server's own, `skills/get` and `resources/directory/read` passed on for what
    /// its own do not answer. Their files must be in the resource table.
    pub fn set_skill_source(&self, source: Option<Arc<dyn crate::skills::SkillSource>>) {
        self.inner.skill_source.store(source.map(Arc::new));
    }

    /// Whether `other` is this server (a clone of it), not merely one built alike.
    pub fn same(&self, other: &Server) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Answers for the tasks `relay` passes on (a gateway's upstreams'), or no longer (`None`):
    /// a handler hands such a task to its caller with `TaskHandle::relay`, and the caller's
    /// `tasks/*` requests and task subscriptions for it go to `relay`. The ids given out are
    /// bound to the caller under the server's request-state key
    /// ([`ServerBuilder::request_state_key`]): servers sharing the key serve each other's.
    pub fn set_task_relay(&self, relay: Option<Arc<dyn crate::task_relay::TaskRelay>>) {
        self.inner.task_relay.store(relay.map(Arc::new));
    }

    /// Replaces the tool table and announces the change.
    pub fn set_tools(&self, tools: Tools) -> Result<(), BuildError> {
        if !tools.errors.is_empty() {
            return Err(BuildError(tools.errors));
        }
        self.inner.tools.store(Arc::new(tools));
        self.notify(Change::Tools);
        Ok(())
    }

    /// Replaces the prompt table and announces the change.
    pub fn set_prompts(&self, prompts: Prompts) -> Result<(), BuildError> {
        if !prompts.errors.is_empty() {
            return Err(BuildError(prompts.errors));
        }
        self.inner.prompts.store(Arc::new(prompts));
        self.notify(Change::Prompts);
        Ok(())
    }

    /// Replaces the resource table and announces the change.
    pub fn set_resources(&self, resources: Resources) -> Result<(), BuildError> {
        if !resources.errors.is_empty() {
            return Err(BuildError(resources.errors));
        }
        self.inner.resources.store(Arc::new(resources));
        self.notify(Change::Resources);
        Ok(())
    }

    /// Members added to the `_meta` of every list result from now on (`tools/list`,
    /// `prompts/list`, `resources/list`, `resources/templates/list`; both eras); `None` removes
    /// them. For what a list leaves out and why (a gateway names its unavailable upstreams).
    pub fn set_list_meta(&self, meta: Option<mcp_types::JsonObject>) {
        self.inner.list_meta.store(meta.map(Arc::new));
    }

    /// Announces a change to every subscribed client (modern `subscriptions/listen` streams,
    /// legacy sessions).
    pub fn notify(&self, change: Change) {
        // No receivers is not an error: nobody is listening.
        let _ = self.inner.context.changes.send(change);
    }

    /// A handle that announces changes, for code that should not hold the server.
    pub fn notifier(&self) -> Notifier {
        Notifier(self.inner.context.changes.clone())
    }

    /// Announces that the resource at `uri` changed.
    pub fn resource_updated(&self, uri: &str) {
        self.notify(Change::ResourceUpdated(uri.to_owned()));
    }

    /// Ends every open subscription gracefully (each gets its completion result).
    pub fn shutdown(&self) {
        self.inner.shutdown.cancel();
    }
}

/// Builds a [`Server`].
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    tools: Tools,
    prompts: Prompts,
    resources: Resources,
    completions: Completions,
    config: ServerConfig,
    key: Option<StateKey>,
    states: States,
    serve: [Option<bool>; 3],
    interest: Option<crate::interest::InterestHook>,
    approval_target: Option<ApprovalTarget>,
    policy: Option<Arc<dyn crate::policy::Policy>>,
    task_store: Option<Arc<dyn crate::task::TaskStore>>,
    skills: crate::skills::Skills,
}

/// Names where a tool runs, for the approval form (`ServerBuilder::approval_target`).
pub(crate) type ApprovalTarget = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

impl ServerBuilder {
    /// Instructions for the client's model, sent in `initialize` and `server/discover`.
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// A display title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }

    /// The tools.
    pub fn tools(mut self, tools: Tools) -> Self {
        self.tools = tools;
        self
    }

    /// The prompts.
    pub fn prompts(mut self, prompts: Prompts) -> Self {
        self.prompts = prompts;
        self
    }

    /// The resources.
    pub fn resources(mut self, resources: Resources) -> Self {
        self.resources = resources;
        self
    }

    /// The completion handlers.
    pub fn completions(mut self, completions: Completions) -> Self {
        self.completions = completions;
        self
    }

    /// Shared state for the `State<S>` extractor (one value per type).
    pub fn state<S: Clone + Send + Sync + 'static>(mut self, state: S) -> Self {
        self.states.insert(TypeId::of::<S>(), Box::new(state));
        self
    }

    /// The settings.
    pub fn config(mut self, config: ServerConfig) -> Self {
        self.config = config;
        self
    }

    /// The key protecting MRTR `requestState` (default: random per process).
    pub fn request_state_key(mut self, key: StateKey) -> Self {
        self.key = Some(key);
        self
    }

    /// Declare (or not) the tools capability regardless of whether tools are registered now
    /// (a server that adds tools later declares it up front).
    pub fn serve_tools(mut self, yes: bool) -> Self {
        self.serve[0] = Some(yes);
        self
    }

    /// Declare (or not) the prompts capability regardless of registrations.
    pub fn serve_prompts(mut self, yes: bool) -> Self {
        self.serve[1] = Some(yes);
        self
    }

    /// Declare (or not) the resources capability regardless of registrations.
    pub fn serve_resources(mut self, yes: bool) -> Self {
        self.serve[2] = Some(yes);
        self
    }

    /// Calls `hook(uri, true)` when the first client starts following the resource `uri`
    /// (legacy `resources/subscribe`, or a `subscriptions/listen` stream's
    /// `resourceSubscriptions`) and `hook(uri, false)` when the last one stops (unsubscribed,
    /// its stream or its session ended) — for a server whose resources live elsewhere, as a
    /// gateway's do, to follow upstream only what its clients follow. The hook runs under a
    /// lock that keeps one URI's calls in order: record and return.
    pub fn on_resource_interest(mut self, hook: impl Fn(&str, bool) + Send + Sync + 'static) -> Self {
        self.interest = Some(Arc::new(hook));
        self
    }

    /// How the approval form (`ServerConfig::approvals`) names where a tool runs: `target(tool)`,
    /// e.g. `server "files"` for a gateway's upstream; `None` (and by default): this server.
    pub fn approval_target(
        mut self,
        target: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
    ) -> Self {
        self.approval_target = Some(Arc::new(target));
        self
    }

    /// Decides who may see and use which tools, prompts and resources (`crate::policy`): every
    /// list is filtered by it and every use checked, a hidden item refused as an unknown one.
    pub fn policy(mut self, policy: Arc<dyn crate::policy::Policy>) -> Self {
        self.policy = Some(policy);
        self
    }

    /// Where tasks' states are kept (the tasks extension): by default in memory
    /// ([`MemoryTaskStore`](crate::task::MemoryTaskStore), bounded by
    /// [`TaskConfig::capacity`](crate::task::TaskConfig::capacity)).
    pub fn task_store(mut self, store: Arc<dyn crate::task::TaskStore>) -> Self {
        self.task_store = Some(store);
        self
    }

    /// The skills (the skills extension): their files are served as resources (the resources
    /// capability is then declared), and `skills/list`, `skills/get` and
    /// `resources/directory/read` answer for them.
    pub fn skills(mut self, skills: crate::skills::Skills) -> Self {
        self.skills = skills;
        self
    }

    /// Builds the server; every registration problem is reported at once.
    pub fn build(mut self) -> Result<Server, BuildError> {
        let mut errors = Vec::new();
        errors.extend(self.skills.errors.iter().cloned());
        let skills = (!self.skills.is_empty()).then(|| {
            let resources = std::mem::take(&mut self.resources);
            self.resources = self.skills.serve_files(resources);
            Arc::new(std::mem::take(&mut self.skills))
        });
        errors.extend(self.tools.errors.iter().cloned());
        errors.extend(self.prompts.errors.iter().cloned());
        errors.extend(self.resources.errors.iter().cloned());
        if !errors.is_empty() {
            return Err(BuildError(errors));
        }
        let (changes, _) = broadcast::channel(256);
        let context = ServerContext::new(self.states, changes, self.config.peer_request_timeout);
        let tasks = Arc::new(crate::task::Tasks::new(self.config.tasks.clone(), self.task_store));
        let inner = ServerInner {
            serve_tools: self.serve[0].unwrap_or(!self.tools.is_empty()),
            serve_prompts: self.serve[1].unwrap_or(!self.prompts.is_empty()),
            serve_resources: self.serve[2].unwrap_or(!self.resources.is_empty()),
            info: Arc::new(self.info),
            instructions: self.instructions,
            tools: ArcSwap::from_pointee(self.tools),
            prompts: ArcSwap::from_pointee(self.prompts),
            resources: ArcSwap::from_pointee(self.resources),
            completions: self.completions,
            list_meta: arc_swap::ArcSwapOption::empty(),
            // Buckets exist when something may name a limit: the configuration or a policy.
            limiter: (self.config.rate_limit.is_some() || self.policy.is_some())
                .then(crate::rate::Limiter::new),
            config: self.config,
            key: self.key.unwrap_or_else(StateKey::random),
            context: Arc::new(context),
            shutdown: CancellationToken::new(),
            interest: Arc::new(crate::interest::Interest::new(self.interest)),
            observer: std::sync::OnceLock::new(),
            tasks,
            skills,
            skill_source: arc_swap::ArcSwapOption::empty(),
            task_relay: arc_swap::ArcSwapOption::empty(),
            approval_target: self.approval_target,
            policy: self.policy,
        };
        Ok(Server { inner: Arc::new(inner) })
    }
}
