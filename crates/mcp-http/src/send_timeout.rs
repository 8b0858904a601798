//! The send timeout of the standalone server: a connection whose peer stops reading is closed
//! once its writes have made no progress for `HttpConfig::send_timeout`.
//!
//! A client that asks for a large answer (or keeps an SSE stream open) and never reads it would
//! otherwise hold the connection, the answer's buffers and a connection slot for ever. The
//! watchdog sits on the socket itself, so it covers every answer alike: JSON bodies, SSE
//! streams, HTTP+SSE streams and the transport's own refusals. Only time spent with a write
//! *pending* counts: an idle connection (an SSE stream with nothing to send) is not stalled.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// An IO stream whose writes fail with `TimedOut` once they have been pending, without a
/// byte written, for `timeout` — which makes hyper close the connection and drop its buffers.
pub(crate) struct SendTimeout<S> {
    inner: S,
    timeout: Duration,
    /// Armed at the first pending write after the last progress; disarmed by progress.
    stalled: Option<Pin<Box<Sleep>>>,
}

impl<S> SendTimeout<S> {
    pub(crate) fn new(inner: S, timeout: Duration) -> Self {
        SendTimeout { inner, timeout, stalled: None }
    }

    /// A write (or flush) is pending: has it been pending too long?
    fn pending<T>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        let timeout = self.timeout;
        let deadline = self.stalled.get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        match deadline.as_mut().poll(cx) {
            Poll::Ready(()) => {
                tracing::debug!(?timeout, "send timeout: the peer stopped reading, closing the connection");
                Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "send timeout: the peer read nothing for too long",
                )))
            }
            Poll::Pending => Poll::Pending,
        }
    }

    fn written(&mut self, result: Poll<io::Result<usize>>, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        match result {
            Poll::Pending => self.pending(cx),
            Poll::Ready(Ok(n)) if n > 0 => {
                self.stalled = None;
                Poll::Ready(Ok(n))
            }
            other => other,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for SendTimeout<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for SendTimeout<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let result = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.written(result, cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let result = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.written(result, cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // A finished flush is no progress of its own (a socket's flush is always ready): only
        // bytes written disarm the watchdog.
        match Pin::new(&mut self.inner).poll_flush(cx) {
            Poll::Pending => self.pending(cx),
            ready => ready,
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match Pin::new(&mut self.inner).poll_shutdown(cx) {
            Poll::Pending => self.pending(cx),
            ready => ready,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    const TIMEOUT: Duration = Duration::from_secs(30);

    #[tokio::test(start_paused = true)]
    async fn a_writer_whose_peer_never_reads_times_out() {
        // A pipe holding 1 KiB: writing 64 KiB blocks once it is full.
        let (ours, _peer) = tokio::io::duplex(1024);
        let mut io = SendTimeout::new(ours, TIMEOUT);
        let started = tokio::time::Instant::now();
        let error = io.write_all(&[0u8; 64 * 1024]).await.unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        let waited = started.elapsed();
        assert!(waited >= TIMEOUT && waited < TIMEOUT + Duration::from_secs(1), "closed after {waited:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_reader_that_keeps_reading_is_not_cut_off() {
        let (ours, mut peer) = tokio::io::duplex(1024);
        let mut io = SendTimeout::new(ours, TIMEOUT);
        // The peer reads 1 KiB every 20 s — slower than the timeout overall, but never 30 s
        // without progress.
        let reader = tokio::spawn(async move {
            let mut total = 0;
            let mut buf = [0u8; 1024];
            loop {
                tokio::time::sleep(Duration::from_secs(20)).await;
                match peer.read(&mut buf).await.unwrap() {
                    0 => return total,
                    n => total += n,
                }
            }
        });
        io.write_all(&[1u8; 8 * 1024]).await.unwrap();
        drop(io);
        assert_eq!(reader.await.unwrap(), 8 * 1024);
    }

    #[tokio::test(start_paused = true)]
    async fn idle_time_between_writes_does_not_count() {
        let (ours, mut peer) = tokio::io::duplex(1024);
        let mut io = SendTimeout::new(ours, TIMEOUT);
        io.write_all(b"first").await.unwrap();
        tokio::time::sleep(TIMEOUT * 3).await;
        io.write_all(b" second").await.unwrap();
        io.flush().await.unwrap();
        drop(io);
        let mut got = String::new();
        peer.read_to_string(&mut got).await.unwrap();
        assert_eq!(got, "first second");
    }
}
