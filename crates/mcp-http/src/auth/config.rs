//! Authorization settings: who issues tokens, what they must say, how they are checked.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use mcp_auth::jose::Algorithm;
use url::Url;

/// The largest clock leeway accepted for `exp`, `nbf` and `iat` (larger values are clamped).
pub const MAX_LEEWAY: Duration = Duration::from_secs(300);

/// How access tokens are validated.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum TokenValidation {
    /// Tokens are JWTs (RFC 9068) signed by the authorization server, verified locally against
    /// its JWKS.
    Jwt(JwtValidation),
    /// Tokens are opaque and checked by the authorization server (RFC 7662).
    Introspection(Introspection),
}

/// JWT access tokens verified against the authorization server's keys. Start from
/// [`JwtValidation::default`] and change what you need with the setters (settings are added
/// over time, so it cannot be written as a literal outside this crate).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct JwtValidation {
    /// Where the keys are. `None`: the `jwks_uri` of each issuer's authorization server
    /// metadata (RFC 8414, then OpenID Connect Discovery), fetched on first use.
    pub jwks_uri: Option<String>,
    /// The signature algorithms accepted (pinned). `none` and `HS*` cannot be named.
    pub algorithms: Vec<Algorithm>,
    /// Clock leeway for `exp`/`nbf`/`iat` (at most [`MAX_LEEWAY`]).
    pub leeway: Duration,
    /// Keys older than this are fetched again on the next request.
    pub jwks_max_age: Duration,
    /// A token with an unknown `kid` triggers a refetch at most this often, so a flood of
    /// random key ids cannot hammer the authorization server.
    pub jwks_refetch_interval: Duration,
}

impl Default for JwtValidation {
    fn default() -> Self {
        JwtValidation {
            jwks_uri: None,
            algorithms: vec![Algorithm::RS256, Algorithm::ES256],
            leeway: Duration::from_secs(60),
            jwks_max_age: Duration::from_secs(15 * 60),
            jwks_refetch_interval: Duration::from_secs(30),
        }
    }
}

impl JwtValidation {
    /// Sets [`jwks_uri`](Self::jwks_uri): the keys are fetched from `uri`.
    #[must_use]
    pub fn jwks_uri(mut self, uri: impl Into<String>) -> Self {
        self.jwks_uri = Some(uri.into());
        self
    }

    /// Sets [`algorithms`](Self::algorithms).
    #[must_use]
    pub fn algorithms(mut self, algorithms: Vec<Algorithm>) -> Self {
        self.algorithms = algorithms;
        self
    }

    /// Sets [`leeway`](Self::leeway).
    #[must_use]
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// Sets [`jwks_max_age`](Self::jwks_max_age).
    #[must_use]
    pub fn jwks_max_age(mut self, max_age: Duration) -> Self {
        self.jwks_max_age = max_age;
        self
    }

    /// Sets [`jwks_refetch_interval`](Self::jwks_refetch_interval).
    #[must_use]
    pub fn jwks_refetch_interval(mut self, interval: Duration) -> Self {
        self.jwks_refetch_interval = interval;
        self
    }
}

/// Opaque tokens checked at the authorization server's introspection endpoint (RFC 7662),
/// authenticating with client credentials (`client_secret_basic`).
#[derive(Clone)]
#[non_exhaustive]
pub struct Introspection {
    /// The introspection endpoint.
    pub endpoint: String,
    /// This resource server's client id at the authorization server.
    pub client_id: String,
    client_secret: String,
    /// An active answer is reused for this long (never past the token's `exp`); zero turns the
    /// cache off. Revocation takes effect after at most this long.
    pub cache_ttl: Duration,
    /// Clock leeway for `exp`/`nbf` (at most [`MAX_LEEWAY`]).
    pub leeway: Duration,
}

