//! The request engine: ids, the table of calls waiting for answers, routing of everything the
//! server sends, answers to server→client requests, and cancellation when a call is dropped.
//! It knows nothing about eras beyond what it is told per request.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use bytes::Bytes;
use mcp_types::{
    CancelledNotificationParams, DecodeOptions, ErrorObject, Message, Notification,
    ProgressNotificationParams, ProtocolVersion, RawJson, Request, RequestId, Response, ResponseId,
    ServerNotification, ServerRequest,
};
use serde_json::{Map, Value};
use tokio::sync::{Semaphore, broadcast, mpsc};
use tokio::task::AbortHandle;

use crate::client::QueueLimits;
use crate::error::ClientError;
use crate::handler::Handlers;
use crate::transport::{
    Deadline, Inbound, InboundReceiver, Outgoing, OutgoingKind, RequestHeaders, Sent, Transport,
    TransportError, TransportKind,
};

/// A progress callback: `(progress, total, message)`.
pub type ProgressFn = Arc<dyn Fn(&ProgressNotificationParams) + Send + Sync>;

/// What one call hears of while it waits.
#[derive(Debug)]
pub(crate) enum CallEvent {
    Progress(ProgressNotificationParams),
    /// A notification tagged with this request's id as subscription id.
    Tagged(Notification),
}

/// How one call ended.
#[derive(Debug)]
pub(crate) enum CallEnd {
    Answer(Result<RawJson, ErrorObject>),
    Failed(ClientError),
    /// The answer to this request arrived but is no valid JSON-RPC response (what is wrong).
    Malformed(String),
}

/// A call waiting for its answer: what the reading side has handed it so far, and who to wake.
/// One per call, shared by the pending table and the waiting call (one allocation, where
/// channels took four); its queue allocates only when notifications arrive for the call.
#[derive(Default)]
struct Slot(Mutex<Mailbox>);

#[derive(Default)]
struct Mailbox {
    /// Notifications for the call, at most [`QueueLimits::call_events`]: the engine never waits
    /// for a call (a caller that does not poll its call must not stall every other one), so
    /// past that they are dropped and counted.
    events: VecDeque<CallEvent>,
    /// How the call ended, once it did.
    end: Option<CallEnd>,
    /// Notifications dropped because `events` was full.
    dropped: u64,
    /// The waiting call, to wake when something arrives.
    waker: Option<Waker>,
}

impl Slot {
    /// Whether the call has ended (its end not yet taken).
    fn ended(&self) -> bool {
        lock(&self.0).end.is_some()
    }

