//! [`OAuthClient`]: discovery, registration, the grants, and the [`HttpAuth`] hook.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcp_auth::challenge::{Challenge, parse_www_authenticate};
use mcp_auth::jose::SigningKey;
use mcp_auth::metadata::{AuthorizationServerMetadata, ProtectedResourceMetadata, canonical_resource};
use mcp_auth::scope;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName};
use reqwest::{Method, Url};

mod discovery;
pub(crate) mod grants;
mod registration;

use super::fetch::{FetchPolicy, Fetcher, is_loopback_host, sensitive};
use super::{
    AuthError, AuthorizationPrompt, CredentialStore, DpopPolicy, Grant, MemoryStore, OAuthClientBuilder,
    PreRegistered, StoredTokens, TokenAuthMethod,
};
use crate::transport::BoxFuture;
use crate::transport::http::{HttpAuth, Refusal};

const DPOP: HeaderName = HeaderName::from_static("dpop");
const DPOP_NONCE: HeaderName = HeaderName::from_static("dpop-nonce");

const GRANT_AUTHORIZATION_CODE: &str = "authorization_code";
const GRANT_REFRESH_TOKEN: &str = "refresh_token";
const GRANT_CLIENT_CREDENTIALS: &str = "client_credentials";
const GRANT_JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const GRANT_TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const TOKEN_TYPE_ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
const TOKEN_TYPE_ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
const CLIENT_ASSERTION_JWT: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
const OFFLINE_ACCESS: &str = "offline_access";

/// A token this close to its expiry (or half its lifetime, when shorter) is renewed before it
/// is sent.
const EXPIRY_MARGIN: u64 = 30;
/// Lifetime of a `private_key_jwt` client assertion.
const ASSERTION_LIFETIME: u64 = 300;

/// The OAuth 2.1 client of MCP authorization: an [`HttpAuth`] for
/// [`HttpConfig::auth`](crate::transport::http::HttpConfig::auth). One `OAuthClient` serves one
/// MCP server (the first URL it is asked to authorize); tokens are only ever sent to that
/// server's origin. See the [module documentation](super) for the flow.
pub struct OAuthClient {
    config: Config,
    fetcher: Fetcher,
    dpop_key: Option<SigningKey>,
    /// Serializes the flows: one discovery, registration or token request at a time.
    flow: tokio::sync::Mutex<()>,
    state: Mutex<State>,
}

impl std::fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.lock();
        f.debug_struct("OAuthClient")
            .field("grant", &self.config.grant)
            .field("server", &state.server.as_ref().map(Url::as_str))
            .field("issuer", &state.auth_server.as_ref().map(|a| a.issuer.as_str()))
            .field("has_token", &state.tokens.is_some())
            .finish_non_exhaustive()
    }
}

struct Config {
    client_name: String,
    redirect_uri: Option<Url>,
    client_metadata_url: Option<String>,
    pre_registered: Option<PreRegistered>,
    grant: Grant,
    store: Arc<dyn CredentialStore>,
    prompt: Option<Arc<dyn AuthorizationPrompt>>,
    offline_access: bool,
    dpop: DpopPolicy,
    application_type: String,
}

#[derive(Default)]
struct State {
    /// The MCP endpoint (the first URL authorized); tokens go to its origin only.
    server: Option<Url>,
    /// Whether the stored tokens were loaded.
    loaded: bool,
    resource: Option<Arc<Resource>>,
    auth_server: Option<Arc<AuthServer>>,
    tokens: Option<StoredTokens>,
    /// When to renew the token: before its expiry by [`EXPIRY_MARGIN`], or by half its
    /// lifetime when that is shorter.
    renew_at: Option<u64>,
    /// The scopes requested so far (without `offline_access`): the base of a step-up.
    requested_scope: Option<String>,
    /// The latest DPoP nonce of the MCP server, and of the authorization server.
    rs_nonce: Option<String>,
    as_nonce: Option<String>,
}

/// The protected resource, as its metadata describes it.
struct Resource {
    /// The `resource` of the metadata, sent byte for byte as the `resource` parameter.
    resource: String,
    metadata: ProtectedResourceMetadata,
}

/// The authorization server in use, with its validated metadata.
struct AuthServer {
    issuer: String,
    metadata: AuthorizationServerMetadata,
}

