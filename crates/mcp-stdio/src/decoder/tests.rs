use super::{DEFAULT_MAX_LINE, LineDecoder};
use crate::frame::FrameError;

/// A decoded item in a form tests can compare.
#[derive(Debug, PartialEq)]
enum Item {
    Frame(String),
    Err(FrameError),
}

fn frame(text: &str) -> Item {
    Item::Frame(text.to_owned())
}

fn too_long(limit: usize) -> Item {
    Item::Err(FrameError::LineTooLong { limit })
}

fn to_item(item: Result<crate::Frame, FrameError>) -> Item {
    match item {
        Ok(frame) => Item::Frame(frame.into_string()),
        Err(e) => Item::Err(e),
    }
}

/// Takes items until the decoder needs more input.
fn drain(decoder: &mut LineDecoder) -> Vec<Item> {
    std::iter::from_fn(|| decoder.decode()).map(to_item).collect()
}

/// Takes the items left at end of input.
fn drain_eof(decoder: &mut LineDecoder) -> Vec<Item> {
    std::iter::from_fn(|| decoder.decode_eof()).map(to_item).collect()
}

/// Feeds `input` in `chunk`-byte pieces, draining after each, then ends the input.
fn run(max_line: usize, input: &[u8], chunk: usize) -> Vec<Item> {
    let mut decoder = LineDecoder::new(max_line);
    let mut items = Vec::new();
    for piece in input.chunks(chunk) {
        decoder.extend(piece);
        items.extend(drain(&mut decoder));
    }
    items.extend(drain_eof(&mut decoder));
    items
}

#[test]
fn default_limit_is_4_mib() {
    assert_eq!(DEFAULT_MAX_LINE, 4 * 1024 * 1024);
    assert_eq!(LineDecoder::default().max_line(), DEFAULT_MAX_LINE);
}

#[test]
fn splits_at_newline() {
    let mut decoder = LineDecoder::new(64);
    decoder.extend(b"{\"a\":");
    assert!(decoder.decode().is_none(), "no newline yet");
    decoder.extend(b"1}\n{");
    assert_eq!(drain(&mut decoder), [frame("{\"a\":1}")]);
    decoder.extend(b"}\n");
    assert_eq!(drain(&mut decoder), [frame("{}")]);
}

#[test]
fn several_lines_in_one_chunk() {
    assert_eq!(run(64, b"{}\n[1]\n\"x\"\n", usize::MAX), [frame("{}"), frame("[1]"), frame("\"x\"")]);
}

#[test]
fn strips_one_cr_before_newline() {
    assert_eq!(run(64, b"{}\r\n[]\r\r\n", usize::MAX), [frame("{}"), frame("[]\r")]);
}

#[test]
fn keeps_cr_elsewhere() {
    assert_eq!(run(64, b"a\rb\n", usize::MAX), [frame("a\rb")]);
}

#[test]
fn skips_blank_and_whitespace_only_lines() {
    let input = b"\n \n\t\n\r\n \t\r \r\n{}\n\n";
    assert_eq!(run(64, input, usize::MAX), [frame("{}")]);
    assert_eq!(run(64, input, 1), [frame("{}")]);
}

#[test]
fn keeps_whitespace_around_content() {
    assert_eq!(run(64, b" \t{} \n", usize::MAX), [frame(" \t{} ")]);
}

#[test]
fn bom_at_line_start_is_an_error_and_next_line_decodes() {
    assert_eq!(
        run(64, b"\xEF\xBB\xBF{}\n[]\n", usize::MAX),
        [Item::Err(FrameError::ByteOrderMark), frame("[]")]
    );
}

#[test]
fn bom_after_line_start_is_content() {
    assert_eq!(run(64, b" \xEF\xBB\xBF{}\n", usize::MAX), [frame(" \u{FEFF}{}")]);
}

#[test]
fn invalid_utf8_is_an_error_and_next_line_decodes() {
    assert_eq!(
        run(64, b"{\"a\":\"\xFF\"}\n[]\n", usize::MAX),
        [Item::Err(FrameError::InvalidUtf8 { valid_up_to: 6 }), frame("[]")]
    );
}

#[test]
fn line_at_limit_is_accepted() {
    let line = "x".repeat(16);
    let input = format!("{line}\n");
    assert_eq!(run(16, input.as_bytes(), usize::MAX), [frame(&line)]);
    assert_eq!(run(16, input.as_bytes(), 3), [frame(&line)]);
    // Byte by byte, the decoder holds exactly `limit` bytes before the `\n` arrives.
    assert_eq!(run(16, input.as_bytes(), 1), [frame(&line)]);
}

