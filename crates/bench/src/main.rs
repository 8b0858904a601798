//! `mcp-load`: a load generator for any MCP server, on stdio or over Streamable HTTP.
//!
//! On stdio it starts the server, optionally performs the legacy `initialize` handshake
//! (otherwise every request carries the 2026-07-28 `_meta`), keeps `--concurrency`
//! `tools/call echo` requests in flight until `--requests` are answered, checks every answer,
//! and prints throughput and latency percentiles. Speed is measured here, never by timed tests.
//!
//! With `--url` it talks to a server that is already listening: 2026-07-28 `tools/call echo`
//! POSTs over `--connections` keep-alive HTTP/1.1 connections, one request at a time on each.
//!
//! ```text
//! mcp-load --requests 20000 --concurrency 64 -- target/release/mcpkit serve --stdio
//! mcp-load --url http://127.0.0.1:8080/mcp --connections 16 --requests 50000
//! ```

mod http;
mod load;

use std::process::{ExitCode, Stdio};
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use serde::Serialize;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::{Child, Command};
use tokio::time::Instant;

use load::{PhaseStats, Shape, run_phase};

/// How long the server may take to exit once its stdin is closed.
const EXIT_WAIT: Duration = Duration::from_secs(10);

#[derive(Parser, Debug)]
#[command(
    name = "mcp-load",
    about = "Load-test an MCP server (stdio or HTTP) with tools/call echo requests",
    after_help = "Examples:\n  mcp-load --requests 20000 --concurrency 64 -- target/release/mcpkit serve --stdio\n  \
                  mcp-load --url http://127.0.0.1:8080/mcp --connections 16 --requests 50000"
)]
struct Cli {
    /// Measured requests (after the warm-up).
    #[arg(long, default_value_t = 10_000)]
    requests: u64,
    /// Requests kept in flight at once (stdio).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    concurrency: u32,
    /// Load a server already listening at this `http://` MCP endpoint instead of starting one.
    #[arg(long, value_name = "URL", conflicts_with_all = ["command", "concurrency", "legacy", "quiet_server"])]
    url: Option<String>,
    /// Keep-alive HTTP/1.1 connections, each with one request at a time (with `--url`) [default: 1].
    #[arg(long, requires = "url", conflicts_with = "command", value_parser = clap::value_parser!(u32).range(1..))]
    connections: Option<u32>,
    /// Requests sent and checked before measuring.
    #[arg(long, default_value_t = 1_000)]
    warmup: u64,
    /// Length of the echoed text, in bytes.
    #[arg(long, default_value_t = 16)]
    text_bytes: usize,
    /// Open a legacy session with `initialize` instead of sending the 2026-07-28 `_meta` (stdio).
    #[arg(long)]
    legacy: bool,
    /// Print one JSON object instead of the human-readable summary.
    #[arg(long)]
    json: bool,
    /// Give up (and kill a server started here) after this many seconds in all.
    #[arg(long, default_value_t = 120)]
    timeout: u64,
    /// Discard the server's stderr instead of passing it through.
    #[arg(long)]
    quiet_server: bool,
    /// The server command and its arguments (stdio).
    #[arg(last = true, required_unless_present = "url", value_name = "SERVER COMMAND")]
    command: Vec<String>,
}

#[derive(Serialize, Debug)]
struct Report {
    server: String,
    transport: &'static str,
    mode: &'static str,
    requests: u64,
    concurrency: u32,
    warmup: u64,
    text_bytes: usize,
    elapsed_s: f64,
    requests_per_s: f64,
    latency_us: Latency,
    errors: u64,
    first_error: Option<String>,
    /// Only when the server was started here (stdio).
    #[serde(skip_serializing_if = "Option::is_none")]
    server_exit: Option<String>,
}

#[derive(Serialize, Debug, Default, PartialEq)]
struct Latency {
    p50: u64,
    p90: u64,
    p99: u64,
    max: u64,
}

