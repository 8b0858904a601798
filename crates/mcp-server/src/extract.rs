//! Extractors: what a handler declares as arguments.
//!
//! Like axum, a handler is a plain async function whose arguments are extractors. Extractors
//! that *read* the request's context ([`FromCall`]: [`State`], [`Progress`], [`Cancel`],
//! [`Log`], [`Meta`], [`ClientCaps`], [`Version`], [`Peer`](crate::Peer),
//! [`Principal`](crate::Principal), any number, any order) come first; the one that *consumes*
//! the arguments ([`FromCallLast`]: [`Args`]) comes last, at most once — the type system
//! enforces both. The input schema of a tool is the schema of its `Args<T>`.

use std::any::type_name;
use std::sync::{Arc, Mutex};

use mcp_types::methods::{LoggingMessage, Progress as ProgressMethod};
use mcp_types::{
    ClientCapabilities, JsonObject, JsonValue, LoggingLevel, LoggingMessageNotificationParams, Notification,
    ProgressNotificationParams, ProgressToken, ProtocolVersion, RequestMeta,
};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

use crate::call::{Call, Mode};
use crate::context::Change;
use crate::principal::Principal;
use crate::schema::schema_for;
use crate::session::SessionHandle;
use crate::sink::MessageSink;

/// Why an extractor could not produce its value.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Rejection {
    /// The arguments do not fit the handler's argument type (a tool error, `-32602` for a
    /// prompt).
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    /// A server misconfiguration, such as a `State<T>` that was never registered (`-32603`).
    #[error("{0}")]
    Internal(String),
    /// Fail the request with exactly this JSON-RPC error, after dispatch: what a gateway
    /// returns when its upstream answered with an error, so the caller sees the upstream's code
    /// and message rather than a tool error or an internal one.
    #[error("{}", .0.message)]
    Protocol(mcp_types::ErrorObject),
}

/// An extractor that reads the request's context. Any number, in any order.
pub trait FromCall: Sized + Send + 'static {
    /// Produces the value from the request's context.
    fn from_call(call: &Call) -> Result<Self, Rejection>;
}

/// An extractor that may consume the request (its arguments). At most one, in last position.
pub trait FromCallLast: Sized + Send + 'static {
    /// Produces the value, possibly taking parts of the request.
    fn from_call_last(call: &mut Call) -> Result<Self, Rejection>;

    /// The JSON Schema of the arguments this extractor accepts, when it consumes arguments.
    fn input_schema() -> Option<JsonObject> {
        None
    }
}

impl<T: FromCall> FromCallLast for T {
    fn from_call_last(call: &mut Call) -> Result<Self, Rejection> {
        T::from_call(call)
    }
}

/// The arguments, deserialized into `T`; `T`'s JSON Schema is the tool's `inputSchema`.
#[derive(Debug, Clone)]
pub struct Args<T>(pub T);

impl<T: DeserializeOwned + JsonSchema + Send + 'static> FromCallLast for Args<T> {
    fn from_call_last(call: &mut Call) -> Result<Self, Rejection> {
        let arguments = call.arguments.take().unwrap_or_default();
        serde_json::from_value(JsonValue::Object(arguments))
            .map(Args)
            .map_err(|e| Rejection::InvalidArguments(e.to_string()))
    }

    fn input_schema() -> Option<JsonObject> {
        Some(schema_for::<T>())
    }
}

/// Shared application state registered with `ServerBuilder::state`.
#[derive(Debug, Clone)]
pub struct State<S>(pub S);

impl<S: Clone + Send + Sync + 'static> FromCall for State<S> {
    fn from_call(call: &Call) -> Result<Self, Rejection> {
        call.server.state::<S>().map(State).ok_or_else(|| {
            Rejection::Internal(format!("no state of type {} was registered", type_name::<S>()))
        })
    }
}

/// The request's `_meta`.
#[derive(Debug, Clone)]
pub struct Meta(pub RequestMeta);

impl FromCall for Meta {
    fn from_call(call: &Call) -> Result<Self, Rejection> {
        Ok(Meta(RequestMeta::clone(&call.meta)))
    }
}

