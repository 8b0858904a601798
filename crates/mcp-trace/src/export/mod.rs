//! The span pipeline: a finished span goes into its thread's own chunk (`chunks`) — a request's
//! kept as its values (`pending`), encoded as OTLP protobuf with the chunk's others when the
//! chunk is handed over; a command's encoded at once — and the chunk joins the batch being
//! filled a few dozen spans at a time; an export loop sends the batches over OTLP/HTTP. It is woken when a batch is full, when its delay is over and at
//! shutdown — never once per span — and only writes the request's heads in front of what the
//! batch already holds: it reads no span and frees nothing the request path allocated.
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

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

use mcp_metrics::OtlpTarget;
use mcp_server::observe::{Observed, SpanIds};

mod chunks;
pub(crate) mod encode;
mod pending;

use chunks::{CHUNK_BYTES, CHUNK_SPANS, Chunk, Chunks};
use encode::{Fixed, reclaim, span_end};
#[cfg(test)]
use encode::{encode, key_value, span_field, varint, varint_len};

/// A span's kind, as the pipeline records them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Server,
    Client,
}

/// A finished span, as the request path hands it over: borrowed from what the request still
/// holds; a request's values are copied into its thread's chunk (no allocation once the chunk
/// has grown), and written as OTLP protobuf from there at the hand-over.
#[derive(Debug)]
pub(crate) struct Span<'a> {
    pub(crate) trace_id: &'a [u8; 16],
    pub(crate) span_id: &'a [u8; 8],
    pub(crate) parent: Option<&'a [u8; 8]>,
    pub(crate) trace_state: Option<&'a str>,
    pub(crate) kind: Kind,
    /// When it ended, in nanoseconds since the Unix epoch ([`unix_nanos`]).
    pub(crate) end: u64,
    /// How long the span lasted: its start is `end - duration`.
    pub(crate) duration: Duration,
    pub(crate) what: What<'a>,
}

