//! The feature methods: tools, resources, prompts, completion — one implementation for both
//! eras.

use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mcp_types::extensions::tasks;
use mcp_types::{
    CallToolRequestParams, CallToolResult, CompleteRequestParams, CompleteResult, Completion,
    CompletionReference, ErrorObject, GetPromptRequestParams, JsonObject, JsonValue, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResult, TaskSupport,
};
use tokio_util::sync::CancellationToken;

use super::finish::{Cacheable, ToolsPage};
use super::mrtr::{Run, run};
use super::{Ctx, Failure, Routed, resource_not_found};
use crate::call::{AskState, Call};
use crate::completion::CompletionRequest;
use crate::extract::Rejection;
use crate::policy::{Decision, Item, Question};
use crate::principal::Principal;
use crate::prompts::PromptFailure;
use crate::resources::ReadFailure;
use crate::server::Server;
use crate::tools::{ToolEntry, ToolOutput, ToolRun};

/// One page of a list (borrowed: only what the page holds is ever copied), and the cursor of
/// the next page.
fn page<'a, T>(
    items: &'a [T],
    cursor: Option<&str>,
    size: usize,
) -> Result<(&'a [T], Option<String>), Failure> {
    let start = match cursor {
        None => 0,
        Some(cursor) => decode_cursor(cursor)
            .filter(|&offset| offset <= items.len())
            .ok_or_else(|| Failure::bad_request(ErrorObject::invalid_params("invalid cursor")))?,
    };
    let end = start.saturating_add(size.max(1)).min(items.len());
    let next = (end < items.len()).then(|| URL_SAFE_NO_PAD.encode(format!("o:{end}")));
    Ok((&items[start..end], next))
}

fn decode_cursor(cursor: &str) -> Option<usize> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    std::str::from_utf8(&bytes).ok()?.strip_prefix("o:")?.parse().ok()
}

impl Ctx<'_> {
    pub(super) fn list_cache<T: Cacheable>(&self, result: &mut T) {
        if self.modern() {
            let cache = &self.server.inner.config.cache;
            result.cache(cache.list_ttl.as_millis() as u64, self.server.list_scope());
        }
        if let Some(extra) = self.server.inner.list_meta.load().as_deref() {
            result.add_meta(extra);
        }
    }

    pub(super) fn call(
        &self,
        asks: Arc<AskState>,
        arguments: Option<JsonObject>,
        uri: Option<String>,
    ) -> Call {
        Call {
            server: self.server.inner.context.clone(),
            mode: self.mode.clone(),
            version: self.version,
            meta: self.meta.clone(),
            client_capabilities: self.capabilities.clone(),
            sink: self.sink.clone(),
            cancel: self.cancel.child_token(),
            asks,
            arguments,
            binding_deferred: false,
            uri,
            uri_variables: BTreeMap::new(),
            trace: self.trace,
            principal: self.principal.clone(),
        }
    }
}

/// An error a handler passed on from another server (`Rejection::Protocol`): an answer, except
/// a missing client capability, which is refused as the server's own would be (HTTP 400).
fn passed_on(error: ErrorObject) -> Failure {
    if error.code == mcp_types::code::MISSING_REQUIRED_CLIENT_CAPABILITY {
        Failure::bad_request(error)
    } else {
        Failure::after_dispatch(error)
    }
}

fn internal(message: impl Into<String>) -> Failure {
    Failure::after_dispatch(ErrorObject::internal(message))
}

/// What a tool's run comes to: its result (arguments the handler refused are a tool error), or
/// the JSON-RPC error the call ends with — a failure of the handler, another server's error it
/// passed on, or a result that breaks the tool's `outputSchema`. One rule for a call answered
/// at once and for one that ran as a task.
pub(super) fn settle(entry: &ToolEntry, name: &str, run: ToolRun) -> Result<ToolOutput, ErrorObject> {
    let result = match run {
        Ok(result) => result,
        Err(Rejection::InvalidArguments(m)) => {
            return Ok(CallToolResult::error(format!("Invalid arguments for tool {name}: {m}")).into());
        }
        Err(Rejection::Internal(m)) => return Err(ErrorObject::internal(m)),
        Err(Rejection::Protocol(e)) => return Err(e),
    };
    if let (Some(schema), false) = (&entry.output, result.is_error()) {
        let missing = || {
            ErrorObject::internal(format!(
                "tool {name} declares an outputSchema but returned no structuredContent"
            ))
        };
        let violates = |violation: &dyn std::fmt::Display| {
            ErrorObject::internal(format!(
                "tool {name} returned structuredContent that violates its outputSchema: {violation}"
            ))
        };
        match &result {
            ToolOutput::Built(built) => {
                let structured = built.structured_content.as_ref().ok_or_else(missing)?;
                schema.validate(structured).map_err(|v| violates(&v))?;
            }
            ToolOutput::Passed(passed) => {
                let structured =
                    passed.structured_content().map_err(|e| violates(&e))?.ok_or_else(missing)?;
                schema.validate(&structured).map_err(|v| violates(&v))?;
            }
        }
    }
    Ok(result)
}