/// The client's declared capabilities for this request.
#[derive(Debug, Clone)]
pub struct ClientCaps(pub ClientCapabilities);

impl FromCall for ClientCaps {
    fn from_call(call: &Call) -> Result<Self, Rejection> {
        Ok(ClientCaps(ClientCapabilities::clone(&call.client_capabilities)))
    }
}

/// The protocol revision of this request.
#[derive(Debug, Clone, Copy)]
pub struct Version(pub ProtocolVersion);

impl FromCall for Version {
    fn from_call(call: &Call) -> Result<Self, Rejection> {
        Ok(Version(call.version))
    }
}

/// Cancellation of this request: the client cancelled, the call timed out, or the connection
/// closed. Cooperative handlers check it; the server also drops the handler's future.
#[derive(Debug, Clone)]
pub struct Cancel(pub CancellationToken);

impl Cancel {
    /// True once the request is cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.0.is_cancelled()
    }

    /// Completes when the request is cancelled.
    pub async fn cancelled(&self) {
        self.0.cancelled().await
    }
}

impl FromCall for Cancel {
    fn from_call(call: &Call) -> Result<Self, Rejection> {
        Ok(Cancel(call.cancel.clone()))
    }
}

/// Progress reporting. Notifications are sent only when the request carried a
/// `progressToken`, only while it is running, and only when the value increases.
#[derive(Clone)]
pub struct Progress {
    token: Option<ProgressToken>,
    sink: Arc<dyn MessageSink>,
    cancel: CancellationToken,
    last: Arc<Mutex<Option<f64>>>,
    /// Whether the call became a task: a task reports no progress (the tasks extension).
    asks: Arc<crate::call::AskState>,
}

impl FromCall for Progress {
    fn from_call(call: &Call) -> Result<Self, Rejection> {
        Ok(Progress {
            token: call.progress_token().cloned(),
            sink: call.sink.clone(),
            cancel: call.cancel.clone(),
            last: Arc::default(),
            asks: call.asks.clone(),
        })
    }
}

impl Progress {
    /// True when the client asked for progress (and the call did not become a task: tasks
    /// report none).
    pub fn is_requested(&self) -> bool {
        self.token.is_some() && self.asks.task.get().is_none()
    }

    /// Reports progress. A value not above the last one reported is dropped (the spec requires
    /// progress to increase with each notification).
    pub async fn report(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let Some(token) = &self.token else { return };
        if self.cancel.is_cancelled() || !progress.is_finite() || self.asks.task.get().is_some() {
            return;
        }
        {
            let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
            if last.is_some_and(|l| progress <= l) {
                return;
            }
            *last = Some(progress);
        }
        let params = ProgressNotificationParams {
            progress_token: token.clone(),
            progress,
            total,
            message: message.map(str::to_owned),
            meta: None,
            extra: Default::default(),
        };
        if let Ok(n) = Notification::typed::<ProgressMethod>(&params) {
            self.sink.send(mcp_types::Message::Notification(n).to_vec()).await;
        }
    }
}

/// Logging to the client (`notifications/message`), filtered by the level the client asked
/// for: `_meta["io.modelcontextprotocol/logLevel"]` on modern requests (absent: nothing is
/// sent), `logging/setLevel` in legacy sessions.
#[derive(Clone)]
pub struct Log {
    filter: LogFilter,
    sink: Arc<dyn MessageSink>,
    cancel: CancellationToken,
    logger: Option<String>,
    /// Whether the call became a task: a task sends no log messages (the tasks extension).
    asks: Arc<crate::call::AskState>,
}

#[derive(Clone)]
enum LogFilter {
    Modern(Option<LoggingLevel>),
    Legacy(SessionHandle),
}

impl FromCall for Log {
    fn from_call(call: &Call) -> Result<Self, Rejection> {
        let filter = match &call.mode {
            Mode::Modern => LogFilter::Modern(call.meta.log_level),
            Mode::Legacy(session) => LogFilter::Legacy(session.clone()),
        };
        Ok(Log {
            filter,
            sink: call.sink.clone(),
            cancel: call.cancel.clone(),
            logger: None,
            asks: call.asks.clone(),
        })
    }
}