impl Introspection {
    /// Introspection at `endpoint` as client `client_id` with `client_secret`.
    pub fn new(
        endpoint: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        Introspection {
            endpoint: endpoint.into(),
            client_id: client_id.into(),
            client_secret: client_secret.into(),
            cache_ttl: Duration::from_secs(30),
            leeway: Duration::from_secs(60),
        }
    }

    /// Sets [`cache_ttl`](Self::cache_ttl).
    #[must_use]
    pub fn cache_ttl(mut self, ttl: Duration) -> Self {
        self.cache_ttl = ttl;
        self
    }

    /// Sets [`leeway`](Self::leeway).
    #[must_use]
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    pub(crate) fn client_secret(&self) -> &str {
        &self.client_secret
    }
}

impl fmt::Debug for Introspection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Introspection")
            .field("endpoint", &self.endpoint)
            .field("client_id", &self.client_id)
            .field("client_secret", &"<redacted>")
            .field("cache_ttl", &self.cache_ttl)
            .finish()
    }
}

/// DPoP (RFC 9449): sender-constrained tokens. Start from [`DpopConfig::default`] and change
/// what you need with the setters.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct DpopConfig {
    /// Refuse Bearer tokens altogether (only DPoP-bound tokens with proofs). Off: unbound
    /// tokens may come as Bearer; a bound token is refused as Bearer either way.
    pub required: bool,
    /// The proof signature algorithms accepted (`dpop_signing_alg_values_supported`).
    pub algorithms: Vec<Algorithm>,
    /// A proof's `iat` may be this old (and this far ahead, as leeway).
    pub max_age: Duration,
    /// Require server-issued nonces (`use_dpop_nonce`); they rotate every `max_age`.
    pub nonce: bool,
    /// Proof ids remembered to refuse replays; when full of live entries, proofs are refused
    /// with `503` until some expire.
    pub replay_capacity: usize,
}

impl Default for DpopConfig {
    fn default() -> Self {
        DpopConfig {
            required: false,
            algorithms: vec![Algorithm::ES256, Algorithm::RS256],
            max_age: Duration::from_secs(300),
            nonce: false,
            replay_capacity: 100_000,
        }
    }
}

impl DpopConfig {
    /// Sets [`required`](Self::required).
    #[must_use]
    pub fn required(mut self, required: bool) -> Self {
        self.required = required;
        self
    }

    /// Sets [`algorithms`](Self::algorithms).
    #[must_use]
    pub fn algorithms(mut self, algorithms: Vec<Algorithm>) -> Self {
        self.algorithms = algorithms;
        self
    }

    /// Sets [`max_age`](Self::max_age).
    #[must_use]
    pub fn max_age(mut self, max_age: Duration) -> Self {
        self.max_age = max_age;
        self
    }

    /// Sets [`nonce`](Self::nonce).
    #[must_use]
    pub fn nonce(mut self, nonce: bool) -> Self {
        self.nonce = nonce;
        self
    }

    /// Sets [`replay_capacity`](Self::replay_capacity).
    #[must_use]
    pub fn replay_capacity(mut self, capacity: usize) -> Self {
        self.replay_capacity = capacity;
        self
    }
}

/// Why an [`AuthConfig`] could not be built.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum AuthConfigError {
    /// A URL is not absolute, has a fragment, or uses plain `http` off loopback.
    #[error("{what}: {reason}")]
    Url {
        /// Which setting.
        what: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// Something else is missing or inconsistent.
    #[error("{0}")]
    Invalid(String),
}

/// The authorization settings of an MCP server acting as an OAuth 2.1 resource server.
/// Build one with [`AuthConfig::builder`]; put it in [`HttpConfig::auth`](crate::HttpConfig).
#[derive(Debug, Clone)]
pub struct AuthConfig {
    /// The resource identifier as configured (no trailing slash is added).
    pub(crate) resource: String,
    pub(crate) resource_url: Url,
    pub(crate) resource_metadata_url: String,
    pub(crate) issuers: Vec<String>,
    pub(crate) audiences: Vec<String>,
    pub(crate) scopes_supported: Vec<String>,
    pub(crate) required_scopes: Vec<String>,
    pub(crate) tool_scopes: BTreeMap<String, Vec<String>>,
    pub(crate) validation: TokenValidation,
    pub(crate) dpop: Option<DpopConfig>,
    pub(crate) max_document: usize,
    pub(crate) http: reqwest::Client,
    pub(crate) keep_tokens: bool,
}

