//! Shaping results for the era of the request: modern results carry `resultType`, the
//! server's identity in `_meta`, and (when cacheable) `ttlMs`/`cacheScope`; legacy results
//! carry none of these.

use mcp_types::{
    CacheScope, CallToolResult, CompleteResult, DiscoverResult, EmptyResult, GetPromptResult, Implementation,
    InputRequiredResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, ReadResourceResult, ResultMeta, ResultType, SubscriptionsListenResult,
};

/// How to finish a result.
pub(crate) struct Finishing<'a> {
    pub(crate) modern: bool,
    pub(crate) info: &'a Implementation,
}

pub(crate) trait Finish {
    fn finish(&mut self, how: &Finishing<'_>);
}

pub(crate) trait Cacheable: Finish {
    fn cache(&mut self, ttl_ms: u64, scope: CacheScope);
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
        }
    )*};
}

finish!(
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
