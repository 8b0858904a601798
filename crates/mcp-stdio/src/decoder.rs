//! The sans-IO line decoder.

use crate::frame::{Frame, FrameError};

#[cfg(test)]
mod tests;

/// The default line limit: 4 MiB.
pub const DEFAULT_MAX_LINE: usize = 4 * 1024 * 1024;

/// The UTF-8 encoding of U+FEFF.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A line at least this long that starts the buffer is handed over in the buffer itself
/// instead of copied, and a buffer this size is what the decoder keeps between lines: a large
/// line's capacity leaves with its frame (or is given back once consumed), so one 1 MB
/// message does not pin megabytes for the rest of the connection.
const KEEP: usize = 64 * 1024;

/// Splits a byte stream into lines, without doing any IO.
///
/// Feed bytes with [`extend`](Self::extend), then call [`decode`](Self::decode) until it
/// returns `None`; once input has ended, call [`decode_eof`](Self::decode_eof) until it returns
/// `None`. The decoder owns every byte it was fed, so nothing is lost if the task reading the
/// input is cancelled between two reads.
///
/// # The limit
///
/// A line may have at most `max_line` bytes before its `\n`; a `\r` stripped by CRLF tolerance
/// counts too, which keeps the check decidable before the line ends. A line past the limit is
/// reported once, as soon as its `max_line + 1`-th byte is decoded, and the rest of it is
/// dropped as it is fed. So, as long as every `extend` is followed by `decode` calls until
/// `None`, the buffer never holds more than `max_line` bytes plus the chunk just fed.
#[derive(Debug)]
pub struct LineDecoder {
    /// `buf[start..]` is fed but not yet consumed; `buf[..start]` is consumed and waits for
    /// the next compaction, so consuming a line costs no copy.
    buf: Vec<u8>,
    start: usize,
    /// `buf[start..scanned]` is known to hold no `\n`: a search resumes at `scanned`, which
    /// keeps feeding a long line in small chunks linear instead of quadratic.
    scanned: usize,
    max_line: usize,
    /// Inside an over-long line that was already reported: bytes up to and including its
    /// `\n` are dropped on arrival. While set, `buf` holds no unconsumed byte.
    discarding: bool,
}

impl Default for LineDecoder {
    /// A decoder with the [`DEFAULT_MAX_LINE`] limit.
    fn default() -> Self {
        LineDecoder::new(DEFAULT_MAX_LINE)
    }
}

impl LineDecoder {
    /// A decoder accepting lines of at most `max_line` bytes before the `\n`.
    pub fn new(max_line: usize) -> Self {
        LineDecoder { buf: Vec::new(), start: 0, scanned: 0, max_line, discarding: false }
    }

    /// The line limit, in bytes.
    pub fn max_line(&self) -> usize {
        self.max_line
    }

    /// Feeds bytes read from the input.
    pub fn extend(&mut self, mut bytes: &[u8]) {
        if self.discarding {
            // The over-long line was reported already: drop its bytes without buffering them.
            match find_newline(bytes) {
                None => return,
                Some(i) => {
                    self.discarding = false;
                    bytes = &bytes[i + 1..];
                }
            }
        }
        if bytes.is_empty() {
            return;
        }
        // Usually a no-op: `decode` compacts before returning `None`. This covers callers
        // that feed again before draining; moving at most as many bytes as are freed keeps
        // it amortised.
        if self.start > 0 && self.start >= self.buf.len() - self.start {
            self.compact();
        }
        self.reserve(bytes.len());
        self.buf.extend_from_slice(bytes);
    }

    /// Takes the next item: a frame or a line's error, or `None` when more input is needed.
    pub fn decode(&mut self) -> Option<Result<Frame, FrameError>> {
        loop {
            let Some(i) = find_newline(&self.buf[self.scanned..]) else {
                self.scanned = self.buf.len();
                return self.on_partial_line();
            };
            let (line_start, line_end) = (self.start, self.scanned + i);
            self.start = line_end + 1;
            self.scanned = self.start;
            let len = match frame_len(&self.buf[line_start..line_end], self.max_line) {
                None => continue,
                Some(Err(e)) => return Some(Err(e)),
                Some(Ok(len)) => len,
            };
            if line_start == 0 && len >= KEEP {
                return Some(self.hand_over(len));
            }
            return Some(copied(&self.buf[line_start..line_start + len]));
        }
    }