impl Server {
    pub(super) fn list_tools(&self, ctx: &Ctx<'_>, params: PaginatedRequestParams) -> Routed {
        let table = self.inner.tools.load();
        let shown: Vec<Arc<crate::tools::ToolEntry>>;
        let entries = match &self.inner.policy {
            None => &table.entries[..],
            Some(_) => {
                shown =
                    table.entries.iter().filter(|e| self.visible(ctx, Item::Tool(&e.def))).cloned().collect();
                self.audit_hidden(ctx, "tools/list", table.entries.len() - shown.len());
                &shown[..]
            }
        };
        let (tools, next_cursor) = page(entries, params.cursor.as_deref(), self.inner.config.page_size)?;
        let rest = ListToolsResult { next_cursor, ..Default::default() };
        let mut result = ToolsPage { tools, rest };
        ctx.list_cache(&mut result);
        ctx.finish(result)
    }

    pub(super) async fn call_tool(&self, ctx: &Ctx<'_>, params: CallToolRequestParams) -> Routed {
        // The entry is shared with the table (an `Arc`), never cloned: its definition, schemas
        // and handler stay where registration put them.
        // An observed request's watch looked it up already.
        let entry = match ctx.watch.and_then(|watch| watch.tool()) {
            Some(entry) => Some(entry.clone()),
            None => self.inner.tools.load().get(&params.name).cloned(),
        };
        let unknown =
            || Failure::after_dispatch(ErrorObject::invalid_params(format!("Unknown tool: {}", params.name)));
        let Some(entry) = entry else {
            return Err(unknown());
        };
        let arguments = params.arguments.unwrap_or_default();
        self.permitted(ctx, Item::Tool(&entry.def), Some(&arguments), unknown)?;
        // A tool that can become a task does so only for a modern client that declared the
        // extension on this request; one that must be a task is refused to the others.
        let as_task =
            entry.task != TaskSupport::Forbidden && ctx.modern() && tasks::declared(&ctx.capabilities);
        if entry.task == TaskSupport::Required && !as_task {
            return Err(Failure::bad_request(ErrorObject::missing_client_capability(tasks::required())));
        }
        let answers = self.answers(
            ctx,
            "tools/call",
            &params.name,
            Some(&arguments),
            params.request_state.as_deref(),
            params.input_responses,
        )?;
        let arguments = JsonValue::Object(arguments);
        if let Err(violation) = entry.input.validate(&arguments) {
            let message = format!("Invalid arguments for tool {}: {violation}", params.name);
            return ctx.finish_tool(CallToolResult::error(message).into());
        }
        let JsonValue::Object(arguments) = arguments else { unreachable!("built as an object above") };
        let asks = Arc::new(
            AskState::new("tools/call", params.name.clone(), answers.answers, answers.digest)
                .carrying(answers.carried),
        );
        if as_task {
            asks.detachable.store(true, std::sync::atomic::Ordering::Release);
        }
        let approvals = &self.inner.config.approvals;
        let subject = ctx.principal.as_deref().and_then(|p| p.subject.as_deref());
        let by_policy = || {
            self.inner.policy.as_ref().is_some_and(|policy| {
                let question =
                    Question::new(ctx.principal.as_deref(), Item::Tool(&entry.def), Some(&arguments));
                !approvals.is_exempt(subject) && policy.needs_approval(&question)
            })
        };
        let needed = (approvals.any() && approvals.needed(&entry.def, subject)) || by_policy();
        let approval = needed.then(|| {
            let target = self
                .inner
                .approval_target
                .as_ref()
                .and_then(|target| target(&params.name))
                .unwrap_or_else(|| format!("server {:?}", self.inner.info.name));
            super::approval::message(&params.name, &target, &arguments, &entry.def.input_schema)
        });
        let mut call = ctx.call(asks.clone(), Some(arguments), None);
        // A task's work outlives the request: it is cancelled by `tasks/cancel`, not by the
        // end of the exchange that started it (until it becomes a task, dropping it is enough).
        let task_cancel = as_task.then(CancellationToken::new);
        if let Some(token) = &task_cancel {
            call.cancel = token.clone();
        }
        let cancel = call.cancel.clone();
        let running = match approval {
            Some(message) => super::approval::approved_run(&entry.run, call, params.name.clone(), message),
            None => (entry.run)(call),
        };
        let outcome = match task_cancel {
            Some(token) => {
                // Boxed, as the task's own path below: rarer than a plain call, and each would
                // otherwise make every call's future (allocated and moved per request) as large
                // as itself.
                let grace = self.inner.tasks.config.grace;
                match Box::pin(super::tasks::until_detached(running, &asks, grace, entry.detach_on_wait))
                    .await
                {
                    super::tasks::Step::Ran(outcome) => outcome,
                    super::tasks::Step::Detached(running) => {
                        return Box::pin(self.detach(ctx, entry, params.name, running, asks, token)).await;
                    }
                    super::tasks::Step::Relayed => return self.relayed(ctx, &asks),
                }
            }
            None => run(running, asks.clone(), Some(self.inner.config.tool_timeout)).await,
        };
        let result = match outcome {
            Run::Done(done) => settle(&entry, &params.name, done).map_err(passed_on)?,
            Run::Interrupted => return self.input_required(ctx, &asks),
            Run::Panicked => {
                return Err(internal(format!("tool {} failed: its handler panicked", params.name)));
            }
            Run::TimedOut => {
                cancel.cancel();
                let limit = self.inner.config.tool_timeout;
                CallToolResult::error(format!(
                    "Tool {} timed out after {} ms",
                    params.name,
                    limit.as_millis()
                ))
                .into()
            }
        };
        ctx.finish_tool(result)
    }

