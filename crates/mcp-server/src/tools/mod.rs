//! Tools: one table serves `tools/list` and `tools/call`, so the two cannot drift apart.
//!
//! ```
//! use mcp_server::{Args, Json, Tools};
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct AddArgs { a: i64, b: i64 }
//! #[derive(Serialize, JsonSchema)]
//! struct Sum { sum: i64 }
//!
//! async fn add(Args(AddArgs { a, b }): Args<AddArgs>) -> Json<Sum> {
//!     Json(Sum { sum: a + b })
//! }
//!
//! let tools = Tools::new().add("add", "Add two integers", add);
//! assert_eq!(tools.len(), 1);
//! ```

mod output;
mod passed;

use std::sync::Arc;

use mcp_schema::Schema;
use mcp_types::headers::ParamHeader;
use mcp_types::{JsonObject, RawJson, Tool};

use crate::call::Call;
use crate::extract::Rejection;
use crate::handler::{BoxFuture, Handler};
use crate::schema::object_schema;

pub use output::{IntoToolResult, Json, ToolError};
pub use passed::{PassedResult, ToolOutput};

/// What running a tool produced, before the router shapes it for the wire.
pub(crate) type ToolRun = Result<ToolOutput, Rejection>;

/// A tool's handler with its types erased: what both the typed and the dynamic forms become.
pub(crate) type ErasedTool = Arc<dyn Fn(Call) -> BoxFuture<ToolRun> + Send + Sync>;

/// One registered tool, with every fact the request path needs computed once, when the tool
/// is registered: a request borrows them (the table is an `Arc` snapshot), never rebuilds them.
pub(crate) struct ToolEntry {
    pub(crate) def: Tool,
    pub(crate) input: Schema,
    pub(crate) output: Option<Schema>,
    /// The definition as `tools/list` writes it: pages are assembled from these bytes.
    pub(crate) listed: RawJson,
    /// The `x-mcp-header` annotations of the input schema, for the HTTP transport's
    /// `Mcp-Param-*` check (empty when there are none, or when they are invalid).
    pub(crate) headers: Arc<[ParamHeader]>,
    pub(crate) run: ErasedTool,
    /// Whether a call may become a task (`execution.taskSupport`; the tasks extension).
    pub(crate) task: mcp_types::TaskSupport,
    /// When it becomes one: the first time it waits (the handler's own tools), or only when
    /// the handler says so (`TaskHandle::detach`: a proxy, which knows when the server it
    /// passes the call to made it a task).
    pub(crate) detach_on_wait: bool,
}

/// A registration problem, reported when the server is built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistrationError {
    /// Two tools, prompts or resources share a name (or URI).
    #[error("{kind} {name:?} is registered twice")]
    Duplicate {
        /// What kind of thing.
        kind: &'static str,
        /// Its name or URI.
        name: String,
    },
    /// A name is empty or longer than 128 characters.
    #[error("{kind} name {name:?} is invalid: {reason}")]
    InvalidName {
        /// What kind of thing.
        kind: &'static str,
        /// The name.
        name: String,
        /// Why.
        reason: &'static str,
    },
    /// A schema does not compile (or refers to something outside itself).
    #[error("the {which} of tool {name:?} is invalid: {reason}")]
    InvalidSchema {
        /// The tool.
        name: String,
        /// `inputSchema` or `outputSchema`.
        which: &'static str,
        /// Why.
        reason: String,
    },
    /// A skill could not be served (the skills extension): unreadable, without a `SKILL.md`
    /// and its frontmatter, a name that does not match its path, over the limits.
    #[error("skill {path:?} is not served: {reason}")]
    InvalidSkill {
        /// The skill's path (or the directory it was looked for in).
        path: String,
        /// Why.
        reason: String,
    },
    /// A resource template does not parse.
    #[error("resource template {template:?} is invalid: {reason}")]
    InvalidTemplate {
        /// The template.
        template: String,
        /// Why.
        reason: String,
    },
}

/// Where a tool's definition and handler come from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Source {
    /// An async function: its schemas are the program's own.
    Typed,
    /// Defined at run time (`add_dyn`): its schemas are untrusted.
    Dynamic,
    /// Passed on to another server (`add_proxy`): untrusted, and it becomes a task only when
    /// its handler says so.
    Proxy,
}

