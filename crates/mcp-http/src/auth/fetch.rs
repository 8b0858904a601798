//! Talking to the authorization server: bounded in time and size, no redirects, `https`
//! (plain `http` only to loopback), and never a token in a log line.

use base64::Engine as _;
use bytes::{Bytes, BytesMut};
use url::Url;

use super::config::{AuthConfig, fetchable};

/// Why a fetch failed (the text names the URL and the cause, never a credential).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub(crate) struct FetchError(pub(crate) String);

/// A bounded HTTP client for the authorization server's documents and endpoints.
#[derive(Debug, Clone)]
pub(crate) struct Fetcher {
    http: reqwest::Client,
    max_bytes: usize,
}

impl Fetcher {
    pub(crate) fn new(config: &AuthConfig) -> Self {
        Fetcher { http: config.http.clone(), max_bytes: config.max_document }
    }

    /// GETs a JSON document.
    pub(crate) async fn get_json(&self, url: &str) -> Result<Bytes, FetchError> {
        let url = checked(url)?;
        let request = self.http.get(url.clone()).header(http::header::ACCEPT, "application/json");
        self.send(&url, request).await
    }

    /// POSTs a form with HTTP Basic client authentication (RFC 6749 §2.3.1: both parts are
    /// form-urlencoded before Base64).
    pub(crate) async fn post_form(
        &self,
        url: &str,
        client: (&str, &str),
        form: &[(&str, &str)],
    ) -> Result<Bytes, FetchError> {
        let url = checked(url)?;
        let credentials = format!("{}:{}", form_encode(client.0), form_encode(client.1));
        let basic = base64::engine::general_purpose::STANDARD.encode(credentials);
        let body =
            form.iter().map(|(k, v)| format!("{}={}", form_encode(k), form_encode(v))).collect::<Vec<_>>();
        let request = self
            .http
            .post(url.clone())
            .header(http::header::AUTHORIZATION, format!("Basic {basic}"))
            .header(http::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(http::header::ACCEPT, "application/json")
            .body(body.join("&"));
        self.send(&url, request).await
    }

    async fn send(&self, url: &Url, request: reqwest::RequestBuilder) -> Result<Bytes, FetchError> {
        let mut response =
            request.send().await.map_err(|e| FetchError(format!("{url}: {}", describe(&e))))?;
        let status = response.status();
        if !status.is_success() {
            return Err(FetchError(format!("{url}: HTTP {status}")));
        }
        if response.content_length().is_some_and(|n| n > self.max_bytes as u64) {
            return Err(FetchError(format!("{url}: larger than {} bytes", self.max_bytes)));
        }
        let mut body = BytesMut::new();
        while let Some(chunk) =
            response.chunk().await.map_err(|e| FetchError(format!("{url}: {}", describe(&e))))?
        {
            if body.len() + chunk.len() > self.max_bytes {
                return Err(FetchError(format!("{url}: larger than {} bytes", self.max_bytes)));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body.freeze())
    }
}

fn checked(url: &str) -> Result<Url, FetchError> {
    let parsed = Url::parse(url).map_err(|e| FetchError(format!("{url}: {e}")))?;
    fetchable("url", &parsed).map_err(|e| FetchError(e.to_string()))?;
    Ok(parsed)
}

fn describe(e: &reqwest::Error) -> &'static str {
    if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "connection failed"
    } else if e.is_redirect() {
        "redirects are not followed"
    } else {
        "request failed"
    }
}

/// `application/x-www-form-urlencoded` encoding of one name or value.
pub(crate) fn form_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'*' => out.push(byte as char),
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_encoding() {
        assert_eq!(form_encode("a b+c/d:é"), "a+b%2Bc%2Fd%3A%C3%A9");
        assert_eq!(form_encode("Az09-._*"), "Az09-._*");
    }

    #[test]
    fn only_https_or_loopback_http() {
        assert!(checked("https://as.example/jwks").is_ok());
        assert!(checked("http://127.0.0.1:9/jwks").is_ok());
        assert!(checked("http://[::1]:9/jwks").is_ok());
        assert!(checked("http://as.example/jwks").is_err());
        assert!(checked("file:///etc/passwd").is_err());
        assert!(checked("not a url").is_err());
    }
}
