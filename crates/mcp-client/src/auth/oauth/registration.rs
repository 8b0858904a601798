//! Registration: the client id at an authorization server.

use mcp_auth::metadata::AuthorizationServerMetadata;
use reqwest::Url;
use serde_json::{Value, json};

use super::{
    AuthServer, ClientInfo, GRANT_AUTHORIZATION_CODE, GRANT_CLIENT_CREDENTIALS, GRANT_JWT_BEARER,
    GRANT_REFRESH_TOKEN, OAuthClient, OAuthErrorBody, now,
};
use crate::auth::fetch::Answer;
use crate::auth::{AuthError, ClientRegistration, Grant, TokenAuthMethod};

impl OAuthClient {
    /// The client id at `auth_server`: pre-registered (bound to it or to no issuer), a Client
    /// ID Metadata Document URL (when supported), a stored or a new dynamic registration.
    pub(super) async fn client_for(&self, auth_server: &AuthServer) -> Result<ClientInfo, AuthError> {
        let metadata = &auth_server.metadata;
        if let Some(pre) = &self.config.pre_registered
            && pre.issuer.as_ref().is_none_or(|i| *i == auth_server.issuer)
        {
            let method = pre
                .method
                .unwrap_or_else(|| choose_method(metadata, pre.client_secret.is_some(), pre.key.is_some()));
            return Ok(ClientInfo {
                client_id: pre.client_id.clone(),
                secret: pre.client_secret.clone(),
                method,
                key: pre.key.clone(),
            });
        }
        if let Some(url) = &self.config.client_metadata_url
            && metadata.client_id_metadata_document_supported == Some(true)
        {
            return Ok(ClientInfo {
                client_id: url.clone(),
                secret: None,
                method: TokenAuthMethod::None,
                key: None,
            });
        }
        match self.config.store.client(&auth_server.issuer).await {
            Ok(Some(registration)) if !secret_expired(&registration) => return Ok(client_info(registration)),
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(target: "mcp_client::auth", "reading the stored registration failed: {e}")
            }
        }
        let Some(endpoint) = &metadata.registration_endpoint else {
            return Err(AuthError::Registration(format!(
                "no pre-registered credentials for {}, no Client ID Metadata Document support and no registration endpoint",
                auth_server.issuer
            )));
        };
        let registration = self.register(auth_server, endpoint).await?;
        if let Err(e) = self.config.store.save_client(&auth_server.issuer, registration.clone()).await {
            tracing::warn!(target: "mcp_client::auth", "storing the registration failed: {e}");
        }
        Ok(client_info(registration))
    }

    /// Dynamic Client Registration (RFC 7591).
    async fn register(
        &self,
        auth_server: &AuthServer,
        endpoint: &str,
    ) -> Result<ClientRegistration, AuthError> {
        let endpoint = Url::parse(endpoint)
            .map_err(|e| AuthError::Registration(format!("invalid registration endpoint: {e}")))?;
        let metadata = &auth_server.metadata;
        let method =
            [TokenAuthMethod::None, TokenAuthMethod::ClientSecretBasic, TokenAuthMethod::ClientSecretPost]
                .into_iter()
                .find(|m| metadata.supports_token_auth_method(m.as_str()))
                .unwrap_or(TokenAuthMethod::None);
        let grant_types: &[&str] = match self.config.grant {
            Grant::AuthorizationCode => &[GRANT_AUTHORIZATION_CODE, GRANT_REFRESH_TOKEN],
            Grant::ClientCredentials => &[GRANT_CLIENT_CREDENTIALS],
            Grant::JwtBearer(_) | Grant::EnterpriseManaged(_) => &[GRANT_JWT_BEARER],
        };
        let mut body = json!({
            "client_name": self.config.client_name,
            "grant_types": grant_types,
            "token_endpoint_auth_method": method.as_str(),
            "application_type": self.config.application_type,
        });
        if let Some(uri) = &self.config.redirect_uri {
            body["redirect_uris"] = json!([uri.as_str()]);
        }
        if matches!(self.config.grant, Grant::AuthorizationCode) {
            body["response_types"] = json!(["code"]);
        }
        let answer = self.fetcher.post_json(&endpoint, &body).await?;
        if !answer.is_success() {
            return Err(AuthError::Registration(oauth_error_text(&answer)));
        }
        let value: Value =
            answer.json().ok_or_else(|| AuthError::Registration("the answer is not JSON".into()))?;
        let client_id = value
            .get("client_id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty())
            .ok_or_else(|| AuthError::Registration("the answer has no client_id".into()))?;
        let registered_method = value.get("token_endpoint_auth_method").and_then(Value::as_str);
        tracing::info!(target: "mcp_client::auth", issuer = %auth_server.issuer, client_id, "registered");
        Ok(ClientRegistration {
            client_id: client_id.to_owned(),
            client_secret: value.get("client_secret").and_then(Value::as_str).map(str::to_owned),
            token_endpoint_auth_method: Some(registered_method.unwrap_or(method.as_str()).to_owned()),
            client_secret_expires_at: value.get("client_secret_expires_at").and_then(Value::as_u64),
        })
    }
}

/// The token endpoint authentication method for pre-registered credentials.
fn choose_method(metadata: &AuthorizationServerMetadata, secret: bool, key: bool) -> TokenAuthMethod {
    if key {
        TokenAuthMethod::PrivateKeyJwt
    } else if secret {
        if !metadata.supports_token_auth_method(TokenAuthMethod::ClientSecretBasic.as_str())
            && metadata.supports_token_auth_method(TokenAuthMethod::ClientSecretPost.as_str())
        {
            TokenAuthMethod::ClientSecretPost
        } else {
            TokenAuthMethod::ClientSecretBasic
        }
    } else {
        TokenAuthMethod::None
    }
}

fn client_info(registration: ClientRegistration) -> ClientInfo {
    let method = registration
        .token_endpoint_auth_method
        .as_deref()
        .and_then(TokenAuthMethod::parse)
        .filter(|m| !matches!(m, TokenAuthMethod::PrivateKeyJwt))
        .unwrap_or(if registration.client_secret.is_some() {
            TokenAuthMethod::ClientSecretBasic
        } else {
            TokenAuthMethod::None
        });
    ClientInfo { client_id: registration.client_id, secret: registration.client_secret, method, key: None }
}

fn secret_expired(registration: &ClientRegistration) -> bool {
    registration.client_secret_expires_at.is_some_and(|at| at != 0 && at <= now())
}

/// The text of an OAuth error answer.
fn oauth_error_text(answer: &Answer) -> String {
    let body: OAuthErrorBody = answer.json().unwrap_or_default();
    match (body.error, body.error_description) {
        (Some(e), Some(d)) => format!("HTTP {}: {e} ({d})", answer.status),
        (Some(e), None) => format!("HTTP {}: {e}", answer.status),
        _ => format!("HTTP {}", answer.status),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pre_registered_method_follows_the_metadata() {
        let mut metadata = AuthorizationServerMetadata::default();
        assert_eq!(choose_method(&metadata, true, false), TokenAuthMethod::ClientSecretBasic);
        metadata.token_endpoint_auth_methods_supported = Some(vec!["client_secret_post".into()]);
        assert_eq!(choose_method(&metadata, true, false), TokenAuthMethod::ClientSecretPost);
        assert_eq!(choose_method(&metadata, false, false), TokenAuthMethod::None);
        assert_eq!(choose_method(&metadata, true, true), TokenAuthMethod::PrivateKeyJwt);
    }
}
