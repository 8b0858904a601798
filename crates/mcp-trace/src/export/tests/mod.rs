//! The pipeline against an OTLP/HTTP receiver on 127.0.0.1, and the encoding against
//! OpenTelemetry's generated protobuf types.

use std::io::{BufRead, BufReader, Read, Write};
use std::sync::mpsc;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value;
use opentelemetry_proto::tonic::trace::v1::{span, status};
use prost::Message;

use super::*;

/// An OTLP/HTTP receiver on 127.0.0.1: each export request it takes, decoded.
fn receiver() -> (String, mpsc::Receiver<ExportTraceServiceRequest>) {
    let (url, rx, _) = receiver_answering(b"");
    (url, rx)
}

/// The same, answering every export with `answer` as its body, and counting the connections
/// that carried an export (not those only opened: a client may open one it never uses).
fn receiver_answering(
    answer: &'static [u8],
) -> (String, mpsc::Receiver<ExportTraceServiceRequest>, Arc<std::sync::atomic::AtomicUsize>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1/traces", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::channel();
    let connections = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let accepted = connections.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let (tx, accepted) = (tx.clone(), accepted.clone());
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream);
                let mut used = false;
                loop {
                    let mut length = 0;
                    let mut line = String::new();
                    loop {
                        line.clear();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        if line.trim().is_empty() {
                            break;
                        }
                        if let Some((k, v)) = line.split_once(':')
                            && k.eq_ignore_ascii_case("content-length")
                        {
                            length = v.trim().parse().unwrap();
                        }
                    }
                    let mut body = vec![0; length];
                    reader.read_exact(&mut body).unwrap();
                    if !std::mem::replace(&mut used, true) {
                        accepted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    }
                    tx.send(ExportTraceServiceRequest::decode(&body[..]).unwrap()).unwrap();
                    let head = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: {}\r\n\r\n",
                        answer.len()
                    );
                    let stream = reader.get_mut();
                    // An exporter may stop reading a long answer and close.
                    if stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(answer)).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (url, rx, connections)
}

/// A span's values, owned by the test; [`Owned::span`] borrows them as the request path does.
struct Owned {
    trace_id: [u8; 16],
    span_id: [u8; 8],
    parent: Option<[u8; 8]>,
    trace_state: Option<String>,
    name: String,
    kind: Kind,
    attributes: Vec<(&'static str, String)>,
    error: Option<String>,
}

impl Owned {
    fn span(&self) -> Span<'_> {
        Span {
            trace_id: &self.trace_id,
            span_id: &self.span_id,
            parent: self.parent.as_ref(),
            trace_state: self.trace_state.as_deref(),
            kind: self.kind,
            end: 2_000_000_000,
            duration: Duration::from_secs(1),
            what: What::Command {
                name: &self.name,
                attributes: &self.attributes,
                error: self.error.as_deref(),
            },
        }
    }
}

fn record(n: u8, parent: Option<[u8; 8]>, error: Option<&str>) -> Owned {
    Owned {
        trace_id: [7; 16],
        span_id: [n; 8],
        parent,
        trace_state: Some("k=v".into()),
        name: format!("tools/call t{n}"),
        kind: if parent.is_some() { Kind::Server } else { Kind::Client },
        attributes: vec![
            ("mcp.method.name", "tools/call".into()),
            ("gen_ai.tool.name", format!("t{n}")),
            // Long enough for two-byte lengths at every level.
            ("long", "x".repeat(300)),
        ],
        error: error.map(str::to_owned),
    }
}

/// Around the lengths where a `KeyValue`'s own length stops fitting a byte, what is written
/// decodes as the key and the value given, and nothing more.
#[test]
fn key_values_decode_on_both_sides_of_the_one_byte_lengths() {
    use opentelemetry_proto::tonic::common::v1::KeyValue;
    for key_len in [1, 15, 60] {
        for value_len in 0..200 {
            let key = "k".repeat(key_len);
            let value = "v".repeat(value_len);
            let mut out = Vec::new();
            key_value(&mut out, 9, &key, value.as_bytes());
            let mut rest = &out[..];
            let field = prost::encoding::decode_varint(&mut rest).unwrap();
            assert_eq!(field, 9 << 3 | 2);
            let len = prost::encoding::decode_varint(&mut rest).unwrap();
            assert_eq!(len as usize, rest.len(), "{key_len} + {value_len}");
            let pair = KeyValue::decode(rest).unwrap();
            assert_eq!(pair.key, key);
            let Some(any_value::Value::StringValue(got)) = pair.value.unwrap().value else { panic!() };
            assert_eq!(got, value);
        }
    }
}

