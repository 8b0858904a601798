//! Requests' spans, a client's and a server's: what each says of its request, and that a span
//! kept until the hand-over decodes as the same span encoded at once.

use super::*;

/// A client's request span (`Tracing` as mcp-client's `RequestObserver`): a child of the
/// request's context, sent as its `traceparent`, recorded as a `CLIENT` span with the
/// request's attributes and how it failed — an HTTP refusal apart from a JSON-RPC error; an
/// unsampled trace still carries its decision on and records nothing.
#[test]
fn a_clients_request_is_a_client_span_under_the_requests_context() {
    use mcp_client::observe::{FinishedRequest, RequestObserver, RequestOutcome, StartedRequest};
    use mcp_types::trace::{TraceContext, TraceParent};
    let (pipeline, received) =
        pipeline(Batching { delay: Duration::from_secs(3600), max_queue: 16, max_batch: 16 });
    let tracing = crate::Tracing { pipeline: Arc::new(pipeline), transport: "tcp", ratio: 1.0 };
    let parent = TraceParent::parse("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01").unwrap();
    let mut meta = mcp_types::JsonObject::new();
    meta.insert("traceparent".into(), parent.to_string().into());
    meta.insert("tracestate".into(), "a=1".into());
    let context = TraceContext::from_meta(&meta);

    let watch = tracing.start(&StartedRequest::new("tools/call", Some("echo"), &context, "pipe")).unwrap();
    let sent = watch.traceparent().unwrap();
    assert_eq!(sent.trace_id, parent.trace_id);
    assert_ne!(sent.span_id, parent.span_id, "the request's own span is sent");
    watch.finish(&FinishedRequest::new(
        Some(&mcp_types::RequestId::Number(7)),
        RequestOutcome::Http { status: 503 },
    ));
    let other = tracing.start(&StartedRequest::new("prompts/get", Some("poem"), &context, "pipe")).unwrap();
    other.finish(&FinishedRequest::new(None, RequestOutcome::Error { code: -32602 }));
    // Not sampled by the caller: the decision goes on, no span is recorded.
    let unsampled = TraceContext::new(TraceParent { sampled: false, ..parent });
    let watch = tracing.start(&StartedRequest::new("tools/call", Some("echo"), &unsampled, "tcp")).unwrap();
    assert!(!watch.traceparent().unwrap().sampled);
    watch.finish(&FinishedRequest::new(None, RequestOutcome::Success));

    tracing.pipeline.flush();
    let export = received.recv_timeout(Duration::from_secs(10)).expect("exported");
    let spans = &export.resource_spans[0].scope_spans[0].spans;
    assert_eq!(spans.len(), 2, "{spans:?}");
    let text = |span: &opentelemetry_proto::tonic::trace::v1::Span, key: &str| {
        span.attributes.iter().find(|a| a.key == key).and_then(|a| {
            match a.value.as_ref()?.value.as_ref()? {
                opentelemetry_proto::tonic::common::v1::any_value::Value::StringValue(s) => Some(s.clone()),
                _ => None,
            }
        })
    };
    let call = &spans[0];
    assert_eq!(call.kind, span::SpanKind::Client as i32);
    assert_eq!(call.name, "tools/call echo");
    assert_eq!(call.trace_id, parent.trace_id);
    assert_eq!(call.parent_span_id, parent.span_id);
    assert_eq!(call.span_id, sent.span_id);
    assert_eq!(call.trace_state, "a=1");
    assert_eq!(text(call, "gen_ai.tool.name").as_deref(), Some("echo"));
    assert_eq!(text(call, "network.transport").as_deref(), Some("pipe"));
    assert_eq!(text(call, "jsonrpc.request.id").as_deref(), Some("7"));
    assert_eq!(text(call, "error.type").as_deref(), Some("503"));
    assert_eq!(text(call, "http.response.status_code").as_deref(), Some("503"));
    assert_eq!(call.status.as_ref().unwrap().message, "HTTP 503");
    let prompt = &spans[1];
    assert_eq!(prompt.name, "prompts/get poem");
    assert_eq!(text(prompt, "gen_ai.prompt.name").as_deref(), Some("poem"));
    assert_eq!(text(prompt, "error.type").as_deref(), Some("-32602"));
    assert_eq!(text(prompt, "rpc.response.status_code").as_deref(), Some("-32602"));
    assert_eq!(text(prompt, "jsonrpc.request.id"), None, "no id was sent");
    tracing.pipeline.shutdown();
}

