//! Each thread's spans before they join a batch: a chunk of a few kilobytes that only its
//! thread writes, reused span after span, so that keeping and then encoding its spans writes to
//! memory already in that core's cache. The chunk is handed over to the pipeline's queue whole, when it holds
//! [`CHUNK_SPANS`] spans (or a batch's worth, when batches are smaller) or [`CHUNK_BYTES`]
//! bytes, and the export loop takes what every thread's chunk holds when the batch delay is
//! over (and at a flush and at the end), so a span never waits much longer than that delay.
//!
//! Why not append to the batch itself: a batch is a 100 KB body written once per 512 spans, so
//! each span's bytes went to lines no cache held, and the queue's lock, released right after,
//! waited for those writes to land — measured, half of what recording a span cost on the
//! request path.
//!
//! The chunk is behind a mutex of its own. Its thread is the only one that locks it on the
//! request path (uncontended: an atomic swap each way, on a line its core holds); the export
//! loop locks it once per export. Lock order, everywhere: the list of chunks, a chunk, the
//! queue.

use std::cell::RefCell;
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use super::encode::span_field;
use super::pending::{Pending, Strings};
use super::{Shared, Span};

/// Spans a chunk holds at most before it is handed over.
pub(super) const CHUNK_SPANS: usize = 64;

/// Bytes a chunk holds before it is handed over whatever its count: a few spans with long ids
/// or `tracestate`s.
pub(super) const CHUNK_BYTES: usize = 16 * 1024;

/// Room a chunk keeps between hand-overs; one that grew beyond (a span of many kilobytes)
/// gives the rest back.
const CHUNK_KEEP: usize = 64 * 1024;

/// One thread's spans: requests' kept as they ended (`pending`, their strings in `strings`),
/// the rest encoded, each a `ScopeSpans.spans` field (`encode::span_field`), in `bytes`; the
/// pending ones join `bytes` at the hand-over ([`Chunk::settle`]).
#[derive(Default)]
pub(super) struct Chunk {
    pub(super) bytes: Vec<u8>,
    pub(super) pending: Vec<Pending>,
    pub(super) strings: Strings,
    /// Spans held, encoded or pending.
    pub(super) spans: usize,
}

impl Chunk {
    /// Adds `span`: kept as it is when it is a request's, else encoded.
    pub(super) fn add(&mut self, span: &Span<'_>) {
        match Pending::of(span, &mut self.strings) {
            Some(pending) => self.pending.push(pending),
            None => span_field(&mut self.bytes, span),
        }
        self.spans += 1;
    }

    /// Adds a server's span of the request `r` ([`Pending::served`]).
    pub(super) fn add_served(
        &mut self,
        ids: &mcp_server::observe::SpanIds,
        end: u64,
        r: &mcp_server::observe::Observed<'_>,
        transport: &'static str,
    ) {
        self.pending.push(Pending::served(ids, end, r, transport, &mut self.strings));
        self.spans += 1;
    }

    /// About the bytes it holds: what is encoded, and what the pending spans keep.
    pub(super) fn size(&self) -> usize {
        self.bytes.len() + self.strings.len() + self.pending.len() * std::mem::size_of::<Pending>()
    }

    /// Encodes the pending spans after the others, one loop for all.
    pub(super) fn settle(&mut self) {
        for pending in &self.pending {
            span_field(&mut self.bytes, &pending.span(&self.strings));
        }
        self.pending.clear();
        self.strings.clear();
    }

    /// Empties it once its spans are handed over, keeping its memory (up to [`CHUNK_KEEP`]).
    pub(super) fn clear(&mut self) {
        self.bytes.clear();
        self.pending.clear();
        self.strings.clear();
        self.spans = 0;
        if self.bytes.capacity() > CHUNK_KEEP {
            self.bytes.shrink_to(CHUNK_BYTES);
        }
        if self.strings.capacity() > CHUNK_KEEP {
            self.strings.shrink_to(CHUNK_BYTES);
        }
    }
}

pub(super) fn lock(chunk: &Mutex<Chunk>) -> MutexGuard<'_, Chunk> {
    chunk.lock().unwrap_or_else(|e| e.into_inner())
}

/// The chunks of one pipeline, one per thread that recorded a span.
#[derive(Default)]
pub(super) struct Chunks {
    list: Mutex<Vec<Arc<Mutex<Chunk>>>>,
}

impl Chunks {
    /// Hands every chunk's spans to `shared`'s queue, and forgets the chunks of threads that
    /// ended (once emptied).
    pub(super) fn drain(&self, shared: &Shared) {
        let mut list = self.list.lock().unwrap_or_else(|e| e.into_inner());
        list.retain(|chunk| {
            let mut spans = lock(chunk);
            if spans.spans > 0 {
                shared.take(&mut spans);
            }
            // The thread's own reference is gone with the thread.
            Arc::strong_count(chunk) > 1
        });
    }

    /// How many threads have a chunk.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.list.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

/// A thread's chunk in one pipeline. The `Weak` keeps the pipeline's allocation, so no later
/// pipeline can have its address.
type Mine = (Weak<Shared>, Arc<Mutex<Chunk>>);

thread_local! {
    /// This thread's chunk in each pipeline it recorded spans for (one, nearly always).
    static MINE: RefCell<Vec<Mine>> = const { RefCell::new(Vec::new()) };
}

/// Runs `write` on this thread's chunk of `shared`, made and listed on its first span. On a
/// thread whose locals are already gone (a span recorded by another local's destructor), on a
/// chunk of its own, handed over at once. What runs once a thread, or never, is out of line
/// ([`register`], [`alone`]): a span's path is only the lookup, the lock and `write`.
pub(super) fn with_mine(shared: &Arc<Shared>, write: impl FnOnce(&mut Chunk)) {
    let mut write = Some(write);
    let done = MINE.try_with(|mine| {
        let Ok(mut mine) = mine.try_borrow_mut() else { return false };
        let at = Arc::as_ptr(shared);
        let found = match mine.iter().position(|(of, _)| of.as_ptr() == at) {
            Some(found) => found,
            None => register(&mut mine, shared),
        };
        if let Some(write) = write.take() {
            write(&mut lock(&mine[found].1));
        }
        true
    });
    if done != Ok(true)
        && let Some(write) = write.take()
    {
        alone(shared, write);
    }
}

/// Makes this thread's chunk of `shared` and lists it (forgetting the chunks of pipelines that
/// are gone); where it is in `mine`.
#[cold]
#[inline(never)]
fn register(mine: &mut Vec<Mine>, shared: &Arc<Shared>) -> usize {
    mine.retain(|(of, _)| of.strong_count() > 0);
    let chunk = Arc::new(Mutex::new(Chunk {
        bytes: Vec::with_capacity(CHUNK_BYTES),
        pending: Vec::with_capacity(CHUNK_SPANS),
        strings: Vec::with_capacity(CHUNK_SPANS * 32),
        spans: 0,
    }));
    shared.chunks.list.lock().unwrap_or_else(|e| e.into_inner()).push(chunk.clone());
    mine.push((Arc::downgrade(shared), chunk));
    mine.len() - 1
}

/// `write` on a chunk of its own, handed over at once: a thread whose locals are gone.
#[cold]
#[inline(never)]
fn alone(shared: &Shared, write: impl FnOnce(&mut Chunk)) {
    let mut alone = Chunk::default();
    write(&mut alone);
    if alone.spans > 0 {
        shared.take(&mut alone);
    }
}
