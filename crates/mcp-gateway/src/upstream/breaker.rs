//! An upstream's circuit breaker: after `failures` requests in a row that the upstream did not
//! answer — timed out, or lost with their connection — it opens, and requests fail at once
//! (`-32603`, outcome "not executed") instead of each holding a concurrency slot until its
//! timeout. After `cooldown` one request goes through as a probe (half-open): an answer closes
//! the breaker, another failure opens it again for another cooldown.
//!
//! An answer of any kind counts as the upstream being there: a result, a tool error
//! (`isError`), a JSON-RPC error — and so is a reconnection, which closes it. Requests refused
//! before they were sent (the upstream down, no slot free) count neither way. The request path costs one atomic load while the breaker is
//! closed and nothing failed; the lock is taken only on a failure and while it is open.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mcp_types::ErrorObject;

/// Where the breaker is, as the status shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Position {
    Closed,
    Open,
    HalfOpen,
}

impl Position {
    pub(crate) const fn as_str(self) -> &'static str {
        match self {
            Position::Closed => "closed",
            Position::Open => "open",
            Position::HalfOpen => "half-open",
        }
    }
}

#[derive(Default)]
struct Opened {
    /// When it opened (or a probe failed); `None` while closed.
    at: Option<Instant>,
    /// A probe is in flight: other requests still fail fast.
    probing: bool,
}

pub(crate) struct Breaker {
    /// Failures in a row that open it; 0: never.
    threshold: u32,
    cooldown: Duration,
    /// Failures in a row so far.
    consecutive: AtomicU32,
    /// Set while open or half-open: the fast path reads only this.
    open: AtomicBool,
    opened: Mutex<Opened>,
    /// How many times it opened.
    opens: AtomicU64,
    /// Requests failed fast while it was open.
    rejected: AtomicU64,
}

/// A request let through: report its outcome with [`Breaker::answered`] or
/// [`Breaker::failed`]; one dropped without either (the caller went away) gives back a probe's
/// turn.
pub(crate) struct Admission<'a> {
    breaker: &'a Breaker,
    probe: bool,
}

impl Drop for Admission<'_> {
    fn drop(&mut self) {
        if self.probe {
            self.breaker.lock().probing = false;
        }
    }
}

