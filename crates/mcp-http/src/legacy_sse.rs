//! The deprecated HTTP+SSE transport of 2024-11-05: `GET /sse` opens a stream whose first
//! event names the POST endpoint (`event: endpoint`, `data: /messages?sessionId=<id>`);
//! every client message is POSTed there and answered `202 Accepted`, while the server's
//! responses and its own messages travel on the stream as `event: message` events. The
//! session lives exactly as long as its GET stream.

// Early exits return a ready `Response`; boxing it would only add an allocation per refusal.
#![allow(clippy::result_large_err)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::{Method, StatusCode, Uri};
use mcp_server::door::{self, Inbound};
use mcp_server::{Classified, Connection, MessageSink, Principal, SendFuture};
use tokio::sync::mpsc;

use crate::exchange::{reply_response, sse_response};
use crate::guard;
use crate::layers::HostGuardLayer;
use crate::service::HttpState;
use crate::session::new_id;
use crate::sse;

/// The path of the SSE stream.
pub(crate) const SSE_PATH: &str = "/sse";
/// The path client messages are POSTed to.
pub(crate) const MESSAGES_PATH: &str = "/messages";

/// Forwards the server's messages to one SSE stream.
struct StreamSink(mpsc::Sender<Vec<u8>>);

impl MessageSink for StreamSink {
    fn send(&self, json: Vec<u8>) -> SendFuture<'_> {
        Box::pin(async move { self.0.send(json).await.is_ok() })
    }
}

/// One HTTP+SSE session: its connection and the way onto its stream.
#[derive(Clone)]
struct LegacySseSession {
    connection: Arc<Connection>,
    sink: Arc<dyn MessageSink>,
    stream: mpsc::Sender<Vec<u8>>,
    /// The principal that opened the stream (its binding key), when authorization is on:
    /// only it may POST to the session; to anyone else the session does not exist (404).
    owner: Option<String>,
}

/// The transport's state: the shared HTTP state and the open HTTP+SSE sessions.
pub(crate) struct LegacySse {
    http: Arc<HttpState>,
    sessions: Mutex<HashMap<String, LegacySseSession>>,
}

impl LegacySse {
    fn get(&self, id: &str) -> Option<LegacySseSession> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner()).get(id).cloned()
    }

    fn forget(&self, id: &str) {
        let removed = self.sessions.lock().unwrap_or_else(|e| e.into_inner()).remove(id);
        if let Some(session) = removed {
            session.connection.close();
        }
    }
}

/// The two routes (`GET /sse`, `POST /messages`), with their own state; `guard` in front of
/// each once its method is known (axum answers `405` before it, as for the endpoint).
pub(crate) fn routes(http: Arc<HttpState>, guard: Option<HostGuardLayer>) -> axum::Router {
    let state = Arc::new(LegacySse { http, sessions: Mutex::default() });
    let (mut sse, mut messages) = (axum::routing::get(open_stream), axum::routing::post(post_message));
    if let Some(guard) = guard {
        sse = sse.route_layer(guard.clone());
        messages = messages.route_layer(guard);
    }
    axum::Router::new().route(SSE_PATH, sse).route(MESSAGES_PATH, messages).with_state(state)
}

/// The first event of a stream: where to POST.
fn endpoint_event(id: &str) -> Bytes {
    Bytes::from(format!("event: endpoint\ndata: {MESSAGES_PATH}?sessionId={id}\n\n"))
}

async fn open_stream(State(state): State<Arc<LegacySse>>, request: axum::extract::Request) -> Response {
    let (mut parts, _) = request.into_parts();
    let peer = crate::service::peer_of(&parts.extensions);
    let (uri, headers) = (&parts.uri, &parts.headers);
    let auth =
        match crate::service::caller(&state.http, &Method::GET, uri, headers, &mut parts.extensions).await {
            Ok(auth) => auth,
            Err(r) => return r,
        };
    match guard::accepts(&parts.headers) {
        Ok(a) if a.sse => {}
        _ => return (StatusCode::NOT_ACCEPTABLE, "GET needs Accept: text/event-stream").into_response(),
    }
    // A session lives as long as its stream: the streams' budget bounds the sessions too.
    let caller = crate::budget::caller_key(auth.as_ref(), peer);
    let Some(slots) = state.http.streams.try_open(caller.as_deref()) else {
        return crate::service::unavailable("too many open streams");
    };
    let id = new_id();
    let (tx, rx) = mpsc::channel::<Vec<u8>>(64);
    let sink: Arc<dyn MessageSink> = Arc::new(StreamSink(tx.clone()));
    let connection = Connection::new(sink.clone());
    connection.set_session_label(crate::session::session_label(&id));
    let owner = auth.map(|a| a.key);
    state
        .sessions
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(id.clone(), LegacySseSession { connection, sink, stream: tx, owner });
    let (body_tx, body_rx) = mpsc::channel::<Bytes>(64);
    let keep_alive = state.http.config.keep_alive;
    tokio::spawn(async move {
        let _slots = slots;
        if body_tx.send(endpoint_event(&id)).await.is_ok() {
            sse::pump(rx, body_tx, keep_alive).await;
        }
        // The client went away: the session ends with its stream.
        state.forget(&id);
    });
    sse_response(body_rx)
}

