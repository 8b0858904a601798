//! `mcpkit bench TOOL`: latency percentiles and throughput of one tool of any server, at a given
//! concurrency, over the one connection a client command opens (stdio or HTTP, either era).
//!
//! A warm-up phase runs first and is not counted. Then `--concurrency` workers keep that many
//! calls in flight until `--requests` are answered (or `--duration` has passed). Tool errors
//! (`isError: true`) and failures (JSON-RPC errors, lost connections, timeouts) are counted
//! apart; the latency of every answered call counts, the failed ones' do not.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::anyhow;
use mcp_client::{Client, ClientError, RequestOptions};
use mcp_types::CallToolRequestParams;
use serde_json::{Value, json};

use crate::status::{Status, tag};

/// How much load.
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct LoadArgs {
    /// Calls to measure (after the warm-up).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    pub(crate) requests: u64,
    /// Calls kept in flight at once.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub(crate) concurrency: u64,
    /// Calls made first and not measured [default: a tenth of --requests, at most 1000].
    #[arg(long, value_name = "N")]
    pub(crate) warmup: Option<u64>,
    /// Stop measuring after this many seconds, even before --requests are answered.
    #[arg(long, value_name = "SECS")]
    pub(crate) duration: Option<f64>,
}

/// What one phase counted.
#[derive(Default)]
struct Counts {
    /// Latencies of answered calls, in nanoseconds.
    latencies: Vec<u64>,
    tool_errors: u64,
    failures: u64,
    first_failure: Option<ClientError>,
}

/// Runs the warm-up and the measured phase; prints the report (JSON, or a table).
pub(crate) async fn run(
    client: &Client,
    params: CallToolRequestParams,
    load: &LoadArgs,
    json_out: bool,
) -> anyhow::Result<std::process::ExitCode> {
    let warmup = load.warmup.unwrap_or((load.requests / 10).min(1000));
    let params = Arc::new(params);
    if warmup > 0 {
        let counts = phase(client, &params, warmup, load.concurrency, None).await;
        if let (0, Some(error)) = (counts.latencies.len(), counts.first_failure) {
            // Not one call answered: nothing to measure.
            return Err(anyhow::Error::new(error).context("every warm-up call failed"));
        }
    }
    let deadline = match load.duration {
        Some(secs) if secs.is_finite() && secs > 0.0 => Some(Duration::from_secs_f64(secs)),
        Some(_) => {
            return Err(tag(Status::Usage, anyhow!("--duration must be a positive number of seconds")));
        }
        None => None,
    };
    let started = Instant::now();
    let mut counts = phase(client, &params, load.requests, load.concurrency, deadline).await;
    let elapsed = started.elapsed();
    counts.latencies.sort_unstable();
    let report = report(&params.name, load.concurrency, elapsed, &counts);
    if json_out {
        crate::output::write(&format!("{report}\n"))?;
    } else {
        crate::output::write(&table(&report))?;
    }
    if let Some(error) = counts.first_failure {
        eprintln!("mcpkit: {} calls failed; the first: {error}", counts.failures);
        return Ok(crate::status::of(&anyhow::Error::new(error)).exit_code());
    }
    Ok(if counts.tool_errors > 0 { Status::ToolError.exit_code() } else { std::process::ExitCode::SUCCESS })
}

/// `total` calls, `concurrency` at a time, stopping early after `limit`.
async fn phase(
    client: &Client,
    params: &Arc<CallToolRequestParams>,
    total: u64,
    concurrency: u64,
    limit: Option<Duration>,
) -> Counts {
    let tickets = Arc::new(AtomicU64::new(0));
    let stop = limit.map(|l| Instant::now() + l);
    let workers: Vec<_> = (0..concurrency.min(total))
        .map(|_| {
            let (client, params, tickets) = (client.clone(), params.clone(), tickets.clone());
            tokio::spawn(async move {
                let mut counts = Counts::default();
                let options = RequestOptions::default();
                while tickets.fetch_add(1, Ordering::Relaxed) < total {
                    if stop.is_some_and(|s| Instant::now() >= s) {
                        break;
                    }
                    let sent = Instant::now();
                    match client.call_tool_with(&params, &options).await {
                        Ok(result) => {
                            let nanos = u64::try_from(sent.elapsed().as_nanos()).unwrap_or(u64::MAX);
                            counts.latencies.push(nanos);
                            if result.is_error == Some(true) {
                                counts.tool_errors += 1;
                            }
                        }
                        Err(e) => {
                            counts.failures += 1;
                            let lost = matches!(e, ClientError::Transport { .. } | ClientError::Closed);
                            counts.first_failure.get_or_insert(e);
                            if lost {
                                // The connection is gone: every further call would fail alike.
                                break;
                            }
                        }
                    }
                }
                counts
            })
        })
        .collect();
    let mut all = Counts::default();
    for worker in workers {
        if let Ok(counts) = worker.await {
            all.latencies.extend(counts.latencies);
            all.tool_errors += counts.tool_errors;
            all.failures += counts.failures;
            if all.first_failure.is_none() {
                all.first_failure = counts.first_failure;
            }
        }
    }
    all
}

