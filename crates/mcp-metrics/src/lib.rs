//! Prometheus metrics for mcpkit servers and gateways, also pushed over OTLP ([`OtlpExport`]).
//!
//! [`Metrics`] is an [`Observer`](mcp_server::Observer): give it to a server with
//! `Server::observe` and serve [`Metrics::router`] (or [`serve`]) on a listener of its own.
//! Names and labels follow OpenTelemetry's semantic conventions for MCP, in Prometheus form:
//!
//! - `mcp_server_operation_duration_seconds` — a histogram per request (its `_count` is the
//!   request count) labelled `mcp_method_name`, `gen_ai_tool_name` (`tools/call`),
//!   `gen_ai_prompt_name` (`prompts/get`), `mcp_protocol_version`, `network_transport`, and
//!   `outcome`, which keeps the layers apart: `success`, `tool_error` (a result with
//!   `isError: true`), `jsonrpc_error`, `http_refused` (refused by the HTTP transport before
//!   the server saw it), `cancelled`; `error_type` is the JSON-RPC code, the HTTP status,
//!   `tool_error` or `cancelled`.
//! - `mcp_server_requests_in_flight`, `mcp_server_sessions` (open legacy sessions),
//!   `mcp_server_subscriptions` (open `subscriptions/listen` streams),
//!   `mcp_server_received_bytes_total`, `mcp_server_sent_bytes_total`.
//! - For a gateway, per upstream ([`Metrics::with_upstreams`]): `mcp_gateway_upstream_state`
//!   (one series per state, 1 for the current one), `…_restarts_total`, `…_requests_total`,
//!   `…_failures_total`, `…_in_flight`, `…_waiting`, `…_circuit_open`, and the histogram
//!   `mcp_gateway_upstream_request_duration_seconds` (`upstream`, `outcome`: `answered` or
//!   `unanswered`) fed by [`Metrics::upstream_request`].
//!
//! - For a client ([`Metrics`] as mcp-client's `RequestObserver`, given to
//!   `ClientBuilder::observe`): `mcp_client_operation_duration_seconds`, the requests it sends,
//!   by method, tool or prompt, `network_transport` and `outcome` (`success`, `tool_error`,
//!   `jsonrpc_error`, `http_refused`, `timeout`, `cancelled`, `transport_error`); shown once a
//!   request was counted.
//!
//! Cardinality is bounded: methods outside MCP's own are `other`, a tool or prompt the server
//! does not have is `other` (a client's names past [`MAX_CLIENT_NAMES`] series too), and no
//! label carries an argument, a token or a session id.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use mcp_server::Observer;
use mcp_server::observe::{Observed, Outcome, TransportRefusal};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

mod client;
mod operations;
mod otlp;
mod otlp_answer;
mod otlp_target;
mod striped;

pub use client::MAX_NAMES as MAX_CLIENT_NAMES;
pub use otlp::{OtlpExport, OtlpExporter};
pub use otlp_answer::{ANSWER_LIMIT, PartialSuccess, read_answer};
pub use otlp_target::{OtlpCompression, OtlpTarget, percent_decode, positive_millis};

use operations::{ErrorType, Labels, Operations, UpstreamDurations};

