//! OpenTelemetry traces for mcpkit servers, clients and gateways.
//!
//! [`Tracing`] is an [`Observer`](mcp_server::Observer) that traces: give it to a server with
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
//! `…_TIMEOUT`, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`); [`Tracing::from_env`] gives
//! nothing when no endpoint is set (or `OTEL_SDK_DISABLED=true`, `OTEL_TRACES_EXPORTER=none`),
//! and then no observer is set and the request path does none of this.

use std::time::SystemTime;

use mcp_server::Observer;
use mcp_server::observe::{Observed, Outcome, SpanIds};
use mcp_types::trace::TraceParent;
use opentelemetry::trace::{
    Span as _, SpanContext, SpanId, SpanKind, Status, TraceContextExt, TraceFlags, TraceId, TraceState,
    Tracer as _, TracerProvider as _,
};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::trace::{Sampler, SdkTracer, SdkTracerProvider};

/// Traces exported over OTLP.
#[derive(Debug, Clone)]
pub struct Tracing {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
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
    /// `Ok(None)` when no OTLP endpoint is configured or tracing is switched off.
    pub fn from_env(service: &str, transport: &'static str) -> Result<Option<Tracing>, String> {
        let disabled = env("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"))
            || env("OTEL_TRACES_EXPORTER").is_some_and(|v| v.eq_ignore_ascii_case("none"));
        let endpoint =
            env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").or_else(|| env("OTEL_EXPORTER_OTLP_ENDPOINT"));
        if disabled || endpoint.is_none() {
            return Ok(None);
        }
        if let Some(protocol) =
            env("OTEL_EXPORTER_OTLP_PROTOCOL").or_else(|| env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"))
            && protocol != "http/protobuf"
        {
            return Err(format!(
                "OTEL_EXPORTER_OTLP_PROTOCOL={protocol}: mcpkit exports traces as http/protobuf only"
            ));
        }
        let ratio = sampler_ratio()?;
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .build()
            .map_err(|e| format!("the OTLP exporter: {e}"))?;
        let mut resource = opentelemetry_sdk::Resource::builder();
        if env("OTEL_SERVICE_NAME").is_none() {
            resource = resource.with_service_name(service.to_owned());
        }
        // The sampling decision is made once, before a span is built (`SpanIds::sampled`): the
        // SDK follows it.
        let provider = SdkTracerProvider::builder()
            .with_sampler(Sampler::ParentBased(Box::new(Sampler::AlwaysOn)))
            .with_batch_exporter(exporter)
            .with_resource(resource.build())
            .build();
        Ok(Some(Self::with_provider(provider, transport).with_ratio(ratio)))
    }

    /// Traces recorded by `provider` (your own exporter and processors), every new trace
    /// sampled.
    pub fn with_provider(provider: SdkTracerProvider, transport: &'static str) -> Tracing {
        let tracer = provider.tracer("mcpkit");
        Tracing { provider, tracer, transport, ratio: 1.0 }
    }

    /// The same, recording `ratio` (0 to 1) of the new traces (decided by trace id, as
    /// OpenTelemetry's `TraceIdRatioBased` does); an unsampled request costs no span at all.
    pub fn with_ratio(mut self, ratio: f64) -> Tracing {
        self.ratio = ratio.clamp(0.0, 1.0);
        self
    }

