//! OTLP's protobuf messages, written straight from the spans: the few fields mcpkit sends, with
//! no message objects built per span (field numbers from opentelemetry-proto's trace/v1,
//! common/v1, resource/v1 and collector/trace/v1; the tests decode the output with the
//! generated types).
//!
//! A server span's attributes that every request of one method, tool or prompt and revision
//! shares are encoded once per thread and copied in one piece ([`Templates`]): written pair by
//! pair, they were a sixth of what tracing a small call cost.

use std::cell::RefCell;

use bytes::{Buf, Bytes, BytesMut};
use mcp_server::observe::{same_label as same, same_name};

use super::{Item, Kind, Request, Span, What};

const LEN: u8 = 2;

pub(super) fn varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

pub(super) fn varint_len(value: u64) -> usize {
    (64 - (value | 1).leading_zeros() as usize).div_ceil(7)
}

fn tag(out: &mut Vec<u8>, field: u32, wire: u8) {
    varint(out, u64::from(field << 3 | u32::from(wire)));
}

fn bytes(out: &mut Vec<u8>, field: u32, data: &[u8]) {
    if field < 16 && data.len() < 0x80 {
        // The common case, a one-byte tag and length, written together.
        out.extend_from_slice(&[(field << 3) as u8 | LEN, data.len() as u8]);
    } else {
        tag(out, field, LEN);
        varint(out, data.len() as u64);
    }
    out.extend_from_slice(data);
}

/// A `KeyValue` whose value is a string, as field `field`.
pub(super) fn key_value(out: &mut Vec<u8>, field: u32, key: &str, value: &[u8]) {
    if field < 16 && key.len() + value.len() < 0x80 - 6 {
        // Every length fits a byte (the pair's is the key's and the value's and six bytes of
        // tags and lengths): no varint to size, and the tags and lengths go in two writes.
        let any = 2 + value.len();
        let pair = 2 + key.len() + 2 + any;
        out.reserve(2 + pair);
        out.extend_from_slice(&[(field << 3) as u8 | LEN, pair as u8, 1 << 3 | LEN, key.len() as u8]);
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(&[2 << 3 | LEN, any as u8, 1 << 3 | LEN, value.len() as u8]);
        out.extend_from_slice(value);
        return;
    }
    let any = 1 + varint_len(value.len() as u64) + value.len();
    let pair = 1 + varint_len(key.len() as u64) + key.len() + 1 + varint_len(any as u64) + any;
    tag(out, field, LEN);
    varint(out, pair as u64);
    bytes(out, 1, key.as_bytes());
    tag(out, 2, LEN);
    varint(out, any as u64);
    bytes(out, 1, value);
}

/// How many sets of shared attributes a thread keeps encoded: more than the methods, tools and
/// prompts a thread serves in a burst, few enough to search one by one.
pub(super) const TEMPLATES: usize = 8;

/// The attributes of a server span that every request of its method, item and revision shares
/// ([`Request::each_shared`]), encoded as span fields.
struct Template {
    method: &'static str,
    transport: &'static str,
    item: Option<(Item, Box<str>)>,
    version: Option<&'static str>,
    encoded: Box<[u8]>,
}

impl Template {
    fn of(server: &Request<'_>) -> Template {
        let mut encoded = Vec::with_capacity(160);
        server.each_shared(|key, value| key_value(&mut encoded, 9, key, value));
        Template {
            method: server.method,
            transport: server.transport,
            item: server.item.map(|(kind, name)| (kind, name.into())),
            version: server.version,
            encoded: encoded.into_boxed_slice(),
        }
    }

    fn is(&self, server: &Request<'_>) -> bool {
        same(self.method, server.method)
            && same(self.transport, server.transport)
            && match (self.version, server.version) {
                (Some(a), Some(b)) => same(a, b),
                (a, b) => a.is_none() && b.is_none(),
            }
            && match (&self.item, server.item) {
                (Some((kind, name)), Some((other_kind, other_name))) => {
                    *kind == other_kind && same_name(name, other_name)
                }
                (a, b) => a.is_none() && b.is_none(),
            }
    }
}

/// A thread's templates, the oldest replaced when full (bounded whatever the names: a tool
/// or prompt not in the server's table is named `other`, and a table has few).
struct Templates {
    list: Vec<Template>,
    next: usize,
}

thread_local! {
    static TEMPLATES_OF_THREAD: RefCell<Templates> =
        const { RefCell::new(Templates { list: Vec::new(), next: 0 }) };
}

/// Appends `server`'s shared attributes, copied from this thread's template of them (made on
/// the first span of its kind).
fn shared_attributes(out: &mut Vec<u8>, server: &Request<'_>) {
    TEMPLATES_OF_THREAD.with_borrow_mut(|templates| {
        if let Some(found) = templates.list.iter().find(|t| t.is(server)) {
            out.extend_from_slice(&found.encoded);
            return;
        }
        let template = Template::of(server);
        out.extend_from_slice(&template.encoded);
        if templates.list.len() < TEMPLATES {
            templates.list.push(template);
        } else {
            let at = templates.next;
            templates.list[at] = template;
            templates.next = (at + 1) % TEMPLATES;
        }
    });
}

