//! The client runs the shared SEP-2243 table (`mcp_types::headers::table`): each row's tool is
//! listed by a scripted server, called with the row's arguments, and the call must carry
//! exactly the row's `Mcp-Param-*` headers; the table's invalid schemas are dropped from the
//! listing. Then the real client against the real server (mcp-http): every row is served,
//! none refused with `-32020`.

mod support;

use std::time::Duration;

use mcp_client::ClientBuilder;
use mcp_client::transport::{OutgoingKind, TransportKind};
use mcp_types::headers::table::{INVALID, MIRRORS, NOT_ANNOTATIONS};
use serde_json::{Value, json};
use support::{Fake, Reply, discover_result, error, result, text_result};

fn builder() -> ClientBuilder {
    ClientBuilder::new("param-table-test", "1").probe_timeout(Duration::from_millis(300))
}

fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// One tool per table row: `t{i}` for the mirrors, `bad{i}` for the invalid schemas, `ok{i}`
/// for the schemas whose `x-mcp-header` key is no annotation.
fn table_tools() -> Value {
    let mut tools = Vec::new();
    for (i, row) in MIRRORS.iter().enumerate() {
        tools.push(json!({"name": format!("t{i}"), "inputSchema": parse(row.schema)}));
    }
    for (i, (_, schema)) in INVALID.iter().enumerate() {
        tools.push(json!({"name": format!("bad{i}"), "inputSchema": parse(schema)}));
    }
    for (i, (_, schema)) in NOT_ANNOTATIONS.iter().enumerate() {
        tools.push(json!({"name": format!("ok{i}"), "inputSchema": parse(schema)}));
    }
    Value::Array(tools)
}

#[tokio::test]
async fn every_call_of_the_table_carries_its_headers_and_invalid_tools_are_dropped() {
    let tools = table_tools();
    let (fake, rx) = Fake::new(
        TransportKind::StreamableHttp,
        Box::new(move |s| match s.method() {
            Some("server/discover") => result(s.id(), discover_result()),
            Some("tools/list") => result(
                s.id(),
                json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "tools": tools}),
            ),
            Some("tools/call") => result(s.id(), text_result("ok")),
            Some(_) if s.body.get("id").is_some() => error(s.id(), -32601, "Method not found", None),
            _ => Reply::Nothing,
        }),
    );
    let client = builder().connect_transport(fake.clone(), rx, "fake").await.unwrap();
    let listed: Vec<String> = client.list_all_tools().await.unwrap().into_iter().map(|t| t.name).collect();
    let mut expected: Vec<String> = (0..MIRRORS.len()).map(|i| format!("t{i}")).collect();
    expected.extend((0..NOT_ANNOTATIONS.len()).map(|i| format!("ok{i}")));
    assert_eq!(listed, expected, "every invalid schema is dropped, every valid one kept");

    for (i, row) in MIRRORS.iter().enumerate() {
        client.call_tool(&format!("t{i}"), parse(row.arguments)).await.unwrap();
        let call = fake.sent_with_method("tools/call").pop().unwrap();
        let OutgoingKind::Request { headers, .. } = call.kind else { panic!("{:?}", call.kind) };
        assert_eq!(headers.name, Some(format!("t{i}")), "{}", row.what);
        let mut sent = headers.params.clone();
        sent.sort();
        let want: Vec<(String, String)> =
            row.headers.iter().map(|(n, v)| ((*n).to_owned(), (*v).to_owned())).collect();
        assert_eq!(sent, want, "{}", row.what);
    }
}

#[cfg(feature = "http")]
#[tokio::test]
async fn the_real_server_serves_every_call_of_the_table_the_real_client_makes() {
    use mcp_client::transport::http::HttpConfig;
    use mcp_server::{Server, Tools};
    use mcp_types::{CallToolResult, JsonObject, Tool};

    let mut tools = Tools::new();
    for (i, row) in MIRRORS.iter().enumerate() {
        let schema: JsonObject = serde_json::from_str(row.schema).unwrap();
        tools = tools
            .add_dyn(Tool::new(format!("t{i}"), schema), |_call| async { Ok(CallToolResult::text("ran")) });
    }
    let server = Server::builder("param-table-server", "1").tools(tools).build().unwrap();
    let bound = mcp_http::bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = bound.local_addr();
    let serving = tokio::spawn(mcp_http::serve(server, bound, Some(mcp_http::HttpConfig::for_bind(addr))));
    let client = ClientBuilder::new("param-table-test", "1")
        .era_cache(mcp_client::EraCache::new())
        .connect_http(HttpConfig::new(format!("http://{addr}/mcp")))
        .await
        .unwrap();
    assert_eq!(client.protocol_version(), mcp_types::ProtocolVersion::V2026_07_28);
    client.list_all_tools().await.unwrap();
    for (i, row) in MIRRORS.iter().enumerate() {
        let called = tokio::time::timeout(
            Duration::from_secs(10),
            client.call_tool(&format!("t{i}"), parse(row.arguments)),
        )
        .await
        .expect("answered");
        // A row's arguments may fail the tool's schema (an error result); none is refused.
        let called = called.unwrap_or_else(|e| panic!("{}: {e:?}", row.what));
        if called.is_error != Some(true) {
            assert_eq!(serde_json::to_value(&called.content).unwrap()[0]["text"], "ran", "{}", row.what);
        }
    }
    client.close().await;
    serving.abort();
}
