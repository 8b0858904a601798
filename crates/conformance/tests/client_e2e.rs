//! End to end: the mcpkit client (`mcp-client`) against our own `conformance-server` binary,
//! over real pipes and sockets.
//!
//! | test | transport | era |
//! |---|---|---|
//! | `stdio_auto_reaches_modern` | stdio | detected → 2026-07-28 (MRTR, `subscriptions/listen`) |
//! | `stdio_pinned_modern` | stdio | pinned 2026-07-28, the same checks |
//! | `stdio_pinned_legacy` | stdio | pinned 2025-11-25 (server→client requests, emulated listen) |
//! | `http_auto_reaches_modern` | Streamable HTTP `/mcp` | detected → 2026-07-28 |
//! | `http_pinned_modern` | Streamable HTTP `/mcp` | pinned 2026-07-28, the same checks |
//! | `http_pinned_legacy` | Streamable HTTP `/mcp` | pinned 2025-11-25 |
//! | `http_sse_fallback` | `/sse` URL: Streamable HTTP refused → HTTP+SSE | detected (legacy) |
//! | `*_cancelled_*` / `*_timed_out_*` | stdio, HTTP | a dropped or timed-out call leaves the server serving |
//!
//! The two `*_auto_reaches_modern` tests hold the client to the newest common version (see
//! [`NEWEST_COMMON`]); they found the client once picking the oldest.
//!
//! A stdio server is the client's own child (`StdioCommand`): `Client::close` stops it, and a
//! test that panics drops the client with its runtime, which kills the child (`kill_on_drop`,
//! its own process group). An HTTP server is this test's child, killed by its guard on drop.
//! Every client operation is bounded by a generous timeout, there only to turn a hang into a
//! failure; nothing asserts how long anything took.
#![cfg(unix)]

use std::collections::BTreeMap;
use std::future::Future;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::transport::TransportKind;
use mcp_client::transport::http::HttpConfig;
use mcp_client::transport::stdio::StdioCommand;
use mcp_client::{Client, ClientBuilder, ClientError, EraCache, Handlers, RequestOptions, SubscriptionEvent};
use mcp_testkit::process::ListeningProcess;
use mcp_types::{
    CallToolRequestParams, CallToolResult, CompleteRequestParams, CreateMessageRequestParams,
    CreateMessageResult, ElicitRequestParams, ElicitResult, ElicitValue, Era, ErrorObject, ListRootsResult,
    LoggingLevel, PrimitiveSchemaDefinition, PromptReference, ProtocolVersion, ResourceTemplateReference,
    Root, SamplingContent, ServerNotification, SubscriptionFilter,
};
use serde_json::{Value, json};

/// How long the era probe waits: far above the default, so that a slowly starting server on a
/// loaded machine is still detected as what it is.
const PROBE: Duration = Duration::from_secs(30);
/// How long any one client step may take.
const STEP: Duration = Duration::from_secs(60);

const SIMPLE_TEXT: &str = "This is a simple text response for testing.";

// --- helpers -------------------------------------------------------------------------------------

/// Runs `fut`, failing the test when it takes longer than [`STEP`].
async fn step<T>(what: &str, fut: impl Future<Output = T>) -> T {
    match tokio::time::timeout(STEP, fut).await {
        Ok(value) => value,
        Err(_) => panic!("{what}: nothing within {} s", STEP.as_secs()),
    }
}

/// Unwraps a client result, naming the step that failed.
fn ok<T>(what: &str, result: Result<T, ClientError>) -> T {
    result.unwrap_or_else(|e| panic!("{what}: {e} ({e:?})"))
}

/// The text blocks of a tool result, joined.
fn text_of(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|b| b.as_text()).collect::<Vec<_>>().join("\n")
}

/// A successful tool call's text.
async fn call_text(client: &Client, tool: &str, arguments: Value) -> String {
    let result = ok(tool, step(tool, client.call_tool(tool, arguments)).await);
    assert!(!result.is_error(), "{tool} returned an error result: {result:?}");
    text_of(&result)
}

