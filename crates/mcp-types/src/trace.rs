//! W3C Trace Context in `_meta` (SEP-414): the keys `traceparent`, `tracestate` and `baggage`
//! carry a request's trace context over every transport, stdio included — the one exception to
//! the DNS-prefixed `_meta` keys. [`TraceParent`] reads and writes the `traceparent` value;
//! [`tracestate`] and [`baggage`] read the other two as they are passed on — checked against
//! their W3C forms and held to the sizes W3C lets a hop bound them to, so that a request cannot
//! make a server or a gateway carry an unbounded value on to every request it sends.

use std::borrow::Cow;
use std::fmt;

use crate::json::JsonObject;

/// The `_meta` key of the W3C `traceparent`.
pub const TRACEPARENT: &str = "traceparent";
/// The `_meta` key of the W3C `tracestate`.
pub const TRACESTATE: &str = "tracestate";
/// The `_meta` key of the W3C `baggage`.
pub const BAGGAGE: &str = "baggage";

/// A W3C `traceparent` (version `00`): the trace, the caller's span in it, and whether it is
/// sampled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TraceParent {
    /// The trace id (never all zero).
    pub trace_id: [u8; 16],
    /// The parent span's id (never all zero).
    pub span_id: [u8; 8],
    /// The `sampled` flag.
    pub sampled: bool,
}

fn hex<const N: usize>(text: &str) -> Option<[u8; N]> {
    if text.len() != N * 2 || !text.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return None;
    }
    let mut out = [0u8; N];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[i * 2..i * 2 + 2], 16).ok()?;
    }
    Some(out)
}

impl TraceParent {
    /// Parses a `traceparent` value: `00-<32 hex>-<16 hex>-<2 hex>`, lower-case, ids not all
    /// zero. A later version's value is read by its first four fields, as the W3C text says.
    pub fn parse(value: &str) -> Option<TraceParent> {
        let value = value.trim();
        let mut parts = value.split('-');
        let version = parts.next()?;
        let (trace, span, flags) = (parts.next()?, parts.next()?, parts.next()?);
        let version = hex::<1>(version)?[0];
        if version == 0xff || (version == 0 && parts.next().is_some()) {
            return None;
        }
        let trace_id = hex::<16>(trace)?;
        let span_id = hex::<8>(span)?;
        let flags = hex::<1>(flags)?[0];
        if trace_id == [0; 16] || span_id == [0; 8] {
            return None;
        }
        Some(TraceParent { trace_id, span_id, sampled: flags & 1 == 1 })
    }

    /// The `traceparent` a request's `_meta` carries, when it carries a valid one.
    pub fn from_meta(extra: &JsonObject) -> Option<TraceParent> {
        extra.get(TRACEPARENT).and_then(|v| v.as_str()).and_then(TraceParent::parse)
    }

    /// The same trace, with `span_id` as the parent of what comes next.
    pub fn child(self, span_id: [u8; 8]) -> TraceParent {
        TraceParent { span_id, ..self }
    }
}

impl fmt::Display for TraceParent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("00-")?;
        for b in self.trace_id {
            write!(f, "{b:02x}")?;
        }
        f.write_str("-")?;
        for b in self.span_id {
            write!(f, "{b:02x}")?;
        }
        write!(f, "-{:02x}", u8::from(self.sampled))
    }
}

/// The trace context a request carries on to the requests sent for it: a `traceparent`, and
/// the `tracestate` and `baggage` that go with it — each checked as [`TraceParent::parse`],
/// [`tracestate`] and [`baggage`] check them. One home for reading and writing the three
/// `_meta` keys, used by servers, clients and the gateway alike.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TraceContext {
    /// The span the request belongs to.
    pub parent: Option<TraceParent>,
    /// The vendors' state of that trace (passed on only with a `parent`).
    pub tracestate: Option<String>,
    /// W3C Baggage: key-value pairs travelling with the request, trace or no trace.
    pub baggage: Option<String>,
}

impl TraceContext {
    /// A context of `parent` alone.
    pub fn new(parent: TraceParent) -> TraceContext {
        TraceContext { parent: Some(parent), ..TraceContext::default() }
    }

    /// What a request's `_meta` carries of the three, each kept only when valid; a
    /// `tracestate` only along with a valid `traceparent` (W3C Trace Context).
    pub fn from_meta(extra: &JsonObject) -> TraceContext {
        let parent = TraceParent::from_meta(extra);
        TraceContext {
            parent,
            tracestate: parent.and_then(|_| tracestate(extra)).map(Cow::into_owned),
            baggage: baggage(extra).map(str::to_owned),
        }
    }

