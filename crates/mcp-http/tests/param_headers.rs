//! `Mcp-Param-*` headers over real HTTP (127.0.0.1, port 0): the server checks every
//! `x-mcp-header` argument, nested ones included, against the body before the tool runs, and
//! accepts every call of the shared table (`mcp_types::headers::table`) with the headers the
//! client sends for it.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_server::{Server, Tools};
use mcp_types::headers::table::{MIRRORS, REFUSALS};
use mcp_types::{CallToolResult, JsonObject, Tool};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// `{"type":"object","properties":{"outer":{...,"properties":{"inner":{x-mcp-header: Inner}}}}}`
fn nested_schema() -> JsonObject {
    let schema = json!({"type": "object", "properties": {
        "q": {"type": "string"},
        "outer": {"type": "object", "properties": {
            "inner": {"type": "string", "x-mcp-header": "Inner"}}}}});
    schema.as_object().cloned().unwrap()
}

/// A server whose tools are `nested` and one per table schema (`t0`, `t1`, ...), each
/// counting its runs.
async fn start(runs: Arc<AtomicUsize>) -> std::net::SocketAddr {
    let mut tools = Tools::new();
    let table = MIRRORS.iter().map(|m| m.schema).chain(REFUSALS.iter().map(|r| r.schema));
    let schemas = std::iter::once(nested_schema()).chain(table.map(|s| serde_json::from_str(s).unwrap()));
    for (i, schema) in schemas.enumerate() {
        let name = if i == 0 { "nested".to_owned() } else { format!("t{}", i - 1) };
        let runs = runs.clone();
        tools = tools.add_dyn(Tool::new(name, schema), move |_call| {
            runs.fetch_add(1, Ordering::SeqCst);
            async { Ok(CallToolResult::text("ran")) }
        });
    }
    let server = Server::builder("param-headers-test", "1").tools(tools).build().unwrap();
    let bound = mcp_http::bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = bound.local_addr();
    tokio::spawn(mcp_http::serve(server, bound, Some(mcp_http::HttpConfig::for_bind(addr))));
    addr
}

/// `(Name, value)` of the `Mcp-Param-{Name}` headers of a call.
type Params = &'static [(&'static str, &'static str)];

/// One modern `tools/call` with the standard headers and `params`; the status and the
/// JSON-RPC answer.
async fn call(
    addr: std::net::SocketAddr,
    tool: &str,
    arguments: &Value,
    params: &[(&str, &str)],
) -> (u16, Value) {
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}},
        "name": tool, "arguments": arguments}})
    .to_string();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:{}\r\nconnection: close\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\n\
         mcp-method: tools/call\r\nmcp-name: {tool}\r\ncontent-length: {}\r\n",
        addr.port(),
        body.len()
    );
    for (name, value) in params {
        request.push_str(&format!("Mcp-Param-{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut raw))
        .await
        .expect("no answer")
        .unwrap();
    let text = String::from_utf8(raw).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let data = body.lines().filter_map(|l| l.strip_prefix("data:")).find(|d| d.trim().starts_with('{'));
    let json = data.map(str::to_owned).unwrap_or_else(|| {
        let (start, end) = (body.find('{').expect("JSON"), body.rfind('}').unwrap());
        body[start..=end].to_owned()
    });
    (status, serde_json::from_str(json.trim()).unwrap())
}

#[tokio::test]
async fn a_nested_parameter_missing_or_contradicting_its_body_value_is_refused() {
    let runs = Arc::new(AtomicUsize::new(0));
    let addr = start(runs.clone()).await;
    let arguments = json!({"q": "SELECT 1", "outer": {"inner": "eu west"}});
    let refused: [(&str, Value, Params); 4] = [
        ("the nested header missing", arguments.clone(), &[]),
        ("the nested header contradicting the body", arguments.clone(), &[("Inner", "us-east")]),
        (
            "the nested header in Base64 of another value",
            arguments.clone(),
            &[("Inner", "=?base64?dXMtZWFzdA==?=")],
        ),
        ("the nested header without its argument", json!({"outer": {}}), &[("Inner", "eu west")]),
    ];
    for (what, arguments, params) in refused {
        let (status, reply) = call(addr, "nested", &arguments, params).await;
        assert_eq!((status, reply["error"]["code"].clone()), (400, json!(-32020)), "{what}: {reply}");
        assert!(reply["error"]["message"].as_str().unwrap().contains("Mcp-Param-Inner"), "{what}: {reply}");
        mcp_testkit::assert_valid_message("2026-07-28", &reply);
    }
    assert_eq!(runs.load(Ordering::SeqCst), 0, "no refused call ran the tool");
    let (status, reply) = call(addr, "nested", &arguments, &[("Inner", "eu west")]).await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["result"]["content"][0]["text"], "ran");
    // The header name is case-insensitive; the parent absent means no header is due.
    let (status, reply) = call(addr, "nested", &json!({"q": "x"}), &[]).await;
    assert_eq!(status, 200, "{reply}");
    let (status, reply) = call(addr, "nested", &arguments, &[("INNER", "eu west")]).await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(runs.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn the_shared_table_is_served_and_its_refusals_refused_over_http() {
    let runs = Arc::new(AtomicUsize::new(0));
    let addr = start(runs.clone()).await;
    for (i, row) in MIRRORS.iter().enumerate() {
        let arguments: Value = serde_json::from_str(row.arguments).unwrap();
        let (status, reply) = call(addr, &format!("t{i}"), &arguments, row.headers).await;
        // Past the header check (a row's arguments may still fail the schema: a result).
        assert_eq!(status, 200, "{}: {reply}", row.what);
        assert!(reply["result"].is_object(), "{}: {reply}", row.what);
    }
    let served = runs.load(Ordering::SeqCst);
    assert!(served + 1 >= MIRRORS.len(), "{served}");
    for (i, row) in REFUSALS.iter().enumerate() {
        let arguments: Value = serde_json::from_str(row.arguments).unwrap();
        let (status, reply) = call(addr, &format!("t{}", MIRRORS.len() + i), &arguments, row.headers).await;
        assert_eq!((status, reply["error"]["code"].clone()), (400, json!(-32020)), "{}: {reply}", row.what);
    }
    assert_eq!(runs.load(Ordering::SeqCst), served, "no refused call ran its tool");
}
