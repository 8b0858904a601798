//! The typed calls: one method per client request, pagination helpers that fetch every page,
//! `tools/call` with header mirroring, output validation and safe retries.

use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_types::{
    CallToolRequestParams, CallToolResult, CompleteRequestParams, CompleteResult, DiscoverResult,
    GetPromptRequestParams, GetPromptResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, LoggingLevel, Prompt, RawJson, ReadResourceRequestParams,
    ReadResourceResult, Resource, ResourceTemplate, ServerNotification, Tool,
};
use serde_json::{Map, Value};

use super::{Client, Inner, ListLimits, RequestOptions, decode, params_map};
use crate::error::{ClientError, ListingBound, Outcome};
use crate::transport::TransportKind;

pub(super) fn cursor_params(cursor: Option<&str>) -> Map<String, Value> {
    let mut p = Map::new();
    if let Some(c) = cursor {
        p.insert("cursor".into(), Value::String(c.to_string()));
    }
    p
}

impl Client {
    fn opts(&self) -> RequestOptions {
        RequestOptions::default()
    }

    /// `server/discover` (modern servers).
    pub async fn discover(&self) -> Result<DiscoverResult, ClientError> {
        if !self.protocol_version().is_modern() {
            return Err(ClientError::Unsupported("server/discover needs a 2026-07-28 server".into()));
        }
        self.inner.call("server/discover", Map::new(), &self.opts()).await
    }

    /// `ping` (legacy servers; a modern server is pinged with `server/discover`).
    pub async fn ping(&self) -> Result<(), ClientError> {
        if self.protocol_version().is_modern() {
            self.inner
                .call::<Value>("server/discover", Map::new(), &RequestOptions::new().bypass_cache())
                .await?;
        } else {
            self.inner.call::<Value>("ping", Map::new(), &self.opts()).await?;
        }
        Ok(())
    }

    /// One page of `tools/list`. On HTTP, tools with invalid `x-mcp-header` annotations are
    /// left out (with a warning).
    pub async fn list_tools(&self, cursor: Option<&str>) -> Result<ListToolsResult, ClientError> {
        self.list_tools_with(cursor, &self.opts()).await
    }

    /// [`Client::list_tools`] with options.
    pub async fn list_tools_with(
        &self,
        cursor: Option<&str>,
        options: &RequestOptions,
    ) -> Result<ListToolsResult, ClientError> {
        let raw = self
            .inner
            .call_raw("tools/list", &cursor_params(cursor), options, super::Mrtr::Fulfil, |_| {})
            .await?;
        self.tools_page(&raw)
    }

    /// Decodes one page of `tools/list` and records its tools (see [`Client::list_tools`]).
    fn tools_page(&self, raw: &RawJson) -> Result<ListToolsResult, ClientError> {
        let mut result: ListToolsResult = decode("tools/list", raw)?;
        let check =
            self.transport_kind() == TransportKind::StreamableHttp && self.protocol_version().is_modern();
        let cap = self.inner.config.list_limits.max_items;
        result.tools = self.inner.tools.record(std::mem::take(&mut result.tools), check, cap);
        Ok(result)
    }

    /// The bounds of a listing with `options`.
    pub(super) fn list_limits(&self, options: &RequestOptions) -> ListLimits {
        options.list_limits.unwrap_or(self.inner.config.list_limits)
    }

    /// One page of `method`, as the server sent it.
    pub(super) async fn page(
        &self,
        method: &str,
        cursor: Option<String>,
        options: &RequestOptions,
    ) -> Result<RawJson, ClientError> {
        self.inner
            .call_raw(method, &cursor_params(cursor.as_deref()), options, super::Mrtr::Fulfil, |_| {})
            .await
    }

    /// Every tool, page after page, within the client's [`ListLimits`].
    pub async fn list_all_tools(&self) -> Result<Vec<Tool>, ClientError> {
        self.list_all_tools_with(&self.opts()).await
    }

    /// [`Client::list_all_tools`] with options (applied to each page; their
    /// [`RequestOptions::list_limits`] bound the whole listing).
    pub async fn list_all_tools_with(&self, options: &RequestOptions) -> Result<Vec<Tool>, ClientError> {
        let method = "tools/list";
        all_pages(
            method,
            self.list_limits(options),
            |cursor| self.page(method, cursor, options),
            |raw| self.tools_page(&raw).map(|page| (page.tools, page.next_cursor)),
        )
        .await
    }