impl AuthConfig {
    /// Settings for the resource identified by `resource`: the canonical URL of the MCP
    /// endpoint (e.g. `https://mcp.example.com/mcp`), published as the metadata's `resource`
    /// and, by default, the only accepted audience.
    pub fn builder(resource: impl Into<String>) -> AuthConfigBuilder {
        AuthConfigBuilder {
            resource: resource.into(),
            issuers: Vec::new(),
            audiences: Vec::new(),
            scopes_supported: Vec::new(),
            required_scopes: Vec::new(),
            tool_scopes: BTreeMap::new(),
            validation: TokenValidation::Jwt(JwtValidation::default()),
            dpop: None,
            fetch_timeout: Duration::from_secs(5),
            max_document: 1024 * 1024,
        }
    }

    /// The same settings, keeping (`true`) or not (the default) each verified access token in
    /// the request's [`Principal`](mcp_server::Principal) (`Principal::access_token`). Only for a
    /// server that must present the caller's token to another service on purpose: a gateway
    /// whose upstream takes the caller's own token (passthrough, audience checked) or exchanges
    /// it (RFC 8693). Anything else must not pass a client's token on.
    pub fn keep_tokens(mut self, keep: bool) -> Self {
        self.keep_tokens = keep;
        self
    }

    /// Whether verified access tokens are kept in the principal ([`AuthConfig::keep_tokens`]).
    pub fn keeps_tokens(&self) -> bool {
        self.keep_tokens
    }

    /// The resource identifier.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The URL of the Protected Resource Metadata, as `WWW-Authenticate` names it.
    pub fn resource_metadata_url(&self) -> &str {
        &self.resource_metadata_url
    }

    /// The accepted issuers (the metadata's `authorization_servers`).
    pub fn issuers(&self) -> &[String] {
        &self.issuers
    }

    /// The accepted audiences.
    pub fn audiences(&self) -> &[String] {
        &self.audiences
    }

    /// The scopes every request needs.
    pub fn required_scopes(&self) -> &[String] {
        &self.required_scopes
    }

    /// The scopes a `tools/call` of `tool` needs besides the required ones.
    pub fn tool_scopes(&self, tool: &str) -> &[String] {
        self.tool_scopes.get(tool).map(Vec::as_slice).unwrap_or(&[])
    }

    /// How tokens are validated.
    pub fn validation(&self) -> &TokenValidation {
        &self.validation
    }

    /// DPoP settings, when DPoP is accepted.
    pub fn dpop(&self) -> Option<&DpopConfig> {
        self.dpop.as_ref()
    }

    /// The path of the RFC 9728 path-based metadata URL (`/.well-known/oauth-protected-resource`
    /// followed by the resource's path).
    pub(crate) fn metadata_path(&self) -> String {
        metadata_path(&self.resource_url)
    }
}

fn metadata_path(resource: &Url) -> String {
    let path = resource.path().trim_end_matches('/');
    format!("{WELL_KNOWN}{path}")
}

/// The root of every Protected Resource Metadata URL.
pub(crate) const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// Builds an [`AuthConfig`].
#[derive(Debug, Clone)]
pub struct AuthConfigBuilder {
    resource: String,
    issuers: Vec<String>,
    audiences: Vec<String>,
    scopes_supported: Vec<String>,
    required_scopes: Vec<String>,
    tool_scopes: BTreeMap<String, Vec<String>>,
    validation: TokenValidation,
    dpop: Option<DpopConfig>,
    fetch_timeout: Duration,
    max_document: usize,
}

