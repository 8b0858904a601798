//! What a handler's extractors read of the server they run in — and nothing more. A [`Call`]
//! holds this (an `Arc`, cloned once per request as the whole server used to be), not the
//! server, so the modules a handler sees never name the server, its registries or its router
//! (the layering of docs/ARCHITECTURE.md).
//!
//! [`Call`]: crate::Call

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::time::Duration;

use tokio::sync::broadcast;

/// A change the server announces to subscribed clients.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Change {
    /// The tool list changed.
    Tools,
    /// The prompt list changed.
    Prompts,
    /// The resource list changed.
    Resources,
    /// The resource at this URI changed.
    ResourceUpdated(String),
}

/// The shared state values of `ServerBuilder::state`, one per type.
pub(crate) type States = HashMap<TypeId, Box<dyn Any + Send + Sync>>;

/// The per-server part of every request's context.
pub(crate) struct ServerContext {
    /// The values the `State<S>` extractor hands out.
    states: States,
    /// Where `Notifier` (and the server itself) announce changes; subscribers are the
    /// `subscriptions/listen` streams and legacy sessions.
    pub(crate) changes: broadcast::Sender<Change>,
    /// How long a legacy server→client request waits for its answer (`Peer`), from
    /// `ServerConfig::peer_request_timeout`.
    pub(crate) peer_request_timeout: Duration,
}

impl ServerContext {
    pub(crate) fn new(
        states: States,
        changes: broadcast::Sender<Change>,
        peer_request_timeout: Duration,
    ) -> Self {
        ServerContext { states, changes, peer_request_timeout }
    }

    /// The state value of type `S`, if the server was given one.
    pub(crate) fn state<S: Clone + Send + Sync + 'static>(&self) -> Option<S> {
        self.states.get(&TypeId::of::<S>()).and_then(|s| s.downcast_ref::<S>()).cloned()
    }
}
