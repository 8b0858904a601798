//! The span pipeline: a finished span is encoded as OTLP protobuf by the thread that finished it,
//! while its values are still in that thread's cache, and appended to the batch being filled
//! (one short lock, one copy); an export loop sends the batches over OTLP/HTTP. It is woken when
//! a batch is full, when its delay is over and at shutdown — never once per span — and only
//! writes the request's heads in front of what the batch already holds: it reads no span and
//! frees nothing the request path allocated.
//!
//! The loop runs where [`Driver`] says: a task on the server's own runtime, or a thread of its
//! own with a one-thread runtime (for a process that has no runtime running while it traces).
//! The task is the cheaper of the two for a server on one thread: a process with a second
//! thread, even an idle one, pays for it on every allocation (glibc's allocator takes its
//! locks once a process has more than one thread), about 4 % of a small call's CPU, measured.
//!
//! Batching follows the standard variables of OpenTelemetry's batch span processor:
//! `OTEL_BSP_SCHEDULE_DELAY` (milliseconds between exports, default 5,000),
//! `OTEL_BSP_MAX_QUEUE_SIZE` (spans waiting at most, default 2,048; beyond, spans are dropped
//! and counted) and `OTEL_BSP_MAX_EXPORT_BATCH_SIZE` (spans per request, default 512).

use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mcp_metrics::OtlpTarget;

/// A span's kind, as the pipeline records them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Server,
    Client,
}

/// A finished span, as the request path hands it over: borrowed from what the request still
/// holds, and written as OTLP protobuf straight from there (no record of its own is built,
/// copied or freed).
#[derive(Debug)]
pub(crate) struct Span<'a> {
    pub(crate) trace_id: &'a [u8; 16],
    pub(crate) span_id: &'a [u8; 8],
    pub(crate) parent: Option<&'a [u8; 8]>,
    pub(crate) trace_state: Option<&'a str>,
    /// Its name: the first part, then the second after a space when there is one (a server
    /// span's method and the tool or prompt it names).
    pub(crate) name: (&'a str, Option<&'a str>),
    pub(crate) kind: Kind,
    pub(crate) end: SystemTime,
    /// How long the span lasted: its start is `end - duration`.
    pub(crate) duration: Duration,
    pub(crate) attributes: Attributes<'a>,
    /// The status message of a failed span (a server span's comes from its
    /// [`Server::failure`]).
    pub(crate) error: Option<&'a str>,
}

/// A span's attributes: a server span's are fields, written out in their order; a client
/// span's are a list.
#[derive(Debug)]
pub(crate) enum Attributes<'a> {
    Server(Server<'a>),
    List(&'a [(&'static str, String)]),
}

/// What a server span says about its request ([`Attributes::Server`]).
#[derive(Debug)]
pub(crate) struct Server<'a> {
    pub(crate) method: &'a str,
    pub(crate) transport: &'static str,
    pub(crate) id: &'a str,
    /// The tool, prompt or other item the request names.
    pub(crate) item: Option<(Item, &'a str)>,
    pub(crate) version: Option<&'static str>,
    pub(crate) session: Option<&'a str>,
    pub(crate) failure: Option<Failure>,
}

/// What a request names ([`Server::item`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Item {
    Tool,
    Prompt,
    Other,
}

/// How a server span's request failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Failure {
    /// A tool result with `isError`.
    Tool,
    /// A JSON-RPC error, by its code.
    Code(i64),
    Cancelled,
}

impl Span<'_> {
    /// Each attribute as its key and its value, in the order they are written.
    pub(crate) fn each_attribute(&self, mut f: impl FnMut(&str, &str)) {
        let server = match &self.attributes {
            Attributes::List(list) => {
                for (key, value) in *list {
                    f(key, value);
                }
                return;
            }
            Attributes::Server(server) => server,
        };
        f("mcp.method.name", server.method);
        f("network.transport", server.transport);
        f("jsonrpc.request.id", server.id);
        match server.item {
            Some((Item::Tool, name)) => {
                f("gen_ai.tool.name", name);
                f("gen_ai.operation.name", "execute_tool");
            }
            Some((Item::Prompt, name)) => f("gen_ai.prompt.name", name),
            Some((Item::Other, _)) | None => {}
        }
        if let Some(version) = server.version {
            f("mcp.protocol.version", version);
        }
        if let Some(session) = server.session {
            f("mcp.session.id", session);
        }
        match server.failure {
            None => {}
            Some(Failure::Tool) => f("error.type", "tool_error"),
            Some(Failure::Cancelled) => f("error.type", "cancelled"),
            Some(Failure::Code(code)) => {
                let code = code.to_string();
                f("error.type", &code);
                f("rpc.response.status_code", &code);
            }
        }
    }

    /// The status message when the span failed.
    pub(crate) fn status_message(&self) -> Option<std::borrow::Cow<'_, str>> {
        if let Some(error) = self.error {
            return Some(error.into());
        }
        let Attributes::Server(server) = &self.attributes else { return None };
        Some(match server.failure? {
            Failure::Tool => "the tool reported an error (isError)".into(),
            Failure::Code(code) => format!("JSON-RPC error {code}").into(),
            Failure::Cancelled => "cancelled".into(),
        })
    }
}

