//! `mcpkit record FILE --url URL`: mcpkit is a stdio server for the host and forwards each of
//! its messages to a Streamable HTTP server through mcp-client's transport (sessions, SSE
//! streams, resumption and the `MCP-Protocol-Version`/`Mcp-Method`/`Mcp-Name` headers are the
//! transport's), recording both ways. Headers are never recorded.
//!
//! A call's `Mcp-Param-*` headers come from the tool's input schema (`x-mcp-header`), as the
//! server listed it in a `tools/list` answer that went through: a tool called before the host
//! listed it is called without them (and a server that wants them answers with its
//! header-mismatch error). The tokens `mcpkit login` stored for the URL are used, as by every
//! `--url` command; a refresh is never asked of a person (the terminal is the host's).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use axum::body::Bytes;
use mcp_client::transport::http::StreamableHttpTransport;
use mcp_client::transport::{Inbound, Outgoing, OutgoingKind, RequestHeaders, Transport};
use mcp_types::{ProtocolVersion, RequestId};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

use super::{Recording, Way};

/// The revision a message is sent under: its own `_meta` one (2026-07-28), else the one the
/// `initialize` answer agreed (`None` before it, and for `initialize` itself).
fn version_of(message: &Value, agreed: Option<ProtocolVersion>) -> Option<ProtocolVersion> {
    let stated = message
        .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
        .and_then(Value::as_str)
        .and_then(ProtocolVersion::parse);
    match message.get("method").and_then(Value::as_str) {
        Some("initialize") => None,
        _ => stated.or(agreed),
    }
}

/// The `x-mcp-header` parameters of each tool, by name, from the `tools/list` answers seen.
type ToolHeaders = std::collections::HashMap<String, Vec<mcp_client::headers::ParamHeader>>;

/// How the transport sends `message`; `None` when it is not a JSON-RPC message at all.
fn kind_of(message: &Value, tools: &ToolHeaders) -> Option<OutgoingKind> {
    let method = message.get("method").and_then(Value::as_str);
    let id = message.get("id").and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok());
    match (method, id) {
        (Some(method), Some(id)) => {
            let name = match method {
                "tools/call" | "prompts/get" => message.pointer("/params/name"),
                "resources/read" => message.pointer("/params/uri"),
                "tasks/get" | "tasks/update" | "tasks/cancel" => message.pointer("/params/taskId"),
                _ => None,
            };
            let name = name.and_then(Value::as_str);
            let params = match (method, name.and_then(|n| tools.get(n))) {
                ("tools/call", Some(headers)) => {
                    let arguments = message.pointer("/params/arguments").and_then(Value::as_object);
                    mcp_client::headers::header_values(headers, arguments)
                }
                _ => Vec::new(),
            };
            let headers = RequestHeaders { name: name.map(str::to_owned), params, ..Default::default() };
            Some(OutgoingKind::Request { id, method: method.to_owned(), headers })
        }
        (Some(method), None) => Some(OutgoingKind::Notification { method: method.to_owned() }),
        (None, Some(_)) => Some(OutgoingKind::Response),
        (None, None) => None,
    }
}

/// Learns the tools' header parameters from an answer to one of the `tools/list` requests
/// `listing` names (the ids the host sent them under).
fn learn(
    answer: &Value,
    listing: &std::sync::Mutex<std::collections::HashSet<String>>,
    tools: &std::sync::Mutex<ToolHeaders>,
) {
    let Some(id) = answer.get("id").filter(|_| answer.get("method").is_none()) else { return };
    if !listing.lock().unwrap_or_else(|p| p.into_inner()).remove(&id.to_string()) {
        return;
    }
    let Some(listed) = answer.pointer("/result/tools").and_then(Value::as_array) else { return };
    let mut tools = tools.lock().unwrap_or_else(|p| p.into_inner());
    for tool in listed {
        let (Some(name), Some(schema)) =
            (tool.get("name").and_then(Value::as_str), tool.get("inputSchema").and_then(Value::as_object))
        else {
            continue;
        };
        if let Ok(headers) = mcp_client::headers::param_headers(schema) {
            tools.insert(name.to_owned(), headers);
        }
    }
}

