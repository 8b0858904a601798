//! The front door alone, bytes in → bytes out, no IO: a request line is decoded and classified
//! (`door::receive`), admitted on its connection (`door::admit`), routed and run
//! (`Server::run`), and its reply serialized — what every transport does per request, without
//! the transport. Cases: a `tools/call` of an echo tool with 100 B and 10 KB of text, on the
//! modern wire (2026-07-28, `_meta` on the request) and in a legacy session (2025-11-25), and a
//! modern `tools/list`.
//!
//! Run with `cargo bench -p mcp-server --bench door`.

#[path = "support/echo.rs"]
mod echo;

use std::sync::Arc;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mcp_server::door::{self, Inbound};
use mcp_server::{Connection, NullSink, Server};

use echo::echo_server;

const MODERN_META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"#;

/// A `tools/call echo` whose text is `text_len` bytes.
fn call(text_len: usize, modern: bool) -> Vec<u8> {
    let text = "x".repeat(text_len);
    let meta = if modern { MODERN_META } else { "" };
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{{meta}"name":"echo","arguments":{{"text":"{text}"}}}}}}"#
    )
    .into_bytes()
}

fn list() -> Vec<u8> {
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{}}}}}"#,
        MODERN_META.trim_end_matches(',')
    )
    .into_bytes()
}

/// One request through the front door: bytes in, the reply's bytes out.
async fn through(server: &Server, connection: &Arc<Connection>, bytes: &[u8]) -> Vec<u8> {
    let Ok(Inbound::Request(request)) = door::receive(bytes, false) else { panic!("a request") };
    let in_flight = door::admit(connection, &request).expect("admitted");
    let reply = server.run(request, &in_flight, None, None).await.expect("a reply");
    reply.to_vec()
}

fn bench_door(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let server = echo_server();
    let modern = Connection::new(Arc::new(NullSink));
    let legacy = Connection::new(Arc::new(NullSink));
    let initialize = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;
    runtime.block_on(through(&server, &legacy, initialize));

    let mut group = c.benchmark_group("front_door");
    group.throughput(Throughput::Elements(1));
    for (name, connection, bytes) in [
        ("tools_call_echo_100B/modern", &modern, call(100, true)),
        ("tools_call_echo_10KB/modern", &modern, call(10_000, true)),
        ("tools_call_echo_100B/legacy", &legacy, call(100, false)),
        ("tools_call_echo_10KB/legacy", &legacy, call(10_000, false)),
        ("tools_list/modern", &modern, list()),
    ] {
        let out = runtime.block_on(through(&server, connection, &bytes));
        let text = String::from_utf8_lossy(&out);
        assert!(text.contains(r#""result""#) && !text.contains(r#""error""#), "{name}: {text}");
        group.bench_function(name, |b| b.iter(|| runtime.block_on(through(&server, connection, &bytes))));
    }
    group.finish();
}

criterion_group!(benches, bench_door);
criterion_main!(benches);
