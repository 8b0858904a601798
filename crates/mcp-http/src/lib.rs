//! Streamable HTTP for MCP servers: one endpoint for every era a client may speak, hardened
//! for the open network.
//!
//! * **Modern (2026-07-28):** every message is a POST; a request is answered with JSON, or
//!   with an SSE stream when the handler sends progress or log messages first; the standard
//!   headers are checked against the body (`400` `-32020` on a mismatch); closing the stream
//!   cancels the request; `subscriptions/listen` is a long-lived SSE stream with keep-alive
//!   comments; no session ids.
//! * **Legacy Streamable HTTP (2025-03-26 … 2025-11-25):** `initialize` mints an
//!   `Mcp-Session-Id` (128-bit CSPRNG); the GET stream; server→client requests on the POST's
//!   SSE stream with answers POSTed back; resumable streams (event ids, a priming event with
//!   `retry`, `Last-Event-ID` replay from an [`EventStore`]); `DELETE` ends a session; an
//!   unknown session is `404`; a disconnect does not cancel.
//! * **Deprecated HTTP+SSE (2024-11-05):** `GET /sse` opens a stream whose first event names
//!   `POST /messages?sessionId=…`; POSTs are answered `202` and every server message,
//!   responses included, travels on the stream; the session ends with its stream.
//! * **Hardened by default:** Host and Origin allowlists (`403`), `Content-Type` (`415`),
//!   `Accept` (`406`), body size (`413`), bodies and requests in flight (`503` with
//!   `Retry-After`), header and body read timeouts, the size of the request head (`431`),
//!   exactly one `Host` (`400`), and — standalone — a send timeout that closes connections
//!   whose client stopped reading; long-lived streams with slots of their own (in total and
//!   per caller, `503`), legacy sessions capped in total and per caller (the idlest evicted),
//!   replay data within a byte budget.
//!
//! [`McpHttp::router`] gives an axum `Router` (a `tower::Service`) to mount into an existing
//! application; [`serve`] runs it standalone.
//!
//! The checks are `tower` layers ([`layers`]): [`McpHttp::routes`] with a
//! `tower::ServiceBuilder` of your own reorders them, leaves some out, or adds your own beside
//! them (an API key, a rate limit), with the MCP answers unchanged.
//!
//! * **Authorization (optional, feature `oauth`, on by default; `AuthConfig`):** the server as an OAuth 2.1 resource server —
//!   Protected Resource Metadata (RFC 9728), `401`/`403` with `WWW-Authenticate` challenges
//!   before any body is read, JWT validation against the issuer's JWKS or token introspection
//!   (RFC 7662), audience and issuer checks, required scopes per request and per tool, DPoP
//!   (RFC 9449), legacy sessions bound to their principal, and the principal handed to handlers
//!   ([`mcp_server::Principal`]). See the `auth` module for the refusals.
//!
//! What it does not do: decide anything the protocol router decides (JSON-RPC errors after
//! dispatch come from `mcp-server`), or issue tokens (that is the authorization server's job).

#![warn(missing_docs)]

#[cfg(feature = "oauth")]
pub mod auth;
mod budget;
mod caller;
mod config;
mod events;
mod exchange;
mod front;
mod gate;
mod guard;
mod headers;
mod intake;
pub mod layers;
mod legacy_sse;
mod limits;
mod sealed;
mod send_timeout;
mod serve;
mod service;
mod session;
mod sse;

use std::sync::Arc;

use mcp_server::Server;

#[cfg(feature = "oauth")]
pub use auth::{
    AuthConfig, AuthConfigBuilder, AuthConfigError, DpopConfig, Introspection, JwtValidation, TokenValidation,
};
pub use config::HttpConfig;
pub use events::{DEFAULT_MAX_REPLAY_BYTES, EventStore, MemoryEventStore};
pub use exchange::http_status;
/// Signature algorithms, as [`JwtValidation`] and [`DpopConfig`] name them.
#[cfg(feature = "oauth")]
pub use mcp_auth::jose::Algorithm;
pub use sealed::SessionKey;
#[doc(hidden)]
pub use sealed::bench_seal_and_open;
pub use serve::{Bound, ConnectionLimits, bind, serve, serve_app_until, serve_until};
pub use session::session_label;

/// The wire codecs (header values, event ids, SSE events), reachable only for the fuzz targets
/// and property tests; not part of the API.
#[doc(hidden)]
pub mod codec {
    pub use crate::events::parse_id;
    pub use crate::headers::{annotated_parameters, check_parameters, decode_value};
    pub use crate::sse::{event, event_with_id, priming};
}

/// The Streamable HTTP transport of a [`Server`].
#[derive(Clone)]
pub struct McpHttp {
    state: Arc<service::HttpState>,
}

impl std::fmt::Debug for McpHttp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHttp").field("endpoint", &self.state.config.endpoint).finish_non_exhaustive()
    }
}

impl McpHttp {
    /// The transport for `server` with these settings.
    pub fn new(server: Server, config: HttpConfig) -> Self {
        McpHttp { state: Arc::new(service::HttpState::new(server, config)) }
    }

    /// The transport for `server`, keeping the events of resumable streams in `store` instead
    /// of the default [`MemoryEventStore`] (then [`HttpConfig::max_replay_bytes`] does not
    /// apply: the store keeps its own bounds).
    pub fn with_event_store(server: Server, config: HttpConfig, store: Arc<dyn EventStore>) -> Self {
        McpHttp { state: Arc::new(service::HttpState::with_event_store(server, config, store)) }
    }

