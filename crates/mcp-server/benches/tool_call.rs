//! The tool path alone: `tools/call` with a 10 KB argument and `tools/list` of 50 tools,
//! through [`Server::handle_request`] on an in-memory connection (no transport, no framing).
//!
//! Criterion: `cargo bench -p mcp-server --bench tool_call`.
//!
//! Instruction counts, reproducible on a loaded machine: set `TOOL_CALL_ITERS` and the bench
//! runs that many requests of the scenario named by `TOOL_CALL_SCENARIO` (`call` or `list`)
//! instead of Criterion, so that callgrind can count them:
//!
//! ```text
//! cargo bench -p mcp-server --bench tool_call --no-run
//! TOOL_CALL_SCENARIO=call TOOL_CALL_ITERS=0    valgrind --tool=callgrind target/release/deps/tool_call-*
//! TOOL_CALL_SCENARIO=call TOOL_CALL_ITERS=2000 valgrind --tool=callgrind target/release/deps/tool_call-*
//! ```
//!
//! (Ir at 2000 − Ir at 0) / 2000 is the cost of one request, setup excluded.

#[path = "support/echo.rs"]
mod echo;

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group};
use mcp_server::{CancellationToken, Connection, NullSink, Server};
use mcp_types::{Request, RequestId};

use echo::{echo, echo_tools};

/// Size of the text argument of the `tools/call` scenario.
const TEXT_BYTES: usize = 10 * 1024;
/// Tools in the `tools/list` scenario.
const LISTED_TOOLS: usize = 50;

fn server() -> Server {
    let mut tools = echo_tools();
    for i in 0..LISTED_TOOLS - 1 {
        tools = tools.add(&format!("echo_{i}"), "Echo the text back, under another name", echo);
    }
    Server::builder("bench", "1.0.0").tools(tools).build().expect("the server builds")
}

fn modern_meta() -> serde_json::Value {
    serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

fn call_request() -> Request {
    let params = serde_json::json!({
        "_meta": modern_meta(),
        "name": "echo",
        "arguments": { "text": "x".repeat(TEXT_BYTES) },
    });
    Request::new(1, "tools/call", &params).expect("request")
}

fn list_request() -> Request {
    Request::new(1, "tools/list", &serde_json::json!({ "_meta": modern_meta() })).expect("request")
}

fn one(runtime: &tokio::runtime::Runtime, server: &Server, connection: &Arc<Connection>, request: &Request) {
    let request =
        Request { id: RequestId::Number(1), method: request.method.clone(), params: request.params.clone() };
    let reply = runtime
        .block_on(server.handle_request(connection, request, CancellationToken::new()))
        .expect("a reply");
    assert!(reply.response.result.is_ok(), "the request failed: {:?}", reply.response.result);
    black_box(reply);
}

fn scenario(name: &str) -> Request {
    match name {
        "list" => list_request(),
        _ => call_request(),
    }
}

fn bench_tool_path(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let server = server();
    let connection = Connection::new(Arc::new(NullSink));
    let mut group = c.benchmark_group("handle_request");
    for name in ["call", "list"] {
        let request = scenario(name);
        let label = if name == "call" { "tools_call_10k" } else { "tools_list_50" };
        group.bench_function(label, |b| b.iter(|| one(&runtime, &server, &connection, &request)));
    }
    group.finish();
}

criterion_group!(benches, bench_tool_path);

fn main() {
    if let Ok(iters) = std::env::var("TOOL_CALL_ITERS") {
        let iters: usize = iters.parse().expect("TOOL_CALL_ITERS is a number");
        let name = std::env::var("TOOL_CALL_SCENARIO").unwrap_or_else(|_| "call".into());
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        let server = server();
        let connection = Connection::new(Arc::new(NullSink));
        let request = scenario(&name);
        for _ in 0..iters {
            one(&runtime, &server, &connection, &request);
        }
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
