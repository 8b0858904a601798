//! The same metrics pushed over OTLP/HTTP (protobuf) to a collector, for operators whose pipeline
//! takes OTLP rather than scraping: every interval, cumulative, the instruments named as
//! OpenTelemetry names them — the Prometheus name is the OTLP one with `_` for `.` and its unit
//! or `_total` added (`mcp.server.operation.duration` ↔ `mcp_server_operation_duration_seconds`).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, InstrumentationScope, KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::{
    AggregationTemporality, Gauge, Histogram, HistogramDataPoint, Metric, NumberDataPoint, ResourceMetrics,
    ScopeMetrics, Sum, metric, number_data_point,
};
use opentelemetry_proto::tonic::resource::v1::Resource;

use crate::Metrics;
use crate::operations::BUCKETS;

/// Where one OpenTelemetry signal (`metrics`, `traces`) is pushed over OTLP/HTTP (protobuf), as
/// the standard variables say — shared by these metrics and mcp-trace's spans, so both read the
/// `OTEL_*` variables the same way.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct OtlpTarget {
    /// The full URL (`…/v1/metrics`, `…/v1/traces`).
    pub url: String,
    /// Extra request headers (often credentials: never log their values).
    pub headers: Vec<(String, String)>,
    /// How long one push may take.
    pub timeout: Duration,
    /// The `service.name` of the resource.
    pub service: String,
}

impl OtlpTarget {
    /// Pushes to `url` (the full URL) as the service `service`, without extra headers, each
    /// push allowed 10 s.
    pub fn new(url: impl Into<String>, service: impl Into<String>) -> OtlpTarget {
        OtlpTarget {
            url: url.into(),
            headers: Vec::new(),
            timeout: Duration::from_secs(10),
            service: service.into(),
        }
    }

    /// The target of `signal` (`"metrics"` or `"traces"`): `OTEL_EXPORTER_OTLP_{SIGNAL}_ENDPOINT`
    /// (the full URL) or `OTEL_EXPORTER_OTLP_ENDPOINT` (`/v1/{signal}` appended), the headers of
    /// `OTEL_EXPORTER_OTLP_HEADERS` and `OTEL_EXPORTER_OTLP_{SIGNAL}_HEADERS`, the timeout of
    /// `OTEL_EXPORTER_OTLP_{SIGNAL}_TIMEOUT` or `OTEL_EXPORTER_OTLP_TIMEOUT` (milliseconds,
    /// default 10,000), `OTEL_SERVICE_NAME` (else `service`). `Ok(None)` without an endpoint, or
    /// with `OTEL_{SIGNAL}_EXPORTER=none` or `OTEL_SDK_DISABLED=true`; an error for a protocol
    /// other than `http/protobuf` or a malformed variable.
    pub fn from_env(signal: &str, service: &str) -> Result<Option<OtlpTarget>, String> {
        Self::from_vars(signal, service, env)
    }

    fn from_vars(
        signal: &str,
        service: &str,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<OtlpTarget>, String> {
        let upper = signal.to_ascii_uppercase();
        let disabled = env("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"))
            || env(&format!("OTEL_{upper}_EXPORTER")).is_some_and(|v| v.eq_ignore_ascii_case("none"));
        let url = match (
            env(&format!("OTEL_EXPORTER_OTLP_{upper}_ENDPOINT")),
            env("OTEL_EXPORTER_OTLP_ENDPOINT"),
        ) {
            (Some(url), _) => url,
            (None, Some(base)) => format!("{}/v1/{signal}", base.trim_end_matches('/')),
            (None, None) => return Ok(None),
        };
        if disabled {
            return Ok(None);
        }
        if let Some(protocol) = env(&format!("OTEL_EXPORTER_OTLP_{upper}_PROTOCOL"))
            .or_else(|| env("OTEL_EXPORTER_OTLP_PROTOCOL"))
            && protocol != "http/protobuf"
        {
            return Err(format!(
                "OTEL_EXPORTER_OTLP_PROTOCOL={protocol}: mcpkit exports {signal} as http/protobuf only"
            ));
        }
        let mut headers = Vec::new();
        for name in ["OTEL_EXPORTER_OTLP_HEADERS".to_owned(), format!("OTEL_EXPORTER_OTLP_{upper}_HEADERS")] {
            if let Some(list) = env(&name) {
                headers.extend(parse_headers(&list).map_err(|e| format!("{name}: {e}"))?);
            }
        }
        let timeout_var = format!("OTEL_EXPORTER_OTLP_{upper}_TIMEOUT");
        let timeout = match env(&timeout_var)
            .map(|v| (timeout_var.as_str(), v))
            .or_else(|| env("OTEL_EXPORTER_OTLP_TIMEOUT").map(|v| ("OTEL_EXPORTER_OTLP_TIMEOUT", v)))
        {
            None => Duration::from_secs(10),
            Some((name, ms)) => Duration::from_millis(positive_millis(name, &ms)?),
        };
        let service = env("OTEL_SERVICE_NAME").unwrap_or_else(|| service.to_owned());
        Ok(Some(OtlpTarget { url, headers, timeout, service }))
    }
}

