//! The request histogram, `mcp_server_operation_duration_seconds`, without a lock or an
//! allocation on the request path once a label set was seen: its series live in 16 shards keyed
//! by a hash of the borrowed labels, each series a set of atomic counters. (prometheus-client's
//! own `Family<_, Histogram>` takes a write lock per observation and needs an owned label set
//! per lookup.) Series are encoded through a `Collector` at each scrape.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use mcp_server::observe::{same_label as same, same_name};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Unit;

/// The duration buckets, in seconds: OpenTelemetry's for MCP operations (10 ms to 300 s)
/// below which a few finer ones show what a local server answers in.
pub(crate) const BUCKETS: [f64; 20] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0,
    30.0, 60.0, 120.0, 300.0,
];

/// [`BUCKETS`] in nanoseconds: a request's duration is placed by comparing integers, in a
/// binary search of a few steps (a small loop), not by a float comparison per bucket.
const BUCKET_NANOS: [u64; BUCKETS.len()] = {
    let mut nanos = [0u64; BUCKETS.len()];
    let mut i = 0;
    while i < BUCKETS.len() {
        nanos[i] = (BUCKETS[i] * 1e9 + 0.5) as u64;
        i += 1;
    }
    nanos
};

/// The bucket of a duration of `nanos`: the first whose bound is at least that (`le`), or
/// the last (`+Inf`).
fn bucket_of(nanos: u64) -> usize {
    BUCKET_NANOS.partition_point(|&bound| bound < nanos)
}

const SHARDS: usize = 16;

/// The name a tool or prompt, and the `error_type` a code or status, is counted under when
/// its own is not kept.
const OTHER: &str = "other";

/// A server's table past which label sets are folded ([`Operations::bounded`]): its names are
/// its own table's, but a gateway answers with its upstreams' error codes.
const SERVER_SERIES: usize = 10_000;

/// What besides success a request ended with, as `error_type` says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum ErrorType {
    None,
    Tool,
    Code(i64),
    Status(u16),
    Cancelled,
    /// A client's request that failed otherwise (`timeout`, `transport_error`), or a code or
    /// status counted as `other` past a table's limit.
    Named(&'static str),
}

impl ErrorType {
    pub(crate) fn label(self) -> String {
        match self {
            ErrorType::None => String::new(),
            ErrorType::Tool => "tool_error".to_owned(),
            ErrorType::Code(code) => code.to_string(),
            ErrorType::Status(status) => status.to_string(),
            ErrorType::Cancelled => "cancelled".to_owned(),
            ErrorType::Named(name) => name.to_owned(),
        }
    }
}

/// A series' labels, borrowed (for a lookup) or owned (in the table).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Labels<'a> {
    pub(crate) method: &'static str,
    pub(crate) tool: &'a str,
    pub(crate) prompt: &'a str,
    pub(crate) version: &'static str,
    pub(crate) outcome: &'static str,
    pub(crate) error: ErrorType,
}

#[derive(Debug)]
struct Key {
    method: &'static str,
    tool: Box<str>,
    prompt: Box<str>,
    version: &'static str,
    outcome: &'static str,
    error: ErrorType,
}

impl Key {
    fn of(labels: &Labels<'_>) -> Key {
        Key {
            method: labels.method,
            tool: labels.tool.into(),
            prompt: labels.prompt.into(),
            version: labels.version,
            outcome: labels.outcome,
            error: labels.error,
        }
    }

    fn is(&self, labels: &Labels<'_>) -> bool {
        same(self.method, labels.method)
            && same_name(&self.tool, labels.tool)
            && same_name(&self.prompt, labels.prompt)
            && same(self.version, labels.version)
            && same(self.outcome, labels.outcome)
            && self.error == labels.error
    }
}

/// At most this many cells a series (each 256 bytes): the table's bound times this is its
/// memory's.
const SERIES_CELLS: usize = 8;

/// One thread's share of a series: a count per bucket (the last is `+Inf`) and the sum in
/// nanoseconds, on lines no other cell shares (`crate::striped`).
#[derive(Debug)]
#[repr(align(128))]
struct Cell {
    buckets: [AtomicU64; BUCKETS.len() + 1],
    sum_nanos: AtomicU64,
}

/// One series: a [`Cell`] per group of threads, added up when read.
#[derive(Debug)]
pub(crate) struct Series {
    cells: Box<[Cell]>,
}