    pub(super) fn list_resources(&self, ctx: &Ctx<'_>, params: PaginatedRequestParams) -> Routed {
        let table = self.inner.resources.load();
        let (resources, next_cursor) = self.listed(
            ctx,
            "resources/list",
            &table.statics,
            params.cursor.as_deref(),
            |e| Item::Resource { uri: &e.def.uri, def: Some(&e.def) },
            |e| e.def.clone(),
        )?;
        let mut result = ListResourcesResult { resources, next_cursor, ..Default::default() };
        ctx.list_cache(&mut result);
        ctx.finish(result)
    }

    pub(super) fn list_templates(&self, ctx: &Ctx<'_>, params: PaginatedRequestParams) -> Routed {
        let table = self.inner.resources.load();
        let (resource_templates, next_cursor) = self.listed(
            ctx,
            "resources/templates/list",
            &table.templates,
            params.cursor.as_deref(),
            |e| Item::Template(&e.def),
            |e| e.def.clone(),
        )?;
        let mut result =
            ListResourceTemplatesResult { resource_templates, next_cursor, ..Default::default() };
        ctx.list_cache(&mut result);
        ctx.finish(result)
    }

    pub(super) async fn read_resource(&self, ctx: &Ctx<'_>, params: ReadResourceRequestParams) -> Routed {
        let table = self.inner.resources.load();
        let resolved = table.resolve(&params.uri);
        let Some((handler, variables)) = resolved else {
            return Err(resource_not_found(ctx, &params.uri));
        };
        if self.inner.policy.is_some() {
            let def = table.index.get(&params.uri).map(|&i| &table.statics[i].def);
            let item = Item::Resource { uri: &params.uri, def };
            self.permitted(ctx, item, None, || resource_not_found(ctx, &params.uri))?;
        }
        drop(table);
        let answers = self.answers(
            ctx,
            "resources/read",
            &params.uri,
            None,
            params.request_state.as_deref(),
            params.input_responses,
        )?;
        let asks = Arc::new(
            AskState::new("resources/read", params.uri.clone(), answers.answers, answers.digest)
                .carrying(answers.carried),
        );
        let mut call = ctx.call(asks.clone(), None, Some(params.uri.clone()));
        call.uri_variables = variables;
        let contents = match run(handler(call), asks.clone(), None).await {
            Run::Done(Ok(contents)) => contents,
            Run::Done(Err(ReadFailure::NotFound)) => return Err(resource_not_found(ctx, &params.uri)),
            Run::Done(Err(ReadFailure::Failed(m))) => return Err(internal(m)),
            Run::Done(Err(ReadFailure::Rejected(Rejection::Protocol(e)))) => {
                return Err(passed_on(e));
            }
            Run::Done(Err(ReadFailure::Rejected(r))) => return Err(internal(r.to_string())),
            Run::Interrupted => return self.input_required(ctx, &asks),
            Run::TimedOut => return Err(internal("reading the resource timed out")),
            Run::Panicked => return Err(internal("reading the resource failed: its handler panicked")),
        };
        if contents.is_empty() {
            // An empty `contents` is never an answer to a read (the spec's not-found rule).
            return Err(resource_not_found(ctx, &params.uri));
        }
        let mut result = ReadResourceResult { contents, ..Default::default() };
        if ctx.modern() {
            let hint = asks.cache_hint.lock().unwrap_or_else(|e| e.into_inner()).take();
            let cache = &self.inner.config.cache;
            let (ttl, scope) =
                hint.unwrap_or_else(|| (cache.read_ttl.as_millis() as u64, cache.read_scope.clone()));
            result.cache(ttl, scope);
        }
        ctx.finish(result)
    }

