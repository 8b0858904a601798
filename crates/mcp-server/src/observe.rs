//! Observation: what a server tells an [`Observer`] about each request it served — method,
//! name, era, caller, outcome, duration — and what its transport tells it about requests it
//! refused before the server saw them. Metrics, request logs and traces are observers; the
//! server knows none of them.
//!
//! The outcome keeps the layers apart: a transport's refusal (an HTTP status), a JSON-RPC
//! error (its code), a tool's error (`isError: true` in a result) and success are four
//! different things, and an HTTP success rate alone would miss every tool that failed.
//!
//! Labels stay bounded: [`method_label`] maps any method outside MCP's own to `"other"`, and
//! the name of a tool or prompt is given only when it is in the server's own table.
//! Arguments, results, tokens and session ids are never given. Without an observer, nothing
//! of this runs.

use std::time::Duration;

use mcp_types::{ProtocolVersion, RequestId};

/// Told about every request a server served or its transport refused. Called on the request
/// path: keep it short (count, enqueue), never block.
pub trait Observer: Send + Sync + 'static {
    /// A request reached the server; [`Observer::finished`] follows, exactly once (told only
    /// to an observer that [watches starts](Observer::watches_starts)).
    fn started(&self, method: &'static str) {
        let _ = method;
    }

    /// Whether it is told [`Observer::started`]. `true` by default; an observer that ignores
    /// it says `false`, and the server then makes no call to it when a request starts.
    fn watches_starts(&self) -> bool {
        true
    }

    /// The observers this one stands for, each to be told in turn: `Some` for a list
    /// ([`Observers`]), `None` (the default) for an observer of its own. A server and its
    /// transports call a list's members directly (see [`narrowed`]), each only for what it
    /// watches.
    fn members(&self) -> Option<&[std::sync::Arc<dyn Observer>]> {
        None
    }

    /// A request the server served (or refused, or that was cancelled) is over.
    fn finished(&self, request: &Observed<'_>);

    /// A request the transport refused before the server saw it (an HTTP status).
    fn refused(&self, refused: &TransportRefusal<'_>) {
        let _ = refused;
    }

    /// A legacy session opened (`true`) or ended (`false`).
    fn session(&self, opened: bool) {
        let _ = opened;
    }

    /// A `subscriptions/listen` stream (modern) opened (`true`) or ended (`false`).
    fn subscription(&self, opened: bool) {
        let _ = opened;
    }

    /// Bytes a transport received (request bodies, lines) and sent (answers, stream events).
    fn bytes(&self, received: u64, sent: u64) {
        let _ = (received, sent);
    }

    /// Whether it is told what only a transport sees: [`Observer::refused`] and
    /// [`Observer::bytes`]. `true` by default; an observer that ignores both says `false`, and
    /// the HTTP transport then observes neither (a layer less on every request).
    fn watches_transport(&self) -> bool {
        true
    }

    /// Whether [`Observed::arguments`] should be filled (a debugging request log): `false` by
    /// default, so that arguments are never copied for an observer that does not ask.
    fn wants_arguments(&self) -> bool {
        false
    }

    /// Whether requests get trace ids ([`Observed::span`]): the request's span id is then also
    /// the parent the server's handlers pass on (`Call::traceparent`). `false` by default.
    fn traces(&self) -> bool {
        false
    }

    /// The share of new traces (a request without a sampled caller's `traceparent`) that are
    /// recorded, from 0 to 1 (all, the default): decided from the trace id, as OpenTelemetry's
    /// `TraceIdRatioBased` sampler decides, so every hop agrees. A caller's own decision
    /// (its `traceparent` flag) is always followed.
    fn trace_ratio(&self) -> f64 {
        1.0
    }
}

/// A server's observer with what it answers once for all (whether it traces, at which ratio,
/// whether it wants arguments): asked when it is set (`Server::observe`), not through a call
/// of its own on every request.
pub(crate) struct Watching {
    pub(crate) observer: std::sync::Arc<dyn Observer>,
    /// Those told when a request starts: the observer's members that watch starts.
    pub(crate) starting: Box<[std::sync::Arc<dyn Observer>]>,
    /// Those told when a request is over: all its members.
    pub(crate) finishing: Box<[std::sync::Arc<dyn Observer>]>,
    pub(crate) traces: bool,
    pub(crate) ratio: f64,
    pub(crate) arguments: bool,
}

