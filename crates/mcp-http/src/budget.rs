//! What the transport's budgets share: the key a caller is counted under, and a warning that
//! is logged once when a budget first refuses or evicts, then at most once a minute (with the
//! number of occurrences in between), so a flood of refusals cannot flood the log too.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::gate::{Gate, Permit};

use crate::caller::Authenticated;
use crate::limits::PrincipalLimits;

/// How often a budget's warning may repeat.
const WARN_EVERY: Duration = Duration::from_secs(60);

/// A rate-limited warning for one budget.
#[derive(Default)]
pub(crate) struct Warning {
    /// When it was last logged, and how many occurrences went unlogged since.
    state: Mutex<(Option<Instant>, u64)>,
}

impl Warning {
    /// Counts one occurrence; returns `Some(occurrences)` (this one included) when it is time
    /// to log.
    pub(crate) fn hit(&self) -> Option<u64> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.1 += 1;
        if state.0.is_some_and(|at| at.elapsed() < WARN_EVERY) {
            return None;
        }
        let count = state.1;
        *state = (Some(Instant::now()), 0);
        Some(count)
    }
}

/// The key a caller's share of a budget is counted under: its principal when authorization is
/// on, otherwise its peer's IP address when the connection's address is known (the standalone
/// server always knows it; a mounted router knows it with axum's `ConnectInfo<SocketAddr>`);
/// `None` when neither is known, and then only the total budget applies.
pub(crate) fn caller_key(auth: Option<&Authenticated>, peer: Option<SocketAddr>) -> Option<String> {
    match (auth, peer) {
        (Some(a), _) => Some(format!("principal {}", a.key)),
        (None, Some(peer)) => Some(format!("peer {}", peer.ip())),
        (None, None) => None,
    }
}

/// The budget of long-lived streams (`subscriptions/listen`, HTTP+SSE `GET /sse`): slots of
/// their own, in total and per caller, so that streams never hold the slots request work needs.
pub(crate) struct StreamBudget {
    total: Arc<Gate>,
    max: usize,
    per_caller: PrincipalLimits,
    max_per_caller: usize,
    warning: Warning,
}

impl StreamBudget {
    pub(crate) fn new(max: usize, per_caller: usize) -> Self {
        StreamBudget {
            total: Gate::new(max.max(1)),
            max: max.max(1),
            per_caller: PrincipalLimits::new(per_caller),
            max_per_caller: per_caller.max(1),
            warning: Warning::default(),
        }
    }

    /// The slots of one more stream of `caller` (held for the stream's life), or `None` when
    /// the total or the caller's share is taken.
    pub(crate) fn try_open(&self, caller: Option<&str>) -> Option<Vec<Permit>> {
        let opened = (|| {
            let total = self.total.try_one()?;
            let mut permits = vec![total];
            if let Some(caller) = caller {
                permits.push(self.per_caller.try_acquire(caller)?);
            }
            Some(permits)
        })();
        if opened.is_none() {
            if let Some(count) = self.warning.hit() {
                tracing::warn!(
                    max_streams = self.max,
                    max_streams_per_principal = self.max_per_caller,
                    refusals = count,
                    "long-lived stream budget reached: a new stream was refused with 503"
                );
            }
        }
        opened
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_warning_is_logged_once_then_counted() {
        let warning = Warning::default();
        assert_eq!(warning.hit(), Some(1));
        assert_eq!(warning.hit(), None);
        assert_eq!(warning.hit(), None);
        assert_eq!(warning.state.lock().unwrap().1, 2, "the unlogged occurrences are counted");
    }

    #[test]
    fn streams_have_a_total_and_a_share_per_caller() {
        let budget = StreamBudget::new(3, 2);
        let a1 = budget.try_open(Some("a")).unwrap();
        let _a2 = budget.try_open(Some("a")).unwrap();
        assert!(budget.try_open(Some("a")).is_none(), "a has its share");
        let _b = budget.try_open(Some("b")).unwrap();
        assert!(budget.try_open(Some("c")).is_none(), "the total is taken");
        assert!(budget.try_open(None).is_none());
        drop(a1);
        assert!(budget.try_open(None).is_some());
    }
}
