//! Legacy Streamable HTTP sessions (2025-03-26 … 2025-11-25), named by `Mcp-Session-Id`.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasher, RandomState};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::Instant;

use crate::budget::Warning;
use base64::Engine as _;
use mcp_server::{Connection, MessageSink, SendFuture};
use tokio::sync::mpsc;

/// Where a session's own messages (list changes, resource updates) go: its GET stream, when
/// the client keeps one open; otherwise they are dropped (the client polls lists instead).
#[derive(Default)]
pub(crate) struct Outbox {
    stream: Mutex<Option<mpsc::Sender<Vec<u8>>>>,
}

impl Outbox {
    /// Installs the GET stream; false when one is already open.
    pub(crate) fn open(&self, tx: mpsc::Sender<Vec<u8>>) -> bool {
        let mut stream = self.stream.lock().unwrap_or_else(|e| e.into_inner());
        if stream.as_ref().is_some_and(|s| !s.is_closed()) {
            return false;
        }
        *stream = Some(tx);
        true
    }

    /// Ends the GET stream, if one is open (the session is over).
    pub(crate) fn close(&self) {
        self.stream.lock().unwrap_or_else(|e| e.into_inner()).take();
    }
}

impl MessageSink for Outbox {
    fn send(&self, json: Vec<u8>) -> SendFuture<'_> {
        let tx = self.stream.lock().unwrap_or_else(|e| e.into_inner()).clone();
        Box::pin(async move {
            match tx {
                Some(tx) => {
                    // A closed GET stream is not a closed session: the client may reopen it.
                    let _ = tx.send(json).await;
                    true
                }
                None => true,
            }
        })
    }
}

/// How many of its newest streams a session remembers as its own; resuming an older one is
/// refused like a stream of another session (404). Every request of a legacy session opens a
/// stream, so this is per session what the session budget multiplies: 8 KiB each, 32 MiB for
/// 4,096 sessions.
pub(crate) const STREAMS_REMEMBERED: usize = 1024;

/// The streams a session opened, newest last, as keyed 64-bit fingerprints of their ids (a
/// stream id is 22 bytes on the heap plus its `String`; a fingerprint is 8 bytes inline). The
/// key is random per process, so a peer cannot make another session's stream id collide with
/// one of its own; it would need to know that id in the first place.
#[derive(Default)]
struct OwnStreams {
    newest_last: VecDeque<u64>,
}

impl OwnStreams {
    fn fingerprint(stream: &str) -> u64 {
        static KEY: OnceLock<RandomState> = OnceLock::new();
        KEY.get_or_init(RandomState::new).hash_one(stream)
    }

    fn add(&mut self, stream: &str) {
        // The oldest is forgotten first (never all at once: a stream opened just before must
        // stay resumable).
        if self.newest_last.len() >= STREAMS_REMEMBERED {
            self.newest_last.pop_front();
        }
        self.newest_last.push_back(Self::fingerprint(stream));
    }

    /// Looked up only when a client resumes: a scan of at most 1,024 numbers.
    fn owns(&self, stream: &str) -> bool {
        let wanted = Self::fingerprint(stream);
        self.newest_last.iter().rev().any(|f| *f == wanted)
    }
}

/// One legacy session.
pub(crate) struct HttpSession {
    pub(crate) connection: Arc<Connection>,
    pub(crate) outbox: Arc<Outbox>,
    last_used: Mutex<Instant>,
    /// The resumable streams this session opened, newest last (a `Last-Event-ID` must name one
    /// of them).
    streams: Mutex<OwnStreams>,
    /// The principal that created the session (its binding key), when authorization is on.
    owner: Option<String>,
    /// Whose share of the session budget it takes (`budget::caller_key`).
    caller: Option<String>,
}

impl HttpSession {
    /// A session created by `owner` (the authenticated principal's key, when auth is on),
    /// counted in the session budget of `caller`.
    pub(crate) fn new(owner: Option<String>, caller: Option<String>) -> Self {
        let outbox = Arc::new(Outbox::default());
        let connection = Connection::new(outbox.clone());
        HttpSession {
            connection,
            outbox,
            last_used: Mutex::new(Instant::now()),
            streams: Mutex::default(),
            owner,
            caller,
        }
    }

    /// The binding key of the principal that created it.
    pub(crate) fn owner(&self) -> Option<&str> {
        self.owner.as_deref()
    }

    /// True when `principal` may use this session: the one that created it (sessions are
    /// bound to their principal, docs/DECISIONS.md), or anyone when authorization is off.
    pub(crate) fn belongs_to(&self, principal: Option<&str>) -> bool {
        self.owner.as_deref() == principal
    }

    pub(crate) fn add_stream(&self, stream: &str) {
        self.streams.lock().unwrap_or_else(|e| e.into_inner()).add(stream);
    }

    pub(crate) fn owns_stream(&self, stream: &str) -> bool {
        self.streams.lock().unwrap_or_else(|e| e.into_inner()).owns(stream)
    }

