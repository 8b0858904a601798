//! The handlers of the gateway's server: each passes a downstream request on to the upstream
//! that owns the item, under the upstream's own name for it, and passes back the upstream's
//! answer — a result, a tool error (`isError`, untouched) or the upstream's JSON-RPC error
//! (its code and message) — with progress and log messages on the way and cancellation both
//! ways.
//!
//! A modern caller and a modern upstream speak MRTR to each other through the gateway: the
//! upstream's `input_required` is passed on with its own keys, its `requestState` sealed inside
//! the gateway's, and the retry's answers go back with that state (`Peer::pass_input_required`,
//! `Client::request_mrtr`). Every other pairing goes through mcp-client's handlers
//! ([`crate::bridge`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_client::{Client, ClientError, RequestOptions};
use mcp_server::{
    Call, Cancel, CompletionRequest, Log, PassedResult, Peer, Progress, Rejection, TaskHandle, ToolOutput,
    Uri,
};
use mcp_types::extensions::tasks::TaskResult;
use mcp_types::methods::{CallTool, GetPrompt, ReadResource};
use mcp_types::{
    CallToolRequestParams, CallToolResult, CompleteRequestParams, Completion, CompletionContext,
    CompletionReference, ErrorObject, GetPromptRequestParams, GetPromptResult, InputRequiredResult,
    JsonObject, JsonValue, LoggingMessageNotificationParams, MrtrResult, RawJson, ReadResourceRequestParams,
    ReadResourceResult, RequestMethod, ResourceContents, ResultMeta, ServerNotification,
};
use tokio::sync::{broadcast, mpsc};

use crate::bridge::{DOWNSTREAM, Downstream, Registration};
use crate::upstream::{Lane, Upstream};

/// Progress notifications waiting to be passed on, per request; beyond this, progress is
/// dropped (the next one carries a higher value anyway).
const PROGRESS_QUEUE: usize = 16;

type Report = (f64, Option<f64>, Option<String>);

/// What a handler of the gateway's server returns.
pub(crate) type Handling<T> = std::pin::Pin<Box<dyn Future<Output = Result<T, Rejection>> + Send>>;

/// What the upstream answered: a result, or (modern to modern) its questions for the caller.
enum Answer<T> {
    Done(T),
    Ask(Box<InputRequiredResult>),
}

/// The downstream request, as the forwarding needs it.
struct Caller {
    peer: Peer,
    capabilities: Arc<mcp_types::ClientCapabilities>,
    /// Makes the downstream call a task of the gateway's (the tasks extension), when it can be.
    task: TaskHandle,
    /// A call of a legacy upstream that lasts becomes a task of the gateway's: the upstream
    /// lists the tool with task support (`execution.taskSupport`), saying it may run long.
    legacy_tasks: bool,
    /// The upstream it is forwarded to (the route of a task it makes).
    upstream: Arc<Upstream>,
}