    pub(super) fn list_prompts(&self, ctx: &Ctx<'_>, params: PaginatedRequestParams) -> Routed {
        let table = self.inner.prompts.load();
        let (prompts, next_cursor) = self.listed(
            ctx,
            "prompts/list",
            &table.entries,
            params.cursor.as_deref(),
            |e| Item::Prompt(&e.def),
            |e| e.def.clone(),
        )?;
        let mut result = ListPromptsResult { prompts, next_cursor, ..Default::default() };
        ctx.list_cache(&mut result);
        ctx.finish(result)
    }

    pub(super) async fn get_prompt(&self, ctx: &Ctx<'_>, params: GetPromptRequestParams) -> Routed {
        let entry = self.inner.prompts.load().get(&params.name).cloned();
        let unknown = || {
            Failure::after_dispatch(ErrorObject::invalid_params(format!("Unknown prompt: {}", params.name)))
        };
        let Some(entry) = entry else {
            return Err(unknown());
        };
        let given = params.arguments.unwrap_or_default();
        if self.inner.policy.is_some() {
            let shown: JsonObject =
                given.iter().map(|(k, v)| (k.clone(), JsonValue::String(v.clone()))).collect();
            self.permitted(ctx, Item::Prompt(&entry.def), Some(&shown), unknown)?;
        }
        for argument in entry.def.arguments.iter().flatten() {
            if argument.required == Some(true) && !given.contains_key(&argument.name) {
                return Err(Failure::after_dispatch(ErrorObject::invalid_params(format!(
                    "Missing required argument {:?} for prompt {}",
                    argument.name, params.name
                ))));
            }
        }
        let arguments: JsonObject = given.into_iter().map(|(k, v)| (k, JsonValue::String(v))).collect();
        let answers = self.answers(
            ctx,
            "prompts/get",
            &params.name,
            Some(&arguments),
            params.request_state.as_deref(),
            params.input_responses,
        )?;
        let asks = Arc::new(
            AskState::new("prompts/get", params.name.clone(), answers.answers, answers.digest)
                .carrying(answers.carried),
        );
        let call = ctx.call(asks.clone(), Some(arguments), None);
        match run((entry.run)(call), asks.clone(), None).await {
            Run::Done(Ok(result)) => ctx.finish(result),
            Run::Done(Err(PromptFailure::Rejected(Rejection::InvalidArguments(m)))) => {
                Err(Failure::after_dispatch(ErrorObject::invalid_params(format!("Invalid arguments: {m}"))))
            }
            Run::Done(Err(PromptFailure::Rejected(Rejection::Internal(m)) | PromptFailure::Failed(m))) => {
                Err(internal(m))
            }
            Run::Done(Err(PromptFailure::Rejected(Rejection::Protocol(e)))) => Err(passed_on(e)),
            Run::Interrupted => self.input_required(ctx, &asks),
            Run::TimedOut => Err(internal("the prompt timed out")),
            Run::Panicked => Err(internal("the prompt failed: its handler panicked")),
        }
    }