    /// One page of `resources/list`.
    pub async fn list_resources(&self, cursor: Option<&str>) -> Result<ListResourcesResult, ClientError> {
        self.inner.call("resources/list", cursor_params(cursor), &self.opts()).await
    }

    /// Every resource, within the client's [`ListLimits`].
    pub async fn list_all_resources(&self) -> Result<Vec<Resource>, ClientError> {
        let (method, options) = ("resources/list", self.opts());
        all_pages(
            method,
            self.list_limits(&options),
            |cursor| self.page(method, cursor, &options),
            |raw| decode::<ListResourcesResult>(method, &raw).map(|page| (page.resources, page.next_cursor)),
        )
        .await
    }

    /// One page of `resources/templates/list`.
    pub async fn list_resource_templates(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListResourceTemplatesResult, ClientError> {
        self.inner.call("resources/templates/list", cursor_params(cursor), &self.opts()).await
    }

    /// Every resource template, within the client's [`ListLimits`].
    pub async fn list_all_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        let (method, options) = ("resources/templates/list", self.opts());
        all_pages(
            method,
            self.list_limits(&options),
            |cursor| self.page(method, cursor, &options),
            |raw| {
                decode::<ListResourceTemplatesResult>(method, &raw)
                    .map(|page| (page.resource_templates, page.next_cursor))
            },
        )
        .await
    }

    /// One page of `prompts/list`.
    pub async fn list_prompts(&self, cursor: Option<&str>) -> Result<ListPromptsResult, ClientError> {
        self.inner.call("prompts/list", cursor_params(cursor), &self.opts()).await
    }

