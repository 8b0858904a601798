//! Discovery documents and the URLs to find them at: protected resource metadata (RFC 9728),
//! authorization server metadata (RFC 8414) and OpenID Connect Discovery 1.0, plus the resource
//! identifier rules of RFC 8707 and MCP.
//!
//! URL-valued members are plain strings: identifiers such as `resource` and `issuer` are
//! compared byte for byte and must be sent back exactly as received.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
pub use url::Url;

/// OAuth 2.0 Protected Resource Metadata (RFC 9728 §2), as served by an MCP server.
///
/// Unknown members are kept in [`extra`](Self::extra); absent members are left out when
/// serializing.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProtectedResourceMetadata {
    /// The resource identifier (required).
    pub resource: String,
    /// Issuer identifiers of the authorization servers that can be used with this resource.
    /// MCP requires at least one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_servers: Option<Vec<String>>,
    /// URL of the resource's JWK set (for signed responses; not the AS's keys).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks_uri: Option<String>,
    /// Scopes used in authorization requests to access this resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// How bearer tokens may be presented: `header`, `body`, `query`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_methods_supported: Option<Vec<String>>,
    /// JWS algorithms the resource signs responses with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_signing_alg_values_supported: Option<Vec<String>>,
    /// Human-readable name of the resource.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_name: Option<String>,
    /// URL of developer documentation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_documentation: Option<String>,
    /// URL of the resource's policy on data use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_policy_uri: Option<String>,
    /// URL of the resource's terms of service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_tos_uri: Option<String>,
    /// Whether the resource supports mutual-TLS certificate-bound access tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls_client_certificate_bound_access_tokens: Option<bool>,
    /// Supported `authorization_details` types (RFC 9396).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_details_types_supported: Option<Vec<String>>,
    /// JWS algorithms accepted in DPoP proofs (RFC 9449).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
    /// Whether the resource always requires DPoP-bound access tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_bound_access_tokens_required: Option<bool>,
    /// A JWT with signed metadata values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signed_metadata: Option<String>,
    /// Every other member.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// OAuth 2.0 Authorization Server Metadata (RFC 8414 §2) with the OpenID Connect Discovery and
/// extension members MCP clients use.
///
/// Unknown members are kept in [`extra`](Self::extra). Members RFC 8414 calls required
/// (`response_types_supported`, the endpoints) are optional here so that a document can be read
/// and then judged by the caller.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AuthorizationServerMetadata {
    /// The issuer identifier. Must equal the issuer the well-known URL was built from
    /// ([`AuthorizationServerMetadata::issuer_matches`]).
    pub issuer: String,
    /// Authorization endpoint URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_endpoint: Option<String>,
    /// Token endpoint URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint: Option<String>,
    /// Dynamic client registration endpoint URL (RFC 7591).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration_endpoint: Option<String>,
    /// URL of the AS's JWK set (keys that sign access tokens and ID tokens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks_uri: Option<String>,
    /// Supported scopes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes_supported: Option<Vec<String>>,
    /// Supported `response_type` values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_types_supported: Option<Vec<String>>,
    /// Supported `response_mode` values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_modes_supported: Option<Vec<String>>,
    /// Supported grant types.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_types_supported: Option<Vec<String>>,
    /// Client authentication methods at the token endpoint (`client_secret_basic`,
    /// `client_secret_post`, `none`, `private_key_jwt`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// JWS algorithms for `private_key_jwt` / `client_secret_jwt` at the token endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_signing_alg_values_supported: Option<Vec<String>>,
    /// URL of developer documentation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_documentation: Option<String>,
    /// Revocation endpoint URL (RFC 7009).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revocation_endpoint: Option<String>,
    /// Client authentication methods at the revocation endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revocation_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// Introspection endpoint URL (RFC 7662).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub introspection_endpoint: Option<String>,
    /// Client authentication methods at the introspection endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub introspection_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// PKCE methods. Absent means no PKCE support, and MCP clients must then refuse to proceed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_challenge_methods_supported: Option<Vec<String>>,
    /// Whether the AS accepts URL client ids backed by Client ID Metadata Documents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id_metadata_document_supported: Option<bool>,
    /// Whether authorization responses carry `iss` (RFC 9207).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_response_iss_parameter_supported: Option<bool>,
    /// JWS algorithms accepted in DPoP proofs (RFC 9449).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_signing_alg_values_supported: Option<Vec<String>>,
    /// Pushed authorization request endpoint (RFC 9126).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pushed_authorization_request_endpoint: Option<String>,
    /// Whether the AS only accepts pushed authorization requests (RFC 9126).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub require_pushed_authorization_requests: Option<bool>,
    /// Device authorization endpoint (RFC 8628).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_authorization_endpoint: Option<String>,
    /// OpenID Connect UserInfo endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub userinfo_endpoint: Option<String>,
    /// OpenID Connect subject identifier types.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject_types_supported: Option<Vec<String>>,
    /// OpenID Connect ID token signing algorithms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_token_signing_alg_values_supported: Option<Vec<String>>,
    /// Every other member.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl AuthorizationServerMetadata {
    /// Whether `issuer` is exactly (byte for byte) the issuer the document was looked up for.
    /// A document that fails this must not be used (RFC 8414 §3.3).
    pub fn issuer_matches(&self, expected_issuer: &str) -> bool {
        self.issuer == expected_issuer
    }

    /// Whether `code_challenge_methods_supported` lists `S256`. MCP clients must refuse an AS
    /// for which this is false.
    pub fn supports_pkce_s256(&self) -> bool {
        self.code_challenge_methods_supported.as_ref().is_some_and(|m| m.iter().any(|m| m == "S256"))
    }

    /// Whether `scopes_supported` lists `scope` (e.g. `offline_access`).
    pub fn supports_scope(&self, scope: &str) -> bool {
        self.scopes_supported.as_ref().is_some_and(|s| s.iter().any(|s| s == scope))
    }

    /// Whether `token_endpoint_auth_methods_supported` lists `method`. An absent list means
    /// `client_secret_basic` only (RFC 8414 §2).
    pub fn supports_token_auth_method(&self, method: &str) -> bool {
        match &self.token_endpoint_auth_methods_supported {
            Some(methods) => methods.iter().any(|m| m == method),
            None => method == "client_secret_basic",
        }
    }
}

