//! The authorization hook of the HTTP transports.
//!
//! Authorization is an HTTP concern: the transports ask an [`HttpAuth`] for the headers of
//! every request they send (`POST`, `GET`, `DELETE`), and when the server refuses one (`401`,
//! or `403` with an `insufficient_scope` challenge) they tell it so; when it has obtained a new
//! or upgraded token, the identical request (which the server did not execute) goes out again.
//! [`crate::auth::OAuthClient`] is the OAuth 2.1 implementation of MCP authorization; a static
//! token or a custom scheme can implement the trait directly.

use reqwest::header::{HeaderMap, WWW_AUTHENTICATE};
use reqwest::{Method, Url};

use crate::auth::AuthError;
use crate::transport::BoxFuture;

/// Supplies the credentials of the HTTP requests a transport sends, and reacts when the server
/// refuses them.
pub trait HttpAuth: Send + Sync + 'static {
    /// The headers for one request (`Authorization`, `DPoP`); called for every `POST`, `GET`
    /// and `DELETE`, again for every retry. They are sent marked sensitive and never logged.
    /// An error stops the request before it is sent.
    fn authorize<'a>(
        &'a self,
        method: &'a Method,
        url: &'a Url,
    ) -> BoxFuture<'a, Result<HeaderMap, AuthError>>;

    /// The server refused a request (`401`, or `403` with an `insufficient_scope` challenge):
    /// obtain a new or upgraded token. `Ok(true)`: send the same request again (the transport
    /// calls [`HttpAuth::authorize`] first). `Ok(false)` or an error: the request fails with the
    /// server's answer. Called at most [`HttpConfig::auth_attempts`] times per request.
    ///
    /// [`HttpConfig::auth_attempts`]: super::HttpConfig::auth_attempts
    fn refused<'a>(&'a self, refusal: &'a Refusal) -> BoxFuture<'a, Result<bool, AuthError>>;
}

/// A request the server refused for want of (sufficient) authorization.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Refusal {
    /// `401` or `403`.
    pub status: u16,
    /// The URL of the refused request.
    pub url: Url,
    /// Its method.
    pub method: Method,
    /// The headers of the refusal (`WWW-Authenticate`, `DPoP-Nonce`, ...).
    pub headers: HeaderMap,
    /// What [`HttpAuth::authorize`] gave the refused request (to tell a stale token, already
    /// replaced by a concurrent request, from the current one). Sensitive: never log it.
    pub presented: HeaderMap,
}

impl Refusal {
    /// A refusal for `method url` with the response `headers`.
    pub fn new(status: u16, method: Method, url: Url, headers: HeaderMap, presented: HeaderMap) -> Self {
        Refusal { status, url, method, headers, presented }
    }

    /// Every `WWW-Authenticate` value of the refusal. A value with bytes beyond visible ASCII
    /// (an `error_description` in another language, say) is read as UTF-8, invalid sequences
    /// replaced, rather than dropped with the `resource_metadata` and `scope` it carries.
    pub fn www_authenticate(&self) -> impl Iterator<Item = std::borrow::Cow<'_, str>> {
        self.headers.get_all(WWW_AUTHENTICATE).iter().map(|v| String::from_utf8_lossy(v.as_bytes()))
    }
}

/// Whether an answer is a refusal the authorization layer handles: every `401`, and a `403`
/// whose challenge says `insufficient_scope` (other `403`s are not about the token).
pub(crate) fn is_refusal(status: u16, headers: &HeaderMap) -> bool {
    match status {
        401 => true,
        403 => headers.get_all(WWW_AUTHENTICATE).iter().any(|v| {
            String::from_utf8_lossy(v.as_bytes()).to_ascii_lowercase().contains("insufficient_scope")
        }),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn only_401_and_insufficient_scope_403_are_refusals() {
        let mut headers = HeaderMap::new();
        assert!(is_refusal(401, &headers));
        assert!(!is_refusal(403, &headers));
        assert!(!is_refusal(400, &headers));
        headers.insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer error=\"insufficient_scope\""));
        assert!(is_refusal(403, &headers));
        assert!(!is_refusal(404, &headers));
    }

    #[test]
    fn a_challenge_with_non_ascii_text_is_read_not_dropped() {
        let mut headers = HeaderMap::new();
        let value = "Bearer error=\"insufficient_scope\", error_description=\"Zugriff verweigert: Berechtigung für »admin« fehlt\", resource_metadata=\"https://mcp.example/.well-known/oauth-protected-resource\", scope=\"admin\"";
        headers.insert(WWW_AUTHENTICATE, HeaderValue::from_bytes(value.as_bytes()).unwrap());
        assert!(is_refusal(403, &headers));
        let url = Url::parse("https://mcp.example/mcp").unwrap();
        let refusal = Refusal::new(403, Method::POST, url, headers, HeaderMap::new());
        let read: Vec<_> = refusal.www_authenticate().collect();
        assert_eq!(read, [value]);
        let challenges = mcp_auth::challenge::parse_www_authenticate(&read[0]);
        assert_eq!(challenges[0].param("scope"), Some("admin"));
        assert_eq!(
            challenges[0].param("resource_metadata"),
            Some("https://mcp.example/.well-known/oauth-protected-resource")
        );
    }
}
