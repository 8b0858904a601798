//! The grants and the token endpoint.

use base64::Engine as _;
use mcp_auth::jose::SigningKey;
use mcp_auth::metadata::ProtectedResourceMetadata;
use mcp_auth::pkce::{Pkce, random_state};
use mcp_auth::scope;
use reqwest::Url;
use reqwest::header::{AUTHORIZATION, HeaderMap};
use serde_json::{Map, Value};

use super::{
    ASSERTION_LIFETIME, AuthServer, CLIENT_ASSERTION_JWT, ClientInfo, DPOP, DPOP_NONCE, EXPIRY_MARGIN,
    GRANT_AUTHORIZATION_CODE, GRANT_CLIENT_CREDENTIALS, GRANT_JWT_BEARER, GRANT_REFRESH_TOKEN,
    GRANT_TOKEN_EXCHANGE, OAuthClient, OAuthErrorBody, OFFLINE_ACCESS, Resource, TOKEN_TYPE_ID_JAG,
    TOKEN_TYPE_ID_TOKEN, Trigger, now,
};
use crate::auth::fetch::{form_escape, is_loopback_host, redact, sensitive};
use crate::auth::{AuthError, DpopPolicy, EnterpriseIdp, Grant, StoredTokens, TokenAuthMethod};

/// A successful token response.
#[derive(serde::Deserialize)]
pub(crate) struct TokenResponse {
    pub(crate) access_token: String,
    #[serde(default)]
    pub(crate) token_type: Option<String>,
    #[serde(default)]
    pub(crate) expires_in: Option<Value>,
    #[serde(default)]
    refresh_token: Option<String>,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    pub(crate) issued_token_type: Option<String>,
}

impl OAuthClient {
    /// Runs the configured grant for `resource` at `auth_server` with `scope` (without
    /// `offline_access`, which is added here when wanted and offered), and keeps the tokens.
    pub(super) async fn obtain(
        &self,
        trigger: &Trigger<'_>,
        resource: &Resource,
        auth_server: &AuthServer,
        scope: Option<String>,
    ) -> Result<(), AuthError> {
        let base_scope = scope.map(|s| strip_offline_access(&s)).filter(|s| !s.is_empty());
        let mut request_scope = base_scope.clone();
        if matches!(self.config.grant, Grant::AuthorizationCode)
            && self.config.offline_access
            && auth_server.metadata.supports_scope(OFFLINE_ACCESS)
        {
            request_scope = Some(scope::union(request_scope.as_deref().unwrap_or(""), OFFLINE_ACCESS));
        }
        let client = self.client_for(auth_server).await?;
        let response = match &self.config.grant {
            Grant::AuthorizationCode => {
                self.authorization_code(resource, auth_server, &client, request_scope.as_deref()).await?
            }
            Grant::ClientCredentials => {
                let mut form = vec![("grant_type", GRANT_CLIENT_CREDENTIALS.to_owned())];
                form.push(("resource", resource.resource.clone()));
                push_scope(&mut form, request_scope.as_deref());
                self.token_request(auth_server, &client, &form).await?
            }
            Grant::JwtBearer(provider) => {
                let assertion = provider.assertion(&auth_server.issuer).await?;
                let mut form = vec![("grant_type", GRANT_JWT_BEARER.to_owned()), ("assertion", assertion)];
                form.push(("resource", resource.resource.clone()));
                push_scope(&mut form, request_scope.as_deref());
                self.token_request(auth_server, &client, &form).await?
            }
            Grant::EnterpriseManaged(idp) => {
                let grant = self.token_exchange(idp, resource, auth_server, request_scope.as_deref()).await?;
                let mut form = vec![("grant_type", GRANT_JWT_BEARER.to_owned()), ("assertion", grant)];
                form.push(("resource", resource.resource.clone()));
                push_scope(&mut form, request_scope.as_deref());
                self.token_request(auth_server, &client, &form).await?
            }
        };
        self.keep(&trigger.server, resource, auth_server, response, base_scope, None).await
    }