/// The well-known suffix of protected resource metadata (RFC 9728 §3).
pub const PROTECTED_RESOURCE_WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";
/// The well-known suffix of authorization server metadata (RFC 8414 §3).
pub const AUTHORIZATION_SERVER_WELL_KNOWN: &str = "/.well-known/oauth-authorization-server";
/// The well-known suffix of OpenID Connect Discovery.
pub const OPENID_CONFIGURATION_WELL_KNOWN: &str = "/.well-known/openid-configuration";

/// `url` reduced to its origin (scheme, host, port), with `path` and no query or fragment.
fn at_origin(url: &Url, path: &str) -> Url {
    let mut out = url.clone();
    // Credentials never belong in a discovery URL. Both setters only fail for URLs that cannot
    // have credentials, which then have none.
    let _ = out.set_username("");
    let _ = out.set_password(None);
    out.set_path(path);
    out.set_query(None);
    out.set_fragment(None);
    out
}

/// The path of `url` without trailing slashes; empty for the root.
fn trimmed_path(url: &Url) -> &str {
    url.path().trim_end_matches('/')
}

/// Where to look for the protected resource metadata of the resource at `resource` when the
/// `WWW-Authenticate` challenge gave no `resource_metadata` URL, in the order MCP requires:
///
/// 1. when the URL has a path (or a query), the path-based URL:
///    `https://host/.well-known/oauth-protected-resource/<path>` (RFC 9728 §3.1; a trailing
///    slash is dropped, the query kept, the fragment dropped);
/// 2. the root URL: `https://host/.well-known/oauth-protected-resource`.
pub fn protected_resource_metadata_urls(resource: &Url) -> Vec<Url> {
    let mut urls = Vec::with_capacity(2);
    let path = trimmed_path(resource);
    if !path.is_empty() || resource.query().is_some() {
        let mut url = at_origin(resource, &format!("{PROTECTED_RESOURCE_WELL_KNOWN}{path}"));
        url.set_query(resource.query());
        urls.push(url);
    }
    urls.push(at_origin(resource, PROTECTED_RESOURCE_WELL_KNOWN));
    urls
}

