//! One upstream server: its connection, its lifecycle and its health.
//!
//! A supervisor task per upstream owns the connection: it connects (eagerly, or on the first
//! request for a lazy upstream — which is connected once at start only to list what it offers,
//! then closed until used) within the start timeout, lists what the server offers, then
//! watches it — change notifications refresh the lists; a transport that closed (a stdio
//! child that exited) or a request that failed on the transport makes it reconnect. Failed
//! connects are retried with exponential backoff and equal jitter (1 s doubling to 30 s).
//! Requests never wait for a down upstream: they fail at once with an error naming it and its
//! last failure. Closing the upstream closes the client, which stops a stdio child's process
//! group and reaps it.

mod breaker;
mod catalog;
pub(crate) mod connect;
mod sessions;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use arc_swap::ArcSwap;
use mcp_client::{Client, ClientError, SubscriptionEvent};
use mcp_types::{ErrorObject, ServerNotification, SubscriptionFilter};
use tokio::sync::{Notify, Semaphore, watch};
use tokio_util::sync::CancellationToken;

pub(crate) use catalog::{Catalog, Stale};

use crate::bridge::Callers;
use crate::config::{Sharing, Start, UpstreamConfig};
use crate::status::{UpstreamState, UpstreamStatus};

/// How often a ready upstream's transport is checked for having closed.
const CLOSED_POLL: Duration = Duration::from_millis(200);
/// How long closing waits for the supervisor to close its connection itself.
const CLOSE_WAIT: Duration = Duration::from_secs(10);
/// The first wait before reconnecting after a failure, and the longest.
const BACKOFF_START: Duration = Duration::from_secs(1);
const BACKOFF_MAX: Duration = Duration::from_secs(30);

/// Where an upstream is in its life, with its client when it has one.
#[derive(Clone)]
struct Life {
    state: UpstreamState,
    client: Option<Client>,
}

/// How the gateway hears from its upstreams: `changed` when an upstream's lists or its
/// availability changed (notifications coalesce: one aggregation covers many changes), and the
/// upstream and URI of each `notifications/resources/updated` (bounded; beyond it an update is
/// dropped, logged).
#[derive(Clone)]
pub(crate) struct Events {
    pub(crate) changed: Arc<Notify>,
    pub(crate) updates: tokio::sync::mpsc::Sender<(String, String)>,
    /// Told how long each request sent to an upstream took (`GatewayOptions::upstream_timing`).
    pub(crate) timing: Option<crate::gateway::UpstreamTiming>,
    /// Told about each request sent to an upstream (`GatewayOptions::upstream_requests`).
    pub(crate) requests: Option<Arc<dyn mcp_client::observe::RequestObserver>>,
}

impl Events {
    fn changed(&self) {
        self.changed.notify_one();
    }
}