#[test]
fn a_full_batch_is_sent_at_once_and_the_rest_at_shutdown() {
    let (url, received) = receiver();
    let mut target = OtlpTarget::new(url, "svc");
    target.headers = vec![("x-key".into(), "secret".into())];
    let batching = Batching { delay: Duration::from_secs(3600), max_queue: 8, max_batch: 2 };
    let resource = vec![("service.name".to_owned(), "svc".to_owned())];
    let pipeline = Pipeline::start(target, resource, batching, Driver::Thread).unwrap();

    pipeline.push(&record(1, None, None).span());
    pipeline.push(&record(2, Some([1; 8]), Some("JSON-RPC error -32602")).span());
    // A full batch goes at once, though the delay is an hour.
    let first = received.recv_timeout(Duration::from_secs(10)).expect("the full batch");
    let scope = &first.resource_spans[0].scope_spans[0];
    assert_eq!(scope.scope.as_ref().unwrap().name, "mcpkit");
    assert_eq!(first.resource_spans[0].resource.as_ref().unwrap().attributes[0].key, "service.name");
    let [client, server] = &scope.spans[..] else { panic!("{:?}", scope.spans) };
    assert_eq!((client.name.as_str(), client.kind), ("tools/call t1", span::SpanKind::Client as i32));
    assert!(client.parent_span_id.is_empty());
    assert_eq!(client.trace_id, vec![7; 16]);
    assert_eq!(client.start_time_unix_nano, 1_000_000_000);
    assert_eq!(client.end_time_unix_nano, 2_000_000_000);
    assert_eq!(client.status.as_ref().unwrap().code, status::StatusCode::Unset as i32);
    assert_eq!(server.kind, span::SpanKind::Server as i32);
    assert_eq!(server.parent_span_id, vec![1; 8]);
    assert_eq!(server.trace_state, "k=v");
    assert_eq!(server.flags & 0x301, 0x301, "sampled, with a remote parent");
    let status = server.status.as_ref().unwrap();
    assert_eq!(
        (status.code, status.message.as_str()),
        (status::StatusCode::Error as i32, "JSON-RPC error -32602")
    );
    let value =
        |key: &str| server.attributes.iter().find(|kv| kv.key == key).unwrap().value.clone().unwrap().value;
    assert_eq!(value("gen_ai.tool.name"), Some(any_value::Value::StringValue("t2".into())));
    assert_eq!(value("long"), Some(any_value::Value::StringValue("x".repeat(300))));
    assert_eq!(server.attributes.len(), 3);

    // One more waits for the delay; shutdown sends it, and later spans are dropped.
    pipeline.push(&record(3, None, None).span());
    assert!(received.recv_timeout(Duration::from_millis(300)).is_err(), "not a full batch yet");
    pipeline.shutdown();
    let last = received.recv_timeout(Duration::from_secs(10)).expect("the rest, at shutdown");
    assert_eq!(last.resource_spans[0].scope_spans[0].spans.len(), 1);
    pipeline.push(&record(4, None, None).span());
    pipeline.shutdown();
    assert!(received.recv_timeout(Duration::from_millis(300)).is_err(), "nothing after shutdown");
}

/// A pipeline on a thread of its own, exporting to a [`receiver`].
fn pipeline(batching: Batching) -> (Pipeline, mpsc::Receiver<ExportTraceServiceRequest>) {
    let (url, received) = receiver();
    let pipeline =
        Pipeline::start(OtlpTarget::new(url, "svc"), Vec::new(), batching, Driver::Thread).unwrap();
    (pipeline, received)
}

/// The same, shared with the threads a test starts.
fn shared_pipeline(batching: Batching) -> (Arc<Pipeline>, mpsc::Receiver<ExportTraceServiceRequest>) {
    let (pipeline, received) = pipeline(batching);
    (Arc::new(pipeline), received)
}

/// The first byte of each span id in `export`: which of the test's records it carries.
fn first_bytes_of_ids(export: &ExportTraceServiceRequest) -> Vec<u8> {
    export.resource_spans[0].scope_spans[0].spans.iter().map(|s| s.span_id[0]).collect()
}