/// The tool table, in registration order (the order `tools/list` returns).
#[derive(Clone, Default)]
pub struct Tools {
    pub(crate) entries: Vec<Arc<ToolEntry>>,
    pub(crate) index: crate::hash::NameMap<usize>,
    /// Names a tool is also called by, unlisted ([`Tools::alias`]).
    aliases: crate::hash::NameMap<usize>,
    pub(crate) errors: Vec<RegistrationError>,
    /// How many tools can become tasks.
    pub(crate) task_tools: usize,
}

impl std::fmt::Debug for Tools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.entries.iter().map(|e| &e.def.name)).finish()
    }
}

impl Tools {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// The number of tools.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when there are no tools.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The tool definitions, in order.
    pub fn definitions(&self) -> impl Iterator<Item = &Tool> {
        self.entries.iter().map(|e| &e.def)
    }

    /// Adds a tool from an async function. Its `inputSchema` comes from its `Args<T>`
    /// extractor, its `outputSchema` from a `Json<T>` return. A duplicate name is reported
    /// by [`ServerBuilder::build`](crate::ServerBuilder::build).
    pub fn add<H, A, R>(self, name: &str, description: &str, handler: H) -> Self
    where
        H: Handler<A, R>,
        R: IntoToolResult,
    {
        let def = Tool::without_arguments(name).with_description(description);
        self.add_tool(def, handler)
    }

    /// Adds a tool with a full definition (title, annotations, icons, `_meta`); the handler's
    /// argument and return types still provide the schemas when they have them.
    pub fn add_tool<H, A, R>(self, mut def: Tool, handler: H) -> Self
    where
        H: Handler<A, R>,
        R: IntoToolResult,
    {
        if let Some(schema) = H::input_schema() {
            def.input_schema = schema;
        }
        if let Some(schema) = R::output_schema() {
            def.output_schema = Some(schema);
        }
        let run: ErasedTool = Arc::new(move |call: Call| {
            let fut = handler.call(call);
            Box::pin(async move { fut.await.map(|r| ToolOutput::Built(r.into_tool_result())) })
        });
        self.insert(def, run, Source::Typed)
    }

    /// Adds a tool defined at run time (a gateway's, say): the definition is used as given and
    /// the closure receives the whole [`Call`] (arguments via [`Call::arguments`], extractors via
    /// [`Call::extract`]). The schemas are treated as untrusted and checked for complexity.
    pub fn add_dyn<F, Fut>(self, def: Tool, handler: F) -> Self
    where
        F: Fn(Call) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<mcp_types::CallToolResult, ToolError>> + Send + 'static,
    {
        let run: ErasedTool = Arc::new(move |call: Call| {
            let fut = handler(call);
            Box::pin(async move { Ok(ToolOutput::Built(fut.await.unwrap_or_else(ToolError::into_result))) })
        });
        self.insert(def, run, Source::Dynamic)
    }

    /// Adds a tool whose handler passes the call on to another server (a gateway's): like
    /// [`Tools::add_dyn`], but the handler may fail the request itself — with
    /// [`Rejection::Protocol`], the JSON-RPC error to answer with (the other server's own, say),
    /// kept apart from a tool error (`isError` in the result it returns). The result may be
    /// built ([`CallToolResult`](mcp_types::CallToolResult)) or the other server's own JSON
    /// ([`PassedResult`]), passed on without being decoded and encoded again.
    pub fn add_proxy<F, Fut, R>(self, def: Tool, handler: F) -> Self
    where
        F: Fn(Call) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<R, Rejection>> + Send + 'static,
        R: Into<ToolOutput> + 'static,
    {
        let run: ErasedTool = Arc::new(move |call: Call| {
            let fut = handler(call);
            Box::pin(async move { fut.await.map(Into::into) })
        });
        self.insert(def, run, Source::Proxy)
    }