    /// The authorization code grant: PKCE `S256`, `state`, `resource`, the user-agent step,
    /// the `iss` check (RFC 9207), then the token request.
    async fn authorization_code(
        &self,
        resource: &Resource,
        auth_server: &AuthServer,
        client: &ClientInfo,
        scope: Option<&str>,
    ) -> Result<TokenResponse, AuthError> {
        let metadata = &auth_server.metadata;
        let (Some(redirect_uri), Some(prompt)) = (&self.config.redirect_uri, &self.config.prompt) else {
            return Err(AuthError::Config(
                "the authorization code grant needs a redirect URI and a prompt".into(),
            ));
        };
        if !metadata.supports_pkce_s256() {
            return Err(AuthError::Discovery(format!(
                "{} does not advertise PKCE S256 (code_challenge_methods_supported)",
                auth_server.issuer
            )));
        }
        let endpoint = metadata
            .authorization_endpoint
            .as_deref()
            .ok_or_else(|| AuthError::Discovery("no authorization_endpoint".into()))?;
        let mut url = Url::parse(endpoint)
            .map_err(|e| AuthError::Discovery(format!("invalid authorization_endpoint: {e}")))?;
        let secure = url.scheme() == "https"
            || (url.scheme() == "http" && url.host_str().is_some_and(is_loopback_host));
        if !secure {
            return Err(AuthError::Discovery(
                "the authorization endpoint is neither https nor loopback http".into(),
            ));
        }
        let pkce = Pkce::try_new().map_err(|e| AuthError::Crypto(e.to_string()))?;
        let state = random_state();
        {
            let mut query = url.query_pairs_mut();
            query
                .append_pair("response_type", "code")
                .append_pair("client_id", &client.client_id)
                .append_pair("redirect_uri", redirect_uri.as_str())
                .append_pair("state", &state)
                .append_pair("code_challenge", &pkce.challenge)
                .append_pair("code_challenge_method", Pkce::METHOD)
                .append_pair("resource", &resource.resource);
            if let Some(scope) = scope {
                query.append_pair("scope", scope);
            }
        }
        tracing::info!(target: "mcp_client::auth", issuer = %auth_server.issuer, scope = scope.unwrap_or(""), "authorization request");
        let response = prompt.authorize(url).await?;
        let code = check_authorization_response(&response, redirect_uri, &state, auth_server)?;
        let form = vec![
            ("grant_type", GRANT_AUTHORIZATION_CODE.to_owned()),
            ("code", code),
            ("redirect_uri", redirect_uri.to_string()),
            ("code_verifier", pkce.verifier.clone()),
            ("resource", resource.resource.clone()),
        ];
        self.token_request(auth_server, client, &form).await
    }

    /// Token exchange at the enterprise identity provider (RFC 8693): the user's ID token for
    /// an ID-JAG naming the MCP server's authorization server and resource.
    async fn token_exchange(
        &self,
        idp: &EnterpriseIdp,
        resource: &Resource,
        auth_server: &AuthServer,
        scope: Option<&str>,
    ) -> Result<String, AuthError> {
        let id_token = idp.id_token.assertion(idp.token_endpoint.as_str()).await?;
        let mut form = vec![
            ("grant_type", GRANT_TOKEN_EXCHANGE.to_owned()),
            ("requested_token_type", TOKEN_TYPE_ID_JAG.to_owned()),
            ("audience", auth_server.issuer.clone()),
            ("resource", resource.resource.clone()),
            ("subject_token", id_token),
            ("subject_token_type", TOKEN_TYPE_ID_TOKEN.to_owned()),
        ];
        push_scope(&mut form, scope);
        let mut headers = HeaderMap::new();
        match &idp.client_secret {
            Some(secret) => {
                headers.insert(AUTHORIZATION, sensitive(&basic(&idp.client_id, secret))?);
            }
            None => form.push(("client_id", idp.client_id.clone())),
        }
        let answer = self.fetcher.post_form(&idp.token_endpoint, &form, headers).await?;
        if !answer.is_success() {
            let body: OAuthErrorBody = answer.json().unwrap_or_default();
            return Err(AuthError::Token {
                error: body.error.unwrap_or_else(|| format!("HTTP {}", answer.status)),
                description: body.error_description.map(|d| format!("identity provider: {d}")),
            });
        }
        let response: TokenResponse = answer.json().ok_or_else(|| {
            AuthError::Http("the identity provider's answer is not a token response".into())
        })?;
        if response.issued_token_type.as_deref().is_some_and(|t| t != TOKEN_TYPE_ID_JAG) {
            return Err(AuthError::Token {
                error: "unexpected_token_type".into(),
                description: Some("the identity provider did not issue an ID-JAG".into()),
            });
        }
        Ok(response.access_token)
    }

