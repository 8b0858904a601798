//! The endpoint: one path serving every era (docs/CONFORMANCE.md §3, the dispatch rule).

// Early exits return a ready `Response`; boxing it would only add an allocation per refusal.
#![allow(clippy::result_large_err)]

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{ConnectInfo, Request as HttpRequest};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use mcp_server::door::{self, Inbound};
use mcp_server::{Classified, Connection, NullSink, Server};
use mcp_types::{ErrorObject, Message, ProtocolVersion, Response as RpcResponse, ResponseId, code};
use tokio::sync::mpsc;

#[cfg(feature = "oauth")]
use crate::auth::Authenticator;
use crate::budget::{StreamBudget, caller_key};
use crate::caller::Authenticated;
use crate::config::HttpConfig;
use crate::events::{EventStore, MemoryEventStore, parse_id};
use crate::exchange::{self, Exchange, OnDisconnect, Resumable, json_response, reply_response, sse_response};
use crate::guard::{self, Accepts, Refusal};
use crate::headers;
use crate::intake::{self, Admitted, Permits};
use crate::limits::PrincipalLimits;
use crate::session::{HttpSession, Sessions, new_id};
use crate::sse;
use mcp_types::RequestMethod;
use mcp_types::methods::CallTool;

pub(crate) struct HttpState {
    pub(crate) server: Server,
    pub(crate) config: HttpConfig,
    pub(crate) sessions: Sessions,
    pub(crate) events: Arc<dyn EventStore>,
    /// Authorization, when configured (shared with the `AuthLayer`s made from this state).
    #[cfg(feature = "oauth")]
    pub(crate) auth: Option<Arc<Authenticator>>,
    pub(crate) per_principal: PrincipalLimits,
    pub(crate) in_flight: Arc<crate::gate::Gate>,
    pub(crate) bytes: Arc<crate::gate::Gate>,
    /// Long-lived streams: slots of their own, never request slots.
    pub(crate) streams: StreamBudget,
}

impl HttpState {
    /// The state with the default in-memory event store, bounded by `config.max_replay_bytes`.
    pub(crate) fn new(server: Server, config: HttpConfig) -> Self {
        let store = MemoryEventStore::default().with_max_bytes(config.max_replay_bytes);
        Self::with_event_store(server, config, Arc::new(store))
    }

    pub(crate) fn with_event_store(server: Server, config: HttpConfig, events: Arc<dyn EventStore>) -> Self {
        HttpState {
            in_flight: crate::gate::Gate::new(config.max_in_flight.max(1)),
            bytes: crate::gate::Gate::new((config.max_bodies_in_flight / 1024).max(1)),
            #[cfg(feature = "oauth")]
            auth: config.auth.clone().map(|auth| Arc::new(Authenticator::new(auth))),
            per_principal: PrincipalLimits::new(config.max_in_flight_per_principal),
            streams: StreamBudget::new(config.max_streams, config.max_streams_per_principal),
            sessions: Sessions::new(config.max_sessions, config.max_sessions_per_principal),
            server,
            config,
            events,
        }
    }
}

fn refusal(r: Refusal) -> Response {
    (r.status, r.reason).into_response()
}

fn rpc_error(status: StatusCode, id: ResponseId, error: ErrorObject) -> Response {
    json_response(status, &Message::Response(RpcResponse::error(id, error)))
}

pub(crate) fn busy() -> Response {
    unavailable("too many requests in flight")
}

pub(crate) fn unavailable(reason: &'static str) -> Response {
    let mut r = (StatusCode::SERVICE_UNAVAILABLE, reason).into_response();
    r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    r
}

/// The peer's address, when the connection's is known (`ConnectInfo`, which the standalone
/// server always provides).
pub(crate) fn peer_of(extensions: &http::Extensions) -> Option<SocketAddr> {
    extensions.get::<ConnectInfo<SocketAddr>>().map(|c| c.0)
}

