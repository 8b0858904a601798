//! MCP authorization: the OAuth 2.1 client of the HTTP transports.
//!
//! An [`OAuthClient`] is an [`HttpAuth`](crate::transport::http::HttpAuth): give it to
//! [`HttpConfig::auth`](crate::transport::http::HttpConfig::auth) and every request carries its
//! access token; when the MCP server refuses one, it obtains a token and the request goes out
//! again.
//!
//! ```no_run
//! use std::sync::Arc;
//! use mcp_client::auth::{NoFollowPrompt, OAuthClient};
//! use mcp_client::transport::http::HttpConfig;
//! use mcp_client::ClientBuilder;
//!
//! async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//!     let oauth = OAuthClient::builder()
//!         .client_name("my-host")
//!         .redirect_uri("http://127.0.0.1:8976/callback")?
//!         .client_metadata_url("https://my-host.example/oauth/client.json")?
//!         .prompt(Arc::new(NoFollowPrompt::new()?))
//!         .build()?;
//!     let config = HttpConfig::new("https://mcp.example.com/mcp").auth(Arc::new(oauth));
//!     let client = ClientBuilder::new("my-host", "1.0.0").connect_http(config).await?;
//!     client.list_all_tools().await?;
//!     Ok(())
//! }
//! ```
//!
//! What happens on a refusal (`401`, or `403` with `insufficient_scope`):
//!
//! 1. **Protected resource metadata** (RFC 9728): the `resource_metadata` URL of the
//!    `WWW-Authenticate` challenge, else the path-based then the root well-known URL. Its
//!    `resource` must designate the MCP server (same origin, path prefix); otherwise nothing is
//!    requested from its authorization servers ([`AuthError::ResourceMismatch`]).
//! 2. **Authorization server metadata** (RFC 8414, OpenID Connect Discovery) at the well-known
//!    URLs in MCP's order; its `issuer` must be exactly the issuer it was looked up for.
//! 3. **A client id** at that authorization server: pre-registered credentials bound to it (or
//!    to no issuer in particular), else a Client ID Metadata Document URL when the server
//!    supports them, else a stored or new Dynamic Client Registration (RFC 7591, with
//!    `application_type`).
//! 4. **A token** by the configured [`Grant`]: authorization code with PKCE `S256`, `state`
//!    and the RFC 9207 `iss` check; client credentials; a JWT bearer assertion (RFC 7523); or
//!    enterprise-managed authorization (token exchange for an ID-JAG at the identity provider,
//!    then a JWT bearer grant). Every token request carries `resource` exactly as the
//!    protected resource metadata names it (RFC 8707), and authenticates the client as the
//!    authorization server supports (`client_secret_basic`, `client_secret_post`,
//!    `private_key_jwt`, or `none`). DPoP (RFC 9449) binds the token to a key when the
//!    authorization server supports it, with `use_dpop_nonce` retries at the token endpoint
//!    and at the MCP server.
//! 5. **Scopes**: the challenge's `scope`, else the metadata's `scopes_supported`, else none;
//!    `offline_access` only when the authorization server lists it. A `403 insufficient_scope`
//!    re-authorizes with the union of the scopes requested so far and the challenged ones.
//! 6. A `401` with a token re-reads the protected resource metadata: when it names another
//!    authorization server, everything obtained from the previous one is forgotten and the
//!    client registers anew; otherwise the refresh token is used, or the grant runs again.
//!
//! Metadata and token requests go through their own HTTP client: `https` only (plain `http`
//! on loopback), non-public addresses refused after resolution (except the MCP server's own
//! host), same-origin redirects only, answers of at most 1 MiB, metadata within 5 s. Tokens
//! only ever travel in the `Authorization` header, to the MCP server's origin; they are never
//! logged.

mod error;
mod exchange;
mod fetch;
mod oauth;
mod prompt;
mod store;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use mcp_auth::jose::{Algorithm, SigningKey};
use reqwest::Url;

pub use error::AuthError;
pub use exchange::TokenExchange;
pub use oauth::OAuthClient;
pub use prompt::{AuthorizationPrompt, NoFollowPrompt};
pub use store::{ClientRegistration, CredentialStore, MemoryStore, StoredTokens};

use crate::transport::BoxFuture;