    /// The same, with `parent` as the span requests sent on are children of (a hop that
    /// records a span of its own); the caller's `tracestate` and `baggage` kept.
    pub fn with_parent(mut self, parent: TraceParent) -> TraceContext {
        if self.parent.is_none_or(|old| old.trace_id != parent.trace_id) {
            // Another trace: the caller's state was for none of this one.
            self.tracestate = None;
        }
        self.parent = Some(parent);
        self
    }

    /// Adds `baggage` when it is of W3C Baggage's form and within its limits.
    pub fn with_baggage(mut self, baggage: &str) -> TraceContext {
        let mut extra = JsonObject::new();
        extra.insert(BAGGAGE.to_owned(), baggage.into());
        self.baggage = self::baggage(&extra).map(str::to_owned);
        self
    }

    /// Whether it carries nothing.
    pub fn is_empty(&self) -> bool {
        self.parent.is_none() && self.baggage.is_none()
    }

    /// The `_meta` members to send: `traceparent` and `tracestate` when there is a parent,
    /// `baggage` when there is some.
    pub fn entries(&self) -> impl Iterator<Item = (&'static str, String)> + '_ {
        let parent = self.parent.map(|p| (TRACEPARENT, p.to_string()));
        let state = self.parent.and(self.tracestate.clone()).map(|s| (TRACESTATE, s));
        let baggage = self.baggage.clone().map(|b| (BAGGAGE, b));
        parent.into_iter().chain(state).chain(baggage)
    }
}

impl From<TraceParent> for TraceContext {
    fn from(parent: TraceParent) -> TraceContext {
        TraceContext::new(parent)
    }
}

/// The most of a `tracestate` passed on, in bytes: W3C Trace Context asks a hop to pass on at
/// least 512 characters, and lets it cut a longer value (entries over 128 characters first,
/// then from the end).
pub const TRACESTATE_LIMIT: usize = 512;

/// W3C Trace Context: a `tracestate` holds at most 32 entries; a parser may discard one with
/// more.
const TRACESTATE_ENTRIES: usize = 32;

/// The most of a `baggage` passed on, in bytes, and its entries: W3C Baggage's limits (8,192
/// bytes, 64 entries), beyond which a hop may drop it.
pub const BAGGAGE_LIMIT: usize = 8192;
const BAGGAGE_ENTRIES: usize = 64;

/// A `tracestate` key, by W3C's grammar: a simple key (a lower-case letter, then up to 255
/// lower-case letters, digits and `_-*/`) or a multi-tenant one, `tenant@system` (a tenant of a
/// lower-case letter or digit and up to 240 more, a system of a lower-case letter and up to 13
/// more).
fn tracestate_key(key: &str) -> bool {
    let rest = |part: &str, most: usize| {
        part.len() <= most
            && part.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_-*/".contains(&b))
    };
    match key.split_once('@') {
        None => key.as_bytes().first().is_some_and(u8::is_ascii_lowercase) && rest(&key[1..], 255),
        Some((tenant, system)) => {
            tenant.as_bytes().first().is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
                && rest(&tenant[1..], 240)
                && system.as_bytes().first().is_some_and(u8::is_ascii_lowercase)
                && rest(&system[1..], 13)
        }
    }
}

/// A `tracestate` entry: `key=value`, the key by [`tracestate_key`], the value 1 to 256
/// printable ASCII characters without `,` or `=`, not ending in a space. Its key, when valid.
fn tracestate_entry(entry: &str) -> Option<&str> {
    let (key, value) = entry.split_once('=')?;
    let value_ok = !value.is_empty()
        && value.len() <= 256
        && !value.ends_with(' ')
        && value.bytes().all(|b| (0x20..=0x7e).contains(&b) && b != b',' && b != b'=');
    (tracestate_key(key) && value_ok).then_some(key)
}

/// The `tracestate` a request's `_meta` carries, as a hop passes it on: `None` unless it is a
/// string of valid entries with distinct keys (at most 32; empty entries and the spaces around
/// entries are left out); longer than [`TRACESTATE_LIMIT`] bytes, it is cut as W3C says —
/// entries over 128 characters first, from the end, until it fits, then entries from the end.
/// Borrowed when nothing was left out.
pub fn tracestate(extra: &JsonObject) -> Option<Cow<'_, str>> {
    let text = extra.get(TRACESTATE)?.as_str()?;
    let entries: Vec<&str> =
        text.split(',').map(|e| e.trim_matches([' ', '\t'])).filter(|e| !e.is_empty()).collect();
    if entries.is_empty() || entries.len() > TRACESTATE_ENTRIES {
        return None;
    }
    let mut keys = Vec::with_capacity(entries.len());
    for entry in &entries {
        let key = tracestate_entry(entry)?;
        if keys.contains(&key) {
            // W3C: a duplicated key makes the whole value invalid.
            return None;
        }
        keys.push(key);
    }
    let joined_len =
        |entries: &[&str]| entries.iter().map(|e| e.len()).sum::<usize>() + entries.len().saturating_sub(1);
    let mut kept = entries;
    while joined_len(&kept) > TRACESTATE_LIMIT {
        match kept.iter().rposition(|e| e.len() > 128) {
            Some(large) => {
                kept.remove(large);
            }
            None => {
                kept.pop();
            }
        }
    }
    if kept.is_empty() {
        return None;
    }
    if joined_len(&kept) == text.len() {
        // Nothing was left out: it is the text itself.
        return Some(Cow::Borrowed(text));
    }
    Some(Cow::Owned(kept.join(",")))
}