/// A request's span is kept as it ended and encoded when its chunk is handed over: through
/// the pipeline, among commands' spans (encoded at once), each decodes as the same span
/// encoded directly — ids, parent, state, times, name, attributes and status — whatever its
/// strings (a string id that is not ASCII, a numeric id, none, a session, an item of each kind,
/// each failure).
#[test]
fn requests_spans_kept_until_the_hand_over_decode_as_encoded_at_once() {
    let batching = Batching { delay: Duration::from_secs(3600), max_queue: 1024, max_batch: 1024 };
    let (pipeline, received) = pipeline(batching);
    let owners: Vec<Owned> = (0..24).map(|n| record(n, (n % 3 == 0).then_some([n; 8]), None)).collect();
    let ids: Vec<String> =
        (0..24).map(|n| if n % 2 == 0 { format!("{n}") } else { format!("é-{n}") }).collect();
    let failures = [None, Some(Failure::Tool), Some(Failure::Code(-32601)), Some(Failure::Cancelled)];
    let items = [Some((Item::Tool, "echo")), Some((Item::Prompt, "greet")), Some((Item::Other, "x")), None];
    let requests: Vec<Span<'_>> = owners
        .iter()
        .enumerate()
        .map(|(n, owner)| Span {
            kind: if n % 4 == 1 { Kind::Client } else { Kind::Server },
            trace_state: (n % 5 != 0).then_some("vendor=a,other=b"),
            end: 3_000_000_000 + n as u64,
            duration: Duration::from_micros(n as u64 * 7),
            what: What::Request(Request {
                method: if n % 2 == 0 { "tools/call" } else { "prompts/get" },
                transport: "tcp",
                id: match n % 6 {
                    0 => Id::Number(n as i64 * 1_000_003 - 7),
                    3 => Id::None,
                    _ => Id::Text(ids[n].as_bytes()),
                },
                item: items[n % items.len()],
                version: (n % 3 != 1).then_some("2026-07-28"),
                session: (n % 2 == 1).then_some("s-0123"),
                failure: failures[n % failures.len()],
            }),
            ..owner.span()
        })
        .collect();
    let commands: Vec<Owned> = (100..108).map(|n| record(n, None, None)).collect();
    for (n, request) in requests.iter().enumerate() {
        pipeline.push(request);
        if n % 3 == 0 {
            pipeline.push(&commands[n / 3].span());
        }
    }
    pipeline.shutdown();
    let sent = received.recv_timeout(Duration::from_secs(10)).expect("the spans, at shutdown");
    let mut through: Vec<opentelemetry_proto::tonic::trace::v1::Span> =
        sent.resource_spans[0].scope_spans[0].spans.clone();
    let direct: Vec<Span<'_>> = requests.into_iter().chain(commands.iter().map(Owned::span)).collect();
    let body = encode(&Fixed::new(&[]), &direct);
    let mut expected =
        ExportTraceServiceRequest::decode(&body[..]).unwrap().resource_spans[0].scope_spans[0].spans.clone();
    assert_eq!(through.len(), 32);
    through.sort_by(|a, b| a.span_id.cmp(&b.span_id));
    expected.sort_by(|a, b| a.span_id.cmp(&b.span_id));
    assert_eq!(through, expected);
    let odd = through.iter().find(|s| s.span_id == vec![1; 8]).unwrap();
    let id = odd.attributes.iter().find(|kv| kv.key == "jsonrpc.request.id").unwrap();
    assert_eq!(id.value.clone().unwrap().value, Some(any_value::Value::StringValue("é-1".into())));
    // Kept as its number, written in decimal at the hand-over.
    let numbered = through.iter().find(|s| s.span_id == vec![6; 8]).unwrap();
    let id = numbered.attributes.iter().find(|kv| kv.key == "jsonrpc.request.id").unwrap();
    assert_eq!(id.value.clone().unwrap().value, Some(any_value::Value::StringValue("6000011".into())));
    let without = through.iter().find(|s| s.span_id == vec![3; 8]).unwrap();
    assert!(without.attributes.iter().all(|kv| kv.key != "jsonrpc.request.id"), "no id was sent");
}