/// How the client authenticates at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TokenAuthMethod {
    /// A public client: `client_id` in the request body.
    None,
    /// `Authorization: Basic` with the form-encoded client id and secret.
    ClientSecretBasic,
    /// `client_id` and `client_secret` in the request body.
    ClientSecretPost,
    /// A JWT signed with the client's private key (RFC 7523 §2.2).
    PrivateKeyJwt,
}

impl TokenAuthMethod {
    /// The registered name (`none`, `client_secret_basic`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            TokenAuthMethod::None => "none",
            TokenAuthMethod::ClientSecretBasic => "client_secret_basic",
            TokenAuthMethod::ClientSecretPost => "client_secret_post",
            TokenAuthMethod::PrivateKeyJwt => "private_key_jwt",
        }
    }

    /// The method named `name`, if it is one of these.
    pub fn parse(name: &str) -> Option<Self> {
        [
            TokenAuthMethod::None,
            TokenAuthMethod::ClientSecretBasic,
            TokenAuthMethod::ClientSecretPost,
            TokenAuthMethod::PrivateKeyJwt,
        ]
        .into_iter()
        .find(|m| m.as_str() == name)
    }
}

/// Client credentials obtained outside the protocol (pre-registration).
#[derive(Clone)]
pub struct PreRegistered {
    pub(crate) client_id: String,
    pub(crate) client_secret: Option<String>,
    pub(crate) method: Option<TokenAuthMethod>,
    pub(crate) issuer: Option<String>,
    pub(crate) key: Option<Arc<SigningKey>>,
}

impl PreRegistered {
    /// The client id, for a public client until a secret or key is added.
    pub fn new(client_id: impl Into<String>) -> Self {
        PreRegistered {
            client_id: client_id.into(),
            client_secret: None,
            method: None,
            issuer: None,
            key: None,
        }
    }

    /// The client secret.
    pub fn secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(secret.into());
        self
    }

    /// Binds the credentials to the authorization server with this issuer: they are never
    /// presented to another one. Without it they are used with whichever authorization server
    /// the MCP server names.
    pub fn issuer(mut self, issuer: impl Into<String>) -> Self {
        self.issuer = Some(issuer.into());
        self
    }

    /// Fixes the token endpoint authentication method (otherwise chosen from what the
    /// authorization server supports: `private_key_jwt` with a key, `client_secret_basic` or
    /// `client_secret_post` with a secret, `none` without either).
    pub fn method(mut self, method: TokenAuthMethod) -> Self {
        self.method = Some(method);
        self
    }

    /// The private key for `private_key_jwt`, as PEM (PKCS#8, SEC1 or PKCS#1); `alg` defaults
    /// from the key (`ES256` for P-256).
    pub fn private_key_pem(self, pem: &str, alg: Option<&str>) -> Result<Self, AuthError> {
        let alg = alg
            .map(|a| a.parse::<Algorithm>().map_err(|e| AuthError::Crypto(format!("algorithm {a:?}: {e}"))))
            .transpose()?;
        let key = SigningKey::from_pem(pem, alg).map_err(|e| AuthError::Crypto(e.to_string()))?;
        Ok(self.private_key(key))
    }

    /// The private key for `private_key_jwt`.
    pub fn private_key(mut self, key: SigningKey) -> Self {
        self.key = Some(Arc::new(key));
        self
    }
}

impl fmt::Debug for PreRegistered {
    /// The secret and the key are never printed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PreRegistered")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "<redacted>"))
            .field("method", &self.method)
            .field("issuer", &self.issuer)
            .field("key", &self.key.as_ref().map(|k| k.algorithm()))
            .finish()
    }
}

/// Supplies a signed JWT on demand: a workload identity token (RFC 7523 JWT bearer grant), or
/// the identity provider's ID token of enterprise-managed authorization. Called for every token
/// request, so a provider can read a rotated file or mint a fresh token.
pub trait AssertionProvider: Send + Sync + 'static {
    /// The JWT, for the authorization server (or identity provider) `audience`.
    fn assertion<'a>(&'a self, audience: &'a str) -> BoxFuture<'a, Result<String, AuthError>>;
}

/// An [`AssertionProvider`] that always returns the same JWT.
#[derive(Clone)]
pub struct StaticAssertion(String);

impl StaticAssertion {
    /// The provider of `jwt`.
    pub fn new(jwt: impl Into<String>) -> Self {
        StaticAssertion(jwt.into())
    }
}

impl fmt::Debug for StaticAssertion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StaticAssertion(<redacted>)")
    }
}

