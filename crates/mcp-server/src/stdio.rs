//! Serving over stdio (or any byte stream): newline-delimited JSON-RPC, requests handled
//! concurrently, each message written whole.
//!
//! * A slow request never holds back others: each runs on its own task, up to
//!   `max_in_flight` at once and `max_bytes_in_flight` (64 MiB) of request bytes in flight; beyond that the server
//!   stops reading (back-pressure) rather than buffering without bound.
//! * `notifications/cancelled` drops the request's future: nothing more is sent for it.
//! * A second request with an id still in flight gets `-32600`; the first is untouched.
//! * A malformed line gets its error (`-32700`/`-32600`) and the server keeps serving.
//! * End of input: subscriptions end, requests in flight get a short grace to finish, then
//!   the server returns.

use std::sync::Arc;
use std::time::Duration;

use mcp_stdio::{FrameError, FramedReader, ReadError};
use mcp_types::{DecodeError, ErrorObject, Message, Response};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{Semaphore, mpsc};

use crate::connection::{Connection, InFlight};
use crate::door::{self, Classified, Inbound, Reply};
use crate::server::Server;
use crate::sink::ChannelSink;

/// How long requests in flight may still finish after the input ends.
const EOF_GRACE: Duration = Duration::from_secs(2);

impl Server {
    /// Serves this process's stdin and stdout until stdin ends.
    ///
    /// On Unix, a stdin or stdout that is a pipe or a socket is read and written on the
    /// reactor, in non-blocking mode (restored when the server is done with it); anything else
    /// (a regular file, a terminal, `/dev/null`) goes through tokio's blocking-pool
    /// `Stdin`/`Stdout`. While the server runs, whoever shares stdin's or stdout's open file
    /// description sees it non-blocking too; a stream that is also stderr keeps the blocking
    /// path.
    pub async fn serve_stdio(&self) -> std::io::Result<()> {
        #[cfg(unix)]
        {
            let (reader, read_path) = crate::stdio_pipes::stdin();
            let (writer, write_path) = crate::stdio_pipes::stdout();
            tracing::debug!(stdin = ?read_path, stdout = ?write_path, "serving stdio");
            self.serve_io(reader, writer).await
        }
        #[cfg(not(unix))]
        {
            self.serve_io(tokio::io::stdin(), tokio::io::stdout()).await
        }
    }

    /// Serves one connection over a byte stream pair until the input ends.
    pub async fn serve_io<R, W>(&self, reader: R, writer: W) -> std::io::Result<()>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (tx, rx) = mpsc::channel::<Vec<u8>>(1024);
        let writer_task = tokio::spawn(write_loop(rx, writer));
        let connection = Connection::new(Arc::new(ChannelSink(tx.clone())));
        let requests = Arc::new(Semaphore::new(self.inner.config.max_in_flight.max(1)));
        // The byte budget counts in KiB (`ServerConfig::max_bytes_in_flight`, docs/DECISIONS.md).
        let budget_kib = u32::try_from(self.inner.config.max_bytes_in_flight.div_ceil(1024).max(1))
            .unwrap_or(u32::MAX)
            .min(Semaphore::MAX_PERMITS as u32);
        let bytes = Arc::new(Semaphore::new(budget_kib as usize));
        let mut reader = FramedReader::new(reader);
        let mut tasks = tokio::task::JoinSet::new();

