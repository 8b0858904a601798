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

use crate::operations::BUCKETS;
use crate::otlp_target::{env, positive_millis};
use crate::{Metrics, OtlpTarget};

/// Where and how often the metrics are pushed.
#[derive(Clone, Debug)]
pub struct OtlpExport {
    target: OtlpTarget,
    interval: Duration,
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
        let points = |table: &crate::operations::Operations| -> Vec<HistogramDataPoint> {
            table
                .snapshot()
                .into_iter()
                .map(|(attributes, (counts, sum))| {
                    let attributes = attributes.into_iter().map(|(k, v)| attribute(k, v)).collect();
                    stamp.histogram(attributes, &counts, sum)
                })
                .collect()
        };
        metrics.push(metric(
            "mcp.server.operation.duration",
            "MCP request duration as observed on the server, by method, tool or prompt, and outcome",
            "s",
            histogram(points(&inner.operations)),
        ));
        // A client's requests, once it sent any (`client.rs`).
        let client: Vec<HistogramDataPoint> = inner.client.tables().into_iter().flat_map(points).collect();
        if !client.is_empty() {
            metrics.push(metric(
                "mcp.client.operation.duration",
                "MCP request duration as observed by the client, by method, tool or prompt, and outcome",
                "s",
                histogram(client),
            ));
        }
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
            let gauges: [(&str, &str, Field); 3] = [
                ("mcp.gateway.upstream.in_flight", "Requests in flight to an upstream", |s| s.in_flight),
                (
                    "mcp.gateway.upstream.waiting",
                    "Requests waiting for a slot of an upstream (its max_concurrency reached)",
                    |s| s.waiting,
                ),
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
            let client = match export.target.client() {
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
                waiting: 2,
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
        let metric::Data::Gauge(waiting) = find(&request, "mcp.gateway.upstream.waiting") else { panic!() };
        assert_eq!(waiting.data_points[0].value, Some(number_data_point::Value::AsInt(2)));
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
}
