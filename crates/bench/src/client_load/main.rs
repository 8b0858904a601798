//! `mcp-client-load`: the throughput of `mcp-client` itself, calling a stdio server with many
//! calls in flight — the same work `mcp-load` generates with hand-written JSON lines, done
//! through the client's typed API (`Client::call_tool`: `_meta`, ids, the wire, decoding).
//! Run both against the same server to see what the client costs:
//!
//! ```text
//! mcp-load        --requests 100000 --concurrency 64 --text-bytes 100 -- target/release/mcpkit serve --stdio
//! mcp-client-load --requests 100000 --concurrency 64 --text-bytes 100 -- target/release/mcpkit serve --stdio
//! ```
//!
//! It connects with a pinned version (2026-07-28, or 2025-11-25 with `--legacy`: era
//! detection is not measured), warms up, then keeps `--concurrency` `tools/call echo` calls in
//! flight until `--requests` are answered, checks every answer, and prints requests per second
//! and latency percentiles. Like `mcp-load` it runs on one current-thread runtime unless
//! `--threads` says otherwise.

#[path = "../common.rs"]
mod common;

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use clap::Parser;
use common::{Latency, Workload};
use mcp_client::transport::stdio::StdioCommand;
use mcp_client::{Client, ClientBuilder, EraCache};
use mcp_types::ProtocolVersion;
use serde::Serialize;
use serde_json::json;

#[derive(Parser, Debug)]
#[command(
    name = "mcp-client-load",
    about = "Load a stdio MCP server with tools/call echo through mcp-client",
    after_help = "Example:\n  mcp-client-load --requests 100000 --concurrency 64 -- target/release/mcpkit serve --stdio"
)]
struct Cli {
    #[command(flatten)]
    workload: Workload,
    /// Calls kept in flight at once.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..))]
    concurrency: u32,
    /// Worker threads of the runtime; 1 is a current-thread runtime, as `mcp-load` uses.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    threads: u32,
    /// The server command and its arguments.
    #[arg(last = true, required = true, value_name = "SERVER COMMAND")]
    command: Vec<String>,
}

#[derive(Serialize)]
struct Report {
    server: String,
    mode: &'static str,
    requests: u64,
    concurrency: u32,
    warmup: u64,
    text_bytes: usize,
    elapsed_s: f64,
    requests_per_s: f64,
    latency_us: Latency,
}

/// One phase: `total` calls, `concurrency` at a time; the latency of each, in µs.
async fn phase(client: &Client, total: u64, concurrency: u32, text: &Arc<str>) -> Result<Vec<u64>, String> {
    let next = Arc::new(AtomicU64::new(0));
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..concurrency {
        let (client, next, text) = (client.clone(), next.clone(), text.clone());
        workers.spawn(async move {
            let mut latencies = Vec::new();
            while next.fetch_add(1, Ordering::Relaxed) < total {
                let started = Instant::now();
                let result =
                    client.call_tool("echo", json!({"text": &*text})).await.map_err(|e| e.to_string())?;
                let echoed = result.content.first().and_then(|b| b.as_text());
                if echoed != Some(&*text) {
                    return Err(format!("a wrong answer: {result:?}"));
                }
                latencies.push(started.elapsed().as_micros() as u64);
            }
            Ok::<_, String>(latencies)
        });
    }
    let mut all = Vec::with_capacity(total as usize);
    while let Some(done) = workers.join_next().await {
        all.extend(done.map_err(|e| e.to_string())??);
    }
    Ok(all)
}

async fn run(cli: &Cli) -> Result<Report, String> {
    let (program, args) = cli.command.split_first().ok_or("no server command")?;
    let version =
        if cli.workload.legacy { ProtocolVersion::V2025_11_25 } else { ProtocolVersion::V2026_07_28 };
    let client = ClientBuilder::new("mcp-client-load", env!("CARGO_PKG_VERSION"))
        .pin_version(version)
        .discover_on_connect(false)
        .era_cache(EraCache::new())
        .connect_stdio(StdioCommand::new(program).args(args))
        .await
        .map_err(|e| format!("connecting: {e}"))?;
    let text: Arc<str> = "x".repeat(cli.workload.text_bytes).into();
    phase(&client, cli.workload.warmup, cli.concurrency, &text).await?;
    let started = Instant::now();
    let mut latencies = phase(&client, cli.workload.requests, cli.concurrency, &text).await?;
    let elapsed = started.elapsed().as_secs_f64();
    client.close().await;
    Ok(Report {
        server: cli.command.join(" "),
        mode: if cli.workload.legacy { "legacy" } else { "modern" },
        requests: latencies.len() as u64,
        concurrency: cli.concurrency,
        warmup: cli.workload.warmup,
        text_bytes: cli.workload.text_bytes,
        elapsed_s: elapsed,
        requests_per_s: if elapsed > 0.0 { latencies.len() as f64 / elapsed } else { 0.0 },
        latency_us: Latency::of(&mut latencies),
    })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = if cli.threads == 1 {
        tokio::runtime::Builder::new_current_thread().enable_all().build()
    } else {
        tokio::runtime::Builder::new_multi_thread().worker_threads(cli.threads as usize).enable_all().build()
    };
    let runtime = match runtime {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("mcp-client-load: {e}");
            return ExitCode::from(2);
        }
    };
    let limit = Duration::from_secs(cli.workload.timeout);
    match runtime.block_on(async { tokio::time::timeout(limit, run(&cli)).await }) {
        Ok(Ok(report)) if cli.workload.json => {
            println!("{}", serde_json::to_string(&report).unwrap_or_default());
            ExitCode::SUCCESS
        }
        Ok(Ok(r)) => {
            println!(
                "{} {} calls, {} in flight, {} B text: {:.0} req/s; latency p50 {} µs, p90 {} µs, p99 {} µs, max {} µs",
                r.mode,
                r.requests,
                r.concurrency,
                r.text_bytes,
                r.requests_per_s,
                r.latency_us.p50,
                r.latency_us.p90,
                r.latency_us.p99,
                r.latency_us.max
            );
            ExitCode::SUCCESS
        }
        Ok(Err(e)) => {
            eprintln!("mcp-client-load: {e}");
            ExitCode::FAILURE
        }
        Err(_) => {
            eprintln!("mcp-client-load: gave up after {} s", cli.workload.timeout);
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workload_is_given_as_to_mcp_load() {
        let args = ["mcp-client-load", "--requests", "5", "--warmup", "2", "--text-bytes", "100"];
        let more = ["--legacy", "--json", "--timeout", "9", "--concurrency", "8", "--", "srv", "--stdio"];
        let cli = Cli::try_parse_from(args.into_iter().chain(more)).unwrap();
        let w = &cli.workload;
        assert_eq!(
            (w.requests, w.warmup, w.text_bytes, w.legacy, w.json, w.timeout),
            (5, 2, 100, true, true, 9)
        );
        assert_eq!(
            (cli.concurrency, cli.command.as_slice()),
            (8, ["srv", "--stdio"].map(String::from).as_slice())
        );
        assert!(Cli::try_parse_from(["mcp-client-load", "--requests", "5"]).is_err(), "a server is required");
    }
}