/// The client id to use at one authorization server, and how to authenticate.
struct ClientInfo {
    client_id: String,
    secret: Option<String>,
    method: TokenAuthMethod,
    key: Option<Arc<SigningKey>>,
}

/// What a failed OAuth request says.
#[derive(serde::Deserialize, Default)]
pub(crate) struct OAuthErrorBody {
    #[serde(default)]
    pub(crate) error: Option<String>,
    #[serde(default)]
    pub(crate) error_description: Option<String>,
}

/// Why a flow runs: what the refusal said.
struct Trigger<'a> {
    server: Url,
    scope: Option<&'a str>,
    resource_metadata: Option<&'a str>,
}

impl OAuthClient {
    /// A builder with the defaults: authorization code grant (which needs a redirect URI and a
    /// prompt), in-memory store, `offline_access` when offered, DPoP when supported.
    pub fn builder() -> OAuthClientBuilder {
        OAuthClientBuilder::default()
    }

    pub(super) fn from_builder(builder: OAuthClientBuilder) -> Result<Self, AuthError> {
        let application_type = builder.application_type.clone().unwrap_or_else(|| {
            let native = builder.redirect_uri.as_ref().is_none_or(|uri| {
                !matches!(uri.scheme(), "http" | "https") || uri.host_str().is_some_and(is_loopback_host)
            });
            if native { "native" } else { "web" }.to_owned()
        });
        let policy = FetchPolicy {
            metadata_timeout: builder.metadata_timeout,
            allow_private: builder.allow_private_networks,
            ..FetchPolicy::default()
        };
        let dpop_key = match builder.dpop {
            DpopPolicy::Never => None,
            _ => Some(SigningKey::generate_es256().map_err(|e| AuthError::Crypto(e.to_string()))?),
        };
        Ok(OAuthClient {
            config: Config {
                client_name: builder.client_name,
                redirect_uri: builder.redirect_uri,
                client_metadata_url: builder.client_metadata_url,
                pre_registered: builder.pre_registered,
                grant: builder.grant,
                store: builder.store.unwrap_or_else(|| Arc::new(MemoryStore::new())),
                prompt: builder.prompt,
                offline_access: builder.offline_access,
                dpop: builder.dpop,
                application_type,
            },
            fetcher: Fetcher::new(policy)?,
            dpop_key,
            flow: tokio::sync::Mutex::new(()),
            state: Mutex::new(State::default()),
        })
    }

    /// The issuer of the authorization server in use, once discovered.
    pub fn issuer(&self) -> Option<String> {
        self.lock().auth_server.as_ref().map(|a| a.issuer.clone())
    }

    /// The scopes granted to the current token, as the authorization server reported them
    /// (else as requested).
    pub fn granted_scope(&self) -> Option<String> {
        let state = self.lock();
        let tokens = state.tokens.as_ref()?;
        tokens.scope.clone().or_else(|| tokens.requested_scope.clone())
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The key the tokens are stored under: the MCP server's canonical URL.
    fn store_key(server: &Url) -> String {
        canonical_resource(server)
    }

    // ---- HttpAuth: headers -------------------------------------------------------------------

    /// The headers of a request to `url`, when they can be told without waiting: always but
    /// for the first request and the one that renews the token (nothing copied, nothing
    /// awaited). `Err` carries the server's URL to [`headers_later`](Self::headers_later).
    fn headers_now(&self, method: &Method, url: &Url) -> Result<Result<HeaderMap, AuthError>, Url> {
        let mut state = self.lock();
        let server = state.server.get_or_insert_with(|| {
            let mut server = url.clone();
            server.set_fragment(None);
            self.fetcher.trust_host_of(&server);
            server
        });
        if !same_origin(server, url) {
            // Never hand a token to another origin.
            return Ok(Ok(HeaderMap::new()));
        }
        if state.loaded && !expiring(&state) {
            return Ok(self.token_headers(&state, method, url));
        }
        Err(state.server.clone().unwrap_or_else(|| url.clone()))
    }

    /// The headers once the stored tokens are loaded and a token about to expire is renewed.
    async fn headers_later(&self, server: Url, method: &Method, url: &Url) -> Result<HeaderMap, AuthError> {
        self.load_stored(&server).await;
        self.renew_if_expiring(&server).await;
        self.token_headers(&self.lock(), method, url)
    }

    /// The headers that present the current token (none without one).
    fn token_headers(&self, state: &State, method: &Method, url: &Url) -> Result<HeaderMap, AuthError> {
        let Some(tokens) = &state.tokens else { return Ok(HeaderMap::new()) };
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, sensitive(&authorization_value(tokens))?);
        if is_dpop(tokens) {
            let key = self
                .dpop_key
                .as_ref()
                .ok_or_else(|| AuthError::Config("a DPoP-bound token without a DPoP key".into()))?;
            let proof = mcp_auth::dpop::proof(
                key,
                method.as_str(),
                url.as_str(),
                state.rs_nonce.as_deref(),
                Some(&tokens.access_token),
            )
            .map_err(|e| AuthError::Crypto(e.to_string()))?;
            headers.insert(DPOP, sensitive(&proof)?);
        }
        Ok(headers)
    }

