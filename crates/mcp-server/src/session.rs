//! A legacy (handshake-era) session: what `initialize` negotiated, the log level and resource
//! subscriptions the client set, and the server→client requests awaiting answers.
//!
//! On stdio a session lives as long as the process's connection; on Streamable HTTP it is
//! named by `Mcp-Session-Id`. Modern requests never touch it.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use mcp_types::{
    ClientCapabilities, ErrorObject, Implementation, JsonValue, LoggingLevel, Message, ProtocolVersion,
    Request, RequestId,
};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::sink::MessageSink;

/// The answer to a server→client request: the raw result, or the client's error.
pub type PeerAnswer = Result<Box<serde_json::value::RawValue>, ErrorObject>;

/// State of one legacy session.
pub struct LegacySession {
    /// The negotiated revision.
    pub version: ProtocolVersion,
    /// The client's declared capabilities.
    pub client_capabilities: ClientCapabilities,
    /// The client's identity.
    pub client_info: Implementation,
    log_level: Mutex<Option<LoggingLevel>>,
    subscriptions: Mutex<HashSet<String>>,
    pending: Mutex<HashMap<RequestId, oneshot::Sender<PeerAnswer>>>,
    next_id: AtomicI64,
    /// Cancelled when the session ends ([`LegacySession::close`], or the last handle dropped).
    ended: CancellationToken,
    /// Where its subscriptions are counted, once it has one.
    interest: std::sync::OnceLock<Arc<crate::interest::Interest>>,
}

impl std::fmt::Debug for LegacySession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LegacySession")
            .field("version", &self.version)
            .field("client_info", &self.client_info.name)
            .finish_non_exhaustive()
    }
}

impl LegacySession {
    /// A new session after `initialize`.
    pub fn new(
        version: ProtocolVersion,
        client_capabilities: ClientCapabilities,
        client_info: Implementation,
    ) -> Self {
        LegacySession {
            version,
            client_capabilities,
            client_info,
            log_level: Mutex::new(None),
            subscriptions: Mutex::default(),
            pending: Mutex::default(),
            next_id: AtomicI64::new(0),
            ended: CancellationToken::new(),
            interest: std::sync::OnceLock::new(),
        }
    }

    /// A token cancelled when the session ends: closed (HTTP `DELETE`, expiry or eviction, the
    /// end of a stdio connection, a second `initialize` on it) or dropped. What a handler keeps
    /// per session (a gateway's child process for it) is released on it.
    pub fn ended(&self) -> CancellationToken {
        self.ended.clone()
    }

    /// The level set by `logging/setLevel`, if any (none set: every message is sent).
    pub fn log_level(&self) -> Option<LoggingLevel> {
        *self.log_level.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn set_log_level(&self, level: LoggingLevel) {
        *self.log_level.lock().unwrap_or_else(|e| e.into_inner()) = Some(level);
    }

    /// True when a message at `level` passes the session's threshold.
    pub fn wants_log(&self, level: LoggingLevel) -> bool {
        self.log_level().is_none_or(|min| level >= min)
    }

    pub(crate) fn subscribe(&self, uri: &str, interest: &Arc<crate::interest::Interest>) {
        let interest = self.interest.get_or_init(|| interest.clone());
        if self.subscriptions.lock().unwrap_or_else(|e| e.into_inner()).insert(uri.to_owned()) {
            interest.add(uri);
        }
    }

    pub(crate) fn unsubscribe(&self, uri: &str) {
        let mut subscriptions = self.subscriptions.lock().unwrap_or_else(|e| e.into_inner());
        if subscriptions.remove(uri)
            && let Some(interest) = self.interest.get()
        {
            interest.remove(uri);
        }
    }

    /// Gives back every subscription: the session ended.
    fn forget_subscriptions(&self) {
        let mut subscriptions = self.subscriptions.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(interest) = self.interest.get() {
            for uri in subscriptions.drain() {
                interest.remove(&uri);
            }
        }
    }

    /// True when the client subscribed to updates of `uri`.
    pub fn is_subscribed(&self, uri: &str) -> bool {
        self.subscriptions.lock().unwrap_or_else(|e| e.into_inner()).contains(uri)
    }

    /// Sends a server→client request and waits for the answer. The returned guard removes the
    /// pending entry when dropped (the handler was cancelled), so a late answer is discarded.
    pub(crate) async fn request(
        &self,
        sink: &dyn MessageSink,
        method: &str,
        params: &JsonValue,
    ) -> Result<PeerAnswer, SessionClosed> {
        let id = RequestId::String(format!("mcpkit-{}", self.next_id.fetch_add(1, Ordering::Relaxed)));
        let (tx, rx) = oneshot::channel();
        self.pending.lock().unwrap_or_else(|e| e.into_inner()).insert(id.clone(), tx);
        let guard = PendingGuard { session: self, id: id.clone() };
        let request = Request::new(id, method, params).map_err(|_| SessionClosed)?;
        if !sink.send(Message::Request(request).to_vec()).await {
            return Err(SessionClosed);
        }
        let answer = rx.await.map_err(|_| SessionClosed);
        drop(guard);
        answer
    }

    /// Routes a client's response to the request awaiting it. Returns false for an answer
    /// nobody waits for (unknown, or its request was cancelled).
    pub fn complete(&self, id: &RequestId, answer: PeerAnswer) -> bool {
        let waiter = self.pending.lock().unwrap_or_else(|e| e.into_inner()).remove(id);
        match waiter {
            Some(tx) => tx.send(answer).is_ok(),
            None => false,
        }
    }

    /// Ends the session: fails every pending server→client request (the connection closed)
    /// and cancels [`LegacySession::ended`].
    pub fn close(&self) {
        self.pending.lock().unwrap_or_else(|e| e.into_inner()).clear();
        self.forget_subscriptions();
        self.ended.cancel();
    }
}

impl Drop for LegacySession {
    fn drop(&mut self) {
        self.forget_subscriptions();
        self.ended.cancel();
    }
}

/// The session's transport is gone.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("the client session is closed")]
pub struct SessionClosed;

struct PendingGuard<'a> {
    session: &'a LegacySession,
    id: RequestId,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        self.session.pending.lock().unwrap_or_else(|e| e.into_inner()).remove(&self.id);
    }
}

/// Shared handle to a session.
pub type SessionHandle = Arc<LegacySession>;

#[cfg(test)]
mod tests {
    use super::*;

    fn session() -> SessionHandle {
        Arc::new(LegacySession::new(
            ProtocolVersion::V2025_11_25,
            ClientCapabilities::default(),
            Implementation::new("t", "1"),
        ))
    }

    #[test]
    fn ended_on_close_and_on_drop() {
        let closed = session();
        let ended = closed.ended();
        assert!(!ended.is_cancelled());
        closed.close();
        assert!(ended.is_cancelled(), "closed");

        let dropped = session();
        let ended = dropped.ended();
        drop(dropped);
        assert!(ended.is_cancelled(), "dropped without a close");
    }
}