impl Watching {
    pub(crate) fn of(observer: std::sync::Arc<dyn Observer>) -> Watching {
        Watching {
            traces: observer.traces(),
            ratio: observer.trace_ratio(),
            arguments: observer.wants_arguments(),
            starting: narrowed(&observer, |o| o.watches_starts()),
            finishing: narrowed(&observer, |_| true),
            observer,
        }
    }
}

/// `observer`'s members ([`Observer::members`], a list's flattened; else `observer` itself)
/// that `keep` accepts: who to call for one kind of event, each directly rather than through
/// the list, and none that would ignore it.
pub fn narrowed(
    observer: &std::sync::Arc<dyn Observer>,
    keep: impl Fn(&dyn Observer) -> bool + Copy,
) -> Box<[std::sync::Arc<dyn Observer>]> {
    fn walk(
        observer: &std::sync::Arc<dyn Observer>,
        keep: impl Fn(&dyn Observer) -> bool + Copy,
        out: &mut Vec<std::sync::Arc<dyn Observer>>,
    ) {
        match observer.members() {
            Some(members) => members.iter().for_each(|m| walk(m, keep, out)),
            None if keep(&**observer) => out.push(observer.clone()),
            None => {}
        }
    }
    let mut out = Vec::new();
    walk(observer, keep, &mut out);
    out.into_boxed_slice()
}

/// A request's span in its trace: the trace (the caller's, from `_meta.traceparent`, else a
/// new one), this request's span id, and the caller's span it continues.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SpanIds {
    /// The trace.
    pub trace_id: [u8; 16],
    /// This request's span.
    pub span_id: [u8; 8],
    /// The caller's span, when the request carried a `traceparent`.
    pub parent: Option<[u8; 8]>,
    /// Sampled: the caller's flag, or `true` for a new trace.
    pub sampled: bool,
    /// The caller's `tracestate`, as W3C lets a hop pass it on (`mcp_types::trace::tracestate`:
    /// checked, cut to 512 bytes).
    pub tracestate: Option<String>,
}