    /// The refresh token grant; the new tokens replace the old ones.
    pub(super) async fn refresh(
        &self,
        auth_server: &AuthServer,
        tokens: &StoredTokens,
    ) -> Result<(), AuthError> {
        let Some(refresh_token) = tokens.refresh_token.clone() else {
            return Err(AuthError::Config("no refresh token".into()));
        };
        let client = self.client_for(auth_server).await?;
        let form = vec![
            ("grant_type", GRANT_REFRESH_TOKEN.to_owned()),
            ("refresh_token", refresh_token.clone()),
            ("resource", tokens.resource.clone()),
        ];
        let response = self.token_request(auth_server, &client, &form).await?;
        let server =
            self.lock().server.clone().ok_or_else(|| AuthError::Config("no MCP server yet".into()))?;
        let resource = Resource {
            resource: tokens.resource.clone(),
            metadata: ProtectedResourceMetadata { resource: tokens.resource.clone(), ..Default::default() },
        };
        tracing::debug!(target: "mcp_client::auth", "token refreshed");
        self.keep(
            &server,
            &resource,
            auth_server,
            response,
            tokens.requested_scope.clone(),
            Some(refresh_token),
        )
        .await
    }

    /// A request to the token endpoint with client authentication and, when used, a DPoP proof
    /// (retried once with the authorization server's nonce on `use_dpop_nonce`).
    async fn token_request(
        &self,
        auth_server: &AuthServer,
        client: &ClientInfo,
        form: &[(&str, String)],
    ) -> Result<TokenResponse, AuthError> {
        let endpoint = auth_server
            .metadata
            .token_endpoint
            .as_deref()
            .ok_or_else(|| AuthError::Discovery("no token_endpoint".into()))?;
        let endpoint =
            Url::parse(endpoint).map_err(|e| AuthError::Discovery(format!("invalid token_endpoint: {e}")))?;
        let dpop_key = self.dpop_key_for(auth_server);
        let mut retried = false;
        loop {
            let mut form = form.to_vec();
            let mut headers = HeaderMap::new();
            self.authenticate_client(auth_server, client, &mut form, &mut headers)?;
            if let Some(key) = dpop_key {
                let nonce = self.lock().as_nonce.clone();
                let proof = mcp_auth::dpop::proof(key, "POST", endpoint.as_str(), nonce.as_deref(), None)
                    .map_err(|e| AuthError::Crypto(e.to_string()))?;
                headers.insert(DPOP, sensitive(&proof)?);
            }
            let answer = self.fetcher.post_form(&endpoint, &form, headers).await?;
            let nonce = answer.headers.get(DPOP_NONCE).and_then(|v| v.to_str().ok()).map(str::to_owned);
            if let Some(nonce) = &nonce {
                self.lock().as_nonce = Some(nonce.clone());
            }
            if answer.is_success() {
                let response: TokenResponse = answer.json().ok_or_else(|| {
                    AuthError::Http("the token endpoint's answer is not a token response".into())
                })?;
                if response.access_token.is_empty() {
                    return Err(AuthError::Http("the token endpoint issued an empty access token".into()));
                }
                return Ok(response);
            }
            let body: OAuthErrorBody = answer.json().unwrap_or_default();
            if dpop_key.is_some()
                && !retried
                && nonce.is_some()
                && body.error.as_deref() == Some("use_dpop_nonce")
            {
                retried = true;
                tracing::debug!(target: "mcp_client::auth", "the token endpoint wants a DPoP nonce; retrying");
                continue;
            }
            return Err(AuthError::Token {
                error: body.error.unwrap_or_else(|| format!("HTTP {}", answer.status)),
                description: body.error_description,
            });
        }
    }

    /// The DPoP key, when tokens from `auth_server` are to be bound to it.
    fn dpop_key_for(&self, auth_server: &AuthServer) -> Option<&SigningKey> {
        let key = self.dpop_key.as_ref()?;
        let supported = auth_server
            .metadata
            .dpop_signing_alg_values_supported
            .as_ref()
            .is_some_and(|algs| algs.iter().any(|a| a == key.algorithm().as_str()));
        match self.config.dpop {
            DpopPolicy::Never => None,
            DpopPolicy::WhenSupported if !supported => None,
            _ => Some(key),
        }
    }

