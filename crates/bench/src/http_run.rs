//! HTTP mode: against a server that is already listening at `--url`, or one started here
//! (`--url` together with a server command), whose start-up, CPU time and memory are then
//! measured as on stdio. With `--legacy` the run opens one 2025-11-25 session first (its
//! `initialize` answer is then the first answer) and ends it with `DELETE` at the end.

use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpStream;
use tokio::time::Instant;

use crate::http::{self, Target};
use crate::load::{PhaseStats, Shape};
use crate::server::{self, Figures, Meter, Started};
use crate::{Cli, Latency, Report};

/// How often the port of a server started here is tried until it accepts connections.
const PORT_POLL: Duration = Duration::from_millis(1);

pub(crate) async fn run(cli: &Cli, url: &str) -> Result<Report, String> {
    let deadline = Instant::now() + Duration::from_secs(cli.workload.timeout);
    let target = Arc::new(Target::parse(url)?);
    let mut started = None;
    if !cli.command.is_empty() {
        if TcpStream::connect(target.address()).await.is_ok() {
            return Err(format!("something already listens on {}: pick a free port", target.at()));
        }
        started = Some(server::spawn(&cli.command, false, cli.quiet_server)?);
    }
    let mut meter = started.as_ref().map(Meter::new);
    let load = tokio::time::timeout_at(deadline, drive(cli, &target, started.as_mut(), meter.as_mut()));
    let outcome = load.await.map_err(|_| format!("gave up after {} s", cli.workload.timeout));
    let server_exit = match &mut started {
        Some(started) => Some(server::kill(&mut started.child).await),
        None => None,
    };
    let (warm, mut measured) = match outcome {
        Ok(Ok(phases)) => phases,
        Ok(Err(e)) | Err(e) => {
            return Err(match server_exit {
                Some(exit) => format!("{e} (server: {exit})"),
                None => e,
            });
        }
    };
    let elapsed = measured.elapsed.as_secs_f64();
    Ok(Report {
        server: if cli.command.is_empty() { url.to_owned() } else { cli.command.join(" ") },
        transport: "http",
        mode: if cli.workload.legacy { "legacy" } else { "modern" },
        requests: measured.received,
        concurrency: cli.connections.unwrap_or(1),
        rate: cli.rate,
        warmup: warm.received,
        text_bytes: cli.workload.text_bytes,
        elapsed_s: elapsed,
        requests_per_s: if elapsed > 0.0 { measured.received as f64 / elapsed } else { 0.0 },
        latency_us: Latency::of(&mut measured.latencies_us),
        errors: warm.errors + measured.errors,
        first_error: warm.first_error.or(measured.first_error),
        figures: meter.map(|m| m.figures).unwrap_or_else(Figures::default),
        server_exit,
    })
}

/// Waits for a started server's port, sends the first request (with `--legacy`, opens the
/// session), warms up, then measures.
async fn drive(
    cli: &Cli,
    target: &Arc<Target>,
    started: Option<&mut Started>,
    mut meter: Option<&mut Meter>,
) -> Result<(PhaseStats, PhaseStats), String> {
    let shape = Shape { modern: !cli.workload.legacy, text_bytes: cli.workload.text_bytes };
    let connections = cli.connections.unwrap_or(1) as usize;
    let mut open = Vec::with_capacity(connections);
    let mut target = target.clone();
    if let Some(started) = started {
        if let Some(meter) = meter.as_deref_mut() {
            meter.idle(Duration::from_millis(cli.idle_wait)).await;
        }
        wait_for_port(&target, started).await?;
    }
    if cli.workload.legacy {
        let mut first = http::connect_all(&target, 1).await?;
        let legacy = http::initialize(&mut first[0], &target).await?;
        target = Arc::new(Target { legacy: Some(legacy), ..(*target).clone() });
        open = first;
    } else if meter.is_some() {
        let first =
            http::run_phase(http::connect_all(&target, 1).await?, target.clone(), shape, 0..1, None).await;
        check_connections(&first, "first request")?;
        if let Some(e) = first.stats.first_error {
            return Err(format!("the first request failed: {e}"));
        }
        open = first.connections;
    }
    if let Some(meter) = meter.as_deref_mut() {
        meter.first_answer();
    }
    let more = connections.saturating_sub(open.len());
    open.extend(http::connect_all(&target, more).await?);
    let warm_ids = 1..1 + cli.workload.warmup;
    let measured_ids = warm_ids.end..warm_ids.end + cli.workload.requests;
    let warm = http::run_phase(open, target.clone(), shape, warm_ids, cli.rate).await;
    check_connections(&warm, "warm-up")?;
    if let Some(meter) = meter.as_deref_mut() {
        meter.measure_from_here();
    }
    let mut measured = http::run_phase(warm.connections, target.clone(), shape, measured_ids, cli.rate).await;
    if let Some(meter) = meter {
        meter.measured(measured.stats.received);
    }
    check_connections(&measured, "measured run")?;
    if let Some(connection) = measured.connections.first_mut() {
        http::end_session(connection, &target).await?;
    }
    Ok((warm.stats, measured.stats))
}

/// Tries the port until it accepts a connection; fails if the server exits first.
async fn wait_for_port(target: &Target, started: &mut Started) -> Result<(), String> {
    loop {
        if let Ok(Some(status)) = started.child.try_wait() {
            return Err(format!("the server exited ({status}) before listening on {}", target.at()));
        }
        if TcpStream::connect(target.address()).await.is_ok() {
            return Ok(());
        }
        tokio::time::sleep(PORT_POLL).await;
    }
}

/// A broken connection ends the run: the load would no longer be what was asked for.
fn check_connections(phase: &http::Phase, name: &str) -> Result<(), String> {
    let Some(broken) = &phase.broken else { return Ok(()) };
    let why = phase.stats.first_error.as_deref().map(|e| format!("; first error: {e}")).unwrap_or_default();
    Err(format!("{broken} after {} answers in the {name}{why}", phase.stats.received))
}
