//! The stdio transport: the server is a child process; JSON-RPC messages travel one per line
//! over its stdin (client → server) and stdout (server → client). Its stderr is drained into
//! the log, under the [`STDERR_TARGET`] tracing target, and never interpreted.
//!
//! # Lifecycle
//!
//! * [`StdioTransport::spawn`] starts the [`StdioCommand`] and a supervisor task that reads
//!   the child's stdout (each line becomes one [`Inbound::Message`]), writes what
//!   [`send`](Transport::send) hands it, and watches the child.
//! * When the child exits (or closes its stdout) without [`close`](Transport::close) having been
//!   called, the messages it wrote are delivered first; then, without a [`RestartPolicy`], one
//!   [`Inbound::Closed`] with [`TransportError::Exited`] is pushed and every later `send` fails
//!   with [`TransportError::NotSent`]. With a policy, the command is started again after a
//!   backoff and [`Inbound::Restarted`] is pushed once the new child runs.
//! * [`close`](Transport::close) closes the child's stdin, waits
//!   [`after_stdin_close`](super::ShutdownTimeouts::after_stdin_close), sends SIGTERM, waits
//!   [`after_sigterm`](super::ShutdownTimeouts::after_sigterm), sends SIGKILL, reaps the child
//!   and pushes `Inbound::Closed(TransportError::Closed)` unless a `Closed` was pushed already.
//!   SIGTERM and SIGKILL are skipped when the child exits in time.
//! * Dropping the transport without closing it starts the same shutdown in the background
//!   (and if the runtime goes away first, the child is killed outright): no child outlives it.
//!
//! # Sending
//!
//! One task per child writes its stdin, whole lines, in the order `send` was called, so messages
//! never interleave; the lines queued while a write is under way go out together, in one
//! vectored write (no copy of the messages). `send` resolves once its line is written and flushed; it fails
//! with [`TransportError::NotSent`] when no child runs or nothing of the line went out, and
//! with [`TransportError::Lost`] when the pipe broke part way. A `send` future dropped early
//! does not cut its line short: the line is still written whole, or not at all.
//!
//! # Ending without `close()`
//!
//! The child's exit is noticed at once (and its stdout read to the end first). A child that
//! closes its stdout but keeps running is useless to the transport: it gets two seconds to
//! exit, then SIGKILL, and counts as having exited.
//!
//! # Process groups
//!
//! By default the child runs in a process group of its own (see
//! [`StdioCommand::process_group`]): the shutdown signals go to the whole group, and when the
//! child exits, whatever is left of its group is killed. Wrappers such as `npx`, `uvx` or
//! `sh -c` thus leave no grandchild behind, and a grandchild holding the stdout pipe open
//! cannot keep the transport from noticing the exit. A process that leaves the group on
//! purpose (`setsid`) is beyond reach; reading its output is given up two seconds after the
//! child exits.

mod command;
mod stderr;
mod supervisor;

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::Bytes;

use tokio::sync::{mpsc, oneshot, watch};
use tokio_util::sync::CancellationToken;

use super::{BoxFuture, Inbound, InboundSender, Outgoing, Transport, TransportError, TransportKind};
use mcp_types::{ProtocolVersion, RequestId};

pub use command::{RestartPolicy, StdioCommand};
pub use stderr::{STDERR_END_TARGET, STDERR_TARGET};

/// A client transport talking to an MCP server run as a child process.
///
/// Created with [`StdioTransport::spawn`]; see the [module documentation](self) for its
/// lifecycle.
#[derive(Debug)]
pub struct StdioTransport {
    shared: Arc<Shared>,
    /// Becomes `true` (or its sender is dropped) once the supervisor is finished: no child
    /// is left and nothing more will be pushed by it.
    done: watch::Receiver<bool>,
}

/// What the transport and its supervisor task share.
#[derive(Debug)]
struct Shared {
    /// The command's display name, for logs and errors.
    name: String,
    inbound: InboundSender,
    /// `true` once [`Inbound::Closed`] was pushed. Every push happens under this lock (once
    /// the channel has room for it), so nothing follows `Closed`.
    ended: Mutex<bool>,
    /// The running child, if any.
    current: Mutex<Current>,
    /// Cancelled by `close()` or drop: the transport is shutting down for good.
    closing: CancellationToken,
}

/// The child currently running.
#[derive(Debug, Default)]
struct Current {
    pid: Option<u32>,
    /// Feeds the task writing the child's stdin; `None` while no child runs.
    writer: Option<mpsc::Sender<WriteJob>>,
}

/// How many lines wait for the writer of the child's stdin at most. A job stays queued when
/// its caller gives up (so that a line is written whole or not at all): without a bound, a
/// child that stops reading its stdin while calls keep timing out and being made would make
/// the queue grow forever. Past it, a send waits for room (within the caller's timeout).
const WRITE_QUEUE: usize = 1024;

/// One line to write to the child's stdin, and where to report how it went.
#[derive(Debug)]
struct WriteJob {
    /// The message without its `\n` (which the writer adds), holding no raw line break.
    body: Bytes,
    done: oneshot::Sender<Result<(), TransportError>>,
}

impl WriteJob {
    /// The bytes this job puts on the wire: its body and the `\n`.
    fn len(&self) -> usize {
        self.body.len() + 1
    }
}

