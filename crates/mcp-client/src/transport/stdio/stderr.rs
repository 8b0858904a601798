//! The child's stderr: drained line by line into the log, never interpreted.

use tokio::io::{AsyncRead, AsyncReadExt};

/// The tracing target of the lines a server writes to its stderr.
pub const STDERR_TARGET: &str = "mcp_client::server_stderr";

/// The tracing target of the one event (level `debug`) that says a server's stderr ended (it
/// exited, or closed it): every line it wrote has been logged under [`STDERR_TARGET`] by then.
pub const STDERR_END_TARGET: &str = "mcp_client::server_stderr_end";

/// The longest stderr line logged, in bytes; the rest of a longer line is dropped.
pub(crate) const MAX_STDERR_LINE: usize = 8 * 1024;

/// Splits a byte stream into lines of at most `max` bytes each (the rest of a longer line is
/// dropped and the line marked as truncated). Lines are converted to text lossily.
#[derive(Debug)]
pub(crate) struct LossyLines {
    buf: Vec<u8>,
    max: usize,
    /// Inside a line that was already cut: bytes up to its `\n` are dropped.
    truncated: bool,
}

impl LossyLines {
    pub(crate) fn new(max: usize) -> Self {
        LossyLines { buf: Vec::new(), max, truncated: false }
    }

    /// Feeds `bytes`, calling `emit` for every line completed or cut.
    pub(crate) fn feed(&mut self, mut bytes: &[u8], emit: &mut impl FnMut(String)) {
        while !bytes.is_empty() {
            let newline = bytes.iter().position(|&b| b == b'\n');
            let (part, rest, ends) = match newline {
                Some(i) => (&bytes[..i], &bytes[i + 1..], true),
                None => (bytes, &[][..], false),
            };
            bytes = rest;
            if self.truncated {
                self.truncated = !ends;
                continue;
            }
            let room = self.max - self.buf.len();
            if part.len() > room {
                self.buf.extend_from_slice(&part[..room]);
                self.emit_line(emit, true);
                self.truncated = !ends;
            } else {
                self.buf.extend_from_slice(part);
                if ends {
                    self.emit_line(emit, false);
                }
            }
        }
    }

    /// Emits the unterminated last line, if any.
    pub(crate) fn finish(&mut self, emit: &mut impl FnMut(String)) {
        if !self.buf.is_empty() {
            self.emit_line(emit, false);
        }
        self.truncated = false;
    }

    fn emit_line(&mut self, emit: &mut impl FnMut(String), cut: bool) {
        let bytes = self.buf.strip_suffix(b"\r").unwrap_or(&self.buf);
        let mut line = String::from_utf8_lossy(bytes).into_owned();
        if cut {
            line.push_str(" […truncated]");
        }
        self.buf.clear();
        emit(line);
    }
}

/// Reads `stderr` to its end, logging each line under [`STDERR_TARGET`] at `info` level.
pub(crate) async fn drain(mut stderr: impl AsyncRead + Unpin, server: String, pid: Option<u32>) {
    let mut lines = LossyLines::new(MAX_STDERR_LINE);
    let mut chunk = vec![0u8; 8 * 1024];
    let mut log = |line: String| {
        tracing::info!(target: STDERR_TARGET, server = %server, pid, "{line}");
    };
    loop {
        match stderr.read(&mut chunk).await {
            Ok(0) => break,
            Ok(n) => lines.feed(&chunk[..n], &mut log),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                tracing::debug!(server = %server, pid, error = %e, "reading the server's stderr failed");
                break;
            }
        }
    }
    lines.finish(&mut log);
    tracing::debug!(target: STDERR_END_TARGET, server = %server, pid, "the server's stderr ended");
}

#[cfg(test)]
mod tests {
    use super::LossyLines;

    fn split(max: usize, chunks: &[&[u8]]) -> Vec<String> {
        let mut lines = LossyLines::new(max);
        let mut out = Vec::new();
        let mut emit = |l: String| out.push(l);
        for c in chunks {
            lines.feed(c, &mut emit);
        }
        lines.finish(&mut emit);
        out
    }

    #[test]
    fn splits_across_chunks() {
        assert_eq!(split(100, &[b"ab", b"c\nde\r\n", b"f"]), ["abc", "de", "f"]);
    }

    #[test]
    fn keeps_empty_lines_and_is_lossy() {
        assert_eq!(split(100, &[b"\n\xff\n"]), ["", "\u{fffd}"]);
    }

    #[test]
    fn cuts_long_lines_once() {
        assert_eq!(split(4, &[b"abcdefgh", b"ijk\nxy\n"]), ["abcd […truncated]", "xy"]);
        assert_eq!(split(4, &[b"abcd\n"]), ["abcd"]);
        assert_eq!(split(4, &[b"abcde\n"]), ["abcd […truncated]"]);
    }
}
