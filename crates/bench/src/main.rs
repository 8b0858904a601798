//! `mcp-load`: a load generator for any MCP server, on stdio or over Streamable HTTP.
//!
//! On stdio it starts the server, optionally performs the legacy `initialize` handshake
//! (otherwise every request carries the 2026-07-28 `_meta`), keeps `--concurrency`
//! `tools/call echo` requests in flight until `--requests` are answered, checks every answer,
//! and prints throughput and latency percentiles. Speed is measured here, never by timed tests.
//!
//! With `--url` it sends `tools/call echo` POSTs over `--connections` keep-alive HTTP/1.1
//! connections, one request at a time on each — 2026-07-28 requests, or with `--legacy` the
//! requests of one 2025-11-25 session it opens first — to a server already listening there,
//! or, given a server command too, to one it starts and waits for.
//!
//! For a server it started (both transports) it also reports the server's start-up time to
//! the first answer, its CPU time per request over the measured phase, and its idle and
//! peak resident memory, read from `/proc` (see `server.rs`).
//!
//! ```text
//! mcp-load --requests 20000 --concurrency 64 -- target/release/mcpkit serve --stdio
//! mcp-load --url http://127.0.0.1:8080/mcp --connections 16 --requests 50000
//! mcp-load --url http://127.0.0.1:18080/mcp --connections 16 -- mcpkit serve --http 18080
//! ```

mod common;
mod http;
mod http_run;
mod load;
mod server;
mod stdio;

use std::process::ExitCode;

use clap::Parser;
use serde::Serialize;

pub(crate) use common::Latency;
use common::Workload;
use server::Figures;

#[derive(Parser, Debug)]
#[command(
    name = "mcp-load",
    about = "Load-test an MCP server (stdio or HTTP) with tools/call echo requests",
    after_help = "Examples:\n  mcp-load --requests 20000 --concurrency 64 -- target/release/mcpkit serve --stdio\n  \
                  mcp-load --url http://127.0.0.1:8080/mcp --connections 16 --requests 50000\n  \
                  mcp-load --url http://127.0.0.1:18080/mcp --connections 16 -- mcpkit serve --http 18080"
)]
pub(crate) struct Cli {
    #[command(flatten)]
    workload: Workload,
    /// Requests kept in flight at once (stdio).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    concurrency: u32,
    /// Load the `http://` MCP endpoint: a server already listening there, or, with a server
    /// command, one started here that will listen there.
    #[arg(long, value_name = "URL", conflicts_with = "concurrency")]
    url: Option<String>,
    /// Keep-alive HTTP/1.1 connections, each with one request at a time (with `--url`) [default: 1].
    #[arg(long, requires = "url", value_parser = clap::value_parser!(u32).range(1..))]
    connections: Option<u32>,
    /// Send at this many requests a second in all (open loop, with `--url`): request n is due
    /// n / RATE seconds after the phase starts, sent then by the first free connection (a
    /// pacing thread that sleeps in between wakes it, within microseconds), and its latency counted from when
    /// it was due (time spent waiting for a free connection counts).
    /// Without it each connection sends its next request as soon as the last is answered.
    #[arg(long, requires = "url", value_name = "RATE", value_parser = positive_rate)]
    rate: Option<f64>,
    /// Wait this many milliseconds after starting the server, then read its idle memory
    /// before sending the first request (no start-up time is then reported).
    #[arg(long, value_name = "MS", default_value_t = 0)]
    idle_wait: u64,
    /// Discard the server's stderr instead of passing it through.
    #[arg(long)]
    quiet_server: bool,
    /// The server command and its arguments (stdio; with `--url`, a server to start there).
    #[arg(last = true, required_unless_present = "url", value_name = "SERVER COMMAND")]
    command: Vec<String>,
}

fn positive_rate(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(rate) if rate.is_finite() && rate > 0.0 => Ok(rate),
        _ => Err(format!("{text:?} is not a positive number of requests a second")),
    }
}

#[derive(Serialize, Debug)]
pub(crate) struct Report {
    server: String,
    transport: &'static str,
    mode: &'static str,
    requests: u64,
    concurrency: u32,
    /// Requests a second asked for (`--rate`), when they were sent at a rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    rate: Option<f64>,
    warmup: u64,
    text_bytes: usize,
    elapsed_s: f64,
    requests_per_s: f64,
    latency_us: Latency,
    errors: u64,
    first_error: Option<String>,
    /// Only when the server was started here.
    #[serde(flatten)]
    figures: Figures,
    /// Only when the server was started here.
    #[serde(skip_serializing_if = "Option::is_none")]
    server_exit: Option<String>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("mcp-load: {e}");
            return ExitCode::from(2);
        }
    };
    let result = match &cli.url {
        Some(url) => runtime.block_on(http_run::run(&cli, url)),
        None => runtime.block_on(stdio::run(&cli)),
    };
    match result {
        Ok(report) => {
            if cli.workload.json {
                println!("{}", serde_json::to_string(&report).unwrap_or_default());
            } else {
                print_human(&report);
            }
            if report.errors == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE }
        }
        Err(e) => {
            eprintln!("mcp-load: {e}");
            ExitCode::from(2)
        }
    }
}