impl Log {
    /// The same logger, naming its messages' source.
    pub fn named(mut self, logger: impl Into<String>) -> Self {
        self.logger = Some(logger.into());
        self
    }

    /// The lowest level a message would be sent at (`None`: the client asked for no logs).
    pub fn min_level(&self) -> Option<LoggingLevel> {
        use LoggingLevel::*;
        [Debug, Info, Notice, Warning, Error, Critical, Alert, Emergency]
            .into_iter()
            .find(|&l| self.enabled(l))
    }

    /// True when a message at `level` would be sent.
    pub fn enabled(&self, level: LoggingLevel) -> bool {
        match &self.filter {
            LogFilter::Modern(min) => min.is_some_and(|min| level >= min),
            LogFilter::Legacy(session) => session.wants_log(level),
        }
    }

    /// Sends a log message with arbitrary JSON data.
    pub async fn log(&self, level: LoggingLevel, data: impl Into<JsonValue>) {
        if self.cancel.is_cancelled() || !self.enabled(level) || self.asks.task.get().is_some() {
            return;
        }
        let params = LoggingMessageNotificationParams {
            level,
            logger: self.logger.clone(),
            data: data.into(),
            meta: None,
            extra: Default::default(),
        };
        if let Ok(n) = Notification::typed::<LoggingMessage>(&params) {
            self.sink.send(mcp_types::Message::Notification(n).to_vec()).await;
        }
    }

    /// Logs at `debug`.
    pub async fn debug(&self, data: impl Into<JsonValue>) {
        self.log(LoggingLevel::Debug, data).await
    }

    /// Logs at `info`.
    pub async fn info(&self, data: impl Into<JsonValue>) {
        self.log(LoggingLevel::Info, data).await
    }

    /// Logs at `warning`.
    pub async fn warning(&self, data: impl Into<JsonValue>) {
        self.log(LoggingLevel::Warning, data).await
    }

    /// Logs at `error`.
    pub async fn error(&self, data: impl Into<JsonValue>) {
        self.log(LoggingLevel::Error, data).await
    }
}

/// Announces changes (tool, prompt or resource lists, resource updates) from inside a handler,
/// without holding the [`Server`](crate::Server) itself.
#[derive(Clone)]
pub struct Notifier(pub(crate) tokio::sync::broadcast::Sender<Change>);

impl Notifier {
    /// Announces a change to every subscribed client.
    pub fn notify(&self, change: Change) {
        // No receivers is not an error: nobody is listening.
        let _ = self.0.send(change);
    }
}

impl std::fmt::Debug for Notifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Notifier")
    }
}

impl FromCall for Notifier {
    fn from_call(call: &Call) -> Result<Self, Rejection> {
        Ok(Notifier(call.server.changes.clone()))
    }
}

/// The request's response stream: a handler may end it early where the transport resumes
/// streams (legacy Streamable HTTP), to make the client poll instead of holding a connection.
#[derive(Clone)]
pub struct ResponseStream(Arc<dyn MessageSink>);

impl ResponseStream {
    /// Ends the stream; the rest of the request's messages are delivered when the client
    /// reconnects. False where the transport has no resumable stream.
    pub fn close(&self) -> bool {
        self.0.close_stream()
    }
}

impl FromCall for ResponseStream {
    fn from_call(call: &Call) -> Result<Self, Rejection> {
        Ok(ResponseStream(call.sink.clone()))
    }
}

impl Call {
    /// Runs an extractor against this call (for dynamic tools registered with
    /// [`Tools::add_dyn`](crate::Tools::add_dyn)).
    pub fn extract<E: FromCall>(&self) -> Result<E, Rejection> {
        E::from_call(self)
    }

    /// Takes the arguments (for dynamic tools).
    pub fn arguments(&mut self) -> JsonObject {
        // The handler may extract a `Peer` and ask the client after this: bind the state now.
        self.bind_request_state();
        self.arguments.take().unwrap_or_default()
    }