/// A variable holding a positive number of milliseconds.
pub fn positive_millis(name: &str, value: &str) -> Result<u64, String> {
    match value.trim().parse::<u64>() {
        Ok(ms) if ms > 0 => Ok(ms),
        _ => Err(format!("{name}={value}: not a positive number of milliseconds")),
    }
}

/// Where and how often the metrics are pushed.
#[derive(Clone, Debug)]
pub struct OtlpExport {
    target: OtlpTarget,
    interval: Duration,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

impl OtlpExport {
    /// Pushes to `url` (the full URL, `…/v1/metrics`) every `interval`, as the service
    /// `service`.
    pub fn new(url: impl Into<String>, interval: Duration, service: impl Into<String>) -> OtlpExport {
        OtlpExport { target: OtlpTarget::new(url, service), interval }
    }

    /// What the standard variables ask for ([`OtlpTarget::from_env`] of `metrics`) and
    /// `OTEL_METRIC_EXPORT_INTERVAL` (milliseconds, default 60,000).
    pub fn from_env(service: &str) -> Result<Option<OtlpExport>, String> {
        let Some(target) = OtlpTarget::from_env("metrics", service)? else { return Ok(None) };
        let interval = match env("OTEL_METRIC_EXPORT_INTERVAL") {
            None => Duration::from_secs(60),
            Some(ms) => Duration::from_millis(positive_millis("OTEL_METRIC_EXPORT_INTERVAL", &ms)?),
        };
        Ok(Some(OtlpExport { target, interval }))
    }

    /// Where it pushes.
    pub fn url(&self) -> &str {
        &self.target.url
    }
}

/// `key=value,key2=value2`, values percent-decoded (W3C Baggage's form, as the variables use).
fn parse_headers(list: &str) -> Result<Vec<(String, String)>, String> {
    list.split(',')
        .filter(|pair| !pair.trim().is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').ok_or_else(|| "expected key=value pairs".to_owned())?;
            let value = percent_decode(value.trim())?;
            Ok((key.trim().to_owned(), value))
        })
        .collect()
}

/// `%XX` escapes decoded (the form of the `OTEL_*` list variables).
pub fn percent_decode(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3).ok_or("a truncated %-escape")?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| "a malformed %-escape")?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "a value that is not UTF-8".to_owned())
}

/// The running export: pushes every interval until [`OtlpExporter::shutdown`], which pushes a
/// last time.
#[derive(Debug)]
pub struct OtlpExporter {
    stop: tokio::sync::watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl OtlpExporter {
    /// Pushes what was counted since the last push, then stops (at most 5 s).
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let _ = tokio::time::timeout(Duration::from_secs(5), self.task).await;
    }
}

fn nanos(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)).unwrap_or(0)
}

fn attribute(key: &str, value: impl Into<String>) -> KeyValue {
    KeyValue {
        key: key.to_owned(),
        value: Some(AnyValue { value: Some(any_value::Value::StringValue(value.into())) }),
    }
}

/// One point in time for every data point of an export.
struct Stamp {
    start: u64,
    now: u64,
}

impl Stamp {
    fn number(&self, attributes: Vec<KeyValue>, value: i64) -> NumberDataPoint {
        NumberDataPoint {
            attributes,
            start_time_unix_nano: self.start,
            time_unix_nano: self.now,
            value: Some(number_data_point::Value::AsInt(value)),
            ..Default::default()
        }
    }

