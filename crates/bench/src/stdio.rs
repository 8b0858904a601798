//! stdio mode: start the server, time its first answer, warm up, then measure while reading
//! the server's CPU time and memory.

use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::time::Instant;

use crate::load::{PhaseStats, Shape, run_phase};
use crate::server::{self, Meter};
use crate::{Cli, Latency, Report};

pub(crate) async fn run(cli: &Cli) -> Result<Report, String> {
    let deadline = Instant::now() + Duration::from_secs(cli.workload.timeout);
    let server = cli.command.join(" ");
    let mut started = server::spawn(&cli.command, true, cli.quiet_server)?;
    let (Some(stdin), Some(stdout)) = (started.child.stdin.take(), started.child.stdout.take()) else {
        return Err("the server's stdio was not piped".to_owned());
    };
    let writer = BufWriter::with_capacity(1 << 16, stdin);
    let reader = BufReader::with_capacity(1 << 16, stdout);
    let shape = Shape { modern: !cli.workload.legacy, text_bytes: cli.workload.text_bytes };
    let mut meter = Meter::new(&started);
    meter.idle(Duration::from_millis(cli.idle_wait)).await;

    let load = tokio::time::timeout_at(deadline, drive(cli, shape, writer, reader, &mut meter)).await;
    let (warm, mut measured) = match load {
        Ok(Ok(phases)) => phases,
        Ok(Err(e)) => {
            let exit = server::stop(&mut started.child, deadline).await;
            return Err(format!("{e} (server: {exit})"));
        }
        Err(_) => {
            let _ = started.child.kill().await;
            return Err(format!("gave up after {} s and killed the server", cli.workload.timeout));
        }
    };
    // `drive` dropped the server's stdin: wait for it to notice the end of input.
    let server_exit = server::stop(&mut started.child, deadline).await;

    let elapsed = measured.elapsed.as_secs_f64();
    Ok(Report {
        server,
        transport: "stdio",
        mode: if cli.workload.legacy { "legacy" } else { "modern" },
        requests: measured.received,
        concurrency: cli.concurrency,
        rate: None,
        warmup: warm.received,
        text_bytes: cli.workload.text_bytes,
        elapsed_s: elapsed,
        requests_per_s: if elapsed > 0.0 { measured.received as f64 / elapsed } else { 0.0 },
        latency_us: Latency::of(&mut measured.latencies_us),
        errors: warm.errors + measured.errors,
        first_error: warm.first_error.or(measured.first_error),
        figures: meter.figures,
        server_exit: Some(server_exit),
    })
}

/// The first request (the legacy `initialize`, or one `tools/call` with id 0), the warm-up,
/// then the measured phase; closes the server's stdin.
async fn drive<W, R>(
    cli: &Cli,
    shape: Shape,
    writer: W,
    reader: R,
    meter: &mut Meter,
) -> Result<(PhaseStats, PhaseStats), String>
where
    W: AsyncWrite + Unpin + Send + 'static,
    R: AsyncBufRead + Unpin + Send + 'static,
{
    let (mut writer, mut reader) = (writer, reader);
    let io = |e: std::io::Error| format!("talking to the server: {e}");
    if cli.workload.legacy {
        initialize(&mut writer, &mut reader).await?;
    } else {
        let (w, r, first) = run_phase(writer, reader, shape, 0..1, 1).await.map_err(io)?;
        check_complete(&first, 1, "first request")?;
        if let Some(e) = first.first_error {
            return Err(format!("the first request failed: {e}"));
        }
        (writer, reader) = (w, r);
    }
    meter.first_answer();
    let concurrency = cli.concurrency as usize;
    let warm_ids = 1..1 + cli.workload.warmup;
    let measured_ids = warm_ids.end..warm_ids.end + cli.workload.requests;
    let (writer, reader, warm) = run_phase(writer, reader, shape, warm_ids, concurrency).await.map_err(io)?;
    check_complete(&warm, cli.workload.warmup, "warm-up")?;
    meter.measure_from_here();
    let (mut writer, _reader, measured) =
        run_phase(writer, reader, shape, measured_ids, concurrency).await.map_err(io)?;
    meter.measured(measured.received);
    check_complete(&measured, cli.workload.requests, "measured run")?;
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
