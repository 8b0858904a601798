//! Envelope costs on the hot path of every request: decoding a line, decoding its params into
//! the typed struct, and encoding the response.
//!
//! Run with `cargo bench -p mcp-types --bench envelope`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mcp_types::{
    CallToolRequestParams, CallToolResult, DecodeOptions, Incoming, Message, Request, RequestId, Response,
    ResultKind, decode,
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

    // What a client reads of a modern result before decoding it: its `resultType`.
    let mut answered = CallToolResult::text("hello, this is the tool's answer");
    answered.structured_content = Some(serde_json::json!({"answer": "hello", "list": [1, 2, 3]}));
    let mut answered = serde_json::to_value(&answered).expect("serializable");
    answered["resultType"] = "complete".into();
    answered["_meta"] =
        serde_json::json!({"io.modelcontextprotocol/serverInfo": {"name": "echo", "version": "1.0.0"}});
    let answered = serde_json::to_string(&answered).expect("serializable");
    assert_eq!(ResultKind::of(&answered), Ok(ResultKind::Complete));
    group.throughput(Throughput::Bytes(answered.len() as u64));
    group.bench_function("result_kind/call_tool_result", |b| b.iter(|| ResultKind::of(black_box(&answered))));
    // The probe a client read it with before: serde skipping every other member.
    #[derive(serde::Deserialize)]
    struct Probe<'a> {
        #[serde(rename = "resultType", borrow)]
        _result_type: Option<std::borrow::Cow<'a, str>>,
    }
    group.bench_function("result_kind/serde_probe", |b| {
        b.iter(|| serde_json::from_str::<Probe<'_>>(black_box(&answered)).is_ok())
    });
    let mut long = serde_json::to_value(CallToolResult::text("x".repeat(64 * 1024))).expect("serializable");
    long["resultType"] = "complete".into();
    let long = serde_json::to_string(&long).expect("serializable");
    group.throughput(Throughput::Bytes(long.len() as u64));
    group.bench_function("result_kind/call_tool_result_64KiB", |b| {
        b.iter(|| ResultKind::of(black_box(&long)))
    });
    group.bench_function("result_kind/serde_probe_64KiB", |b| {
        b.iter(|| serde_json::from_str::<Probe<'_>>(black_box(&long)).is_ok())
    });

    group.throughput(Throughput::Bytes(large.len() as u64));
    group.bench_function("decode/tools_call_64KiB", |b| {
        b.iter(|| decode(black_box(&large), DecodeOptions::default()))
    });

    group.finish();
}

criterion_group!(benches, bench_envelope);
criterion_main!(benches);
