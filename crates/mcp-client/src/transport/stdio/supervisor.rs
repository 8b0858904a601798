//! The task that owns the child: reads its stdout, writes its stdin, notices its exit, shuts it
//! down and restarts it.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use mcp_stdio::{FramedReader, LineDecoder, ReadError};
use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::process::{Child, ChildStdout};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::command::{RestartPolicy, StdioCommand};
use super::{Shared, WriteJob, lock, stderr};
use crate::transport::{Inbound, TransportError};

/// How long a child that closed its stdout (without `close()`) may live on before SIGKILL.
const EOF_GRACE: Duration = Duration::from_secs(2);
/// How long stdout is still read after the child exited (what is left of its group is killed
/// at once, so this only matters for a process that left the group, or without groups).
const DRAIN_AFTER_EXIT: Duration = Duration::from_secs(2);
/// How long to wait for the exit after SIGKILL before giving up on the child.
const KILL_WAIT: Duration = Duration::from_secs(5);

/// Sets the `done` flag when the supervisor ends, however it ends.
struct DoneGuard(watch::Sender<bool>);

impl Drop for DoneGuard {
    fn drop(&mut self) {
        self.0.send_replace(true);
    }
}

/// Runs child after child until the transport closes or gives up.
pub(super) async fn supervise(
    shared: Arc<Shared>,
    cmd: StdioCommand,
    first: Generation,
    done: watch::Sender<bool>,
) {
    let _done = DoneGuard(done);
    let mut generation = first;
    let mut failures: u32 = 0;
    loop {
        let exit = generation.run(&shared, &cmd).await;
        let uptime = generation.started.elapsed();
        drop(generation);
        if shared.closing.is_cancelled() {
            tracing::debug!(server = %shared.name, "server process stopped ({exit})");
            return;
        }
        let Some(policy) = cmd.get_restart().copied() else {
            tracing::warn!(server = %shared.name, "server process exited unexpectedly ({exit})");
            shared.push(Inbound::Closed(TransportError::Exited(exit))).await;
            return;
        };
        if uptime >= RestartPolicy::STABLE_UPTIME {
            failures = 0;
        }
        match restart(&shared, &cmd, &policy, &mut failures, exit).await {
            Some(next) => generation = next,
            None => return,
        }
    }
}

/// Starts the command again after the policy's backoff, as many times as the policy allows.
/// `None` when the transport gave up (`Closed` pushed) or is closing.
async fn restart(
    shared: &Shared,
    cmd: &StdioCommand,
    policy: &RestartPolicy,
    failures: &mut u32,
    mut last: String,
) -> Option<Generation> {
    loop {
        *failures = failures.saturating_add(1);
        if *failures > policy.max_restarts {
            tracing::warn!(
                server = %shared.name,
                "server process exited ({last}); giving up after {} restarts",
                policy.max_restarts
            );
            shared.push(Inbound::Closed(TransportError::Exited(last))).await;
            return None;
        }
        let wait = policy.backoff(*failures);
        tracing::warn!(
            server = %shared.name,
            "server process exited ({last}); restart {} of {} in {wait:?}",
            *failures,
            policy.max_restarts
        );
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            () = shared.closing.cancelled() => return None,
        }
        match Generation::start(cmd, shared) {
            Ok(next) => {
                tracing::info!(server = %shared.name, pid = next.pid(), "server process restarted");
                if !shared.closing.is_cancelled() {
                    shared.push(Inbound::Restarted { error: TransportError::Exited(last) }).await;
                }
                return Some(next);
            }
            Err(e) => last = format!("restart failed: {e}"),
        }
    }
}

/// Where the shutdown of one child stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Running, nobody asked it to stop.
    Running,
    /// `close()`: its stdin is closed, it may exit by itself.
    StdinClosed,
    /// SIGTERM sent.
    Termed,
    /// SIGKILL sent.
    Killed,
}

/// What woke the supervisor of one child.
enum Step {
    /// A line, a bad line, or the end of stdout.
    Stdout(Option<Result<mcp_stdio::Frame, ReadError>>),
    /// The child exited (and was reaped).
    Exited(io::Result<std::process::ExitStatus>),
    /// `close()` was called (or the transport dropped).
    Closing,
    /// The current deadline passed.
    Deadline,
}

/// One child process and its pipes.
pub(super) struct Generation {
    child: Child,
    pid: Option<u32>,
    /// Its process group, when it has one of its own.
    group: Option<Pid>,
    /// The child was reaped (or given up on): its pid may be reused, signal nothing more.
    reaped: bool,
    stdout: FramedReader<ChildStdout>,
    /// Cancelled when the child is gone: stops its writer task.
    gone: CancellationToken,
    started: Instant,
}