/// The states an upstream can be in, as a gateway's status spells them.
pub const UPSTREAM_STATES: [&str; 5] = ["starting", "ready", "idle", "down", "closed"];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct UpstreamLabel {
    upstream: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct UpstreamState {
    upstream: String,
    state: &'static str,
}

/// What a gateway reports of one upstream at each scrape.
#[derive(Clone, Debug, Default)]
pub struct UpstreamSample {
    /// Its name.
    pub name: String,
    /// Its state (one of [`UPSTREAM_STATES`]).
    pub state: String,
    /// Reconnections since the first connect.
    pub restarts: u64,
    /// Requests sent to it.
    pub requests: u64,
    /// Requests that failed on the transport or timed out.
    pub failures: u64,
    /// Requests in flight.
    pub in_flight: u64,
    /// Requests waiting for one of its slots (its concurrency limit reached).
    pub waiting: u64,
    /// Its circuit breaker fails requests fast.
    pub circuit_open: bool,
}

type Sampler = Box<dyn Fn() -> Vec<UpstreamSample> + Send + Sync>;

struct Upstreams {
    sample: Sampler,
    state: Family<UpstreamState, Gauge>,
    restarts: Family<UpstreamLabel, Counter>,
    requests: Family<UpstreamLabel, Counter>,
    failures: Family<UpstreamLabel, Counter>,
    in_flight: Family<UpstreamLabel, Gauge>,
    waiting: Family<UpstreamLabel, Gauge>,
    circuit_open: Family<UpstreamLabel, Gauge>,
    /// Observed as requests end (`Metrics::upstream_request`), never sampled.
    durations: Arc<UpstreamDurations>,
}

impl Upstreams {
    fn refresh(&self) {
        let samples = (self.sample)();
        for family in [&self.restarts, &self.requests, &self.failures] {
            family.clear();
        }
        self.state.clear();
        self.in_flight.clear();
        self.waiting.clear();
        self.circuit_open.clear();
        for s in samples {
            let label = UpstreamLabel { upstream: s.name.clone() };
            for state in UPSTREAM_STATES {
                let series = UpstreamState { upstream: s.name.clone(), state };
                self.state.get_or_create(&series).set(i64::from(state == s.state));
            }
            self.restarts.get_or_create(&label).inner().store(s.restarts, Ordering::Relaxed);
            self.requests.get_or_create(&label).inner().store(s.requests, Ordering::Relaxed);
            self.failures.get_or_create(&label).inner().store(s.failures, Ordering::Relaxed);
            self.in_flight.get_or_create(&label).set(i64::try_from(s.in_flight).unwrap_or(i64::MAX));
            self.waiting.get_or_create(&label).set(i64::try_from(s.waiting).unwrap_or(i64::MAX));
            self.circuit_open.get_or_create(&label).set(i64::from(s.circuit_open));
        }
    }
}

struct Inner {
    registry: Registry,
    transport: &'static str,
    operations: Arc<Operations>,
    /// The requests sent by a client this is the observer of (`client.rs`).
    client: Arc<client::ClientOperations>,
    in_flight: striped::Gauge,
    sessions: Gauge,
    subscriptions: Gauge,
    received: striped::Counter,
    sent: striped::Counter,
    upstreams: Option<Upstreams>,
    /// One scrape at a time refreshes the upstreams' series and encodes.
    scrape: Mutex<()>,
    /// When counting began (the start of every cumulative OTLP series).
    started: std::time::SystemTime,
    scrapes: AtomicU64,
}

/// The metrics of one server (and, for a gateway, of its upstreams). Cheap to clone.
#[derive(Clone)]
pub struct Metrics {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").field("transport", &self.inner.transport).finish_non_exhaustive()
    }
}

impl Metrics {
    /// The metrics of a server whose requests arrive over `transport` (`"tcp"` for HTTP,
    /// `"pipe"` for stdio: OpenTelemetry's `network.transport`).
    pub fn new(transport: &'static str) -> Metrics {
        Self::build(transport, None)
    }

    /// The same, with a gateway's upstreams: `sample` is called at each scrape.
    pub fn with_upstreams(
        transport: &'static str,
        sample: impl Fn() -> Vec<UpstreamSample> + Send + Sync + 'static,
    ) -> Metrics {
        let upstreams = Upstreams {
            sample: Box::new(sample),
            state: Family::default(),
            restarts: Family::default(),
            requests: Family::default(),
            failures: Family::default(),
            in_flight: Family::default(),
            waiting: Family::default(),
            circuit_open: Family::default(),
            durations: Arc::default(),
        };
        Self::build(transport, Some(upstreams))
    }

