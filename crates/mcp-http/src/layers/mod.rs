//! The transport's checks as `tower` layers, to compose a stack of your own.
//!
//! [`McpHttp::router`](crate::McpHttp::router) is the default stack, in the order of
//! docs/DECISIONS.md: [`HeadLayer`]'s check on every route, [`HostGuardLayer`]'s on the MCP
//! routes (the endpoint's handler makes both itself, sparing the busiest route two layers),
//! then — inside the endpoint — the method (`405`), authorization, `Content-Type` (`415`),
//! `Accept` (`406`) and admission. [`McpHttp::routes`](crate::McpHttp::routes) is the same
//! routes without the head and Host/Origin checks, for a stack of your own:
//!
//! | layer | checks | left out |
//! |---|---|---|
//! | [`HeadLayer`] | header count and size (`431`), exactly one `Host` (`400`) | not checked (the standalone server's connection still limits the head) |
//! | [`HostGuardLayer`] | `Host` and `Origin` allowlists (`403`) | not checked: for a proxy that checks them, or rewrites `Host` |
//! | [`AuthLayer`] (feature `oauth`) | the access token (`401`/`403`, `503` when the authorization server is unreachable) | checked by the endpoint after its method check |
//! | [`LimitsLayer`] | a POST's slots and bytes in flight (`503`), body size (`413`), read deadline (`408`) | admitted by the endpoint after `Content-Type` and `Accept` |
//!
//! Leaving out authorization or admission moves them back to their place in the endpoint:
//! configured authorization and the budgets always apply (loosen the budgets in
//! [`HttpConfig`](crate::HttpConfig); serve without authorization by not configuring it).
//! A layer placed in front of them runs before them — your own API key check, rate limit or
//! request counter beside the transport's:
//!
//! ```no_run
//! # async fn run(http: mcp_http::McpHttp) {
//! use mcp_http::layers::{HeadLayer, HostGuardLayer};
//! use tower::ServiceBuilder;
//!
//! let stack = ServiceBuilder::new()
//!     .layer(HeadLayer::new(100, 64 * 1024))
//!     .layer(HostGuardLayer::new(["localhost:8080"], ["http://localhost:8080"]))
//!     // your own layers here, e.g. `.layer(axum::middleware::from_fn(check_api_key))`
//!     .layer(http.limits_layer());
//! let app = http.routes().layer(stack);
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await.unwrap();
//! axum::serve(listener, app.into_make_service_with_connect_info::<std::net::SocketAddr>())
//!     .await
//!     .unwrap();
//! # }
//! ```
//!
//! Whatever the stack, the body is read once and parsed once, by the endpoint's front door;
//! what a layer learns (the caller, the admitted slots) reaches the endpoint in the request's
//! extensions. `Head` and `HostGuard` add no allocation per request; `Auth` and `Limits` are
//! asynchronous and box their future.

#[cfg(feature = "oauth")]
mod auth;
mod future;
mod guards;
mod limits;
pub(crate) mod observe;

#[cfg(feature = "oauth")]
pub use auth::{Auth, AuthLayer};
pub use future::ResponseFuture;
pub(crate) use guards::refusal;
pub use guards::{Head, HeadLayer, HostGuard, HostGuardLayer};
pub use limits::{Limits, LimitsLayer};
