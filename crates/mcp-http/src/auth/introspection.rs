//! Opaque tokens checked by the authorization server (RFC 7662), with a small cache of
//! active answers keyed by the token's SHA-256 (the token itself is never stored).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mcp_auth::jose::{Validation, validate_claims};
use mcp_types::{JsonObject, JsonValue};
use sha2::{Digest, Sha256};

use super::TokenError;
use super::config::Introspection;
use super::fetch::Fetcher;

/// Answers kept at most (beyond it, the expired ones go, then everything).
const CACHE_CAPACITY: usize = 10_000;

pub(crate) struct Introspector {
    config: Introspection,
    issuers: Vec<String>,
    audiences: Vec<String>,
    fetcher: Fetcher,
    cache: Mutex<HashMap<[u8; 32], (Instant, JsonObject)>>,
}

impl Introspector {
    pub(crate) fn new(
        config: Introspection,
        issuers: Vec<String>,
        audiences: Vec<String>,
        fetcher: Fetcher,
    ) -> Self {
        Introspector { config, issuers, audiences, fetcher, cache: Mutex::default() }
    }

    /// The claims of an active token meant for this resource.
    pub(crate) async fn check(&self, token: &str) -> Result<JsonObject, TokenError> {
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let cached = {
            let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            cache.get(&key).filter(|(until, _)| Instant::now() < *until).map(|(_, claims)| claims.clone())
        };
        let claims = match cached {
            Some(claims) => claims,
            None => {
                let claims = self.introspect(token).await?;
                self.remember(key, &claims);
                claims
            }
        };
        // Checked on every use: a cached answer may have expired since.
        self.validate(&claims)?;
        Ok(claims)
    }

    async fn introspect(&self, token: &str) -> Result<JsonObject, TokenError> {
        let body = self
            .fetcher
            .post_form(
                &self.config.endpoint,
                (&self.config.client_id, self.config.client_secret()),
                &[("token", token), ("token_type_hint", "access_token")],
            )
            .await
            .map_err(|e| {
                tracing::warn!(error = %e, "token introspection failed");
                TokenError::Unavailable("the authorization server could not be asked about the token")
            })?;
        let answer: JsonObject = serde_json::from_slice(&body)
            .map_err(|_| TokenError::Unavailable("the introspection answer is not a JSON object"))?;
        if answer.get("active") != Some(&JsonValue::Bool(true)) {
            return Err(TokenError::Invalid("the token is not active".into()));
        }
        Ok(answer)
    }

    fn validate(&self, claims: &JsonObject) -> Result<(), TokenError> {
        // An introspection answer need not name its issuer: when it does, it must be ours.
        let issuers = if claims.contains_key("iss") { self.issuers.clone() } else { Vec::new() };
        let validation = Validation::default()
            .with_issuers(issuers)
            .with_audiences(self.audiences.clone())
            .with_leeway(self.config.leeway)
            .with_require_exp(false);
        validate_claims(claims, &validation).map_err(|e| TokenError::Invalid(e.to_string()))
    }

    fn remember(&self, key: [u8; 32], claims: &JsonObject) {
        if self.config.cache_ttl.is_zero() {
            return;
        }
        let mut ttl = self.config.cache_ttl;
        if let Some(exp) = claims.get("exp").and_then(JsonValue::as_f64) {
            let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs_f64();
            ttl = ttl.min(Duration::from_secs_f64((exp - now).max(0.0)));
        }
        let until = Instant::now() + ttl;
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= CACHE_CAPACITY {
            let now = Instant::now();
            cache.retain(|_, (until, _)| now < *until);
            if cache.len() >= CACHE_CAPACITY {
                cache.clear();
            }
        }
        cache.insert(key, (until, claims.clone()));
    }
}
