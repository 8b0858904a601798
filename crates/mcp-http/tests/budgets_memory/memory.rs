//! Reading the resident set, and running the memory tests one at a time.

use std::time::Duration;

pub(crate) const MIB: usize = 1024 * 1024;

/// The resident set of this process, from `/proc/self/status` (None where there is none: the
/// memory checks are skipped there, the refusals are still checked).
pub(crate) fn rss() -> Option<usize> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Set in the process a test runs in by itself.
const OWN_PROCESS: &str = "MCP_HTTP_BUDGETS_MEMORY_TEST";

/// glibc's threshold above which an allocation is mapped on its own (and unmapped when freed),
/// fixed for the tests' processes. Left to itself, glibc raises the threshold each time it
/// unmaps a freed block, so whether a round of multi-MiB answers comes back to the system when
/// freed, or stays in the heap as free memory the next round may or may not reuse, depends on
/// the order the frees happened in: the resident set then measured the allocator's history,
/// not what the server holds (the send-timeout test failed one run in several that way, with
/// nothing held). Fixed, every large buffer is mapped and returned when freed, and VmRSS counts
/// what is live.
const MMAP_THRESHOLD: &str = "131072";

/// Runs the test `name` (its path in this binary) in a process of its own, one such process
/// at a time, and checks that it passed; returns true in that process, where the test's body
/// is to run. Memory freed by an earlier test stays with the allocator, and a later test
/// would grow into it unseen: only a process of its own gives a test a clean reading.
pub(crate) async fn own_process(name: &str) -> bool {
    if std::env::var_os(OWN_PROCESS).is_some() {
        return true;
    }
    let _serial = SERIAL.lock().await;
    let exe = std::env::current_exe().expect("the test binary");
    let out = std::process::Command::new(exe)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(OWN_PROCESS, "1")
        .env("MALLOC_MMAP_THRESHOLD_", MMAP_THRESHOLD)
        .output()
        .expect("the test binary runs");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    eprint!("{stderr}");
    assert!(out.status.success(), "{name} failed in its own process:\n{stdout}\n{stderr}");
    assert!(stdout.contains("1 passed"), "{name} did not run in its own process:\n{stdout}");
    false
}

/// A resident-set reading taken before the hostile traffic.
pub(crate) struct Baseline(Option<usize>);

impl Baseline {
    pub(crate) fn now() -> Self {
        Baseline(rss())
    }

    /// How much the resident set grew since the baseline (0 when it shrank).
    pub(crate) fn growth(&self) -> Option<usize> {
        Some(rss()?.saturating_sub(self.0?))
    }

    /// Fails when the resident set grew by `limit` or more since the baseline; `unbounded`
    /// is what the same traffic would keep without the budget, for the message.
    pub(crate) fn assert_grew_less_than(&self, limit: usize, unbounded: usize, what: &str) {
        let Some(growth) = self.growth() else {
            eprintln!("{what}: no /proc/self/status, memory not checked");
            return;
        };
        eprintln!(
            "{what}: VmRSS grew {:.1} MiB (limit {:.1} MiB; without the budget about {:.1} MiB would be kept)",
            mib(growth),
            mib(limit),
            mib(unbounded)
        );
        assert!(
            growth < limit,
            "{what}: VmRSS grew {:.1} MiB, over {:.1} MiB (without the budget about {:.1} MiB would be kept)",
            mib(growth),
            mib(limit),
            mib(unbounded)
        );
    }

    /// Waits (up to `within`) until the growth since the baseline is under `limit`; returns
    /// the last growth seen (None without `/proc`).
    pub(crate) async fn settles_below(&self, limit: usize, within: Duration) -> Option<usize> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let growth = self.growth()?;
            if growth < limit || tokio::time::Instant::now() >= deadline {
                return Some(growth);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

pub(crate) fn mib(bytes: usize) -> f64 {
    bytes as f64 / MIB as f64
}

/// The highest resident set seen while it runs: a thread reads it every 5 ms, so a peak
/// that is freed again before the end still counts.
pub(crate) struct Peak {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    sampler: std::thread::JoinHandle<usize>,
}

impl Peak {
    pub(crate) fn start() -> Self {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopping = stop.clone();
        let sampler = std::thread::spawn(move || {
            let mut peak = 0;
            while !stopping.load(std::sync::atomic::Ordering::Relaxed) {
                peak = peak.max(rss().unwrap_or(0));
                std::thread::sleep(Duration::from_millis(5));
            }
            peak.max(rss().unwrap_or(0))
        });
        Peak { stop, sampler }
    }

    /// Stops sampling; the highest reading, as a baseline whose growth can be asserted.
    pub(crate) fn stop(self) -> Baseline {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        Baseline(Some(self.sampler.join().expect("the sampler does not panic")).filter(|p| *p > 0))
    }
}

impl Baseline {
    /// Fails when `peak` is `limit` or more above this baseline.
    pub(crate) fn assert_peak_less_than(&self, peak: &Baseline, limit: usize, unbounded: usize, what: &str) {
        let (Some(base), Some(peak)) = (self.0, peak.0) else {
            eprintln!("{what}: no /proc/self/status, memory not checked");
            return;
        };
        let growth = peak.saturating_sub(base);
        eprintln!(
            "{what}: VmRSS peaked {:.1} MiB above the baseline (limit {:.1} MiB; without the budget about {:.1} MiB)",
            mib(growth),
            mib(limit),
            mib(unbounded)
        );
        assert!(
            growth < limit,
            "{what}: VmRSS peaked {:.1} MiB above the baseline, over {:.1} MiB (without the budget about {:.1} MiB)",
            mib(growth),
            mib(limit),
            mib(unbounded)
        );
    }
}

impl Baseline {
    /// Waits (up to `within`) until the growth since the baseline reaches `level`; returns the
    /// last growth seen (None without `/proc`).
    pub(crate) async fn rises_above(&self, level: usize, within: Duration) -> Option<usize> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let growth = self.growth()?;
            if growth >= level || tokio::time::Instant::now() >= deadline {
                return Some(growth);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// How far this reading is above `base`.
    pub(crate) fn growth_over(&self, base: &Baseline) -> Option<usize> {
        Some(self.0?.saturating_sub(base.0?))
    }
}