fn strings<I, S>(items: I) -> Vec<String>
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    items.into_iter().map(Into::into).collect()
}

impl AuthConfigBuilder {
    /// An authorization server (its issuer identifier) whose tokens are accepted; listed in
    /// the metadata's `authorization_servers`. Repeatable; at least one is required.
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuers.push(issuer.into());
        self
    }

    /// An accepted audience (`aud`). Repeatable; default: the resource identifier alone.
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audiences.push(audience.into());
        self
    }

    /// The metadata's `scopes_supported`.
    pub fn scopes_supported<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes_supported = strings(scopes);
        self
    }

    /// Scopes every request needs (named in `401` challenges; lacking them is `403`).
    pub fn required_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.required_scopes = strings(scopes);
        self
    }

    /// Scopes a `tools/call` of `tool` needs besides the required ones (`403`
    /// `insufficient_scope` naming them all otherwise).
    pub fn tool_scopes<I, S>(mut self, tool: impl Into<String>, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.tool_scopes.insert(tool.into(), strings(scopes));
        self
    }

    /// Validate JWT access tokens (the default, with [`JwtValidation::default`]).
    pub fn jwt(mut self, jwt: JwtValidation) -> Self {
        self.validation = TokenValidation::Jwt(jwt);
        self
    }

    /// Validate tokens by introspection.
    pub fn introspection(mut self, introspection: Introspection) -> Self {
        self.validation = TokenValidation::Introspection(introspection);
        self
    }

    /// Accept DPoP-bound tokens (RFC 9449).
    pub fn dpop(mut self, dpop: DpopConfig) -> Self {
        self.dpop = Some(dpop);
        self
    }

    /// Limits of every fetch from the authorization server (metadata, JWKS, introspection):
    /// time (default 5 s) and size (default 1 MiB).
    pub fn fetch_limits(mut self, timeout: Duration, max_bytes: usize) -> Self {
        self.fetch_timeout = timeout;
        self.max_document = max_bytes;
        self
    }

    /// Checks the settings.
    pub fn build(self) -> Result<AuthConfig, AuthConfigError> {
        let resource_url = Url::parse(&self.resource)
            .map_err(|e| AuthConfigError::Url { what: "resource", reason: e.to_string() })?;
        if resource_url.fragment().is_some()
            || resource_url.cannot_be_a_base()
            || resource_url.query().is_some()
        {
            return Err(AuthConfigError::Url {
                what: "resource",
                reason: "must be an absolute URL without query or fragment".to_owned(),
            });
        }
        fetchable("resource", &resource_url)?;
        if self.issuers.is_empty() {
            return Err(AuthConfigError::Invalid(
                "at least one issuer (authorization server) is required".into(),
            ));
        }
        for issuer in &self.issuers {
            let url = Url::parse(issuer)
                .map_err(|e| AuthConfigError::Url { what: "issuer", reason: e.to_string() })?;
            fetchable("issuer", &url)?;
        }
        let mut validation = self.validation;
        match &mut validation {
            TokenValidation::Jwt(jwt) => {
                if let Some(uri) = &jwt.jwks_uri {
                    let url = Url::parse(uri)
                        .map_err(|e| AuthConfigError::Url { what: "jwks_uri", reason: e.to_string() })?;
                    fetchable("jwks_uri", &url)?;
                }
                if jwt.algorithms.is_empty() {
                    return Err(AuthConfigError::Invalid("no token signature algorithm is allowed".into()));
                }
                jwt.leeway = jwt.leeway.min(MAX_LEEWAY);
            }
            TokenValidation::Introspection(i) => {
                let url = Url::parse(&i.endpoint).map_err(|e| AuthConfigError::Url {
                    what: "introspection endpoint",
                    reason: e.to_string(),
                })?;
                fetchable("introspection endpoint", &url)?;
                i.leeway = i.leeway.min(MAX_LEEWAY);
            }
        }
        let mut dpop = self.dpop;
        if let Some(d) = &mut dpop {
            if d.algorithms.is_empty() {
                return Err(AuthConfigError::Invalid("no DPoP proof algorithm is allowed".into()));
            }
            d.max_age = d.max_age.clamp(Duration::from_secs(1), Duration::from_secs(3600));
            d.replay_capacity = d.replay_capacity.max(1);
        }
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(self.fetch_timeout)
            .connect_timeout(self.fetch_timeout)
            .build()
            .map_err(|e| AuthConfigError::Invalid(format!("the HTTP client could not be created: {e}")))?;
        let origin = resource_url.origin().ascii_serialization();
        let resource_metadata_url = format!("{origin}{}", metadata_path(&resource_url));
        let audiences = if self.audiences.is_empty() { vec![self.resource.clone()] } else { self.audiences };
        Ok(AuthConfig {
            resource_metadata_url,
            issuers: self.issuers,
            audiences,
            scopes_supported: self.scopes_supported,
            required_scopes: self.required_scopes,
            tool_scopes: self.tool_scopes,
            validation,
            dpop,
            max_document: self.max_document,
            http,
            keep_tokens: false,
            resource: self.resource,
            resource_url,
        })
    }
}