/// One upstream.
pub(crate) struct Upstream {
    pub(crate) config: UpstreamConfig,
    /// How long listing again after a change may take (the gateway's `list_timeout`).
    list_timeout: Duration,
    life: watch::Sender<Life>,
    catalog: ArcSwap<Catalog>,
    /// Set when a lazy upstream is first needed.
    wanted: Notify,
    /// Set when a request failed on the transport: check the connection now.
    trouble: Notify,
    slots: Semaphore,
    closed: CancellationToken,
    events: Events,
    last_error: Mutex<Option<(String, SystemTime)>>,
    connects: AtomicU64,
    requests: AtomicU64,
    failures: AtomicU64,
    in_flight: AtomicUsize,
    /// Requests waiting for a slot.
    waiting: AtomicUsize,
    /// Downstream requests in flight through the shared connection that could be asked a
    /// question.
    callers: Arc<Callers>,
    /// A `per-session` upstream's children, by downstream session.
    children: sessions::Children,
    /// Children started for sessions.
    session_starts: AtomicU64,
    /// Read-only requests sent again after their connection failed.
    retries: AtomicU64,
    /// Opens after requests in a row went unanswered: then requests fail fast.
    breaker: breaker::Breaker,
    /// The resource URIs (the upstream's own) downstream clients follow: subscribed to while
    /// connected.
    following: watch::Sender<Arc<BTreeSet<String>>>,
    /// What authorizes an HTTP upstream's requests (kept across reconnections: a refreshed
    /// token stays refreshed).
    auth: Option<Arc<dyn mcp_client::transport::http::HttpAuth>>,
    /// What authorizes the requests made for a caller, when the upstream is to see the
    /// caller's credentials (`passthrough`, `token-exchange`).
    pub(crate) caller_credentials: Option<Arc<crate::credentials::CallerCredentials>>,
    /// The supervisor task, awaited by [`Upstream::close`].
    supervisor: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Upstream {
    /// Creates the upstream and starts its supervisor; an HTTP upstream's requests are
    /// authorized by `auth` when given.
    pub(crate) fn start(
        config: UpstreamConfig,
        auth: Option<Arc<dyn mcp_client::transport::http::HttpAuth>>,
        list_timeout: Duration,
        events: Events,
    ) -> Arc<Upstream> {
        let state = UpstreamState::Starting;
        let caller_credentials = crate::credentials::CallerCredentials::of(&config);
        let upstream = Arc::new(Upstream {
            slots: Semaphore::new(config.max_concurrency),
            breaker: breaker::Breaker::new(config.breaker_failures, config.breaker_cooldown),
            config,
            list_timeout,
            life: watch::Sender::new(Life { state, client: None }),
            catalog: ArcSwap::from_pointee(Catalog::default()),
            wanted: Notify::new(),
            trouble: Notify::new(),
            closed: CancellationToken::new(),
            events,
            last_error: Mutex::new(None),
            connects: AtomicU64::new(0),
            requests: AtomicU64::new(0),
            failures: AtomicU64::new(0),
            in_flight: AtomicUsize::new(0),
            waiting: AtomicUsize::new(0),
            callers: Arc::default(),
            children: sessions::Children::default(),
            session_starts: AtomicU64::new(0),
            retries: AtomicU64::new(0),
            following: watch::Sender::new(Arc::default()),
            auth,
            caller_credentials,
            supervisor: Mutex::new(None),
        });
        let task = tokio::spawn(supervise(upstream.clone()));
        *upstream.supervisor.lock().unwrap_or_else(|e| e.into_inner()) = Some(task);
        upstream
    }

    pub(crate) fn name(&self) -> &str {
        &self.config.name
    }

    /// The lists as last fetched; empty while the upstream is not ready (or, for a lazy one,
    /// idle with what it listed when the gateway started).
    pub(crate) fn catalog(&self) -> Arc<Catalog> {
        if matches!(self.life.borrow().state, UpstreamState::Ready | UpstreamState::Idle) {
            self.catalog.load_full()
        } else {
            Arc::default()
        }
    }

    /// Waits until the upstream has started — ready, or idle for a lazy one that listed what it
    /// offers — or failed, at most its start timeout (and a little more: its own timeout ends
    /// the start first).
    pub(crate) async fn wait_settled(&self) {
        let mut life = self.life.subscribe();
        let settled = async {
            while life.borrow_and_update().state == UpstreamState::Starting {
                if life.changed().await.is_err() {
                    return;
                }
            }
        };
        let _ = tokio::time::timeout(self.config.start_timeout + Duration::from_secs(1), settled).await;
    }

    /// The client, once the upstream is ready: a lazy upstream is started and waited for (at
    /// most its start timeout); a down upstream fails at once.
    async fn ready_client(&self) -> Result<Client, ErrorObject> {
        let mut life = self.life.subscribe();
        let wait = async {
            loop {
                let current = life.borrow_and_update().clone();
                match current.state {
                    UpstreamState::Ready => {
                        if let Some(client) = current.client {
                            return Ok(client);
                        }
                    }
                    UpstreamState::Idle => self.wanted.notify_one(),
                    UpstreamState::Starting => {}
                    UpstreamState::Down | UpstreamState::Closed => return Err(self.unavailable()),
                }
                if life.changed().await.is_err() {
                    return Err(self.unavailable());
                }
            }
        };
        match tokio::time::timeout(self.config.start_timeout, wait).await {
            Ok(result) => result,
            Err(_) => Err(self.unavailable()),
        }
    }

    /// Follows exactly `uris` (the upstream's own URIs) from now on: subscribes to the new
    /// ones and unsubscribes from the others, now when connected, else on connecting.
    pub(crate) fn follow(&self, uris: BTreeSet<String>) {
        self.following.send_if_modified(|current| {
            let changed = **current != uris;
            if changed {
                *current = Arc::new(uris);
            }
            changed
        });
    }

    /// The connection a downstream request in `session` (none: a stateless request) goes
    /// through: the shared one, or — a `per-session` upstream — the session's own child.
    pub(crate) fn lane(
        self: &Arc<Self>,
        session: Option<&mcp_server::SessionHandle>,
    ) -> Result<Lane, ErrorObject> {
        match session {
            Some(session) if self.config.sharing == Sharing::PerSession => {
                self.session_child(session).map(Lane::Session)
            }
            _ => Ok(Lane::Shared),
        }
    }

    /// The downstream requests in flight through `lane`'s connection.
    pub(crate) fn callers<'a>(&'a self, lane: &'a Lane) -> &'a Arc<Callers> {
        match lane {
            Lane::Shared => &self.callers,
            Lane::Session(child) => &child.callers,
        }
    }

    /// The notifications outside any call (log messages among them) of `lane`'s connection,
    /// while it is connected.
    pub(crate) fn notifications(
        &self,
        lane: &Lane,
    ) -> Option<tokio::sync::broadcast::Receiver<ServerNotification>> {
        match lane {
            Lane::Shared => self.life.borrow().client.as_ref().map(Client::notifications),
            Lane::Session(child) => Some(child.notifications()),
        }
    }

    fn unavailable(&self) -> ErrorObject {
        let last = self.last_error.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let state = self.life.borrow().state;
        let why = match last {
            Some((error, _)) => format!(": {error}"),
            None => String::new(),
        };
        ErrorObject::internal(format!("upstream {} is unavailable ({}){why}", self.name(), state.as_str()))
            .with_data(serde_json::json!({"upstream": self.name(), "state": state.as_str(), "outcome": "not executed"}))
    }

    /// Runs one request on the upstream, through `lane` ([`Upstream::run_once`]). A
    /// `read_only` request whose connection failed under it (the outcome unknown: a child that
    /// died, a connection cut) is sent once more when the upstream is back; any other fails to
    /// its caller with the outcome in its error.
    pub(crate) async fn run<T, F, Fut>(
        &self,
        lane: &Lane,
        read_only: bool,
        request: F,
    ) -> Result<T, ErrorObject>
    where
        F: Fn(Client) -> Fut,
        Fut: Future<Output = Result<T, ClientError>>,
    {
        match self.run_once(lane, &request).await {
            Err((error, true)) if read_only => {
                tracing::info!(
                    upstream = self.name(),
                    "a read-only request lost its connection: sent again once the upstream is back"
                );
                self.retries.fetch_add(1, Ordering::Relaxed);
                if matches!(lane, Lane::Shared) {
                    self.recovered().await;
                }
                self.run_once(lane, &request).await.map_err(|(again, _)| {
                    tracing::debug!(
                        upstream = self.name(),
                        "the first attempt failed too: {}",
                        error.message
                    );
                    again
                })
            }
            other => other.map_err(|(error, _)| error),
        }
    }

    /// Waits for the supervisor's verdict on a failed connection — a change of state, or none
    /// within a poll (the connection is fine) — and, when it is down, for it to be back (its
    /// backoff and start), at most the request timeout.
    async fn recovered(&self) {
        let mut life = self.life.subscribe();
        life.borrow_and_update();
        let _ = tokio::time::timeout(CLOSED_POLL + Duration::from_millis(50), life.changed()).await;
        let back = async {
            loop {
                if matches!(life.borrow_and_update().state, UpstreamState::Ready | UpstreamState::Closed) {
                    return;
                }
                if life.changed().await.is_err() {
                    return;
                }
            }
        };
        let bound = self.config.request_timeout.min(BACKOFF_START * 2 + self.config.start_timeout);
        let _ = tokio::time::timeout(bound, back).await;
    }

    /// One attempt: waits for the connection to be ready (a session's child is started), takes
    /// one of the upstream's concurrency slots (waiting at most the request timeout), and counts
    /// the outcome. A failure of the shared transport makes the supervisor check the connection;
    /// a session's child that exited is started again by the session's next request. The error
    /// says whether the transport failed under the request.
    async fn run_once<T, F, Fut>(&self, lane: &Lane, request: &F) -> Result<T, (ErrorObject, bool)>
    where
        F: Fn(Client) -> Fut,
        Fut: Future<Output = Result<T, ClientError>>,
    {
        let client = match lane {
            Lane::Shared => self.ready_client().await,
            // Boxed: starting a session's child is rare, and its future as large as a call's.
            Lane::Session(child) => Box::pin(child.client(self)).await,
        }
        .map_err(|e| (e, false))?;
        let admission =
            self.breaker.admit(self.name(), self.last_error().as_deref()).map_err(|e| (e, false))?;
        // A free slot is taken at once; only a request that must wait for one is counted as
        // waiting (the semaphore is fair: no permit is free while others wait).
        let acquired = match self.slots.try_acquire() {
            Ok(permit) => Ok(Ok(permit)),
            Err(_) => {
                self.waiting.fetch_add(1, Ordering::Relaxed);
                let _waiting = Decrement(&self.waiting);
                tokio::time::timeout(self.config.request_timeout, self.slots.acquire()).await
            }
        };
        let Ok(Ok(_permit)) = acquired else {
            let busy = ErrorObject::internal(format!(
                "upstream {} is busy: {} requests in flight, its limit, for longer than its timeout",
                self.name(),
                self.config.max_concurrency
            ))
            .with_data(serde_json::json!({"upstream": self.name(), "outcome": "not executed"}));
            return Err((busy, false));
        };
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        let _in_flight = Decrement(&self.in_flight);
        let began = std::time::Instant::now();
        let outcome = request(client).await;
        if let Some(timing) = &self.events.timing {
            let answered = !matches!(outcome, Err(ClientError::Transport { .. } | ClientError::Timeout(_)));
            timing(self.name(), began.elapsed(), answered);
        }
        match outcome {
            Ok(value) => {
                self.breaker.answered(admission, self.name());
                Ok(value)
            }
            Err(ClientError::Protocol(error)) => {
                self.breaker.answered(admission, self.name());
                Err((error, false))
            }
            Err(error) => {
                self.failures.fetch_add(1, Ordering::Relaxed);
                let transport = matches!(error, ClientError::Transport { .. });
                if transport || matches!(error, ClientError::Timeout(_)) {
                    if !transport {
                        self.record_error(&error.to_string());
                    }
                    self.breaker.failed(admission, self.name());
                } else {
                    // It answered, with something that is not the method's result.
                    self.breaker.answered(admission, self.name());
                }
                if transport {
                    self.record_error(&error.to_string());
                    if matches!(lane, Lane::Shared) {
                        self.trouble.notify_one();
                    }
                }
                Err((upstream_error(self.name(), &error), transport))
            }
        }
    }

    fn last_error(&self) -> Option<String> {
        self.last_error.lock().unwrap_or_else(|e| e.into_inner()).as_ref().map(|(e, _)| e.clone())
    }

    fn record_error(&self, error: &str) {
        *self.last_error.lock().unwrap_or_else(|e| e.into_inner()) =
            Some((error.to_owned(), SystemTime::now()));
    }

    fn set_state(&self, state: UpstreamState, client: Option<Client>) {
        self.life.send_replace(Life { state, client });
        self.events.changed();
    }

    /// Stops the supervisor, which ends its subscription and then closes the connection (a
    /// stdio child, left with nothing open, exits at the end of its input; it is stopped and
    /// reaped in any case).
    pub(crate) async fn close(&self) {
        self.closed.cancel();
        let supervisor = self.supervisor.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(supervisor) = supervisor {
            let _ = tokio::time::timeout(CLOSE_WAIT, supervisor).await;
        }
        let client = self.life.borrow().client.clone();
        self.life.send_replace(Life { state: UpstreamState::Closed, client: None });
        let shared = async {
            if let Some(client) = client {
                client.close().await;
            }
        };
        tokio::join!(shared, self.children.close_all());
    }

    pub(crate) fn status(&self) -> UpstreamStatus {
        let life = self.life.borrow().clone();
        let catalog = self.catalog();
        let last = self.last_error.lock().unwrap_or_else(|e| e.into_inner()).clone();
        UpstreamStatus {
            name: self.name().to_owned(),
            transport: transport_kind(&self.config.transport).to_owned(),
            credentials: self.config.credentials.as_str().to_owned(),
            state: life.state,
            protocol_version: life.client.as_ref().map(|c| c.protocol_version().as_str().to_owned()),
            era: life
                .client
                .as_ref()
                .map(|c| if c.protocol_version().is_modern() { "modern" } else { "legacy" }.to_owned()),
            server: life
                .client
                .as_ref()
                .and_then(|c| c.server_info())
                .map(|i| format!("{} {}", i.name, i.version)),
            tools: catalog.tools.len(),
            prompts: catalog.prompts.len(),
            resources: catalog.resources.len(),
            resource_templates: catalog.templates.len(),
            last_error: last.as_ref().map(|(e, _)| e.clone()),
            last_error_at: last.map(|(_, at)| mcp_types::time::rfc3339(at)),
            connects: self.connects.load(Ordering::Relaxed),
            restarts: self.connects.load(Ordering::Relaxed).saturating_sub(1),
            requests: self.requests.load(Ordering::Relaxed),
            failures: self.failures.load(Ordering::Relaxed),
            in_flight: self.in_flight.load(Ordering::Relaxed),
            waiting: self.waiting.load(Ordering::Relaxed),
            sharing: self.config.sharing.as_str().to_owned(),
            sessions: self.children.len(),
            session_starts: self.session_starts.load(Ordering::Relaxed),
            retries: self.retries.load(Ordering::Relaxed),
            circuit: self.breaker.position().as_str().to_owned(),
            circuit_opens: self.breaker.opens(),
            fast_failures: self.breaker.rejected(),
        }
    }
}

fn transport_kind(transport: &crate::config::Transport) -> &'static str {
    match transport {
        crate::config::Transport::Stdio { .. } => "stdio",
        crate::config::Transport::Http { .. } => "http",
        crate::config::Transport::Sse { .. } => "sse",
    }
}