    fn build(transport: &'static str, upstreams: Option<Upstreams>) -> Metrics {
        let mut registry = Registry::default();
        let operations = Arc::new(Operations::new(transport));
        // Counted on every request: striped (no line the serving threads share).
        let in_flight = striped::Gauge::default();
        let sessions = Gauge::default();
        let subscriptions = Gauge::default();
        let received = striped::Counter::default();
        let sent = striped::Counter::default();
        registry.register_collector(Box::new(operations.clone()));
        let client = Arc::new(client::ClientOperations::new());
        registry.register_collector(Box::new(client.clone()));
        registry.register("mcp_server_requests_in_flight", "MCP requests being served", in_flight.clone());
        registry.register("mcp_server_sessions", "Open legacy (initialize) sessions", sessions.clone());
        registry.register(
            "mcp_server_subscriptions",
            "Open subscriptions/listen streams (2026-07-28)",
            subscriptions.clone(),
        );
        registry.register(
            "mcp_server_received_bytes",
            "Bytes of request bodies received (declared lengths)",
            received.clone(),
        );
        registry.register(
            "mcp_server_sent_bytes",
            "Bytes of response bodies sent (declared lengths)",
            sent.clone(),
        );
        if let Some(u) = &upstreams {
            registry.register(
                "mcp_gateway_upstream_state",
                "An upstream's state: 1 for the state it is in",
                u.state.clone(),
            );
            registry.register(
                "mcp_gateway_upstream_restarts",
                "Reconnections of an upstream",
                u.restarts.clone(),
            );
            registry.register(
                "mcp_gateway_upstream_requests",
                "Requests sent to an upstream",
                u.requests.clone(),
            );
            registry.register(
                "mcp_gateway_upstream_failures",
                "Requests to an upstream that timed out or failed on the transport",
                u.failures.clone(),
            );
            registry.register(
                "mcp_gateway_upstream_in_flight",
                "Requests in flight to an upstream",
                u.in_flight.clone(),
            );
            registry.register(
                "mcp_gateway_upstream_waiting",
                "Requests waiting for a slot of an upstream (its max_concurrency reached)",
                u.waiting.clone(),
            );
            registry.register_collector(Box::new(u.durations.clone()));
            registry.register(
                "mcp_gateway_upstream_circuit_open",
                "1 while an upstream's circuit breaker fails its requests fast",
                u.circuit_open.clone(),
            );
        }
        Metrics {
            inner: Arc::new(Inner {
                registry,
                transport,
                operations,
                client,
                in_flight,
                sessions,
                subscriptions,
                received,
                sent,
                upstreams,
                scrape: Mutex::new(()),
                started: std::time::SystemTime::now(),
                scrapes: AtomicU64::new(0),
            }),
        }
    }

    /// The exposition, in the OpenMetrics text format (which Prometheus reads).
    pub fn encode(&self) -> String {
        let _one = self.inner.scrape.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(upstreams) = &self.inner.upstreams {
            upstreams.refresh();
        }
        self.inner.scrapes.fetch_add(1, Ordering::Relaxed);
        let mut text = String::new();
        if let Err(e) = prometheus_client::encoding::text::encode(&mut text, &self.inner.registry) {
            tracing::warn!("encoding the metrics failed: {e}");
        }
        text
    }

    /// A request sent to `upstream` took `duration`; `answered`: the upstream answered (a
    /// result or an error of its own) rather than timed out or failed on the transport. Only
    /// for metrics made [with upstreams](Metrics::with_upstreams).
    pub fn upstream_request(&self, upstream: &str, duration: std::time::Duration, answered: bool) {
        if let Some(u) = &self.inner.upstreams {
            u.durations.observe(upstream, answered, duration);
        }
    }

    /// How many times the metrics were encoded (scraped).
    pub fn scrapes(&self) -> u64 {
        self.inner.scrapes.load(Ordering::Relaxed)
    }

    /// The exposition in Prometheus's classic text format (version 0.0.4), for scrapers and
    /// tools that do not ask for OpenMetrics (`promtool check metrics` among them).
    pub fn encode_classic(&self) -> String {
        classic(&self.encode())
    }

