//! One client connection as the server sees it: where its messages go, the legacy session it
//! opened (if any), and its requests in flight — which makes cancellation by id and the
//! duplicate-id check local to the connection, never global (docs/DECISIONS.md trap 3).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use mcp_types::RequestId;
use tokio_util::sync::CancellationToken;

use crate::session::SessionHandle;
use crate::sink::MessageSink;

/// A client connection: a stdio process, a legacy HTTP session, or one modern HTTP exchange.
pub struct Connection {
    pub(crate) sink: Arc<dyn MessageSink>,
    session: Mutex<Option<SessionHandle>>,
    in_flight: Mutex<HashMap<RequestId, CancellationToken>>,
    closing: CancellationToken,
    /// Cancelled when the client will send nothing more (stdio end of input): subscriptions end
    /// at once, requests in flight may still finish.
    listening_ends: CancellationToken,
    /// What observers are told of the session this connection serves (`mcp.session.id`).
    session_label: std::sync::OnceLock<Arc<str>>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection").field("session", &self.session()).finish_non_exhaustive()
    }
}

/// A request id that is already in flight on this connection.
#[derive(Debug, Clone, thiserror::Error)]
#[error("request id {0} is already in flight")]
pub struct DuplicateId(pub RequestId);

/// A request registered as in flight; dropping it unregisters the id.
pub struct InFlight {
    connection: Arc<Connection>,
    id: RequestId,
    token: CancellationToken,
}

impl InFlight {
    /// The request's cancellation token.
    pub fn token(&self) -> &CancellationToken {
        &self.token
    }

    /// The connection the request is in flight on.
    pub(crate) fn connection(&self) -> &Arc<Connection> {
        &self.connection
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.connection.in_flight.lock().unwrap_or_else(|e| e.into_inner()).remove(&self.id);
    }
}

impl Connection {
    /// A connection whose server-initiated messages go to `sink`.
    pub fn new(sink: Arc<dyn MessageSink>) -> Arc<Self> {
        Arc::new(Connection {
            sink,
            session: Mutex::new(None),
            in_flight: Mutex::default(),
            closing: CancellationToken::new(),
            listening_ends: CancellationToken::new(),
            session_label: std::sync::OnceLock::new(),
        })
    }

    /// Names the session this connection serves for observers (a span's `mcp.session.id`):
    /// set once by the transport that knows the session's id — never the id itself when the id
    /// is a credential, but a digest of it. Later calls are ignored.
    pub fn set_session_label(&self, label: impl Into<Arc<str>>) {
        let _ = self.session_label.set(label.into());
    }

    /// The label set by [`Connection::set_session_label`].
    pub fn session_label(&self) -> Option<&Arc<str>> {
        self.session_label.get()
    }

    /// A connection bound to an existing legacy session (a Streamable HTTP session).
    pub fn with_session(sink: Arc<dyn MessageSink>, session: SessionHandle) -> Arc<Self> {
        let connection = Self::new(sink);
        connection.set_session(session);
        connection
    }

    /// The legacy session, once the client initialized one.
    pub fn session(&self) -> Option<SessionHandle> {
        self.session.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(crate) fn set_session(&self, session: SessionHandle) {
        let previous = self.session.lock().unwrap_or_else(|e| e.into_inner()).replace(session);
        if let Some(previous) = previous {
            previous.close();
        }
    }

    /// Registers a request as in flight. A second request with an id still in flight is
    /// refused and the first is left alone.
    pub fn begin(self: &Arc<Self>, id: &RequestId) -> Result<InFlight, DuplicateId> {
        let mut in_flight = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        if in_flight.contains_key(id) {
            return Err(DuplicateId(id.clone()));
        }
        let token = self.closing.child_token();
        in_flight.insert(id.clone(), token.clone());
        Ok(InFlight { connection: self.clone(), id: id.clone(), token })
    }

    /// Cancels the request with this id, if it is in flight.
    pub fn cancel(&self, id: &RequestId) -> bool {
        match self.in_flight.lock().unwrap_or_else(|e| e.into_inner()).get(id) {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// The number of requests in flight.
    pub fn in_flight(&self) -> usize {
        self.in_flight.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// A token cancelled when the connection closes.
    pub fn closing(&self) -> CancellationToken {
        self.closing.clone()
    }

    /// Ends this connection's subscriptions (`subscriptions/listen`, each with its completion
    /// result) without touching its other requests: the client will send nothing more.
    pub fn end_subscriptions(&self) {
        self.listening_ends.cancel();
    }

    /// A token cancelled when the connection's subscriptions end ([`Connection::end_subscriptions`]
    /// or [`Connection::close`]).
    pub(crate) fn listening_ends(&self) -> CancellationToken {
        self.listening_ends.clone()
    }

    /// Closes the connection: cancels every request in flight and fails the session's pending
    /// server→client requests.
    pub fn close(&self) {
        self.closing.cancel();
        if let Some(session) = self.session() {
            session.close();
        }
    }
}
