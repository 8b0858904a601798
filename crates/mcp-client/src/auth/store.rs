//! Where the authorization layer keeps what it obtained: client registrations per
//! authorization server (keyed by its `issuer`), and tokens per protected resource (each
//! recording the issuer that issued it).

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::AuthError;
use crate::transport::BoxFuture;

/// A client registration at one authorization server, obtained by Dynamic Client Registration.
/// Pre-registered credentials come from the configuration and Client ID Metadata Document
/// client ids need no registration; neither is stored.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientRegistration {
    /// The client id the authorization server issued.
    pub client_id: String,
    /// The client secret, for a confidential client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// How the client authenticates at the token endpoint (`none`, `client_secret_basic`,
    /// `client_secret_post`, `private_key_jwt`), as registered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_method: Option<String>,
    /// When the secret expires (seconds since the Unix epoch; `None` or 0: never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret_expires_at: Option<u64>,
}

impl fmt::Debug for ClientRegistration {
    /// The secret is never printed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientRegistration")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "<redacted>"))
            .field("token_endpoint_auth_method", &self.token_endpoint_auth_method)
            .field("client_secret_expires_at", &self.client_secret_expires_at)
            .finish()
    }
}

/// The tokens for one protected resource.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredTokens {
    /// The issuer of the authorization server that issued them.
    pub issuer: String,
    /// The `resource` they were requested for (as the protected resource metadata names it).
    pub resource: String,
    /// The access token.
    pub access_token: String,
    /// `Bearer` or `DPoP`.
    pub token_type: String,
    /// The refresh token, if one was issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// When the access token expires (seconds since the Unix epoch), if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The scopes requested for it (space-separated), the base of a later step-up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_scope: Option<String>,
    /// The scopes granted, when the authorization server said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

impl fmt::Debug for StoredTokens {
    /// The tokens are never printed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoredTokens")
            .field("issuer", &self.issuer)
            .field("resource", &self.resource)
            .field("access_token", &"<redacted>")
            .field("token_type", &self.token_type)
            .field("refresh_token", &self.refresh_token.as_ref().map(|_| "<redacted>"))
            .field("expires_at", &self.expires_at)
            .field("requested_scope", &self.requested_scope)
            .field("scope", &self.scope)
            .finish()
    }
}

/// Persistence of registrations and tokens. Implementations must keep the secrets in them
/// confidential (file permissions, an OS keychain). The in-memory [`MemoryStore`] is the
/// default.
pub trait CredentialStore: Send + Sync + 'static {
    /// The registration at the authorization server `issuer`, if any.
    fn client<'a>(&'a self, issuer: &'a str) -> BoxFuture<'a, Result<Option<ClientRegistration>, AuthError>>;

    /// Remembers the registration at `issuer`.
    fn save_client<'a>(
        &'a self,
        issuer: &'a str,
        registration: ClientRegistration,
    ) -> BoxFuture<'a, Result<(), AuthError>>;

    /// The tokens for the protected resource `resource` (the MCP server's URL).
    fn tokens<'a>(&'a self, resource: &'a str) -> BoxFuture<'a, Result<Option<StoredTokens>, AuthError>>;

    /// Remembers the tokens for `resource`, replacing earlier ones.
    fn save_tokens<'a>(
        &'a self,
        resource: &'a str,
        tokens: StoredTokens,
    ) -> BoxFuture<'a, Result<(), AuthError>>;

    /// Forgets the tokens for `resource`.
    fn remove_tokens<'a>(&'a self, resource: &'a str) -> BoxFuture<'a, Result<(), AuthError>>;

    /// Forgets everything obtained from the authorization server `issuer`: its registration
    /// and every token it issued (it is no longer the resource's authorization server).
    fn forget_issuer<'a>(&'a self, issuer: &'a str) -> BoxFuture<'a, Result<(), AuthError>>;
}