/// A request the gateway forwards: how its params carry a modern caller's answers and the
/// upstream's carried state, and how mcp-client sends it otherwise (its handlers answering the
/// upstream's questions, its retries applying).
trait Forwarded:
    RequestMethod<Params: Send + 'static, Result: serde::de::DeserializeOwned + Send + 'static>
{
    /// What the gateway's handler answers with: the result, or (`tools/call`) the upstream's
    /// own JSON of it, passed on without being decoded and encoded again.
    type Output: From<Self::Result> + Send + 'static;

    /// The upstream's complete result (of a modern request, MRTR passed through), as the
    /// handler answers with it.
    fn complete(raw: RawJson) -> Result<Self::Output, ClientError>;

    fn retry_with(
        params: &mut Self::Params,
        answers: Option<mcp_types::InputResponses>,
        state: Option<String>,
    );

    fn plain(
        client: Client,
        params: Self::Params,
        options: RequestOptions,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<Self::Result, ClientError>> + Send>>;

    /// Binds the caller's states to the arguments being forwarded, before the caller can be
    /// asked anything: only `tools/call` takes them unbound ([`tool`]); the others bound them
    /// when they took them.
    fn bind(_params: &Self::Params, _peer: &Peer) {}

    /// The same, from the params as they are sent ([`Forwarded::into_map`]).
    fn bind_sent(_params: &JsonObject, _peer: &Peer) {}

    /// The params as the JSON object they are sent as; what is large in them (a tool's
    /// arguments) moved into it, not copied.
    fn into_map(params: Self::Params) -> Result<JsonObject, ClientError> {
        mcp_client::params_map(&params)
    }

    /// Follows to its end the task the upstream made of the request (only `tools/call` may be
    /// answered with one).
    fn follow(
        client: Client,
        created: TaskResult,
        options: RequestOptions,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<Self::Result, ClientError>> + Send>>;
}

fn follow_tool(
    client: Client,
    created: TaskResult,
    options: RequestOptions,
) -> std::pin::Pin<Box<dyn Future<Output = Result<CallToolResult, ClientError>> + Send>> {
    Box::pin(async move { client.follow_task(created, &options).await.map(|(result, _)| result) })
}

fn no_task<T>(
    _client: Client,
    _created: TaskResult,
    _options: RequestOptions,
) -> std::pin::Pin<Box<dyn Future<Output = Result<T, ClientError>> + Send>> {
    Box::pin(async {
        Err(ClientError::InvalidAnswer {
            method: "(forwarded)".into(),
            message: "a task answers only tools/call".into(),
        })
    })
}

/// The forwarded requests differ only in their types and the client call that sends them; each
/// carries a modern caller's answers and the upstream's state in the same two members.
macro_rules! forwarded {
    ($method:ty, $params:ty, $result:ty, $output:ty, $complete:expr, $call:ident, $follow:expr $(, $bind:expr)?) => {
        impl Forwarded for $method {
            type Output = $output;

            fn complete(raw: RawJson) -> Result<$output, ClientError> {
                $complete(raw).map_err(|e: serde_json::Error| ClientError::InvalidAnswer {
                    method: <$method as RequestMethod>::METHOD.into(),
                    message: e.to_string(),
                })
            }

            $(fn bind(params: &$params, peer: &Peer) {
                $bind(params, peer)
            }

            fn bind_sent(params: &JsonObject, peer: &Peer) {
                peer.bind_arguments(params.get("arguments").and_then(JsonValue::as_object))
            }

            fn into_map(mut params: $params) -> Result<JsonObject, ClientError> {
                let arguments = params.arguments.take();
                let mut map = mcp_client::params_map(&params)?;
                if let Some(arguments) = arguments {
                    map.insert("arguments".into(), arguments.into());
                }
                Ok(map)
            })?

            fn retry_with(
                params: &mut $params,
                answers: Option<mcp_types::InputResponses>,
                state: Option<String>,
            ) {
                params.input_responses = answers;
                params.request_state = state;
            }

            fn plain(
                client: Client,
                params: $params,
                options: RequestOptions,
            ) -> std::pin::Pin<Box<dyn Future<Output = Result<$result, ClientError>> + Send>> {
                Box::pin(async move { client.$call(&params, &options).await })
            }

            fn follow(
                client: Client,
                created: TaskResult,
                options: RequestOptions,
            ) -> std::pin::Pin<Box<dyn Future<Output = Result<$result, ClientError>> + Send>> {
                $follow(client, created, options)
            }
        }
    };
}

forwarded!(
    CallTool,
    CallToolRequestParams,
    CallToolResult,
    ToolOutput,
    |raw: RawJson| PassedResult::from_json(raw.get()).map(ToolOutput::Passed),
    call_tool_with,
    follow_tool,
    |params: &CallToolRequestParams, peer: &Peer| peer.bind_arguments(params.arguments.as_ref())
);
forwarded!(
    GetPrompt,
    GetPromptRequestParams,
    GetPromptResult,
    GetPromptResult,
    |raw: RawJson| serde_json::from_str(raw.get()),
    get_prompt_with,
    no_task
);
forwarded!(
    ReadResource,
    ReadResourceRequestParams,
    ReadResourceResult,
    ReadResourceResult,
    |raw: RawJson| serde_json::from_str(raw.get()),
    read_resource_with,
    no_task
);

/// Sends `params` to `client` for a `caller`: MRTR passed through when both sides are modern,
/// the client's own handling otherwise.
async fn send<M: Forwarded>(
    client: Client,
    (mut params, options): (Box<M::Params>, Box<RequestOptions>),
    caller: &Caller,
) -> Result<Answer<M::Output>, ClientError> {
    if caller.peer.is_modern() && client.protocol_version().is_modern() {
        let answers = caller.peer.answers();
        let state = caller.peer.carried_state().map(str::to_owned);
        M::retry_with(&mut params, (!answers.is_empty()).then_some(answers), state);
        let params = M::into_map(*params)?;
        return Ok(match client.request_mrtr_raw_map::<M>(&params, &options).await? {
            MrtrResult::Complete(raw) => Answer::Done(M::complete(raw)?),
            // The upstream's questions reach the caller in a state bound to its arguments.
            MrtrResult::InputRequired(required) => {
                M::bind_sent(&params, &caller.peer);
                Answer::Ask(Box::new(required))
            }
            // The upstream made the call a task: the caller is given it under an id that
            // names the upstream and its task, bound to the caller (`crate::tasks::Relay`
            // answers for it, on any replica). Only a call that cannot be a task for the
            // caller gets a task of the gateway's own, following the upstream's to its end.
            MrtrResult::Task(created) => {
                let created = match caller.task.relay(created, caller.upstream.name()).await {
                    Ok(never) => match never {},
                    Err(created) => created,
                };
                caller.task.detach().await;
                Answer::Done(M::follow(client, created, *options).await?.into())
            }
        });
    }
    // An upstream of a legacy revision has no tasks: for a modern caller that takes them, a call
    // of a tool it lists with task support still running after a moment becomes a task of the
    // gateway's, which runs it to its end (the upstream's questions from then on put to the
    // caller as the task's; its progress no longer, as tasks report none).
    let legacy = !client.protocol_version().is_modern();
    // mcp-client's handlers may put the upstream's questions to a modern caller (nothing is
    // bound for a legacy one).
    M::bind(&params, &caller.peer);
    let plain = M::plain(client, *params, *options);
    if !(legacy && caller.legacy_tasks && caller.task.can_detach()) {
        return plain.await.map(|result| Answer::Done(result.into()));
    }
    tokio::pin!(plain);
    tokio::select! {
        done = &mut plain => return done.map(|result| Answer::Done(result.into())),
        () = tokio::time::sleep(LEGACY_TASK_GRACE) => {}
    }
    caller.task.detach().await;
    plain.await.map(|result| Answer::Done(result.into()))
}

/// How long a call to a legacy upstream runs before it becomes a task of the gateway's, for a
/// modern caller that takes tasks: quick calls are answered as they are. A quarter of a second:
/// long enough for an answer that needs no waiting, short of the one-second work the suite's
/// task fixtures do (a one-second grace raced them, and lost now and then).
const LEGACY_TASK_GRACE: std::time::Duration = std::time::Duration::from_millis(250);

/// Forwards `params` to `upstream` for the downstream request `call` ([`forward`], [`send`]);
/// a `read_only` one is sent again when its connection failed under it ([`Upstream::run`]).
///
/// The params and the options travel in boxes of their own: together they are over a kilobyte
/// (each holds the caller's capabilities inline), and between the downstream handler and the
/// client's call they would otherwise be copied a dozen times.
async fn pass<M: Forwarded>(
    upstream: &Arc<Upstream>,
    call: &Call,
    params: Box<M::Params>,
    read_only: bool,
    legacy_tasks: bool,
) -> Result<M::Output, Rejection>
where
    M::Params: Clone,
{
    let up = upstream.clone();
    forward(upstream, call, legacy_tasks, move |options, caller, lane| {
        Box::pin(async move {
            let sendable = Sendable::new((params, options), read_only);
            let attempt = |client| {
                let next = sendable.next();
                let caller = caller.clone();
                async move { send::<M>(client, next?, &caller).await }
            };
            up.run(&lane, read_only, attempt).await
        })
    })
    .await
}

/// What an attempt sends: moved into the only attempt of a request sent once, cloned for each
/// attempt of one that may be sent again — no copy on the common path.
struct Sendable<T> {
    value: std::sync::Mutex<Option<T>>,
    again: bool,
}

impl<T: Clone> Sendable<T> {
    fn new(value: T, again: bool) -> Self {
        Sendable { value: std::sync::Mutex::new(Some(value)), again }
    }

    fn next(&self) -> Result<T, ClientError> {
        let mut value = self.value.lock().unwrap_or_else(|e| e.into_inner());
        let next = if self.again { value.clone() } else { value.take() };
        next.ok_or_else(|| ClientError::Unsupported("a request sent once was to be sent again".into()))
    }
}

/// Runs `forwarding` for the downstream request `call`: as the caller of the upstream's
/// questions, with its progress and log messages passed back, ending when the downstream
/// cancels.
///
/// What it awaits only now and then (credentials, progress, logs, questions) is boxed: the
/// forwarding's future is moved several times per call, and would otherwise carry their size.
async fn forward<T: Send + 'static>(
    upstream: &Arc<Upstream>,
    call: &Call,
    legacy_tasks: bool,
    forwarding: impl FnOnce(
        Box<RequestOptions>,
        Arc<Caller>,
        Lane,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<Answer<T>, ErrorObject>> + Send>>,
) -> Result<T, Rejection> {
    let cancel: Cancel = call.extract()?;
    let progress: Progress = call.extract()?;
    let log: Log = call.extract()?;
    let peer: Peer = call.extract()?;
    let task: TaskHandle = call.extract()?;
    let caller = Arc::new(Caller {
        peer: peer.clone(),
        capabilities: call.client_capabilities().clone(),
        task,
        legacy_tasks,
        upstream: upstream.clone(),
    });
    let lane = upstream.lane(call.session()).map_err(Rejection::Protocol)?;
    let downstream = Downstream::new(peer.clone());
    let _registration = Registration::new(upstream.callers(&lane).clone(), downstream.clone());
    // The upstream's questions that arrive on this request's own stream name their caller.
    // Retries are the gateway's (`Upstream::run`: read-only requests, once the upstream is
    // back), the same for every era; the client's own would add to them.
    let options = RequestOptions::new().tag(downstream.clone()).retries(0);
    let mut options = traced(call, options.client_capabilities(caller.capabilities.clone()));
    if upstream.caller_credentials.is_some() {
        options = Box::pin(credentialed(upstream, call, options)).await?;
    }
    // The upstream's progress, queued for the caller (only when the caller asked for it).
    let mut reports = None;
    if progress.is_requested() {
        let (tx, rx) = mpsc::channel::<Report>(PROGRESS_QUEUE);
        reports = Some(rx);
        options = options.reset_timeout_on_progress(true).on_progress(move |p| {
            let _ = tx.try_send((p.progress, p.total, p.message.clone()));
        });
    }
    // Log messages: asked of the upstream at the caller's level, passed back while this is
    // the only request in flight through that upstream (a log message names no request).
    let level = log.min_level();
    let mut logs = level.and_then(|_| upstream.notifications(&lane));
    if let Some(level) = level {
        options = options.log_level(level);
    }
    let running = DOWNSTREAM.scope(downstream.clone(), forwarding(Box::new(options), caller, lane.clone()));
    tokio::pin!(running);
    let mut reporting = reports.is_some();
    let outcome = loop {
        tokio::select! {
            outcome = &mut running => break outcome,
            report = next_report(&mut reports), if reporting => match report {
                Some((value, total, message)) => Box::pin(progress.report(value, total, message.as_deref())).await,
                None => reporting = false,
            },
            message = next_log(&mut logs) => Box::pin(pass_log(upstream, &lane, &log, message)).await,
            // A question put to the caller from another task: return to mcp-server, which sees
            // it and interrupts this request (modern callers) or waits for the answer.
            () = downstream.asked.notified() => {}
            // Dropping the forwarding cancels the upstream request (`notifications/cancelled`).
            () = cancel.cancelled() => {
                return Err(Rejection::Protocol(ErrorObject::internal("the request was cancelled")));
            }
        }
    };
    // What the upstream sent before its answer has arrived by now: pass it on first.
    if let Some(reports) = reports.as_mut() {
        while let Ok((value, total, message)) = reports.try_recv() {
            Box::pin(progress.report(value, total, message.as_deref())).await;
        }
    }
    if let Some(receiver) = logs.as_mut() {
        while let Ok(n) = receiver.try_recv() {
            Box::pin(pass_log(upstream, &lane, &log, Some(n))).await;
        }
    }
    match outcome.map_err(Rejection::Protocol)? {
        Answer::Done(result) => Ok(result),
        Answer::Ask(required) => {
            let required = *required;
            let requests = required.input_requests.unwrap_or_default();
            if requests.is_empty() {
                return Err(Rejection::Protocol(ErrorObject::internal(format!(
                    "upstream {} answered input_required without input requests",
                    upstream.name()
                ))));
            }
            match Box::pin(peer.pass_input_required(requests, required.request_state)).await {
                Ok(never) => match never {},
                Err(e) => Err(Rejection::Protocol(ErrorObject::internal(e.to_string()))),
            }
        }
    }
}

/// The trace context of the downstream request `call` on a request sent upstream for it
/// (`Call::trace_context`: W3C Trace Context and Baggage in `_meta`): the upstream's span a
/// child of this request's when the gateway traces, of the caller's when it does not.
pub(crate) fn traced(call: &Call, mut options: RequestOptions) -> RequestOptions {
    for (key, value) in call.trace_context().entries() {
        options = options.meta(key, value.into());
    }
    options
}

/// The caller's credentials on a request sent upstream for `call`, when the upstream is to
/// see who calls: the caller's token (audience checked) or one exchanged for it, on this
/// request only.
pub(crate) async fn credentialed(
    upstream: &Upstream,
    call: &Call,
    options: RequestOptions,
) -> Result<RequestOptions, Rejection> {
    let Some(credentials) = &upstream.caller_credentials else { return Ok(options) };
    let credential =
        credentials.for_caller(upstream.name(), call.principal()).await.map_err(Rejection::Protocol)?;
    Ok(options.authorization(credential))
}

/// The next progress report, or none once the upstream's call is done with them.
async fn next_report(reports: &mut Option<mpsc::Receiver<Report>>) -> Option<Report> {
    match reports.as_mut() {
        Some(rx) => rx.recv().await,
        None => None,
    }
}

async fn next_log(logs: &mut Option<broadcast::Receiver<ServerNotification>>) -> Option<ServerNotification> {
    match logs.as_mut() {
        Some(receiver) => loop {
            match receiver.recv().await {
                Ok(n) => return Some(n),
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => {
                    *logs = None;
                    return None;
                }
            }
        },
        None => std::future::pending().await,
    }
}

async fn pass_log(upstream: &Upstream, lane: &Lane, log: &Log, notification: Option<ServerNotification>) {
    let Some(ServerNotification::LoggingMessage(params)) = notification else { return };
    if upstream.callers(lane).len() != 1 {
        return;
    }
    let LoggingMessageNotificationParams { level, logger, data, .. } = params;
    let log = match logger {
        Some(name) => log.clone().named(name),
        None => log.clone(),
    };
    log.log(level, data).await;
}

/// Removes the upstream's identity from a result's `_meta`: the gateway's server puts its own
/// (modern callers) or none (legacy callers).
fn strip_identity(meta: &mut Option<ResultMeta>) {
    if let Some(m) = meta {
        m.server_info = None;
        if m.subscription_id.is_none() && m.extra.is_empty() {
            *meta = None;
        }
    }
}

/// `tools/call` of `original` on `upstream`; `read_only` when the upstream annotates the tool
/// `readOnlyHint` (sent again if its connection fails under it).
pub(crate) fn tool(
    upstream: Arc<Upstream>,
    original: String,
    read_only: bool,
    legacy_tasks: bool,
) -> impl Fn(Call) -> Handling<ToolOutput> + Send + Sync + 'static {
    move |mut call: Call| {
        let upstream = upstream.clone();
        let name = original.clone();
        Box::pin(async move {
            // Hashed into a state only if the caller is asked something (`Forwarded::bind`):
            // most calls are not, and their arguments may be large.
            let arguments = call.arguments_unbound();
            let mut params = CallToolRequestParams::new(name);
            params.arguments = Some(arguments);
            Ok(match pass::<CallTool>(&upstream, &call, Box::new(params), read_only, legacy_tasks).await? {
                ToolOutput::Built(mut result) => {
                    strip_identity(&mut result.meta);
                    ToolOutput::Built(result)
                }
                // The server's finishing leaves out the upstream's identity (`PassedResult`).
                passed => passed,
            })
        })
    }
}

/// `prompts/get` of `original` on `upstream`.
pub(crate) fn prompt(
    upstream: Arc<Upstream>,
    original: String,
) -> impl Fn(Call) -> Handling<GetPromptResult> + Send + Sync + 'static {
    move |mut call: Call| {
        let upstream = upstream.clone();
        let name = original.clone();
        Box::pin(async move {
            let arguments: BTreeMap<String, String> = call
                .arguments()
                .into_iter()
                .map(|(k, v)| match v {
                    JsonValue::String(s) => (k, s),
                    other => (k, other.to_string()),
                })
                .collect();
            let mut params = GetPromptRequestParams::new(name);
            if !arguments.is_empty() {
                params.arguments = Some(arguments);
            }
            let mut result = pass::<GetPrompt>(&upstream, &call, Box::new(params), false, false).await?;
            strip_identity(&mut result.meta);
            Ok(result)
        })
    }
}