    fn insert(mut self, mut def: Tool, run: ErasedTool, source: Source) -> Self {
        let untrusted = source != Source::Typed;
        if let Err(e) = check_name("tool", &def.name) {
            self.errors.push(e);
            return self;
        }
        if self.index.contains_key(&def.name) {
            self.errors.push(RegistrationError::Duplicate { kind: "tool", name: def.name });
            return self;
        }
        let compile = |schema: &JsonObject, which: &'static str| {
            let value = serde_json::Value::Object(schema.clone());
            let compiled = if untrusted {
                Schema::compile_untrusted(&value, &mcp_schema::Limits::default())
            } else {
                Schema::compile(&value)
            };
            compiled.map_err(|e| RegistrationError::InvalidSchema {
                name: def.name.clone(),
                which,
                reason: e.to_string(),
            })
        };
        if def.input_schema.is_empty() {
            def.input_schema = object_schema();
        }
        let input = match compile(&def.input_schema, "inputSchema") {
            Ok(s) => s,
            Err(e) => {
                self.errors.push(e);
                return self;
            }
        };
        let output = match def.output_schema.as_ref().map(|s| compile(s, "outputSchema")).transpose() {
            Ok(s) => s,
            Err(e) => {
                self.errors.push(e);
                return self;
            }
        };
        let listed = match serde_json::value::to_raw_value(&def) {
            Ok(listed) => listed,
            Err(e) => {
                // A definition is plain JSON; only a custom serializer in `_meta` could fail.
                self.errors.push(RegistrationError::InvalidSchema {
                    name: def.name.clone(),
                    which: "definition",
                    reason: format!("it cannot be serialized: {e}"),
                });
                return self;
            }
        };
        let headers = match mcp_types::headers::param_headers(&def.input_schema) {
            Ok(headers) => headers.into(),
            Err(e) => {
                // The rule says clients drop such a tool; the server still serves it to those
                // that call it anyway, with nothing to mirror (what the HTTP check always did).
                tracing::warn!(tool = %def.name, error = %e, "invalid x-mcp-header annotation");
                Arc::from([])
            }
        };
        // A proxy may be answered with a task by the server it passes the call to, whatever
        // that server lists (2026-07-28 tools say nothing of tasks): it can always become one.
        let task = match (source, def.task_support()) {
            (Source::Proxy, mcp_types::TaskSupport::Required) => mcp_types::TaskSupport::Required,
            (Source::Proxy, _) => mcp_types::TaskSupport::Optional,
            (_, declared) => declared,
        };
        if task != mcp_types::TaskSupport::Forbidden {
            self.task_tools += 1;
        }
        self.index.insert(def.name.clone(), self.entries.len());
        let detach_on_wait = source != Source::Proxy;
        self.entries.push(Arc::new(ToolEntry {
            def,
            input,
            output,
            listed,
            headers,
            run,
            task,
            detach_on_wait,
        }));
        self
    }

    /// True when a tool can become a task (`execution.taskSupport` `optional` or `required`).
    pub(crate) fn makes_tasks(&self) -> bool {
        self.task_tools > 0
    }

    /// Takes the registration problems found so far (a name refused, a schema that does not
    /// compile): the entries concerned were left out of the table. For a table built from
    /// definitions the program does not control (a gateway's), so that one bad entry can be
    /// reported and the rest served; [`Server::set_tools`](crate::Server::set_tools) refuses a
    /// table that still holds problems.
    pub fn take_errors(&mut self) -> Vec<RegistrationError> {
        std::mem::take(&mut self.errors)
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Arc<ToolEntry>> {
        self.index.get(name).or_else(|| self.aliases.get(name)).map(|&i| &self.entries[i])
    }

    /// Makes the tool `name` callable as `alias` too, without listing it under that name: for a
    /// tool a gateway renamed, which its app (MCP Apps) still calls by the name its own server
    /// gave it. A name a listed tool has (now or later) always means that tool; an alias taken
    /// already, or a `name` that is no tool, adds nothing. Returns whether the alias was added.
    pub fn alias(&mut self, alias: &str, name: &str) -> bool {
        let Some(&target) = self.index.get(name) else { return false };
        if self.index.contains_key(alias) || self.aliases.contains_key(alias) {
            return false;
        }
        self.aliases.insert(alias.to_owned(), target);
        true
    }
}

/// Checks a tool or prompt name: 1–128 characters. The spec recommends `[A-Za-z0-9_.-]`;
/// other characters are accepted with a warning.
pub(crate) fn check_name(kind: &'static str, name: &str) -> Result<(), RegistrationError> {
    if name.is_empty() {
        return Err(RegistrationError::InvalidName { kind, name: name.into(), reason: "it is empty" });
    }
    if name.chars().count() > 128 {
        return Err(RegistrationError::InvalidName {
            kind,
            name: name.into(),
            reason: "it is longer than 128 characters",
        });
    }
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')) {
        tracing::warn!(name, "{kind} name uses characters outside [A-Za-z0-9_.-]");
    }
    Ok(())
}