impl Latency {
    /// Nearest-rank percentiles of `samples` (sorted here).
    fn of(samples: &mut [u64]) -> Latency {
        samples.sort_unstable();
        let rank = |p: usize| match samples.len() {
            0 => 0,
            n => samples[(n * p).div_ceil(100).clamp(1, n) - 1],
        };
        Latency { p50: rank(50), p90: rank(90), p99: rank(99), max: rank(100) }
    }
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
        Some(url) => runtime.block_on(run_http(&cli, url)),
        None => runtime.block_on(run(&cli)),
    };
    match result {
        Ok(report) => {
            if cli.json {
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

async fn run(cli: &Cli) -> Result<Report, String> {
    let deadline = Instant::now() + Duration::from_secs(cli.timeout);
    let server = cli.command.join(" ");
    let mut child = Command::new(&cli.command[0])
        .args(&cli.command[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(if cli.quiet_server { Stdio::null() } else { Stdio::inherit() })
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start `{server}`: {e}"))?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err("the server's stdio was not piped".to_owned());
    };
    let writer = BufWriter::with_capacity(1 << 16, stdin);
    let reader = BufReader::with_capacity(1 << 16, stdout);
    let shape = Shape { modern: !cli.legacy, text_bytes: cli.text_bytes };

    let load = tokio::time::timeout_at(deadline, drive(cli, shape, writer, reader)).await;
    let (warm, mut measured) = match load {
        Ok(Ok(phases)) => phases,
        Ok(Err(e)) => {
            let exit = stop(&mut child, deadline).await;
            return Err(format!("{e} (server: {exit})"));
        }
        Err(_) => {
            let _ = child.kill().await;
            return Err(format!("gave up after {} s and killed the server", cli.timeout));
        }
    };
    // `drive` dropped the server's stdin: wait for it to notice the end of input.
    let server_exit = stop(&mut child, deadline).await;

    let elapsed = measured.elapsed.as_secs_f64();
    Ok(Report {
        server,
        transport: "stdio",
        mode: if cli.legacy { "legacy" } else { "modern" },
        requests: measured.received,
        concurrency: cli.concurrency,
        warmup: warm.received,
        text_bytes: cli.text_bytes,
        elapsed_s: elapsed,
        requests_per_s: if elapsed > 0.0 { measured.received as f64 / elapsed } else { 0.0 },
        latency_us: Latency::of(&mut measured.latencies_us),
        errors: warm.errors + measured.errors,
        first_error: warm.first_error.or(measured.first_error),
        server_exit: Some(server_exit),
    })
}

/// HTTP mode: connect, warm up, then measure, against a server that is already listening.
async fn run_http(cli: &Cli, url: &str) -> Result<Report, String> {
    let target = Arc::new(http::Target::parse(url)?);
    let connections = cli.connections.unwrap_or(1);
    let shape = Shape { modern: true, text_bytes: cli.text_bytes };
    let load = async {
        let open = http::connect_all(&target, connections as usize).await?;
        let warm_ids = 1..1 + cli.warmup;
        let measured_ids = warm_ids.end..warm_ids.end + cli.requests;
        let warm = http::run_phase(open, target.clone(), shape, warm_ids).await;
        check_connections(&warm, "warm-up")?;
        let measured = http::run_phase(warm.connections, target.clone(), shape, measured_ids).await;
        check_connections(&measured, "measured run")?;
        Ok::<_, String>((warm.stats, measured.stats))
    };
    let deadline = Instant::now() + Duration::from_secs(cli.timeout);
    let (warm, mut measured) = tokio::time::timeout_at(deadline, load)
        .await
        .map_err(|_| format!("gave up after {} s", cli.timeout))??;
    let elapsed = measured.elapsed.as_secs_f64();
    Ok(Report {
        server: url.to_owned(),
        transport: "http",
        mode: "modern",
        requests: measured.received,
        concurrency: connections,
        warmup: warm.received,
        text_bytes: cli.text_bytes,
        elapsed_s: elapsed,
        requests_per_s: if elapsed > 0.0 { measured.received as f64 / elapsed } else { 0.0 },
        latency_us: Latency::of(&mut measured.latencies_us),
        errors: warm.errors + measured.errors,
        first_error: warm.first_error.or(measured.first_error),
        server_exit: None,
    })
}

/// A broken connection ends the run: the load would no longer be what was asked for.
fn check_connections(phase: &http::Phase, name: &str) -> Result<(), String> {
    let Some(broken) = &phase.broken else { return Ok(()) };
    let why = phase.stats.first_error.as_deref().map(|e| format!("; first error: {e}")).unwrap_or_default();
    Err(format!("{broken} after {} answers in the {name}{why}", phase.stats.received))
}

/// Handshake (when legacy), warm-up, then the measured phase; closes the server's stdin.
async fn drive<W, R>(
    cli: &Cli,
    shape: Shape,
    writer: W,
    reader: R,
) -> Result<(PhaseStats, PhaseStats), String>
where
    W: AsyncWrite + Unpin + Send + 'static,
    R: AsyncBufRead + Unpin + Send + 'static,
{
    let (mut writer, mut reader) = (writer, reader);
    if cli.legacy {
        initialize(&mut writer, &mut reader).await?;
    }
    let concurrency = cli.concurrency as usize;
    let io = |e: std::io::Error| format!("talking to the server: {e}");
    let warm_ids = 1..1 + cli.warmup;
    let measured_ids = warm_ids.end..warm_ids.end + cli.requests;
    let (writer, reader, warm) = run_phase(writer, reader, shape, warm_ids, concurrency).await.map_err(io)?;
    check_complete(&warm, cli.warmup, "warm-up")?;
    let (mut writer, _reader, measured) =
        run_phase(writer, reader, shape, measured_ids, concurrency).await.map_err(io)?;
    check_complete(&measured, cli.requests, "measured run")?;
    writer.shutdown().await.map_err(io)?;
    Ok((warm, measured))
}

fn check_complete(stats: &PhaseStats, expected: u64, phase: &str) -> Result<(), String> {
    if stats.eof {
        let why = stats.first_error.as_deref().map(|e| format!("; first error: {e}")).unwrap_or_default();
        return Err(format!(
            "the server closed its output after {} of {expected} answers in the {phase}{why}",
            stats.received
        ));
    }
    Ok(())
}

/// The legacy handshake: `initialize` (id 0), its answer, then `notifications/initialized`.
async fn initialize<W, R>(writer: &mut W, reader: &mut R) -> Result<(), String>
where
    W: AsyncWrite + Unpin,
    R: AsyncBufRead + Unpin,
{
    let request = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "mcp-load", "version": env!("CARGO_PKG_VERSION")}
        }
    });
    let io = |e: std::io::Error| format!("initialize: {e}");
    writer.write_all(format!("{request}\n").as_bytes()).await.map_err(io)?;
    writer.flush().await.map_err(io)?;
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).await.map_err(io)? == 0 {
            return Err("the server closed its output before answering initialize".to_owned());
        }
        let Ok(message) = serde_json::from_str::<serde_json::Value>(&line) else { continue };
        if message.get("method").is_some() || message["id"] != 0 {
            continue;
        }
        if message["result"]["protocolVersion"].is_string() {
            break;
        }
        return Err(format!("initialize failed: {}", line.trim_end()));
    }
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    writer.write_all(format!("{initialized}\n").as_bytes()).await.map_err(io)?;
    writer.flush().await.map_err(io)
}