    /// Every prompt, within the client's [`ListLimits`].
    pub async fn list_all_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        let (method, options) = ("prompts/list", self.opts());
        all_pages(
            method,
            self.list_limits(&options),
            |cursor| self.page(method, cursor, &options),
            |raw| decode::<ListPromptsResult>(method, &raw).map(|page| (page.prompts, page.next_cursor)),
        )
        .await
    }

    /// `tools/call` with JSON arguments (an object, or `null` for none).
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult, ClientError> {
        // The params are built around the caller's arguments, moved, not copied.
        let mut params = Map::new();
        params.insert("name".into(), Value::String(name.to_owned()));
        match arguments {
            Value::Object(map) => {
                params.insert("arguments".into(), Value::Object(map));
            }
            Value::Null => {}
            other => {
                return Err(ClientError::Unsupported(format!(
                    "tool arguments must be an object, not {other}"
                )));
            }
        }
        self.call_tool_params(name, params, &self.opts()).await.map(|(result, _)| result)
    }

    /// `tools/call` with full params and options. MRTR input requests are fulfilled through the
    /// client's handlers; `structuredContent` is checked against the tool's `outputSchema`.
    pub async fn call_tool_with(
        &self,
        params: &CallToolRequestParams,
        options: &RequestOptions,
    ) -> Result<CallToolResult, ClientError> {
        self.call_tool_raw_with(params, options).await.map(|(result, _)| result)
    }

    /// [`Client::call_tool_with`], also returning the result exactly as the server sent it (for
    /// printing or forwarding it byte for byte: member order, numbers and unknown members as
    /// they were).
    pub async fn call_tool_raw_with(
        &self,
        params: &CallToolRequestParams,
        options: &RequestOptions,
    ) -> Result<(CallToolResult, RawJson), ClientError> {
        self.call_tool_params(&params.name, params_map(params)?, options).await
    }

    /// `tools/call` of `name` with `params` (its name included), as built once for all
    /// attempts.
    async fn call_tool_params(
        &self,
        name: &str,
        map: Map<String, Value>,
        options: &RequestOptions,
    ) -> Result<(CallToolResult, RawJson), ClientError> {
        let mut entry = self.inner.tools.get(name);
        if entry.is_none()
            && !self.inner.tools.listed()
            && self.transport_kind() == TransportKind::StreamableHttp
            && self.protocol_version().is_modern()
        {
            // The header mirrors come from the tool's schema: learn it first, within the same
            // bounds as any listing. A tool whose schema could not be learnt is called without
            // mirrors (a server that needs them refuses the call with -32020, unexecuted) and
            // without output validation.
            let listing = RequestOptions { progress: None, retries: None, ..options.clone() };
            match self.list_all_tools_with(&listing).await {
                Ok(_) => {}
                Err(e @ ClientError::ListingTooLarge { .. }) => tracing::warn!(
                    target: "mcp_client",
                    tool = %name,
                    "learning the tool's schema failed ({e}); a tool not among the tools listed so far is called without x-mcp-header mirrors or output validation"
                ),
                Err(e) => tracing::debug!(target: "mcp_client", "tools/list before the call failed: {e}"),
            }
            entry = self.inner.tools.get(name);
        }
        let retries = options.retries.unwrap_or(1);
        let mut attempt = 0;
        let raw = loop {
            match self.inner.call_raw("tools/call", &map, options, super::Mrtr::Fulfil, |_| {}).await {
                Ok(raw) => break raw,
                Err(e)
                    if attempt < retries
                        && retryable(&e, entry.as_deref().is_some_and(|t| t.retry_safe())) =>
                {
                    attempt += 1;
                    tracing::info!(target: "mcp_client", tool = %name, "retrying after: {e}");
                }
                Err(e) => return Err(e),
            }
        };
        let (result, raw) = if super::task::is_task(&raw) {
            self.finish_task(raw, options).await?
        } else {
            (decode("tools/call", &raw)?, raw)
        };
        if self.inner.config.validate_output
            && result.is_error != Some(true)
            && let Some(entry) = &entry
            && let Some(schema) = entry.output_schema(&self.inner.config.schema_limits)
        {
            match &result.structured_content {
                Some(content) => {
                    if let Err(v) = schema.validate(content) {
                        return Err(ClientError::InvalidStructuredContent {
                            tool: name.to_owned(),
                            message: v.to_string(),
                        });
                    }
                }
                None => {
                    return Err(ClientError::InvalidStructuredContent {
                        tool: name.to_owned(),
                        message: "the tool declares an outputSchema but the result has no structuredContent"
                            .into(),
                    });
                }
            }
        }
        Ok((result, raw))
    }

    /// `resources/read`.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, ClientError> {
        self.read_resource_with(&ReadResourceRequestParams::new(uri), &self.opts()).await
    }

    /// `resources/read` with full params and options.
    pub async fn read_resource_with(
        &self,
        params: &ReadResourceRequestParams,
        options: &RequestOptions,
    ) -> Result<ReadResourceResult, ClientError> {
        self.inner.call("resources/read", params_map(params)?, options).await
    }

    /// `prompts/get` with string arguments.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
    ) -> Result<GetPromptResult, ClientError> {
        let mut params = GetPromptRequestParams::new(name);
        if !arguments.is_empty() {
            params.arguments = Some(arguments);
        }
        self.get_prompt_with(&params, &self.opts()).await
    }

    /// `prompts/get` with full params and options.
    pub async fn get_prompt_with(
        &self,
        params: &GetPromptRequestParams,
        options: &RequestOptions,
    ) -> Result<GetPromptResult, ClientError> {
        self.inner.call("prompts/get", params_map(params)?, options).await
    }

    /// `completion/complete`.
    pub async fn complete(&self, params: &CompleteRequestParams) -> Result<CompleteResult, ClientError> {
        self.inner.call("completion/complete", params_map(params)?, &self.opts()).await
    }

    /// Legacy: `logging/setLevel` for the session. Modern servers take the level per request
    /// ([`RequestOptions::log_level`], or the builder's default).
    pub async fn set_logging_level(&self, level: LoggingLevel) -> Result<(), ClientError> {
        if self.protocol_version().is_modern() {
            return Err(ClientError::Unsupported(
                "2026-07-28 has no logging/setLevel; pass the level per request".into(),
            ));
        }
        let mut p = Map::new();
        p.insert("level".into(), serde_json::to_value(level).unwrap_or(Value::Null));
        self.inner.call::<Value>("logging/setLevel", p, &self.opts()).await.map(|_| ())
    }

    /// Legacy: `resources/subscribe` (updates arrive on [`Client::notifications`]).
    pub async fn subscribe_resource(&self, uri: &str) -> Result<(), ClientError> {
        self.legacy_uri_call("resources/subscribe", uri).await
    }

    /// Legacy: `resources/unsubscribe`.
    pub async fn unsubscribe_resource(&self, uri: &str) -> Result<(), ClientError> {
        self.legacy_uri_call("resources/unsubscribe", uri).await
    }

    async fn legacy_uri_call(&self, method: &str, uri: &str) -> Result<(), ClientError> {
        if self.protocol_version().is_modern() {
            return Err(ClientError::Unsupported(format!("2026-07-28 has no {method}; use listen()")));
        }
        let mut p = Map::new();
        p.insert("uri".into(), Value::String(uri.to_string()));
        self.inner.call::<Value>(method, p, &self.opts()).await.map(|_| ())
    }

    /// Legacy: tells the server the client's roots changed.
    pub async fn notify_roots_changed(&self) -> Result<(), ClientError> {
        if self.protocol_version().is_modern() {
            return Ok(());
        }
        let v = self.protocol_version();
        let timeout = self.inner.config.request_timeout;
        self.inner.engine.notify("notifications/roots/list_changed", None, Some(v), timeout).await
    }

    /// Drops cached results and tool definitions on change notifications.
    pub(crate) fn spawn_invalidation(&self) {
        let mut rx = self.inner.engine.subscribe();
        let weak = Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            loop {
                let n = match rx.recv().await {
                    Ok(n) => n,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        if let Some(inner) = weak.upgrade() {
                            inner.cache.clear();
                        }
                        continue;
                    }
                    Err(_) => return,
                };
                let Some(inner) = weak.upgrade() else { return };
                inner.invalidate(&n);
            }
        });
    }
}

