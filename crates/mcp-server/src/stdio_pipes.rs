//! The process's stdin and stdout for [`Server::serve_stdio`](crate::Server::serve_stdio): on
//! the reactor when they are pipes (FIFOs) or sockets, tokio's `Stdin`/`Stdout` otherwise.
//!
//! tokio's `Stdin` and `Stdout` hand every read and every write to the blocking pool (a thread
//! hop each way). A pipe or a socket can instead be driven by the reactor like any socket:
//! this module duplicates fd 0 and fd 1 (`dup`, no `unsafe`), and wraps the copies in
//! [`pipe::Receiver`]/[`pipe::Sender`] or [`UnixStream`], which put them in non-blocking mode.
//! A regular file, a terminal, `/dev/null` (anything epoll cannot watch) keeps the blocking
//! path, so `serve --stdio < requests.jsonl` works as before.
//!
//! # The shared file description
//!
//! `O_NONBLOCK` belongs to the open file description, not to the descriptor: every process
//! holding the same description (a shell that passed its own stdin or stdout on, a sibling that
//! inherited it) sees it non-blocking while the server runs, and a blocking reader or writer
//! among them may then get `EAGAIN`. A parent that created the pipe for the server (the usual
//! MCP client) holds the *other* end, a description of its own, and is unaffected. To limit
//! the effect:
//!
//! * the blocking mode is restored when the server is done with the stream (when the reader or
//!   writer is dropped) — though not when the process is killed by a signal;
//! * when stdout or stdin is the very file stderr is (`2>&1` on a pipe or socket), it keeps the
//!   blocking path: the logs written on stderr must never meet `EAGAIN`.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::UnixStream;
use tokio::net::unix::pipe;

/// Stdin as the server reads it.
pub(crate) type Input = Box<dyn AsyncRead + Unpin + Send>;
/// Stdout as the server writes it.
pub(crate) type Output = Box<dyn AsyncWrite + Unpin + Send>;

/// Which path a standard stream took (for the debug log).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    /// A pipe or FIFO on the reactor.
    Pipe,
    /// A socket on the reactor.
    Socket,
    /// tokio's blocking-pool `Stdin`/`Stdout`.
    Blocking,
}

/// What a standard stream is.
enum Kind {
    Pipe,
    Socket,
    /// Anything else, or the file stderr is too.
    Other,
}

/// What kind of file `fd` is: a pipe or a socket that is not also stderr's file can go on the
/// reactor.
fn classify(fd: &OwnedFd) -> Kind {
    let Some(meta) = fd.try_clone().ok().and_then(|fd| File::from(fd).metadata().ok()) else {
        return Kind::Other;
    };
    let stderr = io::stderr().as_fd().try_clone_to_owned().ok().and_then(|fd| File::from(fd).metadata().ok());
    if stderr.is_some_and(|e| e.dev() == meta.dev() && e.ino() == meta.ino()) {
        return Kind::Other;
    }
    let kind = meta.file_type();
    if kind.is_fifo() {
        Kind::Pipe
    } else if kind.is_socket() {
        Kind::Socket
    } else {
        Kind::Other
    }
}

/// This process's stdin; must be called within the runtime.
pub(crate) fn stdin() -> (Input, Route) {
    if let Ok(fd) = io::stdin().as_fd().try_clone_to_owned() {
        match classify(&fd) {
            Kind::Pipe => {
                if let Ok(receiver) = pipe::Receiver::from_owned_fd(fd) {
                    return (Box::new(Restoring(Some(receiver))), Route::Pipe);
                }
            }
            Kind::Socket => {
                if let Some(stream) = socket(fd) {
                    return (Box::new(Restoring(Some(stream))), Route::Socket);
                }
            }
            Kind::Other => {}
        }
    }
    (Box::new(tokio::io::stdin()), Route::Blocking)
}

/// This process's stdout; must be called within the runtime.
pub(crate) fn stdout() -> (Output, Route) {
    if let Ok(fd) = io::stdout().as_fd().try_clone_to_owned() {
        match classify(&fd) {
            Kind::Pipe => {
                if let Ok(sender) = pipe::Sender::from_owned_fd(fd) {
                    return (Box::new(Restoring(Some(sender))), Route::Pipe);
                }
            }
            Kind::Socket => {
                if let Some(stream) = socket(fd) {
                    return (Box::new(Restoring(Some(stream))), Route::Socket);
                }
            }
            Kind::Other => {}
        }
    }
    (Box::new(tokio::io::stdout()), Route::Blocking)
}

/// A stream socket (a socketpair, as libuv-based parents such as Node create for a child's
/// stdio) on the reactor.
fn socket(fd: OwnedFd) -> Option<UnixStream> {
    let stream = std::os::unix::net::UnixStream::from(fd);
    let keep = stream.try_clone().ok()?;
    stream.set_nonblocking(true).ok()?;
    match UnixStream::from_std(stream) {
        Ok(stream) => Some(stream),
        Err(e) => {
            // Not on the reactor: the blocking path needs the description blocking again.
            tracing::debug!(error = %e, "cannot drive the socket on the reactor");
            let _ = keep.set_nonblocking(false);
            None
        }
    }
}

/// Streams that can be put back in blocking mode when the server is done with them.
trait Unregister {
    fn into_blocking(self);
}

impl Unregister for pipe::Receiver {
    fn into_blocking(self) {
        let _ = self.into_blocking_fd();
    }
}

impl Unregister for pipe::Sender {
    fn into_blocking(self) {
        let _ = self.into_blocking_fd();
    }
}

impl Unregister for UnixStream {
    fn into_blocking(self) {
        if let Ok(stream) = self.into_std() {
            let _ = stream.set_nonblocking(false);
        }
    }
}

/// A stream on the reactor whose file description is made blocking again on drop (see the
/// module documentation); `None` only during that drop.
struct Restoring<T: Unregister>(Option<T>);

impl<T: Unregister> Drop for Restoring<T> {
    fn drop(&mut self) {
        if let Some(stream) = self.0.take() {
            stream.into_blocking();
        }
    }
}

impl<T: Unregister + AsyncRead + Unpin> AsyncRead for Restoring<T> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            Some(stream) => Pin::new(stream).poll_read(cx, buf),
            None => Poll::Ready(Ok(())),
        }
    }
}

impl<T: Unregister + AsyncWrite + Unpin> AsyncWrite for Restoring<T> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match &mut self.get_mut().0 {
            Some(stream) => Pin::new(stream).poll_write(cx, buf),
            None => Poll::Ready(Err(io::ErrorKind::BrokenPipe.into())),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            Some(stream) => Pin::new(stream).poll_flush(cx),
            None => Poll::Ready(Ok(())),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            Some(stream) => Pin::new(stream).poll_shutdown(cx),
            None => Poll::Ready(Ok(())),
        }
    }
}