/// The endpoint, behind the head and Host/Origin checks (`McpHttp::router`, see `front`) or a
/// stack of the application's own (`McpHttp::routes`).
///
/// `received`: when the front took the request up, if it read the clock (to time the
/// transport's refusals for its observers); the server's observation of the request starts
/// from the same reading.
pub(crate) async fn endpoint(
    state: &Arc<HttpState>,
    request: HttpRequest,
    received: Option<std::time::Instant>,
) -> Response {
    let (mut parts, body) = request.into_parts();
    let peer = peer_of(&parts.extensions);
    if !matches!(parts.method, Method::POST | Method::GET | Method::DELETE) {
        let mut r = StatusCode::METHOD_NOT_ALLOWED.into_response();
        r.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET, POST, DELETE"));
        return r;
    }
    // Bearer 401/403 before anything that reads the request (docs/DECISIONS.md order).
    let auth = match caller(state, &parts.method, &parts.uri, &parts.headers, &mut parts.extensions).await {
        Ok(auth) => auth,
        Err(r) => return r,
    };
    let headers = parts.headers;
    match parts.method {
        Method::POST => {
            let admitted = parts.extensions.remove::<Admitted>();
            post(state, headers, body, admitted, auth, peer, received).await
        }
        Method::GET => get(state, headers, auth).await,
        _ => delete(state, &headers, auth.as_ref()),
    }
}

/// The caller, when authorization is on: the one an `AuthLayer` in front authenticated, else
/// authenticated here; `Ok(None)` when it is off, the refusal otherwise.
#[cfg(feature = "oauth")]
pub(crate) async fn caller(
    state: &HttpState,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    extensions: &mut http::Extensions,
) -> Result<Option<Authenticated>, Response> {
    let Some(auth) = &state.auth else { return Ok(None) };
    if let Some(authenticated) = extensions.remove::<Authenticated>() {
        return Ok(Some(authenticated));
    }
    match auth.authenticate(method, uri.path(), uri.query(), headers).await {
        Ok(authenticated) => Ok(Some(authenticated)),
        Err(denial) => Err(auth.refuse(&denial)),
    }
}

/// Without the `oauth` feature there is no authorization: every caller is anonymous.
#[cfg(not(feature = "oauth"))]
pub(crate) async fn caller(
    _state: &HttpState,
    _method: &Method,
    _uri: &Uri,
    _headers: &HeaderMap,
    _extensions: &mut http::Extensions,
) -> Result<Option<Authenticated>, Response> {
    Ok(None)
}

/// Refuses a `tools/call` whose tool needs scopes the caller lacks (`403`). The tool's name is
/// the one the front door read with the request's params.
#[cfg(feature = "oauth")]
pub(crate) fn check_tool_scopes(
    state: &HttpState,
    auth: Option<&Authenticated>,
    request: &Classified,
) -> Result<(), Response> {
    let (Some(authenticator), Some(authenticated)) = (&state.auth, auth) else { return Ok(()) };
    if request.method() != CallTool::METHOD {
        return Ok(());
    }
    // A request whose name cannot be read fails in dispatch without running any tool.
    let Some(name) = request.named().and_then(|n| n.name) else { return Ok(()) };
    authenticator.check_tool(authenticated, &name).map_err(|denial| authenticator.refuse(&denial))
}

/// Without the `oauth` feature no tool needs scopes.
#[cfg(not(feature = "oauth"))]
pub(crate) fn check_tool_scopes(
    _state: &HttpState,
    _auth: Option<&Authenticated>,
    _request: &Classified,
) -> Result<(), Response> {
    Ok(())
}

/// Another slot for the caller's requests (docs/DECISIONS.md: 16 per principal), or `503`.
pub(crate) fn principal_permit(
    state: &HttpState,
    auth: Option<&Authenticated>,
) -> Result<Option<crate::gate::Permit>, Response> {
    match auth {
        None => Ok(None),
        Some(a) => state.per_principal.try_acquire(&a.key).map(Some).ok_or_else(busy),
    }
}

fn session_of(
    state: &HttpState,
    headers: &HeaderMap,
    auth: Option<&Authenticated>,
) -> Result<Option<Arc<HttpSession>>, Response> {
    let Some(id) = headers.get(crate::headers::MCP_SESSION_ID) else { return Ok(None) };
    let id = id.to_str().unwrap_or("");
    // A session used by another principal than the one that created it is, for that caller,
    // no session at all: 404, as for an unknown id (nothing tells it the id exists).
    let found = state.sessions.get(id).or_else(|| take_up(state, id, auth));
    match found.filter(|s| s.belongs_to(auth.map(|a| a.key.as_str()))) {
        Some(session) => {
            session.touch();
            Ok(Some(session))
        }
        None => Err(rpc_error(
            StatusCode::NOT_FOUND,
            ResponseId::Absent,
            ErrorObject::new(code::INVALID_REQUEST, "Session not found"),
        )),
    }
}

