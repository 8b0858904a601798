//! `mcp-soak`: a soak benchmark of mcpkit's servers. Many clients make many `tools/call echo`
//! calls over stdio and Streamable HTTP, in both eras, with ids that collide, some calls
//! cancelled and some connections dropped in the middle of an answer; every answer is checked
//! against the call that asked for it. It passes when no answer is cross-wired, lost or failed,
//! and the servers' resident memory at the end is within 10 % of what it was after warm-up.
//!
//! ```text
//! mcp-soak --server target/release/mcpkit --calls 1000000 --clients 64
//! mcp-soak --server target/release/mcpkit --calls 100000 --legs http-legacy
//! ```
//!
//! A benchmark, run by hand (figures in docs/PERFORMANCE.md), never a timed test.

mod expect;
mod http;
mod stdio;

use std::process::{ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use clap::Parser;
use tokio::io::{AsyncBufReadExt, BufReader};

use expect::Tally;

#[derive(Parser, Debug)]
#[command(name = "mcp-soak", about = "Soak-test mcpkit's servers over stdio and HTTP, both eras")]
struct Cli {
    /// The mcpkit binary whose `serve --stdio` and `serve --http` are soaked.
    #[arg(long)]
    server: String,
    /// Calls in total, shared equally by the legs.
    #[arg(long, default_value_t = 1_000_000)]
    calls: u64,
    /// Clients per leg (stdio: one server process each; HTTP: one connection each).
    #[arg(long, default_value_t = 64)]
    clients: usize,
    /// Calls in flight per stdio client (at most 8: the ids it reuses).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u64).range(1..=8))]
    depth: u64,
    /// Length of each echoed text, in bytes.
    #[arg(long, default_value_t = 100)]
    text_bytes: usize,
    /// Every N-th call of a disconnecting client asks for a large answer and drops the
    /// connection in its middle (0: never), the first at half of it. On stdio only every
    /// eighth client disconnects.
    #[arg(long, default_value_t = 2000)]
    disconnect_every: u64,
    /// Size of that large answer, in bytes.
    #[arg(long, default_value_t = 1 << 20)]
    disconnect_bytes: usize,
    /// The legs to run, in order.
    #[arg(long, value_delimiter = ',', default_value = "stdio-modern,stdio-legacy,http-modern,http-legacy")]
    legs: Vec<Leg>,
    /// Share of each client's calls made before the warm-up RSS is taken, in percent. The
    /// first large answer dropped mid-way comes at half of `--disconnect-every`, so that by
    /// default every kind of traffic has been seen once before the warm-up figure is taken.
    #[arg(long, default_value_t = 30)]
    warmup_percent: u64,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum, PartialEq, Eq)]
enum Leg {
    StdioModern,
    StdioLegacy,
    HttpModern,
    HttpLegacy,
}

/// What every client of a leg does.
#[derive(Debug)]
pub(crate) struct Plan {
    pub(crate) program: Arc<str>,
    /// Calls per client.
    pub(crate) calls: u64,
    pub(crate) depth: usize,
    pub(crate) text_bytes: usize,
    pub(crate) modern: bool,
    pub(crate) disconnect_every: u64,
    pub(crate) disconnect_bytes: usize,
}

/// Resident memory of `pid`, in KiB.
fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn rss_sum(pids: &[u32]) -> u64 {
    pids.iter().filter_map(|&pid| rss_kib(pid)).sum()
}

struct Outcome {
    tally: Tally,
    warm_kib: u64,
    end_kib: u64,
    /// The server's resident memory after each tenth of the calls (HTTP legs), to show where
    /// it levels off.
    tenths_kib: Vec<u64>,
    elapsed: Duration,
    calls: u64,
}

impl Outcome {
    fn rss_ratio(&self) -> f64 {
        if self.warm_kib == 0 { f64::INFINITY } else { self.end_kib as f64 / self.warm_kib as f64 }
    }
}

