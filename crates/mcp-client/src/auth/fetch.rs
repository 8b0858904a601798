//! The HTTP client of the authorization layer: metadata documents, registration and token
//! requests. Every URL must be `https` (plain `http` only on loopback, for development); host
//! names are resolved by a resolver that refuses private, link-local and other non-public
//! addresses (so a metadata URL cannot reach into the local network), redirects are followed
//! only within the same origin, answers are limited in size and time.

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use bytes::BytesMut;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderValue};
use reqwest::{Method, Response, Url};

use super::AuthError;

/// How many same-origin redirects a fetch follows.
const MAX_REDIRECTS: usize = 5;

/// The limits and address policy of the authorization layer's requests.
#[derive(Debug, Clone)]
pub(crate) struct FetchPolicy {
    /// The largest body read.
    pub(crate) max_body: usize,
    /// How long one metadata fetch may take, from connecting to the end of the body.
    pub(crate) metadata_timeout: Duration,
    /// How long one registration or token request may take.
    pub(crate) request_timeout: Duration,
    /// Private addresses allowed everywhere (an intranet authorization server).
    pub(crate) allow_private: bool,
}

impl Default for FetchPolicy {
    fn default() -> Self {
        FetchPolicy {
            max_body: 1024 * 1024,
            metadata_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(30),
            allow_private: false,
        }
    }
}

/// Host names (lower case) whose private addresses are allowed anyway: the MCP server's own
/// host, which the user chose to connect to.
#[derive(Debug, Default)]
struct Trusted(RwLock<BTreeSet<String>>);

impl Trusted {
    fn contains(&self, host: &str) -> bool {
        self.0.read().unwrap_or_else(|e| e.into_inner()).contains(&host.to_ascii_lowercase())
    }

    fn insert(&self, host: &str) {
        self.0.write().unwrap_or_else(|e| e.into_inner()).insert(host.to_ascii_lowercase());
    }
}

/// An answer read whole.
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) headers: HeaderMap,
    pub(crate) body: bytes::Bytes,
}

impl Answer {
    /// The body as JSON, when it is JSON.
    pub(crate) fn json<T: serde::de::DeserializeOwned>(&self) -> Option<T> {
        serde_json::from_slice(&self.body).ok()
    }