    pub(super) async fn complete(&self, ctx: &Ctx<'_>, params: CompleteRequestParams) -> Routed {
        let completions = &self.inner.completions;
        let handler = match &params.reference {
            CompletionReference::Prompt(p) => {
                let unknown = || {
                    Failure::after_dispatch(ErrorObject::invalid_params(format!(
                        "Unknown prompt: {}",
                        p.name
                    )))
                };
                let Some(entry) = self.inner.prompts.load().get(&p.name).cloned() else {
                    return Err(unknown());
                };
                self.permitted(ctx, Item::Prompt(&entry.def), None, unknown)?;
                completions.prompts.get(&(p.name.clone(), params.argument.name.clone())).cloned()
            }
            CompletionReference::ResourceTemplate(t) => {
                if self.inner.policy.is_some() {
                    let table = self.inner.resources.load();
                    if let Some(entry) = table.templates.iter().find(|e| e.def.uri_template == t.uri) {
                        let unknown = || {
                            Failure::after_dispatch(ErrorObject::invalid_params(format!(
                                "Unknown resource template: {}",
                                t.uri
                            )))
                        };
                        self.permitted(ctx, Item::Template(&entry.def), None, unknown)?;
                    }
                }
                completions.templates.get(&(t.uri.clone(), params.argument.name.clone())).cloned()
            }
            // `Unknown`, and any reference kind a later mcp-types knows but this server does not.
            _ => {
                return Err(Failure::after_dispatch(ErrorObject::invalid_params(
                    "unknown completion reference type",
                )));
            }
        };
        let request = CompletionRequest {
            argument: params.argument.name.clone(),
            value: params.argument.value.clone(),
            context: params.context.and_then(|c| c.arguments).unwrap_or_default(),
        };
        let values = match (handler, &completions.fallback) {
            (Some(handler), _) => {
                let panicked = || internal("the completion failed: its handler panicked");
                tokio::select! {
                    values = super::mrtr::caught(handler(request)) => values.map_err(|()| panicked())?,
                    _ = ctx.cancel.cancelled() => return Ok(None),
                }
            }
            (None, Some(fallback)) => {
                let completion = tokio::select! {
                    completion = super::mrtr::caught(fallback(params.reference.clone(), request)) => {
                        completion.map_err(|()| internal("the completion failed: its handler panicked"))?
                    }
                    _ = ctx.cancel.cancelled() => return Ok(None),
                };
                return match completion {
                    Ok(completion) => ctx.finish(CompleteResult { completion, ..Default::default() }),
                    Err(error) => Err(passed_on(error)),
                };
            }
            (None, None) => Vec::new(),
        };
        ctx.finish(CompleteResult { completion: Completion::from_matches(values), ..Default::default() })
    }
}

/// The policy's view of a request (`crate::policy`).
impl Server {
    /// Whether the caller of `ctx` may see `item` (always, without a policy).
    /// The cache scope of lists and discovery: the configured one, but `private` whenever a
    /// policy decides what each caller sees (a shared cache must not hand one caller's list to
    /// another).
    pub(super) fn list_scope(&self) -> mcp_types::CacheScope {
        match &self.inner.policy {
            Some(_) => mcp_types::CacheScope::Private,
            None => self.inner.config.cache.list_scope.clone(),
        }
    }

    /// The capabilities `ctx`'s caller is told of: without a policy, all the server's; with
    /// one, a feature whose every item the policy hides from this caller is left out (a
    /// feature with no items yet is kept: they may come), and completions with prompts and
    /// resources both gone.
    pub(super) fn capabilities_for(
        &self,
        principal: Option<&Principal>,
        modern: bool,
    ) -> mcp_types::ServerCapabilities {
        let mut caps = self.inner.capabilities(modern);
        if self.inner.policy.is_none() {
            return caps;
        }
        let hidden =
            |count: usize, mut visible: Box<dyn Iterator<Item = bool> + '_>| count > 0 && !visible.any(|v| v);
        if caps.tools.is_some() {
            let table = self.inner.tools.load();
            if hidden(
                table.entries.len(),
                Box::new(table.entries.iter().map(|e| self.visible_to(principal, Item::Tool(&e.def)))),
            ) {
                caps.tools = None;
            }
        }
        if caps.prompts.is_some() {
            let table = self.inner.prompts.load();
            if hidden(
                table.entries.len(),
                Box::new(table.entries.iter().map(|e| self.visible_to(principal, Item::Prompt(&e.def)))),
            ) {
                caps.prompts = None;
            }
        }
        if caps.resources.is_some() {
            let table = self.inner.resources.load();
            let statics = table
                .statics
                .iter()
                .map(|e| self.visible_to(principal, Item::Resource { uri: &e.def.uri, def: Some(&e.def) }));
            let templates =
                table.templates.iter().map(|e| self.visible_to(principal, Item::Template(&e.def)));
            if hidden(table.statics.len() + table.templates.len(), Box::new(statics.chain(templates))) {
                caps.resources = None;
            }
        }
        if caps.prompts.is_none() && caps.resources.is_none() {
            caps.completions = None;
        }
        caps
    }