#[test]
fn line_one_past_limit_is_rejected() {
    let input = format!("{}\n{{}}\n", "x".repeat(17));
    assert_eq!(run(16, input.as_bytes(), usize::MAX), [too_long(16), frame("{}")]);
    assert_eq!(run(16, input.as_bytes(), 3), [too_long(16), frame("{}")]);
}

#[test]
fn stripped_cr_counts_toward_limit() {
    // Counting the `\r` lets a partial line be judged before its terminator arrives.
    let input = format!("{}\r\n", "x".repeat(16));
    assert_eq!(run(16, input.as_bytes(), usize::MAX), [too_long(16)]);
    assert_eq!(run(16, input.as_bytes(), 1), [too_long(16)]);
}

#[test]
fn over_long_line_is_reported_once_before_its_newline() {
    let mut decoder = LineDecoder::new(8);
    decoder.extend(b"{}\n123456789");
    assert_eq!(drain(&mut decoder), [frame("{}"), too_long(8)]);
    for _ in 0..100 {
        decoder.extend(b"more bytes of the same line");
        assert!(decoder.decode().is_none());
    }
    decoder.extend(b"tail\n[1]\n");
    assert_eq!(drain(&mut decoder), [frame("[1]")]);
    assert!(drain_eof(&mut decoder).is_empty());
}

#[test]
fn over_long_line_in_one_chunk_is_reported_once() {
    let input = format!("{}\n[]\n", "y".repeat(100));
    assert_eq!(run(8, input.as_bytes(), usize::MAX), [too_long(8), frame("[]")]);
}

#[test]
fn memory_stays_bounded_for_a_10_mb_line() {
    const CHUNK: usize = 8 * 1024;
    let limit = DEFAULT_MAX_LINE;
    let mut input = b"{}\n".to_vec();
    input.resize(input.len() + 10_000_000, b'z');
    input.extend_from_slice(b"\n{\"after\":1}\n");

    let mut decoder = LineDecoder::default();
    let mut items = Vec::new();
    for piece in input.chunks(CHUNK) {
        decoder.extend(piece);
        assert!(decoder.buf.capacity() <= limit + CHUNK, "buffer grew past the bound");
        items.extend(drain(&mut decoder));
        assert!(decoder.buf.len() <= limit);
    }
    items.extend(drain_eof(&mut decoder));
    assert_eq!(items, [frame("{}"), too_long(limit), frame("{\"after\":1}")]);
}

#[test]
fn search_resumes_where_it_stopped() {
    let mut decoder = LineDecoder::new(1024);
    decoder.extend(b"{\"a\":");
    assert!(decoder.decode().is_none());
    assert_eq!(decoder.scanned, 5, "the scanned prefix is remembered");
    decoder.extend(b"1}");
    assert!(decoder.decode().is_none());
    assert_eq!(decoder.scanned, 7);
}

#[test]
fn consumed_bytes_are_dropped() {
    let mut decoder = LineDecoder::new(1024);
    for _ in 0..1000 {
        decoder.extend(b"{\"jsonrpc\":\"2.0\"}\n{\"par");
        assert_eq!(drain(&mut decoder).len(), 1);
        decoder.extend(b"tial\":1}\n");
        assert_eq!(drain(&mut decoder).len(), 1);
        assert!(decoder.buf.is_empty(), "a fully consumed buffer is compacted");
    }
}

#[test]
fn feeding_again_before_draining_keeps_order() {
    let mut decoder = LineDecoder::new(64);
    decoder.extend(b"1\n2\n3\n");
    assert_eq!(decoder.decode().map(to_item), Some(frame("1")));
    decoder.extend(b"4\n");
    assert_eq!(drain(&mut decoder), [frame("2"), frame("3"), frame("4")]);
}

#[test]
fn unterminated_last_line_is_decoded_at_eof() {
    let mut decoder = LineDecoder::new(64);
    decoder.extend(b"{}\n[1]");
    assert_eq!(drain(&mut decoder), [frame("{}")]);
    assert_eq!(drain_eof(&mut decoder), [frame("[1]")]);
}

#[test]
fn unterminated_last_line_keeps_eof_rules() {
    assert_eq!(run(64, b"[1]\r", usize::MAX), [frame("[1]")]);
    assert_eq!(run(64, b"\xEF\xBB\xBF[1]", usize::MAX), [Item::Err(FrameError::ByteOrderMark)]);
}

#[test]
fn eof_with_only_whitespace_yields_nothing() {
    assert!(run(64, b" \t\r", usize::MAX).is_empty());
    assert!(run(64, b"", usize::MAX).is_empty());
    assert!(run(64, b"\n\n  ", 1).is_empty());
}

