//! What the decoder yields: a frame, or the reason a line is not one.

use thiserror::Error;

/// One decoded line: its bytes without the `\n` terminator (and without a stripped `\r`).
///
/// A frame is never blank and is always valid UTF-8 (the decoder checks both), so it can be
/// handed to a JSON parser as a `&str`. Whether it is valid JSON is not checked here.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Frame(String);

impl Frame {
    /// Wraps a line the decoder has already validated.
    pub(crate) fn new(line: String) -> Self {
        Frame(line)
    }

    /// The line's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.0.as_bytes()
    }

    /// The line as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The line's bytes, owned.
    pub fn into_vec(self) -> Vec<u8> {
        self.0.into_bytes()
    }

    /// The line as owned text.
    pub fn into_string(self) -> String {
        self.0
    }
}

impl AsRef<[u8]> for Frame {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl AsRef<str> for Frame {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

/// Why a line was not yielded as a [`Frame`].
///
/// Each error stands for exactly one line, and decoding goes on with the next line. The
/// decoder sends no reply itself; the intended JSON-RPC answers (error responses with a
/// `null` id, since no request id could be read) are given per variant.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum FrameError {
    /// The line has more than `limit` bytes before its `\n` (a `\r` there counts too).
    ///
    /// Reported once, as soon as the limit is passed; the rest of the line is discarded
    /// unread. The server answers `-32600` (Invalid Request).
    #[error("line longer than the {limit}-byte limit")]
    LineTooLong {
        /// The configured limit, in bytes.
        limit: usize,
    },
    /// The line starts with a UTF-8 byte-order mark (`EF BB BF`).
    ///
    /// The mark is not stripped silently: JSON text on the wire must not start with one. The
    /// server answers `-32700` (Parse error).
    #[error("line starts with a UTF-8 byte-order mark")]
    ByteOrderMark,
    /// The line is not valid UTF-8. The server answers `-32700` (Parse error).
    #[error("line is not valid UTF-8 (first bad byte at offset {valid_up_to})")]
    InvalidUtf8 {
        /// How many bytes at the start of the line are valid UTF-8.
        valid_up_to: usize,
    },
}
