//! The clock of one request, as the transport sending it sees it. The client's timeouts cover
//! the whole exchange, but not the time a request waits for something that is not the server:
//! an HTTP authorization flow, which may wait for a person logging in through a browser. The
//! engine runs each request's send inside the scope of its [`Deadline`]; a transport pauses it
//! ([`Deadline::pause_current`]) for as long as it waits that way, and the engine moves the
//! request's deadlines on by the time paused. No transport API carries it: a transport that
//! never pauses needs to know nothing of it.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

tokio::task_local! {
    static CURRENT: Deadline;
}

/// The pausable clock of one request (shared between the engine and the transport).
#[derive(Clone, Default)]
pub struct Deadline(Arc<Mutex<State>>);

#[derive(Default)]
struct State {
    /// How many pauses are running (nested or concurrent steps of one request).
    active: usize,
    /// When the running pauses began.
    since: Option<Instant>,
    /// The time paused by pauses that ended.
    total: Duration,
}

impl std::fmt::Debug for Deadline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (active, total) = self.paused();
        f.debug_struct("Deadline").field("paused_now", &active).field("paused_for", &total).finish()
    }
}

impl Deadline {
    /// A running clock (the engine makes one per request).
    pub fn new() -> Self {
        Self::default()
    }

    /// Runs `future` (a transport's send) with this clock as the current one.
    pub async fn scope<F: Future>(&self, future: F) -> F::Output {
        CURRENT.scope(self.clone(), future).await
    }

    /// The clock of the request being sent, for a transport that sends it from a task of its
    /// own (run that task's work in its [`Deadline::scope`]).
    pub fn current() -> Option<Deadline> {
        CURRENT.try_with(Deadline::clone).ok()
    }

    /// Pauses the clock of the request being sent, until the guard drops; `None` outside the
    /// send of a request (a notification, a stream the transport opened by itself).
    pub fn pause_current() -> Option<Paused> {
        CURRENT.try_with(|deadline| deadline.pause()).ok()
    }

    fn pause(&self) -> Paused {
        let mut state = lock(&self.0);
        if state.active == 0 {
            state.since = Some(Instant::now());
        }
        state.active += 1;
        Paused(self.clone())
    }

    /// Whether the clock is paused now, and the time it has been paused so far (the running
    /// pause included).
    pub fn paused(&self) -> (bool, Duration) {
        let state = lock(&self.0);
        let running = state.since.map(|since| since.elapsed()).unwrap_or_default();
        (state.active > 0, state.total + running)
    }
}

/// A running pause of a request's clock ([`Deadline::pause_current`]); dropping it resumes.
#[must_use = "the clock resumes when this is dropped"]
pub struct Paused(Deadline);

impl std::fmt::Debug for Paused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Paused")
    }
}

impl Drop for Paused {
    fn drop(&mut self) {
        let mut state = lock(&(self.0).0);
        state.active -= 1;
        if state.active == 0
            && let Some(since) = state.since.take()
        {
            state.total += since.elapsed();
        }
    }
}

fn lock(m: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    // On a paused clock: the sleeps take exactly what they say, whatever the machine's load.
    #[tokio::test(start_paused = true)]
    async fn pauses_add_up_and_only_inside_the_scope() {
        assert!(Deadline::pause_current().is_none(), "no request is being sent");
        let ms = Duration::from_millis;
        let clock = Deadline::new();
        clock
            .scope(async {
                let outer = Deadline::pause_current().expect("inside the scope");
                tokio::time::sleep(ms(40)).await;
                let inner = Deadline::pause_current().expect("inside the scope");
                tokio::time::sleep(ms(20)).await;
                drop(outer);
                tokio::time::sleep(ms(20)).await;
                drop(inner);
                // Not paused: not counted.
                tokio::time::sleep(ms(500)).await;
            })
            .await;
        let (active, paused) = clock.paused();
        assert!(!active);
        assert_eq!(paused, ms(80));
    }
}