    /// Hands the call an event, or ends it, and wakes it.
    fn put(&self, put: impl FnOnce(&mut Mailbox)) {
        let waker = {
            let mut mailbox = lock(&self.0);
            put(&mut mailbox);
            mailbox.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// The next event, else the end (events first: what arrived before the end is seen before
    /// it), else `Pending` until one arrives.
    fn poll_next(&self, cx: &mut Context<'_>) -> Poll<Next> {
        let mut mailbox = lock(&self.0);
        if let Some(event) = mailbox.events.pop_front() {
            return Poll::Ready(Next::Event(event));
        }
        if let Some(end) = mailbox.end.take() {
            return Poll::Ready(Next::End(end));
        }
        match &mut mailbox.waker {
            Some(waker) if waker.will_wake(cx.waker()) => {}
            waker => *waker = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
}

/// How long a message the client sends on its own (a cancellation, the answer to a server's
/// request) may take to leave before it is given up: nobody waits for these, but a server that
/// never answers their POST must not keep a task and a connection forever.
const BACKGROUND_SEND_TIMEOUT: Duration = Duration::from_secs(30);

/// Per-request options the engine applies.
#[derive(Clone, Default)]
pub(crate) struct SendOptions {
    /// How long the whole exchange may take, the transport's send included; restarted by each
    /// progress notification when `reset_on_progress`.
    pub(crate) timeout: Option<Duration>,
    /// The hard limit, from the start of the request, that progress never extends.
    pub(crate) max_timeout: Option<Duration>,
    pub(crate) reset_on_progress: bool,
    pub(crate) progress: Option<ProgressFn>,
    pub(crate) version: Option<ProtocolVersion>,
    pub(crate) headers: RequestHeaders,
    pub(crate) tag: Option<crate::handler::Tag>,
}

pub(crate) struct Engine {
    pub(crate) transport: Arc<dyn Transport>,
    pending: Mutex<HashMap<RequestId, Arc<Slot>>>,
    next_id: AtomicI64,
    handlers: Handlers,
    /// `None` once the connection is closed: dropping the sender ends every receiver, so a
    /// subscriber learns of the end instead of waiting for notifications that cannot come.
    notifications: Mutex<Option<broadcast::Sender<ServerNotification>>>,
    closed: Mutex<Option<TransportError>>,
    /// Bumped when the server process was replaced; the client re-handshakes lazily.
    generation: AtomicU64,
    server_tasks: Mutex<HashMap<RequestId, AbortHandle>>,
    /// The tags of requests in flight that have one ([`SendOptions::tag`]).
    tags: Mutex<HashMap<RequestId, crate::handler::Tag>>,
    /// One permit per server→client request being answered ([`QueueLimits::server_requests`]).
    server_slots: Arc<Semaphore>,
    /// Refusals of server→client requests beyond the limit, on their way out: a task of their
    /// own sends them, so that reading never waits for one unless this many wait already.
    refusals: mpsc::Sender<Outgoing>,
    limits: QueueLimits,
    /// The version to stamp on answers to server→client requests.
    version: Mutex<Option<ProtocolVersion>>,
    cancel_by_notification: AtomicBool,
}

/// Notifications sent outside any call that [`Client::notifications`](crate::Client::notifications)
/// receivers may fall behind by before they lag (each lagging receiver is told how many it
/// missed; the client's own readers list again or clear their cache). A broadcast channel
/// allocates every slot when it is made, so this is memory each connection holds from its start:
/// 256 slots of a `ServerNotification` are about 64 KiB (1,024 were 254 KiB a connection — a
/// gateway holds one per upstream and one per session child).
pub(crate) const NOTIFICATION_BUFFER: usize = 256;

// Checked when the crate builds: the buffer stays a small, fixed cost per connection (a slot is
// the value, its position, the count of receivers still to read it, and a lock), yet holds more
// than one burst the read loop can deliver before the runtime lets a receiver run (Tokio's
// budget: 128).
const _: () = {
    let slot = std::mem::size_of::<ServerNotification>() + 3 * std::mem::size_of::<u64>();
    assert!(NOTIFICATION_BUFFER * slot <= 80 * 1024, "the notification buffer outgrew 80 KiB a connection");
    assert!(NOTIFICATION_BUFFER > 128, "a burst of one scheduling budget must fit the notification buffer");
};

impl Engine {
    pub(crate) fn start(
        transport: Arc<dyn Transport>,
        inbound: InboundReceiver,
        handlers: Handlers,
        limits: QueueLimits,
    ) -> Arc<Engine> {
        let (notifications, _) = broadcast::channel(NOTIFICATION_BUFFER);
        let (refusals, refused) = mpsc::channel(limits.server_requests.max(1));
        let engine = Arc::new(Engine {
            transport,
            pending: Mutex::new(HashMap::new()),
            next_id: AtomicI64::new(1),
            handlers,
            notifications: Mutex::new(Some(notifications)),
            closed: Mutex::new(None),
            generation: AtomicU64::new(0),
            server_tasks: Mutex::new(HashMap::new()),
            tags: Mutex::new(HashMap::new()),
            server_slots: Arc::new(Semaphore::new(limits.server_requests.max(1))),
            refusals,
            limits,
            version: Mutex::new(None),
            cancel_by_notification: AtomicBool::new(true),
        });
        tokio::spawn(read_loop(Arc::downgrade(&engine), inbound));
        tokio::spawn(refusal_loop(Arc::downgrade(&engine), refused));
        engine
    }

    /// The server's notifications from now on; after the connection closed, a receiver that
    /// reports the end at once.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<ServerNotification> {
        match &*lock(&self.notifications) {
            Some(sender) => sender.subscribe(),
            None => broadcast::channel(1).1,
        }
    }

    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    pub(crate) fn closed_error(&self) -> Option<TransportError> {
        lock(&self.closed).clone()
    }

    /// The negotiated version: stamps answers to server requests and decides how a dropped
    /// call is cancelled (modern HTTP closes the stream; everything else also sends
    /// `notifications/cancelled`).
    pub(crate) fn set_version(&self, version: ProtocolVersion) {
        *lock(&self.version) = Some(version);
        let by_stream = self.transport.kind() == TransportKind::StreamableHttp && version.is_modern();
        self.cancel_by_notification.store(!by_stream, Ordering::Release);
    }

    /// The id of the next request; a caller that asks for progress names it as the request's
    /// `progressToken`, by which the engine routes progress to the call.
    pub(crate) fn next_id(&self) -> RequestId {
        RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// Sends a notification, giving up after `timeout` (the transport's send: on HTTP, until the
    /// server acknowledged the POST). A notification that timed out may have arrived.
    pub(crate) async fn notify(
        &self,
        method: &str,
        params: Option<&Value>,
        version: Option<ProtocolVersion>,
        timeout: Option<Duration>,
    ) -> Result<(), ClientError> {
        let mut message = Map::new();
        message.insert("jsonrpc".into(), "2.0".into());
        message.insert("method".into(), method.into());
        if let Some(p) = params {
            message.insert("params".into(), p.clone());
        }
        let body = Bytes::from(serde_json::to_vec(&message).unwrap_or_default());
        let outgoing = Outgoing {
            body,
            kind: OutgoingKind::Notification { method: method.to_string() },
            protocol_version: version,
        };
        let sending = self.send(outgoing);
        let sent = match timeout {
            Some(limit) => {
                tokio::time::timeout(limit, sending).await.map_err(|_| ClientError::Timeout(limit))?
            }
            None => sending.await,
        };
        sent.map_err(ClientError::transport)
    }

    /// Hands one message to the transport: every message the client sends goes through here,
    /// so the wire trace sees each one, exactly as sent.
    pub(crate) async fn send(&self, outgoing: Outgoing) -> Result<(), TransportError> {
        crate::wire::sent(&outgoing.body);
        self.transport.send(outgoing).await
    }

    /// [`Engine::send`] of a request whose answer the transport may leave to the caller.
    async fn send_request(&self, outgoing: Outgoing) -> Result<Sent, TransportError> {
        crate::wire::sent(&outgoing.body);
        self.transport.send_request(outgoing).await
    }

    /// Sends one request and waits for its answer (progress and tagged notifications go to
    /// `on_event`). Dropping the future cancels the request.
    pub(crate) async fn request(
        self: &Arc<Self>,
        request: Request,
        options: &SendOptions,
        on_tagged: impl FnMut(Notification),
    ) -> Result<RawJson, ClientError> {
        self.exchange(request, options, on_tagged).await.map_err(|failure| failure.error)
    }

    /// A request of the handshake (cold paths), its params serialized from `params`.
    pub(crate) fn request_of(
        &self,
        method: &str,
        params: &impl serde::Serialize,
    ) -> Result<Request, ClientError> {
        let params =
            serde_json::value::to_raw_value(params).map_err(|e| crate::client::invalid(method, e))?;
        Ok(Request { id: self.next_id(), method: method.to_owned(), params: Some(params) })
    }

    /// [`Engine::request`], telling also whether the transport finished sending the request
    /// (on HTTP: the server began its answer) before it failed.
    pub(crate) async fn exchange(
        self: &Arc<Self>,
        request: Request,
        options: &SendOptions,
        on_tagged: impl FnMut(Notification),
    ) -> Result<RawJson, Failure> {
        // Serializing a request cannot fail: its id and method are plain, its params JSON text.
        let body = Bytes::from(serde_json::to_vec(&request).unwrap_or_default());
        self.exchange_body(request.id, &request.method, body, options, on_tagged).await
    }

    /// Sends one request already serialized (`body`, the complete JSON-RPC request with `id`
    /// and `method`) and waits for its answer, telling also whether the transport finished
    /// sending it (on HTTP: the server began its answer) before it failed. The call path
    /// serializes its requests straight into `body`, once.
    ///
    /// The timeouts cover the whole exchange, from before the transport's send to the answer: a
    /// server that accepts the connection and never answers the POST times out like one that
    /// never sends the response. A timeout cancels the request like a dropped call does (the
    /// pending entry goes, the transport abandons it, and `notifications/cancelled` follows
    /// where that is the cancellation signal); its outcome is unknown, since the request may
    /// have arrived.
    pub(crate) async fn exchange_body(
        self: &Arc<Self>,
        id: RequestId,
        method: &str,
        body: Bytes,
        options: &SendOptions,
        mut on_tagged: impl FnMut(Notification),
    ) -> Result<RawJson, Failure> {
        let started = tokio::time::Instant::now();
        let mut hard = options.max_timeout.map(|limit| (started + limit, limit));
        let soft = |from: tokio::time::Instant| options.timeout.map(|limit| (from + limit, limit));
        let mut deadline = earliest(soft(started), hard);
        let fail = |error, delivered| Failure { error, delivered };
        if let Some(error) = self.closed_error() {
            // The transport is gone: this request never leaves the client.
            let error = ClientError::Transport { error, outcome: crate::error::Outcome::NotExecuted };
            return Err(fail(error, false));
        }
        let slot = Arc::new(Slot::default());
        lock(&self.pending).insert(id.clone(), slot.clone());
        if let Some(tag) = &options.tag {
            lock(&self.tags).insert(id.clone(), tag.clone());
        }
        let mut guard = CallGuard {
            engine: self.clone(),
            id: id.clone(),
            armed: true,
            notify: method != "initialize"
                && method != "server/discover"
                && self.cancel_by_notification.load(Ordering::Acquire),
            version: options.version,
        };
        let outgoing = Outgoing {
            body,
            kind: OutgoingKind::Request {
                id: id.clone(),
                method: method.to_owned(),
                headers: options.headers.clone(),
            },
            protocol_version: options.version,
        };
        // The transport pauses this clock while the request waits for something other than
        // the server (an authorization flow, perhaps a person in a browser): the deadlines move
        // on by the time paused (the hard one included).
        let clock = Deadline::new();
        let sending = clock.scope(self.send_request(outgoing));
        tokio::pin!(sending);
        // One timer for the whole exchange, the send and the wait: registered once, and moved
        // (not made anew) when a deadline moves.
        let mut timer = std::pin::pin!(deadline.map(|(at, _)| tokio::time::sleep_until(at)));
        let mut soft_from = started;
        let mut credited = Duration::ZERO;
        let sent = loop {
            let (Some(expiry), Some((_, limit))) = (timer.as_mut().as_pin_mut(), deadline) else {
                break sending.as_mut().await;
            };
            tokio::select! {
                biased;
                sent = sending.as_mut() => break sent,
                () = expiry => {
                    let (paused_now, paused) = clock.paused();
                    if !paused_now && paused <= credited {
                        // The guard stays armed: the request is cancelled as the error returns.
                        return Err(fail(ClientError::Timeout(limit), false));
                    }
                    // While a pause runs, this repeats, each time moving on by what was paused
                    // since the last time.
                    let moved = paused.saturating_sub(credited).max(Duration::from_millis(1));
                    credited = paused;
                    soft_from += moved;
                    hard = hard.map(|(at, limit)| (at + moved, limit));
                    deadline = earliest(soft(soft_from), hard);
                    move_timer(timer.as_mut(), deadline);
                }
            }
        };
        let reading = match sent {
            Err(error) => {
                guard.disarm();
                return Err(fail(answer_from_http_error(error), false));
            }
            Ok(Sent::Inbound) => None,
            Ok(Sent::Answer(reading)) => Some(reading),
        };
        // The transport left the answer to this task: read it here, with the deadline, and
        // hand it over as the reading side would (the loop below then finds it at once).
        if let Some(reading) = reading {
            let answer = match (timer.as_mut().as_pin_mut(), deadline) {
                (Some(expiry), Some((_, limit))) => tokio::select! {
                    biased;
                    answer = reading => answer,
                    () = expiry => return Err(fail(ClientError::Timeout(limit), true)),
                },
                _ => reading.await,
            };
            if let Some(bytes) = answer {
                crate::wire::received(&bytes);
                // Decoded once, as any message: the response to this request ends the call.
                // Anything else is handled as what it is, and the call fails at once.
                if !bytes.iter().all(u8::is_ascii_whitespace) {
                    self.on_message(bytes.clone(), None).await;
                }
                if !slot.ended() {
                    let error = crate::transport::not_the_response(&bytes, &id)
                        .unwrap_or_else(|| "the server's JSON answer did not end the request".into());
                    self.finish(&id, CallEnd::Failed(ClientError::lost(TransportError::Unexpected(error))));
                }
            }
        }
        loop {
            let next = std::future::poll_fn(|cx| slot.poll_next(cx));
            let next = match (timer.as_mut().as_pin_mut(), deadline) {
                (Some(expiry), Some((_, limit))) => tokio::select! {
                    biased;
                    next = next => next,
                    () = expiry => return Err(fail(ClientError::Timeout(limit), true)),
                },
                _ => next.await,
            };
            let ended = match next {
                Next::Event(CallEvent::Progress(p)) => {
                    if let Some(f) = &options.progress {
                        f(&p);
                    }
                    if options.reset_on_progress {
                        // Never past the hard limit.
                        deadline = earliest(soft(tokio::time::Instant::now()), hard);
                        move_timer(timer.as_mut(), deadline);
                    }
                    continue;
                }
                Next::Event(CallEvent::Tagged(n)) => {
                    on_tagged(n);
                    continue;
                }
                Next::End(ended) => ended,
            };
            // Whoever ended the call took it out of the pending table; what arrived before the
            // end was seen first.
            guard.armed = false;
            lock(&self.tags).remove(&id);
            let dropped = lock(&slot.0).dropped;
            if dropped > 0 {
                tracing::warn!(target: "mcp_client", id = ?id, "{dropped} notifications for this {method} were dropped: the caller did not keep up");
            }
            return match ended {
                CallEnd::Answer(answer) => answer.map_err(|e| fail(ClientError::Protocol(e), true)),
                CallEnd::Failed(e) => Err(fail(e, true)),
                // The exchange is over: no other answer will come.
                CallEnd::Malformed(message) => {
                    Err(fail(ClientError::MalformedAnswer { method: method.to_owned(), message }, true))
                }
            };
        }
    }

    /// Hands a notification to the call `id`, without waiting: false when no such call waits.
    /// Past [`QueueLimits::call_events`] waiting for the call, it is dropped and counted.
    fn deliver(&self, id: &RequestId, event: CallEvent) -> bool {
        let pending = lock(&self.pending);
        let Some(slot) = pending.get(id) else { return false };
        let limit = self.limits.call_events.max(1);
        slot.put(|mailbox| {
            if mailbox.events.len() < limit {
                mailbox.events.push_back(event);
            } else {
                mailbox.dropped += 1;
            }
        });
        true
    }

    /// Ends the call `id`: false when no such call waits.
    fn finish(&self, id: &RequestId, end: CallEnd) -> bool {
        let Some(slot) = lock(&self.pending).remove(id) else { return false };
        slot.put(|mailbox| mailbox.end = Some(end));
        true
    }

    fn fail_all(&self, error: &TransportError) {
        let drained: Vec<_> = lock(&self.pending).drain().collect();
        for (_, slot) in drained {
            slot.put(|mailbox| mailbox.end = Some(CallEnd::Failed(ClientError::lost(error.clone()))));
        }
    }

    /// Handles one message; `tag` is the tag of the request whose stream carried it, if any.
    async fn on_message(self: &Arc<Self>, bytes: Bytes, tag: Option<crate::handler::Tag>) {
        let message = match mcp_types::decode_message(&bytes, DecodeOptions::default()) {
            Ok(m) => m,
            Err(e) => {
                // A response to a pending request (its id, `result` or `error`, no `method`) that
                // is malformed ends that exchange: the call fails now instead of at its timeout.
                if let Some(id) = crate::transport::response_id(&bytes)
                    && self.finish(&id, CallEnd::Malformed(e.detail.clone()))
                {
                    tracing::warn!(target: "mcp_client", id = ?id, "malformed answer from the server: {}", e.detail);
                    return;
                }
                tracing::warn!(
                    target: crate::wire::IGNORED_TARGET,
                    "ignored what the server sent, not JSON-RPC ({}): {}",
                    e.detail,
                    crate::wire::preview(&bytes)
                );
                return;
            }
        };
        match message {
            Message::Response(response) => match response.id {
                ResponseId::Id(id) => {
                    if !self.finish(&id, CallEnd::Answer(response.result)) {
                        tracing::debug!(target: "mcp_client", id = ?id, "answer to a request nobody waits for");
                    }
                }
                _ => match response.result {
                    Err(error) => {
                        tracing::warn!(target: "mcp_client", code = error.code, "server error without id: {}", error.message)
                    }
                    Ok(_) => tracing::warn!(target: "mcp_client", "result without id ignored"),
                },
            },
            Message::Notification(n) => self.on_notification(n),
            Message::Request(request) => self.on_request(request, tag).await,
        }
    }

    fn on_notification(&self, n: Notification) {
        if n.method == "notifications/progress" {
            if let Ok(p) = n.params_as::<ProgressNotificationParams>() {
                let token = p.progress_token.clone();
                self.deliver(&token, CallEvent::Progress(p));
            }
            return;
        }
        if n.method == "notifications/cancelled" {
            if let Ok(p) = n.params_as::<CancelledNotificationParams>()
                && let Some(id) = p.request_id
                && let Some(task) = lock(&self.server_tasks).remove(&id)
            {
                task.abort();
            }
            return;
        }
        if let Some(sub) = subscription_id(&n)
            && lock(&self.pending).contains_key(&sub)
        {
            self.deliver(&sub, CallEvent::Tagged(n));
            return;
        }
        match ServerNotification::from_notification(&n) {
            Ok(typed) => {
                if let Some(sender) = &*lock(&self.notifications) {
                    let _ = sender.send(typed);
                }
            }
            Err(e) => tracing::warn!(target: "mcp_client", "malformed {}: {}", n.method, e.message),
        }
    }

    /// Answers a server→client request in a task of its own, at most
    /// [`QueueLimits::server_requests`] at once; one beyond is refused at once, never queued.
    async fn on_request(self: &Arc<Self>, request: Request, tag: Option<crate::handler::Tag>) {
        let Ok(permit) = self.server_slots.clone().try_acquire_owned() else {
            let limit = self.limits.server_requests;
            tracing::warn!(target: "mcp_client", "refusing the server's {}: already answering {limit} of its requests", request.method);
            let error = ErrorObject::internal(format!(
                "the client is already answering {limit} requests of this server, its limit \
                 (QueueLimits::server_requests); {} refused, try again later",
                request.method
            ))
            .with_data(serde_json::json!({"limit": limit}));
            let outgoing = Outgoing {
                body: Bytes::from(Message::Response(Response::error(request.id, error)).to_vec()),
                kind: OutgoingKind::Response,
                protocol_version: *lock(&self.version),
            };
            // Waits only when as many refusals as the limit are still on their way out.
            let _ = self.refusals.send(outgoing).await;
            return;
        };
        let engine = self.clone();
        let id = request.id.clone();
        let task = tokio::spawn(async move {
            let _permit = permit;
            let answer = crate::handler::REQUEST_TAG.scope(tag, engine.answer(&request)).await;
            let response = match answer {
                Ok(value) => Response::ok(request.id.clone(), &value).unwrap_or_else(|e| {
                    Response::error(request.id.clone(), ErrorObject::internal(e.to_string()))
                }),
                Err(error) => Response::error(request.id.clone(), error),
            };
            lock(&engine.server_tasks).remove(&request.id);
            let version = *lock(&engine.version);
            let outgoing = Outgoing {
                body: Bytes::from(Message::Response(response).to_vec()),
                kind: OutgoingKind::Response,
                protocol_version: version,
            };
            match tokio::time::timeout(BACKGROUND_SEND_TIMEOUT, engine.send(outgoing)).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    tracing::warn!(target: "mcp_client", "could not answer the server's {}: {e}", request.method)
                }
                Err(_) => {
                    tracing::warn!(target: "mcp_client", "could not answer the server's {}: no acknowledgement within {BACKGROUND_SEND_TIMEOUT:?}", request.method)
                }
            }
        });
        lock(&self.server_tasks).insert(id, task.abort_handle());
    }

    async fn answer(&self, request: &Request) -> Result<Value, ErrorObject> {
        match ServerRequest::from_request(request)? {
            ServerRequest::Ping(_) => Ok(Value::Object(Map::new())),
            ServerRequest::Elicit(params) => to_value(self.handlers.elicit(params).await),
            ServerRequest::CreateMessage(params) => to_value(self.handlers.sample(params).await),
            ServerRequest::ListRoots(_) => to_value(self.handlers.roots().await),
            _ => Err(ErrorObject::method_not_found(&request.method)),
        }
    }
}

/// Sends the refusals of server→client requests beyond the limit, one after the other.
async fn refusal_loop(engine: Weak<Engine>, mut refused: mpsc::Receiver<Outgoing>) {
    while let Some(outgoing) = refused.recv().await {
        let Some(engine) = engine.upgrade() else { return };
        match tokio::time::timeout(BACKGROUND_SEND_TIMEOUT, engine.send(outgoing)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::warn!(target: "mcp_client", "could not refuse a request of the server: {e}")
            }
            Err(_) => {
                tracing::warn!(target: "mcp_client", "could not refuse a request of the server: no acknowledgement within {BACKGROUND_SEND_TIMEOUT:?}")
            }
        }
    }
}

/// What a waiting call heard next.
enum Next {
    Event(CallEvent),
    End(CallEnd),
}

/// Moves the exchange's timer to `deadline` (the timer exists exactly when a deadline does).
fn move_timer(
    timer: std::pin::Pin<&mut Option<tokio::time::Sleep>>,
    deadline: Option<(tokio::time::Instant, Duration)>,
) {
    if let (Some(expiry), Some((at, _))) = (timer.as_pin_mut(), deadline) {
        expiry.reset(at);
    }
}

/// How a request failed.
pub(crate) struct Failure {
    pub(crate) error: ClientError,
    /// Whether the transport had finished sending the request (on HTTP: the answer had begun)
    /// when it failed. A timeout before that means the server never took the request in.
    pub(crate) delivered: bool,
}

/// The deadline that comes first, with the limit it enforces.
fn earliest(
    a: Option<(tokio::time::Instant, Duration)>,
    b: Option<(tokio::time::Instant, Duration)>,
) -> Option<(tokio::time::Instant, Duration)> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if b.0 <= a.0 { b } else { a }),
        (a, b) => a.or(b),
    }
}

