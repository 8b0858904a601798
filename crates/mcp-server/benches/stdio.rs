//! End-to-end cost of a `tools/call` through [`Server::serve_io`], in memory: a client writes
//! newline-delimited requests into a `tokio::io::duplex` pipe and reads the answers back.
//!
//! Run with `cargo bench -p mcp-server --bench stdio`.

#[path = "support/echo.rs"]
mod echo;

use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tokio::runtime::Runtime;

use echo::echo_server;

/// Requests in flight per iteration of the batch benchmark.
const BATCH: usize = 64;

/// One modern `tools/call echo` line, newline included.
fn request_line(id: u64) -> Vec<u8> {
    format!(
        concat!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"_meta":{{"#,
            r#""io.modelcontextprotocol/protocolVersion":"2026-07-28","#,
            r#""io.modelcontextprotocol/clientCapabilities":{{}}}},"#,
            r#""name":"echo","arguments":{{"text":"hello"}}}}}}"#,
            "\n"
        ),
        id
    )
    .into_bytes()
}

/// The client end of a served connection.
struct Client {
    writer: WriteHalf<DuplexStream>,
    reader: BufReader<ReadHalf<DuplexStream>>,
    line: Vec<u8>,
}

impl Client {
    fn start(runtime: &Runtime) -> Self {
        let (client, server_side) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server_side);
        let server = echo_server();
        runtime.spawn(async move { server.serve_io(server_read, server_write).await });
        let (reader, writer) = tokio::io::split(client);
        Client { writer, reader: BufReader::new(reader), line: Vec::new() }
    }

    /// Reads one response line and checks that it is a successful echo.
    async fn read_response(&mut self) {
        self.line.clear();
        let n = self.reader.read_until(b'\n', &mut self.line).await.expect("read");
        assert!(n > 0, "the server closed its output");
        assert!(
            memfind(&self.line, br#""text":"hello""#) && !memfind(&self.line, br#""error""#),
            "unexpected response: {}",
            String::from_utf8_lossy(&self.line)
        );
    }
}

fn memfind(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn bench_stdio(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let mut client = Client::start(&runtime);
    let single = request_line(1);
    let batch: Vec<u8> = (0..BATCH as u64).flat_map(request_line).collect();

    let mut group = c.benchmark_group("serve_io");
    group.throughput(Throughput::Elements(1));
    group.bench_function("tools_call_echo/round_trip", |b| {
        b.iter_custom(|iters| {
            runtime.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    client.writer.write_all(&single).await.expect("write");
                    client.read_response().await;
                }
                start.elapsed()
            })
        })
    });

    group.throughput(Throughput::Elements(BATCH as u64));
    // An iteration is ~1 ms: fewer samples keep the default run near its target time.
    group.sample_size(50);
    group.bench_function("tools_call_echo/64_in_flight", |b| {
        b.iter_custom(|iters| {
            runtime.block_on(async {
                let mut elapsed = Duration::ZERO;
                for _ in 0..iters {
                    let start = Instant::now();
                    client.writer.write_all(&batch).await.expect("write");
                    for _ in 0..BATCH {
                        client.read_response().await;
                    }
                    elapsed += start.elapsed();
                }
                elapsed
            })
        })
    });
    group.finish();
}

criterion_group!(benches, bench_stdio);
criterion_main!(benches);