    fn visible(&self, ctx: &Ctx<'_>, item: Item<'_>) -> bool {
        self.visible_to(ctx.principal.as_deref(), item)
    }

    fn visible_to(&self, principal: Option<&Principal>, item: Item<'_>) -> bool {
        match &self.inner.policy {
            None => true,
            Some(policy) => {
                let question = Question { principal, item, arguments: None };
                policy.decide(&question) == Decision::Allow
            }
        }
    }

    /// Whether the caller of `ctx` may use `item` with `arguments`: `Err` with the refusal when
    /// not — the unknown item's (`unknown`) when the caller may not even see it, an error
    /// saying the policy refused it otherwise. Every refusal goes to the audit log.
    pub(super) fn permitted(
        &self,
        ctx: &Ctx<'_>,
        item: Item<'_>,
        arguments: Option<&JsonObject>,
        unknown: impl FnOnce() -> Failure,
    ) -> Result<(), Failure> {
        let Some(policy) = &self.inner.policy else { return Ok(()) };
        let principal = ctx.principal.as_deref();
        let question = Question { principal, item, arguments };
        let rules = match policy.decide(&question) {
            Decision::Allow => return self.within_policy_limits(policy.as_ref(), &question),
            Decision::Deny(rules) => rules,
        };
        crate::policy::audit(principal, item.action(), item.name(), &rules);
        let seen = arguments.is_some()
            && policy.decide(&Question { principal, item, arguments: None }) == Decision::Allow;
        if seen {
            Err(Failure::after_dispatch(ErrorObject::invalid_params(format!(
                "{} {:?}: this use is not allowed by policy",
                item.action(),
                item.name()
            ))))
        } else {
            Err(unknown())
        }
    }

    /// The allowed use `question` taken from each bucket its policy's limits name
    /// (`Policy::rate_limits`): refused when one is empty.
    fn within_policy_limits(
        &self,
        policy: &dyn crate::policy::Policy,
        question: &Question<'_>,
    ) -> Result<(), Failure> {
        let Some(limiter) = self.inner.limiter.as_ref() else { return Ok(()) };
        let caller = question.principal.and_then(|p| p.subject.as_deref()).unwrap_or("anonymous");
        let item = question.item;
        for named in policy.rate_limits(question) {
            if let Err(wait) =
                limiter.take(&named.limit, Some(&named.rule), caller, item.action(), item.name())
            {
                let what = format!("{} {}", item.action(), item.name());
                return Err(super::rate_limited(&what, wait, Some(&named.rule)));
            }
        }
        Ok(())
    }

    /// One page of `items` as a list shows them: those the caller may see (all, without a
    /// policy; how many were left out goes to the audit log), each as `def` makes it.
    pub(super) fn listed<T, D>(
        &self,
        ctx: &Ctx<'_>,
        method: &str,
        items: &[T],
        cursor: Option<&str>,
        item: impl Fn(&T) -> Item<'_>,
        def: impl Fn(&T) -> D,
    ) -> Result<(Vec<D>, Option<String>), Failure> {
        let size = self.inner.config.page_size;
        if self.inner.policy.is_none() {
            let (entries, next) = page(items, cursor, size)?;
            return Ok((entries.iter().map(def).collect(), next));
        }
        let shown: Vec<&T> = items.iter().filter(|e| self.visible(ctx, item(e))).collect();
        self.audit_hidden(ctx, method, items.len() - shown.len());
        let (entries, next) = page(&shown, cursor, size)?;
        Ok((entries.iter().map(|e| def(e)).collect(), next))
    }

    /// Writes to the audit log how many items a list left out.
    fn audit_hidden(&self, ctx: &Ctx<'_>, method: &str, hidden: usize) {
        if hidden > 0 {
            tracing::info!(
                target: crate::policy::AUDIT_TARGET,
                subject = ctx.principal.as_deref().and_then(|p| p.subject.as_deref()).unwrap_or("anonymous"),
                method,
                hidden,
                "items hidden by policy"
            );
        }
    }
}