/// Random bytes for span and trace ids: splitmix64 per thread, seeded once from the operating
/// system (a system call per request would cost more than the rest of a span's ids).
fn random_ids() -> [u64; 3] {
    use std::cell::Cell;
    const STEP: u64 = 0x9E37_79B9_7F4A_7C15;
    thread_local! {
        static STATE: Cell<u64> = Cell::new({
            let mut seed = [0u8; 8];
            getrandom::fill(&mut seed).expect("the operating system's random number generator failed");
            u64::from_le_bytes(seed)
        });
    }
    let mix = |mut z: u64| {
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    STATE.with(|state| {
        let at = state.get();
        state.set(at.wrapping_add(STEP.wrapping_mul(3)));
        [
            mix(at.wrapping_add(STEP)),
            mix(at.wrapping_add(STEP.wrapping_mul(2))),
            mix(at.wrapping_add(STEP.wrapping_mul(3))),
        ]
    })
}

impl SpanIds {
    /// A span continuing the request `meta` (its `traceparent` and `tracestate`), or starting
    /// a trace of its own (sampled).
    pub fn continuing(meta: &mcp_types::JsonObject) -> SpanIds {
        Self::continuing_sampled(meta, 1.0)
    }

    /// The same, a new trace sampled when its id falls within `ratio` (0 to 1), by the rule of
    /// OpenTelemetry's `TraceIdRatioBased`: the id's last 8 bytes, big-endian, shifted right by
    /// one, below `ratio × 2⁶³`.
    pub fn continuing_sampled(meta: &mcp_types::JsonObject, ratio: f64) -> SpanIds {
        // A request with nothing else in its `_meta` (most) is looked up in nothing.
        let parent = if meta.is_empty() { None } else { mcp_types::trace::TraceParent::from_meta(meta) };
        // W3C Trace Context: a `tracestate` is read only along with a valid `traceparent`.
        let tracestate = || mcp_types::trace::tracestate(meta).map(|s| s.into_owned());
        Self::child_of(parent, tracestate, ratio)
    }

    /// A span in the trace `context` carries (a child of its parent), or starting a trace of
    /// its own sampled by `ratio` as [`SpanIds::continuing_sampled`] decides: a client's span
    /// for a request it sends.
    pub fn continuing_context(context: &mcp_types::trace::TraceContext, ratio: f64) -> SpanIds {
        Self::child_of(context.parent, || context.tracestate.clone(), ratio)
    }

    fn child_of(
        parent: Option<mcp_types::trace::TraceParent>,
        tracestate: impl FnOnce() -> Option<String>,
        ratio: f64,
    ) -> SpanIds {
        let [first, second, span] = random_ids();
        // An id of zeros is invalid (W3C Trace Context): one bit set instead.
        let span_id = if span == 0 { 1u64 << 56 } else { span }.to_le_bytes();
        let (trace_id, sampled) = match parent {
            Some(p) => (p.trace_id, p.sampled),
            None => {
                let second = if first == 0 && second == 0 { 1u64 << 56 } else { second };
                let trace_id = (u128::from(second) << 64 | u128::from(first)).to_le_bytes();
                (trace_id, sampled_by_ratio(&trace_id, ratio))
            }
        };
        let tracestate = parent.and_then(|_| tracestate());
        SpanIds { trace_id, span_id, parent: parent.map(|p| p.span_id), sampled, tracestate }
    }

    /// The `traceparent` that makes this span the parent of what comes next.
    pub fn traceparent(&self) -> mcp_types::trace::TraceParent {
        mcp_types::trace::TraceParent {
            trace_id: self.trace_id,
            span_id: self.span_id,
            sampled: self.sampled,
        }
    }
}

/// OpenTelemetry's `TraceIdRatioBased` decision for `trace_id` at `ratio`.
pub fn sampled_by_ratio(trace_id: &[u8; 16], ratio: f64) -> bool {
    if ratio >= 1.0 {
        return true;
    }
    if ratio.is_nan() || ratio <= 0.0 {
        return false;
    }
    let bound = (ratio * (1u64 << 63) as f64) as u64;
    let low: [u8; 8] = trace_id[8..].try_into().unwrap_or([0; 8]);
    (u64::from_be_bytes(low) >> 1) < bound
}

/// How a request ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A result.
    Success,
    /// A `tools/call` result with `isError: true`: the tool failed, the protocol did not.
    ToolError,
    /// A JSON-RPC error. `refused`: the server refused the request before (or instead of)
    /// running it (a malformed request, an unknown method, a missing capability); otherwise
    /// the request earned it after dispatch (an unknown tool, a handler's failure).
    Error {
        /// The JSON-RPC error code.
        code: i64,
        /// Refused rather than answered.
        refused: bool,
    },
    /// Cancelled (or its connection went away) before it was answered: nothing was sent.
    Cancelled,
}

impl Outcome {
    /// `success`, `tool_error`, `jsonrpc_error` or `cancelled`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::ToolError => "tool_error",
            Outcome::Error { .. } => "jsonrpc_error",
            Outcome::Cancelled => "cancelled",
        }
    }
}