    fn histogram(&self, attributes: Vec<KeyValue>, counts: &[u64], sum: f64) -> HistogramDataPoint {
        HistogramDataPoint {
            attributes,
            start_time_unix_nano: self.start,
            time_unix_nano: self.now,
            count: counts.iter().sum(),
            sum: Some(sum),
            bucket_counts: counts.to_vec(),
            explicit_bounds: BUCKETS.to_vec(),
            ..Default::default()
        }
    }
}

fn metric(name: &str, description: &str, unit: &str, data: metric::Data) -> Metric {
    Metric {
        name: name.to_owned(),
        description: description.to_owned(),
        unit: unit.to_owned(),
        data: Some(data),
        ..Default::default()
    }
}

fn gauge(points: Vec<NumberDataPoint>) -> metric::Data {
    metric::Data::Gauge(Gauge { data_points: points })
}

fn counter(points: Vec<NumberDataPoint>) -> metric::Data {
    metric::Data::Sum(Sum {
        data_points: points,
        aggregation_temporality: AggregationTemporality::Cumulative as i32,
        is_monotonic: true,
    })
}

fn histogram(points: Vec<HistogramDataPoint>) -> metric::Data {
    metric::Data::Histogram(Histogram {
        data_points: points,
        aggregation_temporality: AggregationTemporality::Cumulative as i32,
    })
}

fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl Metrics {
    /// Everything counted so far, as an OTLP export request (protobuf) for the service
    /// `service`.
    pub fn otlp_body(&self, service: &str) -> Vec<u8> {
        prost::Message::encode_to_vec(&self.otlp_request(service))
    }

    fn otlp_request(&self, service: &str) -> ExportMetricsServiceRequest {
        let inner = &self.inner;
        let stamp = Stamp { start: nanos(inner.started), now: nanos(SystemTime::now()) };
        let mut metrics = Vec::new();
        let operations = inner
            .operations
            .snapshot()
            .into_iter()
            .map(|(attributes, (counts, sum))| {
                let attributes = attributes.into_iter().map(|(k, v)| attribute(k, v)).collect();
                stamp.histogram(attributes, &counts, sum)
            })
            .collect();
        metrics.push(metric(
            "mcp.server.operation.duration",
            "MCP request duration as observed on the server, by method, tool or prompt, and outcome",
            "s",
            histogram(operations),
        ));
        for (name, description, value) in [
            ("mcp.server.requests_in_flight", "MCP requests being served", inner.in_flight.get()),
            ("mcp.server.sessions", "Open legacy (initialize) sessions", inner.sessions.get()),
            ("mcp.server.subscriptions", "Open subscriptions/listen streams", inner.subscriptions.get()),
        ] {
            metrics.push(metric(name, description, "1", gauge(vec![stamp.number(Vec::new(), value)])));
        }
        for (name, description, value) in [
            ("mcp.server.received_bytes", "Bytes of request bodies received", inner.received.get()),
            ("mcp.server.sent_bytes", "Bytes of response bodies sent", inner.sent.get()),
        ] {
            metrics.push(metric(
                name,
                description,
                "By",
                counter(vec![stamp.number(Vec::new(), int(value))]),
            ));
        }
        if let Some(upstreams) = &inner.upstreams {
            let samples = (upstreams.sample)();
            let of = |name: &str| vec![attribute("upstream", name)];
            let mut states = Vec::new();
            for s in &samples {
                for state in crate::UPSTREAM_STATES {
                    let attributes = vec![attribute("upstream", s.name.clone()), attribute("state", state)];
                    states.push(stamp.number(attributes, i64::from(state == s.state)));
                }
            }
            metrics.push(metric(
                "mcp.gateway.upstream.state",
                "An upstream's state: 1 for the state it is in",
                "1",
                gauge(states),
            ));
            type Field = fn(&crate::UpstreamSample) -> u64;
            let counters: [(&str, &str, Field); 3] = [
                ("mcp.gateway.upstream.restarts", "Reconnections of an upstream", |s| s.restarts),
                ("mcp.gateway.upstream.requests", "Requests sent to an upstream", |s| s.requests),
                (
                    "mcp.gateway.upstream.failures",
                    "Requests to an upstream that timed out or failed on the transport",
                    |s| s.failures,
                ),
            ];
            for (name, description, field) in counters {
                let points = samples.iter().map(|s| stamp.number(of(&s.name), int(field(s)))).collect();
                metrics.push(metric(name, description, "1", counter(points)));
            }
            let gauges: [(&str, &str, Field); 2] = [
                ("mcp.gateway.upstream.in_flight", "Requests in flight to an upstream", |s| s.in_flight),
                (
                    "mcp.gateway.upstream.circuit_open",
                    "1 while an upstream's circuit breaker fails its requests fast",
                    |s| u64::from(s.circuit_open),
                ),
            ];
            for (name, description, field) in gauges {
                let points = samples.iter().map(|s| stamp.number(of(&s.name), int(field(s)))).collect();
                metrics.push(metric(name, description, "1", gauge(points)));
            }
            let durations = upstreams
                .durations
                .snapshot()
                .into_iter()
                .map(|(name, outcome, (counts, sum))| {
                    let attributes = vec![attribute("upstream", name), attribute("outcome", outcome)];
                    stamp.histogram(attributes, &counts, sum)
                })
                .collect();
            metrics.push(metric(
                "mcp.gateway.upstream.request.duration",
                "How long requests sent to an upstream took, answered or not",
                "s",
                histogram(durations),
            ));
        }
        ExportMetricsServiceRequest {
            resource_metrics: vec![ResourceMetrics {
                resource: Some(Resource {
                    attributes: vec![attribute("service.name", service)],
                    ..Default::default()
                }),
                scope_metrics: vec![ScopeMetrics {
                    scope: Some(InstrumentationScope {
                        name: "mcpkit".to_owned(),
                        version: env!("CARGO_PKG_VERSION").to_owned(),
                        ..Default::default()
                    }),
                    metrics,
                    ..Default::default()
                }],
                ..Default::default()
            }],
        }
    }

    /// Pushes the metrics as `export` says, in a task of the current runtime, until
    /// [`OtlpExporter::shutdown`]. A push that fails is logged (`tracing`, warn) and the next
    /// interval tries again; nothing queues up (each push carries the totals).
    pub fn export_otlp(&self, export: OtlpExport) -> OtlpExporter {
        let (stop, mut stopped) = tokio::sync::watch::channel(false);
        let metrics = self.clone();
        let task = tokio::spawn(async move {
            let client = match reqwest::Client::builder().timeout(export.target.timeout).build() {
                Ok(client) => client,
                Err(e) => {
                    tracing::warn!("metrics are not exported: the HTTP client: {e}");
                    return;
                }
            };
            loop {
                let last = tokio::select! {
                    () = tokio::time::sleep(export.interval) => false,
                    _ = stopped.changed() => true,
                };
                export.target.post(&client, metrics.otlp_body(&export.target.service), "the metrics").await;
                if last {
                    return;
                }
            }
        });
        OtlpExporter { stop, task }
    }
}

