//! Authorization: the MCP server as an OAuth 2.1 resource server.
//!
//! Every MCP request (the endpoint's POST/GET/DELETE, the HTTP+SSE `/sse` and `/messages`)
//! carries an access token in the `Authorization` header, checked after the Host, Origin and
//! method checks and before anything else (docs/DECISIONS.md): no body is read and no JSON-RPC is
//! parsed for an unauthenticated caller. A token must be meant for this resource (`aud`), come
//! from a configured issuer, be within its validity (bounded leeway) and carry the required
//! scopes; JWTs are verified against the issuer's keys with pinned algorithms, opaque tokens
//! are introspected (RFC 7662). DPoP-bound tokens (RFC 9449) need a proof bound to the
//! request and to the token's key. The refusals:
//!
//! | situation | status | `WWW-Authenticate` |
//! |---|---|---|
//! | no token (or an unsupported scheme) | 401 | `Bearer resource_metadata=…, scope=…` (+ `DPoP algs=…`) |
//! | token in the query string, several `Authorization` headers, header over 8 KiB | 401 | `error="invalid_request"` |
//! | bad token: signature, `alg`, key, issuer, audience, time, inactive, malformed | 401 | `error="invalid_token"` |
//! | DPoP-bound token presented as Bearer | 401 | `Bearer error="invalid_token"` + `DPoP algs=…` |
//! | bad or replayed DPoP proof | 401 | `DPoP error="invalid_dpop_proof"` |
//! | missing or stale server nonce (when required) | 401 | `DPoP error="use_dpop_nonce"` + `DPoP-Nonce` |
//! | a required scope is missing (every request, or the called tool's) | 403 | `error="insufficient_scope", scope=…` |
//! | the authorization server cannot be reached (no keys, no introspection) | 503 | — (`Retry-After`) |
//!
//! The principal (issuer, subject, client id, scopes, claims — never the token) reaches
//! handlers through [`mcp_server::Principal`]. Tokens are never logged, stored or passed on.

mod config;
mod dpop;
mod fetch;
mod introspection;
mod jwks;
mod metadata;

use std::sync::Arc;

use axum::response::{IntoResponse, Response};
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use mcp_auth::challenge::{bearer_challenge, dpop_challenge};
use mcp_auth::jose::{self, JoseError, Validation};
use mcp_server::Principal;
use mcp_types::{JsonObject, JsonValue};

pub(crate) use crate::caller::{Authenticated, Scheme};

pub use config::{
    AuthConfig, AuthConfigBuilder, AuthConfigError, DpopConfig, Introspection, JwtValidation, MAX_LEEWAY,
    TokenValidation,
};
pub(crate) use metadata::{paths as metadata_paths, routes as metadata_routes};

use fetch::Fetcher;
use introspection::Introspector;
use jwks::{KeySource, KeyStore};

/// The longest access token accepted (docs/DECISIONS.md: 8 KiB).
pub(crate) const MAX_TOKEN: usize = 8 * 1024;

