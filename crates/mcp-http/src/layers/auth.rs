//! Authorization as a layer: the bearer (or DPoP) token checked before any layer inside it
//! runs (step 4 of docs/DECISIONS.md's order), the caller handed on to the endpoint.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::response::Response;
use http::Request;
use tower::{Layer, Service};

use crate::auth::Authenticator;

/// Authenticates each request as the OAuth 2.1 resource server of [`HttpConfig::auth`]:
/// `401`/`403` with `WWW-Authenticate` challenges, `503` when the authorization server cannot
/// be reached (see the [`auth`](crate::auth) module). The Protected Resource Metadata paths
/// pass unauthenticated (the document is public). An authenticated caller travels with the
/// request to the endpoint, which then authenticates nothing again.
///
/// Made by [`McpHttp::auth_layer`](crate::McpHttp::auth_layer), sharing that transport's key
/// caches and DPoP replay cache. Without this layer in a stack, the endpoint authenticates
/// each request itself, at its place in the default order (after the method check): with
/// authorization configured, no request is served unauthenticated whatever the stack.
///
/// [`HttpConfig::auth`]: crate::HttpConfig::auth
#[derive(Clone)]
pub struct AuthLayer {
    auth: Arc<Authenticator>,
    public: Arc<[String]>,
}

impl AuthLayer {
    pub(crate) fn new(auth: Arc<Authenticator>, public: Vec<String>) -> Self {
        AuthLayer { auth, public: public.into() }
    }
}

impl std::fmt::Debug for AuthLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthLayer").field("resource", &self.auth.config.resource).finish_non_exhaustive()
    }
}

impl<S> Layer<S> for AuthLayer {
    type Service = Auth<S>;

    fn layer(&self, inner: S) -> Auth<S> {
        Auth { inner, layer: self.clone() }
    }
}

/// The service of [`AuthLayer`].
#[derive(Clone)]
pub struct Auth<S> {
    inner: S,
    layer: AuthLayer,
}

impl<S> std::fmt::Debug for Auth<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Auth").field("layer", &self.layer).finish_non_exhaustive()
    }
}

impl<S, B> Service<Request<B>> for Auth<S>
where
    S: Service<Request<B>, Response = Response> + Clone + Send + 'static,
    S::Future: Send + 'static,
    B: Send + 'static,
{
    type Response = Response;
    type Error = S::Error;
    // Validation may fetch keys or introspect: an async step whose future cannot be named, so
    // it is boxed (only in stacks that place this layer).
    type Future = Pin<Box<dyn Future<Output = Result<Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<B>) -> Self::Future {
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        if self.layer.public.iter().any(|p| p == request.uri().path()) {
            return Box::pin(inner.call(request));
        }
        let auth = self.layer.auth.clone();
        Box::pin(async move {
            let (method, uri) = (request.method(), request.uri());
            match auth.authenticate(method, uri.path(), uri.query(), request.headers()).await {
                Ok(authenticated) => {
                    request.extensions_mut().insert(authenticated);
                    inner.call(request).await
                }
                Err(denial) => Ok(auth.refuse(&denial)),
            }
        })
    }
}