    /// Takes the arguments without binding a `requestState` to them, for a handler that
    /// seldom asks and would rather not hash every call's arguments (a gateway's: it asks only
    /// when the server it forwards to does). Before such a handler asks the client anything it
    /// calls [`Peer::bind_arguments`](crate::Peer::bind_arguments) with these arguments, as
    /// they were taken; a question asked without that fails the request with an internal
    /// error instead of sealing a state bound to nothing, and a state bound to other arguments
    /// than the request's is refused when the client sends it back. Legacy requests carry no
    /// state: there it is [`Call::arguments`].
    pub fn arguments_unbound(&mut self) -> JsonObject {
        self.binding_deferred = true;
        self.arguments.take().unwrap_or_default()
    }
}

impl FromCall for Principal {
    fn from_call(call: &Call) -> Result<Self, Rejection> {
        call.principal.as_deref().cloned().ok_or_else(|| {
            Rejection::Internal(
                "this handler needs an authenticated principal, but the request was not authenticated \
                 (turn authorization on in the HTTP transport, or take Option<Principal>)"
                    .to_owned(),
            )
        })
    }
}

impl FromCall for Option<Principal> {
    fn from_call(call: &Call) -> Result<Self, Rejection> {
        Ok(call.principal.as_deref().cloned())
    }
}

/// The extractor for a call that may become a task (the tasks extension): a tool registered
/// with task support becomes a task the first time its handler waits — or at once, with
/// [`TaskHandle::detach`], for a handler whose first wait is a question to the client (which
/// would otherwise be an MRTR round of the call itself).
pub struct TaskHandle {
    asks: Arc<crate::call::AskState>,
}

impl FromCall for TaskHandle {
    fn from_call(call: &Call) -> Result<Self, Rejection> {
        Ok(TaskHandle { asks: call.asks.clone() })
    }
}

impl TaskHandle {
    /// True when this call can become a task: the tool has task support and the client
    /// declared the extension on this request.
    pub fn can_detach(&self) -> bool {
        self.asks.detachable.load(std::sync::atomic::Ordering::Acquire)
    }

    /// The task's id, once the call became one.
    pub fn id(&self) -> Option<&str> {
        self.asks.task.get().map(|task| task.id.as_str())
    }

    /// Makes the call a task now: the client is answered with the task's handle, and this
    /// returns once the handler runs on as the task. Returns at once when the call cannot
    /// become a task (it then simply goes on) or already is one.
    pub async fn detach(&self) {
        if !self.can_detach() || self.asks.task.get().is_some() {
            return;
        }
        self.asks.detach.store(true, std::sync::atomic::Ordering::Release);
        YieldOnce(false).await;
    }

    /// Answers the call with a task another server runs (`created`, its `CreateTaskResult`):
    /// a gateway passing an upstream's task on. The caller is given an id of this server's
    /// making that names `route` and the task (see [`crate::task_relay::TaskRelay`], which answers
    /// for it from then on), and the handler is dropped — this never returns then. Returns
    /// `created` back when the call cannot become a task or already is one (the handler then
    /// follows the task itself).
    pub async fn relay(
        &self,
        created: mcp_types::extensions::tasks::TaskResult,
        route: &str,
    ) -> Result<std::convert::Infallible, mcp_types::extensions::tasks::TaskResult> {
        if !self.can_detach() || self.asks.task.get().is_some() || self.asks.relayed.get().is_some() {
            return Err(created);
        }
        if let Err(refused) = self.asks.relayed.set(Box::new((created, route.to_owned()))) {
            return Err(refused.0);
        }
        // The router sees the relayed task as soon as this is pending, and drops the handler.
        std::future::pending().await
    }
}

/// Pending once (waking itself), then ready: lets the router see a handler that asked to
/// become a task.
struct YieldOnce(bool);

impl std::future::Future for YieldOnce {
    type Output = ();

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        if self.0 {
            return std::task::Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    }
}