/// Spans of a thread that has not gathered its share yet, while another thread fills a batch.
/// The thread stays alive (its chunk is not an ended thread's) until the test lets it go.
fn quiet_thread(pipeline: &Arc<Pipeline>, spans: u8) -> mpsc::Sender<()> {
    let (go, wait) = mpsc::channel::<()>();
    let (pushed, done) = mpsc::channel();
    let pipeline = pipeline.clone();
    std::thread::spawn(move || {
        (0..spans).for_each(|n| pipeline.push(&record(100 + n, None, None).span()));
        pushed.send(()).unwrap();
        let _ = wait.recv();
    });
    done.recv().unwrap();
    go
}

/// A full batch goes alone: the spans gathered besides it (another thread's, short of its
/// share) wait for the delay, not for the next full batch's export, so a steady load sends one
/// export per batch rather than two.
#[test]
fn a_full_batch_goes_alone_and_the_rest_waits_for_the_delay() {
    let (pipeline, received) =
        shared_pipeline(Batching { delay: Duration::from_secs(3600), max_queue: 64, max_batch: 4 });
    let quiet = quiet_thread(&pipeline, 2);
    (1..=4).for_each(|n| pipeline.push(&record(n, None, None).span()));
    let full = received.recv_timeout(Duration::from_secs(10)).expect("the full batch");
    assert_eq!(first_bytes_of_ids(&full), [1, 2, 3, 4]);
    assert!(received.recv_timeout(Duration::from_millis(300)).is_err(), "the quiet thread's spans wait");
    pipeline.shutdown();
    let rest = received.recv_timeout(Duration::from_secs(10)).expect("the rest, at shutdown");
    assert_eq!(first_bytes_of_ids(&rest), [100, 101]);
    drop(quiet);
}

/// A thread's chunk that does not fit what is left of the batch being filled is cut between
/// two spans: the batch gets exactly its share, the next one the rest, and no span is lost,
/// doubled or cut in two.
#[test]
fn a_chunk_is_cut_between_spans_where_the_batch_ends() {
    // Chunks of about 40 of these spans (16 KiB), so the third no longer fits a batch of 100.
    let (pipeline, received) =
        shared_pipeline(Batching { delay: Duration::from_secs(3600), max_queue: 1024, max_batch: 100 });
    (1..=128).for_each(|n| pipeline.push(&record(n, None, None).span()));
    let full = received.recv_timeout(Duration::from_secs(10)).expect("the full batch");
    assert_eq!(first_bytes_of_ids(&full), (1..=100).collect::<Vec<u8>>());
    pipeline.shutdown();
    let rest = received.recv_timeout(Duration::from_secs(10)).expect("the rest, at shutdown");
    assert_eq!(first_bytes_of_ids(&rest), (101..=128).collect::<Vec<u8>>());
}

/// The delay runs from the last time everything went: full batches sent one after another do
/// not hold back a quiet thread's spans beyond it.
#[test]
fn full_batches_in_a_row_do_not_hold_back_a_quiet_threads_spans() {
    let (pipeline, received) =
        shared_pipeline(Batching { delay: Duration::from_millis(300), max_queue: 64, max_batch: 4 });
    let quiet = quiet_thread(&pipeline, 1);
    let started = std::time::Instant::now();
    let mut found = None;
    // A full batch every 50 ms, for up to five seconds.
    while found.is_none() && started.elapsed() < Duration::from_secs(5) {
        (1..=4).for_each(|n| pipeline.push(&record(n, None, None).span()));
        while let Ok(export) = received.recv_timeout(Duration::from_millis(50)) {
            if first_bytes_of_ids(&export).contains(&100) {
                found = Some(started.elapsed());
            }
        }
    }
    let waited = found.expect("the quiet thread's span went out while full batches kept coming");
    // Held back by each full batch, it would not have gone in the five seconds at all; the
    // bound leaves a loaded machine room.
    assert!(waited < Duration::from_secs(4), "it waited {waited:?}, the delay is 300 ms");
    pipeline.shutdown();
    drop(quiet);
}