    /// Loads the stored tokens of the server, once.
    async fn load_stored(&self, server: &Url) {
        if self.lock().loaded {
            return;
        }
        let _flow = self.flow.lock().await;
        if self.lock().loaded {
            return;
        }
        let stored = match self.config.store.tokens(&Self::store_key(server)).await {
            Ok(stored) => stored,
            Err(e) => {
                tracing::warn!(target: "mcp_client::auth", "reading stored tokens failed: {e}");
                None
            }
        };
        let mut state = self.lock();
        state.loaded = true;
        if state.tokens.is_none()
            && let Some(tokens) = stored
            && !is_dpop(&tokens)
        {
            adopt(&mut state, tokens);
        }
    }

    /// Tokens stored since they were loaded — by another process (`login` in a command line
    /// while a long-running client waits), or another client of the same store — that differ
    /// from the refused ones (`presented`): adopted, to be tried before any new flow.
    async fn stored_since(&self, server: &Url, presented: Option<&str>) -> bool {
        let stored = match self.config.store.tokens(&Self::store_key(server)).await {
            Ok(Some(stored)) if !is_dpop(&stored) => stored,
            Ok(_) => return false,
            Err(e) => {
                tracing::debug!(target: "mcp_client::auth", "reading stored tokens failed: {e}");
                return false;
            }
        };
        if presented == Some(authorization_value(&stored).as_str()) {
            return false;
        }
        tracing::debug!(target: "mcp_client::auth", "using tokens stored meanwhile");
        adopt(&mut self.lock(), stored);
        true
    }

    /// Renews a token about to expire (refresh token, or a grant without a user), when the
    /// authorization server is known. On failure the token is sent as it is; the server's
    /// refusal then starts the full flow.
    async fn renew_if_expiring(&self, server: &Url) {
        if !expiring(&self.lock()) {
            return;
        }
        let _flow = self.flow.lock().await;
        let (tokens, resource, auth_server) = {
            let state = self.lock();
            if !expiring(&state) {
                return;
            }
            (state.tokens.clone(), state.resource.clone(), state.auth_server.clone())
        };
        let Some(tokens) = tokens else { return };
        let auth_server = match auth_server {
            Some(a) if a.issuer == tokens.issuer => a,
            _ => match self.fetch_auth_server(&tokens.issuer).await {
                Ok(a) => {
                    let a = Arc::new(a);
                    self.lock().auth_server = Some(a.clone());
                    a
                }
                Err(e) => {
                    tracing::debug!(target: "mcp_client::auth", "cannot renew the token: {e}");
                    return;
                }
            },
        };
        if tokens.refresh_token.is_some() {
            match self.refresh(&auth_server, &tokens).await {
                Ok(()) => return,
                Err(e) => tracing::info!(target: "mcp_client::auth", "refreshing the token failed: {e}"),
            }
        }
        if !matches!(self.config.grant, Grant::AuthorizationCode)
            && let Some(resource) = resource
        {
            let scope = self.lock().requested_scope.clone();
            let trigger = Trigger { server: server.clone(), scope: None, resource_metadata: None };
            if let Err(e) = self.obtain(&trigger, &resource, &auth_server, scope).await {
                tracing::info!(target: "mcp_client::auth", "renewing the token failed: {e}");
            }
        }
    }

    // ---- HttpAuth: refusals ------------------------------------------------------------------