#[cfg(test)]
mod tests {
    use mcp_server::Observer;
    use mcp_server::observe::{Observed, Outcome};
    use mcp_types::RequestId;

    use super::*;

    fn find<'a>(request: &'a ExportMetricsServiceRequest, name: &str) -> &'a metric::Data {
        let metrics = &request.resource_metrics[0].scope_metrics[0].metrics;
        let found = metrics.iter().find(|m| m.name == name).unwrap_or_else(|| panic!("no {name}"));
        found.data.as_ref().unwrap()
    }

    fn text(kv: &KeyValue) -> (&str, &str) {
        match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
            Some(any_value::Value::StringValue(s)) => (kv.key.as_str(), s.as_str()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_export_carries_every_series_with_its_attributes() {
        let sample = || {
            vec![crate::UpstreamSample {
                name: "files".into(),
                state: "ready".into(),
                requests: 3,
                ..Default::default()
            }]
        };
        let metrics = Metrics::with_upstreams("tcp", sample);
        let id = RequestId::Number(1);
        let mut call = Observed::new(&id, "tools/call", Outcome::ToolError, Duration::from_millis(3));
        call.name = Some("echo");
        metrics.started("tools/call");
        metrics.finished(&call);
        metrics.upstream_request("files", Duration::from_millis(2), true);
        metrics.subscription(true);
        let body = metrics.otlp_body("svc");
        let request: ExportMetricsServiceRequest = prost::Message::decode(body.as_slice()).unwrap();
        let resource = request.resource_metrics[0].resource.as_ref().unwrap();
        assert_eq!(text(&resource.attributes[0]), ("service.name", "svc"));

        let metric::Data::Histogram(operations) = find(&request, "mcp.server.operation.duration") else {
            panic!()
        };
        let point = &operations.data_points[0];
        let attributes: Vec<(&str, &str)> = point.attributes.iter().map(text).collect();
        assert!(attributes.contains(&("gen_ai.tool.name", "echo")), "{attributes:?}");
        assert!(attributes.contains(&("outcome", "tool_error")), "{attributes:?}");
        assert!(attributes.contains(&("error.type", "tool_error")), "{attributes:?}");
        assert!(!attributes.iter().any(|(k, _)| *k == "gen_ai.prompt.name"), "empty values are left out");
        assert_eq!(point.count, 1);
        assert_eq!(point.bucket_counts.len(), point.explicit_bounds.len() + 1);
        assert_eq!(operations.aggregation_temporality, AggregationTemporality::Cumulative as i32);

        let metric::Data::Gauge(subscriptions) = find(&request, "mcp.server.subscriptions") else { panic!() };
        assert_eq!(subscriptions.data_points[0].value, Some(number_data_point::Value::AsInt(1)));
        let metric::Data::Sum(requests) = find(&request, "mcp.gateway.upstream.requests") else { panic!() };
        assert_eq!(requests.data_points[0].value, Some(number_data_point::Value::AsInt(3)));
        assert!(requests.is_monotonic);
        let metric::Data::Histogram(upstream) = find(&request, "mcp.gateway.upstream.request.duration")
        else {
            panic!()
        };
        let attributes: Vec<(&str, &str)> = upstream.data_points[0].attributes.iter().map(text).collect();
        assert_eq!(attributes, [("upstream", "files"), ("outcome", "answered")]);
        // The Prometheus exposition has the same upstream series.
        let text = metrics.encode();
        assert!(
            text.contains(r#"mcp_gateway_upstream_request_duration_seconds_count{upstream="files",outcome="answered"} 1"#),
            "{text}"
        );
    }

    #[test]
    fn each_signal_reads_its_own_variables_and_the_shared_ones() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned())
        };
        let shared = vars(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "api-key=a%20b"),
            ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x=1"),
            ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "2500"),
            ("OTEL_SERVICE_NAME", "svc"),
        ]);
        let traces = OtlpTarget::from_vars("traces", "default", shared).unwrap().unwrap();
        assert_eq!(traces.url, "http://collector:4318/v1/traces");
        assert_eq!(
            traces.headers,
            [("api-key".to_owned(), "a b".to_owned()), ("x".to_owned(), "1".to_owned())]
        );
        assert_eq!(traces.timeout, Duration::from_millis(2500));
        assert_eq!(traces.service, "svc");
        let metrics = OtlpTarget::from_vars("metrics", "default", shared).unwrap().unwrap();
        assert_eq!(metrics.url, "http://collector:4318/v1/metrics");
        assert_eq!(metrics.headers.len(), 1);
        assert_eq!(metrics.timeout, Duration::from_secs(10));
        let own =
            vars(&[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t/x"), ("OTEL_METRICS_EXPORTER", "none")]);
        assert_eq!(OtlpTarget::from_vars("traces", "d", own).unwrap().unwrap().url, "http://t/x");
        assert!(OtlpTarget::from_vars("metrics", "d", own).unwrap().is_none(), "no endpoint for metrics");
        let off = vars(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c"), ("OTEL_TRACES_EXPORTER", "none")]);
        assert!(OtlpTarget::from_vars("traces", "d", off).unwrap().is_none());
        assert!(OtlpTarget::from_vars("metrics", "d", off).unwrap().is_some());
        let grpc =
            vars(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c"), ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")]);
        assert!(OtlpTarget::from_vars("traces", "d", grpc).unwrap_err().contains("http/protobuf"));
        let bad =
            vars(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c"), ("OTEL_EXPORTER_OTLP_TIMEOUT", "soon")]);
        assert!(
            OtlpTarget::from_vars("traces", "d", bad).unwrap_err().contains("OTEL_EXPORTER_OTLP_TIMEOUT")
        );
    }

    #[test]
    fn headers_are_pairs_with_escapes() {
        let parsed = parse_headers("api-key=a%20b, x=1").unwrap();
        assert_eq!(parsed, [("api-key".to_owned(), "a b".to_owned()), ("x".to_owned(), "1".to_owned())]);
        assert!(parse_headers("novalue").is_err());
        assert!(parse_headers("k=%zz").is_err());
    }
}