impl AssertionProvider for StaticAssertion {
    fn assertion<'a>(&'a self, _audience: &'a str) -> BoxFuture<'a, Result<String, AuthError>> {
        Box::pin(async move { Ok(self.0.clone()) })
    }
}

/// The enterprise identity provider of enterprise-managed authorization: where the user's ID
/// token is exchanged (RFC 8693) for an identity assertion authorization grant (ID-JAG) for the
/// MCP server's authorization server.
#[derive(Clone)]
pub struct EnterpriseIdp {
    pub(crate) token_endpoint: Url,
    pub(crate) client_id: String,
    pub(crate) client_secret: Option<String>,
    pub(crate) id_token: Arc<dyn AssertionProvider>,
}

impl EnterpriseIdp {
    /// The identity provider's token endpoint, this client's id there, and the source of the
    /// user's ID token.
    pub fn new(
        token_endpoint: &str,
        client_id: impl Into<String>,
        id_token: Arc<dyn AssertionProvider>,
    ) -> Result<Self, AuthError> {
        let token_endpoint = Url::parse(token_endpoint)
            .map_err(|e| AuthError::Config(format!("identity provider token endpoint: {e}")))?;
        Ok(EnterpriseIdp { token_endpoint, client_id: client_id.into(), client_secret: None, id_token })
    }

    /// The client secret at the identity provider (sent with `client_secret_basic`).
    pub fn client_secret(mut self, secret: impl Into<String>) -> Self {
        self.client_secret = Some(secret.into());
        self
    }
}

impl fmt::Debug for EnterpriseIdp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnterpriseIdp")
            .field("token_endpoint", &self.token_endpoint.as_str())
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

/// How tokens are obtained.
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum Grant {
    /// Authorization code with PKCE, through an [`AuthorizationPrompt`] (a user in a browser).
    /// Refresh tokens are used when issued.
    #[default]
    AuthorizationCode,
    /// Client credentials: the client acts on its own behalf (needs pre-registered credentials
    /// with a secret or a key).
    ClientCredentials,
    /// A JWT bearer assertion (RFC 7523 §2.1), e.g. a workload identity token.
    JwtBearer(Arc<dyn AssertionProvider>),
    /// Enterprise-managed authorization: token exchange at the identity provider, then a JWT
    /// bearer grant with the ID-JAG at the MCP server's authorization server.
    EnterpriseManaged(EnterpriseIdp),
}

impl fmt::Debug for Grant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Grant::AuthorizationCode => f.write_str("AuthorizationCode"),
            Grant::ClientCredentials => f.write_str("ClientCredentials"),
            Grant::JwtBearer(_) => f.write_str("JwtBearer"),
            Grant::EnterpriseManaged(idp) => f.debug_tuple("EnterpriseManaged").field(idp).finish(),
        }
    }
}

/// When tokens are bound to a key with DPoP (RFC 9449).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum DpopPolicy {
    /// Never: bearer tokens only.
    Never,
    /// When the authorization server lists `ES256` in `dpop_signing_alg_values_supported`.
    #[default]
    WhenSupported,
    /// Always (an authorization server without DPoP support then issues bearer tokens, which
    /// are used as such).
    Always,
}

/// Builds an [`OAuthClient`].
#[derive(Clone)]
pub struct OAuthClientBuilder {
    pub(crate) client_name: String,
    pub(crate) redirect_uri: Option<Url>,
    pub(crate) client_metadata_url: Option<String>,
    pub(crate) pre_registered: Option<PreRegistered>,
    pub(crate) grant: Grant,
    pub(crate) store: Option<Arc<dyn CredentialStore>>,
    pub(crate) prompt: Option<Arc<dyn AuthorizationPrompt>>,
    pub(crate) offline_access: bool,
    pub(crate) dpop: DpopPolicy,
    pub(crate) application_type: Option<String>,
    pub(crate) allow_private_networks: bool,
    pub(crate) metadata_timeout: Duration,
}

impl fmt::Debug for OAuthClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthClientBuilder")
            .field("client_name", &self.client_name)
            .field("redirect_uri", &self.redirect_uri.as_ref().map(Url::as_str))
            .field("client_metadata_url", &self.client_metadata_url)
            .field("pre_registered", &self.pre_registered)
            .field("grant", &self.grant)
            .field("store", &self.store.is_some())
            .field("prompt", &self.prompt.is_some())
            .field("offline_access", &self.offline_access)
            .field("dpop", &self.dpop)
            .field("application_type", &self.application_type)
            .field("allow_private_networks", &self.allow_private_networks)
            .field("metadata_timeout", &self.metadata_timeout)
            .finish()
    }
}