/// A request that is over.
#[derive(Debug)]
#[non_exhaustive]
pub struct Observed<'a> {
    /// Its JSON-RPC id.
    pub id: &'a RequestId,
    /// Its method ([`method_label`]).
    pub method: &'static str,
    /// The tool (`tools/call`) or prompt (`prompts/get`) it names, when the server has one by
    /// that name; `Some("other")` when it names one the server does not have.
    pub name: Option<&'a str>,
    /// The revision it was served under: the modern one its `_meta` names, or its session's.
    pub version: Option<ProtocolVersion>,
    /// The caller's subject, when the transport authenticated it.
    pub subject: Option<&'a str>,
    /// The session it belongs to, as the transport labels it (`Connection::session_label`).
    pub session: Option<&'a str>,
    /// How it ended.
    pub outcome: Outcome,
    /// From its transport taking it up (when the transport says when:
    /// `Classified::received_at`; mcp-http's endpoint does when it observes), else from the
    /// server taking it up, to its answer.
    pub duration: Duration,
    /// When it ended, on the monotonic clock, as the server read it to measure `duration`: an
    /// observer that needs the time of day turns it into one without reading the clock again
    /// (`None`: it was not read, and the observer reads the clock itself).
    pub ended: Option<std::time::Instant>,
    /// A `tools/call`'s or `prompts/get`'s arguments, only for an observer that
    /// [wants them](Observer::wants_arguments), with every value its schema marks secret
    /// (`writeOnly: true`, `format: "password"`) replaced by `"[redacted]"`.
    pub arguments: Option<&'a mcp_types::JsonObject>,
    /// Its span, for an observer that [traces](Observer::traces).
    pub span: Option<&'a SpanIds>,
}

impl<'a> Observed<'a> {
    /// A request for `method` ([`method_label`]) that ended with `outcome` after `duration`;
    /// the other members start empty.
    pub fn new(id: &'a RequestId, method: &'static str, outcome: Outcome, duration: Duration) -> Self {
        Observed {
            id,
            method,
            name: None,
            version: None,
            subject: None,
            session: None,
            outcome,
            duration,
            ended: None,
            arguments: None,
            span: None,
        }
    }
}

/// A request a transport refused before the server saw it.
#[derive(Debug)]
#[non_exhaustive]
pub struct TransportRefusal<'a> {
    /// Its method as the transport saw it (a header, or `"unknown"`), by [`method_label`].
    pub method: &'static str,
    /// The HTTP status it got.
    pub status: u16,
    /// The caller's subject, when known.
    pub subject: Option<&'a str>,
    /// From the transport taking it up to its refusal.
    pub duration: Duration,
}

impl<'a> TransportRefusal<'a> {
    /// A refusal with `status` of a request for `method` ([`method_label`]).
    pub fn new(method: &'static str, status: u16, subject: Option<&'a str>, duration: Duration) -> Self {
        TransportRefusal { method, status, subject, duration }
    }
}

/// Several observers as one (a server has one: `Server::observe`). What the request path asks
/// of an observer — whether it traces, at which ratio, whether it wants arguments — the server
/// asks once, when the observer is set (`Watching`); a list answers from its members then.
#[derive(Default)]
pub struct Observers {
    list: Vec<std::sync::Arc<dyn Observer>>,
    /// Those of `list` that [watch the transport](Observer::watches_transport): the only ones
    /// told its refusals and bytes.
    watching_transport: Vec<std::sync::Arc<dyn Observer>>,
}

impl Observers {
    /// No observer yet.
    pub fn new() -> Self {
        Observers::default()
    }

    /// Adds `observer`; each is told in the order added.
    pub fn with(mut self, observer: std::sync::Arc<dyn Observer>) -> Self {
        if observer.watches_transport() {
            self.watching_transport.push(observer.clone());
        }
        self.list.push(observer);
        self
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The observer to give a server (`Server::observe`): `None` when there is none, the one
    /// itself when there is one (no call through this list on every request), else the list.
    pub fn into_observer(mut self) -> Option<std::sync::Arc<dyn Observer>> {
        match self.list.len() {
            0 => None,
            1 => self.list.pop(),
            _ => Some(std::sync::Arc::new(self)),
        }
    }
}

impl Observer for Observers {
    fn started(&self, method: &'static str) {
        self.list.iter().filter(|o| o.watches_starts()).for_each(|o| o.started(method));
    }

    fn watches_starts(&self) -> bool {
        self.list.iter().any(|o| o.watches_starts())
    }

    fn members(&self) -> Option<&[std::sync::Arc<dyn Observer>]> {
        Some(&self.list)
    }

    fn finished(&self, request: &Observed<'_>) {
        self.list.iter().for_each(|o| o.finished(request));
    }

    fn refused(&self, refused: &TransportRefusal<'_>) {
        self.watching_transport.iter().for_each(|o| o.refused(refused));
    }

