//! Dispatch rules of both eras over the in-memory stdio transport: validation order,
//! removed methods, result shaping, pagination and caching hints.

mod support;

use mcp_server::{Args, Json, Server, ServerConfig, Tools};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use support::*;

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

#[derive(Serialize, JsonSchema)]
struct Sum {
    sum: i64,
}

async fn add(Args(AddArgs { a, b }): Args<AddArgs>) -> Json<Sum> {
    Json(Sum { sum: a + b })
}

async fn hello() -> &'static str {
    "hello"
}

fn server() -> Server {
    let tools = Tools::new().add("add", "Add two integers", add).add("hello", "Say hello", hello);
    Server::builder("dispatch-test", "1.0.0").instructions("Test server").tools(tools).build().unwrap()
}

#[tokio::test]
async fn modern_results_carry_result_type_server_info_and_cache_hints() {
    let mut p = Peer::start(server());
    let r = p.request(json!(1), "tools/list", json!({"_meta": meta(json!({}))})).await;
    validate_result(MODERN, "ListToolsResult", &r);
    assert_eq!(r["result"]["resultType"], "complete");
    assert_eq!(r["result"]["ttlMs"], 300000);
    assert_eq!(r["result"]["cacheScope"], "public");
    assert_eq!(r["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "dispatch-test");
    let names: Vec<&str> =
        r["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["add", "hello"], "registration order");
    let add = &r["result"]["tools"][0];
    assert_eq!(add["inputSchema"]["type"], "object");
    assert_eq!(add["inputSchema"]["required"], json!(["a", "b"]));
    assert_eq!(add["outputSchema"]["properties"]["sum"]["type"], "integer");

    let r = p
        .request(
            json!("c"),
            "tools/call",
            json!({"_meta": meta(json!({})), "name": "add", "arguments": {"a": 2, "b": 3}}),
        )
        .await;
    validate_result(MODERN, "CallToolResult", &r);
    assert_eq!(r["id"], "c");
    assert_eq!(r["result"]["structuredContent"], json!({"sum": 5}));
    assert_eq!(r["result"]["content"][0]["text"], "{\"sum\":5}");
    assert!(r["result"].get("isError").is_none());

    let r = p.request(json!(2), "server/discover", json!({"_meta": meta(json!({}))})).await;
    validate_result(MODERN, "DiscoverResult", &r);
    assert_eq!(r["result"]["supportedVersions"][0], "2026-07-28");
    assert!(r["result"]["supportedVersions"].as_array().unwrap().contains(&json!("2025-11-25")));
    assert_eq!(r["result"]["capabilities"]["tools"]["listChanged"], true);
    assert!(r["result"]["capabilities"].get("logging").is_none(), "no logging capability on 2026");
    assert_eq!(r["result"]["instructions"], "Test server");
    p.close().await;
}

/// `completions` is declared only when something completes (prompts or templates alone would
/// answer every `completion/complete` with nothing).
#[tokio::test]
async fn completions_are_declared_only_with_a_handler() {
    let prompts = || mcp_server::Prompts::new().add("poem", "A poem", || async { "Roses".to_owned() });
    let capabilities = |server: Server| async move {
        let mut p = Peer::start(server);
        let r = p.request(json!(1), "server/discover", json!({"_meta": meta(json!({}))})).await;
        p.close().await;
        r["result"]["capabilities"].clone()
    };
    let bare = Server::builder("t", "1").prompts(prompts()).build().unwrap();
    let caps = capabilities(bare).await;
    assert!(caps["prompts"].is_object() && caps.get("completions").is_none(), "{caps}");
    let completing =
        mcp_server::Completions::new().prompt_argument("poem", "style", |_| async { vec!["haiku".into()] });
    let with = Server::builder("t", "1").prompts(prompts()).completions(completing).build().unwrap();
    let caps = capabilities(with).await;
    assert!(caps["completions"].is_object(), "{caps}");
}

#[tokio::test]
async fn modern_validation_order_and_codes() {
    let mut p = Peer::start(server());
    // Missing _meta, or missing a required member: -32602.
    for params in [
        json!({}),
        json!({"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}),
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
    ] {
        let r = p.request(json!(1), "server/discover", params.clone()).await;
        assert_eq!(r["error"]["code"], -32602, "{params} -> {r}");
        assert_eq!(r["id"], 1);
    }
    // clientInfo is optional.
    let r = p
        .request(
            json!(2),
            "server/discover",
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}),
        )
        .await;
    assert_eq!(r["result"]["resultType"], "complete");
    // Unsupported version: -32022 with the supported list and the requested version echoed.
    let r = p
        .request(
            json!(3),
            "tools/list",
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "v999.0.0", "io.modelcontextprotocol/clientCapabilities": {}}}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32022);
    assert_eq!(r["error"]["data"], json!({"supported": ["2026-07-28"], "requested": "v999.0.0"}));
    mcp_testkit::assert_valid(MODERN, "UnsupportedProtocolVersionError", &r);
    // Methods removed in 2026-07-28 and unknown methods: -32601.
    for method in [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "unknown/method",
    ] {
        let r = p
            .request(json!(method), method, json!({"_meta": meta(json!({})), "uri": "x", "level": "info"}))
            .await;
        assert_eq!(r["error"]["code"], -32601, "{method}: {r}");
        assert_eq!(r["id"], method);
    }
    // A feature the server does not serve: -32601.
    let r = p.request(json!(4), "prompts/list", json!({"_meta": meta(json!({}))})).await;
    assert_eq!(r["error"]["code"], -32601);
    // Unknown tool: -32602.
    let r = p.request(json!(5), "tools/call", json!({"_meta": meta(json!({})), "name": "nope"})).await;
    assert_eq!(r["error"]["code"], -32602);
    // Without `_meta` and without a session: -32602 naming both ways in.
    let r = p.request(json!(6), "tools/list", json!({})).await;
    assert_eq!(r["error"]["code"], -32602);
    assert!(r["error"]["message"].as_str().unwrap().contains("initialize"));
    p.close().await;
}

#[tokio::test]
async fn tool_argument_violations_are_tool_errors_naming_the_violation() {
    let mut p = Peer::start(server());
    let r = p
        .request(
            json!(1),
            "tools/call",
            json!({"_meta": meta(json!({})), "name": "add", "arguments": {"a": 1}}),
        )
        .await;
    validate_result(MODERN, "CallToolResult", &r);
    assert_eq!(r["result"]["isError"], true);
    let text = r["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("add") && text.contains("\"b\" is a required property"), "{text}");
    // A tool without arguments accepts a call without an `arguments` member.
    let r = p.request(json!(2), "tools/call", json!({"_meta": meta(json!({})), "name": "hello"})).await;
    assert_eq!(r["result"]["content"][0]["text"], "hello");
    // A malformed CallToolRequest (no name) is -32602.
    let r = p.request(json!(3), "tools/call", json!({"_meta": meta(json!({}))})).await;
    assert_eq!(r["error"]["code"], -32602);
    // Duplicate members inside params are refused (the body dispatched is the body checked).
    p.send_raw(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"hello","name":"add"}}"#).await;
    let r = p.recv().await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    p.close().await;
}

