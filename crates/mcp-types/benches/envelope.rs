//! Envelope costs on the hot path of every request: decoding a line, decoding its params into
//! the typed struct, and encoding the response.
//!
//! Run with `cargo bench -p mcp-types --bench envelope`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mcp_types::{
    CallToolRequestParams, CallToolResult, DecodeOptions, Incoming, Message, Request, RequestId, Response,
    decode,
};

/// A modern `tools/call` of `echo`, as a client sends it on stdio (without the newline).
fn tools_call_line(text: &str) -> Vec<u8> {
    let request = serde_json::json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
            },
            "name": "echo",
            "arguments": {"text": text}
        }
    });
    serde_json::to_vec(&request).expect("a JSON value serializes")
}

fn request_of(line: &[u8]) -> Request {
    match decode(line, DecodeOptions::default()) {
        Ok(Incoming::Single(Message::Request(request))) => request,
        other => panic!("not a single request: {other:?}"),
    }
}

fn bench_envelope(c: &mut Criterion) {
    let small = tools_call_line("hello");
    let large = tools_call_line(&"x".repeat(64 * 1024));
    // Check the inputs once, outside the timed loops.
    let params: CallToolRequestParams = request_of(&small).params_as().expect("valid params");
    assert_eq!(params.name, "echo");
    request_of(&large);

    let mut group = c.benchmark_group("envelope");

    group.throughput(Throughput::Bytes(small.len() as u64));
    group.bench_function("decode/tools_call_small", |b| {
        b.iter(|| decode(black_box(&small), DecodeOptions::default()))
    });
    group.bench_function("decode+params_as/tools_call_small", |b| {
        b.iter(|| {
            let request = request_of(black_box(&small));
            request.params_as::<CallToolRequestParams>()
        })
    });

    let result = CallToolResult::text("hello");
    let encoded =
        Message::Response(Response::ok(RequestId::from(1), &result).expect("serializable")).to_vec();
    group.throughput(Throughput::Bytes(encoded.len() as u64));
    group.bench_function("encode/call_tool_result_small", |b| {
        b.iter(|| {
            let response = Response::ok(RequestId::from(1), black_box(&result)).expect("serializable");
            Message::Response(response).to_vec()
        })
    });

    group.throughput(Throughput::Bytes(large.len() as u64));
    group.bench_function("decode/tools_call_64KiB", |b| {
        b.iter(|| decode(black_box(&large), DecodeOptions::default()))
    });

    group.finish();
}

criterion_group!(benches, bench_envelope);
criterion_main!(benches);
