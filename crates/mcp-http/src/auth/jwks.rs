//! The authorization server's signing keys: fetched on first use (from the configured
//! `jwks_uri`, or the one its metadata names), cached, fetched again when they grow old, and
//! on a token with an unknown `kid` — at most once per refetch interval, so a flood of random
//! key ids cannot hammer the authorization server. A failed fetch keeps the keys already held.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_auth::jose::JwkSet;
use mcp_auth::metadata::{AuthorizationServerMetadata, authorization_server_metadata_urls};

use super::fetch::{FetchError, Fetcher};

/// Where the keys come from.
#[derive(Debug, Clone)]
pub(crate) enum KeySource {
    /// A configured `jwks_uri`.
    Uri(String),
    /// The `jwks_uri` of this issuer's metadata.
    Discover(String),
}

#[derive(Default)]
struct Cached {
    keys: Option<Arc<JwkSet>>,
    fetched_at: Option<Instant>,
    last_attempt: Option<Instant>,
    /// The `jwks_uri` found by discovery.
    discovered: Option<String>,
}

/// The keys of one key source.
pub(crate) struct KeyStore {
    source: KeySource,
    fetcher: Fetcher,
    max_age: Duration,
    refetch_interval: Duration,
    cached: Mutex<Cached>,
    /// One fetch at a time; concurrent requests wait for it and share its result.
    fetching: tokio::sync::Mutex<()>,
}

/// Why no keys could be had.
#[derive(Debug, Clone, thiserror::Error)]
#[error("the authorization server's keys are unavailable: {0}")]
pub(crate) struct KeysUnavailable(pub(crate) String);

impl KeyStore {
    pub(crate) fn new(
        source: KeySource,
        fetcher: Fetcher,
        max_age: Duration,
        refetch_interval: Duration,
    ) -> Self {
        KeyStore {
            source,
            fetcher,
            max_age,
            refetch_interval,
            cached: Mutex::default(),
            fetching: tokio::sync::Mutex::new(()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Cached> {
        self.cached.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The current keys, fetched first when there are none yet or they are older than the
    /// maximum age (if that fetch fails, the old keys are used).
    pub(crate) async fn keys(&self) -> Result<Arc<JwkSet>, KeysUnavailable> {
        if let Some(keys) = self.fresh() {
            return Ok(keys);
        }
        let _one = self.fetching.lock().await;
        if let Some(keys) = self.fresh() {
            return Ok(keys);
        }
        // Failures are rate-limited too: an unreachable server is not asked on every request.
        let (held, recently_tried) = {
            let c = self.lock();
            (c.keys.clone(), c.last_attempt.is_some_and(|t| t.elapsed() < self.refetch_interval))
        };
        if recently_tried {
            return held.ok_or_else(|| KeysUnavailable("the last fetch failed".into()));
        }
        match self.fetch().await {
            Ok(keys) => Ok(keys),
            Err(e) => {
                tracing::warn!(error = %e, "fetching the authorization server's keys failed");
                held.ok_or(KeysUnavailable(e.0))
            }
        }
    }

    /// Keys fetched again because a token named a key id the held keys lack. `None` when no
    /// refetch is allowed yet (rate limit) or it brought nothing new.
    pub(crate) async fn refetch_for_unknown_kid(&self) -> Option<Arc<JwkSet>> {
        let before = self.lock().fetched_at;
        let _one = self.fetching.lock().await;
        {
            let c = self.lock();
            if c.fetched_at != before {
                // Someone else refetched while this request waited: use theirs.
                return c.keys.clone();
            }
            if c.last_attempt.is_some_and(|t| t.elapsed() < self.refetch_interval) {
                return None;
            }
        }
        match self.fetch().await {
            Ok(keys) => Some(keys),
            Err(e) => {
                tracing::warn!(error = %e, "refetching the authorization server's keys failed");
                None
            }
        }
    }

    fn fresh(&self) -> Option<Arc<JwkSet>> {
        let c = self.lock();
        match (&c.keys, c.fetched_at) {
            (Some(keys), Some(at)) if at.elapsed() < self.max_age => Some(keys.clone()),
            _ => None,
        }
    }

    async fn fetch(&self) -> Result<Arc<JwkSet>, FetchError> {
        self.lock().last_attempt = Some(Instant::now());
        let uri = match &self.source {
            KeySource::Uri(uri) => uri.clone(),
            KeySource::Discover(issuer) => {
                let known = self.lock().discovered.clone();
                match known {
                    Some(uri) => uri,
                    None => {
                        let uri = discover_jwks_uri(&self.fetcher, issuer).await?;
                        self.lock().discovered = Some(uri.clone());
                        uri
                    }
                }
            }
        };
        let body = self.fetcher.get_json(&uri).await?;
        let keys: JwkSet =
            serde_json::from_slice(&body).map_err(|_| FetchError(format!("{uri}: not a JWK Set")))?;
        let keys = Arc::new(keys);
        let mut c = self.lock();
        c.keys = Some(keys.clone());
        c.fetched_at = Some(Instant::now());
        Ok(keys)
    }
}

/// Finds the `jwks_uri` in the issuer's metadata (RFC 8414, then OpenID Connect Discovery,
/// at the URLs MCP prescribes), whose `issuer` must be exactly the configured one.
async fn discover_jwks_uri(fetcher: &Fetcher, issuer: &str) -> Result<String, FetchError> {
    let parsed = url::Url::parse(issuer).map_err(|e| FetchError(format!("{issuer}: {e}")))?;
    let mut last = FetchError(format!("{issuer}: no authorization server metadata"));
    for url in authorization_server_metadata_urls(&parsed) {
        let body = match fetcher.get_json(url.as_str()).await {
            Ok(body) => body,
            Err(e) => {
                last = e;
                continue;
            }
        };
        let Ok(metadata) = serde_json::from_slice::<AuthorizationServerMetadata>(&body) else {
            last = FetchError(format!("{url}: not authorization server metadata"));
            continue;
        };
        if !metadata.issuer_matches(issuer) {
            // RFC 8414 §3.3: metadata naming another issuer must not be used.
            last = FetchError(format!("{url}: metadata names another issuer"));
            continue;
        }
        return metadata.jwks_uri.ok_or_else(|| FetchError(format!("{url}: metadata has no jwks_uri")));
    }
    Err(last)
}
