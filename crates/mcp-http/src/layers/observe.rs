//! Tells the server's observer (`mcp_server::observe`) what only the transport sees: requests
//! it refused before the server saw them (an HTTP status ≥ 400 that no server reply produced:
//! a bad `Host` or `Origin`, a missing token, a body too large, an unknown session, headers
//! that contradict the body, ...) and the bytes of bodies whose length is known up front
//! (request bodies with a `Content-Length`, JSON answers; not SSE streams). A layer of its own
//! future, so that observing costs no allocation per request; it also checks the request head
//! ([`HeadLayer`]'s check, first as before), because every layer of an axum `Router` costs a
//! boxed service cloned and a future boxed per request.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use axum::body::Body;
use axum::response::Response;
use http::{HeaderMap, Request};
use mcp_server::Observer;
use mcp_server::observe::{TransportRefusal, method_label};
use tower::{Layer, Service};

use super::{HeadLayer, ResponseFuture};
use crate::guard::Refusal;

/// Marks a response made from a server's reply: the server told the observer already.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Answered;

/// The lowest status that counts as a refusal, unless the response is [`Answered`].
pub(crate) const REFUSED_FROM: u16 = 400;

/// Tells `observer` the bytes of a request and of its `response`, and the refusal when the
/// transport refused it (a status of [`REFUSED_FROM`] or more that no server reply made).
pub(crate) fn tell(
    observer: &dyn Observer,
    method: impl FnOnce() -> &'static str,
    received: u64,
    started: Instant,
    response: &Response,
) {
    observer.bytes(received, length(response.headers(), response.body()));
    let status = response.status().as_u16();
    if status >= REFUSED_FROM && response.extensions().get::<Answered>().is_none() {
        observer.refused(&TransportRefusal::new(method(), status, None, started.elapsed()));
    }
}

/// The label of a request's `Mcp-Method` (`unknown` without one).
pub(crate) fn label(found: Option<&http::HeaderValue>) -> &'static str {
    match found.and_then(|v| v.to_str().ok()) {
        Some(method) => method_label(method),
        None => "unknown",
    }
}

/// `head`'s check of the request, and the label of its `Mcp-Method`: found on the check's walk
/// over the fields (the first of that name, as a lookup finds it), not looked up by a hash of
/// its name — looked up only when the head was refused before the walk (too many fields).
pub(crate) fn check_head(head: &HeadLayer, request: &Request<Body>) -> (Result<(), Refusal>, &'static str) {
    let mut found = None;
    let checked = head.check_seeing(request, |name, value| {
        if found.is_none() && name == crate::headers::MCP_METHOD {
            found = Some(value);
        }
    });
    if checked.is_err() && found.is_none() {
        found = request.headers().get(&crate::headers::MCP_METHOD);
    }
    (checked, label(found))
}

/// A body's length when it is known before it is sent (a JSON answer's; not a stream's).
pub(crate) fn length(headers: &HeaderMap, body: &Body) -> u64 {
    use axum::body::HttpBody;
    body.size_hint()
        .exact()
        .or_else(|| {
            headers
                .get(http::header::CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// Observes the requests and checks their head with `head` before anything else runs.
#[derive(Clone)]
pub(crate) struct ObserveLayer {
    pub(crate) observer: Arc<dyn Observer>,
    pub(crate) head: HeadLayer,
}

impl<S> Layer<S> for ObserveLayer {
    type Service = Observe<S>;

    fn layer(&self, inner: S) -> Observe<S> {
        Observe { inner, observer: self.observer.clone(), head: self.head }
    }
}

#[derive(Clone)]
pub(crate) struct Observe<S> {
    inner: S,
    observer: Arc<dyn Observer>,
    head: HeadLayer,
}

impl<S> Service<Request<Body>> for Observe<S>
where
    S: Service<Request<Body>, Response = Response>,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Observed<ResponseFuture<S::Future>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let (checked, method) = check_head(&self.head, &request);
        let received = length(request.headers(), request.body());
        let inner = match checked {
            Ok(()) => ResponseFuture::inner(self.inner.call(request)),
            Err(refused) => ResponseFuture::refused(super::guards::refusal(refused)),
        };
        Observed { inner, observer: self.observer.clone(), method, received, started: Instant::now() }
    }
}

pin_project_lite::pin_project! {
    pub(crate) struct Observed<F> {
        #[pin]
        inner: F,
        observer: Arc<dyn Observer>,
        method: &'static str,
        received: u64,
        started: Instant,
    }
}

impl<F, E> Future for Observed<F>
where
    F: Future<Output = Result<Response, E>>,
{
    type Output = Result<Response, E>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let response = match this.inner.poll(cx) {
            Poll::Ready(Ok(response)) => response,
            other => return other,
        };
        let method = *this.method;
        tell(&**this.observer, || method, *this.received, *this.started, &response);
        Poll::Ready(Ok(response))
    }
}
