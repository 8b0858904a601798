//! The envelope decoder never panics, and whatever it accepts re-encodes to bytes that decode
//! to the same message (encoding is a fixed point after one round).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_types::{DecodeOptions, Incoming, decode};

fuzz_target!(|data: &[u8]| {
    let options = DecodeOptions::new().with_allow_batch(true);
    let Ok(incoming) = decode(data, options) else { return };
    let messages = match incoming {
        Incoming::Single(m) => vec![m],
        Incoming::Batch(items) => items.into_iter().filter_map(Result::ok).collect(),
    };
    for message in messages {
        let encoded = message.to_vec();
        let again = mcp_types::decode_message(&encoded, options)
            .unwrap_or_else(|e| panic!("re-encoded message does not decode: {e}: {}", String::from_utf8_lossy(&encoded)));
        assert_eq!(encoded, again.to_vec(), "encoding is not stable");
    }
});
