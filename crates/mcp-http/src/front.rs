//! What [`McpHttp::router`](crate::McpHttp::router) puts in front of the MCP endpoint — the
//! head check, the Host/Origin allowlists and the observer's view of the transport — done by
//! the endpoint's own handler rather than by layers around it.
//!
//! An axum route clones its boxed service, and boxes its future, at each layer for every
//! request; a layer that holds an `Arc` also counts it up and down, on a count every thread
//! shares. The endpoint is the busiest route, so its checks and its observation run here, in
//! the order the layers keep (the head, then `Host` and `Origin`, then the endpoint's own),
//! borrowing the observer from the route's state. The other routes (HTTP+SSE, the metadata,
//! the fallback) keep the layers: [`layers::HeadLayer`](crate::layers::HeadLayer),
//! [`layers::HostGuardLayer`](crate::layers::HostGuardLayer) and the observing layer.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::response::Response;
use mcp_server::Observer;

use crate::guard::Refusal;
use crate::layers::observe::{label, length, tell};
use crate::layers::{HeadLayer, HostGuardLayer};
use crate::service::{self, HttpState};

/// The endpoint's route state: the transport's, and what this router checks and tells.
pub(crate) struct Front {
    pub(crate) http: Arc<HttpState>,
    /// The head and Host/Origin checks (`router`), or none (`routes`: the application's stack
    /// checks what it wants).
    checks: Option<(HeadLayer, HostGuardLayer)>,
    /// The observers that watch the transport (`router`, with any), each told directly
    /// rather than through the server's list (`mcp_server::observe::narrowed`).
    observers: Box<[Arc<dyn Observer>]>,
}

impl Front {
    /// The endpoint as `routes` serves it: nothing in front.
    pub(crate) fn bare(http: Arc<HttpState>) -> Front {
        Front { http, checks: None, observers: Box::new([]) }
    }

    /// The endpoint as `router` serves it: checked, and observed when the server's observer
    /// watches the transport.
    pub(crate) fn checked(http: Arc<HttpState>, head: HeadLayer, guard: HostGuardLayer) -> Front {
        let observers = match http.server.observer() {
            Some(observer) => mcp_server::observe::narrowed(observer, |o| o.watches_transport()),
            None => Box::new([]),
        };
        Front { http, checks: Some((head, guard)), observers }
    }
}

/// What the observer is told of a request once it is answered.
struct Watched {
    method: MethodHeader,
    received: u64,
    started: Instant,
}

/// The request's `Mcp-Method`, as sent: its label ([`label`]) is made only for a refusal, the
/// only thing the observer is told it for, so an answered request spends no lookup in the
/// methods' names on it. A value too long to keep here is no method's name (`other`), unless
/// it is not text at all (`unknown`), as [`label`] says.
struct MethodHeader {
    bytes: [u8; MethodHeader::KEPT],
    len: usize,
    /// Made at once: none sent, or too long to keep.
    label: Option<&'static str>,
}

impl MethodHeader {
    /// Longer than any method MCP defines (24 bytes).
    const KEPT: usize = 32;

    fn of(value: Option<&http::HeaderValue>) -> MethodHeader {
        let mut kept = MethodHeader { bytes: [0; Self::KEPT], len: 0, label: None };
        match value {
            Some(value) if value.len() <= Self::KEPT => {
                kept.bytes[..value.len()].copy_from_slice(value.as_bytes());
                kept.len = value.len();
            }
            _ => kept.label = Some(label(value)),
        }
        kept
    }

    /// Its label, as [`label`] makes it from the header.
    fn label(&self) -> &'static str {
        self.label.unwrap_or_else(|| match http::HeaderValue::from_bytes(&self.bytes[..self.len]) {
            Ok(value) => label(Some(&value)),
            Err(_) => label(None),
        })
    }
}

/// The MCP endpoint's handler: one path, observed or not, so that its future is one state
/// machine with the endpoint's inside (no second future around it to build and move).
pub(crate) async fn endpoint(State(front): State<Arc<Front>>, request: Request) -> Response {
    let (checked, watched) = front.before(&request);
    let response = match checked {
        Ok(()) => service::endpoint(&front.http, request, watched.as_ref().map(|w| w.started)).await,
        Err(refused) => crate::layers::refusal(refused),
    };
    if let Some(watched) = watched {
        for observer in &*front.observers {
            tell(&**observer, || watched.method.label(), watched.received, watched.started, &response);
        }
    }
    response
}

impl Front {
    /// The head and Host/Origin checks, in that order; with an observer, what it will be told.
    fn before(&self, request: &Request) -> (Result<(), Refusal>, Option<Watched>) {
        if self.observers.is_empty() {
            let checked = match &self.checks {
                Some((head, guard)) => head.check(request).and_then(|()| guard.check(request)),
                None => Ok(()),
            };
            return (checked, None);
        }
        let started = Instant::now();
        let checked = match &self.checks {
            Some((head, guard)) => head.check(request).and_then(|()| guard.check(request)),
            None => Ok(()),
        };
        let method = MethodHeader::of(request.headers().get(&crate::headers::MCP_METHOD));
        let watched = Watched { method, received: length(request.headers(), request.body()), started };
        (checked, Some(watched))
    }
}