/// While the thread is stuck sending (a receiver that takes the request and never
/// answers), spans beyond `max_queue` are dropped and counted, not kept: the queue's memory
/// is bounded whatever the receiver does.
#[test]
fn spans_beyond_the_queue_are_dropped_while_an_export_hangs() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let mut target = OtlpTarget::new(format!("http://{}/v1/traces", listener.local_addr().unwrap()), "svc");
    target.timeout = Duration::from_secs(30);
    let (accepted, hanging) = mpsc::channel();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut first = [0u8; 1];
            let _ = stream.read(&mut first);
            held.push(stream);
            let _ = accepted.send(());
        }
    });
    let batching = Batching { delay: Duration::from_secs(3600), max_queue: 4, max_batch: 2 };
    let pipeline = Pipeline::start(target, Vec::new(), batching, Driver::Thread).unwrap();
    pipeline.push(&record(1, None, None).span());
    pipeline.push(&record(2, None, None).span());
    hanging.recv_timeout(Duration::from_secs(10)).expect("the first batch is being sent");
    // Handed over two at a time (a batch's worth): 3 to 6 wait, 7 to 10 find the queue full.
    for n in 3..=10 {
        pipeline.push(&record(n, None, None).span());
    }
    let queue = pipeline.shared.lock();
    assert_eq!((queue.waiting, queue.dropped), (4, 4));
    assert_eq!(queue.full.len(), 2, "two full batches wait");
    assert_eq!(queue.filling.spans, 0);
}

/// Sends `exports` exports of one span each, one after another, to a receiver answering each
/// with `answer`; the number of connections that carried them.
fn connections_for(exports: u8, answer: &'static [u8]) -> usize {
    let (url, received, connections) = receiver_answering(answer);
    let pipeline = Pipeline::start(
        OtlpTarget::new(url, "svc"),
        Vec::new(),
        Batching { delay: Duration::from_secs(3600), max_queue: 8, max_batch: 8 },
        Driver::Thread,
    )
    .unwrap();
    for n in 1..=exports {
        pipeline.push(&record(n, None, None).span());
        pipeline.flush();
        let sent = received.recv_timeout(Duration::from_secs(10)).expect("flushed");
        assert_eq!(sent.resource_spans[0].scope_spans[0].spans.len(), 1);
    }
    pipeline.shutdown();
    connections.load(std::sync::atomic::Ordering::SeqCst)
}

#[test]
fn exports_share_one_connection_when_the_collector_answers_with_a_body() {
    // An ExportTraceServiceResponse with a partial_success (field 1) saying nothing was
    // rejected: a body the exporter must read to its end before the connection is reused.
    assert_eq!(connections_for(3, &[0x0a, 0x00]), 1, "one connection for three exports");
}

#[test]
fn an_answer_longer_than_an_answer_can_be_is_left_unread_with_its_connection() {
    // Far longer than the limit: when the client gives up on an answer, hyper reads once more
    // and keeps the connection if that read reached the answer's end. With an answer only
    // twice the limit, the rest could already be in hand (loopback is fast) and the
    // connection then rightly served the next export.
    let long: &'static [u8] = Box::leak(vec![0u8; mcp_metrics::ANSWER_LIMIT * 64].into_boxed_slice());
    assert_eq!(connections_for(2, long), 2, "the connection of a long answer is not used again");
}

#[test]
fn a_flush_sends_what_waits() {
    let (url, received) = receiver();
    let target = OtlpTarget::new(url, "svc");
    let pipeline = Pipeline::start(
        target,
        Vec::new(),
        Batching { delay: Duration::from_secs(3600), max_queue: 4, max_batch: 4 },
        Driver::Thread,
    )
    .unwrap();
    pipeline.push(&record(1, None, None).span());
    pipeline.flush();
    let sent = received.recv_timeout(Duration::from_secs(10)).expect("flushed");
    assert_eq!(sent.resource_spans[0].scope_spans[0].spans.len(), 1);
    pipeline.shutdown();
}

/// The next export `received` takes within `within`, awaited (the runtime keeps running the
/// export task meanwhile; a blocking wait would stop the one thread it has).
async fn next_export(
    received: &mpsc::Receiver<ExportTraceServiceRequest>,
    within: Duration,
) -> Option<ExportTraceServiceRequest> {
    let until = std::time::Instant::now() + within;
    loop {
        match received.try_recv() {
            Ok(request) => return Some(request),
            Err(mpsc::TryRecvError::Disconnected) => return None,
            Err(mpsc::TryRecvError::Empty) if std::time::Instant::now() >= until => return None,
            Err(mpsc::TryRecvError::Empty) => tokio::time::sleep(Duration::from_millis(5)).await,
        }
    }
}

