//! What the metrics observer costs a request on the serving threads: one request started and
//! finished (in flight up and down, its histogram series) and its bytes, as mcp-server and
//! mcp-http tell them — from one thread, and from every core at once, as a multi-threaded
//! runtime serves (the counts every request adds to are where threads would meet).
//!
//! Run with `cargo bench -p mcp-metrics --bench counting`.

use std::sync::Barrier;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_metrics::Metrics;
use mcp_server::Observer;
use mcp_server::observe::{Observed, Outcome};
use mcp_types::RequestId;

/// One request's observation, as the server and the transport make it.
fn request(metrics: &Metrics, id: &RequestId) {
    metrics.started("tools/call");
    let mut observed = Observed::new(id, "tools/call", Outcome::Success, Duration::from_micros(40));
    observed.name = Some("echo");
    metrics.finished(&observed);
    metrics.bytes(180, 120);
}

fn counting(c: &mut Criterion) {
    let metrics = Metrics::new("tcp");
    let id = RequestId::Number(1);
    let mut group = c.benchmark_group("metrics_request");
    group.bench_function("one_thread", |b| b.iter(|| request(&metrics, &id)));
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).max(2);
    // Each of `threads` threads counts `iters` requests at once; the time is the slowest's
    // over `iters`: a request's cost while every other core counts too.
    group.bench_function(format!("{threads}_threads_at_once"), |b| {
        b.iter_custom(|iters| {
            let start = Barrier::new(threads);
            std::thread::scope(|s| {
                let each: Vec<_> = (0..threads)
                    .map(|_| {
                        s.spawn(|| {
                            start.wait();
                            let t = Instant::now();
                            for _ in 0..iters {
                                request(&metrics, &id);
                            }
                            t.elapsed()
                        })
                    })
                    .collect();
                each.into_iter().map(|h| h.join().unwrap()).max().unwrap()
            })
        })
    });
    group.finish();
}

criterion_group!(benches, counting);
criterion_main!(benches);