    fn session(&self, opened: bool) {
        self.list.iter().for_each(|o| o.session(opened));
    }

    fn subscription(&self, opened: bool) {
        self.list.iter().for_each(|o| o.subscription(opened));
    }

    fn bytes(&self, received: u64, sent: u64) {
        self.watching_transport.iter().for_each(|o| o.bytes(received, sent));
    }

    /// The highest ratio of those that trace: a request any of them would record is recorded.
    fn trace_ratio(&self) -> f64 {
        self.list.iter().filter(|o| o.traces()).map(|o| o.trace_ratio()).fold(0.0, f64::max)
    }

    fn wants_arguments(&self) -> bool {
        self.list.iter().any(|o| o.wants_arguments())
    }

    fn watches_transport(&self) -> bool {
        !self.watching_transport.is_empty()
    }

    fn traces(&self) -> bool {
        self.list.iter().any(|o| o.traces())
    }
}

/// The tracing target of the request log ([`RequestLog`]).
pub const REQUEST_LOG_TARGET: &str = "mcp_server::request";

/// The request log: one `tracing` event per request, at `INFO` on [`REQUEST_LOG_TARGET`], with
/// its id, method, name, era, revision, caller's subject, outcome, JSON-RPC code or HTTP
/// status, and duration in microseconds — never its result, a token or an `Mcp-Param-*`
/// value, and its arguments only when [asked for](RequestLog::with_arguments), redacted where
/// marked secret. How the line looks (text, JSON) is the subscriber's business.
#[derive(Debug, Default, Clone, Copy)]
pub struct RequestLog {
    arguments: bool,
}

impl RequestLog {
    /// The request log without arguments.
    pub fn new() -> Self {
        RequestLog { arguments: false }
    }

    /// The request log with each `tools/call`'s and `prompts/get`'s arguments (for debugging),
    /// every value the tool's schema marks secret redacted.
    pub fn with_arguments() -> Self {
        RequestLog { arguments: true }
    }
}

impl Observer for RequestLog {
    fn wants_arguments(&self) -> bool {
        self.arguments
    }

    fn watches_starts(&self) -> bool {
        false
    }

    fn finished(&self, r: &Observed<'_>) {
        let code = match r.outcome {
            Outcome::Error { code, .. } => Some(code),
            _ => None,
        };
        let id = match r.id {
            RequestId::Number(n) => n.to_string(),
            RequestId::String(s) => s.clone(),
        };
        let era = r.version.map(|v| if v.is_modern() { "modern" } else { "legacy" });
        tracing::info!(
            target: REQUEST_LOG_TARGET,
            id = %id,
            method = r.method,
            name = r.name,
            era,
            version = r.version.map(|v| v.as_str()),
            subject = r.subject,
            outcome = r.outcome.as_str(),
            code,
            duration_us = u64::try_from(r.duration.as_micros()).unwrap_or(u64::MAX),
            arguments = r.arguments.filter(|_| self.arguments).map(|a| mcp_types::JsonValue::Object(a.clone()).to_string()),
            "request"
        );
    }