/// Why a token was refused by its validator.
#[derive(Debug, Clone)]
pub(crate) enum TokenError {
    /// The token is not acceptable (the text is safe to show: it never contains the token).
    Invalid(String),
    /// The authorization server could not be asked.
    Unavailable(&'static str),
}

/// Why a request is refused.
#[derive(Debug, Clone)]
pub(crate) enum Denial {
    /// No credentials (or an unsupported scheme): a plain challenge.
    Missing,
    /// The request carries credentials the wrong way.
    InvalidRequest(&'static str),
    /// The token is not acceptable.
    InvalidToken(Scheme, String),
    /// The DPoP proof is not acceptable.
    InvalidProof(String),
    /// A server nonce is required in the proof.
    UseNonce,
    /// The token lacks scopes: all those the operation needs.
    InsufficientScope(Scheme, Vec<String>),
    /// Validation could not be done now.
    Unavailable(&'static str),
    /// The DPoP replay cache is full.
    Busy,
}

enum Verifier {
    /// One key store per issuer (shared when a `jwks_uri` is configured).
    Jwt {
        stores: Vec<(String, Arc<KeyStore>)>,
        validation: JwtValidation,
    },
    Introspection(Introspector),
}

/// The runtime of an [`AuthConfig`]: key caches, the introspection client, DPoP state.
pub(crate) struct Authenticator {
    pub(crate) config: AuthConfig,
    verifier: Verifier,
    dpop: Option<dpop::DpopState>,
}

impl Authenticator {
    pub(crate) fn new(config: AuthConfig) -> Self {
        let fetcher = Fetcher::new(&config);
        let verifier = match &config.validation {
            TokenValidation::Jwt(jwt) => {
                let store = |source| {
                    Arc::new(KeyStore::new(
                        source,
                        fetcher.clone(),
                        jwt.jwks_max_age,
                        jwt.jwks_refetch_interval,
                    ))
                };
                let stores = match &jwt.jwks_uri {
                    Some(uri) => {
                        let shared = store(KeySource::Uri(uri.clone()));
                        config.issuers.iter().map(|i| (i.clone(), shared.clone())).collect()
                    }
                    None => config
                        .issuers
                        .iter()
                        .map(|i| (i.clone(), store(KeySource::Discover(i.clone()))))
                        .collect(),
                };
                Verifier::Jwt { stores, validation: jwt.clone() }
            }
            TokenValidation::Introspection(i) => Verifier::Introspection(Introspector::new(
                i.clone(),
                config.issuers.clone(),
                config.audiences.clone(),
                fetcher.clone(),
            )),
        };
        let dpop = config.dpop.clone().map(dpop::DpopState::new);
        Authenticator { config, verifier, dpop }
    }

    /// Authenticates a request from its method, path, query and headers alone.
    pub(crate) async fn authenticate(
        &self,
        method: &Method,
        path: &str,
        query: Option<&str>,
        headers: &HeaderMap,
    ) -> Result<Authenticated, Denial> {
        if query.is_some_and(has_access_token) {
            return Err(Denial::InvalidRequest("access tokens are not accepted in the query string"));
        }
        let mut values = headers.get_all(header::AUTHORIZATION).iter();
        let Some(value) = values.next() else { return Err(Denial::Missing) };
        if values.next().is_some() {
            return Err(Denial::InvalidRequest("more than one Authorization header"));
        }
        if value.len() > MAX_TOKEN + 16 {
            return Err(Denial::InvalidRequest("the Authorization header is too large"));
        }
        let value =
            value.to_str().map_err(|_| Denial::InvalidRequest("the Authorization header is not ASCII"))?;
        let (scheme, token) = value.split_once(' ').unwrap_or((value, ""));
        let token = token.trim_start_matches(' ');
        let scheme = if scheme.eq_ignore_ascii_case("bearer") {
            Scheme::Bearer
        } else if scheme.eq_ignore_ascii_case("dpop") && self.dpop.is_some() {
            Scheme::Dpop
        } else {
            // RFC 6750 §3.1: an unsupported scheme is answered like a request without one.
            return Err(Denial::Missing);
        };
        if !is_b64token(token) {
            return Err(Denial::InvalidToken(scheme, "the token is malformed".into()));
        }
        if scheme == Scheme::Bearer && self.dpop.as_ref().is_some_and(|d| d.config.required) {
            return Err(Denial::InvalidToken(scheme, "only DPoP-bound tokens are accepted".into()));
        }
        let claims = match self.validate(token).await {
            Ok(claims) => claims,
            Err(TokenError::Invalid(why)) => return Err(Denial::InvalidToken(scheme, why)),
            Err(TokenError::Unavailable(why)) => return Err(Denial::Unavailable(why)),
        };
        let jkt = match claims.get("cnf").and_then(|c| c.get("jkt")) {
            None => None,
            Some(JsonValue::String(jkt)) => Some(jkt.clone()),
            Some(_) => {
                return Err(Denial::InvalidToken(scheme, "the token's cnf.jkt is not a string".into()));
            }
        };
        match (scheme, &jkt, &self.dpop) {
            (Scheme::Bearer, Some(_), _) => {
                return Err(Denial::InvalidToken(
                    scheme,
                    "the token is DPoP-bound: present it with the DPoP scheme and a proof".into(),
                ));
            }
            (Scheme::Dpop, None, _) => {
                return Err(Denial::InvalidToken(scheme, "the token is not DPoP-bound".into()));
            }
            (Scheme::Dpop, Some(jkt), Some(dpop)) => {
                let htu = format!("{}{path}", self.config.resource_url.origin().ascii_serialization());
                dpop.check(headers, method.as_str(), &htu, token, jkt)?;
            }
            _ => {}
        }
        let mut principal = principal_of(claims, jkt);
        if self.config.keep_tokens {
            let bound = principal.jkt.is_some();
            principal = principal.with_access_token(mcp_server::AccessToken::new(token, bound));
        }
        let key = binding_key(&principal).ok_or_else(|| {
            Denial::InvalidToken(scheme, "the token names neither a subject nor a client".into())
        })?;
        if !principal.has_scopes(&self.config.required_scopes) {
            return Err(Denial::InsufficientScope(scheme, self.config.required_scopes.clone()));
        }
        Ok(Authenticated { principal: Arc::new(principal), key, scheme })
    }

    /// The scopes a `tools/call` of `tool` needs: the required ones, then the tool's own.
    pub(crate) fn check_tool(&self, auth: &Authenticated, tool: &str) -> Result<(), Denial> {
        let extra = self.config.tool_scopes(tool);
        if extra.is_empty() || auth.principal.has_scopes(extra) {
            return Ok(());
        }
        let mut needed = self.config.required_scopes.clone();
        needed.extend(extra.iter().filter(|s| !needed.contains(s)).cloned().collect::<Vec<_>>());
        Err(Denial::InsufficientScope(auth.scheme, needed))
    }

    async fn validate(&self, token: &str) -> Result<JsonObject, TokenError> {
        match &self.verifier {
            Verifier::Introspection(introspector) => introspector.check(token).await,
            Verifier::Jwt { stores, validation } => {
                // The unverified `iss` only chooses whose keys to try; it is validated below.
                let (_, unverified) = jose::decode_unverified(token).map_err(jose_error)?;
                let issuer = unverified.get("iss").and_then(JsonValue::as_str).unwrap_or("");
                let Some((issuer, store)) = stores.iter().find(|(i, _)| i == issuer) else {
                    return Err(TokenError::Invalid("token issued by an unexpected issuer".into()));
                };
                let keys = store.keys().await.map_err(|e| {
                    tracing::warn!(error = %e, "no keys to verify tokens with");
                    TokenError::Unavailable("the authorization server's keys are unavailable")
                })?;
                let verified = match jose::verify(token, &keys, &validation.algorithms) {
                    Err(JoseError::UnknownKey) => match store.refetch_for_unknown_kid().await {
                        Some(keys) => jose::verify(token, &keys, &validation.algorithms),
                        None => Err(JoseError::UnknownKey),
                    },
                    other => other,
                }
                .map_err(jose_error)?;
                if verified
                    .header
                    .get("typ")
                    .and_then(JsonValue::as_str)
                    .is_some_and(|t| t.eq_ignore_ascii_case("dpop+jwt"))
                {
                    return Err(TokenError::Invalid("a DPoP proof is not an access token".into()));
                }
                let checks = Validation::default()
                    .with_issuers(vec![issuer.clone()])
                    .with_audiences(self.config.audiences.clone())
                    .with_leeway(validation.leeway)
                    .with_require_exp(true);
                jose::validate_claims(&verified.claims, &checks)
                    .map_err(|e| TokenError::Invalid(e.to_string()))?;
                Ok(verified.claims)
            }
        }
    }

    /// The refusal as an HTTP response, with its challenges.
    pub(crate) fn refuse(&self, denial: &Denial) -> Response {
        let metadata = Some(self.config.resource_metadata_url.as_str());
        let required =
            (!self.config.required_scopes.is_empty()).then(|| self.config.required_scopes.join(" "));
        let bearer_allowed = !self.dpop.as_ref().is_some_and(|d| d.config.required);
        let algs = self.dpop.as_ref().map(|d| d.config.algorithms.clone());
        // (scheme carrying the error, error, description, scope)
        let (status, erring, error, description, scope): (_, Option<Scheme>, _, Option<String>, _) =
            match denial {
                Denial::Missing => (StatusCode::UNAUTHORIZED, None, None, None, required.clone()),
                Denial::InvalidRequest(why) => (
                    StatusCode::UNAUTHORIZED,
                    Some(if bearer_allowed { Scheme::Bearer } else { Scheme::Dpop }),
                    Some("invalid_request"),
                    Some((*why).to_owned()),
                    required.clone(),
                ),
                Denial::InvalidToken(scheme, why) => (
                    StatusCode::UNAUTHORIZED,
                    Some(*scheme),
                    Some("invalid_token"),
                    Some(why.clone()),
                    required.clone(),
                ),
                Denial::InvalidProof(why) => (
                    StatusCode::UNAUTHORIZED,
                    Some(Scheme::Dpop),
                    Some("invalid_dpop_proof"),
                    Some(why.clone()),
                    None,
                ),
                Denial::UseNonce => (
                    StatusCode::UNAUTHORIZED,
                    Some(Scheme::Dpop),
                    Some("use_dpop_nonce"),
                    Some("a server-issued nonce is required in the DPoP proof".to_owned()),
                    None,
                ),
                Denial::InsufficientScope(scheme, needed) => (
                    StatusCode::FORBIDDEN,
                    Some(*scheme),
                    Some("insufficient_scope"),
                    Some("the token lacks scopes this operation needs".to_owned()),
                    Some(needed.join(" ")),
                ),
                Denial::Unavailable(why) => return unavailable(why),
                Denial::Busy => return unavailable("too many DPoP proofs to remember; try again"),
            };
        let mut challenges = Vec::new();
        let pick = |scheme: Scheme| {
            if erring == Some(scheme) { (error, description.as_deref()) } else { (None, None) }
        };
        if bearer_allowed || erring == Some(Scheme::Bearer) {
            let (error, description) = pick(Scheme::Bearer);
            let scope =
                if erring.is_none() || erring == Some(Scheme::Bearer) { scope.as_deref() } else { None };
            challenges.push(bearer_challenge(metadata, scope, error, description));
        }
        if let Some(algs) = &algs {
            let (error, description) = pick(Scheme::Dpop);
            let scope =
                if erring.is_none() || erring == Some(Scheme::Dpop) { scope.as_deref() } else { None };
            challenges.push(dpop_challenge(algs, metadata, scope, error, description));
        }
        let body = description.unwrap_or_else(|| "an access token is required".to_owned());
        let mut response = (status, body).into_response();
        for challenge in challenges {
            if let Ok(value) = HeaderValue::from_str(&challenge) {
                response.headers_mut().append(header::WWW_AUTHENTICATE, value);
            }
        }
        if matches!(denial, Denial::UseNonce | Denial::InvalidProof(_)) {
            if let Some(nonce) = self.dpop.as_ref().and_then(|d| d.current_nonce()) {
                if let Ok(value) = HeaderValue::from_str(&nonce) {
                    response.headers_mut().insert("dpop-nonce", value);
                }
            }
        }
        response
    }
}

fn unavailable(why: &str) -> Response {
    let mut r = (StatusCode::SERVICE_UNAVAILABLE, why.to_owned()).into_response();
    r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    r
}

fn jose_error(e: JoseError) -> TokenError {
    TokenError::Invalid(e.to_string())
}

/// True when the query has an `access_token` parameter (RFC 6750 §2.3, refused here).
fn has_access_token(query: &str) -> bool {
    query.split('&').any(|pair| {
        let name = pair.split('=').next().unwrap_or("");
        name == "access_token" || name.eq_ignore_ascii_case("access%5Ftoken")
    })
}

/// RFC 6750 `b64token`: `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="`.
fn is_b64token(token: &str) -> bool {
    let body = token.trim_end_matches('=');
    !body.is_empty()
        && token.len() <= MAX_TOKEN
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/'))
}

fn string_claim(claims: &JsonObject, name: &str) -> Option<String> {
    claims.get(name).and_then(JsonValue::as_str).map(str::to_owned)
}

/// The principal a validated token describes.
fn principal_of(claims: JsonObject, jkt: Option<String>) -> Principal {
    let scopes = match (claims.get("scope"), claims.get("scp")) {
        (Some(JsonValue::String(scope)), _) => mcp_auth::scope::split(scope),
        (_, Some(JsonValue::Array(items))) => {
            items.iter().filter_map(JsonValue::as_str).map(str::to_owned).collect()
        }
        (_, Some(JsonValue::String(scope))) => mcp_auth::scope::split(scope),
        _ => Vec::new(),
    };
    let mut principal = Principal::new(
        string_claim(&claims, "iss"),
        string_claim(&claims, "sub"),
        string_claim(&claims, "client_id").or_else(|| string_claim(&claims, "azp")),
    )
    .with_scopes(scopes)
    .with_claims(claims);
    principal.jkt = jkt;
    principal
}

/// Issuer and subject — or, for a client acting on its own behalf without `sub`, its client id.
fn binding_key(principal: &Principal) -> Option<String> {
    let issuer = principal.issuer.as_deref().unwrap_or("");
    match (&principal.subject, &principal.client_id) {
        (Some(sub), _) => Some(format!("{issuer}\u{1f}sub\u{1f}{sub}")),
        (None, Some(client)) => Some(format!("{issuer}\u{1f}client\u{1f}{client}")),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_tokens_are_found() {
        assert!(has_access_token("access_token=abc"));
        assert!(has_access_token("sessionId=x&access_token=abc"));
        assert!(has_access_token("access_token"));
        assert!(!has_access_token("sessionId=x&not_access_token=1"));
    }

    #[test]
    fn b64token_syntax() {
        assert!(is_b64token("abc.DEF-ghi_~+/=="));
        assert!(!is_b64token(""));
        assert!(!is_b64token("=="));
        assert!(!is_b64token("abc def"));
        assert!(!is_b64token("abc\"def"));
        assert!(!is_b64token(&"a".repeat(MAX_TOKEN + 1)));
    }

    #[test]
    fn principals_and_their_keys() {
        let claims: JsonObject = serde_json::from_str(
            r#"{"iss":"https://as","sub":"alice","client_id":"app","scope":"a b","cnf":{"jkt":"k"}}"#,
        )
        .unwrap();
        let p = principal_of(claims, Some("k".into()));
        assert_eq!(p.subject.as_deref(), Some("alice"));
        assert_eq!(p.client_id.as_deref(), Some("app"));
        assert_eq!(p.scopes, ["a", "b"]);
        assert_eq!(binding_key(&p).unwrap(), "https://as\u{1f}sub\u{1f}alice");
        let claims: JsonObject =
            serde_json::from_str(r#"{"iss":"https://as","azp":"svc","scp":["x"]}"#).unwrap();
        let p = principal_of(claims, None);
        assert_eq!(p.client_id.as_deref(), Some("svc"));
        assert_eq!(p.scopes, ["x"]);
        assert_eq!(binding_key(&p).unwrap(), "https://as\u{1f}client\u{1f}svc");
        assert!(binding_key(&principal_of(JsonObject::new(), None)).is_none());
    }
}