    pub(crate) fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// The client and its policy.
pub(crate) struct Fetcher {
    client: reqwest::Client,
    policy: FetchPolicy,
    trusted: Arc<Trusted>,
}

impl Fetcher {
    pub(crate) fn new(policy: FetchPolicy) -> Result<Self, AuthError> {
        let trusted = Arc::new(Trusted::default());
        let resolver = PublicResolver { trusted: trusted.clone(), allow_private: policy.allow_private };
        let redirects = reqwest::redirect::Policy::custom(|attempt| {
            let same_origin =
                attempt.previous().first().is_some_and(|first| first.origin() == attempt.url().origin());
            if same_origin && attempt.previous().len() <= MAX_REDIRECTS {
                crate::wire::redirect(attempt.status(), attempt.url());
                attempt.follow()
            } else {
                attempt.stop()
            }
        });
        let client = reqwest::Client::builder()
            .redirect(redirects)
            .dns_resolver(Arc::new(resolver))
            .connect_timeout(policy.metadata_timeout)
            .user_agent(concat!("mcpkit-client/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| AuthError::Http(format!("cannot build the HTTP client: {e}")))?;
        Ok(Fetcher { client, policy, trusted })
    }

    /// Allows the private addresses of `url`'s host (the MCP server the user chose).
    pub(crate) fn trust_host_of(&self, url: &Url) {
        if let Some(host) = url.host_str() {
            self.trusted.insert(host.trim_start_matches('[').trim_end_matches(']'));
        }
    }

    /// Refuses a URL the layer must not contact: not `https` (nor `http` on loopback), with
    /// credentials or a fragment, or an IP literal in a private range.
    pub(crate) fn check_url(&self, url: &Url) -> Result<(), AuthError> {
        let host = url.host_str().ok_or_else(|| AuthError::Discovery(format!("{url} has no host")))?;
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        let loopback = is_loopback_host(bare);
        match url.scheme() {
            "https" => {}
            "http" if loopback => {}
            _ => {
                return Err(AuthError::Discovery(format!(
                    "{} is neither https nor loopback http",
                    redact(url)
                )));
            }
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(AuthError::Discovery("a URL with user credentials".into()));
        }
        if let Ok(ip) = bare.parse::<IpAddr>()
            && !self.policy.allow_private
            && !is_public_or_loopback(ip)
            && !self.trusted.contains(bare)
        {
            return Err(AuthError::Discovery(format!("{} is a private address", redact(url))));
        }
        Ok(())
    }

    /// GETs a JSON document (metadata): `Ok(None)` for an answer other than 2xx JSON.
    pub(crate) async fn get_json<T: serde::de::DeserializeOwned>(
        &self,
        url: &Url,
    ) -> Result<Option<T>, AuthError> {
        self.check_url(url)?;
        let request = self.client.get(url.clone()).header(ACCEPT, "application/json");
        let answer = self.exchange(&Method::GET, url, request, self.policy.metadata_timeout).await?;
        if !answer.is_success() {
            tracing::debug!(target: "mcp_client::auth", url = %redact(url), status = answer.status, "metadata not found");
            return Ok(None);
        }
        match serde_json::from_slice(&answer.body) {
            Ok(doc) => Ok(Some(doc)),
            Err(e) => {
                tracing::debug!(target: "mcp_client::auth", url = %redact(url), "metadata is not usable JSON: {e}");
                Ok(None)
            }
        }
    }

    /// POSTs a form (token and token-exchange requests) with extra headers (client
    /// authentication, DPoP); the answer whatever its status.
    pub(crate) async fn post_form(
        &self,
        url: &Url,
        form: &[(&str, String)],
        headers: HeaderMap,
    ) -> Result<Answer, AuthError> {
        self.check_url(url)?;
        let request = self
            .client
            .post(url.clone())
            .headers(headers)
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(ACCEPT, "application/json")
            .body(encode_form(form));
        self.exchange(&Method::POST, url, request, self.policy.request_timeout).await
    }

    /// POSTs JSON (dynamic client registration); the answer whatever its status.
    pub(crate) async fn post_json(&self, url: &Url, body: &serde_json::Value) -> Result<Answer, AuthError> {
        self.check_url(url)?;
        let request = self
            .client
            .post(url.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json")
            .body(body.to_string());
        self.exchange(&Method::POST, url, request, self.policy.request_timeout).await
    }

    /// Sends `request` (a `method` to `url`) and reads its answer. The wire trace gets the
    /// status line only: never the headers or the body (credentials and tokens travel there).
    async fn exchange(
        &self,
        method: &Method,
        url: &Url,
        request: reqwest::RequestBuilder,
        timeout: Duration,
    ) -> Result<Answer, AuthError> {
        let work = async {
            let mut response = match request.send().await {
                Ok(response) => response,
                Err(e) => {
                    let error = http_error(e);
                    crate::wire::failed(method, url, &error);
                    return Err(error);
                }
            };
            crate::wire::answered(method, url, response.status(), response.headers());
            let status = response.status().as_u16();
            let headers = response.headers().clone();
            let body = read_limited(&mut response, self.policy.max_body).await?;
            Ok(Answer { status, headers, body })
        };
        tokio::time::timeout(timeout, work)
            .await
            .map_err(|_| AuthError::Http(format!("no complete answer within {timeout:?}")))?
    }
}

async fn read_limited(response: &mut Response, limit: usize) -> Result<bytes::Bytes, AuthError> {
    if response.content_length().is_some_and(|len| len > limit as u64) {
        return Err(AuthError::Http(format!("answer larger than {limit} bytes")));
    }
    let mut body = BytesMut::new();
    while let Some(chunk) = response.chunk().await.map_err(http_error)? {
        if body.len() + chunk.len() > limit {
            return Err(AuthError::Http(format!("answer larger than {limit} bytes")));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}

/// A reqwest error with its causes, without its URL (whose query may carry a code or state).
fn http_error(e: reqwest::Error) -> AuthError {
    AuthError::Http(crate::transport::http::common::error_text(e))
}

/// A URL for logs and errors: scheme, host, port and path only.
pub(crate) fn redact(url: &Url) -> String {
    let mut url = url.clone();
    url.set_query(None);
    url.set_fragment(None);
    let _ = url.set_password(None);
    let _ = url.set_username("");
    url.to_string()
}

/// `application/x-www-form-urlencoded` (the WHATWG serializer: unreserved bytes as they are,
/// space as `+`, everything else percent-encoded).
pub(crate) fn encode_form(pairs: &[(&str, String)]) -> String {
    let mut out = String::new();
    for (name, value) in pairs {
        if !out.is_empty() {
            out.push('&');
        }
        out.push_str(&form_escape(name));
        out.push('=');
        out.push_str(&form_escape(value));
    }
    out
}

/// One value form-urlencoded (also the encoding of `client_secret_basic` credentials, RFC 6749
/// §2.3.1).
pub(crate) fn form_escape(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

/// `localhost` (and its subdomains), `127.0.0.0/8`, `::1`.
pub(crate) fn is_loopback_host(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    if host == "localhost" || host.ends_with(".localhost") {
        return true;
    }
    host.parse::<IpAddr>()
        .is_ok_and(|ip| ip.is_loopback() || mapped_v4(ip).is_some_and(|v4| v4.is_loopback()))
}

fn mapped_v4(ip: IpAddr) -> Option<Ipv4Addr> {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped(),
        IpAddr::V4(_) => None,
    }
}

/// True for loopback and for addresses routed on the public internet; false for private,
/// link-local, shared (CGNAT), unspecified, multicast, documentation and unique-local ranges.
pub(crate) fn is_public_or_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => public_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => public_v4(v4),
            None => public_v6(v6),
        },
    }
}

fn public_v4(ip: Ipv4Addr) -> bool {
    if ip.is_loopback() {
        return true;
    }
    let [a, b, c, _] = ip.octets();
    !(ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b))
        || (a == 192 && b == 0 && c == 0)
        || (a == 198 && (b == 18 || b == 19))
        || a >= 240)
}

fn public_v6(ip: Ipv6Addr) -> bool {
    if ip.is_loopback() {
        return true;
    }
    let first = ip.segments()[0];
    !(ip.is_unspecified()
        || ip.is_multicast()
        || (first & 0xfe00) == 0xfc00
        || (first & 0xffc0) == 0xfe80
        || (first == 0x2001 && ip.segments()[1] == 0x0db8)
        || (first == 0x0064 && ip.segments()[1] == 0xff9b))
}

/// Resolves with the system resolver and refuses a name with a non-public address (unless its
/// host is trusted or private addresses are allowed): the check happens on the addresses
/// actually connected to, so DNS cannot point a public name at the local network.
struct PublicResolver {
    trusted: Arc<Trusted>,
    allow_private: bool,
}

impl reqwest::dns::Resolve for PublicResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_owned();
        let allowed = self.allow_private || self.trusted.contains(&host);
        Box::pin(async move {
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if !allowed && let Some(bad) = addrs.iter().find(|a| !is_public_or_loopback(a.ip())) {
                let error = format!("{host} resolves to the non-public address {}", bad.ip());
                return Err(error.into());
            }
            let addrs: reqwest::dns::Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

/// A header value marked sensitive.
pub(crate) fn sensitive(value: &str) -> Result<HeaderValue, AuthError> {
    let mut value = HeaderValue::from_str(value)
        .map_err(|_| AuthError::Config("a credential that is not a valid header".into()))?;
    value.set_sensitive(true);
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_ranges() {
        for public in ["8.8.8.8", "1.1.1.1", "2606:4700::1111", "127.0.0.1", "127.3.4.5", "::1"] {
            assert!(is_public_or_loopback(public.parse().unwrap()), "{public}");
        }
        for private in [
            "10.0.0.1",
            "172.16.5.4",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::",
            "fd00::1",
            "fe80::1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "224.0.0.1",
        ] {
            assert!(!is_public_or_loopback(private.parse().unwrap()), "{private}");
        }
    }

    #[test]
    fn url_policy() {
        let fetcher = Fetcher::new(FetchPolicy::default()).unwrap();
        for ok in [
            "https://as.example.com/.well-known/oauth-authorization-server",
            "http://localhost:8080/x",
            "http://127.0.0.1:1/x",
            "http://[::1]:1/x",
        ] {
            assert!(fetcher.check_url(&Url::parse(ok).unwrap()).is_ok(), "{ok}");
        }
        for bad in [
            "http://as.example.com/x",
            "ftp://localhost/x",
            "https://10.1.2.3/x",
            "https://[fe80::1]/x",
            "https://user:pw@as.example.com/x",
        ] {
            assert!(fetcher.check_url(&Url::parse(bad).unwrap()).is_err(), "{bad}");
        }
        fetcher.trust_host_of(&Url::parse("https://10.1.2.3/mcp").unwrap());
        assert!(fetcher.check_url(&Url::parse("https://10.1.2.3/x").unwrap()).is_ok());
    }

    #[test]
    fn form_encoding() {
        let form = encode_form(&[("a b", "x&y=z".into()), ("scope", "mcp:read mcp:write".into())]);
        assert_eq!(form, "a+b=x%26y%3Dz&scope=mcp%3Aread+mcp%3Awrite");
        assert_eq!(form_escape("id:1/é"), "id%3A1%2F%C3%A9");
    }

    #[test]
    fn redaction_drops_query_and_credentials() {
        let url = Url::parse("https://u:p@as.example.com/cb?code=secret#frag").unwrap();
        assert_eq!(redact(&url), "https://as.example.com/cb");
    }
}