    /// Client authentication at the token endpoint.
    fn authenticate_client(
        &self,
        auth_server: &AuthServer,
        client: &ClientInfo,
        form: &mut Vec<(&str, String)>,
        headers: &mut HeaderMap,
    ) -> Result<(), AuthError> {
        match client.method {
            TokenAuthMethod::None => form.push(("client_id", client.client_id.clone())),
            TokenAuthMethod::ClientSecretBasic | TokenAuthMethod::ClientSecretPost => {
                let secret = client.secret.as_deref().ok_or_else(|| {
                    AuthError::Config(format!("{} needs a client secret", client.method.as_str()))
                })?;
                if client.method == TokenAuthMethod::ClientSecretBasic {
                    headers.insert(AUTHORIZATION, sensitive(&basic(&client.client_id, secret))?);
                } else {
                    form.push(("client_id", client.client_id.clone()));
                    form.push(("client_secret", secret.to_owned()));
                }
            }
            TokenAuthMethod::PrivateKeyJwt => {
                let key = client
                    .key
                    .as_deref()
                    .ok_or_else(|| AuthError::Config("private_key_jwt needs a private key".into()))?;
                let assertion = client_assertion(key, &client.client_id, &auth_server.issuer)?;
                form.push(("client_assertion_type", CLIENT_ASSERTION_JWT.to_owned()));
                form.push(("client_assertion", assertion));
            }
        }
        Ok(())
    }

    /// Keeps the tokens of a successful token response (in memory, and in the store unless
    /// they are DPoP-bound to this process's key).
    async fn keep(
        &self,
        server: &Url,
        resource: &Resource,
        auth_server: &AuthServer,
        response: TokenResponse,
        requested_scope: Option<String>,
        previous_refresh: Option<String>,
    ) -> Result<(), AuthError> {
        let dpop = response.token_type.as_deref().is_some_and(|t| t.eq_ignore_ascii_case("dpop"))
            && self.dpop_key_for(auth_server).is_some();
        let lifetime = response.expires_in.as_ref().and_then(seconds);
        let issued = now();
        let expires_at = lifetime.map(|secs| issued.saturating_add(secs));
        let renew_at = lifetime.map(|secs| issued.saturating_add(secs - EXPIRY_MARGIN.min(secs / 2)));
        let tokens = StoredTokens {
            issuer: auth_server.issuer.clone(),
            resource: resource.resource.clone(),
            access_token: response.access_token,
            token_type: if dpop { "DPoP" } else { "Bearer" }.to_owned(),
            refresh_token: response.refresh_token.or(previous_refresh),
            expires_at,
            requested_scope: requested_scope.clone(),
            scope: response.scope,
        };
        {
            let mut state = self.lock();
            state.tokens = Some(tokens.clone());
            state.renew_at = renew_at;
            state.requested_scope = requested_scope;
        }
        tracing::info!(target: "mcp_client::auth", issuer = %auth_server.issuer, token_type = %tokens.token_type, "token obtained");
        if !dpop && let Err(e) = self.config.store.save_tokens(&Self::store_key(server), tokens).await {
            tracing::warn!(target: "mcp_client::auth", "storing the tokens failed: {e}");
        }
        Ok(())
    }
}

fn strip_offline_access(scope: &str) -> String {
    let tokens: Vec<String> = scope::split(scope).into_iter().filter(|t| t != OFFLINE_ACCESS).collect();
    scope::join(&tokens)
}

fn push_scope(form: &mut Vec<(&str, String)>, scope: Option<&str>) {
    if let Some(scope) = scope.filter(|s| !s.is_empty()) {
        form.push(("scope", scope.to_owned()));
    }
}

/// `Basic base64(urlencode(id):urlencode(secret))` (RFC 6749 §2.3.1).
pub(crate) fn basic(client_id: &str, secret: &str) -> String {
    let credentials = format!("{}:{}", form_escape(client_id), form_escape(secret));
    format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(credentials))
}

/// A `private_key_jwt` client assertion (RFC 7523 §2.2) for the authorization server `issuer`.
fn client_assertion(key: &SigningKey, client_id: &str, issuer: &str) -> Result<String, AuthError> {
    let now = now();
    let mut header = Map::new();
    header.insert("typ".into(), "JWT".into());
    let mut claims = Map::new();
    claims.insert("iss".into(), client_id.into());
    claims.insert("sub".into(), client_id.into());
    claims.insert("aud".into(), issuer.into());
    claims.insert("jti".into(), random_state().into());
    claims.insert("iat".into(), now.into());
    claims.insert("exp".into(), (now + ASSERTION_LIFETIME).into());
    key.sign_jwt(&header, &claims).map_err(|e| AuthError::Crypto(e.to_string()))
}

