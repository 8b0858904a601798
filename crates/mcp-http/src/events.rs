//! Resumable SSE streams (legacy Streamable HTTP): every event of a POST response stream is
//! recorded with an id, so a client that lost the stream (or was asked to poll) reconnects
//! with `GET` + `Last-Event-ID` and receives the rest. 2026-07-28 does not resume streams.
//!
//! The store is behind a trait so that a shared store can replace the in-memory one when
//! several server instances serve one session ([`crate::McpHttp::with_event_store`]).

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use crate::budget::Warning;

/// Where the events of resumable streams are kept.
pub trait EventStore: Send + Sync + 'static {
    /// Records an event of `stream` and returns its id.
    fn append(&self, stream: &str, data: &[u8]) -> String;
    /// The events of `stream` after sequence number `after`, with their ids and sequence
    /// numbers; `None` when the store cannot replay all of them any more (the stream, or some
    /// of its events after `after`, were evicted or never recorded). A resumption then fails
    /// (`410 Gone`) rather than silently skip what is missing.
    fn after(&self, stream: &str, after: u64) -> Option<Vec<(u64, String, Vec<u8>)>>;
    /// Marks `stream` complete: its final response has been recorded.
    fn finish(&self, stream: &str);
    /// True once `stream` is complete (or unknown: nothing more will come).
    fn is_finished(&self, stream: &str) -> bool;
}

/// Splits an event id into its stream and sequence number.
pub fn parse_id(id: &str) -> Option<(&str, u64)> {
    let (stream, seq) = id.rsplit_once('.')?;
    Some((stream, seq.parse().ok()?))
}

/// What an event costs besides its data (its sequence number and buffer in the queue).
const EVENT_OVERHEAD: usize = 32;
/// What a stream costs besides its events and its name (held twice: map key and order).
const STREAM_OVERHEAD: usize = 128;

/// The default total of [`MemoryEventStore`]: 16 MiB (also `HttpConfig::max_replay_bytes`).
pub const DEFAULT_MAX_REPLAY_BYTES: usize = 16 * 1024 * 1024;

fn event_cost(data: &[u8]) -> usize {
    data.len() + EVENT_OVERHEAD
}

fn stream_cost(name: &str) -> usize {
    2 * name.len() + STREAM_OVERHEAD
}

#[derive(Default)]
struct Stream {
    events: VecDeque<(u64, Vec<u8>)>,
    next: u64,
    /// The lowest sequence number that can still be replayed: every event before it is gone.
    first: u64,
    finished: bool,
}

#[derive(Default)]
struct Inner {
    map: HashMap<String, Stream>,
    /// Stream names, oldest first.
    order: VecDeque<String>,
    /// What everything held costs ([`event_cost`], [`stream_cost`]).
    bytes: usize,
}

impl Inner {
    fn remove_stream(&mut self, position: usize) {
        let Some(name) = self.order.remove(position) else { return };
        if let Some(stream) = self.map.remove(&name) {
            let events: usize = stream.events.iter().map(|(_, d)| event_cost(d)).sum();
            self.bytes -= events + stream_cost(&name);
        }
    }

    fn pop_event(&mut self, name: &str) -> bool {
        let Some(stream) = self.map.get_mut(name) else { return false };
        let Some((seq, data)) = stream.events.pop_front() else { return false };
        stream.first = seq + 1;
        self.bytes -= event_cost(&data);
        true
    }

    /// Evicts until the store is within `budget`: whole finished streams first, oldest first
    /// (their answers were delivered unless the client lost them and never came back), then
    /// the oldest events of the oldest streams still running (already sent once; a client
    /// resuming from before them is refused, never handed a stream with a hole). Returns
    /// whether anything was evicted.
    fn shrink(&mut self, budget: usize) -> bool {
        let mut evicted = false;
        while self.bytes > budget {
            if let Some(position) = self.order.iter().position(|name| self.map[name].finished) {
                self.remove_stream(position);
            } else if let Some(name) =
                self.order.iter().find(|name| !self.map[name.as_str()].events.is_empty()).cloned()
            {
                self.pop_event(&name);
            } else {
                break;
            }
            evicted = true;
        }
        evicted
    }
}

/// A bounded in-memory store: the last `per_stream` events of the last `max_streams` streams,
/// and no more than a total byte budget ([`with_max_bytes`](Self::with_max_bytes); 16 MiB by
/// default) of event data and bookkeeping together.
pub struct MemoryEventStore {
    inner: Mutex<Inner>,
    per_stream: usize,
    max_streams: usize,
    max_bytes: usize,
    warning: Warning,
}

impl MemoryEventStore {
    /// A store keeping `per_stream` events of at most `max_streams` streams, within the
    /// default byte budget.
    pub fn new(per_stream: usize, max_streams: usize) -> Self {
        MemoryEventStore {
            inner: Mutex::default(),
            per_stream: per_stream.max(1),
            max_streams: max_streams.max(1),
            max_bytes: DEFAULT_MAX_REPLAY_BYTES,
            warning: Warning::default(),
        }
    }

