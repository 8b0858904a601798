//! Observability of the real binaries: traces, metrics and the request log.
//!
//! Traces: an OTLP/HTTP receiver in the test decodes what `mcpkit call`, `mcpkit gateway` and
//! its `mcpkit serve --stdio` upstream export, and one trace links the three.
//!
//! `--metrics`: a real Prometheus (Debian's `prometheus`, installed by
//! scripts/setup-prometheus.sh) scrapes a running `mcpkit gateway` in front of `mcpkit serve
//! --stdio`, and the series are read back through Prometheus's HTTP API. The outcome label
//! keeps the layers apart: a success, a tool error (`isError`), a JSON-RPC error and an HTTP
//! refusal are four series. `promtool check metrics` passes on the exposition.

mod gateway_support;
mod support;

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use gateway_support::{Dir, HttpGateway, eventually, stdio_upstream, through_url};
use mcp_testkit::process::ListeningProcess;

fn tool(name: &str) -> String {
    std::env::var(format!("MCPKIT_TEST_{}", name.to_uppercase()))
        .unwrap_or_else(|_| format!("/usr/bin/{name}"))
}

fn require(name: &str) -> String {
    let path = tool(name);
    assert!(
        std::path::Path::new(&path).is_file(),
        "{path} is missing: run scripts/setup-prometheus.sh (it installs Debian's prometheus package)"
    );
    path
}

/// GET `url` (with `Accept: accept`): its status (0 when unreachable) and body.
fn get(url: &str, accept: Option<&str>) -> (u16, String) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let client = reqwest::Client::builder().timeout(Duration::from_secs(10)).build().unwrap();
        let mut request = client.get(url);
        if let Some(accept) = accept {
            request = request.header("accept", accept);
        }
        match request.send().await {
            Ok(response) => {
                let status = response.status().as_u16();
                (status, response.text().await.unwrap_or_default())
            }
            Err(e) => (0, e.to_string()),
        }
    })
}

/// The address a Prometheus started with `--web.listen-address=127.0.0.1:0` took, from its log
/// line `msg="Listening on" address=…` (no port picked beforehand, which another process could
/// take first). Its log goes on being read (and dropped) so that it never blocks on a full pipe.
fn listening_address(log: std::process::ChildStderr) -> String {
    use std::io::BufRead;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut tx = Some(tx);
        // Bytes, not text: a line that is not UTF-8 must not end the reading (the pipe would
        // close, and Prometheus die of SIGPIPE at its next line).
        for line in std::io::BufReader::new(log).split(b'\n') {
            let Ok(line) = line else { break };
            let line = String::from_utf8_lossy(&line);
            if line.contains("msg=\"Listening on\"")
                && let Some(address) = line.split("address=").nth(1)
                && let Some(tx) = tx.take()
            {
                let _ = tx.send(address.split_whitespace().next().unwrap_or_default().to_owned());
            }
        }
    });
    rx.recv_timeout(Duration::from_secs(30)).expect("prometheus says where it listens")
}

/// The `metrics on URL` line of a process's stderr.
fn metrics_url(process: &ListeningProcess) -> String {
    eventually("the metrics address", Duration::from_secs(30), || {
        let stderr = process.stderr();
        stderr
            .lines()
            .find_map(|l| l.strip_prefix("metrics on ").map(str::to_owned))
            .ok_or_else(|| format!("no `metrics on URL` yet: {stderr}"))
    })
}

