//! What a `tools/call` costs through the client, end to end: typed call, `_meta`, the wire,
//! the server, and the decoded result.
//!
//! * `stdio/round_trip/{modern,legacy}`: one `call_tool("echo")` at a time against the release
//!   `mcpkit serve --stdio` binary (a real child process over pipes);
//! * `stdio/64_concurrent/{modern,legacy}`: 64 calls in flight on one connection;
//! * `http/round_trip/{modern,legacy}`: one call at a time against an in-process `mcp_http`
//!   server on 127.0.0.1 (Streamable HTTP; legacy is a 2025-11-25 session);
//! * `memory/{round_trip,64_concurrent,round_trip_100_rows}/{modern,legacy}`: the client
//!   alone, over an in-memory transport that answers each request at once (no process, no
//!   socket, no server library): the cost of the client's own call path, with a small argument
//!   and with one of 100 rows (where copies of the arguments show).
//!
//! Run with `cargo bench -p mcp-client --bench client` after `cargo build --release -p mcpkit`
//! (the stdio group is skipped, with a message, when that binary is missing). The versions are
//! pinned: era detection is not what is measured.

#[path = "../../mcp-server/benches/support/echo.rs"]
mod echo;
#[path = "../tests/support/memory.rs"]
mod memory;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use mcp_client::transport::http::HttpConfig;
use mcp_client::transport::stdio::StdioCommand;
use mcp_client::{Client, ClientBuilder, EraCache};
use mcp_types::ProtocolVersion;
use serde_json::json;
use tokio::runtime::Runtime;
use tokio::task::JoinSet;

use echo::echo_server;
use memory::Memory;

/// Calls in flight per iteration of the concurrent benchmark.
const CONCURRENT: usize = 64;

/// The versions measured: one per era.
const ERAS: [(&str, ProtocolVersion); 2] =
    [("modern", ProtocolVersion::V2026_07_28), ("legacy", ProtocolVersion::V2025_11_25)];

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a tokio runtime")
}

fn builder(version: ProtocolVersion) -> ClientBuilder {
    ClientBuilder::new("mcp-client-bench", "1.0.0").pin_version(version).era_cache(EraCache::new())
}

/// One `echo` call, checked.
async fn echo(client: &Client) {
    let result = client.call_tool("echo", json!({"text": "hello"})).await.expect("echo answers");
    assert_eq!(result.content.first().and_then(|b| b.as_text()), Some("hello"), "{result:?}");
}

/// Times `iters` sequential calls.
fn sequential(runtime: &Runtime, client: &Client, iters: u64) -> Duration {
    runtime.block_on(async {
        let start = Instant::now();
        for _ in 0..iters {
            echo(client).await;
        }
        start.elapsed()
    })
}

/// Times `iters` rounds of [`CONCURRENT`] calls in flight at once.
fn concurrent(runtime: &Runtime, client: &Client, iters: u64) -> Duration {
    runtime.block_on(async {
        let start = Instant::now();
        for _ in 0..iters {
            let mut calls = JoinSet::new();
            for _ in 0..CONCURRENT {
                let client = client.clone();
                calls.spawn(async move { echo(&client).await });
            }
            while let Some(done) = calls.join_next().await {
                done.expect("a call task");
            }
        }
        start.elapsed()
    })
}

/// The release `mcpkit` binary: `$CARGO_TARGET_DIR/release/mcpkit`, else the workspace's
/// `target/release/mcpkit`.
fn mcpkit_release() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    target.join("release").join("mcpkit")
}

fn bench_stdio(c: &mut Criterion) {
    let program = mcpkit_release();
    if !program.is_file() {
        eprintln!(
            "skipping the stdio benchmarks: {} does not exist; run `cargo build --release -p mcpkit` first",
            program.display()
        );
        return;
    }
    let runtime = runtime();
    let mut group = c.benchmark_group("stdio");
    for (era, version) in ERAS {
        let command = StdioCommand::new(&program).args(["serve", "--stdio"]);
        let client = runtime.block_on(builder(version).connect_stdio(command)).expect("mcpkit serve --stdio");
        runtime.block_on(echo(&client));

        group.throughput(Throughput::Elements(1));
        group.sample_size(100);
        group.bench_function(BenchmarkId::new("round_trip", era), |b| {
            b.iter_custom(|iters| sequential(&runtime, &client, iters))
        });

        group.throughput(Throughput::Elements(CONCURRENT as u64));
        // An iteration takes milliseconds: fewer samples keep a run near its target time.
        group.sample_size(30);
        group.bench_function(BenchmarkId::new("64_concurrent", era), |b| {
            b.iter_custom(|iters| concurrent(&runtime, &client, iters))
        });

        runtime.block_on(client.close());
    }
    group.finish();
}

/// An in-process Streamable HTTP server with the `echo` tool; its `/mcp` URL.
fn start_http(runtime: &Runtime) -> String {
    let server = echo_server();
    runtime.block_on(async {
        let bound = mcp_http::bind("127.0.0.1:0".parse().expect("an address")).await.expect("bind");
        let url = format!("http://{}/mcp", bound.local_addr());
        tokio::spawn(mcp_http::serve(server, bound, None));
        url
    })
}

fn bench_http(c: &mut Criterion) {
    let runtime = runtime();
    let url = start_http(&runtime);
    let mut group = c.benchmark_group("http");
    group.throughput(Throughput::Elements(1));
    for (era, version) in ERAS {
        let config = HttpConfig::new(url.clone());
        let client = runtime.block_on(builder(version).connect_http(config)).expect("the HTTP server");
        runtime.block_on(echo(&client));
        group.bench_function(BenchmarkId::new("round_trip", era), |b| {
            b.iter_custom(|iters| sequential(&runtime, &client, iters))
        });
        runtime.block_on(client.close());
    }
    group.finish();
}

fn bench_memory(c: &mut Criterion) {
    let runtime = runtime();
    let rows: Vec<_> = (0..100).map(|i| json!({"id": i, "name": "row"})).collect();
    let large = json!({"text": "hello", "rows": rows});
    let mut group = c.benchmark_group("memory");
    for (era, version) in ERAS {
        let builder = builder(version).discover_on_connect(false);
        let (inbound, rx) = builder.inbound_channel();
        let client = runtime
            .block_on(builder.connect_transport(Memory::new(inbound), rx, "memory"))
            .expect("the in-memory server");
        runtime.block_on(echo(&client));
        group.throughput(Throughput::Elements(1));
        group.sample_size(100);
        group.bench_function(BenchmarkId::new("round_trip", era), |b| {
            b.iter_custom(|iters| sequential(&runtime, &client, iters))
        });
        group.bench_function(BenchmarkId::new("round_trip_100_rows", era), |b| {
            b.iter_custom(|iters| {
                runtime.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        client.call_tool("echo", large.clone()).await.expect("echo answers");
                    }
                    start.elapsed()
                })
            })
        });
        group.throughput(Throughput::Elements(CONCURRENT as u64));
        group.bench_function(BenchmarkId::new("64_concurrent", era), |b| {
            b.iter_custom(|iters| concurrent(&runtime, &client, iters))
        });
        runtime.block_on(client.close());
    }
    group.finish();
}

criterion_group!(benches, bench_memory, bench_stdio, bench_http);
criterion_main!(benches);
