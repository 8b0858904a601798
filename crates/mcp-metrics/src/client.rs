//! The client's side: `mcp_client_operation_duration_seconds` (OTLP:
//! `mcp.client.operation.duration`), a histogram of the requests a client sends, by method, tool
//! or prompt, transport and outcome — [`Metrics`] as mcp-client's [`RequestObserver`]. The
//! outcome keeps the layers apart as the server's does: `success`, `tool_error`, `jsonrpc_error`
//! (`error_type` the code), `http_refused` (the status), `timeout`, `cancelled`,
//! `transport_error`.
//!
//! The names are the caller's and the codes the servers': a client may call anything and be
//! answered anything, so past [`MAX_NAMES`] series in a table a new label set is counted with
//! its tool or prompt name and its error code or status as `other` (the cardinality stays
//! bounded whatever is called or answered; a series already made keeps counting).

use std::sync::Arc;
use std::time::Instant;

use mcp_client::observe::{FinishedRequest, RequestObserver, RequestOutcome, RequestWatch, StartedRequest};
use mcp_server::observe::method_label;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::DescriptorEncoder;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Unit;

use crate::Metrics;
use crate::operations::{ErrorType, Labels, Operations};

/// The series past which a tool or prompt name not seen yet is counted as `other`.
pub const MAX_NAMES: usize = 1_000;

/// The client's histograms, one per transport (`network.transport` is each table's own).
#[derive(Debug)]
pub(crate) struct ClientOperations {
    pipe: Operations,
    tcp: Operations,
}

impl ClientOperations {
    pub(crate) fn new() -> ClientOperations {
        ClientOperations {
            pipe: Operations::bounded("pipe", MAX_NAMES),
            tcp: Operations::bounded("tcp", MAX_NAMES),
        }
    }

    /// Both tables.
    pub(crate) fn tables(&self) -> [&Operations; 2] {
        [&self.pipe, &self.tcp]
    }
}

impl Collector for ClientOperations {
    /// Nothing until a request was counted: a server's exposition has no client family.
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        if self.tables().iter().all(|t| t.is_empty()) {
            return Ok(());
        }
        let mut family = encoder.encode_descriptor(
            "mcp_client_operation_duration",
            "MCP request duration as observed by the client, by method, tool or prompt, and outcome (success, tool_error, jsonrpc_error, http_refused, timeout, cancelled, transport_error)",
            Some(&Unit::Seconds),
            MetricType::Histogram,
        )?;
        for table in self.tables() {
            table.encode_series(&mut family)?;
        }
        Ok(())
    }
}

impl RequestObserver for Metrics {
    fn start(&self, request: &StartedRequest<'_>) -> Option<Box<dyn RequestWatch>> {
        Some(Box::new(Watch {
            client: self.inner.clone(),
            method: method_label(request.method),
            name: request.name.map(str::to_owned),
            tcp: request.transport == "tcp",
            started: Instant::now(),
        }))
    }
}

/// One request being timed.
struct Watch {
    client: Arc<crate::Inner>,
    method: &'static str,
    name: Option<String>,
    tcp: bool,
    started: Instant,
}

impl RequestWatch for Watch {
    fn finish(self: Box<Self>, finished: &FinishedRequest<'_>) {
        let duration = self.started.elapsed();
        let (outcome, error) = match finished.outcome {
            RequestOutcome::Success => ("success", ErrorType::None),
            RequestOutcome::ToolError => ("tool_error", ErrorType::Tool),
            RequestOutcome::Error { code } => ("jsonrpc_error", ErrorType::Code(code)),
            RequestOutcome::Http { status } => ("http_refused", ErrorType::Status(status)),
            RequestOutcome::Timeout => ("timeout", ErrorType::Named("timeout")),
            RequestOutcome::Cancelled => ("cancelled", ErrorType::Cancelled),
            _ => ("transport_error", ErrorType::Named("transport_error")),
        };
        let name = self.name.as_deref().unwrap_or_default();
        let (tool, prompt) = match self.method {
            "tools/call" => (name, ""),
            "prompts/get" => ("", name),
            _ => ("", ""),
        };
        let labels = Labels { method: self.method, tool, prompt, version: "", outcome, error };
        let client = &self.client.client;
        let table = if self.tcp { &client.tcp } else { &client.pipe };
        table.observe(&labels, duration);
    }
}

#[cfg(test)]
mod tests {
    use mcp_client::observe::{FinishedRequest, RequestObserver, RequestOutcome, StartedRequest};
    use mcp_types::trace::TraceContext;

    use super::*;

    fn request(
        metrics: &Metrics,
        method: &str,
        name: Option<&str>,
        transport: &'static str,
        outcome: RequestOutcome,
    ) {
        let context = TraceContext::default();
        let watch = metrics.start(&StartedRequest::new(method, name, &context, transport)).unwrap();
        assert!(watch.traceparent().is_none(), "metrics send no span of their own");
        watch.finish(&FinishedRequest::new(None, outcome));
    }