/// On a one-thread runtime, the export loop is a task of that runtime: no thread is started,
/// a full batch goes at once, one that is not full when its delay is over, and `close` sends
/// the rest and returns when it is answered.
#[test]
fn a_task_on_the_servers_runtime_exports_without_a_thread_of_its_own() {
    // The process's threads are counted: run alone, in a process of its own, where no other
    // test starts or ends threads meanwhile.
    const ALONE: &str = "MCPKIT_TRACE_TEST_ALONE";
    if std::env::var_os(ALONE).is_none() {
        let name = "export::tests::a_task_on_the_servers_runtime_exports_without_a_thread_of_its_own";
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args([name, "--exact", "--test-threads=1"])
            .env(ALONE, "1")
            .status()
            .unwrap();
        assert!(status.success(), "the test, run alone, failed");
        return;
    }
    let (url, received) = receiver();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let threads = || std::fs::read_dir("/proc/self/task").map(|tasks| tasks.count()).unwrap_or(0);
    runtime.block_on(async {
        let before = threads();
        // The delay runs from the pipeline's start (the last time everything went), whatever
        // the first export took.
        let origin = std::time::Instant::now();
        let batching = Batching { delay: Duration::from_millis(300), max_queue: 8, max_batch: 2 };
        let pipeline = Pipeline::start(
            OtlpTarget::new(url, "svc"),
            Vec::new(),
            batching,
            Driver::Task(tokio::runtime::Handle::current()),
        )
        .unwrap();
        if cfg!(target_os = "linux") {
            assert_eq!(threads(), before, "no thread started for the exports");
        }
        pipeline.push(&record(1, None, None).span());
        pipeline.push(&record(2, None, None).span());
        let full = next_export(&received, Duration::from_secs(10)).await.expect("the full batch");
        assert_eq!(full.resource_spans[0].scope_spans[0].spans.len(), 2);

        pipeline.push(&record(3, None, None).span());
        let due = next_export(&received, Duration::from_secs(10)).await.expect("the batch, when due");
        assert_eq!(due.resource_spans[0].scope_spans[0].spans.len(), 1);
        assert!(origin.elapsed() >= Duration::from_millis(300), "sent when its delay was over");

        pipeline.push(&record(4, None, None).span());
        tokio::time::timeout(Duration::from_secs(10), pipeline.close()).await.expect("closed");
        let last = received.try_recv().expect("the rest, answered before close returned");
        assert_eq!(last.resource_spans[0].scope_spans[0].spans.len(), 1);
        pipeline.push(&record(5, None, None).span());
        pipeline.close().await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert!(received.try_recv().is_err(), "nothing after close");
    });
}

/// A runtime shut down under a waiting export task ends the pipeline: `close` returns at once
/// (on whatever runs it) rather than waiting for a task that is gone.
#[test]
fn close_returns_when_the_runtime_of_the_task_is_gone() {
    let (url, _received) = receiver();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let pipeline = Pipeline::start(
        OtlpTarget::new(url, "svc"),
        Vec::new(),
        Batching { delay: Duration::from_secs(3600), max_queue: 8, max_batch: 8 },
        Driver::Task(runtime.handle().clone()),
    )
    .unwrap();
    // The task starts and waits for its delay.
    runtime.block_on(async { tokio::time::sleep(Duration::from_millis(50)).await });
    drop(runtime);
    let other = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    other.block_on(async {
        tokio::time::timeout(Duration::from_secs(5), pipeline.close()).await.expect("close returns");
    });
}