/// What the client's handlers were asked.
#[derive(Clone, Default)]
struct Asked {
    /// The messages of the elicitations, in order.
    elicitations: Arc<Mutex<Vec<String>>>,
    /// The prompts (first text block of the first message) of the samplings, in order.
    samplings: Arc<Mutex<Vec<String>>>,
    /// How many times the roots were listed.
    roots: Arc<Mutex<usize>>,
}

impl Asked {
    fn elicitations(&self) -> Vec<String> {
        self.elicitations.lock().unwrap().clone()
    }

    fn samplings(&self) -> Vec<String> {
        self.samplings.lock().unwrap().clone()
    }
}

/// The model name the sampling handler answers with.
const MODEL: &str = "e2e-model";

/// Handlers that record what they are asked and answer everything: an elicitation form is
/// accepted with `true` for boolean fields and `e2e-<field>` for any other field; sampling
/// answers `e2e answer to: <prompt>`; the roots are one `file:///e2e-root`.
fn answering(asked: &Asked) -> Handlers {
    let elicitations = asked.elicitations.clone();
    let samplings = asked.samplings.clone();
    let roots = asked.roots.clone();
    Handlers::default()
        .on_elicit(false, move |params: ElicitRequestParams| {
            let elicitations = elicitations.clone();
            async move {
                let ElicitRequestParams::Form(form) = params else {
                    return Err(ErrorObject::invalid_params("only form elicitation is expected"));
                };
                elicitations.lock().unwrap().push(form.message.clone());
                let content: BTreeMap<String, ElicitValue> = form
                    .requested_schema
                    .properties
                    .iter()
                    .map(|(name, schema)| {
                        let value = match schema {
                            PrimitiveSchemaDefinition::Boolean(_) => ElicitValue::Bool(true),
                            _ => ElicitValue::String(format!("e2e-{name}")),
                        };
                        (name.clone(), value)
                    })
                    .collect();
                Ok(ElicitResult::accept(content))
            }
        })
        .on_sample(move |params: CreateMessageRequestParams| {
            let samplings = samplings.clone();
            async move {
                let prompt = params
                    .messages
                    .first()
                    .and_then(|m| m.content.blocks().first())
                    .and_then(|b| b.as_text())
                    .unwrap_or_default()
                    .to_owned();
                samplings.lock().unwrap().push(prompt.clone());
                Ok(CreateMessageResult::new(MODEL, SamplingContent::text(format!("e2e answer to: {prompt}"))))
            }
        })
        .on_roots(false, move || {
            let roots = roots.clone();
            async move {
                *roots.lock().unwrap() += 1;
                Ok(ListRootsResult::new(vec![Root::new("file:///e2e-root")]))
            }
        })
}

fn builder(handlers: Handlers) -> ClientBuilder {
    ClientBuilder::new("mcpkit-e2e", "1.0.0").handlers(handlers).probe_timeout(PROBE)
}

fn conformance_stdio() -> StdioCommand {
    StdioCommand::new(env!("CARGO_BIN_EXE_conformance-server")).arg("--stdio")
}

async fn connect_stdio(builder: ClientBuilder) -> Client {
    ok("connect over stdio", step("connect over stdio", builder.connect_stdio(conformance_stdio())).await)
}

async fn connect_http(builder: ClientBuilder, url: String) -> Client {
    let what = format!("connect to {url}");
    // A cache of its own: what another test learnt never decides this connection.
    let builder = builder.era_cache(EraCache::new());
    ok(&what, step(&what, builder.connect_http(HttpConfig::new(url.clone()))).await)
}

/// A running `conformance-server --http 127.0.0.1:0`, killed on drop.
struct HttpServer(ListeningProcess);

impl HttpServer {
    fn start() -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_conformance-server"));
        command.args(["--http", "127.0.0.1:0"]);
        HttpServer(ListeningProcess::start(command))
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.0.origin())
    }
}

// --- shared checks ---------------------------------------------------------------------------------

/// `test_simple_text`.
async fn simple_text(client: &Client) {
    assert_eq!(call_text(client, "test_simple_text", Value::Null).await, SIMPLE_TEXT);
}