#[tokio::test]
async fn legacy_session_serves_the_same_handlers_without_modern_fields() {
    let mut p = Peer::start(server());
    let init = p.initialize(json!({})).await;
    validate_result(LEGACY, "InitializeResult", &init);
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(init["result"]["capabilities"]["logging"], json!({}));
    assert_eq!(init["result"]["instructions"], "Test server");
    let r = p.request(json!(1), "tools/list", json!({})).await;
    validate_result(LEGACY, "ListToolsResult", &r);
    for key in ["resultType", "ttlMs", "cacheScope", "_meta"] {
        assert!(r["result"].get(key).is_none(), "legacy result carries {key}: {r}");
    }
    let r = p.request(json!(2), "tools/call", json!({"name": "add", "arguments": {"a": 40, "b": 2}})).await;
    assert_eq!(r["result"]["structuredContent"]["sum"], 42);
    assert!(r["result"].get("resultType").is_none());
    let r = p.request(json!(3), "ping", json!({})).await;
    assert_eq!(r["result"], json!({}));
    let r = p.request(json!(4), "logging/setLevel", json!({"level": "info"})).await;
    assert_eq!(r["result"], json!({}));
    // Modern requests are still served statelessly on the same connection.
    p.revision = MODERN;
    let r = p.request(json!(5), "tools/list", json!({"_meta": meta(json!({}))})).await;
    assert_eq!(r["result"]["resultType"], "complete");
    p.close().await;
}