impl Default for OAuthClientBuilder {
    fn default() -> Self {
        OAuthClientBuilder {
            client_name: "mcpkit client".into(),
            redirect_uri: None,
            client_metadata_url: None,
            pre_registered: None,
            grant: Grant::AuthorizationCode,
            store: None,
            prompt: None,
            offline_access: true,
            dpop: DpopPolicy::WhenSupported,
            application_type: None,
            allow_private_networks: false,
            metadata_timeout: Duration::from_secs(5),
        }
    }
}

impl OAuthClientBuilder {
    /// The `client_name` of dynamic registrations (default `mcpkit client`).
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// The redirect URI of the authorization code grant (where the [`AuthorizationPrompt`]
    /// receives the authorization response): `http` on loopback (`localhost`, `127.0.0.1`,
    /// `[::1]`) for native clients, or `https`, as MCP requires; no fragment.
    pub fn redirect_uri(mut self, uri: &str) -> Result<Self, AuthError> {
        let url = Url::parse(uri).map_err(|e| AuthError::Config(format!("redirect URI {uri:?}: {e}")))?;
        let loopback = url.host_str().is_some_and(fetch::is_loopback_host);
        if !(url.scheme() == "https" || (url.scheme() == "http" && loopback)) {
            return Err(AuthError::Config(format!("redirect URI {uri:?}: neither https nor loopback http")));
        }
        if url.fragment().is_some() {
            return Err(AuthError::Config("a redirect URI must not have a fragment".into()));
        }
        self.redirect_uri = Some(url);
        Ok(self)
    }

    /// The URL of this client's Client ID Metadata Document: used as the client id at
    /// authorization servers that advertise `client_id_metadata_document_supported`. It must
    /// be `https` with a path. The document itself (with exactly this `client_id`, the
    /// `client_name` and the redirect URIs) is hosted by the application.
    pub fn client_metadata_url(mut self, url: &str) -> Result<Self, AuthError> {
        let parsed =
            Url::parse(url).map_err(|e| AuthError::Config(format!("client metadata URL {url:?}: {e}")))?;
        if parsed.scheme() != "https"
            || parsed.path().trim_matches('/').is_empty()
            || parsed.fragment().is_some()
        {
            return Err(AuthError::Config(format!(
                "client metadata URL {url:?}: must be https, with a path and no fragment"
            )));
        }
        self.client_metadata_url = Some(url.to_owned());
        Ok(self)
    }

    /// Pre-registered client credentials (used before any other registration mechanism, with
    /// the authorization server they are bound to).
    pub fn pre_registered(mut self, credentials: PreRegistered) -> Self {
        self.pre_registered = Some(credentials);
        self
    }

    /// How tokens are obtained (default: [`Grant::AuthorizationCode`]).
    pub fn grant(mut self, grant: Grant) -> Self {
        self.grant = grant;
        self
    }

