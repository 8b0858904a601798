//! Tells the server's observer (`mcp_server::observe`) what only the transport sees: requests
//! it refused before the server saw them (an HTTP status ≥ 400 that no server reply produced:
//! a bad `Host` or `Origin`, a missing token, a body too large, an unknown session, headers
//! that contradict the body, ...) and the bytes of bodies whose length is known up front
//! (request bodies with a `Content-Length`, JSON answers; not SSE streams).

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use http::HeaderMap;
use mcp_server::Observer;
use mcp_server::observe::{TransportRefusal, method_label};

/// Marks a response made from a server's reply: the server told the observer already.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Answered;

/// A body's length when it is known before it is sent (a JSON answer's; not a stream's).
fn length(headers: &HeaderMap, body: &axum::body::Body) -> u64 {
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

pub(crate) async fn observe(
    State(observer): State<Arc<dyn Observer>>,
    request: Request,
    next: Next,
) -> Response {
    let started = Instant::now();
    let method = match request.headers().get("mcp-method").and_then(|v| v.to_str().ok()) {
        Some(method) => method_label(method),
        None => "unknown",
    };
    let received = length(request.headers(), request.body());
    let response = next.run(request).await;
    observer.bytes(received, length(response.headers(), response.body()));
    let status = response.status().as_u16();
    if status >= 400 && response.extensions().get::<Answered>().is_none() {
        observer.refused(&TransportRefusal::new(method, status, None, started.elapsed()));
    }
    response
}