    /// The line of the `_count` sample whose labels include all of `labels`.
    fn count(text: &str, labels: &[&str]) -> Option<u64> {
        text.lines()
            .find(|l| {
                l.starts_with("mcp_client_operation_duration_seconds_count{")
                    && labels.iter().all(|x| l.contains(x))
            })
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|n| n.parse().ok())
    }

    #[test]
    fn a_clients_requests_are_counted_by_outcome_and_transport_the_layers_apart() {
        let metrics = Metrics::new("tcp");
        assert!(!metrics.encode().contains("mcp_client"), "no client family before a request");
        request(&metrics, "tools/call", Some("echo"), "tcp", RequestOutcome::Success);
        request(&metrics, "tools/call", Some("echo"), "tcp", RequestOutcome::Success);
        request(&metrics, "tools/call", Some("echo"), "pipe", RequestOutcome::ToolError);
        request(&metrics, "tools/call", Some("echo"), "tcp", RequestOutcome::Error { code: -32602 });
        request(&metrics, "prompts/get", Some("poem"), "tcp", RequestOutcome::Http { status: 503 });
        request(&metrics, "tools/list", None, "tcp", RequestOutcome::Timeout);
        request(&metrics, "tools/call", Some("slow"), "tcp", RequestOutcome::Cancelled);
        request(&metrics, "vendor/thing", None, "tcp", RequestOutcome::Failed);
        let text = metrics.encode();
        let echo = r#"gen_ai_tool_name="echo""#;
        assert_eq!(
            count(&text, &[echo, r#"outcome="success""#, r#"network_transport="tcp""#]),
            Some(2),
            "{text}"
        );
        assert_eq!(
            count(&text, &[echo, r#"outcome="tool_error""#, r#"network_transport="pipe""#]),
            Some(1),
            "{text}"
        );
        assert_eq!(
            count(&text, &[echo, r#"outcome="jsonrpc_error""#, r#"error_type="-32602""#]),
            Some(1),
            "{text}"
        );
        let poem = r#"gen_ai_prompt_name="poem""#;
        assert_eq!(
            count(&text, &[poem, r#"outcome="http_refused""#, r#"error_type="503""#]),
            Some(1),
            "{text}"
        );
        assert_eq!(
            count(&text, &[r#"mcp_method_name="tools/list""#, r#"outcome="timeout""#]),
            Some(1),
            "{text}"
        );
        assert_eq!(
            count(&text, &[r#"gen_ai_tool_name="slow""#, r#"outcome="cancelled""#]),
            Some(1),
            "{text}"
        );
        assert_eq!(
            count(&text, &[r#"mcp_method_name="other""#, r#"outcome="transport_error""#]),
            Some(1),
            "{text}"
        );
        assert_eq!(
            text.matches("# TYPE mcp_client_operation_duration_seconds histogram").count(),
            1,
            "one family"
        );
        assert!(!text.contains("mcp_server_operation_duration_seconds_count"), "the server's side untouched");

        let body = metrics.otlp_body("svc");
        let request: opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest =
            prost::Message::decode(body.as_slice()).unwrap();
        let names: Vec<&str> =
            request.resource_metrics[0].scope_metrics[0].metrics.iter().map(|m| m.name.as_str()).collect();
        assert!(names.contains(&"mcp.client.operation.duration"), "{names:?}");
    }

    #[test]
    fn names_past_the_limit_are_counted_as_other() {
        let metrics = Metrics::new("tcp");
        for n in 0..MAX_NAMES {
            request(&metrics, "tools/call", Some(&format!("t{n}")), "tcp", RequestOutcome::Success);
        }
        request(&metrics, "tools/call", Some("one-too-many"), "tcp", RequestOutcome::Success);
        request(&metrics, "tools/call", Some("another"), "tcp", RequestOutcome::Success);
        request(&metrics, "tools/call", Some("t7"), "tcp", RequestOutcome::Success);
        // A server answering with ever new codes: past the limit, counted as `other` too.
        for code in 0..50 {
            request(&metrics, "tools/list", None, "tcp", RequestOutcome::Error { code: -40_000 - code });
        }
        let text = metrics.encode();
        assert!(!text.contains("one-too-many") && !text.contains("another"), "bounded");
        assert!(!text.contains("-40001"), "codes bounded too");
        assert_eq!(
            count(&text, &[r#"mcp_method_name="tools/list""#, r#"error_type="other""#]),
            Some(50),
            "counted, as other"
        );
        assert_eq!(count(&text, &[r#"gen_ai_tool_name="other""#]), Some(2), "counted, as other");
        assert_eq!(count(&text, &[r#"gen_ai_tool_name="t7""#]), Some(2), "a name with a series keeps it");
    }
}