impl Series {
    fn new() -> Series {
        let cells = crate::striped::cells().min(SERIES_CELLS);
        let cell =
            || Cell { buckets: std::array::from_fn(|_| AtomicU64::new(0)), sum_nanos: AtomicU64::new(0) };
        Series { cells: (0..cells).map(|_| cell()).collect() }
    }

    /// The count of each bucket (not cumulative; the last is `+Inf`) and the sum in seconds.
    pub(crate) fn counts(&self) -> Counts {
        let mut counts = [0u64; BUCKETS.len() + 1];
        let mut nanos = 0u64;
        for cell in &self.cells {
            for (count, bucket) in counts.iter_mut().zip(&cell.buckets) {
                *count = count.wrapping_add(bucket.load(Ordering::Relaxed));
            }
            nanos = nanos.wrapping_add(cell.sum_nanos.load(Ordering::Relaxed));
        }
        (counts, nanos as f64 / 1e9)
    }

    fn observe(&self, duration: std::time::Duration) {
        let nanos = u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX);
        let bucket = bucket_of(nanos);
        // `cells` is a power of two no larger than the thread's cell count.
        let cell = &self.cells[crate::striped::mine() & (self.cells.len() - 1)];
        cell.buckets[bucket].fetch_add(1, Ordering::Relaxed);
        cell.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
    }
}

/// A series with its labels, as the table and the threads' recent lists hold it.
#[derive(Debug)]
struct Entry {
    key: Key,
    series: Series,
}

type Shard = RwLock<HashMap<u64, Vec<Arc<Entry>>, std::hash::BuildHasherDefault<Prehashed>>>;

/// The hash of a label set: mcp-server's [`NameHasher`], a few instructions a word where
/// SipHash (std's default) spends a hundred per field. Not keyed, so not proof against chosen
/// collisions — and it need not be: the labels are bounded (a tool or prompt name not in the
/// server's own table is counted as `other`), and equal hashes only share a list searched by
/// the labels themselves.
pub(crate) use mcp_server::hash::NameHasher as LabelHasher;

/// The shards' tables are keyed by a label set's [`LabelHasher`] hash, used as it is.
#[derive(Default)]
pub(crate) struct Prehashed(u64);

impl std::hash::Hasher for Prehashed {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[derive(Debug)]
pub(crate) struct Operations {
    /// Which histogram this is, for the threads' recent lists ([`RECENT`]): never reused.
    id: u64,
    hasher: std::hash::BuildHasherDefault<LabelHasher>,
    shards: Vec<Shard>,
    transport: &'static str,
    /// Series past which a new label set is counted with its tool or prompt name and its error
    /// code or status as `other`: a client's names are its caller's, and a gateway's codes may
    /// be its upstreams' (`SERVER_SERIES` for a server's table, whose own names are bounded).
    limit: usize,
    /// Series made so far.
    made: AtomicU64,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Encoded {
    mcp_method_name: &'static str,
    gen_ai_tool_name: String,
    gen_ai_prompt_name: String,
    mcp_protocol_version: &'static str,
    network_transport: &'static str,
    outcome: &'static str,
    error_type: String,
}

impl Operations {
    pub(crate) fn new(transport: &'static str) -> Operations {
        static IDS: AtomicU64 = AtomicU64::new(0);
        Operations {
            id: IDS.fetch_add(1, Ordering::Relaxed),
            hasher: std::hash::BuildHasherDefault::default(),
            shards: (0..SHARDS).map(|_| RwLock::default()).collect(),
            transport,
            limit: SERVER_SERIES,
            made: AtomicU64::new(0),
        }
    }

    /// A table of at most about `limit` series: past it, a new label set is counted with its
    /// name and code as `other` (a series already made keeps counting under its own).
    pub(crate) fn bounded(transport: &'static str, limit: usize) -> Operations {
        Operations { limit, ..Operations::new(transport) }
    }

    /// Counts one request of the series `labels`.
    pub(crate) fn observe(&self, labels: &Labels<'_>, duration: std::time::Duration) {
        RECENT.with_borrow_mut(|recent| {
            if let Some(hit) = recent.list.iter().find(|(id, entry)| *id == self.id && entry.key.is(labels)) {
                hit.1.series.observe(duration);
                return;
            }
            let entry = self.entry(labels);
            entry.series.observe(duration);
            if recent.list.len() < RECENT_SERIES {
                recent.list.push((self.id, entry));
            } else {
                let at = recent.next;
                recent.list[at] = (self.id, entry);
                recent.next = (at + 1) % RECENT_SERIES;
            }
        });
    }

