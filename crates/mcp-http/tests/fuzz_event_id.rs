//! Property tests of the legacy event ids (`{stream}.{sequence}`) and the `Last-Event-ID` the
//! server reads back: the stable-toolchain counterpart of `fuzz/fuzz_targets/event_id.rs`.
//!
//! * `parse_id` never panics on any header value.
//! * Format → parse: every id a `MemoryEventStore` mints (and replays) parses back to its
//!   stream and sequence number, whatever the stream is called (dots included).
//! * Parse → format: an id `parse_id` accepts names the stream it starts with, and the
//!   canonical `{stream}.{sequence}` of what it returns parses to the same.

use http::HeaderValue;
use mcp_http::codec::parse_id;
use mcp_http::{EventStore, MemoryEventStore};
use proptest::prelude::*;

/// Ids near the format: dots, digits, signs, and arbitrary text.
fn id() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        prop::sample::select(vec![
            ".",
            "..",
            "0",
            "7",
            "18446744073709551615",
            "18446744073709551616",
            "+",
            "-",
            " ",
            "\t",
            "é"
        ])
        .prop_map(str::to_owned),
        "[A-Za-z0-9_-]{0,8}",
        any::<String>(),
    ];
    prop::collection::vec(piece, 0..8).prop_map(|p| p.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn parse_id_never_panics_and_is_canonical_on_what_it_accepts(raw in id()) {
        if let Some((stream, seq)) = parse_id(&raw) {
            prop_assert!(raw.starts_with(stream) && raw[stream.len()..].starts_with('.'), "{raw:?}");
            let canonical = format!("{stream}.{seq}");
            prop_assert_eq!(parse_id(&canonical), Some((stream, seq)));
        }
    }

    #[test]
    fn the_server_reads_any_last_event_id_header(bytes in prop::collection::vec(any::<u8>(), 0..48)) {
        // As the GET handler does: the header as visible ASCII, trimmed, then parsed.
        if let Ok(value) = HeaderValue::from_bytes(&bytes) {
            if let Ok(text) = value.to_str() {
                let _ = parse_id(text.trim());
            }
        }
    }

    #[test]
    fn minted_ids_parse_back(stream in id(), count in 1..8usize, replay_after in 0..8u64) {
        let store = MemoryEventStore::new(4, 2);
        let minted: Vec<String> = (0..count).map(|n| store.append(&stream, format!("{n}").as_bytes())).collect();
        for (n, id) in minted.iter().enumerate() {
            prop_assert_eq!(parse_id(id), Some((stream.as_str(), n as u64)), "{:?}", id);
        }
        for (seq, id, _) in store.after(&stream, replay_after).unwrap_or_default() {
            prop_assert!(seq > replay_after);
            prop_assert_eq!(parse_id(&id), Some((stream.as_str(), seq)));
        }
    }

    #[test]
    fn any_stream_and_sequence_round_trip(stream in id(), seq in any::<u64>()) {
        let id = format!("{stream}.{seq}");
        prop_assert_eq!(parse_id(&id), Some((stream.as_str(), seq)));
    }
}