/// Validates the authorization response: the redirect URI, `iss` (RFC 9207, by plain string
/// comparison, before anything else of the response is looked at), `state`, `error`; returns
/// the `code`.
fn check_authorization_response(
    response: &Url,
    redirect_uri: &Url,
    state: &str,
    auth_server: &AuthServer,
) -> Result<String, AuthError> {
    let same_target = response.scheme() == redirect_uri.scheme()
        && response.host_str() == redirect_uri.host_str()
        && response.port_or_known_default() == redirect_uri.port_or_known_default()
        && response.path() == redirect_uri.path();
    if !same_target {
        return Err(AuthError::AuthorizationResponse(format!(
            "the response went to {}, not to the redirect URI",
            redact(response)
        )));
    }
    let param = |name: &str| response.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned());
    let advertised = auth_server.metadata.authorization_response_iss_parameter_supported == Some(true);
    match param("iss") {
        Some(iss) if iss != auth_server.issuer => {
            return Err(AuthError::AuthorizationResponse(format!(
                "iss {iss:?} is not the issuer {:?}",
                auth_server.issuer
            )));
        }
        None if advertised => {
            return Err(AuthError::AuthorizationResponse(
                "the authorization server advertises iss, and the response has none".into(),
            ));
        }
        _ => {}
    }
    if param("state").as_deref() != Some(state) {
        return Err(AuthError::AuthorizationResponse("state does not match the request".into()));
    }
    if let Some(error) = param("error") {
        let description = param("error_description").map(|d| format!(": {d}")).unwrap_or_default();
        return Err(AuthError::AuthorizationResponse(format!("{error}{description}")));
    }
    param("code").filter(|c| !c.is_empty()).ok_or_else(|| AuthError::AuthorizationResponse("no code".into()))
}

/// A number of seconds (some servers send `expires_in` as a string).
fn seconds(value: &Value) -> Option<u64> {
    match value {
        Value::Number(n) => n.as_u64().or_else(|| n.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64)),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use mcp_auth::metadata::AuthorizationServerMetadata;

    use super::*;

    fn server(iss_supported: Option<bool>) -> AuthServer {
        AuthServer {
            issuer: "https://as.example.com".into(),
            metadata: AuthorizationServerMetadata {
                issuer: "https://as.example.com".into(),
                authorization_response_iss_parameter_supported: iss_supported,
                ..Default::default()
            },
        }
    }

    fn check(response: &str, iss_supported: Option<bool>) -> Result<String, AuthError> {
        let redirect = Url::parse("http://127.0.0.1:9/cb").unwrap();
        check_authorization_response(&Url::parse(response).unwrap(), &redirect, "st", &server(iss_supported))
    }

    #[test]
    fn iss_rules_of_rfc_9207() {
        let ok = "http://127.0.0.1:9/cb?code=c&state=st&iss=https%3A%2F%2Fas.example.com";
        assert_eq!(check(ok, Some(true)).unwrap(), "c");
        assert_eq!(check(ok, None).unwrap(), "c");
        let missing = "http://127.0.0.1:9/cb?code=c&state=st";
        assert!(check(missing, Some(true)).is_err());
        assert_eq!(check(missing, None).unwrap(), "c");
        assert_eq!(check(missing, Some(false)).unwrap(), "c");
        for wrong in ["https://evil.example.com", "https://as.example.com/", "HTTPS://as.example.com"] {
            let url = format!("http://127.0.0.1:9/cb?code=c&state=st&iss={}", form_escape(wrong));
            assert!(check(&url, Some(true)).is_err(), "{wrong}");
            assert!(check(&url, None).is_err(), "{wrong}");
        }
    }

    #[test]
    fn state_error_and_target_are_checked() {
        assert!(check("http://127.0.0.1:9/cb?code=c&state=other", None).is_err());
        assert!(check("http://127.0.0.1:9/cb?code=c", None).is_err());
        assert!(check("http://127.0.0.1:9/other?code=c&state=st", None).is_err());
        assert!(check("http://127.0.0.1:10/cb?code=c&state=st", None).is_err());
        let error = check("http://127.0.0.1:9/cb?error=access_denied&state=st", None).unwrap_err();
        assert!(error.to_string().contains("access_denied"), "{error}");
    }

    #[test]
    fn basic_credentials_are_form_encoded() {
        assert_eq!(
            basic("a b", "s:1"),
            format!("Basic {}", base64::engine::general_purpose::STANDARD.encode("a+b:s%3A1"))
        );
    }

    #[test]
    fn offline_access_is_stripped_and_scopes_joined() {
        assert_eq!(strip_offline_access("a offline_access b"), "a b");
        assert_eq!(strip_offline_access("offline_access"), "");
    }
}
