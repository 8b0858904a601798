//! Rate limits per caller × method × tool (`ServerConfig::rate_limit`, listing and discovery
//! included) and those a policy names for uses (`Policy::rate_limits`): a token bucket per key. Keys are bounded — the caller is the token's subject (every
//! unauthenticated caller shares `anonymous`), the method one MCP defines or `other`, the tool
//! or prompt one the server has or `other` — and so is memory: each of 16 shards keeps at most
//! [`KEYS_PER_SHARD`] buckets, dropping full (idle) ones first. No lock is shared by every
//! request: a key's shard is locked briefly, and only when a limit is configured.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Requests allowed per caller × method × tool: `requests` per `per`, in bursts of at most
/// `burst`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RateLimit {
    /// Requests per period, sustained.
    pub requests: u32,
    /// The period.
    pub per: Duration,
    /// Requests at once after an idle spell (the bucket's size); at least 1.
    pub burst: u32,
}

impl RateLimit {
    /// `requests` per `per`, in bursts of as many.
    pub fn new(requests: u32, per: Duration) -> Self {
        RateLimit { requests, per, burst: requests.max(1) }
    }

    /// Sets [`burst`](Self::burst).
    #[must_use]
    pub fn with_burst(mut self, burst: u32) -> Self {
        self.burst = burst.max(1);
        self
    }

    /// Seconds per token.
    fn interval(&self) -> f64 {
        self.per.as_secs_f64() / f64::from(self.requests.max(1))
    }
}

const SHARDS: usize = 16;
/// The most buckets a shard keeps.
pub(crate) const KEYS_PER_SHARD: usize = 4096;

#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    /// The policy rule that named the limit; `None` for the server's own.
    rule: Option<std::sync::Arc<str>>,
    caller: String,
    method: &'static str,
    name: String,
}

struct Bucket {
    tokens: f64,
    at: Instant,
    /// The limit it was last taken under (a reloaded policy may change a rule's).
    interval: f64,
    burst: f64,
}

impl Bucket {
    fn full(&self, now: Instant) -> bool {
        self.tokens + now.duration_since(self.at).as_secs_f64() / self.interval >= self.burst
    }
}

/// The buckets of every key, under whichever limit each request names.
pub(crate) struct Limiter {
    hasher: std::collections::hash_map::RandomState,
    shards: Vec<Mutex<HashMap<Key, Bucket>>>,
}

impl Limiter {
    pub(crate) fn new() -> Limiter {
        Limiter {
            hasher: std::collections::hash_map::RandomState::new(),
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
        }
    }

    /// Takes one request of `caller` for `method` and `name` under `limit` (named by the
    /// policy's `rule`, or the server's own): `Err(wait)` when its bucket is empty, `wait`
    /// being how long until the next token.
    pub(crate) fn take(
        &self,
        limit: &RateLimit,
        rule: Option<&std::sync::Arc<str>>,
        caller: &str,
        method: &'static str,
        name: &str,
    ) -> Result<(), Duration> {
        let key = Key { rule: rule.cloned(), caller: caller.to_owned(), method, name: name.to_owned() };
        let shard = &self.shards[(self.hasher.hash_one(&key) as usize) % SHARDS];
        let mut buckets = shard.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        let interval = limit.interval();
        let burst = f64::from(limit.burst);
        if buckets.len() >= KEYS_PER_SHARD && !buckets.contains_key(&key) {
            // Full buckets are as good as none: drop them; if every bucket is in use, drop an
            // arbitrary one (its caller gets a fresh burst, never a refusal it did not earn).
            buckets.retain(|_, b| !b.full(now));
            if buckets.len() >= KEYS_PER_SHARD {
                if let Some(any) = buckets.keys().next().cloned() {
                    buckets.remove(&any);
                }
            }
        }
        let bucket = buckets.entry(key).or_insert(Bucket { tokens: burst, at: now, interval, burst });
        bucket.interval = interval;
        bucket.burst = burst;
        let refilled = (bucket.tokens + now.duration_since(bucket.at).as_secs_f64() / interval).min(burst);
        bucket.at = now;
        if refilled >= 1.0 {
            bucket.tokens = refilled - 1.0;
            Ok(())
        } else {
            bucket.tokens = refilled;
            Err(Duration::from_secs_f64((1.0 - refilled) * interval))
        }
    }

    #[cfg(test)]
    fn keys(&self) -> usize {
        self.shards.iter().map(|s| s.lock().unwrap().len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_then_the_sustained_rate_per_key() {
        let limit = RateLimit::new(10, Duration::from_secs(1)).with_burst(3);
        let limiter = Limiter::new();
        let take =
            |caller: &str, method: &'static str, name: &str| limiter.take(&limit, None, caller, method, name);
        for _ in 0..3 {
            assert!(take("ann", "tools/call", "echo").is_ok());
        }
        let wait = take("ann", "tools/call", "echo").unwrap_err();
        assert!(wait <= Duration::from_millis(100) && wait > Duration::ZERO, "{wait:?}");
        // Other keys have buckets of their own; so has each policy rule.
        assert!(take("ann", "tools/call", "add").is_ok());
        assert!(take("bob", "tools/call", "echo").is_ok());
        assert!(take("ann", "tools/list", "").is_ok());
        let rule: std::sync::Arc<str> = "search-cap".into();
        let tight = RateLimit::new(1, Duration::from_secs(3600));
        assert!(limiter.take(&tight, Some(&rule), "ann", "tools/call", "echo").is_ok());
        assert!(limiter.take(&tight, Some(&rule), "ann", "tools/call", "echo").is_err());
        std::thread::sleep(Duration::from_millis(120));
        assert!(take("ann", "tools/call", "echo").is_ok(), "a token came back");
    }

    #[test]
    fn memory_stays_bounded_however_many_callers() {
        let limit = RateLimit::new(1, Duration::from_secs(3600));
        let limiter = Limiter::new();
        for n in 0..(SHARDS * KEYS_PER_SHARD * 2) {
            let _ = limiter.take(&limit, None, &format!("caller-{n}"), "tools/list", "");
        }
        assert!(limiter.keys() <= SHARDS * KEYS_PER_SHARD, "{}", limiter.keys());
    }
}