/// A session this process does not have, taken up from its sealed id (a replica's session, or
/// one this process closed for idleness): `None` when there is no key, or the id is not one of
/// its sealed ids, has expired, or belongs to another principal.
fn take_up(state: &HttpState, id: &str, auth: Option<&Authenticated>) -> Option<Arc<HttpSession>> {
    let key = state.config.session_key.as_ref()?;
    let sealed = crate::sealed::open(key, id)?;
    if sealed.owner.as_deref() != auth.map(|a| a.key.as_str()) {
        return None;
    }
    let version = sealed.version()?;
    let session = Arc::new(HttpSession::new(sealed.owner, auth.map(|a| format!("principal {}", a.key))));
    if !state.server.restore_session(&session.connection, version, sealed.capabilities, sealed.client_info) {
        return None;
    }
    tracing::debug!(version = %version, "legacy session taken up from its sealed id");
    session.connection.set_session_label(crate::session::session_label(id));
    state.sessions.insert(id.to_owned(), session.clone());
    Some(session)
}

/// The id of a new session: sealed when a key is configured and its state fits, else random.
fn session_id(state: &HttpState, session: &HttpSession) -> String {
    if let (Some(key), Some(legacy)) = (&state.config.session_key, session.connection.session()) {
        let sealed = crate::sealed::SealedSession::new(
            legacy.version,
            legacy.client_capabilities.clone(),
            legacy.client_info.clone(),
            session.owner().map(str::to_owned),
            state.config.session_lifetime,
        );
        if let Some(id) = crate::sealed::seal(key, &sealed) {
            return id;
        }
        tracing::warn!("the session's state is too large for a sealed id: it gets a local one");
    }
    new_id()
}

async fn post(
    state: &Arc<HttpState>,
    headers: HeaderMap,
    body: Body,
    admitted: Option<Admitted>,
    auth: Option<Authenticated>,
    peer: Option<SocketAddr>,
    received: Option<std::time::Instant>,
) -> Response {
    if let Err(r) = guard::content_type(&headers) {
        return refusal(r);
    }
    let accepts = match guard::accepts(&headers) {
        Ok(a) => a,
        Err(r) => return refusal(r),
    };
    let (bytes, permits) = match intake::admit(state, &headers, body, auth.as_ref(), admitted).await {
        Ok(read) => read,
        Err(r) => return r,
    };
    let message = match door::receive(&bytes, false) {
        Ok(Inbound::Request(mut request)) => {
            if let Some(at) = received {
                request.received_at(at);
            }
            Inbound::Request(request)
        }
        Ok(m) => m,
        Err(unreadable) => {
            // The era of an unreadable body is the session's, when it names a live one.
            let session = session_of(state, &headers, auth.as_ref()).ok().flatten();
            return reply_response(unreadable.reply(session.and_then(|s| s.connection.session()).as_ref()));
        }
    };
    // The body decides the era (docs/CONFORMANCE.md §3): a request whose `_meta` is
    // 2026-07-28's is served as 2026-07-28 whatever `Mcp-Session-Id` it carries — its headers
    // checked against its body, cancelled when its stream closes, never resumable — and the
    // session header is ignored (an unknown id is not a 404). A session is one `initialize`
    // away for anyone, so it must not exempt a request from the modern checks.
    let message = match message {
        Inbound::Request(request) if request.is_modern() => {
            return modern_request(state, &headers, request, accepts, permits, auth, peer).await;
        }
        other => other,
    };
    let session = match session_of(state, &headers, auth.as_ref()) {
        Ok(s) => s,
        Err(r) => return r,
    };
    if let Inbound::Request(request) = &message {
        if let Err(r) = check_tool_scopes(state, auth.as_ref(), request) {
            return r;
        }
    }
    let principal = auth.as_ref().map(|a| a.principal.clone());
    match message {
        Inbound::Notification(n) => {
            match &session {
                Some(s) => state.server.handle_notification(&s.connection, n),
                None => state.server.handle_notification(&Connection::new(Arc::new(NullSink)), n),
            }
            StatusCode::ACCEPTED.into_response()
        }
        Inbound::Response(r) => match &session {
            Some(s) => {
                state.server.handle_response(&s.connection, r);
                StatusCode::ACCEPTED.into_response()
            }
            None => rpc_error(
                StatusCode::BAD_REQUEST,
                ResponseId::Absent,
                ErrorObject::invalid_request("a response was sent where a request was due"),
            ),
        },
        // Batches are never decoded on HTTP (`receive` was told so); refused like any.
        Inbound::Batch(_) => rpc_error(
            StatusCode::BAD_REQUEST,
            ResponseId::Absent,
            ErrorObject::invalid_request("batches are not accepted"),
        ),
        Inbound::Request(request) => match session {
            Some(session) => {
                // Inside a session the header names the negotiated legacy revision (2025-06-18
                // on); an unknown one is refused (2025-11-25: 400 Bad Request).
                let header = headers
                    .get(crate::headers::MCP_PROTOCOL_VERSION)
                    .and_then(|v| v.to_str().ok())
                    .map(str::trim_ascii);
                if let Some(version) = header.filter(|v| ProtocolVersion::parse(v).is_none()) {
                    return rpc_error(
                        StatusCode::BAD_REQUEST,
                        ResponseId::Id(request.id().clone()),
                        ErrorObject::invalid_request(format!("unsupported MCP-Protocol-Version {version:?}")),
                    );
                }
                legacy_request(state, session, request, accepts, permits.into_vec(), principal).await
            }
            None => sessionless_request(state, &headers, request, accepts, permits, auth, peer).await,
        },
    }
}

