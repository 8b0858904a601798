//! OpenTelemetry traces for mcpkit servers, clients and gateways.
//!
//! [`Tracing`] is an [`Observer`] that traces: give it to a server with
//! `Server::observe` and every request becomes a `SERVER` span that continues the trace its
//! caller sent in `_meta` (`traceparent`, `tracestate`: W3C Trace Context, SEP-414), with the
//! attributes of OpenTelemetry's semantic conventions for MCP — `mcp.method.name`,
//! `gen_ai.tool.name` or `gen_ai.prompt.name`, `jsonrpc.request.id`, `mcp.protocol.version`,
//! `network.transport`, and on failure `error.type` (`tool_error`, the JSON-RPC code,
//! `cancelled`) and `rpc.response.status_code`. A handler's own requests to other servers carry
//! the request's span as their parent (`Call::traceparent`; the gateway does this), so one trace
//! runs from a client through a gateway to the upstream's handler. A client's side is a
//! [`ClientSpan`].
//!
//! Export is OTLP over HTTP/protobuf, configured by the standard variables
//! (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `…_HEADERS`,
//! `…_TIMEOUT`, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, the batch processor's
//! `OTEL_BSP_*`); [`Tracing::from_env`] gives nothing when no endpoint is set (or
//! `OTEL_SDK_DISABLED=true`, `OTEL_TRACES_EXPORTER=none`), and then no observer is set and the
//! request path does none of this. Spans are recorded by mcpkit's own pipeline (`export`): the
//! request path writes each span as OTLP protobuf and appends it to a bounded queue of
//! batches, and an export loop sends them — a task on the server's runtime
//! ([`Tracing::from_env_on`]) or a thread of its own ([`Tracing::from_env`]). No OpenTelemetry
//! SDK span, and no message object, is built per request.

mod export;
mod requests;

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use export::{Kind, Pipeline, Span, What};
use mcp_server::Observer;
use mcp_server::observe::{Observed, SpanIds};
use mcp_types::trace::TraceParent;

/// Traces exported over OTLP.
#[derive(Debug, Clone)]
pub struct Tracing {
    pipeline: Arc<Pipeline>,
    transport: &'static str,
    /// The share of new traces recorded (`OTEL_TRACES_SAMPLER`).
    ratio: f64,
}

/// The share of new traces `OTEL_TRACES_SAMPLER` (and `OTEL_TRACES_SAMPLER_ARG`) asks for. The
/// `parentbased_` and plain variants are the same here: a caller's own decision, carried in its
/// `traceparent`, is always followed (a trace is whole or absent across the hops).
fn sampler_ratio() -> Result<f64, String> {
    sampler_ratio_of(env)
}