/// Spans whose lengths take one, two and three bytes, and server spans whose attributes
/// are fields, decode with the generated types.
#[test]
fn spans_of_every_length_and_kind_decode() {
    let sized = |n: u8, attribute: usize| {
        let mut r = record(n, None, None);
        r.trace_state = None;
        r.attributes = vec![("a", "y".repeat(attribute))];
        r
    };
    let spans = [sized(1, 0), sized(2, 200), sized(3, 20_000)];
    let ids = record(9, Some([3; 8]), None);
    let server = Span {
        kind: Kind::Server,
        what: What::Request(Request {
            method: "tools/call",
            transport: "tcp",
            id: Id::Number(42),
            item: Some((Item::Tool, "echo")),
            version: Some("2026-07-28"),
            session: Some("s-1"),
            failure: Some(Failure::Code(-32602)),
        }),
        ..ids.span()
    };
    // A name of two parts whose length takes two bytes.
    let long_tool = "t".repeat(200);
    let long_name = Span {
        what: What::Request(Request {
            method: "tools/call",
            transport: "tcp",
            id: Id::None,
            item: Some((Item::Tool, &long_tool)),
            version: None,
            session: None,
            failure: None,
        }),
        ..ids.span()
    };
    let batch = [spans[0].span(), spans[1].span(), spans[2].span(), server, long_name];
    let resource = [("service.name".to_owned(), "svc".to_owned())];
    let body = encode(&Fixed::new(&resource), &batch);
    let request = ExportTraceServiceRequest::decode(&body[..]).unwrap();
    let scope = &request.resource_spans[0].scope_spans[0];
    assert_eq!(scope.scope.as_ref().unwrap().name, "mcpkit");
    let spans = &scope.spans;
    assert_eq!(spans.len(), 5);
    assert_eq!(spans[4].name, format!("tools/call {long_tool}"));
    let value = |span: &opentelemetry_proto::tonic::trace::v1::Span, key: &str| {
        let found = span.attributes.iter().find(|kv| kv.key == key);
        match found.and_then(|kv| kv.value.clone()).and_then(|v| v.value) {
            Some(any_value::Value::StringValue(s)) => s,
            other => panic!("{key}: {other:?}"),
        }
    };
    for ((span, len), n) in spans.iter().zip([0, 200, 20_000]).zip(1..) {
        assert_eq!(value(span, "a").len(), len);
        assert_eq!(span.name, format!("tools/call t{n}"));
    }
    let server = &spans[3];
    assert_eq!(server.name, "tools/call echo");
    let pairs: Vec<(String, String)> =
        server.attributes.iter().map(|kv| (kv.key.clone(), value(server, &kv.key))).collect();
    let expected = [
        ("mcp.method.name", "tools/call"),
        ("network.transport", "tcp"),
        ("gen_ai.tool.name", "echo"),
        ("gen_ai.operation.name", "execute_tool"),
        ("mcp.protocol.version", "2026-07-28"),
        ("jsonrpc.request.id", "42"),
        ("mcp.session.id", "s-1"),
        ("error.type", "-32602"),
        ("rpc.response.status_code", "-32602"),
    ];
    let expected: Vec<(String, String)> =
        expected.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    assert_eq!(pairs, expected);
    let status = server.status.as_ref().unwrap();
    assert_eq!(
        (status.code, status.message.as_str()),
        (status::StatusCode::Error as i32, "JSON-RPC error -32602")
    );
}

/// Span fields are walked by their lengths, whichever number of bytes a length takes: how a
/// thread's chunk is cut where a batch is full.
#[test]
fn span_fields_end_where_their_lengths_say() {
    let owned: Vec<Owned> = [0usize, 200, 20_000]
        .iter()
        .zip(1..)
        .map(|(len, n)| {
            let mut r = record(n, None, None);
            r.attributes = vec![("a", "y".repeat(*len))];
            r
        })
        .collect();
    let mut chunk = Vec::new();
    let mut ends = Vec::new();
    for r in &owned {
        span_field(&mut chunk, &r.span());
        ends.push(chunk.len());
    }
    let mut at = 0;
    for end in ends {
        at = span_end(&chunk, at);
        assert_eq!(at, end);
    }
    assert_eq!(span_end(&chunk[..10], 0), 10, "a cut field ends with what there is");
}