/// How spans are batched ([the module](self)).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Batching {
    pub(crate) delay: Duration,
    pub(crate) max_queue: usize,
    pub(crate) max_batch: usize,
}

impl Batching {
    pub(crate) fn from_env(env: impl Fn(&str) -> Option<String>) -> Result<Batching, String> {
        let number = |name: &str, default: u64| -> Result<u64, String> {
            env(name).map_or(Ok(default), |value| mcp_metrics::positive_millis(name, &value))
        };
        let delay = Duration::from_millis(number("OTEL_BSP_SCHEDULE_DELAY", 5_000)?);
        let max_queue = usize::try_from(number("OTEL_BSP_MAX_QUEUE_SIZE", 2_048)?).unwrap_or(usize::MAX);
        let max_batch = usize::try_from(number("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512)?)
            .unwrap_or(usize::MAX)
            .min(max_queue);
        Ok(Batching { delay, max_queue, max_batch })
    }
}

/// Spans encoded and waiting: one export request's body in the making ([`Fixed::open`]).
#[derive(Default)]
struct Batch {
    body: Vec<u8>,
    spans: usize,
}

struct Queue {
    /// Batches of `max_batch` spans, waiting for the thread.
    full: Vec<Batch>,
    /// The batch being filled.
    filling: Batch,
    /// Spans in `full` and `filling`, bounded by `max_queue`.
    waiting: usize,
    /// Spans dropped because the queue was full, since the last export said so.
    dropped: u64,
    /// A flush asked for: export what waits now.
    flush: bool,
    closing: bool,
}

struct Shared {
    queue: Mutex<Queue>,
    /// Wakes the export loop: a batch is full, a flush or the end is asked for.
    wake: tokio::sync::Notify,
    /// `true` once the export loop is over (its last export answered or given up).
    ended: tokio::sync::watch::Sender<bool>,
    batching: Batching,
    fixed: Fixed,
}

impl Queue {
    /// Whether the export loop has something to do before its delay is over.
    fn due(&self) -> bool {
        !self.full.is_empty() || self.closing || self.flush
    }
}

/// Where the export loop runs.
#[derive(Debug, Clone)]
pub(crate) enum Driver {
    /// A thread of its own, driving a one-thread runtime of its own.
    Thread,
    /// A task on this runtime (the server's): no thread is added to the process.
    Task(tokio::runtime::Handle),
}

/// Tells the pipeline the loop is over however it ends (returned, gave up, or dropped with its
/// runtime).
struct Ended(Arc<Shared>);

impl Drop for Ended {
    fn drop(&mut self) {
        self.0.lock().closing = true;
        self.0.ended.send_replace(true);
    }
}

thread_local! {
    /// Where a span is encoded before it is appended to the batch (outside the queue's lock).
    static SCRATCH: std::cell::RefCell<Vec<u8>> = std::cell::RefCell::new(Vec::with_capacity(512));
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The queue and the thread that exports it.
pub(crate) struct Pipeline {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline").field("batching", &self.shared.batching).finish_non_exhaustive()
    }
}

impl Pipeline {
    /// Starts the export loop where `driver` says, sending to `target` with the resource
    /// `resource`.
    pub(crate) fn start(
        target: OtlpTarget,
        resource: Vec<(String, String)>,
        batching: Batching,
        driver: Driver,
    ) -> Result<Pipeline, String> {
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue {
                full: Vec::new(),
                filling: Batch::default(),
                waiting: 0,
                dropped: 0,
                flush: false,
                closing: false,
            }),
            wake: tokio::sync::Notify::new(),
            ended: tokio::sync::watch::Sender::new(false),
            batching,
            fixed: Fixed::new(&resource),
        });
        let exporter = Exporter { target };
        let thread = match driver {
            Driver::Task(runtime) => {
                let client = {
                    let _entered = runtime.enter();
                    exporter.client()
                }
                .map_err(|e| format!("the OTLP trace exporter's HTTP client: {e}"))?;
                let ended = Ended(shared.clone());
                runtime.spawn(async move {
                    exporter.run(&ended.0, &client).await;
                    drop(ended);
                });
                None
            }
            // The client and its runtime are built on the thread itself: a runtime may be
            // neither built nor dropped inside the caller's (async) context.
            Driver::Thread => Some(
                std::thread::Builder::new()
                    .name("mcpkit-traces".into())
                    .spawn({
                        let ended = Ended(shared.clone());
                        move || exporter.run_on_thread(ended)
                    })
                    .map_err(|e| format!("the OTLP trace exporter's thread: {e}"))?,
            ),
        };
        Ok(Pipeline { shared, thread: Mutex::new(thread) })
    }

    /// Queues a finished span, encoded; dropped (and counted) when the queue is full.
    pub(crate) fn push(&self, span: &Span<'_>) {
        SCRATCH.with_borrow_mut(|scratch| {
            scratch.clear();
            span_field(scratch, span);
            let shared = &*self.shared;
            let mut queue = shared.lock();
            if queue.closing {
                return;
            }
            if queue.waiting >= shared.batching.max_queue {
                queue.dropped += 1;
                return;
            }
            if queue.filling.body.is_empty() {
                queue.filling.body = shared.fixed.open(shared.batching.max_batch);
            }
            queue.filling.body.extend_from_slice(scratch);
            queue.filling.spans += 1;
            queue.waiting += 1;
            if queue.filling.spans == shared.batching.max_batch {
                let full = std::mem::take(&mut queue.filling);
                queue.full.push(full);
                drop(queue);
                shared.wake.notify_one();
            }
        });
    }

    /// Asks the export loop to send what waits and end; spans ended after this are dropped.
    fn end(&self) {
        self.shared.lock().closing = true;
        self.shared.wake.notify_one();
    }

    /// Exports what waits and stops; later spans are dropped. With [`Driver::Thread`], blocks
    /// until the last export is done (each export is bounded by the target's timeout); with
    /// [`Driver::Task`] it cannot wait for the runtime that runs the loop (the caller may be
    /// the one that drives it), so it only asks: await [`Pipeline::close`] there.
    pub(crate) fn shutdown(&self) {
        self.end();
        let thread = self.thread.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(thread) = thread {
            let _ = thread.join();
        }
    }

    /// Exports what waits and stops, awaited: done when the last export is answered (or given
    /// up), whichever [`Driver`] runs the loop.
    pub(crate) async fn close(&self) {
        self.end();
        let mut ended = self.shared.ended.subscribe();
        let _ = ended.wait_for(|ended| *ended).await;
    }

    /// Asks the loop to export what waits now, without waiting for it.
    #[cfg(test)]
    pub(crate) fn flush(&self) {
        self.shared.lock().flush = true;
        self.shared.wake.notify_one();
    }
}