/// Waits for the server to exit until `deadline` (at most [`EXIT_WAIT`]), then kills it.
async fn stop(child: &mut Child, deadline: Instant) -> String {
    let until = deadline.min(Instant::now() + EXIT_WAIT);
    match tokio::time::timeout_at(until, child.wait()).await {
        Ok(Ok(status)) => status.to_string(),
        Ok(Err(e)) => format!("wait failed: {e}"),
        Err(_) => {
            let _ = child.kill().await;
            "killed: it did not exit after its stdin closed".to_owned()
        }
    }
}

fn print_human(r: &Report) {
    let mode = match (r.transport, r.mode) {
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
    if let Some(exit) = &r.server_exit {
        println!("  server exit   {exit}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_nearest_rank() {
        assert_eq!(Latency::of(&mut []), Latency::default());
        let mut samples: Vec<u64> = (1..=100).rev().collect();
        assert_eq!(Latency::of(&mut samples), Latency { p50: 50, p90: 90, p99: 99, max: 100 });
        assert_eq!(Latency::of(&mut [7]), Latency { p50: 7, p90: 7, p99: 7, max: 7 });
    }

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
    fn http_mode_takes_a_url_and_connections() {
        let args = ["mcp-load", "--url", "http://127.0.0.1:9/mcp", "--connections", "16", "--requests", "5"];
        let cli = Cli::try_parse_from(args).unwrap();
        assert_eq!(
            (cli.url.as_deref(), cli.connections, cli.requests, cli.command.len()),
            (Some("http://127.0.0.1:9/mcp"), Some(16), 5, 0)
        );
        let default = Cli::try_parse_from(["mcp-load", "--url", "http://h/mcp", "--json"]).unwrap();
        assert_eq!((default.connections, default.json), (None, true));
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
        assert!(with(&["--legacy"]).is_err());
        assert!(with(&["--", "srv", "--stdio"]).is_err());
        assert!(Cli::try_parse_from(["mcp-load", "--connections", "4", "--", "srv"]).is_err());
        assert!(Cli::try_parse_from(["mcp-load", "--connections", "4"]).is_err());
    }
}