        while let Some(item) = reader.next_frame().await {
            let frame = match item {
                Ok(frame) => frame,
                Err(ReadError::Io(e)) => {
                    tracing::debug!(error = %e, "stdin read failed");
                    break;
                }
                Err(ReadError::Frame(e)) => {
                    let error = match e {
                        FrameError::LineTooLong { limit } => {
                            ErrorObject::invalid_request(format!("message longer than {limit} bytes"))
                        }
                        FrameError::ByteOrderMark => {
                            ErrorObject::parse_error("a byte-order mark precedes the JSON")
                        }
                        FrameError::InvalidUtf8 { .. } => {
                            ErrorObject::parse_error("the message is not UTF-8")
                        }
                        // FrameError is non-exhaustive: a refusal it adds later is still a
                        // refusal of this line alone.
                        other => ErrorObject::invalid_request(other.to_string()),
                    };
                    send(&tx, &door::unframed(error, connection.session().as_ref())).await;
                    continue;
                }
                // ReadError is non-exhaustive: an error it adds later ends the connection, as
                // an I/O error does.
                Err(error) => {
                    tracing::debug!(%error, "stdin read failed");
                    break;
                }
            };
            let session = connection.session();
            let batches = session.as_ref().is_some_and(|s| s.version.allows_batches());
            let size = frame.as_bytes().len();
            let received = door::receive(frame.as_bytes(), batches);
            // The line is read: a large one is not held while this request waits for room.
            drop(frame);
            let inbound = match received {
                Ok(inbound) => inbound,
                Err(unreadable) => {
                    send(&tx, &unreadable.reply(session.as_ref())).await;
                    continue;
                }
            };
            // Notifications and responses are handled in the read loop, in the order the client
            // sent them (a cancellation is never overtaken by a later request).
            let work = match inbound {
                Inbound::Notification(n) => {
                    self.handle_notification(&connection, n);
                    continue;
                }
                Inbound::Response(r) => {
                    self.handle_response(&connection, r);
                    continue;
                }
                // `initialize` opens the session the next lines are read under: answer it
                // before reading on, so a pipelined legacy request cannot overtake it.
                Inbound::Request(r) if r.is_initialize() => {
                    if let Some(reply) = self.serve_one(&connection, r).await {
                        send(&tx, &reply).await;
                    }
                    continue;
                }
                Inbound::Request(request) => Ok(request),
                Inbound::Batch(items) => Err(items),
            };
            // Back-pressure: wait for room before reading on.
            let Ok(permit) = requests.clone().acquire_owned().await else { break };
            let kib = u32::try_from(size.div_ceil(1024).max(1)).unwrap_or(u32::MAX).min(budget_kib);
            let Ok(byte_permit) = bytes.clone().acquire_many_owned(kib).await else { break };
            match work {
                Ok(request) => {
                    // Registered here, in the order the client sent them: of two requests with
                    // one id the first runs and the second is refused, and a cancellation read
                    // after a request always finds it (never decided by which task runs first).
                    let in_flight = match door::admit(&connection, &request) {
                        Ok(in_flight) => in_flight,
                        Err(refusal) => {
                            send(&tx, &refusal).await;
                            continue;
                        }
                    };
                    let server = self.clone();
                    let tx = tx.clone();
                    // Boxed before it is spawned, as mcp-http's exchange does: tokio moves a
                    // task's future in, and writes over it when it ends, by value.
                    tasks.spawn(Box::pin(async move {
                        if let Some(reply) = server.run(request, &in_flight, None, None).await {
                            send(&tx, &reply).await;
                        }
                        // In flight until its answer is queued for writing.
                        drop((in_flight, permit, byte_permit));
                    }));
                }
                Err(items) => {
                    let server = self.clone();
                    let connection = connection.clone();
                    let tx = tx.clone();
                    // Admitted in batch order here, like lines (see above); run concurrently.
                    let batch = self.admit_batch(&connection, items);
                    tasks.spawn(async move {
                        let responses = server.run_batch(batch).await;
                        if !responses.is_empty() {
                            let json = serde_json::to_vec(&responses).unwrap_or_default();
                            let _ = tx.send(json).await;
                        }
                        drop((permit, byte_permit));
                    });
                }
            }
            // Reap finished tasks so the set does not grow with the connection's lifetime.
            while tasks.try_join_next().is_some() {}
        }

        // End of input: subscriptions end now (nobody will cancel them), requests in flight get
        // a moment, then what is left is cancelled.
        connection.end_subscriptions();
        if tokio::time::timeout(EOF_GRACE, async { while tasks.join_next().await.is_some() {} })
            .await
            .is_err()
        {
            connection.close();
            tasks.abort_all();
            while tasks.join_next().await.is_some() {}
        }
        connection.close();
        drop(tx);
        drop(connection);
        writer_task.await.unwrap_or(Ok(()))
    }

    /// Admits and runs one request through the front door.
    async fn serve_one(&self, connection: &Arc<Connection>, request: Classified) -> Option<Reply> {
        match door::admit(connection, &request) {
            Ok(in_flight) => self.run(request, &in_flight, None, None).await,
            Err(refusal) => Some(refusal),
        }
    }

    /// Takes a batch's elements in order: notifications and responses handled, requests
    /// admitted (a duplicate id refused), unreadable elements answered.
    fn admit_batch(
        &self,
        connection: &Arc<Connection>,
        items: Vec<Result<Message, DecodeError>>,
    ) -> Vec<Element> {
        let session = connection.session();
        let mut batch = Vec::with_capacity(items.len());
        for item in items {
            let message = match item {
                Ok(message) => message,
                Err(e) => {
                    batch.push(Element::Answered(door::Unreadable::from(e).reply(session.as_ref())));
                    continue;
                }
            };
            match door::inbound(message) {
                Inbound::Request(request) => match door::admit(connection, &request) {
                    Ok(in_flight) => batch.push(Element::Admitted(request, in_flight)),
                    Err(refusal) => batch.push(Element::Answered(refusal)),
                },
                Inbound::Notification(n) => self.handle_notification(connection, n),
                Inbound::Response(r) => self.handle_response(connection, r),
                // Decoding never nests batches.
                Inbound::Batch(_) => {}
            }
        }
        batch
    }

    /// Runs a batch's admitted requests concurrently; the answers in the batch's order.
    async fn run_batch(&self, batch: Vec<Element>) -> Vec<Response> {
        let mut set = tokio::task::JoinSet::new();
        let mut responses = Vec::new();
        for (index, element) in batch.into_iter().enumerate() {
            match element {
                Element::Answered(reply) => responses.push((index, reply.response)),
                Element::Admitted(request, in_flight) => {
                    let server = self.clone();
                    set.spawn(async move {
                        let reply = server.run(request, &in_flight, None, None).await;
                        (index, reply.map(|r| r.response))
                    });
                }
            }
        }
        while let Some(done) = set.join_next().await {
            if let Ok((index, Some(response))) = done {
                responses.push((index, response));
            }
        }
        responses.sort_by_key(|(index, _)| *index);
        responses.into_iter().map(|(_, r)| r).collect()
    }
}