    /// Exports what is still buffered and stops; spans ended after this are dropped.
    pub fn shutdown(&self) {
        if let Err(e) = self.provider.shutdown() {
            tracing::debug!("the trace provider did not shut down cleanly: {e}");
        }
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

    fn record(&self, span: Finished<'_>) {
        let Finished { name, kind, ids, start, end, attributes, error } = span;
        if !ids.sampled {
            return;
        }
        let flags = if ids.sampled { TraceFlags::SAMPLED } else { TraceFlags::default() };
        let state = ids.tracestate.as_deref().and_then(|s| s.parse::<TraceState>().ok()).unwrap_or_default();
        let parent = match ids.parent {
            Some(parent) => Context::new().with_remote_span_context(SpanContext::new(
                TraceId::from_bytes(ids.trace_id),
                SpanId::from_bytes(parent),
                flags,
                true,
                state,
            )),
            None => Context::new(),
        };
        let mut span = self
            .tracer
            .span_builder(name)
            .with_kind(kind)
            .with_trace_id(TraceId::from_bytes(ids.trace_id))
            .with_span_id(SpanId::from_bytes(ids.span_id))
            .with_start_time(start)
            .with_attributes(attributes)
            .start_with_context(&self.tracer, &parent);
        if let Some(error) = error {
            span.set_status(Status::error(error));
        }
        span.end_with_timestamp(end);
    }
}

/// A span that is over, to record.
struct Finished<'a> {
    name: String,
    kind: SpanKind,
    ids: &'a SpanIds,
    start: SystemTime,
    end: SystemTime,
    attributes: Vec<KeyValue>,
    error: Option<String>,
}

/// The span name of a request: its method, and the tool or prompt it names.
fn span_name(method: &str, name: Option<&str>) -> String {
    match name {
        Some(name) => format!("{method} {name}"),
        None => method.to_owned(),
    }
}

impl Observer for Tracing {
    fn traces(&self) -> bool {
        true
    }

    fn trace_ratio(&self) -> f64 {
        self.ratio
    }

    fn finished(&self, r: &Observed<'_>) {
        // Not sampled: nothing is built (the caller's flag, or this trace's id outside the ratio).
        let Some(ids) = r.span.filter(|ids| ids.sampled) else { return };
        let end = SystemTime::now();
        let start = end.checked_sub(r.duration).unwrap_or(end);
        let mut attributes = vec![
            KeyValue::new("mcp.method.name", r.method),
            KeyValue::new("network.transport", self.transport),
            KeyValue::new(
                "jsonrpc.request.id",
                match r.id {
                    mcp_types::RequestId::Number(n) => n.to_string(),
                    mcp_types::RequestId::String(s) => s.clone(),
                },
            ),
        ];
        match (r.method, r.name) {
            ("tools/call", Some(name)) => {
                attributes.push(KeyValue::new("gen_ai.tool.name", name.to_owned()));
                attributes.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
            }
            ("prompts/get", Some(name)) => {
                attributes.push(KeyValue::new("gen_ai.prompt.name", name.to_owned()))
            }
            _ => {}
        }
        if let Some(version) = r.version {
            attributes.push(KeyValue::new("mcp.protocol.version", version.as_str()));
        }
        if let Some(session) = r.session {
            attributes.push(KeyValue::new("mcp.session.id", session.to_owned()));
        }
        let error = match r.outcome {
            Outcome::Success => None,
            Outcome::ToolError => {
                attributes.push(KeyValue::new("error.type", "tool_error"));
                Some("the tool reported an error (isError)".to_owned())
            }
            Outcome::Error { code, .. } => {
                attributes.push(KeyValue::new("error.type", code.to_string()));
                attributes.push(KeyValue::new("rpc.response.status_code", code.to_string()));
                Some(format!("JSON-RPC error {code}"))
            }
            Outcome::Cancelled => {
                attributes.push(KeyValue::new("error.type", "cancelled"));
                Some("cancelled".to_owned())
            }
        };
        let name = span_name(r.method, r.name);
        self.record(Finished { name, kind: SpanKind::Server, ids, start, end, attributes, error });
    }
}

/// A client's span around its requests: send [`ClientSpan::traceparent`] with each (in
/// `_meta`), then [`end`](ClientSpan::end) it.
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
        let attributes = attributes.into_iter().map(|(k, v)| KeyValue::new(k, v)).collect();
        self.tracing.record(Finished {
            name: self.name,
            kind: SpanKind::Client,
            ids: &self.ids,
            start: self.start,
            end: SystemTime::now(),
            attributes,
            error,
        });
    }
}

#[cfg(test)]
mod tests {
    use opentelemetry::trace::{SamplingDecision, SpanKind, TraceId};
    use opentelemetry_sdk::trace::{Sampler, ShouldSample};

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
