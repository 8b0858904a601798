//! Shaping results for the era of the request: modern results carry `resultType`, the
//! server's identity in `_meta`, and (when cacheable) `ttlMs`/`cacheScope`; legacy results
//! carry none of these.

use std::sync::Arc;

use mcp_types::{
    CacheScope, CallToolResult, CompleteResult, DiscoverResult, EmptyResult, GetPromptResult, Implementation,
    InputRequiredResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, ReadResourceResult, ResultMeta, ResultType, SubscriptionsListenResult,
};
use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::tools::ToolEntry;

/// How to finish a result.
pub(crate) struct Finishing<'a> {
    pub(crate) modern: bool,
    pub(crate) info: &'a std::sync::Arc<Implementation>,
}

pub(crate) trait Finish {
    fn finish(&mut self, how: &Finishing<'_>);
}

pub(crate) trait Cacheable: Finish {
    fn cache(&mut self, ttl_ms: u64, scope: CacheScope);
    /// Adds `extra` to the result's `_meta`.
    fn add_meta(&mut self, extra: &mcp_types::JsonObject);
}

fn meta(meta: &mut Option<ResultMeta>) -> &mut ResultMeta {
    meta.get_or_insert_with(ResultMeta::default)
}

macro_rules! finish {
    ($($ty:ty),*) => {$(
        impl Finish for $ty {
            fn finish(&mut self, how: &Finishing<'_>) {
                if how.modern {
                    self.result_type = Some(ResultType::Complete);
                    meta(&mut self.meta).server_info = Some(how.info.clone());
                } else {
                    // `resultType` is a 2026-07-28 member: a result a handler passed on from a
                    // modern server (a gateway's) must not carry it to a legacy client.
                    self.result_type = None;
                }
            }
        }
    )*};
}

macro_rules! cacheable {
    ($($ty:ty),*) => {$(
        impl Cacheable for $ty {
            fn cache(&mut self, ttl_ms: u64, scope: CacheScope) {
                self.ttl_ms = Some(ttl_ms);
                self.cache_scope = Some(scope);
            }

            fn add_meta(&mut self, extra: &mcp_types::JsonObject) {
                let meta = meta(&mut self.meta);
                meta.extra.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
    )*};
}

finish!(
    mcp_types::extensions::skills::GetSkillResult,
    mcp_types::extensions::skills::ListSkillsResult,
    mcp_types::extensions::skills::ReadDirectoryResult,
    CallToolResult,
    CompleteResult,
    DiscoverResult,
    EmptyResult,
    GetPromptResult,
    ListPromptsResult,
    ListResourceTemplatesResult,
    ListResourcesResult,
    ListToolsResult,
    ReadResourceResult,
    SubscriptionsListenResult
);

cacheable!(
    mcp_types::extensions::skills::GetSkillResult,
    mcp_types::extensions::skills::ListSkillsResult,
    DiscoverResult,
    ListPromptsResult,
    ListResourceTemplatesResult,
    ListResourcesResult,
    ListToolsResult,
    ReadResourceResult
);

impl Finish for InputRequiredResult {
    fn finish(&mut self, how: &Finishing<'_>) {
        meta(&mut self.meta).server_info = Some(how.info.clone());
    }
}

/// A `tools/list` page written from the bytes each tool's definition was serialized into when
/// it was registered, instead of cloning and re-serializing every definition on every list.
/// `rest` carries everything else of the result (its `tools` stay empty); the members and
/// their order are those `ListToolsResult` writes (held equal, byte for byte, by
/// `tests::a_page_of_listed_bytes_is_the_typed_result`).
pub(crate) struct ToolsPage<'a> {
    pub(crate) tools: &'a [Arc<ToolEntry>],
    pub(crate) rest: ListToolsResult,
}

struct Listed<'a>(&'a [Arc<ToolEntry>]);

impl Serialize for Listed<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|entry| &*entry.listed))
    }
}

impl Serialize for ToolsPage<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let rest = &self.rest;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("tools", &Listed(self.tools))?;
        if let Some(cursor) = &rest.next_cursor {
            map.serialize_entry("nextCursor", cursor)?;
        }
        if let Some(ttl) = &rest.ttl_ms {
            map.serialize_entry("ttlMs", ttl)?;
        }
        if let Some(scope) = &rest.cache_scope {
            map.serialize_entry("cacheScope", scope)?;
        }
        if let Some(kind) = &rest.result_type {
            map.serialize_entry("resultType", kind)?;
        }
        if let Some(meta) = &rest.meta {
            map.serialize_entry("_meta", meta)?;
        }
        for (key, value) in &rest.extra {
            if !ListToolsResult::KNOWN_MEMBERS.contains(&key.as_str()) {
                map.serialize_entry(key, value)?;
            }
        }
        map.end()
    }
}

impl Finish for ToolsPage<'_> {
    fn finish(&mut self, how: &Finishing<'_>) {
        self.rest.finish(how);
    }
}

impl Cacheable for ToolsPage<'_> {
    fn cache(&mut self, ttl_ms: u64, scope: CacheScope) {
        self.rest.cache(ttl_ms, scope);
    }

    fn add_meta(&mut self, extra: &mcp_types::JsonObject) {
        self.rest.add_meta(extra);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Tools;

    fn page_and_typed(modern: bool) -> (String, String) {
        let tools = Tools::new()
            .add("one", "The first", || async { "1" })
            .add_tool(
                mcp_types::Tool::without_arguments("two").with_description("The \"second\" — ünïcode"),
                || async { "2" },
            )
            .add("three", "The third", || async { "3" });
        let info = std::sync::Arc::new(Implementation::new("test", "1.0.0"));
        let how = Finishing { modern, info: &info };
        let entries = &tools.entries[1..];
        let rest = ListToolsResult { next_cursor: Some("bzoz".into()), ..Default::default() };
        let mut page = ToolsPage { tools: entries, rest };
        let mut typed = ListToolsResult {
            tools: entries.iter().map(|e| e.def.clone()).collect(),
            next_cursor: Some("bzoz".into()),
            ..Default::default()
        };
        for result in [&mut page as &mut dyn Cacheable, &mut typed] {
            if modern {
                result.cache(300_000, CacheScope::Public);
            }
            result.finish(&how);
        }
        (serde_json::to_string(&page).unwrap(), serde_json::to_string(&typed).unwrap())
    }

    #[test]
    fn a_page_of_listed_bytes_is_the_typed_result() {
        for modern in [true, false] {
            let (page, typed) = page_and_typed(modern);
            assert_eq!(page, typed, "modern: {modern}");
            assert!(page.contains(r#""name":"two""#) && page.contains(r#""name":"three""#));
            assert!(!page.contains(r#""name":"one""#));
            assert_eq!(page.contains("resultType"), modern);
            assert_eq!(page.contains("ttlMs"), modern);
        }
    }
}