    async fn on_refusal(&self, refusal: &Refusal) -> Result<bool, AuthError> {
        let _flow = self.flow.lock().await;
        let challenges: Vec<Challenge> =
            refusal.www_authenticate().flat_map(|v| parse_www_authenticate(&v)).collect();
        let presented = refusal.presented.get(AUTHORIZATION).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let uses_dpop =
            presented.as_deref().is_some_and(|p| p.len() > 5 && p[..5].eq_ignore_ascii_case("dpop "));
        let challenge = pick_challenge(&challenges, uses_dpop);
        let error = challenge.and_then(|c| c.param("error"));
        let nonce = refusal.headers.get(DPOP_NONCE).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let server = {
            let mut state = self.lock();
            if let Some(nonce) = &nonce {
                state.rs_nonce = Some(nonce.clone());
            }
            if error == Some("use_dpop_nonce") {
                // RFC 9449 §9: the same request again, with the server's nonce in the proof.
                return Ok(nonce.is_some() && uses_dpop);
            }
            let current = state.tokens.as_ref().map(authorization_value);
            if current.is_some() && current != presented {
                // Another request already obtained a newer token.
                return Ok(true);
            }
            state.server.clone().unwrap_or_else(|| refusal.url.clone())
        };
        let trigger = Trigger {
            server,
            scope: challenge.and_then(|c| c.param("scope")).filter(|s| !s.trim().is_empty()),
            resource_metadata: challenge.and_then(|c| c.param("resource_metadata")),
        };
        let insufficient = refusal.status == 403 || error == Some("insufficient_scope");
        if !insufficient && self.stored_since(&trigger.server, presented.as_deref()).await {
            return Ok(true);
        }
        if insufficient && presented.is_some() {
            self.step_up(&trigger).await?;
        } else if presented.is_some() {
            self.reauthorize(&trigger).await?;
        } else {
            self.first_authorization(&trigger).await?;
        }
        Ok(true)
    }

    /// No token yet: discover, and obtain one with the challenge's (or the metadata's) scopes.
    async fn first_authorization(&self, trigger: &Trigger<'_>) -> Result<(), AuthError> {
        let (resource, auth_server) = self.discover(trigger, false).await?;
        let previous = self.lock().requested_scope.clone();
        let selected = trigger.scope.map(str::to_owned).or_else(|| default_scope(&resource));
        let scope = match previous {
            Some(previous) => Some(scope::union(&previous, selected.as_deref().unwrap_or(""))),
            None => selected,
        };
        self.obtain(trigger, &resource, &auth_server, scope).await
    }

    /// The token was refused: the authorization server may have changed (the metadata is read
    /// again), the token may have expired or been revoked (refresh, else the grant again).
    async fn reauthorize(&self, trigger: &Trigger<'_>) -> Result<(), AuthError> {
        let (resource, auth_server) = self.discover(trigger, true).await?;
        let tokens = self.lock().tokens.clone();
        if let Some(tokens) = tokens.filter(|t| t.issuer == auth_server.issuer && t.refresh_token.is_some()) {
            match self.refresh(&auth_server, &tokens).await {
                Ok(()) => return Ok(()),
                Err(e) => tracing::info!(target: "mcp_client::auth", "refreshing the token failed: {e}"),
            }
        }
        self.drop_tokens(&trigger.server).await;
        let previous = self.lock().requested_scope.clone();
        let challenged = trigger.scope.map(str::to_owned).or_else(|| default_scope(&resource));
        let scope = match (previous, challenged) {
            (Some(p), Some(c)) => Some(scope::union(&p, &c)),
            (p, c) => p.or(c),
        };
        self.obtain(trigger, &resource, &auth_server, scope).await
    }

    /// `403 insufficient_scope`: authorize again with the union of the scopes requested so far
    /// and the challenged ones.
    async fn step_up(&self, trigger: &Trigger<'_>) -> Result<(), AuthError> {
        let (resource, auth_server) = self.discover(trigger, false).await?;
        let previous = self.lock().requested_scope.clone();
        let scope = match (previous, trigger.scope) {
            (Some(p), Some(c)) => Some(scope::union(&p, c)),
            (p, c) => p.or(c.map(str::to_owned)).or_else(|| default_scope(&resource)),
        };
        tracing::info!(target: "mcp_client::auth", scope = scope.as_deref().unwrap_or(""), "step-up authorization");
        self.obtain(trigger, &resource, &auth_server, scope).await
    }