/// One `Span` message (without its own tag and length). The fields of a fixed size go in a
/// few writes of a few bytes each, not one write per tag, length and value: a span is written
/// for every request.
fn span(out: &mut Vec<u8>, r: &Span<'_>) {
    // The ids: tag, length and bytes of both in one write.
    let mut ids = [0u8; 28];
    ids[..2].copy_from_slice(&[1 << 3 | LEN, 16]);
    ids[2..18].copy_from_slice(r.trace_id);
    ids[18..20].copy_from_slice(&[2 << 3 | LEN, 8]);
    ids[20..].copy_from_slice(r.span_id);
    out.extend_from_slice(&ids);
    if let Some(state) = r.trace_state.filter(|s| !s.is_empty()) {
        bytes(out, 3, state.as_bytes());
    }
    if let Some(parent) = r.parent {
        let mut field = [4 << 3 | LEN, 8, 0, 0, 0, 0, 0, 0, 0, 0];
        field[2..].copy_from_slice(parent);
        out.extend_from_slice(&field);
    }
    let name = match &r.what {
        What::Request(request) => (request.method, request.item.map(|(_, name)| name)),
        What::Command { name, .. } => (*name, None),
    };
    match name {
        (name, None) => bytes(out, 5, name.as_bytes()),
        (first, Some(second)) => {
            let len = first.len() + 1 + second.len();
            if len < 0x80 {
                out.extend_from_slice(&[5 << 3 | LEN, len as u8]);
            } else {
                tag(out, 5, LEN);
                varint(out, len as u64);
            }
            out.extend_from_slice(first.as_bytes());
            out.push(b' ');
            out.extend_from_slice(second.as_bytes());
        }
    }
    // The kind (SERVER = 2, CLIENT = 3), then the start and the end (fixed64), in one write.
    let end = r.end;
    let start = end.saturating_sub(u64::try_from(r.duration.as_nanos()).unwrap_or(u64::MAX));
    let mut times = [0u8; 20];
    times[..2].copy_from_slice(&[
        6 << 3,
        match r.kind {
            Kind::Server => 2,
            Kind::Client => 3,
        },
    ]);
    times[2] = 7 << 3 | 1;
    times[3..11].copy_from_slice(&start.to_le_bytes());
    times[11] = 8 << 3 | 1;
    times[12..].copy_from_slice(&end.to_le_bytes());
    out.extend_from_slice(&times);
    match &r.what {
        What::Request(request) => {
            shared_attributes(out, request);
            request.each_own(|key, value| key_value(out, 9, key, value));
        }
        What::Command { attributes, .. } => {
            for (key, value) in *attributes {
                key_value(out, 9, key, value.as_bytes());
            }
        }
    }
    // Flags: sampled, and whether the parent is remote (it is, when there is one).
    let flags: u32 = 0x01 | 0x100 | if r.parent.is_some() { 0x200 } else { 0 };
    // Field 16, fixed32: the tag 16 << 3 | 5 = 133 is the varint 0x85 0x01.
    let mut flags_field = [0x85, 0x01, 0, 0, 0, 0];
    flags_field[2..].copy_from_slice(&flags.to_le_bytes());
    // Status: unset (an empty message), or ERROR (2) with its message; then the flags
    // (field 16: a two-byte tag).
    match r.status_message() {
        Some(message) => {
            let len = 1 + varint_len(message.len() as u64) + message.len() + 2;
            tag(out, 15, LEN);
            varint(out, len as u64);
            bytes(out, 2, message.as_bytes());
            tag(out, 3, 0);
            varint(out, 2);
            out.extend_from_slice(&flags_field);
        }
        None => {
            let mut unset = [15 << 3 | LEN, 0, 0, 0, 0, 0, 0, 0];
            unset[2..].copy_from_slice(&flags_field);
            out.extend_from_slice(&unset);
        }
    }
}

/// What every export request of one exporter begins with: the `Resource` message as the
/// field of `ResourceSpans`, and the scope `mcpkit` as the field of `ScopeSpans`.
pub(crate) struct Fixed {
    resource: Vec<u8>,
    scope: Vec<u8>,
}

impl Fixed {
    pub(crate) fn new(resource: &[(String, String)]) -> Fixed {
        let mut message = Vec::with_capacity(256);
        for (key, value) in resource {
            key_value(&mut message, 1, key, value.as_bytes());
        }
        let mut field = Vec::with_capacity(message.len() + 4);
        bytes(&mut field, 1, &message);
        let mut scope_message = Vec::with_capacity(32);
        bytes(&mut scope_message, 1, b"mcpkit");
        bytes(&mut scope_message, 2, env!("CARGO_PKG_VERSION").as_bytes());
        let mut scope = Vec::with_capacity(scope_message.len() + 2);
        bytes(&mut scope, 1, &scope_message);
        Fixed { resource: field, scope }
    }
}

/// Room for what precedes the spans and is known only after them: two tags and two lengths.
const HEAD_ROOM: usize = 2 * (1 + 10);

