//! The front door: the one path every transport's messages take into the server — stdio,
//! Streamable HTTP and HTTP+SSE alike.
//!
//! bytes → [`receive`] (decoded; a request [classified](Classified) once: era, method,
//! `_meta`, typed params) → [`admit`] (no second request with an id in flight on the
//! connection) → [`Server::run`] (routed; cancelled before it started: never run; cancelled
//! while running: its future dropped, nothing sent) → a [`Reply`]: the response, and — when the
//! server refused the request rather than answered it — the [`Refusal`] kind, which a
//! transport maps to its own terms (mcp-http to an HTTP status). Unreadable input is answered
//! by the era rule in [`Unreadable::reply`]. Transports keep only what is theirs: framing,
//! headers, streams, sessions and their own limits.

// The door's vocabulary sits below the router (which speaks it); this module, the entry that
// runs a request through the router, sits above it (docs/ARCHITECTURE.md, the layering).
pub(crate) mod classify;
pub(crate) mod reply;

use std::sync::Arc;

use mcp_types::{
    DecodeError, DecodeOptions, ErrorObject, Incoming, Message, Notification, Response, ResponseId,
};

pub use classify::{Classified, Named};
pub use reply::{Refusal, Reply};

use crate::connection::{Connection, InFlight};
use crate::principal::Principal;
use crate::server::Server;
use crate::session::SessionHandle;
use crate::sink::MessageSink;

/// One decoded input, a request already classified.
#[derive(Debug)]
// A request is the common case; boxing it would cost an allocation per request.
#[allow(clippy::large_enum_variant)]
pub enum Inbound {
    /// A request: admit it, then run it.
    Request(Classified),
    /// A notification: hand it to [`Server::handle_notification`].
    Notification(Notification),
    /// A response to a server→client request: hand it to [`Server::handle_response`].
    Response(Response),
    /// A batch (2025-03-26 sessions only), each element decoded on its own.
    Batch(Vec<Result<Message, DecodeError>>),
}

/// Input that is no JSON-RPC message; its answer depends on the era it arrived in.
#[derive(Debug)]
pub struct Unreadable(DecodeError);

impl Unreadable {
    /// The error to send. An unreadable id is answered with `"id": null` in sessions of
    /// revisions before 2025-11-25 (their schemas require an id), and without an id
    /// everywhere else — 2025-11-25 and 2026-07-28, or before any session.
    pub fn reply(&self, session: Option<&SessionHandle>) -> Reply {
        Reply { response: self.0.to_response(null_id(session)), refusal: Some(Refusal::Unreadable) }
    }
}

impl From<DecodeError> for Unreadable {
    fn from(error: DecodeError) -> Self {
        Unreadable(error)
    }
}

/// Whether an answer to unreadable input says `"id": null` (see [`Unreadable::reply`]).
pub(crate) fn null_id(session: Option<&SessionHandle>) -> bool {
    session.is_some_and(|s| !s.version.omits_unknown_error_id())
}

/// The answer to input the framing refused (an over-long line, a BOM, invalid UTF-8), by
/// the same era rule as [`Unreadable::reply`].
pub fn unframed(error: ErrorObject, session: Option<&SessionHandle>) -> Reply {
    let id = if null_id(session) { ResponseId::Null } else { ResponseId::Absent };
    Reply::refused(id, error, Refusal::Unreadable)
}

/// Decodes `bytes` and classifies a request. `batches`: whether the connection's revision
/// allows a batch (2025-03-26).
pub fn receive(bytes: &[u8], batches: bool) -> Result<Inbound, Unreadable> {
    let options = DecodeOptions::new().with_allow_batch(batches);
    Ok(match mcp_types::decode(bytes, options).map_err(Unreadable)? {
        Incoming::Single(message) => inbound(message),
        Incoming::Batch(items) => Inbound::Batch(items),
    })
}

/// A decoded message as the front door sees it.
pub fn inbound(message: Message) -> Inbound {
    match message {
        Message::Request(request) => Inbound::Request(Classified::classify(request)),
        Message::Notification(n) => Inbound::Notification(n),
        Message::Response(r) => Inbound::Response(r),
    }
}

/// Registers `request` as in flight on `connection`, or the `-32600` refusing it because its
/// id is already in flight there (the first request is left alone; docs/DECISIONS.md trap 3).
pub fn admit(connection: &Arc<Connection>, request: &Classified) -> Result<InFlight, Reply> {
    connection.begin(&request.id).map_err(|duplicate| {
        Reply::refused(
            request.id.clone(),
            ErrorObject::invalid_request(duplicate.to_string()),
            Refusal::DuplicateId,
        )
    })
}

impl Server {
    /// Runs an admitted request on its connection and returns what to send, or `None` when
    /// there is nothing to send: cancelled before it started (a cancellation read right behind
    /// it) it never runs; cancelled while running its handler's future is dropped. The id stays
    /// in flight as long as the caller holds `in_flight` — until the answer is queued.
    /// `sink` takes this request's own messages (the connection's sink when `None`);
    /// `principal` is the caller the transport authenticated.
    pub async fn run(
        &self,
        request: Classified,
        in_flight: &InFlight,
        sink: Option<Arc<dyn MessageSink>>,
        principal: Option<Arc<Principal>>,
    ) -> Option<Reply> {
        let token = in_flight.token().clone();
        if token.is_cancelled() {
            return None;
        }
        let connection = in_flight.connection();
        let sink = sink.unwrap_or_else(|| connection.sink.clone());
        // Biased: the handler is polled first, so a request that completes in its first poll
        // never registers a waiter on its token (measured: the registration cost about as much
        // as routing a `tools/list`); cancellation is still seen at its next wake-up.
        tokio::select! {
            biased;
            reply = self.reply(connection, request, token.clone(), sink, principal) => reply,
            _ = token.cancelled() => None,
        }
    }
}
