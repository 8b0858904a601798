//! Resumable SSE streams (legacy Streamable HTTP): every event of a POST response stream is
//! recorded with an id, so a client that lost the stream (or was asked to poll) reconnects
//! with `GET` + `Last-Event-ID` and receives the rest. 2026-07-28 does not resume streams.
//!
//! The store is behind a trait so that a shared store can replace the in-memory one when
//! several server instances serve one session.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

/// Where the events of resumable streams are kept.
pub trait EventStore: Send + Sync + 'static {
    /// Records an event of `stream` and returns its id.
    fn append(&self, stream: &str, data: &[u8]) -> String;
    /// The events of `stream` after sequence number `after`, with their ids and sequence
    /// numbers.
    fn after(&self, stream: &str, after: u64) -> Vec<(u64, String, Vec<u8>)>;
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

#[derive(Default)]
struct Stream {
    events: VecDeque<(u64, Vec<u8>)>,
    next: u64,
    finished: bool,
}

/// A bounded in-memory store: the last `per_stream` events of the last `streams` streams.
pub struct MemoryEventStore {
    streams: Mutex<(HashMap<String, Stream>, VecDeque<String>)>,
    per_stream: usize,
    max_streams: usize,
}

impl MemoryEventStore {
    /// A store keeping `per_stream` events of at most `max_streams` streams.
    pub fn new(per_stream: usize, max_streams: usize) -> Self {
        MemoryEventStore {
            streams: Mutex::default(),
            per_stream: per_stream.max(1),
            max_streams: max_streams.max(1),
        }
    }
}

impl Default for MemoryEventStore {
    fn default() -> Self {
        Self::new(1024, 4096)
    }
}

impl EventStore for MemoryEventStore {
    fn append(&self, stream: &str, data: &[u8]) -> String {
        let mut guard = self.streams.lock().unwrap_or_else(|e| e.into_inner());
        let (map, order) = &mut *guard;
        if !map.contains_key(stream) {
            if order.len() >= self.max_streams {
                if let Some(oldest) = order.pop_front() {
                    map.remove(&oldest);
                }
            }
            order.push_back(stream.to_owned());
        }
        let entry = map.entry(stream.to_owned()).or_default();
        let seq = entry.next;
        entry.next += 1;
        entry.events.push_back((seq, data.to_vec()));
        if entry.events.len() > self.per_stream {
            entry.events.pop_front();
        }
        format!("{stream}.{seq}")
    }

    fn after(&self, stream: &str, after: u64) -> Vec<(u64, String, Vec<u8>)> {
        let guard = self.streams.lock().unwrap_or_else(|e| e.into_inner());
        guard.0.get(stream).map_or_else(Vec::new, |s| {
            s.events
                .iter()
                .filter(|(seq, _)| *seq > after)
                .map(|(seq, d)| (*seq, format!("{stream}.{seq}"), d.clone()))
                .collect()
        })
    }

    fn finish(&self, stream: &str) {
        if let Some(s) = self.streams.lock().unwrap_or_else(|e| e.into_inner()).0.get_mut(stream) {
            s.finished = true;
        }
    }

    fn is_finished(&self, stream: &str) -> bool {
        self.streams.lock().unwrap_or_else(|e| e.into_inner()).0.get(stream).is_none_or(|s| s.finished)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_replay_after_an_id_and_are_bounded() {
        let store = MemoryEventStore::new(2, 1);
        let a = store.append("s", b"1");
        store.append("s", b"2");
        store.append("s", b"3");
        let (stream, seq) = parse_id(&a).unwrap();
        let replay: Vec<Vec<u8>> = store.after(stream, seq).into_iter().map(|(_, _, d)| d).collect();
        assert_eq!(replay, [b"2".to_vec(), b"3".to_vec()]);
        assert!(!store.is_finished("s"));
        store.finish("s");
        assert!(store.is_finished("s"));
        store.append("t", b"x");
        assert!(store.after("s", 0).is_empty(), "the oldest stream was evicted");
    }
}
