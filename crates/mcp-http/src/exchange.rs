//! One request served over one HTTP exchange: a JSON answer, or an SSE stream when the
//! handler sends messages of its own (progress, logs, legacy server→client requests) before
//! its result. The answer belongs to this exchange alone (docs/DECISIONS.md trap 3).

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http::{HeaderValue, StatusCode, header};
use mcp_server::{CancellationToken, Classified, InFlight, MessageSink, Refusal, Reply, SendFuture, Server};
use mcp_types::Message;
use tokio::sync::mpsc;

use crate::events::EventStore;
use crate::guard::Accepts;
use crate::sse;

/// How the exchange behaves when the client goes away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OnDisconnect {
    /// 2026-07-28: closing the response stream cancels the request.
    Cancel,
    /// Legacy revisions: a disconnect does not cancel.
    Continue,
}

/// Cancels the request when dropped, unless disarmed (the exchange completed).
struct CancelGuard(Option<CancellationToken>);

impl Drop for CancelGuard {
    fn drop(&mut self) {
        if let Some(token) = self.0.take() {
            token.cancel();
        }
    }
}

pub(crate) fn json_response(status: StatusCode, message: &Message) -> Response {
    let mut response = (status, message.to_vec()).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// The HTTP status of a reply: `200` for an answer (an error after dispatch included), `404` for
/// a method the modern wire does not serve, `429` for a rate-limited one, `400` for every other
/// refusal — the one place the
/// router's refusals become statuses (docs/DECISIONS.md, the stateless order).
pub fn http_status(reply: &Reply) -> StatusCode {
    match reply.refusal {
        None => StatusCode::OK,
        Some(Refusal::UnknownMethod) => StatusCode::NOT_FOUND,
        Some(Refusal::RateLimited) => StatusCode::TOO_MANY_REQUESTS,
        Some(_) => StatusCode::BAD_REQUEST,
    }
}

/// Marks a response made from a server's reply (the server told its observer already). Only
/// a status of 400 or more is marked: the observing layer asks no other response, and the mark
/// is an allocation (a response's first extension makes its map), which a `200` answer — every
/// successful call — is spared.
pub(crate) fn answered(mut response: Response) -> Response {
    if response.status().as_u16() >= crate::layers::observe::REFUSED_FROM {
        response.extensions_mut().insert(crate::layers::observe::Answered);
    }
    response
}

/// A reply as a JSON answer with its status (and, rate limited, `Retry-After` in whole seconds,
/// rounded up, from the error's `data.retryAfterMs`).
pub(crate) fn reply_response(reply: Reply) -> Response {
    let status = http_status(&reply);
    let retry_after = match (&reply.refusal, &reply.response.result) {
        (Some(Refusal::RateLimited), Err(error)) => {
            error.data.as_ref().and_then(|d| d["retryAfterMs"].as_u64()).map(|ms| ms.div_ceil(1000).max(1))
        }
        _ => None,
    };
    let mut response = (status, reply.to_vec()).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if let Some(seconds) = retry_after {
        headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    response
}

pub(crate) fn sse_response(body: mpsc::Receiver<Bytes>) -> Response {
    let mut response = Response::new(Body::from_stream(sse::ChannelBody(body)));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

/// A resumable stream (legacy sessions): where its events are recorded.
pub(crate) struct Resumable {
    pub(crate) store: Arc<dyn EventStore>,
    pub(crate) stream: String,
    /// The `retry` a client waits before reconnecting.
    pub(crate) retry: Duration,
}

/// What an exchange needs besides the request.
pub(crate) struct Exchange {
    pub(crate) server: Server,
    pub(crate) accepts: Accepts,
    pub(crate) on_disconnect: OnDisconnect,
    pub(crate) keep_alive: Duration,
    /// A subscription stream: always SSE.
    pub(crate) long_lived: bool,
    /// The request admitted on its connection (a legacy session's, or the exchange's own):
    /// its cancellation token, held until the request completes (unregisters its id).
    pub(crate) in_flight: InFlight,
    /// Released when the request completes (the transport's in-flight limits).
    pub(crate) permits: Vec<crate::gate::Permit>,
    /// Record the stream's events for `Last-Event-ID` replay.
    pub(crate) resumable: Option<Resumable>,
    /// The authenticated caller, handed to the handlers.
    pub(crate) principal: Option<Arc<mcp_server::Principal>>,
}

/// The per-request sink: the exchange's channel, plus the handler's request to end the
/// response stream early (honoured only where the stream can be resumed).
struct ExchangeSink {
    tx: mpsc::Sender<Vec<u8>>,
    close: Option<CancellationToken>,
}

impl MessageSink for ExchangeSink {
    fn send(&self, json: Vec<u8>) -> SendFuture<'_> {
        Box::pin(async move { self.tx.send(json).await.is_ok() })
    }

    fn close_stream(&self) -> bool {
        match &self.close {
            Some(close) => {
                close.cancel();
                true
            }
            None => false,
        }
    }
}

/// Runs `request`, answering on this exchange.
pub(crate) async fn serve(exchange: Exchange, request: Classified) -> Response {
    let Exchange {
        server,
        accepts,
        on_disconnect,
        keep_alive,
        long_lived,
        in_flight,
        permits,
        resumable,
        principal,
    } = exchange;
    let (tx, mut rx) = mpsc::channel::<Vec<u8>>(64);
    let close = resumable.as_ref().filter(|_| accepts.sse).map(|_| CancellationToken::new());
    let sink = Arc::new(ExchangeSink { tx, close: close.clone() });
    let cancel = in_flight.token().clone();
    // The front door runs it: cancelled (the stream closed, a modern request) before it
    // started it never runs, while running its future is dropped and nothing is sent.
    // Boxed before it is spawned: a task keeps its future inline, and tokio moves it into the
    // task and writes over it (output, then consumed) by value — five copies of the router's
    // future (4.8 KB) a request, measured, against one allocation.
    let task = tokio::spawn(Box::pin(async move {
        let reply = server.run(request, &in_flight, Some(sink), principal).await;
        drop((in_flight, permits));
        reply
    }));
    let mut guard = CancelGuard((on_disconnect == OnDisconnect::Cancel).then(|| cancel.clone()));
    let mut task = task;
    let closing = close.clone().unwrap_or_default();
    // Answer with JSON unless a message of the request's own arrives first (or the client only
    // takes SSE, or the request is a subscription stream, or the handler ends the stream).
    let first = if accepts.sse && (long_lived || !accepts.json) {
        None
    } else {
        loop {
            tokio::select! {
                reply = &mut task => {
                    guard.0 = None;
                    return finish_json(reply.ok().flatten());
                }
                _ = closing.cancelled(), if close.is_some() => break None,
                message = rx.recv() => match message {
                    Some(message) if accepts.sse => break Some(message),
                    // A JSON-only client cannot receive the request's own messages.
                    Some(_) => continue,
                    None => {
                        let reply = (&mut task).await;
                        guard.0 = None;
                        return finish_json(reply.ok().flatten());
                    }
                },
            }
        }
    };
    let (body_tx, body_rx) = mpsc::channel::<Bytes>(64);
    tokio::spawn(async move {
        let mut guard = guard;
        let mut body = Some(body_tx);
        // Records an event (when resumable) and sends it while the client listens.
        let emit = |json: &[u8]| -> Bytes {
            match &resumable {
                Some(r) => sse::event_with_id(&r.store.append(&r.stream, json), json),
                None => sse::event(json),
            }
        };
        if let Some(r) = &resumable {
            let id = r.store.append(&r.stream, b"");
            let priming = sse::priming(&id, r.retry);
            if let Some(tx) = &body {
                if tx.send(priming).await.is_err() {
                    body = None;
                }
            }
        }
        let mut pending = first;
        let mut ticker = tokio::time::interval(keep_alive);
        ticker.tick().await;
        loop {
            if let Some(json) = pending.take() {
                let chunk = emit(&json);
                if let Some(tx) = &body {
                    if tx.send(chunk).await.is_err() {
                        body = None;
                    }
                }
            }
            if body.is_none() && resumable.is_none() {
                // Nobody listens and nothing is recorded: a modern request is cancelled by the
                // guard; a legacy one runs on without an audience.
                return;
            }
            let open = body.clone();
            tokio::select! {
                message = rx.recv() => match message {
                    Some(json) => pending = Some(json),
                    None => break,
                },
                _ = ticker.tick(), if open.is_some() => {
                    if let Some(tx) = &body {
                        if tx.send(sse::comment()).await.is_err() {
                            body = None;
                        }
                    }
                }
                _ = async { if let Some(tx) = &open { tx.closed().await } }, if open.is_some() => body = None,
                _ = closing.cancelled(), if close.is_some() && body.is_some() => body = None,
            }
        }
        if let Ok(Some(reply)) = task.await {
            let chunk = emit(&reply.to_vec());
            if let Some(tx) = &body {
                let _ = tx.send(chunk).await;
            }
        }
        if let Some(r) = &resumable {
            r.store.finish(&r.stream);
        }
        guard.0 = None;
    });
    sse_response(body_rx)
}

fn finish_json(reply: Option<Reply>) -> Response {
    match reply {
        Some(reply) => answered(reply_response(reply)),
        // Cancelled: nothing to say.
        None => StatusCode::ACCEPTED.into_response(),
    }
}

#[cfg(test)]
mod tests {
    use mcp_types::{ErrorObject, RequestId, Response as RpcResponse};

    use super::*;

    /// A reply's response is marked as the server's (for the observing layer) when its status
    /// is one the layer would count as a refusal, and only then: a `200` carries no extension.
    #[test]
    fn only_an_answer_of_400_or_more_is_marked_as_the_servers() {
        let reply = |refusal| Reply {
            response: RpcResponse::error(RequestId::from(1), ErrorObject::internal("x")),
            refusal,
        };
        let ok = answered(reply_response(reply(None)));
        assert_eq!(ok.status(), StatusCode::OK);
        assert!(ok.extensions().is_empty(), "no extension map made for a 200");
        let refused = answered(reply_response(reply(Some(Refusal::UnknownMethod))));
        assert_eq!(refused.status(), StatusCode::NOT_FOUND);
        assert!(refused.extensions().get::<crate::layers::observe::Answered>().is_some());
    }

    #[test]
    fn refusals_map_to_statuses_here_and_answers_are_200() {
        let reply = |refusal| Reply {
            response: RpcResponse::error(RequestId::from(1), ErrorObject::internal("x")),
            refusal,
        };
        assert_eq!(http_status(&reply(None)), StatusCode::OK, "an error after dispatch is an answer");
        assert_eq!(http_status(&reply(Some(Refusal::UnknownMethod))), StatusCode::NOT_FOUND);
        for refusal in [
            Refusal::Unreadable,
            Refusal::MalformedParams,
            Refusal::MissingMeta,
            Refusal::UnsupportedVersion,
            Refusal::MissingCapability,
            Refusal::NeedsHandshake,
            Refusal::DuplicateId,
        ] {
            assert_eq!(http_status(&reply(Some(refusal))), StatusCode::BAD_REQUEST, "{refusal:?}");
        }
    }
}
