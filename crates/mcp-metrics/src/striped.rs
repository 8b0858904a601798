//! Counts that every request adds to, kept without a cache line the threads share: each count
//! is a few cells on lines of their own, a thread adds to its own cell, and a read adds the
//! cells up.
//!
//! An atomic add on a line another core wrote last waits for that line to come over; with
//! every request counted in flight, out of flight, in its histogram and in the bytes, the
//! serving threads would pass the same lines back and forth on each request. A thread is given
//! its cell the first time it counts (thread after thread, round the cells), so the threads of
//! a runtime with no more workers than cells never share one; reads (a scrape, an export) are
//! rare and add up a handful of cells.

use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use prometheus_client::encoding::{EncodeMetric, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::{MetricType, TypedMetric};

/// At most this many cells a count (a power of two).
const MAX_CELLS: usize = 16;

/// The cells of each count: the machine's threads of execution, rounded up to a power of
/// two, at most [`MAX_CELLS`].
pub(crate) fn cells() -> usize {
    static CELLS: OnceLock<usize> = OnceLock::new();
    *CELLS.get_or_init(|| {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        threads.next_power_of_two().min(MAX_CELLS)
    })
}

/// This thread's cell, below [`cells`].
pub(crate) fn mine() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static MINE: usize = NEXT.fetch_add(1, Ordering::Relaxed) & (cells() - 1);
    }
    MINE.with(|n| *n)
}

/// One cell, alone on its cache lines (two of them: some processors fetch lines in pairs).
#[derive(Debug, Default)]
#[repr(align(128))]
struct Cell(AtomicU64);

/// A count of [`cells`] cells; clones share it.
#[derive(Clone, Debug)]
pub(crate) struct Striped {
    cells: Arc<[Cell]>,
}

impl Default for Striped {
    fn default() -> Self {
        Striped { cells: (0..cells()).map(|_| Cell::default()).collect() }
    }
}

impl Striped {
    /// Adds `n` (wrapping: a gauge's decrement is the addition of its negation).
    pub(crate) fn add(&self, n: u64) {
        self.cells[mine()].0.fetch_add(n, Ordering::Relaxed);
    }

    /// The sum of the cells, as an unsigned count.
    pub(crate) fn sum(&self) -> u64 {
        self.cells.iter().fold(0u64, |sum, cell| sum.wrapping_add(cell.0.load(Ordering::Relaxed)))
    }
}

/// A monotonic count, in Prometheus's text as a counter.
#[derive(Clone, Debug, Default)]
pub(crate) struct Counter(Striped);

impl Counter {
    pub(crate) fn inc_by(&self, n: u64) {
        self.0.add(n);
    }

    pub(crate) fn get(&self) -> u64 {
        self.0.sum()
    }
}

impl TypedMetric for Counter {
    const TYPE: MetricType = MetricType::Counter;
}

impl EncodeMetric for Counter {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        encoder.encode_counter::<NoLabelSet, _, u64>(&self.get(), None)
    }

    fn metric_type(&self) -> MetricType {
        Self::TYPE
    }
}

/// A count that goes up and down, in Prometheus's text as a gauge. One thread may take away
/// what another added: only the sum of the cells means anything.
#[derive(Clone, Debug, Default)]
pub(crate) struct Gauge(Striped);

impl Gauge {
    pub(crate) fn inc(&self) {
        self.0.add(1);
    }

    pub(crate) fn dec(&self) {
        self.0.add(u64::MAX);
    }

    pub(crate) fn get(&self) -> i64 {
        self.0.sum() as i64
    }
}

impl TypedMetric for Gauge {
    const TYPE: MetricType = MetricType::Gauge;
}

impl EncodeMetric for Gauge {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        encoder.encode_gauge(&self.get())
    }

    fn metric_type(&self) -> MetricType {
        Self::TYPE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_added_on_many_threads_add_up() {
        let (counter, gauge) = (Counter::default(), Gauge::default());
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    for _ in 0..1000 {
                        counter.inc_by(3);
                        gauge.inc();
                    }
                });
            }
        });
        assert_eq!(counter.get(), 24_000);
        assert_eq!(gauge.get(), 8_000);
        // Taken away on threads other than those that added: the sum is what counts.
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    for _ in 0..3000 {
                        gauge.dec();
                    }
                });
            }
        });
        assert_eq!(gauge.get(), -1_000);
        assert!(cells().is_power_of_two() && cells() <= MAX_CELLS);
    }
}