/// Serves a request whose `_meta` is 2026-07-28's, wherever it arrived (the endpoint with or
/// without a session header, or the HTTP+SSE transport's POST): the tool's scopes, then the
/// stateless order — its headers checked against its body — and an answer on this exchange.
pub(crate) async fn modern_request(
    state: &Arc<HttpState>,
    headers: &HeaderMap,
    request: Classified,
    accepts: Accepts,
    permits: Permits,
    auth: Option<Authenticated>,
    peer: Option<SocketAddr>,
) -> Response {
    if let Err(r) = check_tool_scopes(state, auth.as_ref(), &request) {
        return r;
    }
    sessionless_request(state, headers, request, accepts, permits, auth, peer).await
}

fn is_legacy_version(v: &str) -> bool {
    ProtocolVersion::parse(v).is_some_and(|v| !v.is_modern())
}

async fn sessionless_request(
    state: &Arc<HttpState>,
    headers: &HeaderMap,
    request: Classified,
    accepts: Accepts,
    permits: Permits,
    auth: Option<Authenticated>,
    peer: Option<SocketAddr>,
) -> Response {
    let id = ResponseId::Id(request.id().clone());
    if let Some(e) = request.unreadable() {
        return rpc_error(StatusCode::BAD_REQUEST, id, e.clone());
    }
    let version_header =
        headers.get(crate::headers::MCP_PROTOCOL_VERSION).and_then(|v| v.to_str().ok()).map(str::trim_ascii);
    let stateless = request.has_meta() || version_header.is_some_and(|v| !is_legacy_version(v));
    if !stateless {
        if request.is_initialize() {
            // Boxed: the initialization's future (it runs the request inline) is several
            // times the size of every other request's, which would otherwise carry it.
            return Box::pin(initialize(state, request, auth, peer)).await;
        }
        return rpc_error(
            StatusCode::BAD_REQUEST,
            id,
            ErrorObject::invalid_request(
                "Mcp-Session-Id is required: send initialize first (legacy revisions) or per-request _meta (2026-07-28)",
            ),
        );
    }
    // The stateless order: required `_meta` members, then headers against the body — both
    // read from what the front door classified, never from the body again.
    let meta = request.meta();
    let Some(version) = meta.protocol_version.as_deref() else {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            id,
            ErrorObject::invalid_params("`_meta` lacks `io.modelcontextprotocol/protocolVersion`"),
        );
    };
    if meta.client_capabilities.is_none() {
        return rpc_error(
            StatusCode::BAD_REQUEST,
            id,
            ErrorObject::invalid_params("`_meta` lacks `io.modelcontextprotocol/clientCapabilities`"),
        );
    }
    let named = request.named();
    let name = named.as_ref().map(|n| n.name.as_deref().unwrap_or(""));
    if let Err(e) = headers::check_standard(headers, request.method(), version, name) {
        return rpc_error(StatusCode::BAD_REQUEST, id, e);
    }
    if request.method() == CallTool::METHOD {
        // The tool's annotations were computed when it was registered: shared, not recomputed.
        if let Some(annotations) = name.and_then(|name| state.server.tool_headers(name)) {
            let arguments = named.as_ref().and_then(|n| n.arguments.as_deref());
            if let Err(e) = headers::check_parameters(headers, &annotations, arguments) {
                return rpc_error(StatusCode::BAD_REQUEST, id, e);
            }
        }
    }
    drop(named);
    let long_lived = request.is_listen();
    let permits = if long_lived {
        let caller = caller_key(auth.as_ref(), peer);
        match state.streams.try_open(caller.as_deref()) {
            Some(stream) => permits.into_stream(stream),
            None => return unavailable("too many open streams"),
        }
    } else {
        permits.into_vec()
    };
    // Each modern request is a connection of its own: its id can never be in flight there.
    let in_flight = match door::admit(&Connection::new(Arc::new(NullSink)), &request) {
        Ok(in_flight) => in_flight,
        Err(reply) => return reply_response(reply),
    };
    let exchange = Exchange {
        server: state.server.clone(),
        accepts,
        on_disconnect: OnDisconnect::Cancel,
        keep_alive: state.config.keep_alive,
        long_lived,
        in_flight,
        permits,
        resumable: None,
        principal: auth.map(|a| a.principal),
    };
    exchange::serve(exchange, request).await
}