/// Locks `mutex`, ignoring poisoning: the data behind these locks stays consistent at every
/// point a panic could occur.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    /// Pushes `event` unless the transport has already pushed [`Inbound::Closed`], waiting for
    /// room in the channel first (meanwhile nothing more is read from the child, whose writes
    /// then block on the full pipe: back-pressure).
    async fn push(&self, event: Inbound) {
        if *lock(&self.ended) {
            return;
        }
        // The receiver being gone only means nobody listens any more.
        let Ok(permit) = self.inbound.reserve().await else { return };
        let mut ended = lock(&self.ended);
        if *ended {
            return;
        }
        if matches!(event, Inbound::Closed(_)) {
            *ended = true;
        }
        permit.send(event);
    }

    fn not_running(&self) -> TransportError {
        if self.closing.is_cancelled() {
            TransportError::NotSent(format!("the transport to {} is closed", self.name))
        } else {
            TransportError::NotSent(format!("the server process {} is not running", self.name))
        }
    }
}

impl StdioTransport {
    /// Starts `cmd` and the task supervising it; what the server sends goes to `inbound`.
    ///
    /// Must be called from within a tokio runtime (an error is returned otherwise). Fails with
    /// [`TransportError::NotSent`] if the program cannot be started (not found, not executable,
    /// bad working directory, ...).
    pub fn spawn(cmd: StdioCommand, inbound: InboundSender) -> Result<Arc<StdioTransport>, TransportError> {
        let name = cmd.display();
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(TransportError::NotSent(format!(
                "cannot start {name}: StdioTransport::spawn must be called within a tokio runtime"
            )));
        }
        let shared = Arc::new(Shared {
            name,
            inbound,
            ended: Mutex::new(false),
            current: Mutex::new(Current::default()),
            closing: CancellationToken::new(),
        });
        let first = supervisor::Generation::start(&cmd, &shared)
            .map_err(|e| TransportError::NotSent(format!("cannot start {}: {e}", shared.name)))?;
        tracing::debug!(server = %shared.name, pid = first.pid(), "started the server process");
        let (done_tx, done_rx) = watch::channel(false);
        tokio::spawn(supervisor::supervise(Arc::clone(&shared), cmd, first, done_tx));
        Ok(Arc::new(StdioTransport { shared, done: done_rx }))
    }

    /// The process id of the child currently running; `None` between a crash and its restart
    /// and after the transport ended.
    pub fn pid(&self) -> Option<u32> {
        lock(&self.shared.current).pid
    }

    /// The server's name in logs: [`StdioCommand::display`].
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    async fn send_line(&self, body: Bytes) -> Result<(), TransportError> {
        if self.shared.closing.is_cancelled() {
            return Err(self.shared.not_running());
        }
        // Serialized JSON holds no raw line break, and is then written as it is (no copy); one
        // that does (pretty-printed) gets them replaced by spaces, as `encode_line` does.
        // (`contains` on bytes searches a word at a time, where a per-byte loop costs two
        // instructions a byte of every request.)
        let body = if body.contains(&b'\n') || body.contains(&b'\r') {
            let mut line = Vec::with_capacity(body.len() + 1);
            mcp_stdio::encode_line(&body, &mut line);
            line.pop();
            Bytes::from(line)
        } else {
            body
        };
        let (done_tx, done_rx) = oneshot::channel();
        let job = WriteJob { body, done: done_tx };
        // Queued at once while there is room (no clone of the writer's sender); past
        // WRITE_QUEUE, the send waits for room.
        let writer = match &lock(&self.shared.current).writer {
            None => return Err(self.shared.not_running()),
            Some(writer) => match writer.try_send(job) {
                Ok(()) => None,
                Err(mpsc::error::TrySendError::Full(job)) => Some((writer.clone(), job)),
                Err(mpsc::error::TrySendError::Closed(_)) => return Err(self.shared.not_running()),
            },
        };
        if let Some((writer, job)) = writer
            && writer.send(job).await.is_err()
        {
            return Err(self.shared.not_running());
        }
        // The writer task owns the write: if this future is dropped, the line is still written
        // whole (or not at all), so the stream never ends mid-line. A job dropped unwritten
        // (the child exited, the transport closed) reports as not sent.
        done_rx.await.unwrap_or_else(|_| Err(self.shared.not_running()))
    }
}

impl Transport for StdioTransport {
    fn kind(&self) -> TransportKind {
        TransportKind::Stdio
    }

    /// Writes the body as one line and flushes it. [`Outgoing::kind`] and
    /// [`Outgoing::protocol_version`] are not used on stdio.
    fn send(&self, message: Outgoing) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async move { self.send_line(message.body).await })
    }

    /// Nothing to do on stdio: the core sends `notifications/cancelled`.
    fn abandon(&self, _id: &RequestId) {}

    /// Nothing to do on stdio.
    fn session_ready(&self, _version: ProtocolVersion) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.shared.closing.cancel();
            let mut done = self.done.clone();
            // An error means the supervisor is gone (it ended or the runtime shut down): done.
            let _ = done.wait_for(|finished| *finished).await;
            self.shared.push(Inbound::Closed(TransportError::Closed)).await;
        })
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        // The supervisor shuts the child down (stdin, SIGTERM, SIGKILL) in the background; if
        // the runtime stops first, dropping its task kills the child.
        self.shared.closing.cancel();
    }
}