/// Which connection of an upstream a downstream request goes through ([`Upstream::lane`]).
#[derive(Clone)]
pub(crate) enum Lane {
    /// The upstream's one shared connection.
    Shared,
    /// A downstream session's own child (`per-session` stdio upstreams).
    Session(Arc<sessions::SessionChild>),
}

struct Decrement<'a>(&'a AtomicUsize);

impl Drop for Decrement<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The error a downstream caller gets when the upstream could not be reached or did not answer
/// in time: `-32603`, naming the upstream, with whether the request may have run.
pub(crate) fn upstream_error(upstream: &str, error: &ClientError) -> ErrorObject {
    let outcome = match error {
        ClientError::Transport { outcome, .. } => match outcome {
            mcp_client::Outcome::NotExecuted => "not executed",
            _ => "unknown",
        },
        ClientError::Timeout(_) => "unknown",
        _ => "failed",
    };
    ErrorObject::internal(format!("upstream {upstream}: {error} (outcome: {outcome})"))
        .with_data(serde_json::json!({"upstream": upstream, "outcome": outcome}))
}

/// The wait before the `attempt`-th reconnect (1-based): exponential, capped, with equal
/// jitter (half fixed, half random) so that many gateways do not reconnect in step.
fn backoff(attempt: u32) -> Duration {
    let exp = BACKOFF_START.saturating_mul(1u32 << attempt.saturating_sub(1).min(16)).min(BACKOFF_MAX);
    let half = exp / 2;
    let nanos = u64::try_from(half.as_nanos()).unwrap_or(u64::MAX);
    let random =
        SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos() as u64);
    half + Duration::from_nanos(if nanos == 0 { 0 } else { random % nanos })
}