fn print_human(r: &Report) {
    let mode = match (r.transport, r.mode) {
        ("http", "legacy") => "legacy (one initialize session, Mcp-Session-Id) over HTTP/1.1 keep-alive",
        ("http", _) => "modern (2026-07-28 _meta and Mcp-* headers) over HTTP/1.1 keep-alive",
        (_, "legacy") => "legacy (initialize session)",
        _ => "modern (2026-07-28 _meta)",
    };
    let parallel = if r.transport == "http" { "connections" } else { "concurrency" };
    println!("mcp-load: {}", r.server);
    println!("  mode          {mode}, text {} bytes", r.text_bytes);
    println!("  requests      {} (+{} warm-up), {parallel} {}", r.requests, r.warmup, r.concurrency);
    println!("  elapsed       {:.3} s", r.elapsed_s);
    println!("  throughput    {:.0} req/s", r.requests_per_s);
    let l = &r.latency_us;
    println!("  latency (µs)  p50 {}  p90 {}  p99 {}  max {}", l.p50, l.p90, l.p99, l.max);
    println!("  errors        {}", r.errors);
    if let Some(e) = &r.first_error {
        println!("  first error   {e}");
    }
    let f = &r.figures;
    if let Some(ms) = f.startup_ms {
        println!("  start-up      {ms:.2} ms to the first answer");
    }
    if let Some(us) = f.server_cpu_us_per_request {
        println!("  server CPU    {us:.2} µs per request ({:.3} s)", f.server_cpu_s.unwrap_or_default());
    }
    let mib = |kib: Option<u64>| kib.map_or("?".to_owned(), |k| format!("{:.1} MiB", k as f64 / 1024.0));
    if f.first_answer_rss_kib.is_some() || f.peak_rss_kib.is_some() {
        let idle = f
            .idle_rss_kib
            .map(|_| {
                let (anon, file) = (mib(f.idle_rss_anon_kib), mib(f.idle_rss_file_kib));
                format!("idle {} (anonymous {anon}, files {file}), ", mib(f.idle_rss_kib))
            })
            .unwrap_or_default();
        let first = mib(f.first_answer_rss_kib);
        println!("  server RSS    {idle}after the first answer {first}, peak {}", mib(f.peak_rss_kib));
    }
    if let Some(exit) = &r.server_exit {
        println!("  server exit   {exit}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_command_follows_the_double_dash() {
        let cli = Cli::try_parse_from(["mcp-load", "--concurrency", "8", "--", "srv", "--stdio"]).unwrap();
        assert_eq!(
            (cli.concurrency, cli.command.as_slice()),
            (8, ["srv", "--stdio"].map(String::from).as_slice())
        );
        assert!(Cli::try_parse_from(["mcp-load", "--concurrency", "0", "--", "srv"]).is_err());
        assert!(Cli::try_parse_from(["mcp-load"]).is_err());
    }

    #[test]
    fn a_rate_needs_a_url_and_a_positive_number() {
        let cli =
            Cli::try_parse_from(["mcp-load", "--url", "http://127.0.0.1:9/mcp", "--rate", "5000"]).unwrap();
        assert_eq!(cli.rate, Some(5000.0));
        assert!(Cli::try_parse_from(["mcp-load", "--rate", "5000", "--", "srv"]).is_err());
        for bad in ["0", "-1", "x", "inf"] {
            assert!(
                Cli::try_parse_from(["mcp-load", "--url", "http://127.0.0.1:9/mcp", "--rate", bad]).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn http_mode_takes_a_url_and_connections() {
        let args = ["mcp-load", "--url", "http://127.0.0.1:9/mcp", "--connections", "16", "--requests", "5"];
        let cli = Cli::try_parse_from(args).unwrap();
        assert_eq!(
            (cli.url.as_deref(), cli.connections, cli.workload.requests, cli.command.len()),
            (Some("http://127.0.0.1:9/mcp"), Some(16), 5, 0)
        );
        let default = Cli::try_parse_from(["mcp-load", "--url", "http://h/mcp", "--json"]).unwrap();
        assert_eq!((default.connections, default.workload.json), (None, true));
    }

    #[test]
    fn http_mode_can_start_its_server() {
        let args = ["mcp-load", "--url", "http://127.0.0.1:9/mcp", "--connections", "2", "--", "srv", "9"];
        let cli = Cli::try_parse_from(args).unwrap();
        assert_eq!(
            (cli.connections, cli.command.as_slice()),
            (Some(2), ["srv", "9"].map(String::from).as_slice())
        );
    }

    #[test]
    fn http_mode_refuses_stdio_options() {
        let with = |extra: &[&str]| {
            let mut args = vec!["mcp-load", "--url", "http://127.0.0.1:9/mcp"];
            args.extend_from_slice(extra);
            Cli::try_parse_from(args)
        };
        assert!(with(&["--connections", "0"]).is_err());
        assert!(with(&["--concurrency", "4"]).is_err());
        assert!(with(&["--legacy"]).is_ok(), "a legacy session over HTTP is a mode of its own");
        assert!(Cli::try_parse_from(["mcp-load", "--connections", "4", "--", "srv"]).is_err());
        assert!(Cli::try_parse_from(["mcp-load", "--connections", "4"]).is_err());
    }
}
