//! HTTP transports.
//!
//! * [`StreamableHttpTransport`]: Streamable HTTP, for modern stateless requests (2026-07-28)
//!   and legacy sessions (2025-03-26 … 2025-11-25) alike; the [`Outgoing`] message's protocol
//!   version decides which headers go out and whether a broken stream is resumed.
//! * [`HttpSseTransport`]: the deprecated HTTP+SSE transport of 2024-11-05.
//! * [`sse`]: the sans-IO `text/event-stream` parser both use.
//!
//! Both take an [`HttpConfig`]: the URL, extra headers (credentials: never logged), the
//! authorization layer ([`HttpAuth`]: every request asks it for its credentials, and a `401` or
//! `403 insufficient_scope` is handed to it before the request is sent again), and the limits
//! that keep memory and waiting bounded.
//!
//! [`Outgoing`]: crate::transport::Outgoing

mod auth;
pub(crate) mod common;
mod config;
pub(crate) mod h1;
mod legacy_sse;
pub mod sse;
mod streamable;

pub use auth::{HttpAuth, Refusal};
pub use config::HttpConfig;
pub use legacy_sse::HttpSseTransport;
pub use reqwest::header::{HeaderName, HeaderValue};
pub use streamable::StreamableHttpTransport;
