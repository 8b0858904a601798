//! An in-memory client for the conformance server: lines in, lines out, every server message
//! validated against the schema of the revision in use — its envelope, the typed definition
//! of its method, and the typed result of the request it answers.
#![allow(dead_code, unreachable_pub)]

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf};

pub const MODERN: &str = "2026-07-28";
pub const LEGACY: &str = "2025-11-25";

/// The capabilities the conformance harness declares on 2026-07-28.
pub fn all_caps() -> Value {
    json!({"sampling": {}, "elicitation": {}, "roots": {"listChanged": true}})
}

/// `_meta` of a modern request.
pub fn meta(caps: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "conformance-test-client", "version": "1.0.0"},
        "io.modelcontextprotocol/clientCapabilities": caps,
    })
}

/// Params of a modern request: `params` plus `_meta` with these capabilities.
pub fn modern(caps: Value, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = meta(caps);
    params
}

pub struct Client {
    writer: WriteHalf<DuplexStream>,
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
    /// The revision server messages are validated against.
    pub revision: &'static str,
    /// The method of each request sent, by id, to validate its result.
    methods: HashMap<String, String>,
}

impl Client {
    /// A client speaking 2026-07-28 to a fresh conformance server.
    pub fn start() -> Self {
        let server = conformance::server();
        let (client, server_side) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server_side);
        let task = tokio::spawn(async move { server.serve_io(server_read, server_write).await });
        let (read, writer) = tokio::io::split(client);
        Client {
            writer,
            lines: BufReader::new(read).lines(),
            task,
            revision: MODERN,
            methods: HashMap::new(),
        }
    }

    /// A client that opened a 2025-11-25 session with these capabilities.
    pub async fn legacy(caps: Value) -> Self {
        let mut client = Client::start();
        let init = client.initialize(caps).await;
        assert_eq!(init["result"]["protocolVersion"], LEGACY, "{init}");
        client
    }

    pub async fn send(&mut self, message: Value) {
        if let (Some(id), Some(method)) = (message.get("id"), message.get("method").and_then(Value::as_str)) {
            self.methods.insert(id.to_string(), method.to_owned());
        }
        let mut line = message.to_string();
        line.push('\n');
        self.writer.write_all(line.as_bytes()).await.unwrap();
    }

    /// The next message from the server, validated against the schema.
    pub async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
            .await
            .expect("the server did not answer in time")
            .unwrap()
            .expect("the server closed its output");
        self.check(&line)
    }

    /// Parses and validates one line from the server.
    fn check(&self, line: &str) -> Value {
        let value: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON: {e}: {line}"));
        validate(self.revision, &value);
        if value.get("method").is_none() {
            let method = value.get("id").and_then(|id| self.methods.get(&id.to_string()));
            if let (Some(method), Some(result)) = (method, value.get("result")) {
                validate_result(self.revision, method, result);
            }
        }
        value
    }

    /// No message arrives within `wait`.
    pub async fn expect_silence(&mut self, wait: Duration) {
        if let Ok(line) = tokio::time::timeout(wait, self.lines.next_line()).await {
            panic!("unexpected message: {line:?}");
        }
    }

    /// Every message that arrives until none has for `quiet`.
    pub async fn drain(&mut self, quiet: Duration) -> Vec<Value> {
        let mut messages = Vec::new();
        while let Ok(line) = tokio::time::timeout(quiet, self.lines.next_line()).await {
            let line = line.unwrap().expect("the server closed its output");
            messages.push(self.check(&line));
        }
        messages
    }

    /// Sends a request; the next message must be its response.
    pub async fn request(&mut self, id: Value, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        let response = self.recv().await;
        assert_eq!(response["id"], id, "expected the response to {method}, got {response}");
        response
    }

    /// Sends a request and collects every message up to its response: (the messages before
    /// it, the response).
    pub async fn exchange(&mut self, id: Value, method: &str, params: Value) -> (Vec<Value>, Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        self.until_response(&id).await
    }

    /// Collects messages until the response with this id.
    pub async fn until_response(&mut self, id: &Value) -> (Vec<Value>, Value) {
        let mut before = Vec::new();
        loop {
            let message = self.recv().await;
            if message.get("method").is_none() && message.get("id") == Some(id) {
                return (before, message);
            }
            before.push(message);
        }
    }

    /// A modern `tools/call` with these capabilities and extra params.
    pub async fn call_modern(&mut self, id: i64, caps: Value, name: &str, extra: Value) -> Value {
        let mut params = modern(caps, extra);
        params["name"] = json!(name);
        self.request(json!(id), "tools/call", params).await
    }

    /// A legacy `tools/call`.
    pub async fn call_legacy(&mut self, id: i64, name: &str, arguments: Value) -> Value {
        self.request(json!(id), "tools/call", json!({"name": name, "arguments": arguments})).await
    }

    /// Answers a server→client request.
    pub async fn answer(&mut self, request: &Value, result: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": request["id"], "result": result})).await;
    }

    pub async fn close(mut self) {
        // End of input (a split duplex only closes when both halves go; shutdown says EOF).
        self.writer.shutdown().await.unwrap();
        tokio::time::timeout(Duration::from_secs(5), self.task)
            .await
            .expect("the server did not stop at end of input")
            .unwrap()
            .unwrap();
    }

    pub async fn initialize(&mut self, caps: Value) -> Value {
        self.revision = LEGACY;
        let r = self
            .request(
                json!(0),
                "initialize",
                json!({"protocolVersion": LEGACY, "capabilities": caps, "clientInfo": {"name": "t", "version": "1"}}),
            )
            .await;
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        r
    }
}