impl Drop for Pipeline {
    /// Dropped without [`Pipeline::shutdown`]: the loop sends what waits and ends, unwaited.
    fn drop(&mut self) {
        self.end();
    }
}

struct Exporter {
    target: OtlpTarget,
}

impl Exporter {
    fn client(&self) -> reqwest::Result<reqwest::Client> {
        reqwest::Client::builder().timeout(self.target.timeout).build()
    }

    /// The loop on a thread of its own: a runtime of one thread, this one, drives the client's
    /// connection during each export (no hand-off to another thread and back).
    fn run_on_thread(self, ended: Ended) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
        let client = runtime.map_err(|e| e.to_string()).and_then(|runtime| {
            let client = {
                let _entered = runtime.enter();
                self.client()
            };
            client.map(|client| (runtime, client)).map_err(|e| e.to_string())
        });
        match client {
            Ok((runtime, client)) => runtime.block_on(self.run(&ended.0, &client)),
            Err(e) => tracing::warn!("traces are not exported: the HTTP client: {e}"),
        }
        drop(ended);
    }

    /// Sends each batch when it is full, what waits when the delay is over, a flush when asked,
    /// and what is left at the end.
    async fn run(&self, shared: &Shared, client: &reqwest::Client) {
        let batching = shared.batching;
        loop {
            // A delay too long to add to now is a wait without one.
            let deadline = tokio::time::Instant::now().checked_add(batching.delay);
            while !shared.lock().due() {
                let woken = shared.wake.notified();
                match deadline {
                    Some(deadline) => {
                        if tokio::time::timeout_at(deadline, woken).await.is_err() {
                            break;
                        }
                    }
                    None => woken.await,
                }
            }
            let (batches, dropped, closing) = {
                let mut queue = shared.lock();
                queue.flush = false;
                let mut batches = std::mem::take(&mut queue.full);
                if queue.filling.spans > 0 {
                    batches.push(std::mem::take(&mut queue.filling));
                }
                queue.waiting = 0;
                (batches, std::mem::take(&mut queue.dropped), queue.closing)
            };
            if dropped > 0 {
                tracing::warn!(
                    "{dropped} spans were dropped: the trace queue (OTEL_BSP_MAX_QUEUE_SIZE) was full"
                );
            }
            for batch in batches {
                self.export(client, shared.fixed.close(batch.body), batch.spans).await;
            }
            if closing {
                return;
            }
        }
    }

    async fn export(&self, client: &reqwest::Client, body: bytes::Bytes, count: usize) {
        let items = if count == 1 { "1 span".to_owned() } else { format!("{count} spans") };
        self.target.post(client, body, &items).await;
    }
}