/// A `4xx` whose body is a JSON-RPC error response is the server's answer (modern servers send
/// `-32022`, `-32021`, `-32020` and `-32602` this way); anything else stays a transport error —
/// a `404` too, whatever its body: on a legacy session it means the session is gone (the server
/// restarted, or expired it), which the client cures by initializing again.
pub(crate) fn answer_from_http_error(error: TransportError) -> ClientError {
    if let TransportError::Http { body, status, .. } = &error
        && *status != 404
        && let Ok(Message::Response(Response { result: Err(e), .. })) =
            mcp_types::decode_message(body, DecodeOptions::default())
    {
        return ClientError::Protocol(e);
    }
    ClientError::transport(error)
}

fn subscription_id(n: &Notification) -> Option<RequestId> {
    #[derive(serde::Deserialize)]
    struct P {
        #[serde(rename = "_meta")]
        meta: Option<M>,
    }
    #[derive(serde::Deserialize)]
    struct M {
        #[serde(rename = "io.modelcontextprotocol/subscriptionId")]
        id: Option<RequestId>,
    }
    let params = n.params.as_ref()?;
    serde_json::from_str::<P>(params.get()).ok()?.meta?.id
}

async fn read_loop(engine: Weak<Engine>, mut inbound: InboundReceiver) {
    while let Some(event) = inbound.recv().await {
        let Some(engine) = engine.upgrade() else { return };
        match event {
            Inbound::Message(bytes) => {
                crate::wire::received(&bytes);
                engine.on_message(bytes, None).await
            }
            Inbound::Related { message, request } => {
                crate::wire::received(&message);
                let tag = lock(&engine.tags).get(&request).cloned();
                engine.on_message(message, tag).await
            }
            Inbound::Unanswered { id, error } => {
                engine.finish(&id, CallEnd::Failed(ClientError::lost(error)));
            }
            Inbound::Restarted { error } => {
                tracing::warn!(target: "mcp_client", "server restarted: {error}");
                engine.generation.fetch_add(1, Ordering::AcqRel);
                engine.fail_all(&error);
            }
            Inbound::Closed(error) => {
                *lock(&engine.closed) = Some(error.clone());
                lock(&engine.notifications).take();
                engine.fail_all(&error);
                let tasks: Vec<_> = lock(&engine.server_tasks).drain().collect();
                for (_, t) in tasks {
                    t.abort();
                }
                return;
            }
        }
    }
}

struct CallGuard {
    engine: Arc<Engine>,
    id: RequestId,
    armed: bool,
    notify: bool,
    version: Option<ProtocolVersion>,
}

impl CallGuard {
    fn disarm(&mut self) {
        self.armed = false;
        lock(&self.engine.pending).remove(&self.id);
        lock(&self.engine.tags).remove(&self.id);
    }
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        lock(&self.engine.pending).remove(&self.id);
        lock(&self.engine.tags).remove(&self.id);
        self.engine.transport.abandon(&self.id);
        if self.notify && self.engine.closed_error().is_none() {
            let Ok(handle) = tokio::runtime::Handle::try_current() else { return };
            let engine = self.engine.clone();
            let params = serde_json::json!({"requestId": &self.id, "reason": "cancelled by the client"});
            let version = self.version;
            handle.spawn(async move {
                let timeout = Some(BACKGROUND_SEND_TIMEOUT);
                let _ = engine.notify("notifications/cancelled", Some(&params), version, timeout).await;
            });
        }
    }
}

fn to_value<T: serde::Serialize>(result: Result<T, ErrorObject>) -> Result<Value, ErrorObject> {
    result.and_then(|v| serde_json::to_value(v).map_err(|e| ErrorObject::internal(e.to_string())))
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