    pub(crate) fn touch(&self) {
        *self.last_used.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    fn last_used(&self) -> Instant {
        *self.last_used.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn idle_for(&self) -> std::time::Duration {
        self.last_used().elapsed()
    }

    fn close(&self) {
        self.connection.close();
        self.outbox.close();
    }
}

/// The live sessions, at most `max` in all and `per_caller` of any one caller.
pub(crate) struct Sessions {
    map: RwLock<HashMap<String, Arc<HttpSession>>>,
    max: usize,
    per_caller: usize,
    warning: Warning,
}

/// The id of the session to evict among those `eligible`: the idlest of those with nothing in
/// flight, else the idlest of all.
fn idlest(
    map: &HashMap<String, Arc<HttpSession>>,
    eligible: impl Fn(&HttpSession) -> bool,
) -> Option<String> {
    map.iter()
        .filter(|(_, s)| eligible(s))
        .min_by_key(|(_, s)| (s.connection.in_flight() > 0, s.last_used()))
        .map(|(id, _)| id.clone())
}

impl Sessions {
    pub(crate) fn new(max: usize, per_caller: usize) -> Self {
        Sessions {
            map: RwLock::default(),
            max: max.max(1),
            per_caller: per_caller.max(1),
            warning: Warning::default(),
        }
    }

    pub(crate) fn get(&self, id: &str) -> Option<Arc<HttpSession>> {
        self.map.read().unwrap_or_else(|e| e.into_inner()).get(id).cloned()
    }

    /// Adds a session, first evicting the idlest of its caller's sessions when the caller has
    /// its share, and the idlest of all when the total is reached. An evicted session ends
    /// like an expired one: its id is unknown (404) and its GET stream ends.
    pub(crate) fn insert(&self, id: String, session: Arc<HttpSession>) {
        let mut evicted = Vec::new();
        {
            let mut map = self.map.write().unwrap_or_else(|e| e.into_inner());
            if let Some(caller) = &session.caller {
                let mine = |s: &HttpSession| s.caller.as_ref() == Some(caller);
                while map.values().filter(|s| mine(s)).count() >= self.per_caller {
                    let Some(victim) = idlest(&map, mine) else { break };
                    evicted.extend(map.remove(&victim));
                }
            }
            while map.len() >= self.max {
                let Some(victim) = idlest(&map, |_| true) else { break };
                evicted.extend(map.remove(&victim));
            }
            map.insert(id, session);
        }
        if evicted.is_empty() {
            return;
        }
        for session in &evicted {
            session.close();
        }
        if let Some(count) = self.warning.hit() {
            tracing::warn!(
                max_sessions = self.max,
                max_sessions_per_principal = self.per_caller,
                evictions = count,
                "legacy session budget reached: the idlest sessions were closed"
            );
        }
    }

    pub(crate) fn remove(&self, id: &str) -> Option<Arc<HttpSession>> {
        let removed = self.map.write().unwrap_or_else(|e| e.into_inner()).remove(id);
        if let Some(session) = &removed {
            session.close();
        }
        removed
    }

    /// Closes sessions idle longer than `idle`.
    pub(crate) fn expire(&self, idle: std::time::Duration) {
        let expired: Vec<String> = self
            .map
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|(_, s)| s.idle_for() > idle && s.connection.in_flight() == 0)
            .map(|(id, _)| id.clone())
            .collect();
        for id in expired {
            self.remove(&id);
        }
    }
}

/// A new session id: 128 bits from the OS CSPRNG, URL-safe (visible ASCII only).
/// What observers are told of a session (`mcp.session.id` on spans): the first 16 bytes of
/// the SHA-256 of its id, in hex. The id itself is the session's credential (and, sealed, its
/// state); its digest still lets an operator find a session whose id a client logged.
pub fn session_label(id: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, id.as_bytes());
    digest.as_ref()[..16].iter().map(|b| format!("{b:02x}")).collect()
}

pub(crate) fn new_id() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system's random number generator failed");
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_is_a_digest_not_the_id() {
        let label = session_label("secret-session-id");
        assert_eq!(label.len(), 32);
        assert!(!label.contains("secret"));
        assert_eq!(label, session_label("secret-session-id"));
        assert_ne!(label, session_label("another"));
    }

    #[test]
    fn a_session_remembers_its_newest_streams_within_a_bound() {
        let session = HttpSession::new(None, None);
        let ids: Vec<String> = (0..3 * STREAMS_REMEMBERED).map(|_| new_id()).collect();
        for id in &ids {
            session.add_stream(id);
        }
        let remembered = session.streams.lock().unwrap().newest_last.len();
        assert_eq!(remembered, STREAMS_REMEMBERED, "the record is bounded");
        let newest = &ids[ids.len() - STREAMS_REMEMBERED..];
        assert!(newest.iter().all(|id| session.owns_stream(id)), "every one of the newest is kept");
        assert!(!session.owns_stream(&ids[ids.len() - STREAMS_REMEMBERED - 1]), "older ones are forgotten");
        assert!(!session.owns_stream(&ids[0]));
        assert!(!session.owns_stream(&new_id()), "a stream it never opened");
    }
}