fn sampler_ratio_of(env: impl Fn(&str) -> Option<String>) -> Result<f64, String> {
    let Some(sampler) = env("OTEL_TRACES_SAMPLER") else { return Ok(1.0) };
    let ratio = || -> Result<f64, String> {
        match env("OTEL_TRACES_SAMPLER_ARG") {
            None => Ok(1.0),
            Some(arg) => match arg.trim().parse::<f64>() {
                Ok(r) if (0.0..=1.0).contains(&r) => Ok(r),
                _ => Err(format!("OTEL_TRACES_SAMPLER_ARG={arg}: not a ratio from 0 to 1")),
            },
        }
    };
    match sampler.trim() {
        "always_on" | "parentbased_always_on" => Ok(1.0),
        "always_off" | "parentbased_always_off" => Ok(0.0),
        "traceidratio" | "parentbased_traceidratio" => ratio(),
        other => Err(format!(
            "OTEL_TRACES_SAMPLER={other}: mcpkit samples with always_on, always_off or traceidratio (parent-based)"
        )),
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

impl Tracing {
    /// Traces exported where the `OTEL_*` variables say, for a process called `service` (unless
    /// `OTEL_SERVICE_NAME` names it) whose requests arrive over `transport` (`tcp`, `pipe`);
    /// `Ok(None)` when no OTLP endpoint is configured or tracing is switched off. The exports
    /// are sent by a thread of their own: for a process with no runtime running while it traces
    /// (a command's client span). A server running on a Tokio runtime takes
    /// [`Tracing::from_env_on`].
    pub fn from_env(service: &str, transport: &'static str) -> Result<Option<Tracing>, String> {
        Self::start(service, transport, export::Driver::Thread)
    }

    /// The same, the exports sent by a task on `runtime` (its timer enabled) instead of a
    /// thread: a server on one thread stays on one thread. [`Tracing::close`] on that runtime
    /// sends the last ones.
    pub fn from_env_on(
        runtime: &tokio::runtime::Handle,
        service: &str,
        transport: &'static str,
    ) -> Result<Option<Tracing>, String> {
        Self::start(service, transport, export::Driver::Task(runtime.clone()))
    }

    fn start(
        service: &str,
        transport: &'static str,
        driver: export::Driver,
    ) -> Result<Option<Tracing>, String> {
        let Some(target) = mcp_metrics::OtlpTarget::from_env("traces", service)? else { return Ok(None) };
        let ratio = sampler_ratio()?;
        let batching = export::Batching::from_env(env)?;
        let resource = resource_attributes(&target.service, env("OTEL_SERVICE_NAME").is_some(), env);
        let pipeline = Pipeline::start(target, resource, batching, driver)?;
        Ok(Some(Tracing { pipeline: Arc::new(pipeline), transport, ratio }))
    }

    /// Records `ratio` (0 to 1) of the new traces (decided by trace id, as
    /// OpenTelemetry's `TraceIdRatioBased` does); an unsampled request costs no span at all.
    pub fn with_ratio(mut self, ratio: f64) -> Tracing {
        self.ratio = ratio.clamp(0.0, 1.0);
        self
    }

    /// Exports what is still buffered and stops; spans ended after this are dropped. Made by
    /// [`Tracing::from_env`], it blocks until the last export is answered (at most the
    /// exporter's timeout). Made by [`Tracing::from_env_on`], it only asks the task to end, as
    /// it cannot drive the runtime that task is on: await [`Tracing::close`] there instead.
    pub fn shutdown(&self) {
        self.pipeline.shutdown();
    }

    /// Exports what is still buffered and stops, awaited until the last export is answered (at
    /// most the exporter's timeout); spans ended after this are dropped.
    pub async fn close(&self) {
        self.pipeline.close().await;
    }

    /// A client span starting now: the root of a new trace, or a child of `$TRACEPARENT` when
    /// the environment carries one (how a script puts a command into its own trace).
    pub fn client_span(&self, name: impl Into<String>) -> ClientSpan {
        let mut meta = mcp_types::JsonObject::new();
        if let Some(parent) = env("TRACEPARENT") {
            meta.insert(mcp_types::trace::TRACEPARENT.to_owned(), parent.into());
        }
        if let Some(state) = env("TRACESTATE") {
            meta.insert(mcp_types::trace::TRACESTATE.to_owned(), state.into());
        }
        ClientSpan {
            tracing: self.clone(),
            ids: SpanIds::continuing_sampled(&meta, self.ratio),
            name: name.into(),
            start: SystemTime::now(),
        }
    }

    /// Queues `span` (of a sampled trace), encoded.
    fn record(&self, span: &Span<'_>) {
        self.pipeline.push(span);
    }
}

/// The resource's attributes: `OTEL_RESOURCE_ATTRIBUTES` (`key=value` pairs, values
/// percent-decoded; malformed pairs left out), then `service.name` — `OTEL_SERVICE_NAME` when
/// set, else the attributes' own `service.name`, else `service` — and the SDK's identity.
fn resource_attributes(
    service: &str,
    named_by_env: bool,
    env: impl Fn(&str) -> Option<String>,
) -> Vec<(String, String)> {
    let mut attributes: Vec<(String, String)> = env("OTEL_RESOURCE_ATTRIBUTES")
        .map(|list| {
            list.split(',')
                .filter_map(|pair| pair.split_once('='))
                .map(|(k, v)| {
                    let v = v.trim();
                    // A malformed escape is kept as written.
                    (k.trim().to_owned(), mcp_metrics::percent_decode(v).unwrap_or_else(|_| v.to_owned()))
                })
                .filter(|(k, _)| !k.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let listed = attributes.iter().position(|(k, _)| k == "service.name");
    match listed {
        Some(i) if named_by_env => attributes[i].1 = service.to_owned(),
        Some(_) => {}
        None => attributes.push(("service.name".into(), service.to_owned())),
    }
    attributes.push(("telemetry.sdk.name".into(), "mcpkit".into()));
    attributes.push(("telemetry.sdk.language".into(), "rust".into()));
    attributes.push(("telemetry.sdk.version".into(), env!("CARGO_PKG_VERSION").into()));
    attributes
}

/// How long a thread goes on turning monotonic instants into times of day from one reading of
/// both clocks. The time of day may be slewed (NTP: at most 500 ppm, so 50 µs over this long)
/// or stepped; a step shows in spans within this long.
const ANCHOR_FOR: Duration = Duration::from_millis(100);

/// The time of day at the monotonic instant `at` (of the last [`ANCHOR_FOR`]), in nanoseconds
/// since the Unix epoch: a span's end, from the instant the server already read for its
/// duration, without a third clock read a request.
fn time_of_day(at: Instant) -> u64 {
    use std::cell::Cell;
    thread_local! {
        static ANCHOR: Cell<Option<(Instant, u64)>> = const { Cell::new(None) };
    }
    ANCHOR.with(|anchor| match anchor.get().and_then(|a| by_anchor(at, a, ANCHOR_FOR)) {
        Some(time) => time,
        None => anchored(anchor, at),
    })
}

/// The time of day at `at` by `anchor` (an instant and the time of day then), when `at` is
/// within `within` of it.
fn by_anchor(at: Instant, (instant, time): (Instant, u64), within: Duration) -> Option<u64> {
    let nanos = |d: Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
    match at.checked_duration_since(instant) {
        Some(after) => (after <= within).then(|| time.saturating_add(nanos(after))),
        None => {
            let before = instant.duration_since(at);
            (before <= within).then(|| time.saturating_sub(nanos(before)))
        }
    }
}

/// The time of day at `at` from a new reading of both clocks, kept in `anchor`: once every
/// [`ANCHOR_FOR`] a thread, so out of line.
#[cold]
#[inline(never)]
fn anchored(anchor: &std::cell::Cell<Option<(Instant, u64)>>, at: Instant) -> u64 {
    let now = (Instant::now(), export::unix_nanos(SystemTime::now()));
    anchor.set(Some(now));
    by_anchor(at, now, Duration::MAX).unwrap_or(now.1)
}

impl Observer for Tracing {
    fn traces(&self) -> bool {
        true
    }

    /// Spans are the server's requests only: a refusal by the transport makes none.
    fn watches_transport(&self) -> bool {
        false
    }

    /// A span is written when its request is over, from what the server tells then.
    fn watches_starts(&self) -> bool {
        false
    }

    fn trace_ratio(&self) -> f64 {
        self.ratio
    }

    fn finished(&self, r: &Observed<'_>) {
        let Some(ids) = r.span.filter(|ids| ids.sampled) else { return };
        let end = r.ended.map_or_else(|| export::unix_nanos(SystemTime::now()), time_of_day);
        self.pipeline.push_served(ids, end, r, self.transport);
    }
}

#[derive(Debug)]
pub struct ClientSpan {
    tracing: Tracing,
    ids: SpanIds,
    name: String,
    start: SystemTime,
}

impl ClientSpan {
    /// The `traceparent` that makes this span the parent of the server's.
    pub fn traceparent(&self) -> TraceParent {
        self.ids.traceparent()
    }

    /// Ends the span now, as failed with `error` when given.
    pub fn end(self, attributes: Vec<(&'static str, String)>, error: Option<String>) {
        if !self.ids.sampled {
            return;
        }
        let now = SystemTime::now();
        let end = export::unix_nanos(now);
        let ids = &self.ids;
        self.tracing.record(&Span {
            trace_id: &ids.trace_id,
            span_id: &ids.span_id,
            parent: ids.parent.as_ref(),
            trace_state: ids.tracestate.as_deref(),
            kind: Kind::Client,
            end,
            duration: now.duration_since(self.start).unwrap_or_default(),
            what: What::Command { name: &self.name, attributes: &attributes, error: error.as_deref() },
        });
    }
}

#[cfg(test)]
mod tests {
    use opentelemetry::trace::{SamplingDecision, SpanKind, TraceId};
    use opentelemetry_sdk::trace::{Sampler, ShouldSample};

    /// A request id's digits are what `Display` writes, for every length and sign.
    #[test]
    fn request_ids_are_written_as_display_writes_them() {
        for n in [
            0,
            7,
            -7,
            10,
            99,
            100,
            101,
            999,
            1000,
            12_345,
            -12_345,
            1_234_567,
            i64::MAX,
            i64::MIN,
            -1,
            -10,
            -100,
        ] {
            let mut digits = [0u8; 20];
            assert_eq!(super::export::encode::decimal(n, &mut digits), n.to_string().as_bytes());
        }
        for n in (-1_000..100_000).chain((0..64).map(|shift| 1i64 << shift)) {
            let mut digits = [0u8; 20];
            assert_eq!(super::export::encode::decimal(n, &mut digits), n.to_string().as_bytes());
        }
    }

    /// An instant the server read turns into the time of day the clock would have said then,
    /// on either side of the thread's anchor and after it has aged.
    #[test]
    fn an_instant_becomes_the_time_of_day_it_was() {
        use std::time::{Duration, Instant, SystemTime};
        let now = || super::export::unix_nanos(SystemTime::now());
        let close = |a: u64, b: u64| {
            assert!(a.abs_diff(b) < 20_000_000, "{a} against {b}");
        };
        let (instant, time) = (Instant::now(), now());
        close(super::time_of_day(instant), time);
        std::thread::sleep(Duration::from_millis(30));
        close(super::time_of_day(Instant::now()), now());
        close(super::time_of_day(instant), time);
        std::thread::sleep(super::ANCHOR_FOR + Duration::from_millis(20));
        close(super::time_of_day(Instant::now()), now());
        // Older than the anchor by more than it lasts: read again, and still right.
        close(super::time_of_day(instant), time);
    }

    /// mcp-server's ratio decision is OpenTelemetry's: a trace sampled at one hop by mcpkit is
    /// sampled by an SDK's `TraceIdRatioBased` at another.
    #[test]
    fn the_ratio_decision_is_the_sdks() {
        let mut state = 0x1234_5678_9abc_def0u64;
        for ratio in [0.0, 0.01, 0.3, 0.5, 0.99, 1.0] {
            let sdk = Sampler::TraceIdRatioBased(ratio);
            for _ in 0..500 {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let mut id = [0u8; 16];
                id[..8].copy_from_slice(&state.to_le_bytes());
                id[8..].copy_from_slice(&state.rotate_left(29).to_be_bytes());
                let theirs =
                    sdk.should_sample(None, TraceId::from_bytes(id), "x", &SpanKind::Server, &[], &[]);
                let ours = mcp_server::observe::sampled_by_ratio(&id, ratio);
                assert_eq!(
                    ours,
                    theirs.decision == SamplingDecision::RecordAndSample,
                    "ratio {ratio}, id {id:?}"
                );
            }
        }
    }

    #[test]
    fn the_resource_names_the_service_as_the_variables_say() {
        let of = |service: &str, by_env: bool, attributes: Option<&str>| {
            let attributes = attributes.map(str::to_owned);
            super::resource_attributes(service, by_env, move |name| {
                (name == "OTEL_RESOURCE_ATTRIBUTES").then(|| attributes.clone()).flatten()
            })
        };
        let get =
            |all: &[(String, String)], key: &str| all.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
        let plain = of("mcpkit", false, None);
        assert_eq!(get(&plain, "service.name").as_deref(), Some("mcpkit"));
        assert_eq!(get(&plain, "telemetry.sdk.language").as_deref(), Some("rust"));
        let listed = of("mcpkit", false, Some("service.name=billing,deployment.environment=prod%20eu,bad"));
        assert_eq!(get(&listed, "service.name").as_deref(), Some("billing"), "the attributes' own name");
        assert_eq!(get(&listed, "deployment.environment").as_deref(), Some("prod eu"));
        let named = of("from-env", true, Some("service.name=billing"));
        assert_eq!(get(&named, "service.name").as_deref(), Some("from-env"), "OTEL_SERVICE_NAME wins");
    }

    #[test]
    fn the_sampler_variables_are_read() {
        let of = |sampler: Option<&str>, arg: Option<&str>| {
            super::sampler_ratio_of(|name| match name {
                "OTEL_TRACES_SAMPLER" => sampler.map(str::to_owned),
                "OTEL_TRACES_SAMPLER_ARG" => arg.map(str::to_owned),
                _ => None,
            })
        };
        assert_eq!(of(None, None), Ok(1.0));
        assert_eq!(of(Some("parentbased_traceidratio"), Some("0.1")), Ok(0.1));
        assert_eq!(of(Some("traceidratio"), None), Ok(1.0));
        assert_eq!(of(Some("always_off"), None), Ok(0.0));
        assert_eq!(of(Some("parentbased_always_on"), Some("0.2")), Ok(1.0));
        assert!(of(Some("traceidratio"), Some("2")).is_err());
        assert!(of(Some("jaeger_remote"), None).unwrap_err().contains("jaeger_remote"));
    }
}