async fn supervise(up: Arc<Upstream>) {
    let mut attempt = 0u32;
    if up.config.start == Start::Lazy {
        // Learn what it offers once, so that its entries are listed, then let it go until a
        // request needs it: the process (or session) runs only from its first use on. One
        // that cannot be listed is retried like an eager one (and then kept).
        match open(&up).await {
            Ok((client, catalog)) => {
                up.catalog.store(Arc::new(catalog));
                client.close().await;
                up.set_state(UpstreamState::Idle, None);
                tokio::select! {
                    () = up.wanted.notified() => {}
                    () = up.closed.cancelled() => return,
                }
                up.set_state(UpstreamState::Starting, None);
            }
            Err(error) => {
                tracing::warn!(upstream = up.name(), "lazy upstream could not be listed: {error}");
                up.record_error(&error);
                up.set_state(UpstreamState::Down, None);
                attempt = 1;
                tokio::select! {
                    () = tokio::time::sleep(backoff(attempt)) => {}
                    () = up.closed.cancelled() => return,
                }
                up.set_state(UpstreamState::Starting, None);
            }
        }
    }
    loop {
        if up.closed.is_cancelled() {
            return;
        }
        match open(&up).await {
            Ok((client, catalog)) => {
                attempt = 0;
                up.connects.fetch_add(1, Ordering::Relaxed);
                up.catalog.store(Arc::new(catalog));
                if up.closed.is_cancelled() {
                    client.close().await;
                    return;
                }
                up.breaker.reset(up.name());
                up.set_state(UpstreamState::Ready, Some(client.clone()));
                tracing::info!(upstream = up.name(), version = %client.protocol_version(), "upstream ready");
                let why = watch_ready(&up, &client).await;
                if up.closed.is_cancelled() {
                    client.close().await;
                    return;
                }
                tracing::warn!(upstream = up.name(), "upstream lost: {why}");
                up.record_error(&why);
                up.set_state(UpstreamState::Down, None);
                client.close().await;
            }
            Err(error) => {
                tracing::warn!(upstream = up.name(), "upstream could not be started: {error}");
                up.record_error(&error);
                up.set_state(UpstreamState::Down, None);
            }
        }
        attempt += 1;
        tokio::select! {
            () = tokio::time::sleep(backoff(attempt)) => {}
            () = up.closed.cancelled() => return,
        }
        up.set_state(UpstreamState::Starting, None);
    }
}