pub(super) async fn record(file: &Path, url: &str, headers: &[(String, String)]) -> anyhow::Result<ExitCode> {
    let headers: BTreeMap<String, String> = headers.iter().cloned().collect();
    let mut config = crate::target::http_config(url, &headers, None)?;
    // Stored tokens (`mcpkit login`), unless --header gives an Authorization.
    let _authorization = crate::login::attach(&mut config, &crate::login::OAuthArgs::default()).await?;
    let listing = Arc::new(std::sync::Mutex::new(std::collections::HashSet::<String>::new()));
    let tools = Arc::new(std::sync::Mutex::new(ToolHeaders::new()));
    let (tx, mut rx) = mcp_client::transport::inbound_channel();
    let transport: Arc<StreamableHttpTransport> =
        StreamableHttpTransport::new(config, tx).map_err(|e| anyhow::anyhow!("{url}: {e}"))?;
    let recording =
        Arc::new(Recording::create(file, "streamable-http", json!(crate::target::redact_url(url))).await?);

    // The revision the server's `initialize` answer agreed (legacy): the `MCP-Protocol-Version`
    // of every later message. Set before the answer reaches the host, which sends nothing
    // under it before it has the answer.
    let agreed = Arc::new(std::sync::Mutex::new(None::<ProtocolVersion>));
    // The server's messages to the host, as they come.
    let out = {
        let (recording, agreed) = (recording.clone(), agreed.clone());
        let (listing, tools) = (listing.clone(), tools.clone());
        tokio::spawn(async move {
            let mut stdout = tokio::io::stdout();
            while let Some(event) = rx.recv().await {
                let bytes = match event {
                    Inbound::Message(bytes) | Inbound::Related { message: bytes, .. } => bytes,
                    Inbound::Unanswered { id, error } => {
                        // The host would wait for ever: it gets an error in the answer's place,
                        // written by mcpkit (and recorded as such).
                        let error = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": format!("mcpkit record: the answer was lost: {error}")}});
                        Bytes::from(error.to_string())
                    }
                    Inbound::Closed(_) => return,
                    _ => continue,
                };
                let text = String::from_utf8_lossy(&bytes);
                recording.message(Way::ToClient, &text).await;
                if let Ok(answer) = serde_json::from_str::<Value>(&text) {
                    learn(&answer, &listing, &tools);
                    let version = answer.pointer("/result/protocolVersion").and_then(Value::as_str);
                    if let Some(version) = version.and_then(ProtocolVersion::parse) {
                        let mut agreed = agreed.lock().unwrap_or_else(|p| p.into_inner());
                        agreed.get_or_insert(version);
                    }
                }
                if stdout.write_all(format!("{}\n", text.trim_end()).as_bytes()).await.is_err()
                    || stdout.flush().await.is_err()
                {
                    return;
                }
            }
        })
    };

    // The host's messages to the server, one at a time, in order.
    let mut input = mcp_stdio::FramedReader::new(tokio::io::stdin());
    while let Some(frame) = input.next_frame().await {
        let Ok(frame) = frame else { continue };
        let text = frame.as_str();
        recording.message(Way::ToServer, text).await;
        let Ok(message) = serde_json::from_str::<Value>(text) else { continue };
        if message.get("method").and_then(Value::as_str) == Some("tools/list") {
            if let Some(id) = message.get("id") {
                listing.lock().unwrap_or_else(|p| p.into_inner()).insert(id.to_string());
            }
        }
        let kind = kind_of(&message, &tools.lock().unwrap_or_else(|p| p.into_inner()));
        let Some(kind) = kind else { continue };
        let agreed = *agreed.lock().unwrap_or_else(|p| p.into_inner());
        let version = version_of(&message, agreed);
        let outgoing =
            Outgoing { body: Bytes::copy_from_slice(text.as_bytes()), kind, protocol_version: version };
        if let Err(e) = transport.send(outgoing).await {
            eprintln!("mcpkit record: {e}");
            if let Some(id) = message.get("id").filter(|_| message.get("method").is_some()) {
                let error = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": format!("mcpkit record: {e}")}});
                recording.message(Way::ToClient, &error.to_string()).await;
                let mut stdout = tokio::io::stdout();
                let _ = stdout.write_all(format!("{error}\n").as_bytes()).await;
                let _ = stdout.flush().await;
            }
        }
        if message.get("method").and_then(Value::as_str) == Some("notifications/initialized") {
            if let Some(version) = agreed {
                // A legacy session is open: the transport opens its GET stream.
                transport.session_ready(version).await;
            }
        }
    }
    transport.close().await;
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), out).await;
    Arc::into_inner(recording).context("the recording is still in use")?.finish().await?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_sent_as_what_they_are() {
        let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "echo",
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
        let none = ToolHeaders::new();
        match kind_of(&call, &none) {
            Some(OutgoingKind::Request { id, method, headers }) => {
                assert_eq!(
                    (id, method.as_str(), headers.name.as_deref()),
                    (RequestId::Number(7), "tools/call", Some("echo"))
                );
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(version_of(&call, Some(ProtocolVersion::V2025_06_18)), Some(ProtocolVersion::V2026_07_28));
        let legacy = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert!(matches!(kind_of(&legacy, &none), Some(OutgoingKind::Notification { .. })));
        assert_eq!(
            version_of(&legacy, Some(ProtocolVersion::V2025_06_18)),
            Some(ProtocolVersion::V2025_06_18)
        );
        let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}});
        assert_eq!(version_of(&initialize, Some(ProtocolVersion::V2025_06_18)), None);
        assert!(matches!(
            kind_of(&json!({"jsonrpc": "2.0", "id": 3, "result": {}}), &none),
            Some(OutgoingKind::Response)
        ));
        assert!(kind_of(&json!({"jsonrpc": "2.0"}), &none).is_none());
    }

    #[test]
    fn a_listed_tools_header_parameters_go_with_its_calls_and_a_task_names_itself() {
        let listing = std::sync::Mutex::new(std::collections::HashSet::from(["4".to_owned()]));
        let tools = std::sync::Mutex::new(ToolHeaders::new());
        let answer = json!({"jsonrpc": "2.0", "id": 4, "result": {"tools": [{"name": "weather", "inputSchema": {
            "type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}}]}});
        learn(&answer, &listing, &tools);
        assert!(listing.lock().unwrap().is_empty(), "an answer is learnt once");
        let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
            "params": {"name": "weather", "arguments": {"region": "eu-west"}}});
        let Some(OutgoingKind::Request { headers, .. }) = kind_of(&call, &tools.lock().unwrap()) else {
            panic!()
        };
        assert_eq!(headers.params, [("Region".to_owned(), "eu-west".to_owned())]);
        let get = json!({"jsonrpc": "2.0", "id": 6, "method": "tasks/get", "params": {"taskId": "t1"}});
        let Some(OutgoingKind::Request { headers, .. }) = kind_of(&get, &tools.lock().unwrap()) else {
            panic!()
        };
        assert_eq!(headers.name.as_deref(), Some("t1"));
        // An answer to another request teaches nothing.
        let other = json!({"jsonrpc": "2.0", "id": 9, "result": {"tools": [{"name": "x", "inputSchema": {"type": "object"}}]}});
        learn(&other, &listing, &tools);
        assert!(!tools.lock().unwrap().contains_key("x"));
    }
}
