//! A request watched for the server's observer (`crate::observe`): what it was, taken before
//! routing consumes it, and how it ended — told exactly once, cancelled when its future is
//! dropped before an answer.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use mcp_types::methods::{CallTool, GetPrompt};
use mcp_types::{ProtocolVersion, RequestId, RequestMethod};

use crate::connection::Connection;
use crate::door::classify::{Classified, Params};
use crate::observe::{Observed, Observer, Outcome, Watching, method_label};
use crate::principal::Principal;
use crate::prompts::PromptEntry;
use crate::server::Server;
use crate::tools::ToolEntry;

/// The tool or prompt a request names, as a label: the table's own entry, or "other".
enum Name {
    None,
    Tool(Arc<ToolEntry>),
    Prompt(Arc<PromptEntry>),
    Other,
}

/// Borrows the server's observers (`'s`, the request's borrow of its server) rather than
/// holding a reference count of them: two atomic read-modify-writes a request fewer.
pub(crate) struct Watch<'s> {
    /// Those told when it is over, each directly (`Watching::finishing`).
    finishing: &'s [std::sync::Arc<dyn Observer>],
    id: RequestId,
    method: &'static str,
    name: Name,
    version: Option<ProtocolVersion>,
    principal: Option<Arc<Principal>>,
    session: Option<Arc<str>>,
    /// The request's span, for an observer that traces.
    pub(crate) span: Option<crate::observe::SpanIds>,
    /// The arguments, redacted, for an observer that wants them.
    arguments: Option<mcp_types::JsonObject>,
    started: Instant,
    /// Set by `tools/call` when its result says `isError`.
    pub(crate) tool_error: AtomicBool,
    told: bool,
}

impl<'s> Watch<'s> {
    pub(crate) fn new(
        server: &Server,
        watching: &'s Watching,
        connection: &Connection,
        request: &Classified,
        principal: Option<&Arc<Principal>>,
    ) -> Watch<'s> {
        // The label of a call or a get is its variant's: no string compared.
        let method = match &request.params {
            Params::CallTool(_) => CallTool::METHOD,
            Params::GetPrompt(_) => GetPrompt::METHOD,
            _ => method_label(&request.method),
        };
        let name = match &request.params {
            Params::CallTool(p) => match server.inner.tools.load().get(&p.name) {
                Some(entry) => Name::Tool(entry.clone()),
                None => Name::Other,
            },
            Params::GetPrompt(p) => prompt(server, &p.name),
            _ => Name::None,
        };
        let version = match request.meta.protocol_version.as_deref() {
            Some(v) if request.is_modern() => ProtocolVersion::parse(v),
            _ => connection.session().map(|s| s.version),
        };
        let arguments = if watching.arguments { arguments(&request.params, &name) } else { None };
        let span = watching
            .traces
            .then(|| crate::observe::SpanIds::continuing_sampled(&request.meta.extra, watching.ratio));
        for observer in &*watching.starting {
            observer.started(method);
        }
        Watch {
            finishing: &watching.finishing,
            id: request.id.clone(),
            method,
            name,
            version,
            principal: principal.cloned(),
            session: connection.session_label().cloned(),
            arguments,
            span,
            started: request.received.unwrap_or_else(Instant::now),
            tool_error: AtomicBool::new(false),
            told: false,
        }
    }

    /// The tool a `tools/call` names, as the table had it when the request was taken up.
    pub(crate) fn tool(&self) -> Option<&Arc<ToolEntry>> {
        match &self.name {
            Name::Tool(entry) => Some(entry),
            _ => None,
        }
    }

    /// Tells the observer how the request ended.
    pub(crate) fn finish(mut self, outcome: Outcome) {
        self.tell(outcome);
    }

    fn tell(&mut self, outcome: Outcome) {
        if std::mem::replace(&mut self.told, true) {
            return;
        }
        let outcome = match outcome {
            Outcome::Success if self.tool_error.load(Ordering::Relaxed) => Outcome::ToolError,
            other => other,
        };
        let name = match &self.name {
            Name::None => None,
            Name::Tool(entry) => Some(entry.def.name.as_str()),
            Name::Prompt(entry) => Some(entry.def.name.as_str()),
            Name::Other => Some("other"),
        };
        let now = Instant::now();
        let mut observed =
            Observed::new(&self.id, self.method, outcome, now.saturating_duration_since(self.started));
        observed.ended = Some(now);
        observed.name = name;
        observed.version = self.version;
        observed.subject = self.principal.as_deref().and_then(|p| p.subject.as_deref());
        observed.session = self.session.as_deref();
        observed.arguments = self.arguments.as_ref();
        observed.span = self.span.as_ref();
        for observer in self.finishing {
            observer.finished(&observed);
        }
    }
}

/// The prompt a `prompts/get` names, as the table has it. Out of line, so that a call's own
/// path (a tool's lookup) is not spread over this one's code too.
#[inline(never)]
fn prompt(server: &Server, name: &str) -> Name {
    match server.inner.prompts.load().get(name) {
        Some(entry) => Name::Prompt(entry.clone()),
        None => Name::Other,
    }
}

/// The arguments of a call or a get, for an observer that wants them: redacted where the
/// tool's schema marks them secret. Out of line: most observers want none.
#[cold]
#[inline(never)]
fn arguments(params: &Params, name: &Name) -> Option<mcp_types::JsonObject> {
    match (params, name) {
        (Params::CallTool(p), Name::Tool(entry)) => {
            p.arguments.as_ref().map(|a| crate::observe::redact(a, &entry.def.input_schema))
        }
        // Prompt arguments are strings the prompt's definition does not mark secret.
        (Params::GetPrompt(p), Name::Prompt(_)) => p
            .arguments
            .as_ref()
            .map(|a| a.iter().map(|(k, v)| (k.clone(), mcp_types::JsonValue::String(v.clone()))).collect()),
        _ => None,
    }
}

impl Drop for Watch<'_> {
    fn drop(&mut self) {
        self.tell(Outcome::Cancelled);
    }
}
