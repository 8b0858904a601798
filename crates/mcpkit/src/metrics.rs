//! `--metrics ADDR`: Prometheus metrics (`GET /metrics`) on a listener of their own — off by
//! default for `serve`, on by default for `gateway` at 127.0.0.1:9464.

use mcp_metrics::Metrics;

/// Where `mcpkit gateway` serves its metrics unless told otherwise (OpenTelemetry's
/// Prometheus exporter port).
pub(crate) const GATEWAY_DEFAULT: &str = "127.0.0.1:9464";

#[derive(clap::Args, Debug, Clone, Default)]
pub(crate) struct MetricsArgs {
    /// Serve Prometheus metrics (GET /metrics: requests by method, tool and outcome — success,
    /// tool_error, jsonrpc_error, http_refused — their durations, in flight, sessions, bytes)
    /// on this address: HOST:PORT, or PORT on 127.0.0.1; port 0 picks a free one; `off` for
    /// none. `metrics on URL` tells where. Default: $MCPKIT_METRICS, else off for serve and
    /// 127.0.0.1:9464 for gateway.
    #[arg(long, value_name = "ADDR")]
    pub(crate) metrics: Option<String>,
}

impl MetricsArgs {
    /// The address to serve on, if any: the one given, else `default`.
    /// `$MCPKIT_METRICS`, when set, replaces the default (`off` included).
    pub(crate) fn address(&self, default: Option<&str>) -> Option<String> {
        let from_env = std::env::var("MCPKIT_METRICS").ok();
        let chosen = self.metrics.as_deref().or(from_env.as_deref());
        match chosen {
            Some("off" | "none" | "") => None,
            Some(addr) => Some(addr.to_owned()),
            None => default.map(str::to_owned),
        }
    }

    /// Whether the address was chosen (flag or environment) rather than defaulted.
    fn chosen(&self) -> bool {
        self.metrics.is_some() || std::env::var_os("MCPKIT_METRICS").is_some()
    }

    /// Binds the metrics listener and serves `metrics` on it in a task. A given address that
    /// cannot be bound is an error; the default one only a warning (another gateway may have
    /// it).
    pub(crate) async fn start(&self, metrics: &Metrics, default: Option<&str>) -> Result<(), String> {
        let Some(addr) = self.address(default) else { return Ok(()) };
        let addr = if addr.bytes().all(|b| b.is_ascii_digit()) { format!("127.0.0.1:{addr}") } else { addr };
        let listener = match tokio::net::TcpListener::bind(&addr).await {
            Ok(listener) => listener,
            Err(e) if !self.chosen() => {
                eprintln!("mcpkit: metrics not served: {addr}: {e} (choose an address with --metrics ADDR)");
                return Ok(());
            }
            Err(e) => return Err(format!("--metrics {addr}: {e}")),
        };
        let local = listener.local_addr().map_err(|e| format!("--metrics {addr}: {e}"))?;
        eprintln!("metrics on http://{local}/metrics");
        let metrics = metrics.clone();
        tokio::spawn(async move {
            if let Err(e) = mcp_metrics::serve(listener, metrics).await {
                tracing::warn!("the metrics listener stopped: {e}");
            }
        });
        Ok(())
    }
}

/// The gateway's upstreams as the metrics report them.
pub(crate) fn gateway_metrics(gateway: &mcp_gateway::Gateway, transport: &'static str) -> Metrics {
    let gateway = gateway.clone();
    Metrics::with_upstreams(transport, move || {
        gateway
            .status()
            .upstreams
            .into_iter()
            .map(|u| mcp_metrics::UpstreamSample {
                state: u.state.as_str().to_owned(),
                restarts: u.restarts,
                requests: u.requests,
                failures: u.failures,
                in_flight: u64::try_from(u.in_flight).unwrap_or(u64::MAX),
                waiting: u64::try_from(u.waiting).unwrap_or(u64::MAX),
                circuit_open: u.circuit == "open" || u.circuit == "half-open",
                name: u.name,
            })
            .collect()
    })
}

/// Gives `server` its observers: the metrics (when served), traces (when the OTEL_* variables
/// name an endpoint) and the request log (when asked).
pub(crate) fn observe(
    server: &mcp_server::Server,
    metrics: Option<&Metrics>,
    tracing: Option<&mcp_trace::Tracing>,
    log: &crate::logging::ServerLogArgs,
) {
    use std::sync::Arc;
    let mut observers = mcp_server::observe::Observers::new();
    if let Some(tracing) = tracing {
        observers = observers.with(Arc::new(tracing.clone()));
    }
    if let Some(metrics) = metrics {
        observers = observers.with(Arc::new(metrics.clone()));
    }
    if log.request_log_arguments {
        observers = observers.with(Arc::new(mcp_server::observe::RequestLog::with_arguments()));
    } else if log.request_log {
        observers = observers.with(Arc::new(mcp_server::observe::RequestLog::new()));
    }
    if let Some(observer) = observers.into_observer() {
        server.observe(observer);
    }
}

/// The OTLP push of the metrics of a server or gateway called `service`, when the OTEL_*
/// variables name an endpoint (a mistake in them is reported, and the push left off).
pub(crate) fn otlp(service: &str) -> Option<mcp_metrics::OtlpExport> {
    match mcp_metrics::OtlpExport::from_env(service) {
        Ok(export) => export,
        Err(e) => {
            eprintln!("mcpkit: metrics: {e}");
            None
        }
    }
}

/// Traces for a server or gateway called `service`, when the OTEL_* variables name an OTLP
/// endpoint (a mistake in them is reported, and tracing left off). Called on the runtime that
/// serves: the exports are a task of it, not a thread (a server on one thread stays on one;
/// `Tracing::close` on that runtime sends the last ones).
pub(crate) fn tracing(service: &str, transport: &'static str) -> Option<mcp_trace::Tracing> {
    match mcp_trace::Tracing::from_env_on(&tokio::runtime::Handle::current(), service, transport) {
        Ok(tracing) => tracing,
        Err(e) => {
            eprintln!("mcpkit: tracing: {e}");
            None
        }
    }
}