// OTLP's protobuf messages, written straight from the records: the few fields mcpkit sends,
// with no message objects built per span (field numbers from opentelemetry-proto's trace/v1,
// common/v1, resource/v1 and collector/trace/v1; the tests decode the output with the
// generated types).

const LEN: u8 = 2;

fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn varint_len(value: u64) -> usize {
    (64 - (value | 1).leading_zeros() as usize).div_ceil(7)
}

fn tag(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, u64::from(field << 3 | u32::from(wire)));
}

fn bytes(out: &mut Vec<u8>, field: u32, data: &[u8]) {
    if field < 16 && data.len() < 0x80 {
        // The common case, a one-byte tag and length, written together.
        out.extend_from_slice(&[(field << 3) as u8 | LEN, data.len() as u8]);
    } else {
        tag(out, field, LEN);
        varint(out, data.len() as u64);
    }
    out.extend_from_slice(data);
}

/// A `KeyValue` whose value is a string, as field `field`.
fn key_value(out: &mut Vec<u8>, field: u32, key: &str, value: &str) {
    if field < 16 && key.len() + value.len() < 0x80 - 6 {
        // Every length fits a byte (the pair's is the key's and the value's and six bytes of
        // tags and lengths): no varint to size, and the tags and lengths go in two writes.
        let any = 2 + value.len();
        let pair = 2 + key.len() + 2 + any;
        out.reserve(2 + pair);
        out.extend_from_slice(&[(field << 3) as u8 | LEN, pair as u8, 1 << 3 | LEN, key.len() as u8]);
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(&[2 << 3 | LEN, any as u8, 1 << 3 | LEN, value.len() as u8]);
        out.extend_from_slice(value.as_bytes());
        return;
    }
    let any = 1 + varint_len(value.len() as u64) + value.len();
    let pair = 1 + varint_len(key.len() as u64) + key.len() + 1 + varint_len(any as u64) + any;
    tag(out, field, LEN);
    varint(out, pair as u64);
    bytes(out, 1, key.as_bytes());
    tag(out, 2, LEN);
    varint(out, any as u64);
    bytes(out, 1, value.as_bytes());
}