/// Prometheus, stopped when dropped.
struct Prometheus(std::process::Child);

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn prometheus_scrapes_the_gateway_and_the_outcomes_stay_apart() {
    let prometheus = require("prometheus");
    let promtool = require("promtool");
    let dir = Dir::new("metrics");
    let config = dir.write_config(&stdio_upstream("demo", ""));
    let gateway = HttpGateway(ListeningProcess::start(support::command(&[
        "gateway",
        "--config",
        config.to_str().unwrap(),
        "--http",
        "127.0.0.1:0",
        "--metrics",
        "127.0.0.1:0",
    ])));
    let metrics = metrics_url(&gateway);

    // One of each: a result, a tool's error, a JSON-RPC error, an HTTP refusal.
    let (code, _, err) = through_url(gateway.url(), &["call", "echo", "--arg", "text=hi"]);
    assert_eq!(code, 0, "{err}");
    let (code, _, _) = through_url(gateway.url(), &["call", "fail"]);
    assert_ne!(code, 0, "fail fails");
    let (code, _, _) = through_url(gateway.url(), &["call", "no_such_tool"]);
    assert_ne!(code, 0, "an unknown tool is an error");
    let (status, _) = gateway_support::http_get(gateway.authority(), "/mcp", "evil.example:1");
    assert_eq!(status, 403, "a foreign Host is refused by the transport");

    // The exposition passes promtool's checks (the classic format, which promtool reads).
    let (status, classic) = get(&metrics, None);
    assert_eq!(status, 200, "{classic}");
    let mut check = Command::new(&promtool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool starts");
    check.stdin.take().unwrap().write_all(classic.as_bytes()).unwrap();
    let checked = check.wait_with_output().unwrap();
    assert!(
        checked.status.success(),
        "promtool check metrics: {}{}\n{classic}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );
    // OpenMetrics to a scraper that asks for it.
    let (_, open) = get(&metrics, Some("application/openmetrics-text; version=1.0.0"));
    assert!(open.ends_with("# EOF\n"), "{open}");

    // A real Prometheus scrapes it every second.
    let target = metrics.trim_start_matches("http://").trim_end_matches("/metrics").to_owned();
    let yml = dir.path().join("prometheus.yml");
    std::fs::write(
        &yml,
        format!(
            "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: mcpkit\n    static_configs:\n      - targets: ['{target}']\n"
        ),
    )
    .unwrap();
    let mut scraper = Prometheus(
        Command::new(&prometheus)
            .arg(format!("--config.file={}", yml.display()))
            .arg(format!("--storage.tsdb.path={}", dir.path().join("tsdb").display()))
            .arg("--web.listen-address=127.0.0.1:0")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("prometheus starts"),
    );
    let web = listening_address(scraper.0.stderr.take().expect("its log is piped"));
    let query = |q: &str| -> serde_json::Value {
        let url = format!("http://{web}/api/v1/query?query={}", encode(q));
        let (status, body) = get(&url, None);
        if status != 200 {
            return serde_json::Value::Null;
        }
        serde_json::from_str(&body).unwrap_or_default()
    };
    let outcomes = eventually("the four outcomes in Prometheus", Duration::from_secs(60), || {
        let answer = query("sum by (outcome, error_type) (mcp_server_operation_duration_seconds_count)");
        let series = answer["data"]["result"].as_array().cloned().unwrap_or_default();
        let found: Vec<(String, String)> = series
            .iter()
            .map(|s| {
                let label = |k: &str| s["metric"][k].as_str().unwrap_or_default().to_owned();
                (label("outcome"), label("error_type"))
            })
            .collect();
        let wanted = [
            ("success", ""),
            ("tool_error", "tool_error"),
            ("jsonrpc_error", "-32602"),
            ("http_refused", "403"),
        ];
        if wanted.iter().all(|(o, e)| found.iter().any(|(fo, fe)| fo == o && fe == e)) {
            Ok(found)
        } else {
            Err(format!("{found:?} in {answer}"))
        }
    });
    assert!(!outcomes.is_empty());

    // The tool label names the tool; the gateway's upstream is up.
    let calls = query(
        "mcp_server_operation_duration_seconds_count{mcp_method_name=\"tools/call\",gen_ai_tool_name=\"echo\",outcome=\"success\"}",
    );
    assert_eq!(calls["data"]["result"][0]["value"][1], "1", "{calls}");
    let up = query("mcp_gateway_upstream_state{upstream=\"demo\",state=\"ready\"}");
    assert_eq!(up["data"]["result"][0]["value"][1], "1", "{up}");
    let waiting = query("mcp_gateway_upstream_waiting{upstream=\"demo\"}");
    assert_eq!(waiting["data"]["result"][0]["value"][1], "0", "nothing waits for a slot: {waiting}");
    // The upstream's own latency: the calls the gateway forwarded to it, answered.
    let forwarded =
        query("mcp_gateway_upstream_request_duration_seconds_count{upstream=\"demo\",outcome=\"answered\"}");
    let count: f64 =
        forwarded["data"]["result"][0]["value"][1].as_str().and_then(|v| v.parse().ok()).unwrap_or(0.0);
    assert_eq!(count, 2.0, "echo and fail reached it, the unknown tool did not: {forwarded}");
    let scraped = query("up{job=\"mcpkit\"}");
    assert_eq!(scraped["data"]["result"][0]["value"][1], "1", "{scraped}");
}

/// Percent-encodes a PromQL query for a URL's query string.
fn encode(q: &str) -> String {
    q.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The JSON objects of a process's stderr with `"target":"mcp_server::request"`.
fn request_lines(process: &ListeningProcess) -> Vec<serde_json::Value> {
    process
        .stderr()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["target"] == "mcp_server::request")
        .collect()
}

#[test]
fn the_request_log_is_one_json_line_per_request_and_never_shows_arguments_unasked() {
    let serve = |extra: &[&str]| {
        let mut args = vec!["serve", "--http", "127.0.0.1:0", "--log-format", "json"];
        args.extend(extra);
        ListeningProcess::start(support::command(&args))
    };
    let plain = serve(&["--request-log"]);
    let (code, _, err) = through_url(plain.url(), &["call", "echo", "--arg", "text=topsecret-1"]);
    assert_eq!(code, 0, "{err}");
    let (code, _, _) = through_url(plain.url(), &["call", "fail"]);
    assert_ne!(code, 0);
    let lines = eventually("the request log", Duration::from_secs(30), || {
        let lines = request_lines(&plain);
        let fail = lines.iter().any(|l| l["name"] == "fail");
        if fail { Ok(lines) } else { Err(plain.stderr()) }
    });
    let echo =
        lines.iter().find(|l| l["method"] == "tools/call" && l["name"] == "echo").expect("echo's line");
    assert_eq!(echo["outcome"], "success");
    assert_eq!(echo["era"], "modern");
    assert!(
        echo["id"].is_string() && echo["duration_us"].is_u64() && echo["timestamp"].is_string(),
        "{echo}"
    );
    let fail = lines.iter().find(|l| l["name"] == "fail").unwrap();
    assert_eq!(fail["outcome"], "tool_error");
    assert!(!plain.stderr().contains("topsecret"), "arguments are never logged unasked: {}", plain.stderr());

    let debugging = serve(&["--request-log-arguments"]);
    let (code, _, err) = through_url(debugging.url(), &["call", "echo", "--arg", "text=visible-2"]);
    assert_eq!(code, 0, "{err}");
    let line = eventually("the line with arguments", Duration::from_secs(30), || {
        request_lines(&debugging).into_iter().find(|l| l["name"] == "echo").ok_or_else(|| debugging.stderr())
    });
    let arguments: serde_json::Value = serde_json::from_str(line["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, serde_json::json!({"text": "visible-2"}));
}

/// A span as the test's OTLP receiver decoded it.
#[derive(Debug, Clone)]
struct Received {
    service: String,
    trace_id: Vec<u8>,
    span_id: Vec<u8>,
    parent: Vec<u8>,
    name: String,
    kind: i32,
    attributes: Vec<(String, String)>,
}

impl Received {
    fn attribute(&self, key: &str) -> Option<&str> {
        self.attributes.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

/// Serves `app` on 127.0.0.1:0 from a thread of its own (it stops with the test process); its
/// base URL.
fn serve_on_a_thread(app: axum::Router) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
    url
}

/// An OTLP/HTTP receiver on 127.0.0.1:0 (`POST /v1/traces`, protobuf), on a thread of its own;
/// stopped when the test process ends its runtime.
fn otlp_receiver() -> (String, std::sync::Arc<std::sync::Mutex<Vec<Received>>>) {
    use opentelemetry_proto::tonic::collector::trace::v1::{
        ExportTraceServiceRequest, ExportTraceServiceResponse,
    };
    use opentelemetry_proto::tonic::common::v1::any_value::Value;
    use prost::Message;
    let spans = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = spans.clone();
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |body: axum::body::Bytes| {
            let sink = sink.clone();
            async move {
                let request = ExportTraceServiceRequest::decode(body).expect("an OTLP protobuf");
                let mut spans = sink.lock().unwrap();
                for resource_spans in request.resource_spans {
                    let service = resource_spans
                        .resource
                        .iter()
                        .flat_map(|r| &r.attributes)
                        .find(|a| a.key == "service.name")
                        .and_then(|a| a.value.as_ref())
                        .and_then(|v| match &v.value {
                            Some(Value::StringValue(s)) => Some(s.clone()),
                            _ => None,
                        })
                        .unwrap_or_default();
                    for scope in resource_spans.scope_spans {
                        for span in scope.spans {
                            let attributes = span
                                .attributes
                                .iter()
                                .map(|a| {
                                    let value = match a.value.as_ref().and_then(|v| v.value.as_ref()) {
                                        Some(Value::StringValue(s)) => s.clone(),
                                        Some(other) => format!("{other:?}"),
                                        None => String::new(),
                                    };
                                    (a.key.clone(), value)
                                })
                                .collect();
                            spans.push(Received {
                                service: service.clone(),
                                trace_id: span.trace_id,
                                span_id: span.span_id,
                                parent: span.parent_span_id,
                                name: span.name,
                                kind: span.kind,
                                attributes,
                            });
                        }
                    }
                }
                (
                    [(axum::http::header::CONTENT_TYPE, "application/x-protobuf")],
                    ExportTraceServiceResponse::default().encode_to_vec(),
                )
            }
        }),
    );
    (serve_on_a_thread(app), spans)
}

/// OpenTelemetry's span kinds as OTLP numbers them.
const SERVER: i32 = 2;
const CLIENT: i32 = 3;

#[test]
fn one_trace_links_the_client_the_gateway_and_the_upstream() {
    let (endpoint, spans) = otlp_receiver();
    let dir = Dir::new("traces");
    // A stdio child gets a minimal environment: the upstream is told where traces go.
    let upstream_env = format!(
        "env = {{ OTEL_EXPORTER_OTLP_ENDPOINT = {:?}, OTEL_BSP_SCHEDULE_DELAY = \"100\", OTEL_SERVICE_NAME = \"upstream\" }}",
        endpoint
    );
    let config = dir.write_config(&stdio_upstream("demo", &upstream_env));
    let otel = |command: &mut Command, service: &str| {
        command
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
            .env("OTEL_BSP_SCHEDULE_DELAY", "100")
            .env("OTEL_SERVICE_NAME", service);
    };
    let mut command =
        support::command(&["gateway", "--config", config.to_str().unwrap(), "--http", "127.0.0.1:0"]);
    otel(&mut command, "gateway");
    let gateway = HttpGateway(ListeningProcess::start(command));

    let mut call = support::command(&["call", "echo", "--arg", "text=traced", "--url", gateway.url()]);
    otel(&mut call, "client");
    let out = call.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    // The command's CLIENT span → the gateway's SERVER span → the gateway's CLIENT span for
    // its request upstream → the upstream's SERVER span.
    let (client, gateway_span, hop, upstream_span) =
        eventually("the four spans of one trace", Duration::from_secs(60), || {
            let spans = spans.lock().unwrap().clone();
            let client = spans.iter().find(|s| s.service == "client" && s.kind == CLIENT);
            let gateway_span = spans.iter().find(|s| {
                s.service == "gateway"
                    && s.kind == SERVER
                    && s.name == "tools/call echo"
                    && client.is_some_and(|c| s.parent == c.span_id)
            });
            let hop = spans.iter().find(|s| {
                s.service == "gateway"
                    && s.kind == CLIENT
                    && gateway_span.is_some_and(|g| s.parent == g.span_id)
            });
            let upstream_span = spans.iter().find(|s| {
                s.service == "upstream" && s.kind == SERVER && hop.is_some_and(|h| s.parent == h.span_id)
            });
            match (client, gateway_span, hop, upstream_span) {
                (Some(c), Some(g), Some(h), Some(u)) => Ok((c.clone(), g.clone(), h.clone(), u.clone())),
                _ => Err(format!("{spans:#?}")),
            }
        });
    assert_eq!(client.name, "tools/call echo");
    assert!(client.parent.is_empty(), "the client's span is the root");
    for span in [&gateway_span, &hop, &upstream_span] {
        assert_eq!(span.trace_id, client.trace_id, "{span:?}");
        assert_eq!(span.name, "tools/call echo", "{span:?}");
    }
    for (span, transport) in [(&gateway_span, "tcp"), (&hop, "pipe"), (&upstream_span, "pipe")] {
        assert_eq!(span.attribute("mcp.method.name"), Some("tools/call"), "{span:?}");
        assert_eq!(span.attribute("gen_ai.tool.name"), Some("echo"), "{span:?}");
        assert_eq!(span.attribute("network.transport"), Some(transport), "{span:?}");
        let id = span.attribute("jsonrpc.request.id");
        assert!(id.is_some_and(|id| id.parse::<i64>().is_ok()), "a numeric request id: {span:?}");
        assert!(span.attribute("error.type").is_none(), "{span:?}");
    }
    // Never an argument value in a span.
    let everything = format!("{:?}", spans.lock().unwrap());
    assert!(!everything.contains("traced\""), "no argument in any span");
}

/// A histogram point received over OTLP: its metric, attributes and count.
#[derive(Debug, Clone)]
struct Point {
    service: String,
    metric: String,
    attributes: Vec<(String, String)>,
    count: u64,
}

/// An OTLP/HTTP receiver of metrics on 127.0.0.1:0 (`POST /v1/metrics`, protobuf): every
/// histogram point of every export, in order.
fn otlp_metrics_receiver() -> (String, std::sync::Arc<std::sync::Mutex<Vec<Vec<Point>>>>) {
    use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
    use opentelemetry_proto::tonic::common::v1::any_value::Value;
    use opentelemetry_proto::tonic::metrics::v1::metric::Data;
    use prost::Message;
    let exports = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = exports.clone();
    let app = axum::Router::new().route(
        "/v1/metrics",
        axum::routing::post(move |body: axum::body::Bytes| {
            let sink = sink.clone();
            async move {
                let request = ExportMetricsServiceRequest::decode(body).expect("an OTLP protobuf");
                let text = |v: Option<&opentelemetry_proto::tonic::common::v1::AnyValue>| match v
                    .and_then(|v| v.value.as_ref())
                {
                    Some(Value::StringValue(s)) => s.clone(),
                    other => format!("{other:?}"),
                };
                let mut points = Vec::new();
                for resource in request.resource_metrics {
                    let service = resource
                        .resource
                        .iter()
                        .flat_map(|r| &r.attributes)
                        .find(|a| a.key == "service.name")
                        .map(|a| text(a.value.as_ref()))
                        .unwrap_or_default();
                    for scope in resource.scope_metrics {
                        for metric in scope.metrics {
                            let Some(Data::Histogram(histogram)) = metric.data else { continue };
                            for point in histogram.data_points {
                                let attributes = point
                                    .attributes
                                    .iter()
                                    .map(|a| (a.key.clone(), text(a.value.as_ref())))
                                    .collect();
                                points.push(Point {
                                    service: service.clone(),
                                    metric: metric.name.clone(),
                                    attributes,
                                    count: point.count,
                                });
                            }
                        }
                    }
                }
                sink.lock().unwrap().push(points);
                axum::http::StatusCode::OK
            }
        }),
    );
    (serve_on_a_thread(app), exports)
}

/// With an OTLP endpoint in the environment (and no Prometheus listener), a server pushes its
/// metrics over OTLP/HTTP — the same outcomes apart — every interval, and once more when it
/// stops, so that a short-lived process loses nothing.
#[test]
fn metrics_are_pushed_over_otlp_every_interval_and_at_exit() {
    let (endpoint, exports) = otlp_metrics_receiver();
    let serve = |interval: &str, service: &str| {
        let mut command = support::command(&["serve", "--http", "127.0.0.1:0"]);
        command
            .env("MCPKIT_METRICS", "off")
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
            .env("OTEL_METRIC_EXPORT_INTERVAL", interval)
            .env("OTEL_SERVICE_NAME", service)
            .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
            .env("OTEL_TRACES_EXPORTER", "none");
        ListeningProcess::start(command)
    };
    let point = |points: &[Point], tool: &str, outcome: &str| {
        points
            .iter()
            .find(|p| {
                p.metric == "mcp.server.operation.duration"
                    && p.attributes.contains(&("gen_ai.tool.name".into(), tool.into()))
                    && p.attributes.contains(&("outcome".into(), outcome.into()))
            })
            .cloned()
    };

    // Every 200 ms.
    let server = serve("200", "pushed");
    let (code, _, err) = through_url(server.url(), &["call", "echo", "--arg", "text=hi"]);
    assert_eq!(code, 0, "{err}");
    let (code, _, _) = through_url(server.url(), &["call", "fail"]);
    assert_ne!(code, 0);
    let points = eventually("an OTLP export with both calls", Duration::from_secs(30), || {
        let last = exports.lock().unwrap().last().cloned().unwrap_or_default();
        match (point(&last, "echo", "success"), point(&last, "fail", "tool_error")) {
            (Some(_), Some(_)) => Ok(last),
            _ => Err(format!("{last:?}")),
        }
    });
    let echo = point(&points, "echo", "success").unwrap();
    assert_eq!((echo.service.as_str(), echo.count), ("pushed", 1), "{echo:?}");
    assert!(echo.attributes.contains(&("network.transport".into(), "tcp".into())), "{echo:?}");
    drop(server);

    // Once an hour: only the push at exit can carry the call. A service name of its own tells
    // its exports from a push of the first server still being received.
    let mut server = serve("3600000", "at-exit");
    let at_exit = || -> Vec<Vec<Point>> {
        let exports = exports.lock().unwrap();
        exports.iter().filter(|points| points.iter().any(|p| p.service == "at-exit")).cloned().collect()
    };
    let (code, _, err) = through_url(server.url(), &["call", "echo", "--arg", "text=last"]);
    assert_eq!(code, 0, "{err}");
    assert!(at_exit().is_empty(), "nothing is pushed before the interval");
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(server.id() as i32), nix::sys::signal::Signal::SIGTERM)
        .unwrap();
    assert!(server.wait_exit(Duration::from_secs(30)).is_some(), "the server did not stop");
    let last = at_exit().last().cloned().unwrap_or_default();
    assert!(point(&last, "echo", "success").is_some(), "the push at exit: {last:?}");
}