    /// A router serving `GET /metrics`: OpenMetrics to a scraper that accepts it (Prometheus
    /// does), the classic text format otherwise.
    pub fn router(&self) -> axum::Router {
        let metrics = self.clone();
        axum::Router::new().route(
            "/metrics",
            axum::routing::get(move |headers: axum::http::HeaderMap| {
                let metrics = metrics.clone();
                async move {
                    let open = headers
                        .get_all(axum::http::header::ACCEPT)
                        .iter()
                        .filter_map(|v| v.to_str().ok())
                        .any(|v| v.contains("application/openmetrics-text"));
                    let (kind, body) = if open {
                        (OPENMETRICS, metrics.encode())
                    } else {
                        (CLASSIC, metrics.encode_classic())
                    };
                    ([(axum::http::header::CONTENT_TYPE, kind)], body)
                }
            }),
        )
    }
}

const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
const CLASSIC: &str = "text/plain; version=0.0.4; charset=utf-8";

/// OpenMetrics text as Prometheus's classic format: a counter family is named with its
/// `_total` (OpenMetrics names the family without it), and `# UNIT` and `# EOF` go.
fn classic(open: &str) -> String {
    let counters: std::collections::HashSet<&str> = open
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.strip_suffix(" counter"))
        .collect();
    let mut out = String::with_capacity(open.len());
    for line in open.lines() {
        if line.starts_with("# UNIT ") || line == "# EOF" {
            continue;
        }
        let renamed = ["# HELP ", "# TYPE "].iter().find_map(|prefix| {
            let rest = line.strip_prefix(prefix)?;
            let (name, tail) = rest.split_once(' ')?;
            counters.contains(name).then(|| format!("{prefix}{name}_total {tail}"))
        });
        match renamed {
            Some(line) => out.push_str(&line),
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

/// Serves `metrics` on `listener` (`GET /metrics`) until the task is dropped or fails.
pub async fn serve(listener: tokio::net::TcpListener, metrics: Metrics) -> std::io::Result<()> {
    axum::serve(listener, metrics.router()).await
}

impl Observer for Metrics {
    fn started(&self, _method: &'static str) {
        self.inner.in_flight.inc();
    }

    fn finished(&self, request: &Observed<'_>) {
        self.inner.in_flight.dec();
        let name = request.name.unwrap_or_default();
        let (tool, prompt) = match request.method {
            "tools/call" => (name, ""),
            "prompts/get" => ("", name),
            _ => ("", ""),
        };
        let error = match request.outcome {
            Outcome::Success => ErrorType::None,
            Outcome::ToolError => ErrorType::Tool,
            Outcome::Error { code, .. } => ErrorType::Code(code),
            Outcome::Cancelled => ErrorType::Cancelled,
        };
        let labels = Labels {
            method: request.method,
            tool,
            prompt,
            version: request.version.map_or("", |v| v.as_str()),
            outcome: request.outcome.as_str(),
            error,
        };
        self.inner.operations.observe(&labels, request.duration);
    }

    fn refused(&self, refused: &TransportRefusal<'_>) {
        let labels = Labels {
            method: refused.method,
            tool: "",
            prompt: "",
            version: "",
            outcome: "http_refused",
            error: ErrorType::Status(refused.status),
        };
        self.inner.operations.observe(&labels, refused.duration);
    }

    fn session(&self, opened: bool) {
        if opened {
            self.inner.sessions.inc();
        } else {
            self.inner.sessions.dec();
        }
    }

    fn subscription(&self, opened: bool) {
        if opened {
            self.inner.subscriptions.inc();
        } else {
            self.inner.subscriptions.dec();
        }
    }

    fn bytes(&self, received: u64, sent: u64) {
        if received > 0 {
            self.inner.received.inc_by(received);
        }
        if sent > 0 {
            self.inner.sent.inc_by(sent);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use mcp_types::{ProtocolVersion, RequestId};

    use super::*;

    #[test]
    fn outcomes_are_kept_apart_and_names_bounded() {
        let metrics = Metrics::new("tcp");
        let id = RequestId::Number(1);
        let mut call = Observed::new(&id, "tools/call", Outcome::ToolError, Duration::from_millis(3));
        call.name = Some("echo");
        call.version = Some(ProtocolVersion::parse("2025-11-25").unwrap());
        metrics.started("tools/call");
        metrics.finished(&call);
        let error =
            Observed::new(&id, "tools/list", Outcome::Error { code: -32602, refused: true }, Duration::ZERO);
        metrics.started("tools/list");
        metrics.finished(&error);
        metrics.refused(&TransportRefusal::new("tools/call", 401, None, Duration::ZERO));
        metrics.session(true);
        metrics.subscription(true);
        metrics.subscription(true);
        metrics.subscription(false);
        metrics.bytes(10, 20);
        let text = metrics.encode();
        assert!(
            text.contains(r#"mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call",gen_ai_tool_name="echo",gen_ai_prompt_name="",mcp_protocol_version="2025-11-25",network_transport="tcp",outcome="tool_error",error_type="tool_error"} 1"#),
            "{text}"
        );
        assert!(text.contains(r#"outcome="jsonrpc_error",error_type="-32602"} 1"#), "{text}");
        assert!(text.contains(r#"outcome="http_refused",error_type="401"} 1"#), "{text}");
        assert!(text.contains("mcp_server_requests_in_flight 0"), "{text}");
        assert!(text.contains("mcp_server_sessions 1"), "{text}");
        assert!(text.contains("mcp_server_subscriptions 1"), "{text}");
        assert!(text.contains("mcp_server_received_bytes_total 10"), "{text}");
        assert!(text.contains("mcp_server_sent_bytes_total 20"), "{text}");
        assert!(text.ends_with("# EOF\n"), "{text}");
        let classic = metrics.encode_classic();
        assert!(classic.contains("# TYPE mcp_server_sent_bytes_total counter\n"), "{classic}");
        assert!(classic.contains("# HELP mcp_server_sent_bytes_total "), "{classic}");
        assert!(!classic.contains("# EOF") && !classic.contains("# UNIT"), "{classic}");
    }

    #[test]
    fn upstreams_are_sampled_at_each_scrape() {
        let round = Arc::new(AtomicU64::new(0));
        let seen = round.clone();
        let metrics = Metrics::with_upstreams("tcp", move || {
            let n = seen.fetch_add(1, Ordering::SeqCst);
            let mut up =
                UpstreamSample { name: "a".into(), state: "ready".into(), restarts: n, ..Default::default() };
            if n > 0 {
                up.state = "down".into();
                up.circuit_open = true;
                up.waiting = 4;
            }
            vec![up]
        });
        metrics.upstream_request("a", std::time::Duration::from_millis(3), true);
        let first = metrics.encode();
        assert!(
            first.contains(
                r#"mcp_gateway_upstream_request_duration_seconds_count{upstream="a",outcome="answered"} 1"#
            ),
            "{first}"
        );
        assert!(first.contains(r#"mcp_gateway_upstream_state{upstream="a",state="ready"} 1"#), "{first}");
        assert!(first.contains(r#"mcp_gateway_upstream_state{upstream="a",state="down"} 0"#), "{first}");
        assert!(first.contains(r#"mcp_gateway_upstream_waiting{upstream="a"} 0"#), "{first}");
        let second = metrics.encode();
        assert!(second.contains(r#"mcp_gateway_upstream_state{upstream="a",state="down"} 1"#), "{second}");
        assert!(second.contains(r#"mcp_gateway_upstream_restarts_total{upstream="a"} 1"#), "{second}");
        assert!(second.contains(r#"mcp_gateway_upstream_circuit_open{upstream="a"} 1"#), "{second}");
        assert!(second.contains(r#"mcp_gateway_upstream_waiting{upstream="a"} 4"#), "{second}");
        assert_eq!(metrics.scrapes(), 2);
    }
}