async fn initialize(
    state: &Arc<HttpState>,
    request: Classified,
    auth: Option<Authenticated>,
    peer: Option<SocketAddr>,
) -> Response {
    let caller = caller_key(auth.as_ref(), peer);
    let (principal, owner) = match auth {
        Some(a) => (Some(a.principal), Some(a.key)),
        None => (None, None),
    };
    let session = Arc::new(HttpSession::new(owner, caller));
    let sink: Arc<dyn mcp_server::MessageSink> = session.outbox.clone();
    let reply = match door::admit(&session.connection, &request) {
        Ok(in_flight) => state.server.run(request, &in_flight, Some(sink), principal).await,
        Err(refusal) => Some(refusal),
    };
    let Some(reply) = reply else { return StatusCode::ACCEPTED.into_response() };
    let ok = reply.response.result.is_ok();
    let mut response = exchange::answered(reply_response(reply));
    if ok {
        let id = session_id(state, &session);
        if let Ok(value) = HeaderValue::from_str(&id) {
            response.headers_mut().insert(crate::headers::MCP_SESSION_ID, value);
        }
        session.connection.set_session_label(crate::session::session_label(&id));
        state.sessions.insert(id, session);
    }
    response
}

async fn legacy_request(
    state: &Arc<HttpState>,
    session: Arc<HttpSession>,
    request: Classified,
    accepts: Accepts,
    permits: Vec<crate::gate::Permit>,
    principal: Option<Arc<mcp_server::Principal>>,
) -> Response {
    let in_flight = match door::admit(&session.connection, &request) {
        Ok(f) => f,
        Err(duplicate) => return reply_response(duplicate),
    };
    let exchange = Exchange {
        server: state.server.clone(),
        accepts,
        on_disconnect: OnDisconnect::Continue,
        keep_alive: state.config.keep_alive,
        long_lived: false,
        in_flight,
        permits,
        resumable: Some({
            let stream = new_id();
            session.add_stream(&stream);
            Resumable { store: state.events.clone(), stream, retry: state.config.sse_retry }
        }),
        principal,
    };
    exchange::serve(exchange, request).await
}

