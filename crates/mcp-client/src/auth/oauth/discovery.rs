//! Discovery: protected resource metadata, then authorization server metadata.

use std::sync::Arc;

use mcp_auth::metadata::{
    AuthorizationServerMetadata, ProtectedResourceMetadata, authorization_server_metadata_urls,
    protected_resource_metadata_urls, resource_matches,
};
use reqwest::Url;

use super::{AuthServer, OAuthClient, Resource, Trigger};
use crate::auth::AuthError;
use crate::auth::fetch::redact;

impl OAuthClient {
    /// The protected resource and its authorization server: known ones, unless `force`; the
    /// metadata read again otherwise. An authorization server other than the current one
    /// replaces it, and everything obtained from the previous one is forgotten.
    pub(super) async fn discover(
        &self,
        trigger: &Trigger<'_>,
        force: bool,
    ) -> Result<(Arc<Resource>, Arc<AuthServer>), AuthError> {
        if !force {
            let state = self.lock();
            if let (Some(r), Some(a)) = (&state.resource, &state.auth_server) {
                return Ok((r.clone(), a.clone()));
            }
        }
        let resource = Arc::new(self.fetch_resource(&trigger.server, trigger.resource_metadata).await?);
        let current = self.lock().auth_server.clone();
        let listed = |issuer: &str| {
            resource.metadata.authorization_servers.as_ref().is_some_and(|s| s.iter().any(|s| s == issuer))
        };
        // The authorization server in use stays as long as the metadata lists it.
        let issuer = match &current {
            Some(current) if listed(&current.issuer) => current.issuer.clone(),
            _ => self.choose_issuer(&resource)?,
        };
        let auth_server = match current {
            Some(current) if current.issuer == issuer => current,
            current => {
                if let Some(old) = current {
                    self.forget_issuer(&old.issuer).await;
                }
                let stale = self.lock().tokens.as_ref().is_some_and(|t| t.issuer != issuer);
                if stale {
                    // Tokens of another authorization server (loaded from the store).
                    let old = self.lock().tokens.as_ref().map(|t| t.issuer.clone()).unwrap_or_default();
                    self.forget_issuer(&old).await;
                }
                Arc::new(self.fetch_auth_server(&issuer).await?)
            }
        };
        let mut state = self.lock();
        state.resource = Some(resource.clone());
        state.auth_server = Some(auth_server.clone());
        Ok((resource, auth_server))
    }

    /// The authorization server changed: its registration and tokens are of no use anymore.
    async fn forget_issuer(&self, issuer: &str) {
        tracing::info!(target: "mcp_client::auth", issuer, "the authorization server changed; forgetting the previous one");
        {
            let mut state = self.lock();
            if state.tokens.as_ref().is_some_and(|t| t.issuer == issuer) {
                state.tokens = None;
            }
            state.auth_server = None;
            state.as_nonce = None;
        }
        if let Err(e) = self.config.store.forget_issuer(issuer).await {
            tracing::warn!(target: "mcp_client::auth", "forgetting the previous authorization server failed: {e}");
        }
    }

    /// Protected resource metadata (RFC 9728), validated against the MCP server's URL.
    async fn fetch_resource(
        &self,
        server: &Url,
        from_challenge: Option<&str>,
    ) -> Result<Resource, AuthError> {
        let mut candidates = Vec::new();
        if let Some(url) = from_challenge {
            match Url::parse(url) {
                Ok(url) => candidates.push(url),
                Err(_) => {
                    tracing::debug!(target: "mcp_client::auth", "ignoring an invalid resource_metadata URL")
                }
            }
        }
        for url in protected_resource_metadata_urls(server) {
            if !candidates.contains(&url) {
                candidates.push(url);
            }
        }
        let mut last_error = None;
        for url in candidates {
            match self.fetcher.get_json::<ProtectedResourceMetadata>(&url).await {
                Ok(Some(metadata)) => {
                    if !resource_matches(&metadata.resource, server) {
                        return Err(AuthError::ResourceMismatch {
                            expected: server.to_string(),
                            found: metadata.resource,
                        });
                    }
                    tracing::debug!(target: "mcp_client::auth", url = %redact(&url), resource = %metadata.resource, "protected resource metadata");
                    return Ok(Resource { resource: metadata.resource.clone(), metadata });
                }
                Ok(None) => {}
                Err(e) => {
                    tracing::debug!(target: "mcp_client::auth", url = %redact(&url), "fetching protected resource metadata failed: {e}");
                    last_error = Some(e);
                }
            }
        }
        Err(AuthError::Discovery(match last_error {
            Some(e) => format!("no protected resource metadata for {} ({e})", redact(server)),
            None => format!("no protected resource metadata for {}", redact(server)),
        }))
    }

    /// Which of the resource's authorization servers to use: the one pre-registered credentials
    /// are bound to, if listed, else the first.
    fn choose_issuer(&self, resource: &Resource) -> Result<String, AuthError> {
        let servers = resource.metadata.authorization_servers.clone().unwrap_or_default();
        let bound = self.config.pre_registered.as_ref().and_then(|p| p.issuer.as_ref());
        if let Some(bound) = bound
            && servers.iter().any(|s| s == bound)
        {
            return Ok(bound.clone());
        }
        servers.into_iter().next().ok_or_else(|| {
            AuthError::Discovery("the protected resource metadata names no authorization server".into())
        })
    }

    /// Authorization server metadata at the well-known URLs of `issuer`, in MCP's order; a
    /// document whose `issuer` is not exactly `issuer` is never used.
    pub(super) async fn fetch_auth_server(&self, issuer: &str) -> Result<AuthServer, AuthError> {
        let issuer_url = Url::parse(issuer)
            .map_err(|e| AuthError::Discovery(format!("invalid issuer {issuer:?}: {e}")))?;
        if issuer_url.query().is_some() || issuer_url.fragment().is_some() {
            return Err(AuthError::Discovery(format!("invalid issuer {issuer:?}: query or fragment")));
        }
        self.fetcher.check_url(&issuer_url)?;
        let mut mismatch = None;
        let mut last_error = None;
        for url in authorization_server_metadata_urls(&issuer_url) {
            match self.fetcher.get_json::<AuthorizationServerMetadata>(&url).await {
                Ok(Some(metadata)) if metadata.issuer_matches(issuer) => {
                    tracing::debug!(target: "mcp_client::auth", url = %redact(&url), issuer, "authorization server metadata");
                    return Ok(AuthServer { issuer: issuer.to_owned(), metadata });
                }
                Ok(Some(metadata)) => {
                    tracing::warn!(target: "mcp_client::auth", url = %redact(&url), expected = issuer, found = %metadata.issuer, "authorization server metadata for another issuer; not used");
                    mismatch = Some(AuthError::IssuerMismatch {
                        expected: issuer.to_owned(),
                        found: metadata.issuer,
                    });
                }
                Ok(None) => {}
                Err(e) => last_error = Some(e),
            }
        }
        Err(mismatch.unwrap_or_else(|| {
            AuthError::Discovery(match last_error {
                Some(e) => format!("no authorization server metadata for {issuer} ({e})"),
                None => format!("no authorization server metadata for {issuer}"),
            })
        }))
    }
}
