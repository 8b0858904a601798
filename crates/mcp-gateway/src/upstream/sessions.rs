//! A `per-session` stdio upstream's children: one per downstream legacy session, started on
//! the session's first request to the upstream and stopped (process group killed, reaped) when
//! the session ends — an HTTP `DELETE`, expiry or eviction, the end of a stdio connection.
//!
//! Each child has its own callers (the server's questions go to that session's requests only),
//! its own notifications (its log messages are that session's), and is told the capabilities
//! the session's client declared, not the gateway's. One that exited is started
//! again by the session's next request: what it kept is gone, as after any restart. The lists
//! the gateway serves are the shared child's (`Upstream`'s supervisor); stateless requests use
//! that child too — they belong to no session.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, Weak};

use mcp_client::Client;
use mcp_server::SessionHandle;
use mcp_types::{ErrorObject, ServerNotification};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::{Upstream, connect};
use crate::bridge::Callers;

/// Log and other notifications of one child waiting to be passed on.
const NOTIFICATIONS: usize = 64;

/// One downstream session's child.
pub(crate) struct SessionChild {
    pub(crate) callers: Arc<Callers>,
    client: tokio::sync::Mutex<Option<Client>>,
    notifications: broadcast::Sender<ServerNotification>,
    /// The session's end.
    ended: CancellationToken,
    /// What the session's client declared: the child is told the same.
    capabilities: mcp_types::ClientCapabilities,
}

/// A session's child, with the session's handle that pins the key (its address).
type Entry = (Weak<mcp_server::LegacySession>, Arc<SessionChild>);

/// The children of one upstream, by session.
#[derive(Default)]
pub(crate) struct Children {
    /// Keyed by the session's address, pinned by the `Weak` kept beside it (an allocation is
    /// not reused while a weak handle to it lives).
    map: Mutex<HashMap<usize, Entry>>,
}

impl Children {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<usize, Entry>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many sessions have a child (running, or to be started by their next request).
    pub(crate) fn len(&self) -> usize {
        self.map().len()
    }

    /// Stops every child (the gateway closes, or a reload removed the upstream).
    pub(crate) async fn close_all(&self) {
        let children: Vec<Arc<SessionChild>> = self.map().drain().map(|(_, (_, child))| child).collect();
        let mut closing = tokio::task::JoinSet::new();
        for child in children {
            closing.spawn(async move { child.stop().await });
        }
        while closing.join_next().await.is_some() {}
    }
}

impl Upstream {
    /// The child of `session`, registered (not yet started) on its first use; a watcher stops
    /// it when the session ends.
    pub(crate) fn session_child(
        self: &Arc<Self>,
        session: &SessionHandle,
    ) -> Result<Arc<SessionChild>, ErrorObject> {
        let ended = session.ended();
        if ended.is_cancelled() {
            return Err(ErrorObject::internal("the client session has ended"));
        }
        let key = Arc::as_ptr(session) as usize;
        let mut map = self.children.map();
        if self.closed.is_cancelled() {
            return Err(self.unavailable());
        }
        if let Some((_, child)) = map.get(&key) {
            return Ok(child.clone());
        }
        let child = Arc::new(SessionChild {
            callers: Arc::default(),
            client: tokio::sync::Mutex::new(None),
            notifications: broadcast::channel(NOTIFICATIONS).0,
            ended: ended.clone(),
            capabilities: session.client_capabilities.clone(),
        });
        map.insert(key, (Arc::downgrade(session), child.clone()));
        drop(map);
        let upstream = Arc::downgrade(self);
        let closed = self.closed.clone();
        let watched = child.clone();
        tokio::spawn(async move {
            tokio::select! {
                () = ended.cancelled() => {}
                () = closed.cancelled() => {}
            }
            if let Some(up) = upstream.upgrade() {
                let mut map = up.children.map();
                if map.get(&key).is_some_and(|(_, c)| Arc::ptr_eq(c, &watched)) {
                    map.remove(&key);
                }
            }
            watched.stop().await;
        });
        Ok(child)
    }
}

impl SessionChild {
    /// The child's connection: the running one, or a new child started within the upstream's
    /// start timeout (the first request of the session, or the first after it exited).
    pub(crate) async fn client(&self, up: &Upstream) -> Result<Client, ErrorObject> {
        let mut slot = self.client.lock().await;
        if let Some(client) = slot.as_ref() {
            if client.closed().is_none() {
                return Ok(client.clone());
            }
        }
        if let Some(exited) = slot.take() {
            let why = exited.closed().unwrap_or_default();
            tracing::warn!(upstream = up.name(), "a session's child exited: {why}");
            up.record_error(&format!("a session's child exited: {why}"));
            exited.close().await;
        }
        if self.ended.is_cancelled() {
            return Err(ErrorObject::internal("the client session has ended"));
        }
        let starting = connect::connect(
            &up.config,
            None,
            Arc::downgrade(&self.callers),
            Some(&self.capabilities),
            up.events.requests.as_ref(),
        );
        let client = match tokio::time::timeout(up.config.start_timeout, starting).await {
            Ok(Ok(client)) => client,
            Ok(Err(e)) => {
                up.record_error(&format!("a session's child could not be started: {e}"));
                return Err(super::upstream_error(up.name(), &e));
            }
            Err(_) => {
                let message = format!(
                    "a session's child was not ready within {} ms",
                    up.config.start_timeout.as_millis()
                );
                up.record_error(&message);
                return Err(ErrorObject::internal(format!("upstream {}: {message}", up.name()))
                    .with_data(serde_json::json!({"upstream": up.name(), "outcome": "not executed"})));
            }
        };
        // Closed meanwhile (the session ended, the gateway closes): never leave it running.
        if self.ended.is_cancelled() || up.closed.is_cancelled() {
            client.close().await;
            return Err(ErrorObject::internal("the client session has ended"));
        }
        up.session_starts.fetch_add(1, Ordering::Relaxed);
        let mut from_child = client.notifications();
        let to_callers = self.notifications.clone();
        tokio::spawn(async move {
            loop {
                match from_child.recv().await {
                    Ok(notification) => {
                        let _ = to_callers.send(notification);
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => return,
                }
            }
        });
        *slot = Some(client.clone());
        Ok(client)
    }

    /// The child's notifications outside any call (its log messages).
    pub(crate) fn notifications(&self) -> broadcast::Receiver<ServerNotification> {
        self.notifications.subscribe()
    }

    /// Stops the child, if it runs: its process group is stopped and reaped.
    async fn stop(&self) {
        let client = self.client.lock().await.take();
        if let Some(client) = client {
            client.close().await;
        }
    }
}
