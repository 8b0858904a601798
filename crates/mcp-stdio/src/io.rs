//! Thin tokio adapters over the decoder and the encoder.

use std::io;

use thiserror::Error;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::decoder::LineDecoder;
use crate::encoder::encode_line;
use crate::frame::{Frame, FrameError};

/// How many bytes [`FramedReader`] asks its reader for at a time: 64 KiB.
pub const READ_CHUNK: usize = 64 * 1024;

/// Why [`FramedReader::next_frame`] yielded no frame.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ReadError {
    /// One line was not a frame; reading may go on with the next line.
    #[error(transparent)]
    Frame(#[from] FrameError),
    /// The underlying reader failed.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Reads frames from an [`AsyncRead`], e.g. a process's stdin.
///
/// Memory stays bounded by the decoder's limit plus one [`READ_CHUNK`].
#[derive(Debug)]
pub struct FramedReader<R> {
    reader: R,
    decoder: LineDecoder,
    chunk: Box<[u8]>,
    eof: bool,
}

impl<R> FramedReader<R> {
    /// A reader with the default 4 MiB line limit.
    pub fn new(reader: R) -> Self {
        FramedReader::with_decoder(reader, LineDecoder::default())
    }

    /// A reader using `decoder`, e.g. one built with another limit.
    pub fn with_decoder(reader: R, decoder: LineDecoder) -> Self {
        FramedReader { reader, decoder, chunk: vec![0; READ_CHUNK].into_boxed_slice(), eof: false }
    }

    /// The underlying reader.
    pub fn get_ref(&self) -> &R {
        &self.reader
    }

    /// Unwraps the underlying reader; bytes already read but not yet decoded are lost.
    pub fn into_inner(self) -> R {
        self.reader
    }
}

impl<R: AsyncRead + Unpin> FramedReader<R> {
    /// Reads the next frame, or `None` once the input has ended and every line was yielded.
    ///
    /// A [`ReadError::Frame`] stands for one bad line; calling again goes on with the next.
    /// An unterminated last line is yielded when the reader reports end of input.
    ///
    /// # Cancel safety
    ///
    /// This method is cancel-safe: it can be used in `tokio::select!` or under a timeout. Its
    /// only await point is a read into a scratch chunk, which is itself cancel-safe, and the
    /// bytes read are handed to the decoder before the next await. A partial line thus lives
    /// in the decoder, not in the future, and dropping the future loses nothing.
    pub async fn next_frame(&mut self) -> Option<Result<Frame, ReadError>> {
        loop {
            if self.eof {
                return self.decoder.decode_eof().map(|item| item.map_err(ReadError::from));
            }
            if let Some(item) = self.decoder.decode() {
                return Some(item.map_err(ReadError::from));
            }
            match self.reader.read(&mut self.chunk).await {
                Ok(0) => self.eof = true,
                Ok(n) => self.decoder.extend(&self.chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Some(Err(ReadError::Io(e))),
            }
        }
    }
}

/// Writes frames to an [`AsyncWrite`], e.g. a process's stdout.
#[derive(Debug)]
pub struct FramedWriter<W> {
    writer: W,
}

impl<W> FramedWriter<W> {
    /// Wraps `writer`.
    pub fn new(writer: W) -> Self {
        FramedWriter { writer }
    }

    /// The underlying writer.
    pub fn get_ref(&self) -> &W {
        &self.writer
    }

    /// Unwraps the underlying writer.
    pub fn into_inner(self) -> W {
        self.writer
    }
}

impl<W: AsyncWrite + Unpin> FramedWriter<W> {
    /// Writes `json` as one whole line (see [`encode_line`]) and flushes it.
    ///
    /// The line goes out in a single `write_all`, so messages never interleave as long as
    /// callers serialize access to the writer (`&mut self` enforces it within one task).
    ///
    /// # Cancel safety
    ///
    /// Not cancel-safe: a dropped future may have written part of the line, leaving the
    /// stream mid-line. Let it complete, or treat the stream as broken.
    pub async fn write_frame(&mut self, json: &[u8]) -> io::Result<()> {
        // A fresh buffer per message: keeping one around would pin the capacity of the
        // largest message ever sent.
        let mut line = Vec::with_capacity(json.len() + 1);
        encode_line(json, &mut line);
        self.writer.write_all(&line).await?;
        self.writer.flush().await
    }
}