/// What a batch starts with before its first span is appended, at most (so that opening one
/// never maps fresh memory under the queue's lock); it grows as spans come.
const FIRST_CAPACITY: usize = 64 * 1024;

impl Fixed {
    /// A new `ExportTraceServiceRequest` body, to append spans to ([`span_field`]): room for
    /// the heads, the resource (written by [`Fixed::close`]), then the scope. Written in
    /// `reused` when given (an earlier body, [`reclaim`]ed), so that batch after batch uses the
    /// same memory.
    pub(super) fn open(&self, spans: usize, reused: Option<BytesMut>) -> BytesMut {
        let front = HEAD_ROOM + self.resource.len();
        let capacity = (front + self.scope.len() + spans.saturating_mul(320)).min(FIRST_CAPACITY);
        let capacity = capacity.max(front + self.scope.len());
        let mut out = match reused {
            Some(mut out) => {
                out.clear();
                // Empty, it takes back the room in front of where the last request began (it
                // allocates nothing: there is no room to take back when it fails).
                let _ = out.try_reclaim(out.capacity() + 1);
                out.reserve(capacity);
                out
            }
            None => BytesMut::with_capacity(capacity),
        };
        out.resize(front, 0);
        out.extend_from_slice(&self.scope);
        out
    }

    /// The request: the enclosing messages' tags and lengths and the resource written into the
    /// room left in front of the spans; the part of the buffer they fill (no copy of the spans).
    pub(super) fn close(&self, mut out: BytesMut) -> Bytes {
        let front = HEAD_ROOM + self.resource.len();
        let scope_spans = out.len() - front;
        let mut head = Vec::with_capacity(front);
        let resource_spans = self.resource.len() + 1 + varint_len(scope_spans as u64) + scope_spans;
        tag(&mut head, 1, LEN);
        varint(&mut head, resource_spans as u64);
        head.extend_from_slice(&self.resource);
        tag(&mut head, 2, LEN);
        varint(&mut head, scope_spans as u64);
        let start = front - head.len();
        out[start..front].copy_from_slice(&head);
        out.advance(start);
        out.freeze()
    }
}

/// The buffer of a body sent and no longer referenced by the client, for [`Fixed::open`]
/// (without copying what it held); `None` while anything still holds it.
pub(super) fn reclaim(body: Bytes) -> Option<BytesMut> {
    body.try_into_mut().ok()
}

/// Appends one span as a field of `ScopeSpans`: its tag, its length, the `Span`. The span goes
/// straight into place and its length is patched in after it.
pub(super) fn span_field(out: &mut Vec<u8>, record: &Span<'_>) {
    out.push(2 << 3 | LEN);
    let at = out.len();
    // A two-byte length (spans of 128 to 16,383 bytes, nearly all), patched in below.
    out.extend_from_slice(&[0, 0]);
    span(out, record);
    let len = out.len() - at - 2;
    if len < 0x80 {
        out[at] = len as u8;
        out.remove(at + 1);
    } else if len < 0x4000 {
        out[at] = (len as u8) | 0x80;
        out[at + 1] = (len >> 7) as u8;
    } else {
        let mut length = Vec::with_capacity(4);
        varint(&mut length, len as u64);
        out.splice(at..at + 2, length);
    }
}

/// Where the span field ([`span_field`]) that begins at `at` in `spans` ends: after its tag,
/// its length's varint and that many bytes.
pub(super) fn span_end(spans: &[u8], at: usize) -> usize {
    let mut len = 0usize;
    let mut shift = 0;
    let mut i = at + 1;
    while let Some(&byte) = spans.get(i) {
        len |= usize::from(byte & 0x7f) << shift;
        shift += 7;
        i += 1;
        if byte < 0x80 || shift >= usize::BITS as usize {
            break;
        }
    }
    (i + len).min(spans.len())
}

/// One `ExportTraceServiceRequest` of `batch`, as the pipeline writes them.
#[cfg(test)]
pub(super) fn encode(fixed: &Fixed, batch: &[Span<'_>]) -> Bytes {
    let mut out = fixed.open(batch.len(), None);
    let mut scratch = Vec::new();
    for record in batch {
        scratch.clear();
        span_field(&mut scratch, record);
        out.extend_from_slice(&scratch);
    }
    fixed.close(out)
}

/// Writes `n` in decimal into `digits` (what `{n}` writes, without the formatting machinery: a
/// request id is written for every span), two digits at a time.
pub(crate) fn decimal(n: i64, digits: &mut [u8; 20]) -> &[u8] {
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
        2021222324252627282930313233343536373839\
        4041424344454647484950515253545556575859\
        6061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899";
    let mut at = digits.len();
    let mut rest = n.unsigned_abs();
    while rest >= 100 {
        let pair = (rest % 100) as usize * 2;
        rest /= 100;
        at -= 2;
        digits[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    }
    if rest >= 10 {
        let pair = rest as usize * 2;
        at -= 2;
        digits[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    } else {
        at -= 1;
        digits[at] = b'0' + rest as u8;
    }
    if n < 0 {
        // i64::MIN has 19 digits: there is room for the sign.
        at -= 1;
        digits[at] = b'-';
    }
    &digits[at..]
}
