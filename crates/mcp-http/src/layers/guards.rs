//! The checks of the request head that need no state: its size and its one `Host` (step 0 of
//! docs/DECISIONS.md's order), and the Host/Origin allowlists against DNS rebinding and
//! cross-site requests (steps 1 and 2).

use std::sync::Arc;
use std::task::{Context, Poll};

use axum::response::{IntoResponse, Response};
use http::Request;
use tower::{Layer, Service};

use super::ResponseFuture;
use crate::config::HttpConfig;
use crate::guard::{self, Refusal};

/// Where RFC 9728 puts the Protected Resource Metadata.
const WELL_KNOWN_METADATA: &str = "/.well-known/oauth-protected-resource";

pub(crate) fn refusal(r: Refusal) -> Response {
    (r.status, r.reason).into_response()
}

/// Refuses a request head over the header limits (`431`) or without exactly one `Host` in
/// HTTP/1.1 (`400`). The standalone server's connection applies the same limits while it reads
/// the head; this layer holds them for a router mounted in another server.
#[derive(Debug, Clone, Copy)]
pub struct HeadLayer {
    max_headers: usize,
    max_header_bytes: usize,
}

impl HeadLayer {
    /// At most `max_headers` fields of at most `max_header_bytes` together (each counted as
    /// sent: name, `": "`, value, CRLF).
    pub fn new(max_headers: usize, max_header_bytes: usize) -> Self {
        HeadLayer { max_headers, max_header_bytes }
    }

    /// The limits of `config` ([`HttpConfig::max_headers`], [`HttpConfig::max_header_bytes`]).
    pub fn from_config(config: &HttpConfig) -> Self {
        Self::new(config.max_headers, config.max_header_bytes)
    }

    /// The check itself: `Err` holds the refusal to answer with ([`refusal`]).
    pub(crate) fn check<B>(&self, request: &Request<B>) -> Result<(), Refusal> {
        guard::head(self.max_headers, self.max_header_bytes, request.version(), request.headers())
    }

    /// The check, showing `each` the fields it walks ([`guard::head_seeing`]).
    pub(crate) fn check_seeing<'h, B>(
        &self,
        request: &'h Request<B>,
        each: impl FnMut(&'h http::HeaderName, &'h http::HeaderValue),
    ) -> Result<(), Refusal> {
        guard::head_seeing(
            self.max_headers,
            self.max_header_bytes,
            request.version(),
            request.headers(),
            each,
        )
    }
}

impl<S> Layer<S> for HeadLayer {
    type Service = Head<S>;

    fn layer(&self, inner: S) -> Head<S> {
        Head { inner, limits: *self }
    }
}

/// The service of [`HeadLayer`].
#[derive(Debug, Clone)]
pub struct Head<S> {
    inner: S,
    limits: HeadLayer,
}

impl<S, B> Service<Request<B>> for Head<S>
where
    S: Service<Request<B>, Response = Response>,
{
    type Response = Response;
    type Error = S::Error;
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        match self.limits.check(&request) {
            Ok(()) => ResponseFuture::inner(self.inner.call(request)),
            Err(refused) => ResponseFuture::refused(refusal(refused)),
        }
    }
}

/// The DNS-rebinding guard: a `Host` outside the allowlist (when it is not empty) and an
/// `Origin` outside its allowlist (`null` never passes; a request without `Origin` does) are
/// refused with `403` before anything else reads the request. The Protected Resource Metadata
/// (`/.well-known/oauth-protected-resource…`) is checked for `Host` only: it is public.
#[derive(Debug, Clone)]
pub struct HostGuardLayer {
    hosts: Arc<[String]>,
    origins: Arc<[String]>,
}

impl HostGuardLayer {
    /// Accepts these `Host` values (`host:port`, compared case-insensitively; none: any) and
    /// these `Origin` values.
    pub fn new<H, O>(hosts: H, origins: O) -> Self
    where
        H: IntoIterator,
        H::Item: Into<String>,
        O: IntoIterator,
        O::Item: Into<String>,
    {
        HostGuardLayer {
            hosts: hosts.into_iter().map(Into::into).collect(),
            origins: origins.into_iter().map(Into::into).collect(),
        }
    }

    /// The allowlists of `config` ([`HttpConfig::allowed_hosts`], [`HttpConfig::allowed_origins`];
    /// [`HttpConfig::for_bind`] fills them for a loopback server).
    pub fn from_config(config: &HttpConfig) -> Self {
        HostGuardLayer {
            hosts: config.allowed_hosts.iter().cloned().collect(),
            origins: config.allowed_origins.iter().cloned().collect(),
        }
    }
}

impl HostGuardLayer {
    /// The check itself: `Err` holds the refusal to answer with ([`refusal`]).
    pub(crate) fn check<B>(&self, request: &Request<B>) -> Result<(), Refusal> {
        // The Protected Resource Metadata is public and read cross-origin by browser-based
        // clients: Host only (as its own route checks when the default router serves it).
        if request.uri().path().starts_with(WELL_KNOWN_METADATA) {
            guard::host(&self.hosts, request.headers())
        } else {
            guard::host_and_origin(&self.hosts, &self.origins, request.headers())
        }
    }
}

impl<S> Layer<S> for HostGuardLayer {
    type Service = HostGuard<S>;

    fn layer(&self, inner: S) -> HostGuard<S> {
        HostGuard { inner, lists: self.clone() }
    }
}

/// The service of [`HostGuardLayer`].
#[derive(Debug, Clone)]
pub struct HostGuard<S> {
    inner: S,
    lists: HostGuardLayer,
}

impl<S, B> Service<Request<B>> for HostGuard<S>
where
    S: Service<Request<B>, Response = Response>,
{
    type Response = Response;
    type Error = S::Error;
    type Future = ResponseFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        match self.lists.check(&request) {
            Ok(()) => ResponseFuture::inner(self.inner.call(request)),
            Err(r) => ResponseFuture::refused(refusal(r)),
        }
    }
}