#[test]
fn over_long_unterminated_last_line_is_an_error_at_eof() {
    let mut decoder = LineDecoder::new(8);
    decoder.extend(b"[]\n0123456789");
    assert_eq!(drain_eof(&mut decoder), [frame("[]"), too_long(8)]);

    // Reported while feeding: end of input adds nothing.
    assert_eq!(run(8, b"0123456789", 4), [too_long(8)]);
}

#[test]
fn decoder_is_reusable_after_eof() {
    let mut decoder = LineDecoder::new(8);
    decoder.extend(b"0123456789");
    assert_eq!(drain_eof(&mut decoder), [too_long(8)]);
    decoder.extend(b"{}");
    assert_eq!(drain_eof(&mut decoder), [frame("{}")]);
    assert!(drain_eof(&mut decoder).is_empty());
}

/// `len` bytes of a JSON string's content, as a line: `"zzz…"`.
fn big_line(len: usize) -> Vec<u8> {
    let mut line = vec![b'z'; len];
    line[0] = b'"';
    line[len - 1] = b'"';
    line
}

#[test]
fn a_large_line_leaves_in_its_own_buffer_and_the_decoder_keeps_a_small_one() {
    const LINE: usize = 1024 * 1024;
    let mut input = b"{}\n".to_vec();
    input.extend_from_slice(&big_line(LINE));
    input.extend_from_slice(b"\r\n{\"after\":1}\n");

    let mut decoder = LineDecoder::default();
    let mut items = Vec::new();
    for piece in input.chunks(crate::READ_CHUNK) {
        decoder.extend(piece);
        while let Some(item) = decoder.decode() {
            if let Ok(frame) = &item {
                if frame.as_bytes().len() == LINE {
                    // The decoder gave its grown buffer away with the line.
                    assert!(decoder.buf.capacity() <= super::KEEP, "kept {}", decoder.buf.capacity());
                }
            }
            items.push(item);
        }
    }
    items.extend(std::iter::from_fn(|| decoder.decode_eof()));
    assert_eq!(items.len(), 3);
    let large = items.remove(1).expect("the large line is a frame").into_string();
    assert_eq!(large.as_bytes(), &big_line(LINE)[..], "the line whole, its `\\r` stripped");
    // Holding no more than the line: the doubling's slack was given back.
    assert!(large.capacity() < LINE + LINE / 8, "capacity {} for {LINE}", large.capacity());
    assert_eq!(items.into_iter().map(to_item).collect::<Vec<_>>(), [frame("{}"), frame("{\"after\":1}")]);
    assert!(decoder.buf.capacity() <= super::KEEP);
}

#[test]
fn a_large_line_behind_others_is_copied_and_the_capacity_given_back() {
    // One chunk holds a small line, then a large one: the large line does not start the buffer,
    // so it is copied out, and the capacity it needed is given back once it is consumed.
    let mut input = b"[1]\n".to_vec();
    input.extend_from_slice(&big_line(512 * 1024));
    input.extend_from_slice(b"\n[2");
    let mut decoder = LineDecoder::default();
    decoder.extend(&input);
    let items = drain(&mut decoder);
    assert_eq!(items.len(), 2);
    assert_eq!(items[0], frame("[1]"));
    assert!(matches!(&items[1], Item::Frame(text) if text.len() == 512 * 1024));
    assert!(decoder.buf.capacity() <= super::KEEP, "kept {}", decoder.buf.capacity());
    decoder.extend(b"]\n");
    assert_eq!(drain(&mut decoder), [frame("[2]")]);
}

#[test]
fn large_lines_keep_the_framing_rules() {
    let size = 200 * 1024;
    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend_from_slice(&big_line(size));
    let mut invalid = big_line(size);
    invalid[size / 2] = 0xFF;
    let mut blank = vec![b' '; size];
    blank.push(b'\r');
    for (line, expected) in [
        (bom, Some(Item::Err(FrameError::ByteOrderMark))),
        (invalid, Some(Item::Err(FrameError::InvalidUtf8 { valid_up_to: size / 2 }))),
        (blank, None),
    ] {
        let mut input = line;
        input.extend_from_slice(b"\n{\"next\":1}\n");
        let items = run(DEFAULT_MAX_LINE, &input, crate::READ_CHUNK);
        let mut wanted: Vec<Item> = expected.into_iter().collect();
        wanted.push(frame("{\"next\":1}"));
        assert_eq!(items, wanted);
    }
    // Past the limit, the rule is the same however large the limit.
    let mut over = big_line(KEEP_PLUS);
    over.extend_from_slice(b"\n[]\n");
    assert_eq!(run(KEEP_PLUS - 1, &over, crate::READ_CHUNK), [too_long(KEEP_PLUS - 1), frame("[]")]);
}

/// A line just over the size that is handed over whole.
const KEEP_PLUS: usize = super::KEEP + 1;