/// One element of a batch after admission.
#[allow(clippy::large_enum_variant)] // as `Inbound`: requests are the common case
enum Element {
    Answered(Reply),
    Admitted(Classified, InFlight),
}

async fn send(tx: &mpsc::Sender<Vec<u8>>, reply: &Reply) {
    // A closed channel means the writer is gone (stdout closed): nothing left to do.
    let _ = tx.send(serialized(reply)).await;
}

/// The reply serialized into a buffer sized for it up front, with room for the writer's `\n`.
/// `serde_json::to_vec` grows its buffer by doubling, so a 1 MB answer would hold 2 MiB
/// while it waits for the writer; this one holds what it is.
fn serialized(reply: &Reply) -> Vec<u8> {
    let response = &reply.response;
    let result = match &response.result {
        Ok(raw) => raw.get().len(),
        // An error's message is short; the buffer grows if it is not.
        Err(_) => 128,
    };
    let id = match response.id.request_id() {
        // A string id is at most 1 KiB; escaped, each byte takes at most six.
        Some(mcp_types::RequestId::String(id)) => id.len() * 6,
        _ => 0,
    };
    // `{"jsonrpc":"2.0","id":…,"result":…}` and the newline: well under 64 bytes besides the
    // id and the result.
    let mut json = Vec::with_capacity(64 + id + result);
    // Serializing a response cannot fail: its raw members are already valid JSON.
    if serde_json::to_writer(&mut json, response).is_err() {
        json.clear();
    }
    json
}

/// Messages at least this large are written from their own buffer; smaller ones are gathered
/// into one write.
const OWN_WRITE: usize = 64 * 1024;

/// Writes queued messages, one line each. Small messages that are ready are gathered (up to
/// 1 MiB) into one buffer handed to the writer at once: one `write` call per batch when the
/// stream takes it whole. A large message (an answer of a megabyte) is not copied: it becomes
/// its own line in place and is written from its own buffer.
async fn write_loop<W: AsyncWrite + Unpin>(
    mut rx: mpsc::Receiver<Vec<u8>>,
    mut writer: W,
) -> std::io::Result<()> {
    let mut batch = Vec::with_capacity(OWN_WRITE);
    while let Some(first) = rx.recv().await {
        let mut next = Some(first);
        while let Some(message) = next.take() {
            if message.len() >= OWN_WRITE {
                // In the order queued: what was gathered before it goes first.
                if !batch.is_empty() {
                    writer.write_all(&batch).await?;
                    batch.clear();
                }
                writer.write_all(&mcp_stdio::into_line(message)).await?;
            } else {
                mcp_stdio::encode_line(&message, &mut batch);
            }
            if batch.len() < 1024 * 1024 {
                next = rx.try_recv().ok();
            }
        }
        if !batch.is_empty() {
            writer.write_all(&batch).await?;
        }
        writer.flush().await?;
        batch.clear();
        // A burst of small answers must not pin a large buffer for the connection's lifetime.
        if batch.capacity() > 4 * 1024 * 1024 {
            batch = Vec::with_capacity(OWN_WRITE);
        }
    }
    writer.flush().await?;
    writer.shutdown().await.or(Ok(()))
}