/// Validates a server message against the revision's schema: its envelope, and the typed
/// definition of its method.
pub fn validate(revision: &str, message: &Value) {
    let def = if message.get("method").is_some() {
        if message.get("id").is_some() { "JSONRPCRequest" } else { "JSONRPCNotification" }
    } else if message.get("error").is_some() {
        "JSONRPCErrorResponse"
    } else {
        "JSONRPCResultResponse"
    };
    mcp_testkit::assert_valid(revision, def, message);
    let Some(method) = message.get("method").and_then(Value::as_str) else { return };
    let typed = match method {
        "notifications/progress" => "ProgressNotification",
        "notifications/message" => "LoggingMessageNotification",
        "notifications/tools/list_changed" => "ToolListChangedNotification",
        "notifications/prompts/list_changed" => "PromptListChangedNotification",
        "notifications/resources/list_changed" => "ResourceListChangedNotification",
        "notifications/resources/updated" => "ResourceUpdatedNotification",
        "notifications/subscriptions/acknowledged" if revision == MODERN => {
            "SubscriptionsAcknowledgedNotification"
        }
        "sampling/createMessage" if revision != MODERN => "CreateMessageRequest",
        "elicitation/create" if revision != MODERN => "ElicitRequest",
        "roots/list" if revision != MODERN => "ListRootsRequest",
        other => panic!("the server sent an unexpected {other} on {revision}: {message}"),
    };
    mcp_testkit::assert_valid(revision, typed, message);
}

/// Validates a result against the typed result of the method it answers.
pub fn validate_result(revision: &str, method: &str, result: &Value) {
    if revision == MODERN && result["resultType"] == "input_required" {
        mcp_testkit::assert_valid(revision, "InputRequiredResult", result);
        return;
    }
    let def = match method {
        "initialize" => "InitializeResult",
        "server/discover" => "DiscoverResult",
        "tools/list" => "ListToolsResult",
        "tools/call" => "CallToolResult",
        "resources/list" => "ListResourcesResult",
        "resources/templates/list" => "ListResourceTemplatesResult",
        "resources/read" => "ReadResourceResult",
        "prompts/list" => "ListPromptsResult",
        "prompts/get" => "GetPromptResult",
        "completion/complete" => "CompleteResult",
        "subscriptions/listen" => "SubscriptionsListenResult",
        _ => "EmptyResult",
    };
    mcp_testkit::assert_valid(revision, def, result);
}

/// The text of the first content block of a tool result.
pub fn first_text(response: &Value) -> &str {
    response["result"]["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text in {response}"))
}