/// `time` in nanoseconds since the Unix epoch, as OTLP writes times (0 before it).
pub(crate) fn unix_nanos(time: SystemTime) -> u64 {
    time.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// What a span is of: its name, its attributes and how it failed.
#[derive(Debug)]
pub(crate) enum What<'a> {
    /// A request (a server's, or a client's for one request): named by its method and the
    /// item it names (`tools/call echo`), its attributes fields written out in their order.
    Request(Request<'a>),
    /// A command's client span: its own name and attributes, and the status message of its
    /// failure.
    Command { name: &'a str, attributes: &'a [(&'static str, String)], error: Option<&'a str> },
}

/// What a span says about its request ([`What::Request`]), on the server's side or the
/// client's.
#[derive(Debug)]
pub(crate) struct Request<'a> {
    pub(crate) method: &'static str,
    pub(crate) transport: &'static str,
    /// Its JSON-RPC id.
    pub(crate) id: Id<'a>,
    /// The tool, prompt or other item the request names.
    pub(crate) item: Option<(Item, &'a str)>,
    pub(crate) version: Option<&'static str>,
    pub(crate) session: Option<&'a str>,
    pub(crate) failure: Option<Failure>,
}

/// A request's JSON-RPC id ([`Request::id`]), written as its attribute when the span is
/// encoded: a number's digits are made then, at the hand-over for a request's span, not on the
/// request's path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Id<'a> {
    /// None was sent (a notification's span, or a client's before its id): no attribute.
    None,
    Number(i64),
    /// A string's bytes (an empty one writes no attribute either).
    Text(&'a [u8]),
}

impl<'a> Id<'a> {
    pub(crate) fn of(id: Option<&'a mcp_types::RequestId>) -> Id<'a> {
        match id {
            None => Id::None,
            Some(mcp_types::RequestId::Number(n)) => Id::Number(*n),
            Some(mcp_types::RequestId::String(s)) => Id::Text(s.as_bytes()),
        }
    }
}

/// What a request names ([`Request::item`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Item {
    Tool,
    Prompt,
    Other,
}

impl Item {
    /// What the item a request of `method` names is: a `tools/call`'s a tool, a `prompts/get`'s
    /// a prompt.
    pub(crate) fn named_by(method: &str) -> Item {
        match method {
            "tools/call" => Item::Tool,
            "prompts/get" => Item::Prompt,
            _ => Item::Other,
        }
    }
}

/// How a span's request failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Failure {
    /// A tool result with `isError`.
    Tool,
    /// A JSON-RPC error, by its code.
    Code(i64),
    Cancelled,
    /// Refused by HTTP without a JSON-RPC answer (a client's request), by its status.
    Http(u16),
    /// Anything else, by its `error.type` (a client's request: `timeout`, `transport_error`).
    Other(&'static str),
}

impl Request<'_> {
    /// The attributes every request of this method, tool or prompt and revision shares, in
    /// the order they are written (before [`Request::each_own`]'s).
    pub(crate) fn each_shared(&self, mut f: impl FnMut(&str, &[u8])) {
        f("mcp.method.name", self.method.as_bytes());
        f("network.transport", self.transport.as_bytes());
        match self.item {
            Some((Item::Tool, name)) => {
                f("gen_ai.tool.name", name.as_bytes());
                f("gen_ai.operation.name", b"execute_tool");
            }
            Some((Item::Prompt, name)) => f("gen_ai.prompt.name", name.as_bytes()),
            Some((Item::Other, _)) | None => {}
        }
        if let Some(version) = self.version {
            f("mcp.protocol.version", version.as_bytes());
        }
    }

    /// The attributes of this request alone: its id, its session, how it failed.
    pub(crate) fn each_own(&self, mut f: impl FnMut(&str, &[u8])) {
        let mut digits = [0u8; 20];
        let id = match self.id {
            Id::None => &[][..],
            Id::Number(n) => encode::decimal(n, &mut digits),
            Id::Text(text) => text,
        };
        if !id.is_empty() {
            f("jsonrpc.request.id", id);
        }
        if let Some(session) = self.session {
            f("mcp.session.id", session.as_bytes());
        }
        match self.failure {
            None => {}
            Some(Failure::Tool) => f("error.type", b"tool_error"),
            Some(Failure::Cancelled) => f("error.type", b"cancelled"),
            Some(Failure::Other(name)) => f("error.type", name.as_bytes()),
            Some(Failure::Http(status)) => {
                let status = status.to_string();
                f("error.type", status.as_bytes());
                f("http.response.status_code", status.as_bytes());
            }
            Some(Failure::Code(code)) => {
                let code = code.to_string();
                f("error.type", code.as_bytes());
                f("rpc.response.status_code", code.as_bytes());
            }
        }
    }
}

impl Span<'_> {
    /// The status message when the span failed.
    pub(crate) fn status_message(&self) -> Option<std::borrow::Cow<'_, str>> {
        let request = match &self.what {
            What::Request(request) => request,
            What::Command { error, .. } => return error.map(Into::into),
        };
        Some(match request.failure? {
            Failure::Tool => "the tool reported an error (isError)".into(),
            Failure::Code(code) => format!("JSON-RPC error {code}").into(),
            Failure::Cancelled => "cancelled".into(),
            Failure::Http(status) => format!("HTTP {status}").into(),
            Failure::Other(name) => name.into(),
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
    body: bytes::BytesMut,
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
    /// Bodies sent and given back, for the next batches to be written in ([`SPARE`] at most).
    spare: Vec<bytes::BytesMut>,
}

/// How many sent bodies are kept for reuse: the batch being filled and one being sent.
const SPARE: usize = 2;

struct Shared {
    queue: Mutex<Queue>,
    /// Each thread's spans not yet in `queue`.
    chunks: Chunks,
    /// `Queue::closing`, read without the lock by the request path (a span recorded after it
    /// is dropped before it is encoded).
    closed: AtomicBool,
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
        self.0.close();
        self.0.ended.send_replace(true);
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn close(&self) {
        self.lock().closing = true;
        self.closed.store(true, Ordering::Relaxed);
    }

    /// How many spans a thread's chunk gathers before it is handed over: [`CHUNK_SPANS`], or a
    /// batch, when batches are smaller (a full batch goes at once).
    fn chunk_spans(&self) -> usize {
        CHUNK_SPANS.min(self.batching.max_batch)
    }

    /// Appends `chunk`'s spans to the batches, as many as the queue has room for (the rest
    /// dropped and counted), and empties it; wakes the export loop when a batch is full. Taken
    /// while closing too: the loop's last export includes what the threads' chunks held.
    fn take(&self, chunk: &mut Chunk) {
        // The pending spans encoded first, outside the queue's lock.
        chunk.settle();
        let batching = &self.batching;
        let mut queue = self.lock();
        let (mut at, mut left, mut full) = (0, chunk.spans, false);
        while left > 0 {
            let room = batching.max_queue.saturating_sub(queue.waiting);
            if room == 0 {
                queue.dropped += left as u64;
                break;
            }
            if queue.filling.body.is_empty() {
                let reused = queue.spare.pop();
                queue.filling.body = self.fixed.open(batching.max_batch, reused);
            }
            let n = left.min(room).min(batching.max_batch - queue.filling.spans);
            let end = if n == left {
                chunk.bytes.len()
            } else {
                (0..n).fold(at, |end, _| span_end(&chunk.bytes, end))
            };
            queue.filling.body.extend_from_slice(&chunk.bytes[at..end]);
            queue.filling.spans += n;
            queue.waiting += n;
            (at, left) = (end, left - n);
            if queue.filling.spans == batching.max_batch {
                let batch = std::mem::take(&mut queue.filling);
                queue.full.push(batch);
                full = true;
            }
        }
        drop(queue);
        chunk.clear();
        if full {
            self.wake.notify_one();
        }
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
            chunks: Chunks::default(),
            closed: AtomicBool::new(false),
            queue: Mutex::new(Queue {
                full: Vec::new(),
                filling: Batch::default(),
                waiting: 0,
                dropped: 0,
                flush: false,
                closing: false,
                spare: Vec::new(),
            }),
            wake: tokio::sync::Notify::new(),
            ended: tokio::sync::watch::Sender::new(false),
            batching,
            fixed: Fixed::new(&resource),
        });
        let exporter = Exporter { url: reqwest::Url::parse(&target.url).ok(), target };
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

    /// Queues a finished span, encoded into this thread's chunk; dropped (and counted) when it
    /// is handed over to a full queue.
    pub(crate) fn push(&self, span: &Span<'_>) {
        let shared = &self.shared;
        if shared.closed.load(Ordering::Relaxed) {
            return;
        }
        chunks::with_mine(shared, |chunk| {
            chunk.add(span);
            if chunk.spans >= shared.chunk_spans() || chunk.size() >= CHUNK_BYTES {
                shared.take(chunk);
            }
        });
    }

    /// Queues a server's span of the request `r` (sampled: its ids `ids`, ended at `end`),
    /// kept in this thread's chunk as [`pending::Pending::served`] copies it.
    pub(crate) fn push_served(&self, ids: &SpanIds, end: u64, r: &Observed<'_>, transport: &'static str) {
        let shared = &self.shared;
        if shared.closed.load(Ordering::Relaxed) {
            return;
        }
        chunks::with_mine(shared, |chunk| {
            chunk.add_served(ids, end, r, transport);
            if chunk.spans >= shared.chunk_spans() || chunk.size() >= CHUNK_BYTES {
                shared.take(chunk);
            }
        });
    }

    /// Asks the export loop to send what waits and end; spans ended after this are dropped.
    fn end(&self) {
        self.shared.close();
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
    /// The target's URL, parsed once (`None`: it does not parse, and each post says so).
    url: Option<reqwest::Url>,
    target: OtlpTarget,
}

impl Exporter {
    fn client(&self) -> reqwest::Result<reqwest::Client> {
        self.target.client()
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

    /// Sends each batch when it is full; everything that waits (the batch being filled and
    /// what the threads' chunks hold) when the delay is over, when a flush is asked for and at
    /// the end. A full batch goes alone: sending the few spans gathered since with it would
    /// double the exports under a steady load (an export costs the server the same whether it
    /// carries 40 spans or 512). The delay runs from the last time everything went, not from
    /// the last export, so full batches coming one after another never hold back the spans of
    /// a thread that has gone quiet for longer than the delay.
    async fn run(&self, shared: &Shared, client: &reqwest::Client) {
        let batching = shared.batching;
        // A delay too long to add to now is a wait without one.
        let mut deadline = tokio::time::Instant::now().checked_add(batching.delay);
        loop {
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
            let (flush, closing) = {
                let queue = shared.lock();
                (queue.flush, queue.closing)
            };
            let everything = flush || closing || deadline.is_some_and(|at| tokio::time::Instant::now() >= at);
            if everything {
                shared.chunks.drain(shared);
                deadline = tokio::time::Instant::now().checked_add(batching.delay);
            }
            let (batches, dropped) = {
                let mut queue = shared.lock();
                let mut batches = std::mem::take(&mut queue.full);
                if everything {
                    queue.flush = false;
                    if queue.filling.spans > 0 {
                        batches.push(std::mem::take(&mut queue.filling));
                    }
                }
                let taken: usize = batches.iter().map(|batch| batch.spans).sum();
                queue.waiting = queue.waiting.saturating_sub(taken);
                (batches, std::mem::take(&mut queue.dropped))
            };
            if dropped > 0 {
                tracing::warn!(
                    "{dropped} spans were dropped: the trace queue (OTEL_BSP_MAX_QUEUE_SIZE) was full"
                );
            }
            for batch in batches {
                let body = shared.fixed.close(batch.body);
                self.export(client, body.clone(), batch.spans).await;
                // The client is done with it: the next batch is written in the same memory.
                if let Some(spent) = reclaim(body) {
                    let mut queue = shared.lock();
                    if queue.spare.len() < SPARE {
                        queue.spare.push(spent);
                    }
                }
            }
            // `closing` was read before the chunks were drained: everything went.
            if closing {
                return;
            }
        }
    }

    async fn export(&self, client: &reqwest::Client, body: bytes::Bytes, count: usize) {
        let items = if count == 1 { "1 span".to_owned() } else { format!("{count} spans") };
        match &self.url {
            Some(url) => self.target.post_to(client, url.clone(), body, &items).await,
            None => self.target.post(client, body, &items).await,
        }
    }
}

#[cfg(test)]
mod tests;