/// Connects and lists, within the start timeout.
async fn open(up: &Arc<Upstream>) -> Result<(Client, Catalog), String> {
    let callers = Arc::downgrade(&up.callers);
    let opening = async {
        let client =
            connect::connect(&up.config, up.auth.clone(), callers, None, up.events.requests.as_ref())
                .await
                .map_err(|e| e.to_string())?;
        if !client.protocol_version().is_modern() && client.server_capabilities().logging.is_some() {
            // A legacy session's log messages are the session's: take them all, and pass each to
            // a caller at the level that caller asked for (`forward`).
            if let Err(e) = client.set_logging_level(mcp_types::LoggingLevel::Debug).await {
                tracing::debug!(upstream = up.name(), "logging/setLevel refused: {e}");
            }
        }
        match Catalog::default().refresh(&client, Stale::ALL).await {
            Ok(catalog) => Ok((client, catalog)),
            Err(e) => {
                client.close().await;
                Err(format!("listing failed: {e}"))
            }
        }
    };
    tokio::select! {
        opened = tokio::time::timeout(up.config.start_timeout, opening) => opened.unwrap_or_else(|_| {
            Err(format!("not ready within {} ms", up.config.start_timeout.as_millis()))
        }),
        () = up.closed.cancelled() => Err("closed".into()),
    }
}