/// The `sessionId` query parameter (ids are URL-safe, so no decoding is needed).
fn session_id(uri: &Uri) -> Option<&str> {
    uri.query()?.split('&').find_map(|pair| pair.strip_prefix("sessionId="))
}

async fn post_message(State(state): State<Arc<LegacySse>>, request: axum::extract::Request) -> Response {
    let (mut parts, body) = request.into_parts();
    let peer = crate::service::peer_of(&parts.extensions);
    let http = &state.http;
    let auth =
        match crate::service::caller(http, &Method::POST, &parts.uri, &parts.headers, &mut parts.extensions)
            .await
        {
            Ok(auth) => auth,
            Err(r) => return r,
        };
    let (uri, headers) = (parts.uri, parts.headers);
    let admitted = parts.extensions.remove::<crate::intake::Admitted>();
    if let Err(r) = guard::content_type(&headers) {
        return (r.status, r.reason).into_response();
    }
    let Some(id) = session_id(&uri) else {
        return (StatusCode::BAD_REQUEST, "sessionId is required").into_response();
    };
    let owner = auth.as_ref().map(|a| a.key.as_str());
    let Some(session) = state.get(id).filter(|s| s.owner.as_deref() == owner) else {
        return (StatusCode::NOT_FOUND, "Session not found").into_response();
    };
    // The POST takes its slots and its bytes are charged as any other POST's: the request it
    // carries runs in the background after the 202, holding them until it is answered.
    let (bytes, permits) = match crate::intake::admit(http, &headers, body, auth.as_ref(), admitted).await {
        Ok(read) => read,
        Err(r) => return r,
    };
    let message = match door::receive(&bytes, false) {
        Ok(m) => m,
        Err(unreadable) => return reply_response(unreadable.reply(session.connection.session().as_ref())),
    };
    match message {
        // The body decides the era: a 2026-07-28 request is served as one here too (its headers
        // checked against its body, its answer on this POST), never inside the session.
        Inbound::Request(request) if request.is_modern() => {
            let accepts = match guard::accepts(&headers) {
                Ok(a) => a,
                Err(r) => return (r.status, r.reason).into_response(),
            };
            return crate::service::modern_request(http, &headers, request, accepts, permits, auth, peer)
                .await;
        }
        Inbound::Notification(n) => http.server.handle_notification(&session.connection, n),
        Inbound::Response(r) => http.server.handle_response(&session.connection, r),
        // Never decoded here (`receive` was told so).
        Inbound::Batch(_) => return (StatusCode::BAD_REQUEST, "batches are not accepted").into_response(),
        Inbound::Request(request) => {
            if let Err(r) = crate::service::check_tool_scopes(http, auth.as_ref(), &request) {
                return r;
            }
            handle_request(http, session, request, auth.map(|a| a.principal), permits.into_vec());
        }
    }
    StatusCode::ACCEPTED.into_response()
}

/// Runs a request in the background; its response goes out on the session's stream.
fn handle_request(
    http: &HttpState,
    session: LegacySseSession,
    request: Classified,
    principal: Option<Arc<Principal>>,
    permits: Vec<crate::gate::Permit>,
) {
    let in_flight = match door::admit(&session.connection, &request) {
        Ok(f) => f,
        Err(duplicate) => {
            tokio::spawn(async move {
                let _ = session.stream.send(duplicate.to_vec()).await;
            });
            return;
        }
    };
    let server = http.server.clone();
    tokio::spawn(async move {
        let _permits = permits;
        let sink = session.sink.clone();
        let reply = server.run(request, &in_flight, Some(sink), principal).await;
        drop(in_flight);
        if let Some(reply) = reply {
            let _ = session.stream.send(reply.to_vec()).await;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_event_and_query() {
        assert_eq!(&endpoint_event("abc")[..], b"event: endpoint\ndata: /messages?sessionId=abc\n\n");
        let uri: Uri = "/messages?x=1&sessionId=abc".parse().unwrap();
        assert_eq!(session_id(&uri), Some("abc"));
        let uri: Uri = "/messages".parse().unwrap();
        assert_eq!(session_id(&uri), None);
    }
}