/// `test_tool_with_progress` with a progress callback: at least one notification, increasing.
async fn progress(client: &Client) {
    let seen = Arc::new(Mutex::new(Vec::<f64>::new()));
    let record = seen.clone();
    let options = RequestOptions::new().on_progress(move |p| record.lock().unwrap().push(p.progress));
    let params = CallToolRequestParams::new("test_tool_with_progress");
    let result = ok("progress tool", step("progress tool", client.call_tool_with(&params, &options)).await);
    assert_eq!(text_of(&result), "Progress test completed");
    let seen = seen.lock().unwrap().clone();
    assert!(!seen.is_empty(), "no progress notification reached the callback");
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "progress did not increase: {seen:?}");
}

/// `test_elicitation`: the handler sees the tool's message, the result carries the answer.
async fn elicitation(client: &Client, asked: &Asked) {
    let before = asked.elicitations().len();
    let message = "Which user are you? (e2e)";
    let text = call_text(client, "test_elicitation", json!({"message": message})).await;
    let elicitations = asked.elicitations();
    assert_eq!(elicitations[before..], [message.to_owned()], "what the elicitation handler saw");
    assert!(text.starts_with("User response: action=accept"), "{text}");
    assert!(text.contains(r#""username":"e2e-username""#), "{text}");
    assert!(text.contains(r#""email":"e2e-email""#), "{text}");
}

/// `test_sampling`: the handler sees the prompt, the result carries the model's answer.
async fn sampling(client: &Client, asked: &Asked) {
    let before = asked.samplings().len();
    let prompt = "Say something end-to-end.";
    let text = call_text(client, "test_sampling", json!({"prompt": prompt})).await;
    assert_eq!(asked.samplings()[before..], [prompt.to_owned()], "what the sampling handler saw");
    assert_eq!(text, format!("LLM response: e2e answer to: {prompt}"));
}

/// Subscribes to tool-list changes, triggers one and waits for the event.
async fn tool_change_reaches_listen(client: &Client) {
    let filter = SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() };
    let mut subscription = ok("listen", step("listen", client.listen(filter)).await);
    // The acknowledgement comes once the server follows the list: only then is a change sure
    // to reach this subscription.
    match step("the acknowledgement", subscription.next()).await {
        Some(SubscriptionEvent::Acknowledged(granted)) => {
            assert_eq!(granted.tools_list_changed, Some(true), "granted: {granted:?}")
        }
        other => panic!("expected the acknowledgement first, got {other:?}"),
    }
    let text = call_text(client, "test_trigger_tool_change", Value::Null).await;
    assert_eq!(text, "Tool list change announced");
    step("the tool-list change", async {
        loop {
            match subscription.next().await {
                Some(SubscriptionEvent::Notification(ServerNotification::ToolListChanged(_))) => return,
                Some(SubscriptionEvent::Notification(_)) => continue,
                other => panic!("the subscription ended before the tool-list change: {other:?}"),
            }
        }
    })
    .await;
    drop(subscription);
}

/// After a cancelled call the server still answers, and a long call still completes.
async fn still_serving(client: &Client) {
    simple_text(client).await;
    progress(client).await;
}

/// Starts `test_tool_with_progress` and drops the call as soon as its first progress arrives,
/// while the tool is still running (its remaining steps take a while). Returns once a call was
/// dropped mid-flight (a few attempts, in case a starved runtime saw the answer first).
async fn drop_mid_call(client: &Client) {
    for _ in 0..5 {
        let (first_tx, first_rx) = tokio::sync::oneshot::channel::<()>();
        let first_tx = Mutex::new(Some(first_tx));
        let options = RequestOptions::new().on_progress(move |_| {
            if let Some(tx) = first_tx.lock().unwrap().take() {
                let _ = tx.send(());
            }
        });
        let params = CallToolRequestParams::new("test_tool_with_progress");
        let dropped = step("the call to drop", async {
            tokio::select! {
                biased;
                _ = first_rx => true,
                result = client.call_tool_with(&params, &options) => {
                    ok("progress tool", result);
                    false
                }
            }
        })
        .await;
        if dropped {
            return;
        }
    }
    panic!("the progress tool always answered before the call could be dropped");
}

/// Everything a modern connection offers, against the conformance fixtures: identity,
/// listings, tools (plain, progress, MRTR elicitation and sampling, multi-round and multi-input
/// MRTR), resources, a prompt with arguments, completion and `subscriptions/listen`.
async fn modern_checks(client: &Client, asked: &Asked) {
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    assert_eq!(client.era(), Era::Modern);
    let info = client.server_info().expect("server info from server/discover");
    assert_eq!(info.name, conformance::NAME);
    assert_eq!(client.instructions().as_deref(), Some(conformance::INSTRUCTIONS));

    // Listings.
    let tools: Vec<String> =
        ok("tools", step("tools", client.list_all_tools()).await).into_iter().map(|t| t.name).collect();
    for name in
        ["test_simple_text", "test_tool_with_progress", "test_elicitation", "test_trigger_tool_change"]
    {
        assert!(tools.iter().any(|t| t == name), "{name} missing from {tools:?}");
    }
    let resources: Vec<String> = ok("resources", step("resources", client.list_all_resources()).await)
        .into_iter()
        .map(|r| r.uri)
        .collect();
    for uri in ["test://static-text", "test://static-binary", "test://watched-resource"] {
        assert!(resources.iter().any(|r| r == uri), "{uri} missing from {resources:?}");
    }
    let templates = ok("templates", step("templates", client.list_all_resource_templates()).await);
    assert!(templates.iter().any(|t| t.uri_template == conformance::resources::TEMPLATE), "{templates:?}");
    let prompts: Vec<String> =
        ok("prompts", step("prompts", client.list_all_prompts()).await).into_iter().map(|p| p.name).collect();
    for name in ["test_simple_prompt", "test_prompt_with_arguments"] {
        assert!(prompts.iter().any(|p| p == name), "{name} missing from {prompts:?}");
    }

    // Tools: plain, progress, MRTR elicitation and sampling, multi-round and multi-input MRTR.
    simple_text(client).await;
    progress(client).await;
    elicitation(client, asked).await;
    sampling(client, asked).await;
    let before = asked.elicitations().len();
    let text = call_text(client, "test_input_required_result_multi_round", Value::Null).await;
    assert_eq!(
        asked.elicitations()[before..],
        ["What is your name?".to_owned(), "What is your favorite color?".to_owned()],
        "one elicitation per round"
    );
    assert!(text.starts_with("Both rounds completed"), "{text}");
    assert!(text.contains(r#""name":"e2e-name""#) && text.contains(r#""color":"e2e-color""#), "{text}");
    let text = call_text(client, "test_input_required_result_multiple_inputs", Value::Null).await;
    assert!(text.contains("Hello, e2e-name!") && text.contains("file:///e2e-root"), "{text}");
    assert!(*asked.roots.lock().unwrap() >= 1, "the roots handler was never asked");

    // Resources: static and templated.
    let read = ok("read", step("read", client.read_resource("test://static-text")).await);
    assert_eq!(read.contents[0].as_text(), Some(conformance::resources::STATIC_TEXT));
    let read =
        ok("read template", step("read template", client.read_resource("test://template/42/data")).await);
    let data: Value = serde_json::from_str(read.contents[0].as_text().expect("text contents")).unwrap();
    assert_eq!(data["id"], "42");
    assert_eq!(data["templateTest"], true);

    // A prompt with arguments.
    let arguments =
        BTreeMap::from([("arg1".to_owned(), "alpha".to_owned()), ("arg2".to_owned(), "beta".to_owned())]);
    let prompt =
        ok("prompt", step("prompt", client.get_prompt("test_prompt_with_arguments", arguments)).await);
    let text = prompt.messages[0].content.as_text().expect("a text message");
    assert_eq!(text, "Prompt with arguments: arg1='alpha', arg2='beta'");

    // Completion: a prompt argument and a template variable.
    assert!(client.server_capabilities().completions.is_some(), "the server offers completion");
    let params =
        CompleteRequestParams::new(PromptReference::new("test_prompt_with_arguments"), "arg1", "test");
    let completion = ok("complete", step("complete", client.complete(&params)).await).completion;
    assert!(completion.values.iter().any(|v| v == "test-value-1"), "{completion:?}");
    let params = CompleteRequestParams::new(
        ResourceTemplateReference::new(conformance::resources::TEMPLATE),
        "id",
        "4",
    );
    let completion = ok("complete id", step("complete id", client.complete(&params)).await).completion;
    assert!(completion.values.iter().any(|v| v == "456"), "{completion:?}");

    // Modern listen: subscriptions/listen, then a change announced by a tool.
    tool_change_reaches_listen(client).await;

    // The legacy-only calls are refused locally on a modern connection.
    let refused = client.set_logging_level(LoggingLevel::Info).await;
    assert!(matches!(refused, Err(ClientError::Unsupported(_))), "{refused:?}");
}

// --- stdio -----------------------------------------------------------------------------------------

/// Era detection must settle on the NEWEST version both sides know: a server listing every
/// revision in `server/discover` is spoken to in 2026-07-28 (an oldest-first list once made the
/// client pick 2024-11-05).
const NEWEST_COMMON: &str = "era detection must pick the newest common version from server/discover's \
    supportedVersions";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_auto_reaches_modern() {
    let asked = Asked::default();
    let client = connect_stdio(builder(answering(&asked))).await;
    assert_eq!(client.transport_kind(), TransportKind::Stdio);
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28, "{NEWEST_COMMON}");
    modern_checks(&client, &asked).await;
    step("close", client.close()).await;
}

/// The modern checks without era detection (they stay covered while detection is broken).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_pinned_modern() {
    let asked = Asked::default();
    let client = connect_stdio(builder(answering(&asked)).pin_version(ProtocolVersion::V2026_07_28)).await;
    assert_eq!(client.transport_kind(), TransportKind::Stdio);
    modern_checks(&client, &asked).await;
    step("close", client.close()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_pinned_legacy() {
    let asked = Asked::default();
    let client = connect_stdio(builder(answering(&asked)).pin_version(ProtocolVersion::V2025_11_25)).await;
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_11_25);
    assert_eq!(client.era(), Era::Legacy);
    assert_eq!(client.server_info().expect("serverInfo of initialize").name, conformance::NAME);

    // Real server→client requests answered by the same handlers.
    elicitation(&client, &asked).await;
    sampling(&client, &asked).await;
    progress(&client).await;
    simple_text(&client).await;

    // Emulated listen over the session's notifications.
    tool_change_reaches_listen(&client).await;

    // logging/setLevel, then the log messages of a tool arrive as session notifications.
    let mut notifications = client.notifications();
    ok("setLevel", step("setLevel", client.set_logging_level(LoggingLevel::Info)).await);
    let text = call_text(&client, "test_tool_with_logging", Value::Null).await;
    assert_eq!(text, "Logging test completed");
    let logged = step("the log messages", async {
        let mut logged = Vec::new();
        while logged.len() < 3 {
            match notifications.recv().await {
                Ok(ServerNotification::LoggingMessage(m)) => logged.push(m.data),
                Ok(_) => {}
                Err(e) => panic!("notifications: {e}"),
            }
        }
        logged
    })
    .await;
    assert_eq!(logged[0], "Tool execution started");

    step("close", client.close()).await;
}

// --- HTTP ------------------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_auto_reaches_modern() {
    let server = HttpServer::start();
    let asked = Asked::default();
    let client = connect_http(builder(answering(&asked)), server.url("/mcp")).await;
    assert_eq!(client.transport_kind(), TransportKind::StreamableHttp);
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28, "{NEWEST_COMMON}");
    http_modern_checks(&client, &asked).await;
    step("close", client.close()).await;
}

/// The modern checks over HTTP without era detection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_pinned_modern() {
    let server = HttpServer::start();
    let asked = Asked::default();
    let builder = builder(answering(&asked)).pin_version(ProtocolVersion::V2026_07_28);
    let client = connect_http(builder, server.url("/mcp")).await;
    assert_eq!(client.transport_kind(), TransportKind::StreamableHttp);
    http_modern_checks(&client, &asked).await;
    step("close", client.close()).await;
}

/// [`modern_checks`], plus a tool whose argument the client mirrors into an HTTP header (the
/// server refuses the call when header and body disagree).
async fn http_modern_checks(client: &Client, asked: &Asked) {
    modern_checks(client, asked).await;
    let text = call_text(client, "test_custom_header", json!({"value": "e2e header"})).await;
    assert_eq!(text, "value: e2e header");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_pinned_legacy() {
    let server = HttpServer::start();
    let asked = Asked::default();
    let builder = builder(answering(&asked)).pin_version(ProtocolVersion::V2025_11_25);
    let client = connect_http(builder, server.url("/mcp")).await;
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_11_25);
    assert_eq!(client.transport_kind(), TransportKind::StreamableHttp);
    assert_eq!(client.server_info().expect("serverInfo").name, conformance::NAME);

    simple_text(&client).await;
    progress(&client).await;
    elicitation(&client, &asked).await;
    sampling(&client, &asked).await;
    ok("setLevel", step("setLevel", client.set_logging_level(LoggingLevel::Info)).await);
    tool_change_reaches_listen(&client).await;

    step("close", client.close()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_sse_fallback() {
    let server = HttpServer::start();
    let asked = Asked::default();
    let client = connect_http(builder(answering(&asked)), server.url("/sse")).await;
    assert_eq!(client.transport_kind(), TransportKind::HttpSse);
    assert_eq!(client.era(), Era::Legacy);
    assert_eq!(client.server_info().expect("serverInfo").name, conformance::NAME);

    simple_text(&client).await;
    elicitation(&client, &asked).await;
    sampling(&client, &asked).await;
    progress(&client).await;

    step("close", client.close()).await;
}

// --- cancellation ----------------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_modern_cancelled_call_leaves_the_server_serving() {
    let client = connect_stdio(builder(Handlers::default()).pin_version(ProtocolVersion::V2026_07_28)).await;
    assert_eq!(client.era(), Era::Modern);
    drop_mid_call(&client).await;
    still_serving(&client).await;
    step("close", client.close()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_legacy_cancelled_call_leaves_the_server_serving() {
    let client = connect_stdio(builder(Handlers::default()).pin_version(ProtocolVersion::V2025_11_25)).await;
    drop_mid_call(&client).await;
    still_serving(&client).await;
    step("close", client.close()).await;
}

/// The server's tool waits for an elicitation the client never answers: the call can only end
/// by its timeout, which cancels it; the server goes on serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_legacy_timed_out_call_leaves_the_server_serving() {
    let handlers =
        Handlers::default().on_elicit(false, |_| std::future::pending::<Result<ElicitResult, ErrorObject>>());
    let client = connect_stdio(builder(handlers).pin_version(ProtocolVersion::V2025_11_25)).await;
    let mut params = CallToolRequestParams::new("test_elicitation");
    params.arguments = json!({"message": "nobody answers"}).as_object().cloned();
    let options = RequestOptions::new().timeout(Duration::from_millis(500)).retries(0);
    let result = step("the unanswered call", client.call_tool_with(&params, &options)).await;
    assert!(matches!(result, Err(ClientError::Timeout(_))), "{result:?}");
    still_serving(&client).await;
    step("close", client.close()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_modern_cancelled_call_leaves_the_server_serving() {
    let server = HttpServer::start();
    let builder = builder(Handlers::default()).pin_version(ProtocolVersion::V2026_07_28);
    let client = connect_http(builder, server.url("/mcp")).await;
    assert_eq!(client.era(), Era::Modern);
    drop_mid_call(&client).await;
    still_serving(&client).await;
    step("close", client.close()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_legacy_timed_out_call_leaves_the_server_serving() {
    let server = HttpServer::start();
    let handlers =
        Handlers::default().on_elicit(false, |_| std::future::pending::<Result<ElicitResult, ErrorObject>>());
    let client =
        connect_http(builder(handlers).pin_version(ProtocolVersion::V2025_11_25), server.url("/mcp")).await;
    let mut params = CallToolRequestParams::new("test_elicitation");
    params.arguments = json!({"message": "nobody answers"}).as_object().cloned();
    let options = RequestOptions::new().timeout(Duration::from_millis(500)).retries(0);
    let result = step("the unanswered call", client.call_tool_with(&params, &options)).await;
    assert!(matches!(result, Err(ClientError::Timeout(_))), "{result:?}");
    still_serving(&client).await;
    step("close", client.close()).await;
}
