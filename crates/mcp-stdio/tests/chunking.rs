//! Property: how the input is chunked never changes what the decoder yields, and what it
//! yields matches a simple whole-input reference model.

use mcp_stdio::{FrameError, LineDecoder};
use proptest::prelude::*;

const LIMIT: usize = 64;

#[derive(Debug, Clone, PartialEq)]
enum Item {
    Frame(Vec<u8>),
    Err(FrameError),
}

/// The rules, applied to a whole input split at every `\n` at once.
fn model(input: &[u8], limit: usize) -> Vec<Item> {
    let mut items = Vec::new();
    // `split` also yields the piece after the last `\n`: the unterminated last line, or an
    // empty (so blank) piece.
    for line in input.split(|&b| b == b'\n') {
        if line.len() > limit {
            items.push(Item::Err(FrameError::LineTooLong { limit }));
            continue;
        }
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(|b| b" \t\r".contains(b)) {
            continue;
        }
        items.push(if line.starts_with(b"\xEF\xBB\xBF") {
            Item::Err(FrameError::ByteOrderMark)
        } else {
            match std::str::from_utf8(line) {
                Ok(_) => Item::Frame(line.to_vec()),
                Err(e) => Item::Err(FrameError::InvalidUtf8 { valid_up_to: e.valid_up_to() }),
            }
        });
    }
    items
}

/// Feeds `input` in pieces of the given sizes (cycled), draining after each piece.
fn decode_chunked(input: &[u8], sizes: &[usize], limit: usize) -> Vec<Item> {
    let mut decoder = LineDecoder::new(limit);
    let mut items = Vec::new();
    let mut collect = |item: Result<mcp_stdio::Frame, FrameError>| {
        items.push(match item {
            Ok(frame) => Item::Frame(frame.into_vec()),
            Err(e) => Item::Err(e),
        })
    };
    let mut rest = input;
    for &size in sizes.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let (piece, tail) = rest.split_at(size.min(rest.len()));
        rest = tail;
        decoder.extend(piece);
        std::iter::from_fn(|| decoder.decode()).for_each(&mut collect);
    }
    std::iter::from_fn(|| decoder.decode_eof()).for_each(&mut collect);
    items
}

/// One line's content, never containing `\n`.
fn line() -> impl Strategy<Value = Vec<u8>> {
    let text = prop::collection::vec(
        prop::sample::select(vec!['{', '}', '"', 'a', '1', ' ', '\t', '\r', 'é', '€', '\u{FEFF}']),
        0..40,
    )
    .prop_map(|chars| chars.into_iter().collect::<String>().into_bytes());
    let blank = prop::collection::vec(prop::sample::select(vec![b' ', b'\t', b'\r']), 0..6);
    let raw = prop::collection::vec(any::<u8>().prop_filter("no newline", |&b| b != b'\n'), 0..80);
    let with_bom = text.clone().prop_map(|t| [b"\xEF\xBB\xBF".as_slice(), &t].concat());
    let over_long = (LIMIT + 1..LIMIT * 4).prop_map(|n| vec![b'x'; n]);
    let at_limit = (LIMIT - 1..=LIMIT + 1, any::<bool>()).prop_map(|(n, cr)| {
        let mut line = vec![b'y'; n];
        if cr {
            line.push(b'\r');
        }
        line
    });
    prop_oneof![
        4 => text,
        2 => blank,
        2 => raw,
        1 => with_bom,
        1 => over_long,
        1 => at_limit,
    ]
}

fn input() -> impl Strategy<Value = Vec<u8>> {
    (prop::collection::vec(line(), 0..12), any::<bool>()).prop_map(|(lines, terminated)| {
        let mut input = lines.join(&b'\n');
        if terminated {
            input.push(b'\n');
        }
        input
    })
}

proptest! {
    #[test]
    fn chunking_does_not_change_items(
        input in input(),
        sizes in prop::collection::vec(1usize..48, 1..16),
    ) {
        let whole = decode_chunked(&input, &[usize::MAX], LIMIT);
        prop_assert_eq!(&whole, &model(&input, LIMIT));
        prop_assert_eq!(&decode_chunked(&input, &sizes, LIMIT), &whole);
        prop_assert_eq!(&decode_chunked(&input, &[1], LIMIT), &whole);
    }

    #[test]
    fn frames_have_no_newline_and_respect_the_limit(
        input in input(),
        sizes in prop::collection::vec(1usize..48, 1..16),
    ) {
        for item in decode_chunked(&input, &sizes, LIMIT) {
            if let Item::Frame(bytes) = item {
                prop_assert!(!bytes.contains(&b'\n'));
                prop_assert!(bytes.len() <= LIMIT);
                prop_assert!(!bytes.is_empty());
            }
        }
    }
}
