//! Fuzzes `mcp_stdio::LineDecoder`: splitting the input into chunks must not change the
//! items decoded, and no frame may hold a `\n` or exceed the limit.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_stdio::{FrameError, LineDecoder};

/// Small, so over-long lines and their resynchronisation are reached often.
const LIMIT: usize = 32;

type Item = Result<Vec<u8>, FrameError>;

fuzz_target!(|data: &[u8]| {
    // The first two bytes pick where the first piece ends and the size of the pieces after
    // it; the rest is the stream.
    let [split_seed, chunk_seed, input @ ..] = data else {
        return;
    };
    let split = usize::from(*split_seed) * input.len() / 255;
    let chunk = usize::from(chunk_seed % 64) + 1;

    let whole = decode(input, input.len(), 1);
    let chunked = decode(input, split, chunk);
    assert_eq!(whole, chunked, "split at {split}, then {chunk}-byte pieces");

    for frame in whole.iter().filter_map(|item| item.as_ref().ok()) {
        assert!(!frame.contains(&b'\n'), "frame holds a newline");
        assert!(frame.len() <= LIMIT, "frame exceeds the limit");
        assert!(!frame.is_empty(), "blank frame");
    }
});

/// Feeds the first `split` bytes of `input` as one piece and the rest in `chunk`-byte pieces,
/// draining the decoder after each piece, then ends the input.
fn decode(input: &[u8], split: usize, chunk: usize) -> Vec<Item> {
    let mut decoder = LineDecoder::new(LIMIT);
    let mut items = Vec::new();
    let (head, tail) = input.split_at(split);
    for piece in std::iter::once(head).chain(tail.chunks(chunk)) {
        decoder.extend(piece);
        items.extend(std::iter::from_fn(|| decoder.decode()).map(|r| r.map(|f| f.into_vec())));
    }
    items.extend(std::iter::from_fn(|| decoder.decode_eof()).map(|r| r.map(|f| f.into_vec())));
    items
}