/// The `q` quantile (0..=1) of sorted `latencies`, in milliseconds (nearest rank).
fn quantile(latencies: &[u64], q: f64) -> f64 {
    if latencies.is_empty() {
        return 0.0;
    }
    let rank = ((q * latencies.len() as f64).ceil() as usize).clamp(1, latencies.len());
    latencies[rank - 1] as f64 / 1e6
}

fn report(tool: &str, concurrency: u64, elapsed: Duration, counts: &Counts) -> Value {
    let answered = counts.latencies.len() as u64;
    let secs = elapsed.as_secs_f64().max(1e-9);
    let l = &counts.latencies;
    let mean =
        if l.is_empty() { 0.0 } else { l.iter().map(|&n| n as f64).sum::<f64>() / l.len() as f64 / 1e6 };
    json!({
        "tool": tool,
        "concurrency": concurrency,
        "calls": answered + counts.failures,
        "answered": answered,
        "toolErrors": counts.tool_errors,
        "failures": counts.failures,
        "seconds": round(secs, 3),
        "callsPerSecond": round(answered as f64 / secs, 1),
        "latencyMs": {
            "mean": round(mean, 3),
            "p50": round(quantile(l, 0.50), 3),
            "p90": round(quantile(l, 0.90), 3),
            "p99": round(quantile(l, 0.99), 3),
            "max": round(quantile(l, 1.0), 3),
        },
    })
}

fn round(x: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (x * scale).round() / scale
}

/// The report as aligned lines.
fn table(report: &Value) -> String {
    let n = |key: &str| report[key].as_u64().unwrap_or(0);
    let ms = |key: &str| report["latencyMs"][key].as_f64().unwrap_or(0.0);
    format!(
        "tool        {}\ncalls       {} answered in {:.2} s, {} at a time; {} tool errors, {} failed\nthroughput  {:.1} calls/s\nlatency     p50 {:.3} ms  p90 {:.3} ms  p99 {:.3} ms  max {:.3} ms  (mean {:.3} ms)\n",
        report["tool"].as_str().unwrap_or_default(),
        n("answered"),
        report["seconds"].as_f64().unwrap_or(0.0),
        n("concurrency"),
        n("toolErrors"),
        n("failures"),
        report["callsPerSecond"].as_f64().unwrap_or(0.0),
        ms("p50"),
        ms("p90"),
        ms("p99"),
        ms("max"),
        ms("mean"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_nearest_rank() {
        let l: Vec<u64> = (1..=100).map(|ms| ms * 1_000_000).collect();
        assert_eq!(quantile(&l, 0.5), 50.0);
        assert_eq!(quantile(&l, 0.99), 99.0);
        assert_eq!(quantile(&l, 1.0), 100.0);
        assert_eq!(quantile(&[7_000_000], 0.5), 7.0);
        assert_eq!(quantile(&[], 0.5), 0.0);
    }

    #[test]
    fn the_report_keeps_errors_apart() {
        let counts = Counts {
            latencies: vec![1_000_000, 2_000_000, 3_000_000],
            tool_errors: 1,
            failures: 2,
            first_failure: None,
        };
        let r = report("echo", 4, Duration::from_secs(2), &counts);
        assert_eq!((r["calls"].as_u64(), r["answered"].as_u64()), (Some(5), Some(3)));
        assert_eq!((r["toolErrors"].as_u64(), r["failures"].as_u64()), (Some(1), Some(2)));
        assert_eq!(r["callsPerSecond"], 1.5);
        assert_eq!(r["latencyMs"]["p50"], 2.0);
        assert!(
            table(&r).contains("3 answered in 2.00 s, 4 at a time; 1 tool errors, 2 failed"),
            "{}",
            table(&r)
        );
    }
}