/// Spans recorded on several threads, one of which has ended, all go out in the next export,
/// in one batch; the ended thread's chunk is then forgotten, a live thread's kept.
#[test]
fn every_threads_spans_go_out_and_an_ended_threads_chunk_is_forgotten() {
    let (pipeline, received) =
        shared_pipeline(Batching { delay: Duration::from_secs(3600), max_queue: 64, max_batch: 64 });
    pipeline.push(&record(1, None, None).span());
    // Joined, so its locals (its chunk's reference among them) are gone: a scope's end only
    // waits for the closure to return.
    let ended = {
        let pipeline = pipeline.clone();
        std::thread::spawn(move || {
            pipeline.push(&record(2, None, None).span());
            pipeline.push(&record(3, None, None).span());
        })
    };
    ended.join().unwrap();
    let (kept, keep) = mpsc::channel::<()>();
    let (pushed, was_pushed) = mpsc::channel();
    let live = {
        let pipeline = pipeline.clone();
        std::thread::spawn(move || {
            pipeline.push(&record(4, None, None).span());
            pushed.send(()).unwrap();
            let _ = keep.recv();
        })
    };
    was_pushed.recv().unwrap();
    assert_eq!(pipeline.shared.chunks.len(), 3, "a chunk per thread that recorded a span");
    assert!(received.recv_timeout(Duration::from_millis(200)).is_err(), "nothing is due yet");
    pipeline.flush();
    let sent = received.recv_timeout(Duration::from_secs(10)).expect("flushed");
    let mut names: Vec<String> =
        sent.resource_spans[0].scope_spans[0].spans.iter().map(|s| s.name.clone()).collect();
    names.sort();
    assert_eq!(names, ["tools/call t1", "tools/call t2", "tools/call t3", "tools/call t4"]);
    assert_eq!(pipeline.shared.chunks.len(), 2, "the ended thread's chunk is gone, the live one's kept");
    kept.send(()).unwrap();
    live.join().unwrap();
    pipeline.shutdown();
}

/// A thread's chunk joins the batches at [`CHUNK_SPANS`] spans, before any export is due:
/// batches fill (and go) under a steady load on one thread.
#[test]
fn a_threads_chunk_is_handed_over_when_it_holds_its_share() {
    let batching = Batching { delay: Duration::from_secs(3600), max_queue: 1024, max_batch: 128 };
    let (pipeline, received) = pipeline(batching);
    // Small spans: the count, not the bytes, decides.
    let record_n = |n: usize| {
        let mut small = record((n % 200) as u8, None, None);
        small.attributes.clear();
        pipeline.push(&small.span());
    };
    (0..CHUNK_SPANS * 2).for_each(record_n);
    let sent = received.recv_timeout(Duration::from_secs(10)).expect("a full batch");
    assert_eq!(sent.resource_spans[0].scope_spans[0].spans.len(), 128);
    (0..CHUNK_SPANS - 1).for_each(record_n);
    assert_eq!(pipeline.shared.lock().waiting, 0, "short of its share, the chunk keeps its spans");
    record_n(0);
    assert_eq!(pipeline.shared.lock().waiting, CHUNK_SPANS, "its share joins the batch being filled");
    pipeline.shutdown();
    let rest = received.recv_timeout(Duration::from_secs(10)).expect("the rest, at shutdown");
    assert_eq!(rest.resource_spans[0].scope_spans[0].spans.len(), CHUNK_SPANS);
}

#[test]
fn varints_are_as_long_as_they_say() {
    for value in [0u64, 1, 127, 128, 300, 16_383, 16_384, u64::from(u32::MAX), u64::MAX] {
        let mut out = Vec::new();
        varint(&mut out, value);
        assert_eq!(out.len(), varint_len(value), "{value}");
        assert_eq!(prost::encoding::decode_varint(&mut &out[..]).unwrap(), value);
    }
}

