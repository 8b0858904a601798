//! Newline framing for the MCP stdio transport.
//!
//! On stdio, MCP messages are UTF-8 JSON-RPC, one per line, delimited by `\n`, and must not
//! contain embedded newlines. This crate turns a byte stream into line payloads and back:
//!
//! - [`LineDecoder`] is a sans-IO decoder: feed it bytes with [`LineDecoder::extend`], take
//!   items with [`LineDecoder::decode`] (and [`LineDecoder::decode_eof`] once input ends).
//!   It owns its buffer, so a partial line survives a cancelled read.
//! - [`encode_line`] appends one message plus a single `\n`, guaranteeing the line has no
//!   embedded line breaks; [`into_line`] does the same to a message's own buffer, in place.
//! - [`FramedReader`] and [`FramedWriter`] are thin tokio adapters over the two.
//!
//! # Framing rules
//!
//! - A line whose bytes before the `\n` exceed the limit ([`DEFAULT_MAX_LINE`] = 4 MiB unless
//!   configured) yields [`FrameError::LineTooLong`] once, as soon as the limit is passed; the
//!   rest of that line is discarded without being buffered, and decoding resumes after the
//!   next `\n`. Memory therefore stays bounded by the limit plus one fed chunk.
//! - A line starting with a UTF-8 byte-order mark yields [`FrameError::ByteOrderMark`]; it is
//!   not stripped silently.
//! - A line that is not valid UTF-8 yields [`FrameError::InvalidUtf8`].
//! - Blank lines (empty, or only spaces, tabs and `\r`) are skipped: no frame, no error.
//! - One `\r` right before the `\n` is stripped (CRLF tolerance).
//! - At end of input, a non-blank unterminated last line is still decoded.
//!
//! # What this crate does not do
//!
//! - It does not parse JSON: a [`Frame`] is a line of valid UTF-8, nothing more.
//! - It does not invent protocol replies: errors are typed, and the server layer decides
//!   what to answer (see [`FrameError`] for the intended JSON-RPC codes).
//! - It does not spawn, supervise or kill processes; it only frames the bytes of streams it
//!   is handed.
#![warn(missing_docs)]

mod decoder;
mod encoder;
mod frame;
mod io;

pub use decoder::{DEFAULT_MAX_LINE, LineDecoder};
pub use encoder::{encode_line, into_line};
pub use frame::{Frame, FrameError};
pub use io::{FramedReader, FramedWriter, READ_CHUNK, ReadError};
