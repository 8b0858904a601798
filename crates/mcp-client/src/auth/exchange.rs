//! OAuth 2.0 Token Exchange (RFC 8693) for a service acting for its caller: the caller's access
//! token (the subject token) traded at an authorization server for one meant for another
//! resource, the answer kept until it expires.
//!
//! A gateway uses it for an upstream that must see who the caller is but must not receive the
//! caller's own token (MCP forbids passing a client's token through): the authorization server
//! decides what the new token may do, and its audience is the upstream alone.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::Url;
use reqwest::header::{AUTHORIZATION, HeaderMap};
use serde_json::Value;

use super::AuthError;
use super::fetch::{FetchPolicy, Fetcher, sensitive};
use super::oauth::OAuthErrorBody;
use super::oauth::grants::{TokenResponse, basic};

/// The grant type of a token exchange.
const GRANT_TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
/// The token type of an OAuth access token.
const ACCESS_TOKEN_TYPE: &str = "urn:ietf:params:oauth:token-type:access_token";
/// How long before its expiry an exchanged token is no longer handed out (it must still be
/// valid when the upstream checks it).
const EXPIRY_MARGIN: Duration = Duration::from_secs(30);
/// How long an exchanged token without `expires_in` is kept.
const DEFAULT_LIFETIME: Duration = Duration::from_secs(60);

/// Trades access tokens at one token endpoint, for one resource; each answer cached (by a
/// SHA-256 of the subject token, never the token itself as a key) until shortly before it
/// expires, at most [`TokenExchange::max_entries`] of them.
pub struct TokenExchange {
    endpoint: Url,
    client_id: String,
    client_secret: Option<String>,
    resource: Option<String>,
    audience: Option<String>,
    scope: Option<String>,
    max_entries: usize,
    fetcher: Fetcher,
    cache: Mutex<HashMap<String, Exchanged>>,
}

#[derive(Clone)]
struct Exchanged {
    token: Arc<str>,
    until: Instant,
}

impl std::fmt::Debug for TokenExchange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenExchange")
            .field("endpoint", &self.endpoint.as_str())
            .field("client_id", &self.client_id)
            .field("resource", &self.resource)
            .field("audience", &self.audience)
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

impl TokenExchange {
    /// Exchanges at `token_endpoint` (`https`, or `http` on loopback) as the client
    /// `client_id`: a public client until [`TokenExchange::client_secret`] is given.
    pub fn new(token_endpoint: &str, client_id: impl Into<String>) -> Result<Self, AuthError> {
        let endpoint = Url::parse(token_endpoint)
            .map_err(|e| AuthError::Config(format!("token endpoint {token_endpoint:?}: {e}")))?;
        let fetcher = Fetcher::new(FetchPolicy::default())?;
        fetcher.check_url(&endpoint)?;
        Ok(TokenExchange {
            endpoint,
            client_id: client_id.into(),
            client_secret: None,
            resource: None,
            audience: None,
            scope: None,
            max_entries: 10_000,
            fetcher,
            cache: Mutex::new(HashMap::new()),
        })
    }