fn nanos(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// One `Span` message (without its own tag and length).
fn span(out: &mut Vec<u8>, r: &Span<'_>) {
    bytes(out, 1, r.trace_id);
    bytes(out, 2, r.span_id);
    if let Some(state) = r.trace_state.filter(|s| !s.is_empty()) {
        bytes(out, 3, state.as_bytes());
    }
    if let Some(parent) = r.parent {
        bytes(out, 4, parent);
    }
    match r.name {
        (name, None) => bytes(out, 5, name.as_bytes()),
        (first, Some(second)) => {
            tag(out, 5, LEN);
            varint(out, (first.len() + 1 + second.len()) as u64);
            out.extend_from_slice(first.as_bytes());
            out.push(b' ');
            out.extend_from_slice(second.as_bytes());
        }
    }
    // SpanKind: SERVER = 2, CLIENT = 3.
    tag(out, 6, 0);
    varint(
        out,
        match r.kind {
            Kind::Server => 2,
            Kind::Client => 3,
        },
    );
    let end = nanos(r.end);
    let start = end.saturating_sub(u64::try_from(r.duration.as_nanos()).unwrap_or(u64::MAX));
    tag(out, 7, 1);
    out.extend_from_slice(&start.to_le_bytes());
    tag(out, 8, 1);
    out.extend_from_slice(&end.to_le_bytes());
    r.each_attribute(|key, value| key_value(out, 9, key, value));
    // Status: unset (an empty message), or ERROR (2) with its message.
    match r.status_message() {
        Some(message) => {
            let len = 1 + varint_len(message.len() as u64) + message.len() + 2;
            tag(out, 15, LEN);
            varint(out, len as u64);
            bytes(out, 2, message.as_bytes());
            tag(out, 3, 0);
            varint(out, 2);
        }
        None => bytes(out, 15, &[]),
    }
    // Flags: sampled, and whether the parent is remote (it is, when there is one).
    tag(out, 16, 5);
    let flags: u32 = 0x01 | 0x100 | if r.parent.is_some() { 0x200 } else { 0 };
    out.extend_from_slice(&flags.to_le_bytes());
}

/// What every export request of one exporter begins with: the `Resource` message as the
/// field of `ResourceSpans`, and the scope `mcpkit` as the field of `ScopeSpans`.
pub(crate) struct Fixed {
    resource: Vec<u8>,
    scope: Vec<u8>,
}

impl Fixed {
    pub(crate) fn new(resource: &[(String, String)]) -> Fixed {
        let mut message = Vec::with_capacity(256);
        for (key, value) in resource {
            key_value(&mut message, 1, key, value);
        }
        let mut field = Vec::with_capacity(message.len() + 4);
        bytes(&mut field, 1, &message);
        let mut scope_message = Vec::with_capacity(32);
        bytes(&mut scope_message, 1, b"mcpkit");
        bytes(&mut scope_message, 2, env!("CARGO_PKG_VERSION").as_bytes());
        let mut scope = Vec::with_capacity(scope_message.len() + 2);
        bytes(&mut scope, 1, &scope_message);
        Fixed { resource: field, scope }
    }
}

/// Room for what precedes the spans and is known only after them: two tags and two lengths.
const HEAD_ROOM: usize = 2 * (1 + 10);

/// What a batch starts with before its first span is appended, at most (so that opening one
/// never maps fresh memory under the queue's lock); it grows as spans come.
const FIRST_CAPACITY: usize = 64 * 1024;

impl Fixed {
    /// A new `ExportTraceServiceRequest` body, to append spans to ([`span_field`]): room for
    /// the heads, the resource (written by [`Fixed::close`]), then the scope.
    fn open(&self, spans: usize) -> Vec<u8> {
        let front = HEAD_ROOM + self.resource.len();
        let capacity = (front + self.scope.len() + spans.saturating_mul(320)).min(FIRST_CAPACITY);
        let mut out = Vec::with_capacity(capacity.max(front + self.scope.len()));
        out.resize(front, 0);
        out.extend_from_slice(&self.scope);
        out
    }

    /// The request: the enclosing messages' tags and lengths and the resource written into the
    /// room left in front of the spans; the slice of the buffer they fill (no copy of the spans).
    fn close(&self, mut out: Vec<u8>) -> bytes::Bytes {
        let front = HEAD_ROOM + self.resource.len();
        let scope_spans = out.len() - front;
        let mut head = Vec::with_capacity(front);
        let resource_spans = self.resource.len() + 1 + varint_len(scope_spans as u64) + scope_spans;
        tag(&mut head, 1, LEN);
        varint(&mut head, resource_spans as u64);
        head.extend_from_slice(&self.resource);
        tag(&mut head, 2, LEN);
        varint(&mut head, scope_spans as u64);
        let start = front - head.len();
        out[start..front].copy_from_slice(&head);
        bytes::Bytes::from(out).slice(start..)
    }
}

/// Appends one span as a field of `ScopeSpans`: its tag, its length, the `Span`. The span goes
/// straight into place and its length is patched in after it.
fn span_field(out: &mut Vec<u8>, record: &Span<'_>) {
    out.push(2 << 3 | LEN);
    let at = out.len();
    // A two-byte length (spans of 128 to 16,383 bytes, nearly all), patched in below.
    out.extend_from_slice(&[0, 0]);
    span(out, record);
    let len = out.len() - at - 2;
    if len < 0x80 {
        out[at] = len as u8;
        out.remove(at + 1);
    } else if len < 0x4000 {
        out[at] = (len as u8) | 0x80;
        out[at + 1] = (len >> 7) as u8;
    } else {
        let mut length = Vec::with_capacity(4);
        varint(&mut length, len as u64);
        out.splice(at..at + 2, length);
    }
}

/// One `ExportTraceServiceRequest` of `batch`, as the pipeline writes them.
#[cfg(test)]
fn encode(fixed: &Fixed, batch: &[Span<'_>]) -> bytes::Bytes {
    let mut out = fixed.open(batch.len());
    for record in batch {
        span_field(&mut out, record);
    }
    fixed.close(out)
}

#[cfg(test)]
mod tests;
