//! Who may see and use what (`ServerBuilder::policy`): a [`Policy`] decides, for a caller, an
//! action and an item, whether the caller may use it. The same decision filters every list and
//! refuses the use — a tool you cannot see you cannot call, and the refusal of a hidden item is
//! the refusal of an unknown one, so it names nothing the caller could not see. Each refused
//! use is written to the audit log (`tracing` target [`AUDIT_TARGET`]): the caller's subject,
//! the method, the name and the rules that decided.

use mcp_types::{JsonObject, Prompt, Resource, ResourceTemplate, Tool};

use crate::principal::Principal;

/// The `tracing` target of the audit log.
pub const AUDIT_TARGET: &str = "mcp_server::audit";

/// What is being used.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Item<'a> {
    /// A tool (`tools/call`; listed by `tools/list`).
    Tool(&'a Tool),
    /// A prompt (`prompts/get`, and completing its arguments; listed by `prompts/list`).
    Prompt(&'a Prompt),
    /// A resource by URI (`resources/read`; listed by `resources/list`), with its listed
    /// definition when it is a static one.
    Resource {
        /// The URI.
        uri: &'a str,
        /// Its definition, when listed.
        def: Option<&'a Resource>,
    },
    /// A resource template (listed by `resources/templates/list`, and completing its variables).
    Template(&'a ResourceTemplate),
}

impl Item<'_> {
    /// The method that uses the item: `tools/call`, `prompts/get` or `resources/read`.
    pub fn action(&self) -> &'static str {
        match self {
            Item::Tool(_) => "tools/call",
            Item::Prompt(_) => "prompts/get",
            Item::Resource { .. } | Item::Template(_) => "resources/read",
        }
    }

    /// Its name (a URI or URI template for resources).
    pub fn name(&self) -> &str {
        match self {
            Item::Tool(t) => &t.name,
            Item::Prompt(p) => &p.name,
            Item::Resource { uri, .. } => uri,
            Item::Template(t) => &t.uri_template,
        }
    }
}

/// A question to the policy.
#[derive(Debug)]
#[non_exhaustive]
pub struct Question<'a> {
    /// The caller, when the transport authenticated one.
    pub principal: Option<&'a Principal>,
    /// The item.
    pub item: Item<'a>,
    /// The arguments of a use (a tool call's, a prompt's); `None` when deciding whether the
    /// caller may see the item at all (lists, and before looking at arguments).
    pub arguments: Option<&'a JsonObject>,
}

impl<'a> Question<'a> {
    /// Whether `principal` may use (with `arguments`) or see (`None`) `item`.
    pub fn new(principal: Option<&'a Principal>, item: Item<'a>, arguments: Option<&'a JsonObject>) -> Self {
        Question { principal, item, arguments }
    }
}

/// The answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Allowed.
    Allow,
    /// Refused, by these rules (the policy's names for them; empty when nothing allowed it).
    Deny(Vec<String>),
}

/// Decides who may see and use what. Called on the request path, once per listed item: keep
/// it fast (an in-memory rule set).
pub trait Policy: Send + Sync + 'static {
    /// The decision for `question`.
    fn decide(&self, question: &Question<'_>) -> Decision;

    /// Whether the allowed use `question` (a `tools/call`, with its arguments) needs a person's
    /// approval first (`ServerConfig::approvals` says how it is asked), besides the tools the
    /// approval settings name. `false` by default.
    fn needs_approval(&self, question: &Question<'_>) -> bool {
        let _ = question;
        false
    }

    /// The rate limits this policy names for the allowed use `question` (a `tools/call`,
    /// `prompts/get`, `resources/read` or completion, with its arguments when it has them),
    /// besides `ServerConfig::rate_limit`. Each is a token bucket per rule × caller (the
    /// token's subject, else `anonymous`) × item; the use is refused when any of them is empty
    /// (`-31000` with `data.retryAfterMs`, over HTTP `429` with `Retry-After`). None by
    /// default.
    fn rate_limits(&self, question: &Question<'_>) -> Vec<NamedLimit> {
        let _ = question;
        Vec::new()
    }
}

/// A rate limit a policy names ([`Policy::rate_limits`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedLimit {
    /// The rule that sets it: its buckets are its own.
    pub rule: std::sync::Arc<str>,
    /// The limit.
    pub limit: crate::rate::RateLimit,
}

/// Writes a refused use to the audit log.
pub(crate) fn audit(principal: Option<&Principal>, method: &str, name: &str, rules: &[String]) {
    tracing::info!(
        target: AUDIT_TARGET,
        subject = principal.and_then(|p| p.subject.as_deref()).unwrap_or("anonymous"),
        client_id = principal.and_then(|p| p.client_id.as_deref()),
        method,
        name,
        rules = %rules.join(","),
        "refused by policy"
    );
}
