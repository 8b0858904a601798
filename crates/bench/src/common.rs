//! What `mcp-load` and `mcp-client-load` share, so that the two measure the same workload with
//! the same words: its arguments ([`Workload`], flattened into each command line) and the
//! latency summary ([`Latency`]). Both binaries include this one file.

use clap::Args;
use serde::Serialize;

/// The workload both load generators produce: `tools/call echo` requests of `text_bytes`,
/// `warmup` of them checked first, then `requests` measured.
#[derive(Args, Debug, Clone)]
pub(crate) struct Workload {
    /// Measured requests (after the warm-up).
    #[arg(long, default_value_t = 10_000)]
    pub(crate) requests: u64,
    /// Requests sent and checked before measuring.
    #[arg(long, default_value_t = 1_000)]
    pub(crate) warmup: u64,
    /// Length of the echoed text, in bytes.
    #[arg(long, default_value_t = 16)]
    pub(crate) text_bytes: usize,
    /// Speak 2025-11-25 (a legacy session opened with `initialize`) instead of sending
    /// 2026-07-28 requests (`mcp-load --url`: one session, named by every connection's requests).
    #[arg(long)]
    pub(crate) legacy: bool,
    /// Print one JSON object instead of the human-readable summary.
    #[arg(long)]
    pub(crate) json: bool,
    /// Give up (and stop a server started here) after this many seconds in all.
    #[arg(long, default_value_t = 120)]
    pub(crate) timeout: u64,
}

/// Latency percentiles, in µs.
#[derive(Serialize, Debug, Default, PartialEq)]
pub(crate) struct Latency {
    pub(crate) p50: u64,
    pub(crate) p90: u64,
    pub(crate) p99: u64,
    pub(crate) max: u64,
}

impl Latency {
    /// Nearest-rank percentiles of `samples` (sorted here).
    pub(crate) fn of(samples: &mut [u64]) -> Latency {
        samples.sort_unstable();
        let rank = |p: usize| match samples.len() {
            0 => 0,
            n => samples[(n * p).div_ceil(100).clamp(1, n) - 1],
        };
        Latency { p50: rank(50), p90: rank(90), p99: rank(99), max: rank(100) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_nearest_rank() {
        assert_eq!(Latency::of(&mut []), Latency::default());
        let mut samples: Vec<u64> = (1..=100).rev().collect();
        assert_eq!(Latency::of(&mut samples), Latency { p50: 50, p90: 90, p99: 99, max: 100 });
        assert_eq!(Latency::of(&mut [7]), Latency { p50: 7, p90: 7, p99: 7, max: 7 });
    }
}
