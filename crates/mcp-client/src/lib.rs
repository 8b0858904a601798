//! The MCP client role.
#![warn(missing_docs)]

mod client;
mod engine;
pub mod error;
pub mod handler;
pub mod headers;
pub mod transport;

pub use client::{
    Client, ClientBuilder, Detected, EraCache, RequestOptions, SUPPORTED_VERSIONS, Subscription,
    SubscriptionEvent,
};
pub use engine::ProgressFn;
pub use error::{ClientError, Outcome};
pub use handler::Handlers;