    fn refused(&self, r: &TransportRefusal<'_>) {
        tracing::info!(
            target: REQUEST_LOG_TARGET,
            method = r.method,
            subject = r.subject,
            outcome = "http_refused",
            status = r.status,
            duration_us = u64::try_from(r.duration.as_micros()).unwrap_or(u64::MAX),
            "request"
        );
    }
}

/// `arguments` with the value of every member `schema` (a JSON Schema of an object) marks
/// secret — `writeOnly: true` or `format: "password"` — replaced by `"[redacted]"`, in nested
/// objects too.
pub fn redact(arguments: &mcp_types::JsonObject, schema: &mcp_types::JsonObject) -> mcp_types::JsonObject {
    use mcp_types::JsonValue;
    let properties = schema.get("properties").and_then(JsonValue::as_object);
    arguments
        .iter()
        .map(|(key, value)| {
            let member = properties.and_then(|p| p.get(key)).and_then(JsonValue::as_object);
            let secret = member.is_some_and(|m| {
                m.get("writeOnly") == Some(&JsonValue::Bool(true))
                    || m.get("format").and_then(JsonValue::as_str) == Some("password")
            });
            let value = match (secret, member, value) {
                (true, _, _) => JsonValue::String("[redacted]".to_owned()),
                (false, Some(member), JsonValue::Object(inner)) => JsonValue::Object(redact(inner, member)),
                (false, _, value) => value.clone(),
            };
            (key.clone(), value)
        })
        .collect()
}

/// The methods a client sends that MCP defines; any other is `"other"`, so that a label made
/// of it has a bounded number of values.
pub const METHODS: [&str; 15] = [
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "subscriptions/listen",
];

/// `method` when MCP defines it ([`METHODS`]), else `"other"`. A `match`, so each candidate is
/// compared inline as a few integers of its known length (a search of the list called the
/// library's `memcmp` for each candidate of the same length, twice a request).
pub fn method_label(method: &str) -> &'static str {
    let at = match method {
        "initialize" => 0,
        "ping" => 1,
        "server/discover" => 2,
        "tools/list" => 3,
        "tools/call" => 4,
        "resources/list" => 5,
        "resources/templates/list" => 6,
        "resources/read" => 7,
        "resources/subscribe" => 8,
        "resources/unsubscribe" => 9,
        "prompts/list" => 10,
        "prompts/get" => 11,
        "completion/complete" => 12,
        "logging/setLevel" => 13,
        "subscriptions/listen" => 14,
        _ => return "other",
    };
    METHODS[at]
}

/// Whether two names (a tool's, a prompt's) are the same text, compared inline a word at a
/// time: the names a label holds are short, and the library's `memcmp` costs a call and its
/// set-up for each. The last word is read where it ends (overlapping the one before), and a name
/// of four to seven bytes as two overlapping halves, so no name is compared byte by byte but
/// one of under four. Longer than 32 bytes, they are compared as usual. Not inlined: a label
/// set compares two names (a tool's and a prompt's), and one copy of this code is fetched
/// once for both.
#[inline(never)]
pub fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n > 32 {
        return a == b;
    }
    let word = |s: &[u8], at: usize| u64::from_ne_bytes(s[at..at + 8].try_into().unwrap_or([0; 8]));
    let half = |s: &[u8], at: usize| u32::from_ne_bytes(s[at..at + 4].try_into().unwrap_or([0; 4]));
    if n >= 8 {
        let mut at = 0;
        while at + 8 < n {
            if word(a, at) != word(b, at) {
                return false;
            }
            at += 8;
        }
        word(a, n - 8) == word(b, n - 8)
    } else if n >= 4 {
        half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4)
    } else {
        a.iter().zip(b).all(|(x, y)| x == y)
    }
}

/// Whether two static labels ([`method_label`], a revision, an outcome) are equal: nearly always
/// the very same string, seen without comparing their bytes. Observers that key something by
/// labels (a metric series, an encoded span template) compare them with this.
#[inline]
pub fn same_label(a: &'static str, b: &'static str) -> bool {
    (std::ptr::eq(a.as_ptr(), b.as_ptr()) && a.len() == b.len()) || same_text(a, b)
}