    /// The series of `labels`, made when it is the first of its label set.
    fn entry<'a>(&self, labels: &Labels<'a>) -> Arc<Entry> {
        let hash = self.hasher.hash_one(labels);
        let shard = &self.shards[(hash as usize) % SHARDS];
        {
            let table = shard.read().unwrap_or_else(|e| e.into_inner());
            if let Some(entry) = table.get(&hash).and_then(|v| v.iter().find(|e| e.key.is(labels))) {
                return entry.clone();
            }
        }
        // A label set seen for the first time: bounded, the labels are (or past the table's
        // limit, its name is counted as `other`).
        if self.made.load(Ordering::Relaxed) >= self.limit as u64 {
            let other = |name: &'a str| if name.is_empty() { "" } else { OTHER };
            let error = match labels.error {
                ErrorType::Code(_) | ErrorType::Status(_) => ErrorType::Named(OTHER),
                error => error,
            };
            let folded = Labels { tool: other(labels.tool), prompt: other(labels.prompt), error, ..*labels };
            if folded != *labels {
                return self.entry(&folded);
            }
        }
        let mut table = shard.write().unwrap_or_else(|e| e.into_inner());
        let list = table.entry(hash).or_default();
        match list.iter().find(|e| e.key.is(labels)) {
            Some(entry) => entry.clone(),
            None => {
                let entry = Arc::new(Entry { key: Key::of(labels), series: Series::new() });
                list.push(entry.clone());
                self.made.fetch_add(1, Ordering::Relaxed);
                entry
            }
        }
    }
}

/// How many series a thread keeps at hand: a request counted like one of the last few (one
/// tool called again and again, the common case) skips the hash, the shard's lock and the
/// table. The entries are the table's own (`Arc`), so nothing is allocated on a miss either.
const RECENT_SERIES: usize = 4;

/// A thread's recent series, each with the [`Operations::id`] it belongs to; the oldest is
/// replaced.
struct Recent {
    list: Vec<(u64, Arc<Entry>)>,
    next: usize,
}

thread_local! {
    static RECENT: std::cell::RefCell<Recent> =
        const { std::cell::RefCell::new(Recent { list: Vec::new(), next: 0 }) };
}

/// A series' attributes under OpenTelemetry's names (OTLP export); empty values left out.
pub(crate) type Attributes = Vec<(&'static str, String)>;

/// A series' counts per bucket (the last `+Inf`) and its sum in seconds.
pub(crate) type Counts = ([u64; BUCKETS.len() + 1], f64);

impl Operations {
    /// Every series with its attributes, for the OTLP export.
    pub(crate) fn snapshot(&self) -> Vec<(Attributes, Counts)> {
        let mut out = Vec::new();
        for shard in &self.shards {
            let table = shard.read().unwrap_or_else(|e| e.into_inner());
            for Entry { key, series } in table.values().flatten().map(|e| &**e) {
                let pairs = [
                    ("mcp.method.name", key.method.to_owned()),
                    ("gen_ai.tool.name", key.tool.to_string()),
                    ("gen_ai.prompt.name", key.prompt.to_string()),
                    ("mcp.protocol.version", key.version.to_owned()),
                    ("network.transport", self.transport.to_owned()),
                    ("outcome", key.outcome.to_owned()),
                    ("error.type", key.error.label()),
                ];
                let attributes = pairs.into_iter().filter(|(_, v)| !v.is_empty()).collect();
                out.push((attributes, series.counts()));
            }
        }
        out
    }
}

/// `mcp_gateway_upstream_request_duration_seconds`: per upstream, answered or not. Looked up by
/// the borrowed name under a read lock; a new upstream takes the write lock once.
#[derive(Debug, Default)]
pub(crate) struct UpstreamDurations {
    table: RwLock<HashMap<Box<str>, [Arc<Series>; 2]>>,
}

/// The `outcome` of an upstream request: index 0 answered, 1 unanswered.
pub(crate) const UPSTREAM_OUTCOMES: [&str; 2] = ["answered", "unanswered"];

impl UpstreamDurations {
    pub(crate) fn observe(&self, upstream: &str, answered: bool, duration: std::time::Duration) {
        let index = usize::from(!answered);
        {
            let table = self.table.read().unwrap_or_else(|e| e.into_inner());
            if let Some(series) = table.get(upstream) {
                series[index].observe(duration);
                return;
            }
        }
        let mut table = self.table.write().unwrap_or_else(|e| e.into_inner());
        let series = table
            .entry(upstream.into())
            .or_insert_with(|| [Arc::new(Series::new()), Arc::new(Series::new())]);
        series[index].observe(duration);
    }

    /// Every series that saw a request: (upstream, outcome, counts).
    pub(crate) fn snapshot(&self) -> Vec<(String, &'static str, Counts)> {
        let table = self.table.read().unwrap_or_else(|e| e.into_inner());
        let mut out = Vec::new();
        for (name, series) in table.iter() {
            for (outcome, one) in UPSTREAM_OUTCOMES.iter().zip(series.iter()) {
                let counts = one.counts();
                if counts.0.iter().any(|&n| n > 0) {
                    out.push((name.to_string(), *outcome, counts));
                }
            }
        }
        out
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct UpstreamRequest {
    upstream: String,
    /// `answered` (a result or an error of its own) or `unanswered` (timed out, or failed on
    /// the transport).
    outcome: &'static str,
}

/// Each bucket of `counts` with its upper bound (`f64::MAX` for `+Inf`; prometheus-client adds
/// them up), and their total.
fn per_bucket(counts: &[u64; BUCKETS.len() + 1]) -> (Vec<(f64, u64)>, u64) {
    let mut total = 0;
    let buckets = BUCKETS
        .iter()
        .copied()
        .chain(std::iter::once(f64::MAX))
        .zip(counts.iter())
        .map(|(bound, &n)| {
            total += n;
            (bound, n)
        })
        .collect();
    (buckets, total)
}

impl Collector for UpstreamDurations {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let mut family = encoder.encode_descriptor(
            "mcp_gateway_upstream_request_duration",
            "How long requests sent to an upstream took, answered or not (timed out, failed on the transport)",
            Some(&Unit::Seconds),
            MetricType::Histogram,
        )?;
        for (upstream, outcome, (counts, sum)) in self.snapshot() {
            let (buckets, count) = per_bucket(&counts);
            let labels = UpstreamRequest { upstream, outcome };
            family.encode_family(&labels)?.encode_histogram::<NoLabelSet>(sum, count, &buckets, None)?;
        }
        Ok(())
    }
}

impl Collector for Operations {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let mut family = encoder.encode_descriptor(
            "mcp_server_operation_duration",
            "MCP request duration as observed on the server, by method, tool or prompt, and outcome (success, tool_error, jsonrpc_error, http_refused, cancelled)",
            Some(&Unit::Seconds),
            MetricType::Histogram,
        )?;
        self.encode_series(&mut family)
    }
}

impl Operations {
    /// Whether no series was counted yet.
    pub(crate) fn is_empty(&self) -> bool {
        self.shards.iter().all(|shard| shard.read().unwrap_or_else(|e| e.into_inner()).is_empty())
    }

    /// Every series, as samples of the family `family` (a collector's, which wrote its
    /// descriptor).
    pub(crate) fn encode_series(
        &self,
        family: &mut prometheus_client::encoding::MetricEncoder<'_>,
    ) -> Result<(), std::fmt::Error> {
        for shard in &self.shards {
            let table = shard.read().unwrap_or_else(|e| e.into_inner());
            for Entry { key, series } in table.values().flatten().map(|e| &**e) {
                let labels = Encoded {
                    mcp_method_name: key.method,
                    gen_ai_tool_name: key.tool.to_string(),
                    gen_ai_prompt_name: key.prompt.to_string(),
                    mcp_protocol_version: key.version,
                    network_transport: self.transport,
                    outcome: key.outcome,
                    error_type: key.error.label(),
                };
                let (counts, sum) = series.counts();
                // The buckets' total, not a count of its own: a scrape amid an observation
                // stays consistent.
                let (buckets, count) = per_bucket(&counts);
                family.encode_family(&labels)?.encode_histogram::<NoLabelSet>(sum, count, &buckets, None)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn labels<'a>(tool: &'a str, outcome: &'static str) -> Labels<'a> {
        Labels { method: "tools/call", tool, prompt: "", version: "", outcome, error: ErrorType::None }
    }

    /// Each series' count, by tool and outcome.
    fn counts(operations: &Operations) -> Vec<(String, &'static str, u64)> {
        let mut all: Vec<_> = operations
            .shards
            .iter()
            .flat_map(|shard| {
                let table = shard.read().unwrap();
                table
                    .values()
                    .flatten()
                    .map(|e| (e.key.tool.to_string(), e.key.outcome, e.series.counts().0.iter().sum()))
                    .collect::<Vec<_>>()
            })
            .collect();
        all.sort();
        all
    }

    /// A duration goes to the first bucket whose bound is at least as long, as the float
    /// bounds say, on both sides of each bound.
    #[test]
    fn durations_fall_in_the_buckets_their_bounds_say() {
        for (i, &bound) in BUCKETS.iter().enumerate() {
            let nanos = (bound * 1e9).round() as u64;
            assert_eq!(BUCKET_NANOS[i], nanos);
            assert_eq!(bucket_of(nanos), i, "{bound} s is in its own bucket (le)");
            assert_eq!(bucket_of(nanos + 1), i + 1, "just over {bound} s is in the next");
            assert_eq!(
                bucket_of(nanos - 1),
                BUCKETS.iter().position(|&b| (nanos - 1) as f64 / 1e9 <= b).unwrap()
            );
        }
        assert_eq!(bucket_of(0), 0);
        assert_eq!(bucket_of(u64::MAX), BUCKETS.len(), "+Inf");
    }

    /// Past its limit, a table counts a new label set with its name and code as `other`; a
    /// series already made keeps its own (a gateway answering with its upstreams' codes stays
    /// bounded).
    #[test]
    fn a_table_past_its_limit_folds_new_names_and_codes() {
        let table = Operations::bounded("tcp", 2);
        let call = |tool: &'static str, error: ErrorType| Labels {
            method: "tools/call",
            tool,
            prompt: "",
            version: "",
            outcome: "jsonrpc_error",
            error,
        };
        table.observe(&call("a", ErrorType::Code(-1)), Duration::from_micros(5));
        table.observe(&call("b", ErrorType::Code(-2)), Duration::from_micros(5));
        for code in 3..10 {
            table.observe(&call("c", ErrorType::Code(-code)), Duration::from_micros(5));
        }
        table.observe(&call("a", ErrorType::Code(-1)), Duration::from_micros(5));
        let mut seen: Vec<(String, String, u64)> = table
            .shards
            .iter()
            .flat_map(|shard| {
                let t = shard.read().unwrap();
                t.values()
                    .flatten()
                    .map(|e| (e.key.tool.to_string(), e.key.error.label(), e.series.counts().0.iter().sum()))
                    .collect::<Vec<_>>()
            })
            .collect();
        seen.sort();
        assert_eq!(
            seen,
            [("a".into(), "-1".into(), 2), ("b".into(), "-2".into(), 1), ("other".into(), "other".into(), 7)]
        );
    }

    /// The series a thread keeps at hand are the tables' own: more label sets than it keeps,
    /// interleaved, and two histograms with the same labels in one thread, are each counted
    /// where they belong.
    #[test]
    fn recent_series_count_where_they_belong() {
        let (a, b) = (Operations::new("tcp"), Operations::new("pipe"));
        let tools: Vec<String> = (0..RECENT_SERIES + 2).map(|n| format!("t{n}")).collect();
        for round in 0..3u64 {
            for (n, tool) in tools.iter().enumerate() {
                let outcome = if n % 2 == 0 { "success" } else { "tool_error" };
                a.observe(&labels(tool, outcome), Duration::from_micros(50));
                if round < 2 {
                    b.observe(&labels(tool, outcome), Duration::from_micros(50));
                }
                a.observe(&labels(tool, outcome), Duration::from_micros(50));
            }
        }
        let expected = |per: u64| -> Vec<(String, &'static str, u64)> {
            tools
                .iter()
                .enumerate()
                .map(|(n, t)| (t.clone(), if n % 2 == 0 { "success" } else { "tool_error" }, per))
                .collect()
        };
        assert_eq!(counts(&a), expected(6));
        assert_eq!(counts(&b), expected(2));
    }
}
