//! Why authorization failed.

/// Why the authorization layer could not supply or renew credentials. Messages never contain
/// tokens, secrets, codes or verifiers.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// Protected resource metadata or authorization server metadata could not be found,
    /// fetched or used (missing fields, no PKCE S256, an unacceptable URL).
    #[error("discovery failed: {0}")]
    Discovery(String),
    /// The protected resource metadata names another resource than the MCP server: nothing
    /// is requested from its authorization servers.
    #[error("the protected resource metadata is for {found:?}, not for the MCP server {expected:?}")]
    ResourceMismatch {
        /// The MCP server's URL.
        expected: String,
        /// The metadata's `resource`.
        found: String,
    },
    /// Authorization server metadata whose `issuer` is not the issuer it was looked up for.
    #[error("the authorization server metadata names issuer {found:?}, expected {expected:?}")]
    IssuerMismatch {
        /// The issuer the well-known URL was built from.
        expected: String,
        /// The `issuer` of the document.
        found: String,
    },
    /// No way to obtain a client id at this authorization server (no pre-registered
    /// credentials for it, no Client ID Metadata Document support, no registration endpoint),
    /// or the registration failed.
    #[error("client registration failed: {0}")]
    Registration(String),
    /// The authorization response was refused: its `iss` or `state` is wrong, its `code` is
    /// missing, or the authorization server reported an error (`access_denied`, ...).
    #[error("authorization response rejected: {0}")]
    AuthorizationResponse(String),
    /// The token endpoint answered with an OAuth error (`invalid_grant`, `invalid_client`, ...).
    #[error("the token endpoint refused: {error}{}", description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    Token {
        /// The OAuth `error` code (or the HTTP status when there is none).
        error: String,
        /// Its `error_description`, if any.
        description: Option<String>,
    },
    /// The user-agent step (browser, redirect) failed or was abandoned.
    #[error("the authorization prompt failed: {0}")]
    Prompt(String),
    /// A request to an authorization server or to a metadata document failed (network,
    /// timeout, size limit, refused address, unexpected answer).
    #[error("HTTP exchange failed: {0}")]
    Http(String),
    /// The credential store failed.
    #[error("credential store: {0}")]
    Store(String),
    /// Signing, key loading or another cryptographic step failed.
    #[error("crypto: {0}")]
    Crypto(String),
    /// The configuration cannot work (no redirect URI for the authorization code grant, ...).
    #[error("configuration: {0}")]
    Config(String),
    /// The server kept refusing: the scopes it asks for were granted and it still refuses, or
    /// the retry limit was reached.
    #[error("authorization refused: {0}")]
    Refused(String),
}
