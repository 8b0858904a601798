//! Fuzzes the legacy event ids (`{stream}.{sequence}`): `mcp_http::codec::parse_id` never
//! panics; an id it accepts starts with the stream it names, and the canonical form of what it
//! returns parses to the same; every id a `MemoryEventStore` mints or replays parses back to
//! its stream and sequence number, whatever the stream is called.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_http::codec::parse_id;
use mcp_http::{EventStore, MemoryEventStore};

fuzz_target!(|input: (&str, String, u8, u64)| {
    let (raw, stream, count, seq) = input;
    if let Some((named, n)) = parse_id(raw) {
        assert!(raw.starts_with(named) && raw[named.len()..].starts_with('.'), "{raw:?}");
        assert_eq!(parse_id(&format!("{named}.{n}")), Some((named, n)));
    }

    assert_eq!(parse_id(&format!("{stream}.{seq}")), Some((stream.as_str(), seq)));

    let store = MemoryEventStore::new(4, 2);
    for n in 0..u64::from(count % 8) {
        let id = store.append(&stream, b"{}");
        assert_eq!(parse_id(&id), Some((stream.as_str(), n)), "{id:?}");
    }
    for (n, id, _) in store.after(&stream, seq % 8).unwrap_or_default() {
        assert_eq!(parse_id(&id), Some((stream.as_str(), n)), "{id:?}");
    }
});
