//! Counted slots that a request takes without waiting — requests in flight, the bytes of bodies
//! being read, a principal's share, long-lived streams — and gives back when its [`Permit`]
//! drops.
//!
//! Why not `tokio::sync::Semaphore`: its permits are given back under the lock of its list of
//! waiters, taken on every release even when nobody waits, so every POST, on whatever core it
//! ran, went through the same mutex (twice, three times with a principal's share). These
//! budgets never wait: a slot not to be had is a `503` at once. So a gate is an atomic count,
//! taken by compare-and-swap and given back by one addition.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A count of free slots.
#[derive(Debug)]
pub(crate) struct Gate {
    free: AtomicUsize,
}

impl Gate {
    /// A gate of `slots` free slots.
    pub(crate) fn new(slots: usize) -> Arc<Gate> {
        Arc::new(Gate { free: AtomicUsize::new(slots) })
    }

    /// `n` slots, held until the permit drops; `None` (nothing taken) when fewer are free.
    pub(crate) fn try_take(self: &Arc<Self>, n: usize) -> Option<Permit> {
        self.take(n).then(|| Permit { gate: self.clone(), n })
    }

    /// One slot.
    pub(crate) fn try_one(self: &Arc<Self>) -> Option<Permit> {
        self.try_take(1)
    }

    /// The slots free now.
    pub(crate) fn free(&self) -> usize {
        self.free.load(Ordering::Relaxed)
    }

    fn take(&self, n: usize) -> bool {
        let mut free = self.free.load(Ordering::Relaxed);
        loop {
            let Some(left) = free.checked_sub(n) else { return false };
            match self.free.compare_exchange_weak(free, left, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => return true,
                Err(now) => free = now,
            }
        }
    }
}

/// Slots taken from a [`Gate`], given back when dropped.
#[derive(Debug)]
pub(crate) struct Permit {
    gate: Arc<Gate>,
    n: usize,
}

impl Permit {
    /// How many slots it holds.
    pub(crate) fn count(&self) -> usize {
        self.n
    }

    /// Takes `more` slots from the same gate into this permit; `false` (nothing taken) when
    /// fewer are free.
    pub(crate) fn grow(&mut self, more: usize) -> bool {
        let taken = self.gate.take(more);
        if taken {
            self.n += more;
        }
        taken
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.gate.free.fetch_add(self.n, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_taken_while_free_and_given_back_on_drop() {
        let gate = Gate::new(3);
        let two = gate.try_take(2).unwrap();
        assert_eq!((two.count(), gate.free()), (2, 1));
        assert!(gate.try_take(2).is_none(), "one is free");
        assert_eq!(gate.free(), 1, "a refusal takes nothing");
        let mut one = gate.try_one().unwrap();
        assert!(gate.try_one().is_none());
        drop(two);
        assert_eq!(gate.free(), 2);
        assert!(one.grow(2));
        assert_eq!((one.count(), gate.free()), (3, 0));
        assert!(!one.grow(1), "none is free");
        assert_eq!(one.count(), 3, "a refused growth takes nothing");
        drop(one);
        assert_eq!(gate.free(), 3, "all given back, once");
    }

    /// Threads taking and giving back at once never hold more than the gate has, and leave it
    /// whole.
    #[test]
    fn threads_at_once_never_hold_more_than_the_gate_has() {
        let gate = Gate::new(4);
        let held = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (gate, held) = (gate.clone(), held.clone());
                std::thread::spawn(move || {
                    let mut taken = 0;
                    for _ in 0..20_000 {
                        if let Some(permit) = gate.try_one() {
                            let now = held.fetch_add(1, Ordering::SeqCst) + 1;
                            assert!(now <= 4, "{now} slots held of 4");
                            held.fetch_sub(1, Ordering::SeqCst);
                            drop(permit);
                            taken += 1;
                        }
                    }
                    taken
                })
            })
            .collect();
        let taken: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
        assert!(taken > 0);
        assert_eq!(gate.free(), 4);
    }
}