    /// Authenticates with `client_secret_basic`.
    pub fn client_secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(secret.into());
        self
    }

    /// The `resource` the new token is for (RFC 8707; an upstream's URL).
    pub fn resource(mut self, resource: impl Into<String>) -> Self {
        self.resource = Some(resource.into());
        self
    }

    /// The `audience` the new token is for, as the authorization server names it.
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audience = Some(audience.into());
        self
    }

    /// The `scope` asked for (space-separated).
    pub fn scope(mut self, scope: impl Into<String>) -> Self {
        self.scope = Some(scope.into());
        self
    }

    /// How many exchanged tokens are kept at most (default 10,000); beyond, the ones expiring
    /// first make room.
    pub fn max_entries(mut self, max: usize) -> Self {
        self.max_entries = max.max(1);
        self
    }

    /// How many exchanged tokens are cached now.
    pub fn cached(&self) -> usize {
        self.lock().len()
    }

    /// The token for `subject_token`'s holder: from the cache while it is valid, otherwise
    /// asked for. Errors never contain a token.
    pub async fn exchange(&self, subject_token: &str) -> Result<Arc<str>, AuthError> {
        let key = mcp_auth::dpop::access_token_hash(subject_token);
        let now = Instant::now();
        if let Some(hit) = self.lock().get(&key).filter(|e| e.until > now) {
            return Ok(hit.token.clone());
        }
        let exchanged = self.ask(subject_token).await?;
        let token = exchanged.token.clone();
        let mut cache = self.lock();
        if cache.len() >= self.max_entries && !cache.contains_key(&key) {
            let now = Instant::now();
            cache.retain(|_, e| e.until > now);
            if cache.len() >= self.max_entries
                && let Some(first) = cache.iter().min_by_key(|(_, e)| e.until).map(|(k, _)| k.clone())
            {
                cache.remove(&first);
            }
        }
        cache.insert(key, exchanged);
        Ok(token)
    }

    async fn ask(&self, subject_token: &str) -> Result<Exchanged, AuthError> {
        let mut form = vec![
            ("grant_type", GRANT_TOKEN_EXCHANGE.to_owned()),
            ("subject_token", subject_token.to_owned()),
            ("subject_token_type", ACCESS_TOKEN_TYPE.to_owned()),
            ("requested_token_type", ACCESS_TOKEN_TYPE.to_owned()),
        ];
        if let Some(resource) = &self.resource {
            form.push(("resource", resource.clone()));
        }
        if let Some(audience) = &self.audience {
            form.push(("audience", audience.clone()));
        }
        if let Some(scope) = &self.scope {
            form.push(("scope", scope.clone()));
        }
        let mut headers = HeaderMap::new();
        match &self.client_secret {
            Some(secret) => {
                headers.insert(AUTHORIZATION, sensitive(&basic(&self.client_id, secret))?);
            }
            None => form.push(("client_id", self.client_id.clone())),
        }
        let sent = Instant::now();
        let answer = self.fetcher.post_form(&self.endpoint, &form, headers).await?;
        if !answer.is_success() {
            let body: OAuthErrorBody = answer.json().unwrap_or_default();
            return Err(AuthError::Token {
                error: body.error.unwrap_or_else(|| format!("HTTP {}", answer.status)),
                description: body.error_description,
            });
        }
        let answer: TokenResponse = answer
            .json()
            .ok_or_else(|| AuthError::Http("the token exchange answer is not a token response".into()))?;
        if answer.issued_token_type.as_deref().is_some_and(|t| t != ACCESS_TOKEN_TYPE) {
            return Err(AuthError::Token {
                error: "unexpected_token_type".into(),
                description: Some("the authorization server did not issue an access token".into()),
            });
        }
        if !answer.token_type.as_deref().is_some_and(|t| t.eq_ignore_ascii_case("bearer")) {
            return Err(AuthError::Token {
                error: "unsupported_token_type".into(),
                description: Some(format!(
                    "token_type {:?}: only Bearer tokens can be presented for the caller",
                    answer.token_type.unwrap_or_default()
                )),
            });
        }
        if answer.access_token.is_empty() {
            return Err(AuthError::Http("the token exchange answer has an empty access_token".into()));
        }
        let lifetime = match answer.expires_in.as_ref().and_then(Value::as_f64) {
            Some(seconds) if seconds.is_finite() && seconds > 0.0 => {
                Duration::from_secs_f64(seconds.min(1e9))
            }
            _ => DEFAULT_LIFETIME,
        };
        // Counted from when the request went out: never longer than the server meant.
        let until = sent + lifetime.saturating_sub(EXPIRY_MARGIN);
        tracing::debug!(target: "mcp_client::auth", endpoint = %super::fetch::redact(&self.endpoint), lifetime = ?lifetime, "token exchanged");
        Ok(Exchanged { token: answer.access_token.into(), until })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Exchanged>> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }
}