/// The `baggage` a request's `_meta` carries, as a hop passes it on: `None` unless it is a
/// string of W3C Baggage's form (`key=value` entries separated by commas, each with optional
/// `;property` parts; printable ASCII, values percent-encoded) within its limits —
/// [`BAGGAGE_LIMIT`] bytes and 64 entries.
pub fn baggage(extra: &JsonObject) -> Option<&str> {
    let text = extra.get(BAGGAGE)?.as_str()?;
    if text.is_empty() || text.len() > BAGGAGE_LIMIT {
        return None;
    }
    let token = |t: &str| {
        !t.is_empty() && t.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
    };
    let value = |v: &str| v.bytes().all(|b| (0x21..=0x7e).contains(&b) && !b"\",;\\".contains(&b));
    let mut entries = 0;
    for entry in text.split(',') {
        let entry = entry.trim_matches([' ', '\t']);
        if entry.is_empty() {
            continue;
        }
        entries += 1;
        let mut parts = entry.split(';');
        let (k, v) = parts.next().and_then(|p| p.split_once('='))?;
        if !token(k.trim_matches([' ', '\t'])) || !value(v.trim_matches([' ', '\t'])) {
            return None;
        }
        for property in parts {
            let property = property.trim_matches([' ', '\t']);
            let ok = match property.split_once('=') {
                Some((k, v)) => token(k.trim_matches([' ', '\t'])) && value(v.trim_matches([' ', '\t'])),
                None => token(property),
            };
            if !ok {
                return None;
            }
        }
    }
    (entries > 0 && entries <= BAGGAGE_ENTRIES).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(key: &str, value: serde_json::Value) -> JsonObject {
        let mut meta = JsonObject::new();
        meta.insert(key.to_owned(), value);
        meta
    }

    #[test]
    fn a_tracestate_is_passed_on_in_its_w3c_form_and_cut_as_w3c_says() {
        let of = |text: &str| tracestate(&meta(TRACESTATE, text.into())).map(Cow::into_owned);
        assert_eq!(
            of("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE").as_deref(),
            Some("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE")
        );
        assert!(
            matches!(tracestate(&meta(TRACESTATE, "a=1".into())), Some(Cow::Borrowed(_))),
            "kept as it came"
        );
        assert_eq!(
            of(" a=1 ,, tenant@vendor=x y ").as_deref(),
            Some("a=1,tenant@vendor=x y"),
            "spaces and empty entries left out"
        );
        for bad in [
            "",
            "noequals",
            "Upper=1",
            "a=",
            "a=1,b=has,comma",
            "a=b=c",
            "k@x@y=1",
            "a=tab\there",
            "foo=1,foo=2",
            "@x=1",
            "-a=1",
            "_a=1",
            "x@=1",
            "t@1sys=1",
            "t@systemtoolong12=1",
        ] {
            assert_eq!(of(bad), None, "{bad:?}");
        }
        assert_eq!(tracestate(&meta(TRACESTATE, serde_json::json!(["a=1"]))), None, "not a string");
        let many: Vec<String> = (0..33).map(|i| format!("k{i}=v")).collect();
        assert_eq!(of(&many.join(",")), None, "more than 32 entries");
        assert_eq!(
            of("1tenant@sys=v,k=v").as_deref(),
            Some("1tenant@sys=v,k=v"),
            "a tenant may start with a digit"
        );
        // Only as many large entries go as must, the last first: here one of three.
        let big: Vec<String> = ["a", "b", "c"].iter().map(|k| format!("{k}={}", "x".repeat(250))).collect();
        assert_eq!(
            of(&big.join(",")),
            Some(format!("{},{}", big[0], big[1])),
            "the last large entry goes first"
        );
        // Over 512 bytes: the entries over 128 characters go first, then entries from the end.
        let long = format!("big={}", "x".repeat(200));
        let small: Vec<String> = (0..25).map(|i| format!("k{i:02}={}", "v".repeat(20))).collect();
        let text = format!("{},{long},{}", small[..10].join(","), small[10..].join(","));
        assert!(text.len() > TRACESTATE_LIMIT);
        let cut = of(&text).unwrap();
        assert!(!cut.contains("big="), "{cut}");
        assert!(cut.len() <= TRACESTATE_LIMIT, "{}", cut.len());
        assert!(
            cut.starts_with("k00=") && cut.contains("k09=") && cut.contains("k10="),
            "the first kept: {cut}"
        );
        // 24 bytes an entry and a comma between: 20 fit in 512.
        assert!(cut.ends_with(&small[19]), "cut from the end: {cut}");
        assert_eq!(cut.split(',').count(), 20, "{cut}");
    }

    #[test]
    fn a_trace_context_reads_and_writes_the_three_keys() {
        let parent = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01";
        let mut extra = meta(TRACEPARENT, parent.into());
        extra.insert(TRACESTATE.to_owned(), "a=1".into());
        extra.insert(BAGGAGE.to_owned(), "user=alice".into());
        let context = TraceContext::from_meta(&extra);
        let entries: Vec<(&str, String)> = context.entries().collect();
        assert_eq!(
            entries,
            [
                (TRACEPARENT, parent.to_owned()),
                (TRACESTATE, "a=1".to_owned()),
                (BAGGAGE, "user=alice".to_owned())
            ]
        );
        // A hop's own span: the trace and the state kept, the parent its own.
        let own = TraceParent::parse(parent).unwrap().child([7; 8]);
        let next = context.clone().with_parent(own);
        assert_eq!(next.parent, Some(own));
        assert_eq!((next.tracestate.as_deref(), next.baggage.as_deref()), (Some("a=1"), Some("user=alice")));

        // No valid traceparent: no tracestate, the baggage still.
        extra.insert(TRACEPARENT.to_owned(), "garbage".into());
        let context = TraceContext::from_meta(&extra);
        assert_eq!((context.parent, context.tracestate.as_deref()), (None, None));
        let entries: Vec<(&str, String)> = context.entries().collect();
        assert_eq!(entries, [(BAGGAGE, "user=alice".to_owned())]);
        assert!(!context.is_empty());
        // A new trace started there does not take a state that was for none.
        let orphan = TraceContext { tracestate: Some("a=1".into()), ..TraceContext::default() };
        assert_eq!(orphan.with_parent(own).tracestate, None);
        assert!(TraceContext::from_meta(&JsonObject::new()).is_empty());
        assert_eq!(TraceContext::new(own).with_baggage("bad baggage").baggage, None);
        assert_eq!(TraceContext::new(own).with_baggage("k=v").baggage.as_deref(), Some("k=v"));
    }

    #[test]
    fn baggage_is_passed_on_in_its_w3c_form_within_its_limits() {
        let of = |text: &str| baggage(&meta(BAGGAGE, text.into())).map(str::to_owned);
        for good in [
            "userId=alice",
            "userId=alice,serverNode=DF%2028,isProduction=false",
            "key1=value1;property1;property2=x, key2 = value2",
        ] {
            assert_eq!(of(good).as_deref(), Some(good), "{good}");
        }
        for bad in ["", "novalue", "k=v w", "k=\"quoted\"", "=v", "k=v;=p", "k=v,\u{e9}=x"] {
            assert_eq!(of(bad), None, "{bad:?}");
        }
        assert_eq!(baggage(&meta(BAGGAGE, 7.into())), None, "not a string");
        let many: Vec<String> = (0..65).map(|i| format!("k{i}=v")).collect();
        assert_eq!(of(&many.join(",")), None, "more than 64 entries");
        assert!(of(&many[..64].join(",")).is_some());
        let big = format!("k={}", "v".repeat(BAGGAGE_LIMIT));
        assert_eq!(of(&big), None, "more than 8,192 bytes");
    }

    #[test]
    fn parses_and_writes_the_w3c_form() {
        let text = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01";
        let tp = TraceParent::parse(text).unwrap();
        assert!(tp.sampled);
        assert_eq!(tp.to_string(), text);
        assert_eq!(tp.child([1; 8]).to_string(), "00-0af7651916cd43dd8448eb211c80319c-0101010101010101-01");
        for bad in [
            "",
            "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
            "00-0AF7651916CD43DD8448EB211C80319C-00f067aa0ba902b7-01",
            "ff-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01",
            "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01-extra",
        ] {
            assert_eq!(TraceParent::parse(bad), None, "{bad}");
        }
        // A later version is read by its first fields.
        assert!(TraceParent::parse("01-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-00-more").is_some());
    }
}