async fn get(state: &Arc<HttpState>, headers: HeaderMap, auth: Option<Authenticated>) -> Response {
    match guard::accepts(&headers) {
        Ok(a) if a.sse => {}
        _ => return (StatusCode::NOT_ACCEPTABLE, "GET needs Accept: text/event-stream").into_response(),
    }
    let session = match session_of(state, &headers, auth.as_ref()) {
        Ok(Some(s)) => s,
        Ok(None) => {
            // 2026-07-28 has no GET stream (subscriptions/listen replaced it).
            let mut r = StatusCode::METHOD_NOT_ALLOWED.into_response();
            r.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST"));
            return r;
        }
        Err(r) => return r,
    };
    if let Some(last) = headers.get("last-event-id").and_then(|v| v.to_str().ok()) {
        return resume(state, &session, last);
    }
    let (tx, rx) = mpsc::channel::<Vec<u8>>(64);
    if !session.outbox.open(tx) {
        return (StatusCode::CONFLICT, "a GET stream is already open for this session").into_response();
    }
    let (body_tx, body_rx) = mpsc::channel::<Bytes>(64);
    tokio::spawn(sse::pump(rx, body_tx, state.config.keep_alive));
    sse_response(body_rx)
}

fn delete(state: &HttpState, headers: &HeaderMap, auth: Option<&Authenticated>) -> Response {
    let Some(id) = headers.get(crate::headers::MCP_SESSION_ID).and_then(|v| v.to_str().ok()) else {
        return (StatusCode::BAD_REQUEST, "Mcp-Session-Id is required").into_response();
    };
    // Only the session's own principal may end it; to anyone else it does not exist. A sealed
    // id of a replica's session is taken up, then ended here.
    let found = state.sessions.get(id).or_else(|| take_up(state, id, auth));
    if !found.is_some_and(|s| s.belongs_to(auth.map(|a| a.key.as_str()))) {
        return StatusCode::NOT_FOUND.into_response();
    }
    match state.sessions.remove(id) {
        Some(_) => StatusCode::OK.into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

/// `GET` with `Last-Event-ID`: replays what the stream recorded after that event, then follows
/// it until its final response. When the store no longer holds everything after that event
/// (evicted by its bounds), the resumption is refused with `410 Gone` rather than answered
/// with a stream missing events; a stream that loses events while it is being followed ends
/// (the next resumption gets the 410).
fn resume(state: &HttpState, session: &HttpSession, last: &str) -> Response {
    let Some((stream, seq)) = parse_id(last.trim()) else {
        return (StatusCode::BAD_REQUEST, "malformed Last-Event-ID").into_response();
    };
    if !session.owns_stream(stream) {
        return (StatusCode::NOT_FOUND, "unknown stream for this session").into_response();
    }
    let stream = stream.to_owned();
    let store = state.events.clone();
    if store.after(&stream, seq).is_none() {
        return (StatusCode::GONE, "the events after Last-Event-ID are no longer kept").into_response();
    }
    let keep_alive = state.config.keep_alive;
    let (body_tx, body_rx) = mpsc::channel::<Bytes>(64);
    tokio::spawn(async move {
        let mut after = seq;
        let mut quiet = std::time::Duration::ZERO;
        loop {
            // Read the finished flag first: events recorded before it are read below.
            let finished = store.is_finished(&stream);
            let Some(events) = store.after(&stream, after) else { return };
            for (seq, id, data) in events {
                after = seq;
                if data.is_empty() {
                    continue; // a priming event
                }
                if body_tx.send(sse::event_with_id(&id, &data)).await.is_err() {
                    return;
                }
                quiet = std::time::Duration::ZERO;
            }
            if finished {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            quiet += std::time::Duration::from_millis(20);
            if quiet >= keep_alive {
                quiet = std::time::Duration::ZERO;
                if body_tx.send(sse::comment()).await.is_err() {
                    return;
                }
            }
        }
    });
    sse_response(body_rx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_event_store_keeps_to_the_configured_byte_budget() {
        let server = Server::builder("t", "1").build().unwrap();
        let state = HttpState::new(server, HttpConfig::default().max_replay_bytes(4096));
        state.events.append("a", &[b'x'; 3000]);
        state.events.finish("a");
        assert!(state.events.after("a", 0).is_some());
        state.events.append("b", &[b'x'; 3000]);
        assert!(state.events.after("a", 0).is_none(), "the finished stream was evicted for the new one");
        assert!(state.events.after("b", 0).is_some());
    }
}