#[tokio::test]
async fn initialize_negotiates_a_legacy_version() {
    for (asked, expected) in [
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2024-11-05", "2024-11-05"),
        ("2026-07-28", "2025-11-25"),
        ("1999-01-01", "2025-11-25"),
    ] {
        let mut p = Peer::start(server());
        p.revision = if expected == "2025-11-25" { LEGACY } else { "2025-06-18" };
        let r = p
            .request(
                json!(0),
                "initialize",
                json!({"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}),
            )
            .await;
        assert_eq!(r["result"]["protocolVersion"], expected, "asked {asked}");
        p.close().await;
    }
}

#[tokio::test]
async fn pagination_walks_every_page_in_order() {
    let mut tools = Tools::new();
    for i in 0..5 {
        tools = tools.add(&format!("t{i}"), "a tool", hello);
    }
    let config = ServerConfig::default().with_page_size(2);
    let server = Server::builder("p", "1").tools(tools).config(config).build().unwrap();
    let mut p = Peer::start(server);
    let mut names = Vec::new();
    let mut cursor: Option<Value> = None;
    for round in 0..3 {
        let mut params = json!({"_meta": meta(json!({}))});
        if let Some(c) = &cursor {
            params["cursor"] = c.clone();
        }
        let r = p.request(json!(round), "tools/list", params).await;
        names.extend(
            r["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()),
        );
        cursor = r["result"].get("nextCursor").cloned();
    }
    assert_eq!(names, ["t0", "t1", "t2", "t3", "t4"]);
    assert!(cursor.is_none());
    let r = p.request(json!(9), "tools/list", json!({"_meta": meta(json!({})), "cursor": "bogus"})).await;
    assert_eq!(r["error"]["code"], -32602);
    p.close().await;
}

#[test]
fn registering_a_name_twice_is_an_error() {
    let tools = Tools::new().add("same", "one", hello).add("same", "two", hello).add("", "empty", hello);
    let err = Server::builder("d", "1").tools(tools).build().unwrap_err();
    let text = err.to_string();
    assert!(text.contains("tool \"same\" is registered twice"), "{text}");
    assert!(text.contains("is empty"), "{text}");
}

#[test]
fn a_network_ref_in_a_tool_schema_is_refused_and_never_fetched() {
    use std::net::TcpListener;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let hits = Arc::new(AtomicUsize::new(0));
    let schema = json!({"type": "object", "properties": {"user": {"$ref": format!("http://127.0.0.1:{port}/canary/profile-schema.json")}}});
    let def = mcp_types::Tool::new("lookup_user", schema.as_object().unwrap().clone());
    let tools = Tools::new().add_dyn(def, |_call| async { Ok(mcp_types::CallToolResult::text("never")) });
    let err = Server::builder("canary", "1").tools(tools).build().unwrap_err();
    assert!(err.to_string().contains("lookup_user"), "{err}");
    // Nothing connected to the canary, during or after the attempt.
    std::thread::sleep(std::time::Duration::from_millis(100));
    while listener.accept().is_ok() {
        hits.fetch_add(1, Ordering::SeqCst);
    }
    assert_eq!(hits.load(Ordering::SeqCst), 0, "the $ref was fetched");
}

fn tool_with_schema(name: &str, schema: Value) -> mcp_types::Tool {
    let mut tool = mcp_types::Tool::without_arguments(name);
    tool.input_schema = serde_json::from_value(schema).unwrap();
    tool
}

#[test]
fn tool_headers_are_computed_at_registration_and_follow_the_table() {
    let annotated = json!({"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "q": {"type": "string"},
        "deep": {"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}},
    }});
    // Declared twice ignoring case: the tool's annotations are invalid.
    let invalid = json!({"type": "object", "properties": {
        "a": {"type": "string", "x-mcp-header": "Same"},
        "b": {"type": "string", "x-mcp-header": "same"},
    }});
    let noop = |_call: mcp_server::Call| async { Ok(mcp_types::CallToolResult::text("ok")) };
    let tools = Tools::new()
        .add_dyn(tool_with_schema("annotated", annotated), noop)
        .add_dyn(tool_with_schema("invalid", invalid), noop)
        .add("hello", "Says hello", hello);
    let server = Server::builder("headers", "1").tools(tools).build().unwrap();

    let headers = server.tool_headers("annotated").expect("a known tool");
    let names: Vec<(&str, Vec<&str>)> =
        headers.iter().map(|h| (h.name.as_str(), h.path.iter().map(String::as_str).collect())).collect();
    // In the schema's key order (serde_json maps are sorted).
    assert_eq!(names, [("N", vec!["deep", "n"]), ("Region", vec!["region"])]);
    // The same shared slice every time: computed once, never per request.
    assert!(std::sync::Arc::ptr_eq(&headers, &server.tool_headers("annotated").unwrap()));
    assert!(server.tool_headers("hello").unwrap().is_empty());
    assert!(server.tool_headers("invalid").unwrap().is_empty(), "invalid annotations mirror nothing");
    assert!(server.tool_headers("unknown").is_none());

    // Tools changed at run time bring their own facts.
    let replaced = json!({"type": "object", "properties": {"id": {"type": "integer", "x-mcp-header": "Id"}}});
    server.set_tools(Tools::new().add_dyn(tool_with_schema("replaced", replaced), noop)).unwrap();
    assert!(server.tool_headers("annotated").is_none());
    assert_eq!(server.tool_headers("replaced").unwrap()[0].name, "Id");
}

/// A result a proxy passes on as JSON (`PassedResult`) is held to the tool's `outputSchema` as a
/// built one is, and answered in the caller's era.
#[tokio::test]
async fn a_passed_result_is_checked_against_the_output_schema_and_shaped_per_era() {
    let schema = json!({"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]});
    let def = |name: &str| {
        let mut tool = mcp_types::Tool::without_arguments(name);
        tool.output_schema = Some(schema.as_object().unwrap().clone());
        tool
    };
    let passed = |text: &'static str| {
        move |_call: mcp_server::Call| async move {
            mcp_server::PassedResult::from_json(text)
                .map_err(|e| mcp_server::Rejection::Internal(e.to_string()))
        }
    };
    let tools = Tools::new()
        .add_proxy(
            def("good"),
            passed(r#"{"content":[],"structuredContent":{"sum":5},"resultType":"complete"}"#),
        )
        .add_proxy(def("bad"), passed(r#"{"content":[],"structuredContent":{"sum":"five"}}"#))
        .add_proxy(def("none"), passed(r#"{"content":[]}"#))
        .add_proxy(def("failed"), passed(r#"{"content":[],"isError":true}"#));
    let server = Server::builder("passing", "1.0.0").tools(tools).build().unwrap();
    let mut p = Peer::start(server);
    let call = |name: &str| json!({"_meta": meta(json!({})), "name": name});
    let r = p.request(json!(1), "tools/call", call("good")).await;
    validate_result(MODERN, "CallToolResult", &r);
    assert_eq!(r["result"]["structuredContent"], json!({"sum": 5}));
    assert_eq!(r["result"]["resultType"], "complete");
    assert_eq!(r["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "passing");
    let r = p.request(json!(2), "tools/call", call("bad")).await;
    assert_eq!(r["error"]["code"], -32603, "{r}");
    assert!(r["error"]["message"].as_str().unwrap().contains("violates its outputSchema"), "{r}");
    let r = p.request(json!(3), "tools/call", call("none")).await;
    assert!(r["error"]["message"].as_str().unwrap().contains("no structuredContent"), "{r}");
    let r = p.request(json!(4), "tools/call", call("failed")).await;
    assert_eq!(r["result"]["isError"], true, "a tool error is not held to the schema: {r}");
    p.close().await;

    let mut legacy = Peer::start(
        Server::builder("passing", "1.0.0")
            .tools(Tools::new().add_proxy(
                def("good"),
                passed(r#"{"content":[],"structuredContent":{"sum":5},"resultType":"complete"}"#),
            ))
            .build()
            .unwrap(),
    );
    legacy.initialize(json!({})).await;
    let r = legacy.request(json!(1), "tools/call", json!({"name": "good"})).await;
    assert_eq!(r["result"]["structuredContent"], json!({"sum": 5}), "{r}");
    assert!(r["result"].get("resultType").is_none(), "no resultType for a legacy client: {r}");
    assert!(r["result"].get("_meta").is_none(), "{r}");
    legacy.close().await;
}