/// A server's span of each request, kept as the server tells it ([`Pending::served`]) and
/// encoded at the hand-over: its name, kind, ids, parent and state, times, attributes and
/// status, for a tool, a prompt, a name the server does not have and no name; a number, a
/// string and an empty string as its id; each outcome; and nothing for an unsampled trace.
#[test]
fn a_servers_spans_say_what_their_requests_were() {
    use mcp_server::observe::{Observed, Observer, Outcome, SpanIds};
    use mcp_types::{ProtocolVersion, RequestId};
    use opentelemetry_proto::tonic::common::v1::any_value::Value;
    let (pipeline, received) =
        pipeline(Batching { delay: Duration::from_secs(3600), max_queue: 64, max_batch: 64 });
    let tracing = crate::Tracing { pipeline: Arc::new(pipeline), transport: "tcp", ratio: 1.0 };
    let caller =
        mcp_types::trace::TraceParent::parse("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01")
            .unwrap();
    let mut continued = mcp_types::JsonObject::new();
    continued.insert("traceparent".into(), caller.to_string().into());
    continued.insert("tracestate".into(), "a=1".into());
    let mut unsampled = mcp_types::JsonObject::new();
    unsampled.insert(
        "traceparent".into(),
        mcp_types::trace::TraceParent { sampled: false, ..caller }.to_string().into(),
    );
    let root = mcp_types::JsonObject::new();
    struct Case<'a> {
        meta: &'a mcp_types::JsonObject,
        method: &'static str,
        name: Option<&'static str>,
        id: RequestId,
        version: Option<ProtocolVersion>,
        session: Option<&'static str>,
        outcome: Outcome,
    }
    let cases = [
        Case {
            meta: &root,
            method: "tools/call",
            name: Some("echo"),
            id: RequestId::Number(41),
            version: Some(ProtocolVersion::V2026_07_28),
            session: None,
            outcome: Outcome::Success,
        },
        Case {
            meta: &continued,
            method: "prompts/get",
            name: Some("poem"),
            id: RequestId::String("p-1".into()),
            version: Some(ProtocolVersion::V2025_11_25),
            session: Some("s-9"),
            outcome: Outcome::Error { code: -32602, refused: false },
        },
        Case {
            meta: &root,
            method: "tools/call",
            name: Some("other"),
            id: RequestId::Number(-3),
            version: None,
            session: None,
            outcome: Outcome::ToolError,
        },
        Case {
            meta: &root,
            method: "ping",
            name: None,
            id: RequestId::String(String::new()),
            version: None,
            session: None,
            outcome: Outcome::Cancelled,
        },
        Case {
            meta: &unsampled,
            method: "tools/list",
            name: None,
            id: RequestId::Number(5),
            version: None,
            session: None,
            outcome: Outcome::Success,
        },
    ];
    let took = Duration::from_micros(250);
    let before = crate::export::unix_nanos(std::time::SystemTime::now());
    let ids: Vec<SpanIds> = cases.iter().map(|case| SpanIds::continuing(case.meta)).collect();
    for (case, ids) in cases.iter().zip(&ids) {
        let mut observed = Observed::new(&case.id, case.method, case.outcome, took);
        observed.name = case.name;
        observed.version = case.version;
        observed.session = case.session;
        observed.ended = Some(std::time::Instant::now());
        observed.span = Some(ids);
        tracing.finished(&observed);
    }
    let after = crate::export::unix_nanos(std::time::SystemTime::now());
    tracing.pipeline.flush();
    let export = received.recv_timeout(Duration::from_secs(10)).expect("exported");
    let spans = &export.resource_spans[0].scope_spans[0].spans;
    assert_eq!(spans.len(), 4, "the unsampled request made none: {spans:?}");
    let attributes = |span: &opentelemetry_proto::tonic::trace::v1::Span| -> Vec<(String, String)> {
        span.attributes
            .iter()
            .map(|a| match a.value.as_ref().and_then(|v| v.value.as_ref()) {
                Some(Value::StringValue(s)) => (a.key.clone(), s.clone()),
                other => panic!("{}: {other:?}", a.key),
            })
            .collect()
    };
    let pairs = |list: &[(&str, &str)]| -> Vec<(String, String)> {
        list.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    };
    for (span, ids) in spans.iter().zip(&ids) {
        assert_eq!(span.kind, span::SpanKind::Server as i32);
        assert_eq!(span.trace_id, ids.trace_id);
        assert_eq!(span.span_id, ids.span_id);
        assert_eq!(span.end_time_unix_nano - span.start_time_unix_nano, 250_000);
        assert!((before..=after + 1_000_000).contains(&span.end_time_unix_nano), "{span:?}");
    }
    let [call, prompt, other, ping] = &spans[..] else { unreachable!() };
    assert_eq!(call.name, "tools/call echo");
    assert!(call.parent_span_id.is_empty() && call.trace_state.is_empty());
    assert_eq!(
        attributes(call),
        pairs(&[
            ("mcp.method.name", "tools/call"),
            ("network.transport", "tcp"),
            ("gen_ai.tool.name", "echo"),
            ("gen_ai.operation.name", "execute_tool"),
            ("mcp.protocol.version", "2026-07-28"),
            ("jsonrpc.request.id", "41"),
        ])
    );
    assert_eq!(call.status.as_ref().map_or(0, |s| s.code), 0, "unset");
    assert_eq!(prompt.name, "prompts/get poem");
    assert_eq!(prompt.trace_id, caller.trace_id, "the caller's trace");
    assert_eq!(prompt.parent_span_id, caller.span_id);
    assert_eq!(prompt.trace_state, "a=1");
    assert_eq!(
        attributes(prompt),
        pairs(&[
            ("mcp.method.name", "prompts/get"),
            ("network.transport", "tcp"),
            ("gen_ai.prompt.name", "poem"),
            ("mcp.protocol.version", "2025-11-25"),
            ("jsonrpc.request.id", "p-1"),
            ("mcp.session.id", "s-9"),
            ("error.type", "-32602"),
            ("rpc.response.status_code", "-32602"),
        ])
    );
    assert_eq!(prompt.status.as_ref().unwrap().message, "JSON-RPC error -32602");
    assert_eq!(other.name, "tools/call other");
    assert_eq!(
        attributes(other),
        pairs(&[
            ("mcp.method.name", "tools/call"),
            ("network.transport", "tcp"),
            ("gen_ai.tool.name", "other"),
            ("gen_ai.operation.name", "execute_tool"),
            ("jsonrpc.request.id", "-3"),
            ("error.type", "tool_error"),
        ])
    );
    assert_eq!(other.status.as_ref().unwrap().message, "the tool reported an error (isError)");
    assert_eq!(ping.name, "ping");
    assert_eq!(
        attributes(ping),
        pairs(&[("mcp.method.name", "ping"), ("network.transport", "tcp"), ("error.type", "cancelled")]),
        "an empty id is no attribute"
    );
    tracing.pipeline.shutdown();
}
