//! The Tokio runtime of the long-running servers: `serve --http` and `gateway`.
//!
//! With more than one CPU to run on, a multi-thread runtime with a worker per CPU (or as many
//! as `--threads` says). With one — a `taskset`, a container's CPU quota of one CPU or less,
//! or `--threads 1` — a current-thread runtime: every task on the thread that runs the
//! command. A multi-thread runtime on one CPU has a single worker and still pays for being
//! able to have more (its run queues and their atomics, wake-ups checked across threads, the
//! thread that waits for the worker), and the worker and the upstream it shares the CPU with
//! take turns more often. Measured on the gateway forwarding to `serve --http` on the same CPU
//! (docs/PERFORMANCE.md, "One CPU, one thread"): its CPU time a call fell by about a third, and
//! its context switches by half.
//!
//! What a current-thread runtime cannot do, nothing here does: no task blocks its thread
//! (`spawn_blocking` still has its pool), and `block_in_place` is not used.

use std::num::NonZeroUsize;

/// The most worker threads a runtime is given: beyond what any machine this serves on has, and
/// far below where the system refuses threads (Tokio would then abort the process).
pub(crate) const MAX_THREADS: usize = 1024;

/// `--threads`, for the commands that serve.
#[derive(clap::Args, Debug, Clone, Copy, Default)]
pub(crate) struct ThreadsArgs {
    /// Worker threads (1 to 1024): the CPUs this process may use (its affinity and CPU quota)
    /// when not given. With 1, one thread runs everything: the default on one CPU.
    #[arg(long, value_name = "N", value_parser = threads_value)]
    pub(crate) threads: Option<NonZeroUsize>,
}

/// A thread count as `--threads` takes it: 1 to [`MAX_THREADS`].
pub(crate) fn threads_value(text: &str) -> Result<NonZeroUsize, String> {
    match text.trim().parse::<usize>() {
        Ok(n @ 1..=MAX_THREADS) => Ok(NonZeroUsize::new(n).expect("not zero")),
        _ => Err(format!("expected a number of threads from 1 to {MAX_THREADS}")),
    }
}

/// What kind of runtime to build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// Everything on the thread that calls `block_on`.
    OneThread,
    /// This many worker threads.
    Workers(NonZeroUsize),
}

/// The runtime for `threads` asked for, on a machine where `available` CPUs can be used.
/// When they cannot be counted, Tokio's own default: a multi-thread runtime with one worker.
pub(crate) fn flavor(threads: Option<NonZeroUsize>, available: Option<NonZeroUsize>) -> Flavor {
    match threads.or(available) {
        Some(n) if n.get() == 1 => Flavor::OneThread,
        Some(n) => Flavor::Workers(n),
        None => Flavor::Workers(NonZeroUsize::MIN),
    }
}

impl ThreadsArgs {
    /// The runtime these arguments ask for, on this machine. Without `--threads`, Tokio's own
    /// `TOKIO_WORKER_THREADS` is honoured as Tokio would; a value `--threads` would refuse is
    /// ignored with a warning on stderr (Tokio would panic).
    pub(crate) fn runtime(&self) -> std::io::Result<tokio::runtime::Runtime> {
        let asked = self.threads.or_else(|| {
            let text = std::env::var("TOKIO_WORKER_THREADS").ok()?;
            threads_value(&text)
                .map_err(|e| eprintln!("mcpkit: TOKIO_WORKER_THREADS={text:?} ignored: {e}"))
                .ok()
        });
        build(flavor(asked, std::thread::available_parallelism().ok()))
    }
}

/// Builds the runtime (I/O and timers enabled).
pub(crate) fn build(flavor: Flavor) -> std::io::Result<tokio::runtime::Runtime> {
    match flavor {
        Flavor::OneThread => tokio::runtime::Builder::new_current_thread().enable_all().build(),
        Flavor::Workers(n) => {
            tokio::runtime::Builder::new_multi_thread().worker_threads(n.get()).enable_all().build()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(n: usize) -> Option<NonZeroUsize> {
        NonZeroUsize::new(n)
    }

    #[test]
    fn one_cpu_gets_one_thread_and_more_get_a_worker_each() {
        assert_eq!(flavor(None, n(1)), Flavor::OneThread);
        assert_eq!(flavor(None, n(2)), Flavor::Workers(NonZeroUsize::new(2).unwrap()));
        assert_eq!(flavor(None, n(16)), Flavor::Workers(NonZeroUsize::new(16).unwrap()));
    }

    #[test]
    fn threads_asked_for_win_over_the_cpus() {
        assert_eq!(flavor(n(1), n(8)), Flavor::OneThread);
        assert_eq!(flavor(n(4), n(1)), Flavor::Workers(NonZeroUsize::new(4).unwrap()));
        assert_eq!(flavor(n(3), None), Flavor::Workers(NonZeroUsize::new(3).unwrap()));
    }

    #[test]
    fn a_thread_count_is_from_one_to_the_most() {
        assert_eq!(threads_value("1"), Ok(NonZeroUsize::MIN));
        assert_eq!(threads_value(" 1024 ").map(usize::from), Ok(MAX_THREADS));
        for refused in ["0", "1025", "100000", "-1", "two", ""] {
            assert!(threads_value(refused).is_err(), "{refused:?}");
        }
    }

    #[test]
    fn cpus_that_cannot_be_counted_get_a_multi_thread_runtime() {
        assert!(matches!(flavor(None, None), Flavor::Workers(_)));
    }

    #[test]
    fn each_flavor_builds_a_runtime_that_runs_tasks() {
        for flavor in [Flavor::OneThread, Flavor::Workers(NonZeroUsize::new(2).unwrap())] {
            let runtime = build(flavor).unwrap();
            let kind = runtime.block_on(async {
                let spawned = tokio::spawn(async { 40 + 2 });
                tokio::time::sleep(std::time::Duration::from_millis(1)).await;
                assert_eq!(spawned.await.unwrap(), 42);
                tokio::runtime::Handle::current().runtime_flavor()
            });
            let expected = match flavor {
                Flavor::OneThread => tokio::runtime::RuntimeFlavor::CurrentThread,
                Flavor::Workers(_) => tokio::runtime::RuntimeFlavor::MultiThread,
            };
            assert_eq!(kind, expected);
        }
    }
}