/// Where to look for the metadata of the authorization server with issuer identifier `issuer`,
/// in the order MCP requires (RFC 8414 §3.1 and §5):
///
/// * issuer without a path: `/.well-known/oauth-authorization-server`, then
///   `/.well-known/openid-configuration`;
/// * issuer with the path `/p`: `/.well-known/oauth-authorization-server/p`,
///   `/.well-known/openid-configuration/p`, `/p/.well-known/openid-configuration`, and never a
///   root URL.
///
/// A trailing slash of the issuer's path is dropped; a query or fragment (which an issuer must
/// not have) is ignored. The document found must then pass
/// [`AuthorizationServerMetadata::issuer_matches`] with the issuer string this came from.
pub fn authorization_server_metadata_urls(issuer: &Url) -> Vec<Url> {
    let path = trimmed_path(issuer);
    if path.is_empty() {
        vec![
            at_origin(issuer, AUTHORIZATION_SERVER_WELL_KNOWN),
            at_origin(issuer, OPENID_CONFIGURATION_WELL_KNOWN),
        ]
    } else {
        vec![
            at_origin(issuer, &format!("{AUTHORIZATION_SERVER_WELL_KNOWN}{path}")),
            at_origin(issuer, &format!("{OPENID_CONFIGURATION_WELL_KNOWN}{path}")),
            at_origin(issuer, &format!("{path}{OPENID_CONFIGURATION_WELL_KNOWN}")),
        ]
    }
}

/// Whether protected resource metadata whose `resource` is `prm_resource` may be used for the
/// MCP server at `server_url`.
///
/// The `resource` must be an absolute URL without a fragment or credentials, with the same
/// origin as `server_url` (scheme and host compared case-insensitively, default ports
/// normalized), and its path must be a prefix of the server URL's path on a segment boundary:
/// `https://h` and `https://h/api` cover `https://h/api/mcp`, `https://h/ap` does not. When the
/// `resource` has a query, the server URL must have the same query. This is RFC 9728 §3.3 with
/// the same-origin, path-prefix relaxation MCP clients rely on (a server whose metadata names
/// its base URL rather than its `/mcp` endpoint is accepted; a foreign origin never is).
pub fn resource_matches(prm_resource: &str, server_url: &Url) -> bool {
    let Ok(resource) = Url::parse(prm_resource) else { return false };
    if resource.fragment().is_some() || !resource.username().is_empty() || resource.password().is_some() {
        return false;
    }
    if resource.cannot_be_a_base() || server_url.cannot_be_a_base() {
        return false;
    }
    if resource.scheme() != server_url.scheme()
        || !hosts_equal(&resource, server_url)
        || resource.port_or_known_default() != server_url.port_or_known_default()
    {
        return false;
    }
    if let Some(query) = resource.query() {
        if server_url.query() != Some(query) {
            return false;
        }
    }
    let prefix = trimmed_path(&resource);
    let path = server_url.path();
    match path.strip_prefix(prefix) {
        Some(rest) => rest.is_empty() || rest.starts_with('/'),
        None => false,
    }
}

fn hosts_equal(a: &Url, b: &Url) -> bool {
    match (a.host_str(), b.host_str()) {
        (Some(x), Some(y)) => x.eq_ignore_ascii_case(y),
        (None, None) => true,
        _ => false,
    }
}

/// The canonical resource identifier of `url` (RFC 8707 §2, MCP "Canonical Server URI"):
/// lowercase scheme and host, no credentials, no fragment, default port dropped, and the path
/// and query kept exactly; a bare `/` path (with no query) is dropped, so `https://mcp.example.com/`
/// gives `https://mcp.example.com`.
///
/// When the server's protected resource metadata names a `resource`, send that string
/// byte-exact instead.
pub fn canonical_resource(url: &Url) -> String {
    let mut out = String::with_capacity(url.as_str().len());
    out.push_str(&url.scheme().to_ascii_lowercase());
    out.push(':');
    if let Some(host) = url.host_str() {
        out.push_str("//");
        out.push_str(&host.to_ascii_lowercase());
        if let Some(port) = url.port() {
            out.push(':');
            out.push_str(&port.to_string());
        }
    } else if url.as_str()[url.scheme().len() + 1..].starts_with("//") {
        out.push_str("//");
    }
    let path = url.path();
    if !(path == "/" && url.query().is_none()) {
        out.push_str(path);
    }
    if let Some(query) = url.query() {
        out.push('?');
        out.push_str(query);
    }
    out
}

#[cfg(test)]
mod tests;