    async fn drop_tokens(&self, server: &Url) {
        let had = self.lock().tokens.take().is_some();
        if had && let Err(e) = self.config.store.remove_tokens(&Self::store_key(server)).await {
            tracing::warn!(target: "mcp_client::auth", "removing stored tokens failed: {e}");
        }
    }
}

impl HttpAuth for OAuthClient {
    fn authorize<'a>(
        &'a self,
        method: &'a Method,
        url: &'a Url,
    ) -> BoxFuture<'a, Result<HeaderMap, AuthError>> {
        // Boxed small when nothing is to be awaited: the loading and renewing future is
        // kilobytes, copied into its box on every request otherwise.
        match self.headers_now(method, url) {
            Ok(ready) => Box::pin(std::future::ready(ready)),
            Err(server) => Box::pin(self.headers_later(server, method, url)),
        }
    }

    fn refused<'a>(&'a self, refusal: &'a Refusal) -> BoxFuture<'a, Result<bool, AuthError>> {
        Box::pin(self.on_refusal(refusal))
    }
}

/// `tokens` as the ones to send.
fn adopt(state: &mut State, tokens: StoredTokens) {
    state.requested_scope = tokens.requested_scope.clone();
    state.renew_at = tokens.expires_at.map(|at| at.saturating_sub(EXPIRY_MARGIN));
    state.tokens = Some(tokens);
}

/// The `Authorization` value of `tokens`.
fn authorization_value(tokens: &StoredTokens) -> String {
    let scheme = if is_dpop(tokens) { "DPoP" } else { "Bearer" };
    format!("{scheme} {}", tokens.access_token)
}

fn is_dpop(tokens: &StoredTokens) -> bool {
    tokens.token_type.eq_ignore_ascii_case("dpop")
}

/// The challenge that applies: `DPoP` for a DPoP-bound token, else `Bearer`, else the first.
fn pick_challenge(challenges: &[Challenge], dpop: bool) -> Option<&Challenge> {
    let preferred = if dpop { "DPoP" } else { "Bearer" };
    challenges
        .iter()
        .find(|c| c.is(preferred))
        .or_else(|| challenges.iter().find(|c| c.is("Bearer") || c.is("DPoP")))
        .or_else(|| challenges.first())
}

/// All of `scopes_supported` of the protected resource metadata, if it has any.
fn default_scope(resource: &Resource) -> Option<String> {
    let scopes = resource.metadata.scopes_supported.as_ref()?;
    let joined = scope::join(scopes);
    (!joined.trim().is_empty()).then_some(joined)
}

/// Whether the current token is due for renewal.
fn expiring(state: &State) -> bool {
    state.tokens.is_some() && state.renew_at.is_some_and(|at| at <= now())
}

/// Whether `a` and `b` have the same origin (RFC 6454: scheme, host and port), as
/// `Url::origin` compares them for http and https, without building the two origins. Any other
/// scheme has an opaque origin, the same as no other.
fn same_origin(a: &Url, b: &Url) -> bool {
    matches!(a.scheme(), "http" | "https")
        && a.scheme() == b.scheme()
        && a.host() == b.host()
        && a.port_or_known_default() == b.port_or_known_default()
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO).as_secs()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_origin_agrees_with_the_url_crates_origin() {
        let urls = [
            "http://127.0.0.1:8080/mcp",
            "http://127.0.0.1:8080/other?q=1#f",
            "http://127.0.0.1/mcp",
            "http://127.0.0.1:80/mcp",
            "https://127.0.0.1:8080/mcp",
            "http://localhost:8080/mcp",
            "http://LOCALHOST:8080/x",
            "https://example.com/mcp",
            "https://example.com:443/mcp",
            "https://user:secret@example.com/mcp",
            "https://example.com:8443/mcp",
            "https://sub.example.com/mcp",
            "http://[::1]:8080/mcp",
            "http://[::1]:8081/mcp",
            "file:///tmp/mcp",
            "ws://example.com/mcp",
        ];
        let urls: Vec<Url> = urls.iter().map(|u| Url::parse(u).unwrap()).collect();
        let mut same = 0;
        for a in &urls {
            for b in &urls {
                let expected = matches!(a.scheme(), "http" | "https") && a.origin() == b.origin();
                assert_eq!(same_origin(a, b), expected, "{a} and {b}");
                same += usize::from(expected);
            }
        }
        // Not only the diagonal: default ports, letter case, userinfo, paths and fragments.
        assert!(same > 14 + 8, "{same} pairs");
    }
}
