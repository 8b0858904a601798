//! Serving over stdio (or any byte stream): newline-delimited JSON-RPC, requests handled
//! concurrently, each message written whole.
//!
//! * A slow request never holds back others: each runs on its own task, up to
//!   `max_in_flight` at once and 64 MiB of request bytes in flight; beyond that the server
//!   stops reading (back-pressure) rather than buffering without bound.
//! * `notifications/cancelled` drops the request's future: nothing more is sent for it.
//! * A second request with an id still in flight gets `-32600`; the first is untouched.
//! * A malformed line gets its error (`-32700`/`-32600`) and the server keeps serving.
//! * End of input: subscriptions end, requests in flight get a short grace to finish, then
//!   the server returns.

use std::sync::Arc;
use std::time::Duration;

use mcp_stdio::{FrameError, FramedReader, ReadError};
use mcp_types::{DecodeOptions, ErrorObject, Incoming, Message, Request, Response, ResponseId, code};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::{Semaphore, mpsc};

use crate::connection::{Connection, InFlight};
use crate::server::Server;
use crate::sink::ChannelSink;

/// Bytes of requests in flight, all together, before reading pauses (docs/DECISIONS.md).
const MAX_BYTES_IN_FLIGHT: usize = 64 * 1024 * 1024;

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
        let bytes = Arc::new(Semaphore::new(MAX_BYTES_IN_FLIGHT / 1024));
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
                    };
                    let response = Response::error(missing_id(&connection), error);
                    send(&tx, &Message::Response(response)).await;
                    continue;
                }
            };
            let session = connection.session();
            let options = DecodeOptions {
                allow_batch: session.as_ref().is_some_and(|s| s.version.allows_batches()),
                accept_responses: true,
            };
            let incoming = match mcp_types::decode(frame.as_bytes(), options) {
                Ok(incoming) => incoming,
                Err(e) => {
                    send(&tx, &Message::Response(e.to_response(null_id(session.as_ref())))).await;
                    continue;
                }
            };
            // Notifications and responses are handled in the read loop, in the order the client
            // sent them (a cancellation is never overtaken by a later request).
            let incoming = match incoming {
                Incoming::Single(Message::Notification(n)) => {
                    self.handle_notification(&connection, n);
                    continue;
                }
                Incoming::Single(Message::Response(r)) => {
                    self.handle_response(&connection, r);
                    continue;
                }
                // `initialize` opens the session the next lines are read under: answer it
                // before reading on, so a pipelined legacy request cannot overtake it.
                Incoming::Single(Message::Request(r)) if r.method == "initialize" => {
                    if let Some(response) = self.handle_one(&connection, r).await {
                        send(&tx, &Message::Response(response)).await;
                    }
                    continue;
                }
                other => other,
            };
            let size = frame.as_bytes().len();
            // Back-pressure: wait for room before reading on.
            let Ok(permit) = requests.clone().acquire_owned().await else { break };
            let kib = u32::try_from(size.div_ceil(1024).max(1))
                .unwrap_or(u32::MAX)
                .min((MAX_BYTES_IN_FLIGHT / 1024) as u32);
            let Ok(byte_permit) = bytes.clone().acquire_many_owned(kib).await else { break };
            match incoming {
                Incoming::Single(Message::Request(request)) => {
                    // Registered here, in the order the client sent them: of two requests with
                    // one id the first runs and the second is refused, and a cancellation read
                    // after a request always finds it (never decided by which task runs first).
                    let in_flight = match admit(&connection, &request) {
                        Ok(in_flight) => in_flight,
                        Err(refusal) => {
                            send(&tx, &Message::Response(refusal)).await;
                            continue;
                        }
                    };
                    let server = self.clone();
                    let connection = connection.clone();
                    let tx = tx.clone();
                    tasks.spawn(async move {
                        if let Some(response) = server.run_admitted(&connection, request, &in_flight).await {
                            send(&tx, &Message::Response(response)).await;
                        }
                        // In flight until its answer is queued for writing.
                        drop((in_flight, permit, byte_permit));
                    });
                }
                Incoming::Single(message) => {
                    let server = self.clone();
                    let connection = connection.clone();
                    let tx = tx.clone();
                    tasks.spawn(async move {
                        if let Some(response) = server.handle_message(&connection, message).await {
                            send(&tx, &Message::Response(response)).await;
                        }
                        drop((permit, byte_permit));
                    });
                }
                Incoming::Batch(items) => {
                    let server = self.clone();
                    let connection = connection.clone();
                    let tx = tx.clone();
                    tasks.spawn(async move {
                        let responses = server.handle_batch(&connection, items).await;
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

        // End of input: give requests in flight a moment, then cancel what is left.
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

    /// Handles one decoded message; returns the response to send, if any.
    async fn handle_message(&self, connection: &Arc<Connection>, message: Message) -> Option<Response> {
        match message {
            Message::Request(request) => self.handle_one(connection, request).await,
            Message::Notification(notification) => {
                self.handle_notification(connection, notification);
                None
            }
            Message::Response(response) => {
                self.handle_response(connection, response);
                None
            }
        }
    }

    async fn handle_one(&self, connection: &Arc<Connection>, request: Request) -> Option<Response> {
        let in_flight = match admit(connection, &request) {
            Ok(in_flight) => in_flight,
            Err(refusal) => return Some(refusal),
        };
        self.run_admitted(connection, request, &in_flight).await
    }

    /// Runs a request already registered as in flight; `None` when it was cancelled.
    async fn run_admitted(
        &self,
        connection: &Arc<Connection>,
        request: Request,
        in_flight: &InFlight,
    ) -> Option<Response> {
        let token = in_flight.token().clone();
        if token.is_cancelled() {
            // Cancelled before it started (a cancellation read right behind it): never run it.
            return None;
        }
        tokio::select! {
            reply = self.handle_request(connection, request, token.clone()) => reply.map(|r| r.response),
            // Cancelled: drop the handler's future; nothing more is sent for this request.
            _ = token.cancelled() => None,
        }
    }

    async fn handle_batch(
        &self,
        connection: &Arc<Connection>,
        items: Vec<Result<Message, mcp_types::DecodeError>>,
    ) -> Vec<Response> {
        let mut set = tokio::task::JoinSet::new();
        let mut responses = Vec::new();
        for (index, item) in items.into_iter().enumerate() {
            match item {
                Ok(Message::Request(request)) => {
                    // Registered in batch order, like lines (see the read loop).
                    let in_flight = match admit(connection, &request) {
                        Ok(in_flight) => in_flight,
                        Err(refusal) => {
                            responses.push((index, refusal));
                            continue;
                        }
                    };
                    let server = self.clone();
                    let connection = connection.clone();
                    set.spawn(async move {
                        let response = server.run_admitted(&connection, request, &in_flight).await;
                        (index, response)
                    });
                }
                Ok(message) => {
                    let server = self.clone();
                    let connection = connection.clone();
                    set.spawn(async move { (index, server.handle_message(&connection, message).await) });
                }
                Err(e) => responses.push((index, e.to_response(true))), // batches: 2025-03-26 only
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

/// Registers `request` as in flight on `connection`, or the `-32600` answer refusing it because
/// its id is already in flight (the first request is left alone).
fn admit(connection: &Arc<Connection>, request: &Request) -> Result<InFlight, Response> {
    connection.begin(&request.id).map_err(|duplicate| {
        Response::error(request.id.clone(), ErrorObject::new(code::INVALID_REQUEST, duplicate.to_string()))
    })
}

/// Whether an error answering unreadable input says `"id": null` (sessions of revisions
/// before 2025-11-25, whose schemas require an id) or omits the id (2025-11-25 and modern).
fn null_id(session: Option<&crate::session::SessionHandle>) -> bool {
    session.is_some_and(|s| !s.version.omits_unknown_error_id())
}

fn missing_id(connection: &Connection) -> ResponseId {
    if null_id(connection.session().as_ref()) { ResponseId::Null } else { ResponseId::Absent }
}

async fn send(tx: &mpsc::Sender<Vec<u8>>, message: &Message) {
    // A closed channel means the writer is gone (stdout closed): nothing left to do.
    let _ = tx.send(message.to_vec()).await;
}

/// Writes queued messages, one line each, batching whatever is ready (up to 1 MiB) into one
/// buffer handed to the writer at once: one `write` call per batch when the stream takes it
/// whole (no second buffer in between).
async fn write_loop<W: AsyncWrite + Unpin>(
    mut rx: mpsc::Receiver<Vec<u8>>,
    mut writer: W,
) -> std::io::Result<()> {
    let mut line = Vec::with_capacity(64 * 1024);
    while let Some(first) = rx.recv().await {
        line.clear();
        mcp_stdio::encode_line(&first, &mut line);
        while line.len() < 1024 * 1024 {
            match rx.try_recv() {
                Ok(next) => mcp_stdio::encode_line(&next, &mut line),
                Err(_) => break,
            }
        }
        writer.write_all(&line).await?;
        writer.flush().await?;
        // A burst of large answers must not pin a large buffer for the connection's lifetime.
        if line.capacity() > 4 * 1024 * 1024 {
            line = Vec::with_capacity(64 * 1024);
        }
    }
    writer.flush().await?;
    writer.shutdown().await.or(Ok(()))
}