impl Breaker {
    pub(crate) fn new(threshold: u32, cooldown: Duration) -> Breaker {
        Breaker {
            threshold,
            cooldown,
            consecutive: AtomicU32::new(0),
            open: AtomicBool::new(false),
            opened: Mutex::default(),
            opens: AtomicU64::new(0),
            rejected: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Opened> {
        self.opened.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Lets a request through, or refuses it while open (the error names `upstream`, the
    /// failures that opened it and when the next probe may go).
    pub(crate) fn admit(
        &self,
        upstream: &str,
        last_error: Option<&str>,
    ) -> Result<Admission<'_>, ErrorObject> {
        if !self.open.load(Ordering::Acquire) {
            return Ok(Admission { breaker: self, probe: false });
        }
        let mut opened = self.lock();
        let Some(at) = opened.at else {
            // Closed between the load and the lock.
            return Ok(Admission { breaker: self, probe: false });
        };
        let waited = at.elapsed();
        if waited >= self.cooldown && !opened.probing {
            opened.probing = true;
            return Ok(Admission { breaker: self, probe: true });
        }
        drop(opened);
        self.rejected.fetch_add(1, Ordering::Relaxed);
        let retry_after = self.cooldown.saturating_sub(waited);
        let why = last_error.map(|e| format!("; last: {e}")).unwrap_or_default();
        Err(ErrorObject::internal(format!(
            "upstream {upstream} is failing fast: its circuit breaker opened after {} requests in a row \
             went unanswered{why}; the next attempt goes through in {} ms",
            self.threshold,
            retry_after.as_millis()
        ))
        .with_data(serde_json::json!({
            "upstream": upstream,
            "outcome": "not executed",
            "circuit": "open",
            "retryAfterMs": u64::try_from(retry_after.as_millis()).unwrap_or(u64::MAX),
        })))
    }

    /// The upstream answered (a result or an error of its own): the count starts again, and a
    /// probe's answer closes the breaker.
    pub(crate) fn answered(&self, mut admission: Admission<'_>, upstream: &str) {
        let probe = std::mem::take(&mut admission.probe);
        if self.consecutive.load(Ordering::Relaxed) != 0 {
            self.consecutive.store(0, Ordering::Relaxed);
        }
        if probe {
            let mut opened = self.lock();
            *opened = Opened::default();
            self.open.store(false, Ordering::Release);
            drop(opened);
            tracing::info!(upstream, "circuit breaker closed: the probe was answered");
        }
    }

    /// The upstream did not answer (a timeout, a lost connection): counts towards opening; a
    /// failed probe opens it again.
    pub(crate) fn failed(&self, mut admission: Admission<'_>, upstream: &str) {
        let probe = std::mem::take(&mut admission.probe);
        if self.threshold == 0 {
            return;
        }
        let count = self.consecutive.fetch_add(1, Ordering::Relaxed).saturating_add(1);
        if !probe && count < self.threshold {
            return;
        }
        let mut opened = self.lock();
        if opened.at.is_some() && !probe {
            // Already open: a request admitted before it opened failed late.
            return;
        }
        opened.probing = false;
        opened.at = Some(Instant::now());
        self.open.store(true, Ordering::Release);
        drop(opened);
        self.opens.fetch_add(1, Ordering::Relaxed);
        if probe {
            tracing::warn!(
                upstream,
                cooldown_ms = self.cooldown.as_millis() as u64,
                "circuit breaker opened again: the probe failed"
            );
        } else {
            tracing::warn!(
                upstream,
                failures = count,
                cooldown_ms = self.cooldown.as_millis() as u64,
                "circuit breaker opened: requests fail fast until a probe is answered"
            );
        }
    }

    /// Closes the breaker: the upstream was connected again, which is an answer too (it
    /// listed what it offers).
    pub(crate) fn reset(&self, upstream: &str) {
        self.consecutive.store(0, Ordering::Relaxed);
        if !self.open.load(Ordering::Acquire) {
            return;
        }
        let mut opened = self.lock();
        let was_open = opened.at.is_some();
        *opened = Opened::default();
        self.open.store(false, Ordering::Release);
        drop(opened);
        if was_open {
            tracing::info!(upstream, "circuit breaker closed: the upstream is connected again");
        }
    }

    pub(crate) fn position(&self) -> Position {
        if !self.open.load(Ordering::Acquire) {
            return Position::Closed;
        }
        let opened = self.lock();
        match opened.at {
            None => Position::Closed,
            Some(_) if opened.probing => Position::HalfOpen,
            Some(at) if at.elapsed() >= self.cooldown => Position::HalfOpen,
            Some(_) => Position::Open,
        }
    }

    pub(crate) fn opens(&self) -> u64 {
        self.opens.load(Ordering::Relaxed)
    }

    pub(crate) fn rejected(&self) -> u64 {
        self.rejected.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_after_the_threshold_and_a_probe_closes_it() {
        // A cooldown far longer than a stall of a loaded machine between two steps.
        let b = Breaker::new(3, Duration::from_millis(500));
        for _ in 0..2 {
            let a = b.admit("u", None).unwrap();
            b.failed(a, "u");
        }
        assert_eq!(b.position(), Position::Closed);
        // An answer in between starts the count again.
        let a = b.admit("u", None).unwrap();
        b.answered(a, "u");
        for _ in 0..3 {
            let a = b.admit("u", None).unwrap();
            b.failed(a, "u");
        }
        assert_eq!(b.position(), Position::Open);
        assert_eq!(b.opens(), 1);
        let refused = b.admit("u", Some("timed out")).err().unwrap();
        assert_eq!(refused.code, -32603);
        assert!(refused.message.contains("3 requests in a row"), "{}", refused.message);
        assert!(refused.message.contains("last: timed out"), "{}", refused.message);
        assert_eq!(refused.data.as_ref().unwrap()["outcome"], "not executed");
        assert_eq!(b.rejected(), 1);

        std::thread::sleep(Duration::from_millis(550));
        assert_eq!(b.position(), Position::HalfOpen);
        let probe = b.admit("u", None).unwrap();
        // One probe at a time: the others still fail fast.
        assert!(b.admit("u", None).is_err());
        b.answered(probe, "u");
        assert_eq!(b.position(), Position::Closed);
        assert!(b.admit("u", None).is_ok());
    }

    #[test]
    fn a_failed_probe_opens_it_again_and_a_dropped_one_gives_its_turn_back() {
        let b = Breaker::new(1, Duration::from_millis(500));
        let a = b.admit("u", None).unwrap();
        b.failed(a, "u");
        assert_eq!(b.position(), Position::Open);
        std::thread::sleep(Duration::from_millis(550));
        let probe = b.admit("u", None).unwrap();
        drop(probe);
        let probe = b.admit("u", None).expect("the dropped probe's turn is given back");
        b.failed(probe, "u");
        assert_eq!(b.position(), Position::Open);
        assert_eq!(b.opens(), 2);
        assert!(b.admit("u", None).is_err());
    }

    #[test]
    fn a_reconnection_closes_it() {
        let b = Breaker::new(1, Duration::from_secs(60));
        let a = b.admit("u", None).unwrap();
        b.failed(a, "u");
        assert_eq!(b.position(), Position::Open);
        b.reset("u");
        assert_eq!(b.position(), Position::Closed);
        assert!(b.admit("u", None).is_ok());
    }

    #[test]
    fn zero_never_opens() {
        let b = Breaker::new(0, Duration::from_millis(1));
        for _ in 0..100 {
            let a = b.admit("u", None).unwrap();
            b.failed(a, "u");
        }
        assert_eq!(b.position(), Position::Closed);
    }
}
