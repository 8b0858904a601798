//! The user-agent step of the authorization code grant: something sends the user to the
//! authorization URL and hands back the URL the authorization server redirected to.

use std::time::Duration;

use reqwest::Url;
use reqwest::header::LOCATION;

use super::AuthError;
use crate::transport::BoxFuture;

/// Takes the user through the authorization server's page: opens `authorization_url` (a
/// browser, a device, a test double) and returns the redirect URL the authorization server
/// sent the user agent to, with its query (`code`, `state`, `iss`, or `error`) intact.
///
/// The redirect URL must be the one configured with
/// [`OAuthClientBuilder::redirect_uri`](super::OAuthClientBuilder::redirect_uri). Its
/// parameters are checked by the caller (`state`, `iss`), not by the prompt.
pub trait AuthorizationPrompt: Send + Sync + 'static {
    /// Runs the user-agent step for `authorization_url`.
    fn authorize(&self, authorization_url: Url) -> BoxFuture<'_, Result<Url, AuthError>>;
}

/// A prompt without a user: GETs the authorization URL without following redirects and returns
/// the `Location` it is redirected to. For authorization servers that approve without
/// interaction — test servers, the conformance suite's mocks.
#[derive(Debug, Clone)]
pub struct NoFollowPrompt {
    client: reqwest::Client,
}

impl NoFollowPrompt {
    /// A prompt whose requests time out after 10 seconds.
    pub fn new() -> Result<Self, AuthError> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| AuthError::Prompt(format!("cannot build the HTTP client: {e}")))?;
        Ok(NoFollowPrompt { client })
    }
}

impl AuthorizationPrompt for NoFollowPrompt {
    fn authorize(&self, authorization_url: Url) -> BoxFuture<'_, Result<Url, AuthError>> {
        Box::pin(async move {
            let response = self
                .client
                .get(authorization_url.clone())
                .send()
                .await
                .map_err(|e| AuthError::Prompt(crate::transport::http::common::error_text(e)))?;
            // The status line only: the `Location` carries the authorization code.
            crate::wire::answered(
                &reqwest::Method::GET,
                &authorization_url,
                response.status(),
                response.headers(),
            );
            let status = response.status();
            if !status.is_redirection() {
                return Err(AuthError::Prompt(format!(
                    "the authorization endpoint answered {status}, not a redirect"
                )));
            }
            let location = response
                .headers()
                .get(LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| AuthError::Prompt("a redirect without Location".into()))?;
            authorization_url
                .join(location)
                .map_err(|_| AuthError::Prompt("a redirect to an invalid URL".into()))
        })
    }
}