#[test]
fn the_batch_variables_are_read() {
    let of = |pairs: &[(&str, &str)]| {
        let pairs: Vec<(String, String)> =
            pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        Batching::from_env(move |name| pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
    };
    let defaults = of(&[]).unwrap();
    assert_eq!((defaults.delay, defaults.max_queue, defaults.max_batch), (Duration::from_secs(5), 2048, 512));
    let set = of(&[
        ("OTEL_BSP_SCHEDULE_DELAY", "250"),
        ("OTEL_BSP_MAX_QUEUE_SIZE", "100"),
        ("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "500"),
    ])
    .unwrap();
    assert_eq!((set.delay, set.max_queue, set.max_batch), (Duration::from_millis(250), 100, 100));
    assert!(of(&[("OTEL_BSP_SCHEDULE_DELAY", "soon")]).unwrap_err().contains("OTEL_BSP_SCHEDULE_DELAY"));
}

#[test]
fn a_trace_answer_s_partial_success_is_read_by_the_shared_reader() {
    use opentelemetry_proto::tonic::collector::trace::v1::{
        ExportTracePartialSuccess, ExportTraceServiceResponse,
    };
    let answer = ExportTraceServiceResponse {
        partial_success: Some(ExportTracePartialSuccess {
            rejected_spans: 2,
            error_message: "too old".into(),
        }),
    }
    .encode_to_vec();
    let partial = mcp_metrics::PartialSuccess::of(&answer).expect("a partial success");
    assert_eq!((partial.rejected, partial.message.as_str()), (2, "too old"));
}

/// A server span whose shared attributes name `tool` under `version`, with the request id `id`.
fn server_span<'a>(ids: &'a Owned, tool: &'a str, version: Option<&'static str>, id: &'a str) -> Span<'a> {
    Span {
        kind: Kind::Server,
        what: What::Request(Request {
            method: "tools/call",
            transport: "tcp",
            id: Id::Text(id.as_bytes()),
            item: Some((Item::Tool, tool)),
            version,
            session: None,
            failure: None,
        }),
        ..ids.span()
    }
}

/// The shared attributes are copied from a thread's templates: each span still says its own
/// tool, revision and id when more kinds come than a thread keeps, in any order, and tools
/// whose names differ only past a common start are not taken for one another.
#[test]
fn each_server_span_carries_its_own_shared_attributes_whatever_came_before() {
    let ids = record(9, Some([3; 8]), None);
    let tools: Vec<String> = (0..super::encode::TEMPLATES + 3).map(|n| format!("tool-{n}")).collect();
    let versions = [Some("2026-07-28"), Some("2025-11-25"), None];
    let mut expected = Vec::new();
    for round in 0..3 {
        for (n, tool) in tools.iter().enumerate() {
            let version = versions[(n + round) % versions.len()];
            expected.push((tool.clone(), version, format!("{round}-{n}")));
        }
    }
    let batch: Vec<Span<'_>> =
        expected.iter().map(|(tool, version, id)| server_span(&ids, tool, *version, id)).collect();
    let body = encode(&Fixed::new(&[]), &batch);
    let request = ExportTraceServiceRequest::decode(&body[..]).unwrap();
    let spans = &request.resource_spans[0].scope_spans[0].spans;
    assert_eq!(spans.len(), expected.len());
    for (span, (tool, version, id)) in spans.iter().zip(&expected) {
        let pairs: Vec<(String, String)> = span
            .attributes
            .iter()
            .map(|kv| match kv.value.clone().and_then(|v| v.value) {
                Some(any_value::Value::StringValue(s)) => (kv.key.clone(), s),
                other => panic!("{}: {other:?}", kv.key),
            })
            .collect();
        let mut want = vec![
            ("mcp.method.name".to_owned(), "tools/call".to_owned()),
            ("network.transport".to_owned(), "tcp".to_owned()),
            ("gen_ai.tool.name".to_owned(), tool.clone()),
            ("gen_ai.operation.name".to_owned(), "execute_tool".to_owned()),
        ];
        if let Some(version) = version {
            want.push(("mcp.protocol.version".to_owned(), (*version).to_owned()));
        }
        want.push(("jsonrpc.request.id".to_owned(), id.clone()));
        assert_eq!(pairs, want, "span {id}");
    }
}

/// A body the client is done with is kept and the next batch is written in it: exports go on
/// decoding whole, and the memory is the first batch's.
#[test]
fn the_next_batch_is_written_in_the_body_sent_before() {
    let batching = Batching { delay: Duration::from_secs(3600), max_queue: 8, max_batch: 2 };
    let (pipeline, received) = pipeline(batching);
    let mut first = None;
    for round in 0..3u8 {
        pipeline.push(&record(2 * round + 1, None, None).span());
        pipeline.push(&record(2 * round + 2, None, None).span());
        let export = received.recv_timeout(Duration::from_secs(10)).expect("a full batch");
        let names: Vec<&str> =
            export.resource_spans[0].scope_spans[0].spans.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [format!("tools/call t{}", 2 * round + 1), format!("tools/call t{}", 2 * round + 2)]
        );
        // The export loop takes the body back once the client's answer is read.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while pipeline.shared.lock().spare.is_empty() {
            assert!(std::time::Instant::now() < deadline, "the body sent was not given back");
            std::thread::sleep(Duration::from_millis(5));
        }
        let queue = pipeline.shared.lock();
        assert_eq!(queue.spare.len(), 1, "one body kept, the rest freed");
        // Bodies of the same length begin at the same place in the same memory.
        let at = queue.spare[0].as_ptr() as usize;
        assert_eq!(*first.get_or_insert(at), at, "round {round} was written in memory of its own");
    }
    pipeline.shutdown();
}

mod requests;