/// `resources/read` on `upstream`, of the URI the downstream asked for. With a `namespace`
/// (the gateway's reversible rename of a URI two upstreams both offer), the downstream URI is
/// `{namespace}+{upstream URI}`: the prefix is taken off on the way up and put back on the
/// contents' URIs on the way down.
pub(crate) fn read(
    upstream: Arc<Upstream>,
    namespace: Option<Arc<str>>,
) -> impl Fn(Call) -> Handling<Vec<ResourceContents>> + Send + Sync + 'static {
    move |call: Call| {
        let upstream = upstream.clone();
        let namespace = namespace.clone();
        Box::pin(async move {
            let Uri(uri) = call.extract()?;
            let upstream_uri = match &namespace {
                Some(ns) => unnamespaced(ns, &uri).unwrap_or_else(|| uri.clone()),
                None => uri.clone(),
            };
            let params = ReadResourceRequestParams::new(upstream_uri);
            let result = pass::<ReadResource>(&upstream, &call, Box::new(params), true, false).await?;
            // The upstream's caching hint is the one that knows its resource.
            if let (Some(ttl), Some(scope)) = (result.ttl_ms, result.cache_scope.clone()) {
                call.set_cache_hint(ttl, scope);
            }
            let mut contents = result.contents;
            if let Some(ns) = &namespace {
                for item in &mut contents {
                    let uri = match item {
                        ResourceContents::Text(t) => &mut t.uri,
                        ResourceContents::Blob(b) => &mut b.uri,
                    };
                    *uri = namespaced(ns, uri);
                }
            }
            Ok(contents)
        })
    }
}

