//! What the client remembers of the server's tools: the `x-mcp-header` mirrors (tools with
//! invalid annotations are dropped from `tools/list` on HTTP), the compiled `outputSchema`,
//! and whether a call may be retried after an unknown outcome.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use mcp_schema::{Limits, Schema};
use mcp_types::Tool;
use serde_json::Value;

use crate::headers::{ParamHeader, param_headers};

pub(crate) struct ToolEntry {
    pub(crate) tool: Tool,
    pub(crate) headers: Vec<ParamHeader>,
    output: OnceLock<Option<Schema>>,
}

impl ToolEntry {
    /// Read-only or idempotent tools may be re-sent after an unknown outcome.
    pub(crate) fn retry_safe(&self) -> bool {
        self.tool
            .annotations
            .as_ref()
            .is_some_and(|a| a.read_only_hint == Some(true) || a.idempotent_hint == Some(true))
    }

    /// The compiled output schema; `None` when the tool has none or it is over the limits (then
    /// nothing is validated and a warning is logged once).
    pub(crate) fn output_schema(&self, limits: &Limits) -> Option<&Schema> {
        self.output
            .get_or_init(|| {
                let schema = self.tool.output_schema.as_ref()?;
                match Schema::compile_untrusted(&Value::Object(schema.clone()), limits) {
                    Ok(s) => Some(s),
                    Err(e) => {
                        tracing::warn!(target: "mcp_client", tool = %self.tool.name, "outputSchema not used: {e}");
                        None
                    }
                }
            })
            .as_ref()
    }
}

#[derive(Default)]
pub(crate) struct ToolTable {
    entries: RwLock<HashMap<String, Arc<ToolEntry>>>,
    listed: std::sync::atomic::AtomicBool,
}

impl ToolTable {
    pub(crate) fn get(&self, name: &str) -> Option<Arc<ToolEntry>> {
        self.entries.read().unwrap_or_else(|p| p.into_inner()).get(name).cloned()
    }

    pub(crate) fn listed(&self) -> bool {
        self.listed.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Records one page of `tools/list`; returns the tools to show. With `check_headers` (the
    /// HTTP transport), a tool whose `x-mcp-header` annotations are invalid is dropped, with a
    /// warning naming it and the reason.
    ///
    /// The table holds at most `cap` tools (the items one listing may bring,
    /// `ListLimits::max_items`): a page that would take it past that starts it afresh, so a
    /// server that hands out new names page after page cannot grow it without bound. What is
    /// forgotten is listed again before a call that needs it.
    pub(crate) fn record(&self, tools: Vec<Tool>, check_headers: bool, cap: usize) -> Vec<Tool> {
        let mut kept = Vec::with_capacity(tools.len());
        let mut entries = self.entries.write().unwrap_or_else(|p| p.into_inner());
        if entries.len().saturating_add(tools.len()) > cap {
            tracing::debug!(target: "mcp_client", tools = entries.len(), cap, "tool table full: starting it afresh");
            entries.clear();
            self.listed.store(false, std::sync::atomic::Ordering::Release);
        }
        for tool in tools {
            let headers = if check_headers {
                match param_headers(&tool.input_schema) {
                    Ok(h) => h,
                    Err(why) => {
                        tracing::warn!(target: "mcp_client", tool = %tool.name, "tool rejected: {why}");
                        continue;
                    }
                }
            } else {
                Vec::new()
            };
            entries.insert(
                tool.name.clone(),
                Arc::new(ToolEntry { tool: tool.clone(), headers, output: OnceLock::new() }),
            );
            kept.push(tool);
        }
        self.listed.store(true, std::sync::atomic::Ordering::Release);
        kept
    }

    pub(crate) fn clear(&self) {
        self.entries.write().unwrap_or_else(|p| p.into_inner()).clear();
        self.listed.store(false, std::sync::atomic::Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools(prefix: &str, n: usize) -> Vec<Tool> {
        (0..n)
            .map(|i| {
                serde_json::from_value(serde_json::json!({
                    "name": format!("{prefix}{i}"),
                    "inputSchema": {"type": "object"},
                }))
                .unwrap()
            })
            .collect()
    }

    fn len(table: &ToolTable) -> usize {
        table.entries.read().unwrap().len()
    }

    #[test]
    fn the_table_never_holds_more_than_its_cap() {
        let table = ToolTable::default();
        // The same names listed again replace their entries.
        for _ in 0..5 {
            table.record(tools("same", 30), false, 100);
        }
        assert_eq!(len(&table), 30);
        // A server handing out new names page after page: the table stays within its cap.
        for page in 0..50 {
            let shown = table.record(tools(&format!("p{page}-"), 30), false, 100);
            assert_eq!(shown.len(), 30, "every tool of the page is still shown");
            assert!(len(&table) <= 100, "{} tools held after page {page}", len(&table));
        }
        // The newest page is always known.
        assert!(table.get("p49-29").is_some());
    }
}
