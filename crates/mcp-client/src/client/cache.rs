//! Results cached by their `ttlMs` hint (2026-07-28). The cache is per client, so `private`
//! and `public` results are both kept; a `ttlMs` of 0 or an absent one keeps nothing. Change
//! notifications (`*/list_changed`, `resources/updated`) drop what they invalidate.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use mcp_types::RawJson;
use serde_json::{Map, Value};
use tokio::time::Instant;

use crate::engine::lock;

/// Methods whose results carry cache hints.
pub(crate) const CACHEABLE: [&str; 6] = [
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
];

const MAX_ENTRIES: usize = 1024;

#[derive(Default)]
pub(crate) struct ResultCache {
    entries: Mutex<HashMap<String, (Instant, RawJson)>>,
}

impl ResultCache {
    pub(crate) fn key(method: &str, params: &Map<String, Value>) -> Option<String> {
        if !CACHEABLE.contains(&method) {
            return None;
        }
        // The params without `_meta`, serialized straight from the caller's map (no copy).
        let params = super::params::WireParams { params, input: None, meta: super::params::WireMeta::None };
        Some(format!("{method} {}", serde_json::to_string(&params).unwrap_or_default()))
    }

    pub(crate) fn get(&self, key: &str) -> Option<RawJson> {
        let mut entries = lock(&self.entries);
        match entries.get(key) {
            Some((expires, raw)) if *expires > Instant::now() => Some(raw.clone()),
            Some(_) => {
                entries.remove(key);
                None
            }
            None => None,
        }
    }

    pub(crate) fn put(&self, key: String, raw: &RawJson) {
        #[derive(serde::Deserialize)]
        struct Hint {
            #[serde(rename = "ttlMs")]
            ttl_ms: Option<u64>,
            #[serde(rename = "resultType")]
            result_type: Option<String>,
        }
        let Ok(hint) = serde_json::from_str::<Hint>(raw.get()) else { return };
        let ttl = match hint.ttl_ms {
            Some(ms) if ms > 0 && hint.result_type.as_deref() != Some("input_required") => ms,
            _ => return,
        };
        let mut entries = lock(&self.entries);
        if entries.len() >= MAX_ENTRIES {
            let now = Instant::now();
            entries.retain(|_, (expires, _)| *expires > now);
            if entries.len() >= MAX_ENTRIES {
                entries.clear();
            }
        }
        let ttl = Duration::from_millis(ttl.min(24 * 3600 * 1000));
        entries.insert(key, (Instant::now() + ttl, raw.clone()));
    }

    /// Drops every entry of `method` (all pages), or only the read of `uri`.
    pub(crate) fn invalidate(&self, method: &str, uri: Option<&str>) {
        let prefix = format!("{method} ");
        lock(&self.entries).retain(|k, _| {
            if !k.starts_with(&prefix) {
                return true;
            }
            match uri {
                Some(uri) => !k.contains(&serde_json::to_string(uri).unwrap_or_default()),
                None => false,
            }
        });
    }

    pub(crate) fn clear(&self) {
        lock(&self.entries).clear();
    }
}