/// A URI under a namespace: `{namespace}+{uri}` — but an app's `ui://{rest}` stays a `ui://`
/// URI (hosts render only those), `ui://{namespace}+{rest}`.
pub(crate) fn namespaced(namespace: &str, uri: &str) -> String {
    match uri.strip_prefix(mcp_types::extensions::ui::SCHEME) {
        Some(rest) => format!("{}{namespace}+{rest}", mcp_types::extensions::ui::SCHEME),
        None => format!("{namespace}+{uri}"),
    }
}

/// The URI under `namespace` taken out of it ([`namespaced`] undone); `None` when `uri` is not
/// under it.
pub(crate) fn unnamespaced(namespace: &str, uri: &str) -> Option<String> {
    let ui = mcp_types::extensions::ui::SCHEME;
    match uri.strip_prefix(ui) {
        Some(rest) => rest.strip_prefix(namespace)?.strip_prefix('+').map(|rest| format!("{ui}{rest}")),
        None => uri.strip_prefix(namespace)?.strip_prefix('+').map(str::to_owned),
    }
}

/// `completion/complete` of a prompt argument or template variable: passed to the owner under
/// its own name (an owner without completions completes nothing).
pub(crate) fn complete(
    routes: Arc<arc_swap::ArcSwap<crate::aggregate::Routes>>,
) -> impl Fn(
    CompletionReference,
    CompletionRequest,
) -> std::pin::Pin<Box<dyn Future<Output = Result<Completion, ErrorObject>> + Send>>
+ Send
+ Sync
+ 'static {
    move |reference, request| {
        let routes = routes.load_full();
        let owner = match &reference {
            CompletionReference::Prompt(p) => routes.prompts.get(&p.name).map(|(up, name)| {
                let mut p = p.clone();
                p.name = name.clone();
                (up.clone(), CompletionReference::Prompt(p))
            }),
            CompletionReference::ResourceTemplate(t) => routes.templates.get(&t.uri).map(|(up, template)| {
                let mut t = t.clone();
                t.uri = template.clone();
                (up.clone(), CompletionReference::ResourceTemplate(t))
            }),
            _ => None,
        };
        Box::pin(async move {
            let Some((upstream, reference)) = owner else {
                return Ok(Completion::from_matches(Vec::new()));
            };
            let mut params = CompleteRequestParams::new(reference, request.argument, request.value);
            if !request.context.is_empty() {
                params.context =
                    Some(CompletionContext { arguments: Some(request.context), ..Default::default() });
            }
            let sendable = Sendable::new(params, false);
            upstream
                .run(&Lane::Shared, false, |client| {
                    let next = sendable.next();
                    async move {
                        let params = next?;
                        if client.server_capabilities().completions.is_none() {
                            return Ok(Completion::from_matches(Vec::new()));
                        }
                        client.complete(&params).await.map(|result| result.completion)
                    }
                })
                .await
        })
    }
}