/// Two labels that are not the same string, compared by their bytes (out of line: rare).
#[cold]
#[inline(never)]
fn same_text(a: &str, b: &str) -> bool {
    a == b
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server is given no list for one observer (the one itself), and a list that answers for
    /// all of them for more.
    #[test]
    fn one_observer_is_given_as_itself_and_several_as_their_list() {
        struct Tracer;
        impl Observer for Tracer {
            fn finished(&self, _: &Observed<'_>) {}
            fn traces(&self) -> bool {
                true
            }
            fn watches_transport(&self) -> bool {
                false
            }
        }
        assert!(Observers::new().into_observer().is_none());
        let one: std::sync::Arc<dyn Observer> = std::sync::Arc::new(Tracer);
        let given = Observers::new().with(one.clone()).into_observer().unwrap();
        assert!(std::sync::Arc::ptr_eq(&given, &one));
        let both =
            Observers::new().with(one).with(std::sync::Arc::new(RequestLog::new())).into_observer().unwrap();
        assert!(both.traces() && both.watches_transport(), "each asks what one of them asks");
        assert_eq!(both.trace_ratio(), 1.0, "the tracer's ratio");
        assert!(!both.wants_arguments());
        let logs = Observers::new()
            .with(std::sync::Arc::new(RequestLog::new()))
            .with(std::sync::Arc::new(RequestLog::with_arguments()))
            .into_observer()
            .unwrap();
        assert!(logs.wants_arguments() && !logs.traces(), "{}", logs.trace_ratio());
    }

    /// A list tells the transport's refusals and bytes only to those of its observers that
    /// watch the transport; every observer is told every request.
    #[test]
    fn a_list_tells_the_transport_only_to_those_watching_it() {
        use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
        #[derive(Default)]
        struct Counting {
            ignores_transport: bool,
            finished: AtomicUsize,
            refused: AtomicUsize,
            bytes: AtomicUsize,
        }
        impl Observer for Counting {
            fn finished(&self, _: &Observed<'_>) {
                self.finished.fetch_add(1, Relaxed);
            }
            fn refused(&self, _: &TransportRefusal<'_>) {
                self.refused.fetch_add(1, Relaxed);
            }
            fn bytes(&self, _: u64, _: u64) {
                self.bytes.fetch_add(1, Relaxed);
            }
            fn watches_transport(&self) -> bool {
                !self.ignores_transport
            }
        }
        let watching = std::sync::Arc::new(Counting::default());
        let not = std::sync::Arc::new(Counting { ignores_transport: true, ..Counting::default() });
        let list = Observers::new().with(watching.clone()).with(not.clone()).into_observer().unwrap();
        let id = RequestId::Number(1);
        list.finished(&Observed::new(&id, "ping", Outcome::Success, Duration::ZERO));
        list.refused(&TransportRefusal::new("unknown", 403, None, Duration::ZERO));
        list.bytes(10, 20);
        let counts =
            |o: &Counting| (o.finished.load(Relaxed), o.refused.load(Relaxed), o.bytes.load(Relaxed));
        assert_eq!(counts(&watching), (1, 1, 1));
        assert_eq!(counts(&not), (1, 0, 0));
    }

    #[test]
    fn a_new_trace_is_sampled_by_its_id_and_a_callers_decision_is_followed() {
        let meta = mcp_types::JsonObject::new();
        assert!(SpanIds::continuing_sampled(&meta, 1.0).sampled);
        assert!(!SpanIds::continuing_sampled(&meta, 0.0).sampled);
        let sampled = (0..4000).filter(|_| SpanIds::continuing_sampled(&meta, 0.25).sampled).count();
        assert!((800..1200).contains(&sampled), "{sampled} of 4000 at 25 %");
        let mut id = [0u8; 16];
        assert!(sampled_by_ratio(&id, 0.01), "the lowest id is always in");
        id[8] = 0xff;
        assert!(!sampled_by_ratio(&id, 0.5) && sampled_by_ratio(&id, 1.0));
        // A caller's flag wins over the ratio, both ways.
        let mut parent = mcp_types::JsonObject::new();
        let on = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        parent.insert(mcp_types::trace::TRACEPARENT.into(), on.into());
        assert!(SpanIds::continuing_sampled(&parent, 0.0).sampled);
        let off = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00";
        parent.insert(mcp_types::trace::TRACEPARENT.into(), off.into());
        assert!(!SpanIds::continuing_sampled(&parent, 1.0).sampled);
    }

    /// Every span gets ids of its own, none of them zeros; a new trace's id is new, a continued
    /// one's is the caller's.
    #[test]
    fn span_and_trace_ids_are_new_for_each_span() {
        let meta = mcp_types::JsonObject::new();
        let mut spans = std::collections::HashSet::new();
        let mut traces = std::collections::HashSet::new();
        for _ in 0..10_000 {
            let ids = SpanIds::continuing(&meta);
            assert_ne!(ids.span_id, [0; 8]);
            assert_ne!(ids.trace_id, [0; 16]);
            assert_ne!(ids.trace_id[..8], ids.trace_id[8..], "two draws, not one twice");
            assert_ne!(ids.trace_id[..8], ids.span_id, "the span's id is not the trace's");
            assert!(spans.insert(ids.span_id) && traces.insert(ids.trace_id));
            assert_eq!(ids.parent, None);
        }
        let mut parent = mcp_types::JsonObject::new();
        let caller = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        parent.insert(mcp_types::trace::TRACEPARENT.into(), caller.into());
        let ids = SpanIds::continuing(&parent);
        assert_eq!(ids.traceparent().to_string()[..35], caller[..35], "the caller's trace");
        assert!(spans.insert(ids.span_id), "a span of its own");
    }

    /// W3C Trace Context: a `tracestate` is passed on with the `traceparent` it came with, and
    /// ignored without a valid one.
    #[test]
    fn a_tracestate_is_kept_only_with_a_valid_traceparent() {
        let mut meta = mcp_types::JsonObject::new();
        meta.insert(mcp_types::trace::TRACESTATE.into(), "vendor=1".into());
        assert_eq!(SpanIds::continuing(&meta).tracestate, None, "no traceparent");
        meta.insert(mcp_types::trace::TRACEPARENT.into(), "00-not-a-traceparent".into());
        assert_eq!(SpanIds::continuing(&meta).tracestate, None, "an invalid traceparent");
        let valid = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        meta.insert(mcp_types::trace::TRACEPARENT.into(), valid.into());
        let ids = SpanIds::continuing(&meta);
        assert_eq!(ids.tracestate.as_deref(), Some("vendor=1"));
        assert_eq!(ids.parent, Some([0xb7, 0xad, 0x6b, 0x71, 0x69, 0x20, 0x33, 0x31]));
    }

    #[test]
    fn secrets_are_redacted_in_nested_objects_too() {
        let schema = serde_json::json!({"type": "object", "properties": {
            "user": {"type": "string"},
            "password": {"type": "string", "format": "password"},
            "auth": {"type": "object", "properties": {"token": {"type": "string", "writeOnly": true}}}
        }});
        let arguments = serde_json::json!({"user": "ann", "password": "hunter2",
            "auth": {"token": "t0k", "scheme": "bearer"}, "extra": 1});
        let redacted = redact(arguments.as_object().unwrap(), schema.as_object().unwrap());
        assert_eq!(
            serde_json::Value::Object(redacted),
            serde_json::json!({"user": "ann", "password": "[redacted]",
                "auth": {"token": "[redacted]", "scheme": "bearer"}, "extra": 1})
        );
    }

    #[test]
    fn methods_outside_mcp_are_other() {
        for method in METHODS {
            assert_eq!(method_label(method), method, "{method} is its own label");
        }
        assert_eq!(method_label("tools/call"), "tools/call");
        assert_eq!(method_label("subscriptions/listen"), "subscriptions/listen");
        assert_eq!(method_label("tools/call2"), "other");
        assert_eq!(method_label(""), "other");
    }

    /// Names of every length around the eight-byte words and the long-name limit are the same
    /// exactly when their text is, whichever byte differs.
    #[test]
    fn names_are_the_same_exactly_when_their_text_is() {
        for len in 0..40 {
            let name: String = (0..len).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
            let copy = name.clone();
            assert!(same_name(&name, &copy), "{name}");
            assert!(!same_name(&name, &format!("{name}x")), "{name} and a longer one");
            for at in 0..len {
                let mut other = name.clone().into_bytes();
                other[at] ^= 0x20;
                let other = String::from_utf8(other).unwrap();
                assert!(!same_name(&name, &other), "{name} and {other}");
            }
        }
    }

    #[test]
    fn labels_are_the_same_by_their_text_whatever_their_address() {
        let made: &'static str = String::from("tools/call").leak();
        assert!(same_label(method_label("tools/call"), "tools/call"));
        assert!(same_label(made, method_label("tools/call")), "another copy of the same text");
        assert!(!same_label("tools/call", "tools/list"));
        let whole: &'static str = "tools/call2";
        assert!(!same_label(&whole[..10], whole), "the same start, another length");
    }
}