/// Only `https`, or plain `http` to a loopback host (development).
pub(crate) fn fetchable(what: &'static str, url: &Url) -> Result<(), AuthConfigError> {
    match url.scheme() {
        "https" => Ok(()),
        "http" if is_loopback(url) => Ok(()),
        _ => Err(AuthConfigError::Url {
            what,
            reason: format!("{url} must use https (plain http only on loopback)"),
        }),
    }
}

pub(crate) fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_and_derives_the_metadata_url() {
        let config = AuthConfig::builder("https://mcp.example.com/mcp")
            .issuer("https://as.example.com")
            .build()
            .unwrap();
        assert_eq!(
            config.resource_metadata_url(),
            "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(config.audiences(), ["https://mcp.example.com/mcp"]);
        let root =
            AuthConfig::builder("https://mcp.example.com").issuer("https://as.example.com").build().unwrap();
        assert_eq!(
            root.resource_metadata_url(),
            "https://mcp.example.com/.well-known/oauth-protected-resource"
        );
    }

    #[test]
    fn refuses_bad_settings() {
        assert!(AuthConfig::builder("https://mcp.example.com/mcp").build().is_err(), "no issuer");
        assert!(AuthConfig::builder("mcp.example.com").issuer("https://as.example.com").build().is_err());
        assert!(
            AuthConfig::builder("https://mcp.example.com/mcp#x")
                .issuer("https://as.example.com")
                .build()
                .is_err()
        );
        assert!(
            AuthConfig::builder("https://mcp.example.com/mcp")
                .issuer("http://as.example.com")
                .build()
                .is_err(),
            "plain http off loopback"
        );
        assert!(AuthConfig::builder("http://127.0.0.1:1/mcp").issuer("http://127.0.0.1:2").build().is_ok());
        let mut jwt = JwtValidation::default();
        jwt.algorithms.clear();
        assert!(
            AuthConfig::builder("https://m.example").issuer("https://a.example").jwt(jwt).build().is_err()
        );
        let jwt = JwtValidation { leeway: Duration::from_secs(86_400), ..JwtValidation::default() };
        let config =
            AuthConfig::builder("https://m.example").issuer("https://a.example").jwt(jwt).build().unwrap();
        match config.validation() {
            TokenValidation::Jwt(jwt) => assert_eq!(jwt.leeway, MAX_LEEWAY),
            TokenValidation::Introspection(_) => unreachable!(),
        }
    }

    #[test]
    fn the_secret_is_not_printed() {
        let i = Introspection::new("https://as.example/introspect", "rs", "hunter2");
        assert!(!format!("{i:?}").contains("hunter2"));
    }
}