/// What to listen for on a modern upstream: its list changes, and the resources followed
/// (when it supports subscriptions).
fn filter_for(client: &Client, uris: &BTreeSet<String>) -> SubscriptionFilter {
    let caps = client.server_capabilities();
    let subscribes = caps.resources.as_ref().is_some_and(|r| r.subscribe == Some(true));
    SubscriptionFilter {
        tools_list_changed: caps.tools.as_ref().and_then(|t| t.list_changed).filter(|&c| c),
        prompts_list_changed: caps.prompts.as_ref().and_then(|p| p.list_changed).filter(|&c| c),
        resources_list_changed: caps.resources.as_ref().and_then(|r| r.list_changed).filter(|&c| c),
        resource_subscriptions: (subscribes && !uris.is_empty()).then(|| uris.iter().cloned().collect()),
        ..Default::default()
    }
}

/// A legacy upstream's subscriptions brought to `wanted` (`subscribed` is what it has).
async fn resubscribe(
    up: &Upstream,
    client: &Client,
    subscribed: &mut BTreeSet<String>,
    wanted: &BTreeSet<String>,
) {
    let caps = client.server_capabilities();
    if caps.resources.as_ref().is_none_or(|r| r.subscribe != Some(true)) {
        return;
    }
    for uri in subscribed.difference(wanted).cloned().collect::<Vec<_>>() {
        if let Err(e) = client.unsubscribe_resource(&uri).await {
            tracing::debug!(upstream = up.name(), %uri, "resources/unsubscribe failed: {e}");
        }
        subscribed.remove(&uri);
    }
    for uri in wanted.difference(subscribed).cloned().collect::<Vec<_>>() {
        match client.subscribe_resource(&uri).await {
            Ok(()) => {
                subscribed.insert(uri);
            }
            Err(e) => tracing::warn!(upstream = up.name(), %uri, "resources/subscribe failed: {e}"),
        }
    }
}