impl Inner {
    pub(crate) fn invalidate(&self, n: &ServerNotification) {
        match n {
            ServerNotification::ToolListChanged(_) => {
                self.cache.invalidate("tools/list", None);
                self.tools.clear();
            }
            ServerNotification::PromptListChanged(_) => self.cache.invalidate("prompts/list", None),
            ServerNotification::ResourceListChanged(_) => {
                self.cache.invalidate("resources/list", None);
                self.cache.invalidate("resources/templates/list", None);
            }
            ServerNotification::ResourceUpdated(p) => self.cache.invalidate("resources/read", Some(&p.uri)),
            _ => {}
        }
    }
}

fn retryable(e: &ClientError, retry_safe: bool) -> bool {
    match e {
        ClientError::Transport { outcome: Outcome::NotExecuted, error } => !matches!(
            error,
            crate::transport::TransportError::Closed | crate::transport::TransportError::Http { .. }
        ),
        ClientError::Transport { outcome: Outcome::Unknown, .. } => retry_safe,
        _ => false,
    }
}

/// Follows `nextCursor` from the first page to the last, collecting the items of every page,
/// within `limits`: the bytes of each page are counted before it is decoded (`items_of`), its
/// items before they are kept, and at most `max_pages` pages are fetched.
pub(super) async fn all_pages<T, F, Fut>(
    method: &str,
    limits: ListLimits,
    mut fetch: F,
    mut items_of: impl FnMut(RawJson) -> Result<(Vec<T>, Option<String>), ClientError>,
) -> Result<Vec<T>, ClientError>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: Future<Output = Result<RawJson, ClientError>>,
{
    let too_large = |bound| ClientError::ListingTooLarge { method: method.into(), bound };
    let mut all = Vec::new();
    let mut bytes = 0usize;
    let mut cursor: Option<String> = None;
    for _ in 0..limits.max_pages {
        let raw = fetch(cursor.take()).await?;
        bytes = bytes.saturating_add(raw.get().len());
        if bytes > limits.max_bytes {
            return Err(too_large(ListingBound::Bytes(limits.max_bytes)));
        }
        let (items, next) = items_of(raw)?;
        if all.len().saturating_add(items.len()) > limits.max_items {
            return Err(too_large(ListingBound::Items(limits.max_items)));
        }
        all.extend(items);
        match next {
            Some(c) => cursor = Some(c),
            None => return Ok(all),
        }
    }
    Err(too_large(ListingBound::Pages(limits.max_pages)))
}