/// Waits until `progress` reaches `target`, or every client has returned.
async fn wait_for(progress: &AtomicU64, target: u64, done: impl Fn() -> bool) {
    while progress.load(Ordering::Relaxed) < target && !done() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn run_stdio(cli: &Cli, plan: Arc<Plan>) -> Outcome {
    let progress = Arc::new(AtomicU64::new(0));
    let pids = Arc::new(std::sync::Mutex::new(Vec::new()));
    let finished = Arc::new(tokio::sync::Barrier::new(cli.clients + 1));
    let sampled = Arc::new(tokio::sync::Barrier::new(cli.clients + 1));
    let start = Instant::now();
    let tasks: Vec<_> = (0..cli.clients)
        .map(|index| {
            tokio::spawn(stdio::client(
                index,
                plan.clone(),
                progress.clone(),
                pids.clone(),
                finished.clone(),
                sampled.clone(),
            ))
        })
        .collect();
    let total = plan.calls * cli.clients as u64;
    wait_for(&progress, total * cli.warmup_percent / 100, || tasks.iter().all(|t| t.is_finished())).await;
    let warm_kib = rss_sum(&pids.lock().unwrap());
    finished.wait().await;
    let elapsed = start.elapsed();
    let end_kib = rss_sum(&pids.lock().unwrap());
    sampled.wait().await;
    let mut tally = Tally::default();
    for task in tasks {
        tally.add(&task.await.unwrap_or_default());
    }
    Outcome { tally, warm_kib, end_kib, tenths_kib: Vec::new(), elapsed, calls: total }
}

/// Reads the resident memory of `pid` each time another tenth of `total` calls has started,
/// until the ninth (the end is read by the caller).
fn sample_tenths(pid: u32, progress: Arc<AtomicU64>, total: u64) -> tokio::task::JoinHandle<Vec<u64>> {
    tokio::spawn(async move {
        let mut tenths = Vec::new();
        for tenth in 1..10 {
            while progress.load(Ordering::Relaxed) < total * tenth / 10 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            tenths.push(rss_kib(pid).unwrap_or(0));
        }
        tenths
    })
}

async fn run_http(cli: &Cli, plan: Arc<Plan>) -> Result<Outcome, String> {
    let mut child = tokio::process::Command::new(&*plan.program)
        .args(["serve", "--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", plan.program))?;
    let pid = child.id().ok_or("the server exited at once")?;
    let mut stderr = BufReader::new(child.stderr.take().expect("piped")).lines();
    let url = loop {
        let line = tokio::time::timeout(Duration::from_secs(10), stderr.next_line())
            .await
            .map_err(|_| "the server did not say where it listens within 10 s".to_owned())?
            .map_err(|e| format!("reading the server's stderr: {e}"))?
            .ok_or("the server exited before listening")?;
        if let Some(url) = line.strip_prefix("listening on ") {
            break url.to_owned();
        }
    };
    tokio::spawn(async move { while let Ok(Some(_)) = stderr.next_line().await {} });
    let addr: std::net::SocketAddr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .parse()
        .map_err(|e| format!("bad address in `{url}`: {e}"))?;
    let progress = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let tasks: Vec<_> = (0..cli.clients)
        .map(|index| tokio::spawn(http::client(index, addr, plan.clone(), progress.clone())))
        .collect();
    let total = plan.calls * cli.clients as u64;
    let sampler = sample_tenths(pid, progress.clone(), total);
    wait_for(&progress, total * cli.warmup_percent / 100, || tasks.iter().all(|t| t.is_finished())).await;
    let warm_kib = rss_kib(pid).unwrap_or(0);
    let mut tally = Tally::default();
    for task in tasks {
        tally.add(&task.await.unwrap_or_default());
    }
    let elapsed = start.elapsed();
    let end_kib = rss_kib(pid).unwrap_or(0);
    // A client that gave up early leaves tenths unreached: those are not read.
    sampler.abort();
    let tenths_kib = sampler.await.unwrap_or_default();
    let _ = child.kill().await;
    Ok(Outcome { tally, warm_kib, end_kib, tenths_kib, elapsed, calls: total })
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("mcp-soak: cannot start the runtime: {e}");
            return ExitCode::from(2);
        }
    };
    runtime.block_on(async {
        let per_leg = cli.calls / cli.legs.len().max(1) as u64;
        let per_client = (per_leg / cli.clients.max(1) as u64).max(1);
        let mut clean = true;
        for &leg in &cli.legs {
            let plan = Arc::new(Plan {
                program: Arc::from(cli.server.as_str()),
                calls: per_client,
                depth: cli.depth as usize,
                text_bytes: cli.text_bytes,
                modern: matches!(leg, Leg::StdioModern | Leg::HttpModern),
                disconnect_every: cli.disconnect_every,
                disconnect_bytes: cli.disconnect_bytes,
            });
            let outcome = match leg {
                Leg::StdioModern | Leg::StdioLegacy => Ok(run_stdio(&cli, plan).await),
                Leg::HttpModern | Leg::HttpLegacy => run_http(&cli, plan).await,
            };
            let outcome = match outcome {
                Ok(o) => o,
                Err(e) => {
                    println!("{leg:?}: could not run: {e}");
                    clean = false;
                    continue;
                }
            };
            let ratio = outcome.rss_ratio();
            let pass = outcome.tally.clean() && ratio <= 1.10;
            clean &= pass;
            println!(
                "{leg:?}: {} calls by {} clients in {:.1} s ({:.0} calls/s) · {} · server RSS {} KiB after warm-up, {} KiB at the end ({:+.1} %) · {}",
                outcome.calls,
                cli.clients,
                outcome.elapsed.as_secs_f64(),
                outcome.calls as f64 / outcome.elapsed.as_secs_f64(),
                outcome.tally,
                outcome.warm_kib,
                outcome.end_kib,
                (ratio - 1.0) * 100.0,
                if pass { "PASS" } else { "FAIL" }
            );
            if !outcome.tenths_kib.is_empty() {
                let tenths: Vec<String> =
                    outcome.tenths_kib.iter().map(|kib| format!("{:.1}", *kib as f64 / 1024.0)).collect();
                println!("  server RSS after each tenth of the calls (MiB): {}", tenths.join(", "));
            }
            for problem in &outcome.tally.problems {
                println!("  {problem}");
            }
        }
        if clean { ExitCode::SUCCESS } else { ExitCode::FAILURE }
    })
}