    /// The same store holding at most `max_bytes` in total: past it, finished streams are
    /// evicted first (oldest first), then the oldest events of running streams. An event
    /// larger than the whole budget is sent but not kept.
    pub fn with_max_bytes(mut self, max_bytes: usize) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    /// What the store holds now, by its own accounting (event data plus a fixed overhead per
    /// event and per stream); never more than the byte budget once an append has returned.
    pub fn retained_bytes(&self) -> usize {
        self.lock().bytes
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Default for MemoryEventStore {
    fn default() -> Self {
        Self::new(1024, 4096)
    }
}

impl EventStore for MemoryEventStore {
    fn append(&self, stream: &str, data: &[u8]) -> String {
        let mut inner = self.lock();
        if !inner.map.contains_key(stream) {
            if inner.order.len() >= self.max_streams {
                inner.remove_stream(0);
            }
            inner.order.push_back(stream.to_owned());
            inner.map.insert(stream.to_owned(), Stream::default());
            inner.bytes += stream_cost(stream);
        }
        let entry = inner.map.get_mut(stream).expect("inserted above");
        let seq = entry.next;
        entry.next += 1;
        entry.events.push_back((seq, data.to_vec()));
        let full = entry.events.len() > self.per_stream;
        inner.bytes += event_cost(data);
        if full {
            inner.pop_event(stream);
        }
        if inner.shrink(self.max_bytes) {
            if let Some(count) = self.warning.hit() {
                tracing::warn!(
                    max_bytes = self.max_bytes,
                    evictions = count,
                    "replay store over its byte budget: the oldest replay data was evicted"
                );
            }
        }
        format!("{stream}.{seq}")
    }

    fn after(&self, stream: &str, after: u64) -> Option<Vec<(u64, String, Vec<u8>)>> {
        let inner = self.lock();
        let s = inner.map.get(stream)?;
        if after.saturating_add(1) < s.first {
            return None;
        }
        Some(
            s.events
                .iter()
                .filter(|(seq, _)| *seq > after)
                .map(|(seq, d)| (*seq, format!("{stream}.{seq}"), d.clone()))
                .collect(),
        )
    }

    fn finish(&self, stream: &str) {
        if let Some(s) = self.lock().map.get_mut(stream) {
            s.finished = true;
        }
    }

    fn is_finished(&self, stream: &str) -> bool {
        self.lock().map.get(stream).is_none_or(|s| s.finished)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(replay: Option<Vec<(u64, String, Vec<u8>)>>) -> Option<Vec<Vec<u8>>> {
        replay.map(|events| events.into_iter().map(|(_, _, d)| d).collect())
    }

    #[test]
    fn events_replay_after_an_id_and_are_bounded() {
        let store = MemoryEventStore::new(2, 1);
        let a = store.append("s", b"1");
        let b = store.append("s", b"2");
        store.append("s", b"3");
        let (stream, seq) = parse_id(&b).unwrap();
        assert_eq!(data(store.after(stream, seq)), Some(vec![b"3".to_vec()]));
        let (stream, seq) = parse_id(&a).unwrap();
        assert_eq!(data(store.after(stream, seq)), Some(vec![b"2".to_vec(), b"3".to_vec()]));
        assert_eq!(store.after("s", 0), store.after(stream, seq), "event 1 follows the evicted event 0");
        assert!(!store.is_finished("s"));
        store.finish("s");
        assert!(store.is_finished("s"));
        store.append("t", b"x");
        assert_eq!(store.after("s", 0), None, "the oldest stream was evicted");
    }

    #[test]
    fn a_replay_that_would_skip_evicted_events_is_refused() {
        let store = MemoryEventStore::new(2, 8);
        for d in [b"0", b"1", b"2", b"3"] {
            store.append("s", d);
        }
        // Events 0 and 1 are gone: from 0 the replay would miss event 1.
        assert_eq!(store.after("s", 0), None);
        assert_eq!(data(store.after("s", 1)), Some(vec![b"2".to_vec(), b"3".to_vec()]));
        assert_eq!(store.after("unknown", 0), None);
    }

    #[test]
    fn the_byte_budget_evicts_finished_streams_first_then_the_oldest_events() {
        let kib = vec![b'x'; 1024];
        let budget = 3 * (1024 + EVENT_OVERHEAD) + 3 * stream_cost("a");
        let store = MemoryEventStore::new(1024, 64).with_max_bytes(budget);
        store.append("a", &kib);
        store.append("b", &kib);
        store.finish("b");
        store.append("c", &kib);
        assert_eq!(store.retained_bytes(), budget, "exactly full");
        // One more KiB: the finished stream goes, though it is younger than the running one.
        store.append("a", &kib);
        assert_eq!(store.after("b", 0), None);
        assert_eq!(data(store.after("a", 0)).map(|d| d.len()), Some(1), "a keeps both its events");
        assert!(store.retained_bytes() <= budget);
        // No finished stream left: the oldest events of the oldest running stream go next.
        store.append("c", &kib);
        store.append("c", &kib);
        assert!(store.retained_bytes() <= budget, "{} > {budget}", store.retained_bytes());
        assert!(store.after("a", 0).is_none(), "a lost its first event");
        assert_eq!(data(store.after("c", 0)).map(|d| d.len()), Some(2));
        // An event bigger than the whole budget is not kept at all.
        let priming = store.append("d", b"");
        store.append("d", &vec![b'y'; budget + 1]);
        assert!(store.retained_bytes() <= budget);
        let (stream, seq) = parse_id(&priming).unwrap();
        assert_eq!(store.after(stream, seq), None, "the huge event is gone");
    }
}