    /// Takes the next item once input has ended, the unterminated last line included.
    ///
    /// Call it until it returns `None`; the decoder is then empty and may be fed again.
    pub fn decode_eof(&mut self) -> Option<Result<Frame, FrameError>> {
        if let Some(item) = self.decode() {
            return Some(item);
        }
        // What is left is one unterminated line within the limit, or nothing if an over-long
        // last line was already reported.
        self.discarding = false;
        let start = self.start;
        let item = frame_len(&self.buf[start..], self.max_line)
            .map(|checked| checked.and_then(|len| copied(&self.buf[start..start + len])));
        self.clear();
        self.give_back();
        item
    }

    /// No `\n` is left in the buffer: report the partial line if it has outgrown the limit,
    /// else wait for more input.
    fn on_partial_line(&mut self) -> Option<Result<Frame, FrameError>> {
        if self.buf.len() - self.start > self.max_line {
            self.clear();
            self.discarding = true;
            return Some(Err(FrameError::LineTooLong { limit: self.max_line }));
        }
        // Each byte is moved here at most once: what follows the last `\n` was all fed after
        // the previous compaction.
        self.compact();
        self.give_back();
        None
    }

    /// Hands over the buffer as the frame of the line `buf[..end]` (its framing checked): a
    /// large line is not copied, and its capacity leaves with it. The bytes fed after the line
    /// (at most one chunk) move to a fresh buffer of the size kept.
    fn hand_over(&mut self, end: usize) -> Result<Frame, FrameError> {
        let rest = &self.buf[self.start..];
        let mut next = Vec::with_capacity(rest.len().max(KEEP));
        next.extend_from_slice(rest);
        let mut line = std::mem::replace(&mut self.buf, next);
        self.start = 0;
        self.scanned = 0;
        line.truncate(end);
        // Growth by doubling may have left up to twice the line's size; the frame is kept
        // while its request is decoded, so it keeps only what it holds (glibc shrinks a block
        // in place, without a copy).
        line.shrink_to_fit();
        String::from_utf8(line)
            .map(Frame::new)
            .map_err(|e| FrameError::InvalidUtf8 { valid_up_to: e.utf8_error().valid_up_to() })
    }

    /// Gives back the capacity a large line left behind, once the buffer holds little.
    fn give_back(&mut self) {
        if self.buf.capacity() > 4 * KEEP && self.buf.len() <= KEEP {
            self.buf.shrink_to(KEEP);
        }
    }

    /// Makes room for `additional` more bytes.
    fn reserve(&mut self, additional: usize) {
        let needed = self.buf.len() + additional;
        if needed <= self.buf.capacity() {
            return;
        }
        // Grow geometrically, for amortised O(1) appends, but no further than a partial line
        // at the limit plus this chunk needs: with the default 4 MiB limit, plain doubling
        // would reserve 8 MiB for a line that can never use it.
        let capped =
            (self.buf.capacity().saturating_mul(2)).min(self.max_line.saturating_add(additional)).max(needed);
        self.buf.reserve_exact(capped - self.buf.len());
    }

    /// Drops the consumed bytes at the front of the buffer.
    fn compact(&mut self) {
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.scanned -= self.start;
            self.start = 0;
        }
    }

    /// Drops every buffered byte, consumed or not (the capacity is kept for reuse).
    fn clear(&mut self) {
        self.buf.clear();
        self.start = 0;
        self.scanned = 0;
    }
}

fn find_newline(bytes: &[u8]) -> Option<usize> {
    memchr::memchr(b'\n', bytes)
}

/// A frame copied out of the buffer, once its text is checked as UTF-8.
fn copied(line: &[u8]) -> Result<Frame, FrameError> {
    match std::str::from_utf8(line) {
        Ok(text) => Ok(Frame::new(text.to_owned())),
        Err(e) => Err(FrameError::InvalidUtf8 { valid_up_to: e.valid_up_to() }),
    }
}

/// The framing checks of one line (without its `\n`), all but its encoding: `None` for a
/// blank line, else the length of its frame (a stripped `\r` left out) or the line's error.
fn frame_len(line: &[u8], max_line: usize) -> Option<Result<usize, FrameError>> {
    // Checked first, on the raw line, so the verdict matches the one `decode` gives a partial
    // line before its content is known.
    if line.len() > max_line {
        return Some(Err(FrameError::LineTooLong { limit: max_line }));
    }
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')) {
        return None;
    }
    if line.starts_with(BOM) {
        return Some(Err(FrameError::ByteOrderMark));
    }
    Some(Ok(line.len()))
}