    /// Where registrations and tokens are kept (default: a [`MemoryStore`]).
    pub fn store(mut self, store: Arc<impl CredentialStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// The user-agent step of the authorization code grant.
    pub fn prompt(mut self, prompt: Arc<impl AuthorizationPrompt>) -> Self {
        self.prompt = Some(prompt);
        self
    }

    /// Whether to ask for `offline_access` (a refresh token) when the authorization server
    /// lists it in `scopes_supported` (default true; authorization code grant only).
    pub fn offline_access(mut self, enabled: bool) -> Self {
        self.offline_access = enabled;
        self
    }

    /// When to bind tokens to a key with DPoP (default: when the authorization server supports
    /// it).
    pub fn dpop(mut self, policy: DpopPolicy) -> Self {
        self.dpop = policy;
        self
    }

    /// The `application_type` of dynamic registrations (default: `native` for a loopback or
    /// custom-scheme redirect URI, `web` otherwise).
    pub fn application_type(mut self, kind: impl Into<String>) -> Self {
        self.application_type = Some(kind.into());
        self
    }

    /// Allows metadata and token requests to private network addresses (an authorization
    /// server on an intranet). Default: refused, except the MCP server's own host.
    pub fn allow_private_networks(mut self, allow: bool) -> Self {
        self.allow_private_networks = allow;
        self
    }

    /// How long one metadata fetch may take (default 5 s).
    pub fn metadata_timeout(mut self, timeout: Duration) -> Self {
        self.metadata_timeout = timeout;
        self
    }

    /// The client. Fails when the configuration cannot work: the authorization code grant
    /// without a redirect URI or a prompt, client credentials or enterprise-managed
    /// authorization without pre-registered credentials.
    pub fn build(self) -> Result<OAuthClient, AuthError> {
        match &self.grant {
            Grant::AuthorizationCode => {
                if self.redirect_uri.is_none() {
                    return Err(AuthError::Config(
                        "the authorization code grant needs a redirect URI".into(),
                    ));
                }
                if self.prompt.is_none() {
                    return Err(AuthError::Config("the authorization code grant needs a prompt".into()));
                }
            }
            Grant::ClientCredentials => {
                let usable = self
                    .pre_registered
                    .as_ref()
                    .is_some_and(|p| p.client_secret.is_some() || p.key.is_some());
                if !usable {
                    return Err(AuthError::Config(
                        "client credentials need pre-registered credentials with a secret or a key".into(),
                    ));
                }
            }
            Grant::EnterpriseManaged(_) if self.pre_registered.is_none() => {
                return Err(AuthError::Config(
                    "enterprise-managed authorization needs pre-registered client credentials".into(),
                ));
            }
            _ => {}
        }
        OAuthClient::from_builder(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P256_PKCS8: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgz6NSIbsEAFMq+R/4
S6ROK7226NrvuJBuXkrbdiMemXChRANCAAStpnfi3NDE1EtLpz3xaeN3MBTiA1d9
rHhyd7WRJaftMYUAdHuaE5P+NrAMZmQGZp6Y2rlEy+naYpcxvOVUgYq1
-----END PRIVATE KEY-----
";

    #[test]
    fn pre_registered_keys_come_from_pem_with_a_fitting_algorithm() {
        let credentials = PreRegistered::new("c").private_key_pem(P256_PKCS8, Some("ES256")).unwrap();
        assert_eq!(credentials.key.as_ref().unwrap().algorithm(), Algorithm::ES256);
        let defaulted = PreRegistered::new("c").private_key_pem(P256_PKCS8, None).unwrap();
        assert_eq!(defaulted.key.as_ref().unwrap().algorithm(), Algorithm::ES256);
        assert!(PreRegistered::new("c").private_key_pem(P256_PKCS8, Some("RS256")).is_err());
        assert!(PreRegistered::new("c").private_key_pem(P256_PKCS8, Some("none")).is_err());
        assert!(PreRegistered::new("c").private_key_pem("not a key", None).is_err());
        let printed = format!("{:?}", PreRegistered::new("c").secret("top-secret"));
        assert!(!printed.contains("top-secret"), "{printed}");
    }

    #[test]
    fn builder_refuses_configurations_that_cannot_work() {
        assert!(OAuthClient::builder().build().is_err(), "authorization code without redirect URI");
        let no_prompt = OAuthClient::builder().redirect_uri("http://127.0.0.1:1/cb").unwrap();
        assert!(no_prompt.build().is_err());
        assert!(OAuthClient::builder().grant(Grant::ClientCredentials).build().is_err());
        let public =
            OAuthClient::builder().grant(Grant::ClientCredentials).pre_registered(PreRegistered::new("c"));
        assert!(public.build().is_err(), "client credentials need a secret or a key");
        let ok = OAuthClient::builder()
            .grant(Grant::ClientCredentials)
            .pre_registered(PreRegistered::new("c").secret("s"))
            .build();
        assert!(ok.is_ok());
        assert!(OAuthClient::builder().redirect_uri("http://127.0.0.1:1/cb#frag").is_err());
        assert!(OAuthClient::builder().redirect_uri("http://app.example/cb").is_err());
        assert!(OAuthClient::builder().redirect_uri("myapp://cb").is_err());
        assert!(OAuthClient::builder().redirect_uri("https://app.example/cb").is_ok());
        assert!(OAuthClient::builder().redirect_uri("http://localhost:8080/cb").is_ok());
        assert!(OAuthClient::builder().client_metadata_url("https://app.example/client.json").is_ok());
        for bad in ["http://app.example/client.json", "https://app.example", "https://app.example/", "nope"] {
            assert!(OAuthClient::builder().client_metadata_url(bad).is_err(), "{bad}");
        }
    }
}