    /// An axum router serving the MCP endpoint (`config.endpoint`, `/mcp` by default), the
    /// HTTP+SSE `/sse` and `/messages`, and — with `HttpConfig::auth` set — the Protected
    /// Resource Metadata under `/.well-known/oauth-protected-resource`. Mount it with
    /// `Router::merge` (at the root: DPoP proofs name the request's path, and the metadata is
    /// found by its well-known path) or serve it as a `tower::Service`.
    ///
    /// Every check of docs/DECISIONS.md's order is in place: [`layers::HeadLayer`]'s on every
    /// route, [`layers::HostGuardLayer`]'s on the MCP routes, then the endpoint's own. The
    /// endpoint's handler makes the first two itself, in that order, rather than through
    /// layers (each layer of an axum route costs a boxed service cloned and a boxed future per
    /// request); the other routes have the layers. For a stack of your own, start from
    /// [`routes`](Self::routes).
    ///
    /// A server with an observer (`Server::observe`, set before this is called) that
    /// [watches the transport](mcp_server::Observer::watches_transport) is also told the
    /// requests refused here before it saw them, with their HTTP status, and the bytes of
    /// bodies whose length is declared.
    pub fn router(&self) -> axum::Router {
        // The request head is checked first, for every route (docs/DECISIONS.md order): by the
        // endpoint's own handler for the endpoint (`front`), by a layer for the others — with
        // an observer, by the observing layer itself (one layer of the router, not two).
        let head = self.head_layer();
        let guard = self.host_guard_layer();
        let front = front::Front::checked(self.state.clone(), head, guard.clone());
        let others = self.others(Some(guard));
        let others = match self.state.server.observer() {
            Some(observer) if observer.watches_transport() => {
                others.layer(layers::observe::ObserveLayer { observer: observer.clone(), head })
            }
            _ => others.layer(head),
        };
        // `others` last: its fallback (axum's 404, behind the same layer) is the one kept.
        self.endpoint(front).merge(others)
    }

    /// The same routes as [`router`](Self::router) without the head and Host/Origin checks:
    /// the base of a custom stack (see the [`layers`] module). The endpoint still checks the
    /// method, `Content-Type` and `Accept`, authorizes (when configured) and admits each POST
    /// within the budgets unless an [`AuthLayer`](layers::AuthLayer) or
    /// [`LimitsLayer`](layers::LimitsLayer) in front already did.
    pub fn routes(&self) -> axum::Router {
        self.endpoint(front::Front::bare(self.state.clone())).merge(self.others(None))
    }

    /// [`layers::HeadLayer`] with this transport's header limits.
    pub fn head_layer(&self) -> layers::HeadLayer {
        layers::HeadLayer::from_config(&self.state.config)
    }

    /// [`layers::HostGuardLayer`] with this transport's allowlists.
    pub fn host_guard_layer(&self) -> layers::HostGuardLayer {
        layers::HostGuardLayer::from_config(&self.state.config)
    }

    /// [`layers::LimitsLayer`] over this transport's budgets (shared with its endpoint and its
    /// HTTP+SSE routes).
    pub fn limits_layer(&self) -> layers::LimitsLayer {
        layers::LimitsLayer::new(self.state.clone())
    }

    /// [`layers::AuthLayer`] for this transport's authorization (its key and replay caches),
    /// or `None` when [`HttpConfig::auth`] is not set — `ServiceBuilder::option_layer` takes
    /// either.
    #[cfg(feature = "oauth")]
    pub fn auth_layer(&self) -> Option<layers::AuthLayer> {
        let auth = self.state.auth.as_ref()?;
        let public = auth::metadata_paths(&self.state.config, &auth.config);
        Some(layers::AuthLayer::new(auth.clone(), public))
    }

    /// The MCP endpoint's route, with what `front` checks and tells in front of it.
    fn endpoint(&self, front: front::Front) -> axum::Router {
        self.expire_sessions();
        let path = self.state.config.endpoint.clone();
        axum::Router::new().route(&path, axum::routing::any(front::endpoint)).with_state(Arc::new(front))
    }

    /// Every route but the endpoint: the HTTP+SSE transport's and — with authorization — the
    /// Protected Resource Metadata, `guard` in front of the former.
    fn others(&self, guard: Option<layers::HostGuardLayer>) -> axum::Router {
        let state = self.state.clone();
        #[allow(unused_mut)] // only the `oauth` feature adds routes
        let mut router = legacy_sse::routes(state.clone(), guard);
        #[cfg(feature = "oauth")]
        if let Some(auth) = &state.auth {
            // Public; checks its `Host` itself (never `Origin`).
            router = router.merge(auth::metadata_routes(&state.config, &auth.config));
        }
        router
    }

    /// Closes the sessions idle past their limit, while this transport is in use.
    fn expire_sessions(&self) {
        let Ok(handle) = tokio::runtime::Handle::try_current() else { return };
        let weak = Arc::downgrade(&self.state);
        let idle = self.state.config.session_idle;
        handle.spawn(async move {
            // Often enough that a session outlives its idle limit by at most a quarter of it.
            let every =
                (idle / 4).clamp(std::time::Duration::from_millis(50), std::time::Duration::from_secs(60));
            let mut tick = tokio::time::interval(every);
            loop {
                tick.tick().await;
                let Some(state) = weak.upgrade() else { return };
                state.sessions.expire(state.config.session_idle);
            }
        });
    }
}