impl Generation {
    /// Starts `cmd`, its stdin writer and stderr drain, and makes it the current child.
    pub(super) fn start(cmd: &StdioCommand, shared: &Shared) -> io::Result<Generation> {
        let mut child = cmd.to_tokio().spawn()?;
        let pid = child.id();
        let group = if cmd.own_process_group() { pid.and_then(to_pid) } else { None };
        // Dropping `child` on an error below kills it (`kill_on_drop`).
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(io::Error::other("the child's stdio pipes are missing"));
        };
        let gone = CancellationToken::new();
        let (jobs_tx, jobs_rx) = mpsc::channel(super::WRITE_QUEUE);
        tokio::spawn(write_loop(stdin, jobs_rx, gone.clone(), shared.closing.clone(), shared.name.clone()));
        tokio::spawn(stderr::drain(stderr, shared.name.clone(), pid));
        *lock(&shared.current) = super::Current { pid, writer: Some(jobs_tx) };
        Ok(Generation {
            child,
            pid,
            group,
            reaped: false,
            stdout: FramedReader::with_decoder(stdout, LineDecoder::new(cmd.get_max_line())),
            gone,
            started: Instant::now(),
        })
    }

    pub(super) fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Runs until the child has exited and its stdout has ended, shutting it down once the
    /// transport is closing. Returns the exit status, as text.
    async fn run(&mut self, shared: &Shared, cmd: &StdioCommand) -> String {
        let timeouts = cmd.get_shutdown_timeouts();
        let (name, pid) = (&shared.name, self.pid);
        let mut status: Option<String> = None;
        let mut eof = false;
        let mut stage = Stage::Running;
        let mut deadline: Option<Instant> = None;
        while status.is_none() || !eof {
            let at = deadline;
            let timer = async move {
                match at {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            let may_close = stage == Stage::Running && status.is_none();
            let step = tokio::select! {
                item = self.stdout.next_frame(), if !eof => Step::Stdout(item),
                exit = self.child.wait(), if status.is_none() => Step::Exited(exit),
                () = shared.closing.cancelled(), if may_close => Step::Closing,
                () = timer => Step::Deadline,
            };
            match step {
                Step::Stdout(item) => {
                    match item {
                        Some(Ok(frame)) => shared.push(Inbound::Message(Bytes::from(frame.into_vec()))).await,
                        Some(Err(ReadError::Frame(e))) => {
                            tracing::warn!(server = %name, pid, "skipped a stdout line: {e}");
                        }
                        // I/O, or a read error mcp-stdio adds later (non-exhaustive): stdout is over.
                        Some(Err(e)) => {
                            tracing::warn!(server = %name, pid, "reading stdout failed: {e}");
                            eof = true;
                        }
                        None => eof = true,
                    }
                    if eof && status.is_none() && stage == Stage::Running {
                        tracing::debug!(server = %name, pid, "the server closed its stdout");
                        deadline = Some(Instant::now() + EOF_GRACE);
                    }
                }
                Step::Exited(exit) => {
                    status = Some(match exit {
                        Ok(exit) => exit.to_string(),
                        Err(e) => format!("status unknown: {e}"),
                    });
                    self.reaped = true;
                    // Whatever is left of its group goes too: nothing may hold the pipes open.
                    if let Some(group) = self.group {
                        let _ = killpg(group, Signal::SIGKILL);
                    }
                    self.mark_gone(shared);
                    if !eof {
                        deadline = Some(Instant::now() + DRAIN_AFTER_EXIT);
                    }
                }
                Step::Closing => {
                    // The writer task closes stdin as it sees `closing`.
                    stage = Stage::StdinClosed;
                    deadline = Some(Instant::now() + timeouts.after_stdin_close);
                }
                Step::Deadline if status.is_some() => {
                    tracing::warn!(
                        server = %name,
                        pid,
                        "the server's stdout is still open after it exited; no longer reading it"
                    );
                    deadline = None;
                    eof = true;
                }
                Step::Deadline => {
                    let (next, wait) = match stage {
                        Stage::Running => {
                            tracing::warn!(
                                server = %name,
                                pid,
                                "the server closed its stdout but keeps running; killing it"
                            );
                            self.signal(shared, Signal::SIGKILL);
                            (Stage::Killed, KILL_WAIT)
                        }
                        Stage::StdinClosed => {
                            tracing::debug!(server = %name, pid, "still running; SIGTERM");
                            self.signal(shared, Signal::SIGTERM);
                            (Stage::Termed, timeouts.after_sigterm)
                        }
                        Stage::Termed => {
                            tracing::warn!(server = %name, pid, "no exit after SIGTERM; SIGKILL");
                            self.signal(shared, Signal::SIGKILL);
                            (Stage::Killed, KILL_WAIT)
                        }
                        Stage::Killed => {
                            tracing::error!(
                                server = %name,
                                pid,
                                "the server process did not exit after SIGKILL; giving up on it"
                            );
                            self.reaped = true;
                            self.mark_gone(shared);
                            return "still running after SIGKILL".to_owned();
                        }
                    };
                    stage = next;
                    deadline = Some(Instant::now() + wait);
                }
            }
        }
        status.unwrap_or_default()
    }

    /// The child is gone: stop its writer and forget it as the current child.
    fn mark_gone(&self, shared: &Shared) {
        self.gone.cancel();
        let mut current = lock(&shared.current);
        current.pid = None;
        current.writer = None;
    }

    /// Sends `signal` to the child's group (or to the child alone, without a group of its own).
    fn signal(&self, shared: &Shared, signal: Signal) {
        if self.reaped {
            return;
        }
        let result = match (self.group, self.pid.and_then(to_pid)) {
            (Some(group), _) => killpg(group, signal),
            (None, Some(pid)) => kill(pid, signal),
            (None, None) => return,
        };
        if let Err(e) = result {
            tracing::debug!(server = %shared.name, pid = self.pid, "sending {signal} failed: {e}");
        }
    }
}

impl Drop for Generation {
    fn drop(&mut self) {
        // Not reaped: the supervisor was dropped mid-way (runtime shutdown). `kill_on_drop`
        // kills the child itself; this takes the rest of its group along.
        if !self.reaped {
            if let Some(group) = self.group {
                let _ = killpg(group, Signal::SIGKILL);
            }
        }
    }
}

fn to_pid(pid: u32) -> Option<Pid> {
    i32::try_from(pid).ok().map(Pid::from_raw)
}

/// At most this many bytes of queued lines go out in one batch.
const BATCH_BYTES: usize = 1024 * 1024;

/// At most this many buffers in one vectored write (well under every system's `IOV_MAX`).
const MAX_SLICES: usize = 128;

/// Writes the jobs' lines to the child's stdin, in order, until the child is gone, the
/// transport closes (which closes the child's stdin) or a write fails. The lines queued while
/// one batch is written make up the next one (coalesced: one write call for many messages).
async fn write_loop<W: AsyncWrite + Unpin>(
    mut stdin: W,
    mut jobs: mpsc::Receiver<WriteJob>,
    gone: CancellationToken,
    closing: CancellationToken,
    name: String,
) {
    let mut batch: Vec<WriteJob> = Vec::new();
    loop {
        let first = tokio::select! {
            biased;
            () = closing.cancelled() => break,
            () = gone.cancelled() => break,
            job = jobs.recv() => match job {
                Some(job) => job,
                None => break,
            },
        };
        let mut size = first.len();
        batch.push(first);
        while size < BATCH_BYTES {
            match jobs.try_recv() {
                Ok(job) => {
                    size += job.len();
                    batch.push(job);
                }
                Err(_) => break,
            }
        }
        let mut written = 0;
        let result = tokio::select! {
            biased;
            () = closing.cancelled() => Err(io::Error::other("the transport was closed")),
            () = gone.cancelled() => Err(io::Error::other("the server process exited")),
            result = write_batch(&mut stdin, &batch, &mut written) => result,
        };
        // Each job is told how its own line went: whole, cut short, or not started.
        let mut start = 0;
        for job in batch.drain(..) {
            let end = start + job.len();
            let outcome = match &result {
                Ok(()) => Ok(()),
                Err(_) if written >= end => Ok(()),
                Err(e) if written <= start => {
                    Err(TransportError::NotSent(format!("writing to {name} failed: {e}")))
                }
                Err(e) => Err(TransportError::Lost(format!(
                    "writing to {name} failed after {} bytes: {e}",
                    written - start
                ))),
            };
            let _ = job.done.send(outcome);
            start = end;
        }
        if result.is_err() {
            // The pipe is broken, or the stream is mid-line: nothing more can go out.
            break;
        }
    }
    // Dropping stdin closes the pipe: the child reads end of input. Jobs still queued are
    // dropped unwritten and their senders see "not sent".
    drop(stdin);
}

/// Writes every job's line (its body, then `\n`) and flushes, counting the bytes written in
/// `written`.
async fn write_batch<W: AsyncWrite + Unpin>(
    stdin: &mut W,
    batch: &[WriteJob],
    written: &mut usize,
) -> io::Result<()> {
    let total: usize = batch.iter().map(WriteJob::len).sum();
    while *written < total {
        let slices = remaining(batch, *written);
        match stdin.write_vectored(&slices).await {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => *written += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    stdin.flush().await
}

/// The buffers still to write once `skip` bytes of the batch went out (at most
/// [`MAX_SLICES`]).
fn remaining(batch: &[WriteJob], mut skip: usize) -> Vec<io::IoSlice<'_>> {
    let mut slices = Vec::with_capacity(MAX_SLICES.min(batch.len() * 2));
    for job in batch {
        for part in [&job.body[..], b"\n"] {
            if skip >= part.len() {
                skip -= part.len();
                continue;
            }
            slices.push(io::IoSlice::new(&part[skip..]));
            skip = 0;
            if slices.len() == MAX_SLICES {
                return slices;
            }
        }
    }
    slices
}

#[cfg(test)]
mod tests {
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use super::{MAX_SLICES, WriteJob, remaining, write_loop};
    use bytes::Bytes;
    use tokio_util::sync::CancellationToken;

    /// A stdin that takes at most `limit` bytes per write call and counts the calls.
    #[derive(Default)]
    struct Recorder {
        bytes: Vec<u8>,
        calls: usize,
        limit: usize,
    }

    impl tokio::io::AsyncWrite for Recorder {
        fn poll_write(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<std::io::Result<usize>> {
            let n = buf.len().min(self.limit);
            self.calls += 1;
            self.bytes.extend_from_slice(&buf[..n]);
            Poll::Ready(Ok(n))
        }

        fn poll_write_vectored(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            bufs: &[std::io::IoSlice<'_>],
        ) -> Poll<std::io::Result<usize>> {
            self.calls += 1;
            let mut n = 0;
            for buf in bufs {
                let take = buf.len().min(self.limit - n);
                self.bytes.extend_from_slice(&buf[..take]);
                n += take;
            }
            Poll::Ready(Ok(n))
        }

        fn is_write_vectored(&self) -> bool {
            true
        }

        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    /// Queues `count` small lines at once, runs the writer over them, and returns what it
    /// wrote and in how many write calls.
    async fn write_queued(count: usize, limit: usize) -> (Vec<u8>, usize) {
        let (tx, rx) = tokio::sync::mpsc::channel(count.max(1));
        let mut done = Vec::new();
        for i in 0..count {
            let (done_tx, done_rx) = tokio::sync::oneshot::channel();
            tx.try_send(WriteJob { body: Bytes::from(format!("{{\"n\":{i}}}")), done: done_tx }).unwrap();
            done.push(done_rx);
        }
        drop(tx);
        let mut stdin = Recorder { limit, ..Recorder::default() };
        write_loop(&mut stdin, rx, CancellationToken::new(), CancellationToken::new(), "test".into()).await;
        for done in done {
            assert!(matches!(done.await, Ok(Ok(()))));
        }
        (stdin.bytes, stdin.calls)
    }

    fn expected(count: usize) -> Vec<u8> {
        (0..count).flat_map(|i| format!("{{\"n\":{i}}}\n").into_bytes()).collect()
    }

    #[tokio::test]
    async fn lines_queued_together_are_written_in_one_call_per_max_slices() {
        // 64 lines are 128 buffers: one vectored write.
        let (bytes, calls) = write_queued(64, usize::MAX).await;
        assert_eq!(bytes, expected(64));
        assert_eq!(calls, 1, "the queued lines were not coalesced");
        let (bytes, calls) = write_queued(640, usize::MAX).await;
        assert_eq!(bytes, expected(640));
        assert_eq!(calls, 10);
    }

    #[tokio::test]
    async fn a_batch_cut_short_by_the_stream_resumes_where_it_stopped() {
        let (bytes, _) = write_queued(300, 7).await;
        assert_eq!(bytes, expected(300));
    }

    fn job(body: &'static str) -> WriteJob {
        WriteJob { body: Bytes::from_static(body.as_bytes()), done: tokio::sync::oneshot::channel().0 }
    }

    fn joined(slices: &[std::io::IoSlice<'_>]) -> Vec<u8> {
        slices.iter().flat_map(|s| s.iter().copied()).collect()
    }

    #[test]
    fn remaining_resumes_mid_line_and_mid_batch() {
        let batch = [job("ab"), job("cde"), job("")];
        assert_eq!(joined(&remaining(&batch, 0)), b"ab\ncde\n\n");
        assert_eq!(joined(&remaining(&batch, 1)), b"b\ncde\n\n");
        assert_eq!(joined(&remaining(&batch, 2)), b"\ncde\n\n");
        assert_eq!(joined(&remaining(&batch, 3)), b"cde\n\n");
        assert_eq!(joined(&remaining(&batch, 7)), b"\n");
        assert!(remaining(&batch, 8).is_empty());
    }

    #[test]
    fn remaining_is_capped_at_max_slices() {
        let batch: Vec<WriteJob> = (0..MAX_SLICES).map(|_| job("x")).collect();
        let slices = remaining(&batch, 0);
        assert_eq!(slices.len(), MAX_SLICES);
        assert_eq!(joined(&slices), "x\n".repeat(MAX_SLICES / 2).as_bytes());
    }
}