/// Watches a ready upstream until it is lost; returns why.
async fn watch_ready(up: &Arc<Upstream>, client: &Client) -> String {
    let mut following = up.following.subscribe();
    let mut wanted = following.borrow_and_update().clone();
    // Legacy sessions send list changes and resource updates as plain notifications
    // (`client.notifications()`), after `resources/subscribe`; modern servers only on a
    // `subscriptions/listen` stream.
    let modern = client.protocol_version().is_modern();
    let mut subscribed = BTreeSet::new();
    let mut subscription = None;
    if modern {
        let filter = filter_for(client, &wanted);
        if !filter.is_empty() {
            subscription = client.listen(filter).await.ok();
        }
    } else {
        resubscribe(up, client, &mut subscribed, &wanted).await;
    }
    let mut notifications = client.notifications();
    let mut poll = tokio::time::interval(CLOSED_POLL);
    loop {
        let stale = tokio::select! {
            () = up.closed.cancelled() => return "closed".into(),
            _ = poll.tick() => {
                if let Some(why) = client.closed() {
                    return why;
                }
                continue;
            }
            changed = following.changed() => {
                if changed.is_err() {
                    return "closed".into();
                }
                wanted = following.borrow_and_update().clone();
                if modern {
                    // The new stream is open before the old one is dropped: nothing missed.
                    let filter = filter_for(client, &wanted);
                    subscription = if filter.is_empty() { None } else { client.listen(filter).await.ok() };
                } else {
                    resubscribe(up, client, &mut subscribed, &wanted).await;
                }
                continue;
            }
            () = up.trouble.notified() => {
                if let Some(why) = client.closed() {
                    return why;
                }
                // A request failed on the transport: is the server still there?
                match tokio::time::timeout(up.config.request_timeout, client.ping()).await {
                    Ok(Ok(())) | Ok(Err(ClientError::Protocol(_))) => continue,
                    Ok(Err(e)) => return format!("health check failed: {e}"),
                    Err(_) => return "health check timed out".into(),
                }
            }
            event = async {
                match subscription.as_mut() {
                    Some(s) => s.next().await,
                    None => std::future::pending().await,
                }
            } => match event {
                Some(SubscriptionEvent::Notification(n)) => changes(up, &n),
                Some(SubscriptionEvent::Acknowledged(_)) => Stale::default(),
                Some(SubscriptionEvent::Ended(_)) | None => {
                    // The stream ended (the server restarted, or closed it): listen again
                    // after a pause, and list again in case a change was missed.
                    tokio::time::sleep(BACKOFF_START).await;
                    if let Some(why) = client.closed() {
                        return why;
                    }
                    let mut filter = filter_for(client, &wanted);
                    let caps = client.server_capabilities();
                    filter.tools_list_changed = caps.tools.as_ref().and(Some(true));
                    filter.prompts_list_changed = caps.prompts.as_ref().and(Some(true));
                    filter.resources_list_changed = caps.resources.as_ref().and(Some(true));
                    subscription = client.listen(filter).await.ok();
                    Stale::ALL
                }
                _ => Stale::default(),
            },
            n = notifications.recv() => match n {
                Ok(n) => changes(up, &n),
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => Stale::ALL,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return "the connection ended".into(),
            },
        };
        if stale.any() {
            let current = up.catalog.load_full();
            let refreshed = tokio::time::timeout(up.list_timeout, current.refresh(client, stale)).await;
            match refreshed {
                Ok(Ok(catalog)) => {
                    if catalog != *current {
                        up.catalog.store(Arc::new(catalog));
                        up.events.changed();
                    }
                }
                Ok(Err(e)) => tracing::warn!(upstream = up.name(), "listing after a change failed: {e}"),
                Err(_) => tracing::warn!(upstream = up.name(), "listing after a change timed out"),
            }
        }
    }
}

/// What a notification makes stale (and resource updates passed on).
fn changes(up: &Upstream, notification: &ServerNotification) -> Stale {
    match notification {
        ServerNotification::ToolListChanged(_) => Stale { tools: true, ..Default::default() },
        ServerNotification::PromptListChanged(_) => Stale { prompts: true, ..Default::default() },
        ServerNotification::ResourceListChanged(_) => Stale { resources: true, ..Default::default() },
        ServerNotification::ResourceUpdated(p) => {
            if up.events.updates.try_send((up.name().to_owned(), p.uri.clone())).is_err() {
                tracing::warn!(upstream = up.name(), uri = %p.uri, "resource update dropped: too many waiting");
            }
            Stale::default()
        }
        _ => Stale::default(),
    }
}