/// A [`CredentialStore`] in memory: nothing survives the process.
#[derive(Default)]
pub struct MemoryStore {
    inner: Mutex<MemoryInner>,
}

#[derive(Default)]
struct MemoryInner {
    clients: HashMap<String, ClientRegistration>,
    tokens: HashMap<String, StoredTokens>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        MemoryStore::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, MemoryInner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = self.lock();
        f.debug_struct("MemoryStore")
            .field("issuers", &inner.clients.keys().collect::<Vec<_>>())
            .field("resources", &inner.tokens.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl CredentialStore for MemoryStore {
    fn client<'a>(&'a self, issuer: &'a str) -> BoxFuture<'a, Result<Option<ClientRegistration>, AuthError>> {
        let found = self.lock().clients.get(issuer).cloned();
        Box::pin(async move { Ok(found) })
    }

    fn save_client<'a>(
        &'a self,
        issuer: &'a str,
        registration: ClientRegistration,
    ) -> BoxFuture<'a, Result<(), AuthError>> {
        self.lock().clients.insert(issuer.to_owned(), registration);
        Box::pin(async { Ok(()) })
    }

    fn tokens<'a>(&'a self, resource: &'a str) -> BoxFuture<'a, Result<Option<StoredTokens>, AuthError>> {
        let found = self.lock().tokens.get(resource).cloned();
        Box::pin(async move { Ok(found) })
    }

    fn save_tokens<'a>(
        &'a self,
        resource: &'a str,
        tokens: StoredTokens,
    ) -> BoxFuture<'a, Result<(), AuthError>> {
        self.lock().tokens.insert(resource.to_owned(), tokens);
        Box::pin(async { Ok(()) })
    }

    fn remove_tokens<'a>(&'a self, resource: &'a str) -> BoxFuture<'a, Result<(), AuthError>> {
        self.lock().tokens.remove(resource);
        Box::pin(async { Ok(()) })
    }

    fn forget_issuer<'a>(&'a self, issuer: &'a str) -> BoxFuture<'a, Result<(), AuthError>> {
        let mut inner = self.lock();
        inner.clients.remove(issuer);
        inner.tokens.retain(|_, tokens| tokens.issuer != issuer);
        Box::pin(async { Ok(()) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(issuer: &str) -> StoredTokens {
        StoredTokens {
            issuer: issuer.into(),
            resource: "https://mcp".into(),
            access_token: "secret-access".into(),
            token_type: "Bearer".into(),
            refresh_token: Some("secret-refresh".into()),
            expires_at: None,
            requested_scope: None,
            scope: None,
        }
    }

    #[tokio::test]
    async fn forgetting_an_issuer_drops_its_registration_and_tokens_only() {
        let store = MemoryStore::new();
        let registration = ClientRegistration {
            client_id: "c1".into(),
            client_secret: Some("s1".into()),
            token_endpoint_auth_method: None,
            client_secret_expires_at: None,
        };
        store.save_client("https://as1", registration.clone()).await.unwrap();
        store.save_tokens("https://mcp/a", tokens("https://as1")).await.unwrap();
        store.save_tokens("https://mcp/b", tokens("https://as2")).await.unwrap();
        assert_eq!(store.client("https://as1").await.unwrap(), Some(registration));
        store.forget_issuer("https://as1").await.unwrap();
        assert!(store.client("https://as1").await.unwrap().is_none());
        assert!(store.tokens("https://mcp/a").await.unwrap().is_none());
        assert!(store.tokens("https://mcp/b").await.unwrap().is_some());
    }

    #[test]
    fn debug_never_prints_secrets() {
        let printed = format!("{:?}", tokens("https://as1"));
        assert!(!printed.contains("secret"), "{printed}");
        let registration = ClientRegistration {
            client_id: "c1".into(),
            client_secret: Some("secret-s1".into()),
            token_endpoint_auth_method: None,
            client_secret_expires_at: None,
        };
        assert!(!format!("{registration:?}").contains("secret-s1"));
    }
}
