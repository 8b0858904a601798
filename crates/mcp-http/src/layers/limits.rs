//! Per-request admission as a layer: a POST's request slot (in total, and its principal's when
//! the caller is known by then), its bytes charged against the bytes in flight before they are
//! read, its size and read deadline (steps 7 and 8 of docs/DECISIONS.md's order).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::response::Response;
use http::{Method, Request};
use tower::{BoxError, Layer, Service};

use crate::caller::Authenticated;
use crate::intake::{self, Admitted};
use crate::service::HttpState;

/// Admits a POST within the transport's budgets ([`HttpConfig::max_in_flight`],
/// [`HttpConfig::max_in_flight_per_principal`], [`HttpConfig::max_bodies_in_flight`],
/// [`HttpConfig::max_body`], [`HttpConfig::body_read_timeout`]) before the layers inside it
/// run: `503` + `Retry-After` when a slot or the bytes are not to be had, `413`, `408`, `400`.
/// The body is read here, once, and passed on whole; the slots travel with the request to
/// the endpoint, which holds them until the request is answered. Other methods pass through.
///
/// Made by [`McpHttp::limits_layer`](crate::McpHttp::limits_layer), sharing the budgets of
/// that transport. Without this layer in a stack, the endpoint admits each POST itself, at its
/// place in the default order (after `Content-Type` and `Accept`): leaving the layer out moves
/// the budgets back there, it never turns them off. Put it inside `AuthLayer` for the
/// per-principal share to be taken here; outside it, that share is taken at the endpoint.
///
/// [`HttpConfig::max_in_flight`]: crate::HttpConfig::max_in_flight
/// [`HttpConfig::max_in_flight_per_principal`]: crate::HttpConfig::max_in_flight_per_principal
/// [`HttpConfig::max_bodies_in_flight`]: crate::HttpConfig::max_bodies_in_flight
/// [`HttpConfig::max_body`]: crate::HttpConfig::max_body
/// [`HttpConfig::body_read_timeout`]: crate::HttpConfig::body_read_timeout
#[derive(Clone)]
pub struct LimitsLayer {
    state: Arc<HttpState>,
}

impl LimitsLayer {
    pub(crate) fn new(state: Arc<HttpState>) -> Self {
        LimitsLayer { state }
    }
}

impl std::fmt::Debug for LimitsLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LimitsLayer")
            .field("max_in_flight", &self.state.config.max_in_flight)
            .finish_non_exhaustive()
    }
}

impl<S> Layer<S> for LimitsLayer {
    type Service = Limits<S>;

    fn layer(&self, inner: S) -> Limits<S> {
        Limits { inner, state: self.state.clone() }
    }
}

/// The service of [`LimitsLayer`].
#[derive(Clone)]
pub struct Limits<S> {
    inner: S,
    state: Arc<HttpState>,
}

impl<S> std::fmt::Debug for Limits<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Limits").finish_non_exhaustive()
    }
}

impl<S, B> Service<Request<B>> for Limits<S>
where
    S: Service<Request<Body>, Response = Response> + Clone + Send + 'static,
    S::Future: Send + 'static,
    B: axum::body::HttpBody<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response;
    type Error = S::Error;
    // The body is read before the inner service is called: an async step whose future cannot
    // be named, so it is boxed (only in stacks that place this layer).
    type Future = Pin<Box<dyn Future<Output = Result<Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        // The clone that was made ready is the one called (tower's usual swap).
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let request = request.map(Body::new);
        if request.method() != Method::POST {
            return Box::pin(inner.call(request));
        }
        let state = self.state.clone();
        Box::pin(async move {
            let (mut parts, body) = request.into_parts();
            let auth = parts.extensions.get::<Authenticated>();
            match intake::read_post(&state, &parts.headers, body, auth).await {
                Err(refusal) => Ok(refusal),
                Ok((bytes, permits)) => {
                    parts.extensions.insert(Admitted::new(permits));
                    inner.call(Request::from_parts(parts, Body::from(bytes))).await
                }
            }
        })
    }
}
