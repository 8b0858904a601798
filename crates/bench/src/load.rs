//! One phase of load over a newline-delimited JSON-RPC byte stream: a writer task keeps up to
//! `concurrency` `tools/call echo` requests in flight, a reader task matches the answers by id,
//! checks each one and records its latency.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Deserialize;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{Semaphore, TryAcquireError};

/// What every request looks like.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shape {
    /// Modern requests carry the 2026-07-28 `_meta`; legacy ones rely on the session.
    pub(crate) modern: bool,
    /// Length of the `text` argument (at least the id's digits, so every text is unique).
    pub(crate) text_bytes: usize,
}

impl Shape {
    /// The text sent with request `id`: its digits padded with `x` to `text_bytes`.
    pub(crate) fn text(&self, id: u64) -> String {
        let mut text = id.to_string();
        let pad = self.text_bytes.saturating_sub(text.len());
        text.extend(std::iter::repeat_n('x', pad));
        text
    }

    /// The request line for `id`, newline included.
    pub(crate) fn line(&self, id: u64) -> Vec<u8> {
        let mut line = self.request(id);
        line.push('\n');
        line.into_bytes()
    }

    /// The JSON-RPC request for `id`, without a newline. The text needs no JSON escaping.
    pub(crate) fn request(&self, id: u64) -> String {
        let meta = if self.modern {
            r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"#
        } else {
            ""
        };
        let text = self.text(id);
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{{meta}"name":"echo","arguments":{{"text":"{text}"}}}}}}"#
        )
    }
}

/// What came back in one phase.
#[derive(Debug, Default)]
pub(crate) struct PhaseStats {
    /// Answers read (good or bad).
    pub(crate) received: u64,
    /// Answers that were not the expected echo, plus requests left unanswered.
    pub(crate) errors: u64,
    /// Latency of every good answer, in microseconds.
    pub(crate) latencies_us: Vec<u64>,
    /// From the first request written to the last answer read.
    pub(crate) elapsed: Duration,
    /// The server closed its output before answering everything.
    pub(crate) eof: bool,
    /// The first bad answer, for the report.
    pub(crate) first_error: Option<String>,
}

impl PhaseStats {
    pub(crate) fn error(&mut self, why: String) {
        self.errors += 1;
        self.first_error.get_or_insert(why);
    }
}

type Pending = Arc<Mutex<HashMap<u64, Instant>>>;

/// Sends requests `ids` with at most `concurrency` unanswered, and reads their answers.
/// Returns the stream halves for the next phase together with what was seen.
pub(crate) async fn run_phase<W, R>(
    writer: W,
    reader: R,
    shape: Shape,
    ids: Range<u64>,
    concurrency: usize,
) -> std::io::Result<(W, R, PhaseStats)>
where
    W: AsyncWrite + Unpin + Send + 'static,
    R: AsyncBufRead + Unpin + Send + 'static,
{
    let permits = Arc::new(Semaphore::new(concurrency.max(1)));
    let pending: Pending = Arc::default();
    let count = ids.end.saturating_sub(ids.start);
    let start = Instant::now();
    let write = tokio::spawn(write_requests(writer, shape, ids, permits.clone(), pending.clone()));
    let read = tokio::spawn(read_answers(reader, shape, count, start, permits, pending));
    let writer = match write.await.map_err(std::io::Error::other)? {
        Ok(writer) => writer,
        Err(e) => {
            // The server stopped reading; what it wrote before may tell why.
            let mut read = read;
            let why = match tokio::time::timeout(Duration::from_secs(1), &mut read).await {
                Ok(Ok((_, stats))) => stats.first_error.map(|f| format!("; first error: {f}")),
                _ => None,
            };
            read.abort();
            return Err(std::io::Error::new(e.kind(), format!("{e}{}", why.unwrap_or_default())));
        }
    };
    let (reader, stats) = read.await.map_err(std::io::Error::other)?;
    Ok((writer, reader, stats))
}

async fn write_requests<W: AsyncWrite + Unpin>(
    mut writer: W,
    shape: Shape,
    ids: Range<u64>,
    permits: Arc<Semaphore>,
    pending: Pending,
) -> std::io::Result<W> {
    for id in ids {
        let permit = match permits.try_acquire() {
            Ok(permit) => permit,
            // The window is full: push out what is buffered, then wait for an answer.
            Err(TryAcquireError::NoPermits) => {
                writer.flush().await?;
                match permits.acquire().await {
                    Ok(permit) => permit,
                    Err(_) => break,
                }
            }
            // The reader gave up (the server closed its output).
            Err(TryAcquireError::Closed) => break,
        };
        permit.forget();
        let line = shape.line(id);
        pending.lock().unwrap_or_else(|e| e.into_inner()).insert(id, Instant::now());
        writer.write_all(&line).await?;
    }
    writer.flush().await?;
    Ok(writer)
}

async fn read_answers<R: AsyncBufRead + Unpin>(
    mut reader: R,
    shape: Shape,
    count: u64,
    start: Instant,
    permits: Arc<Semaphore>,
    pending: Pending,
) -> (R, PhaseStats) {
    let mut stats = PhaseStats { latencies_us: Vec::with_capacity(count as usize), ..Default::default() };
    let mut line = Vec::new();
    while stats.received < count {
        line.clear();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => {
                stats.eof = true;
                permits.close();
                break;
            }
            Ok(_) => {}
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let answer = match check(&line, shape) {
            Checked::ServerMessage => continue,
            answer => answer,
        };
        let now = Instant::now();
        stats.received += 1;
        permits.add_permits(1);
        match answer {
            Checked::Echo(id) => match pending.lock().unwrap_or_else(|e| e.into_inner()).remove(&id) {
                Some(sent) => stats.latencies_us.push(now.duration_since(sent).as_micros() as u64),
                None => stats.error(format!("answer to unknown or repeated id {id}")),
            },
            Checked::Bad(id, why) => {
                if let Some(id) = id {
                    pending.lock().unwrap_or_else(|e| e.into_inner()).remove(&id);
                }
                stats.error(format!("{why}: {}", snippet(&line)));
            }
            Checked::ServerMessage => {}
        }
        stats.elapsed = now.duration_since(start);
    }
    stats.errors += pending.lock().unwrap_or_else(|e| e.into_inner()).len() as u64;
    (reader, stats)
}

/// The first 200 characters of a line, for error messages.
pub(crate) fn snippet(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let text = text.trim_end();
    match text.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// The verdict on one line from the server.
#[derive(Debug, PartialEq)]
pub(crate) enum Checked {
    /// A request or notification from the server: not an answer.
    ServerMessage,
    /// The expected echo for this id.
    Echo(u64),
    /// Anything else, with the id when one could be read.
    Bad(Option<u64>, &'static str),
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default)]
    id: Option<serde_json::Value>,
    #[serde(default, borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    result: Option<EchoResult<'a>>,
}

#[derive(Deserialize)]
struct EchoResult<'a> {
    #[serde(borrow)]
    content: Vec<Block<'a>>,
    #[serde(default, rename = "isError")]
    is_error: Option<bool>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default, borrow)]
    text: Option<Cow<'a, str>>,
}

/// Checks one line against the answer `tools/call echo` must give.
pub(crate) fn check(line: &[u8], shape: Shape) -> Checked {
    let Ok(envelope) = serde_json::from_slice::<Envelope<'_>>(line) else {
        return Checked::Bad(None, "not a JSON-RPC response (or a malformed result)");
    };
    if envelope.method.is_some() {
        return Checked::ServerMessage;
    }
    let Some(id) = envelope.id.as_ref().and_then(serde_json::Value::as_u64) else {
        return Checked::Bad(None, "response without a numeric id");
    };
    let Some(result) = envelope.result else {
        return Checked::Bad(Some(id), "error response");
    };
    match result.content.as_slice() {
        _ if result.is_error == Some(true) => Checked::Bad(Some(id), "tool error"),
        [Block { kind, text: Some(text) }] if kind == "text" && *text == shape.text(id) => Checked::Echo(id),
        _ => Checked::Bad(Some(id), "result is not one text block with the text sent"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::BufReader;

    const MODERN: Shape = Shape { modern: true, text_bytes: 8 };

    #[test]
    fn lines_are_json_with_unique_padded_text() {
        let line = MODERN.line(42);
        assert_eq!(line.last(), Some(&b'\n'));
        let value: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(value["params"]["arguments"]["text"], "42xxxxxx");
        assert_eq!(value["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
        let legacy: serde_json::Value =
            serde_json::from_slice(&Shape { modern: false, text_bytes: 1 }.line(123)).unwrap();
        assert_eq!(legacy["params"]["arguments"]["text"], "123");
        assert!(legacy["params"].get("_meta").is_none());
    }

    #[test]
    fn answers_are_checked() {
        let ok = br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"7xxxxxxx"}]}}"#;
        assert_eq!(check(ok, MODERN), Checked::Echo(7));
        let wrong = br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"8xxxxxxx"}]}}"#;
        assert!(matches!(check(wrong, MODERN), Checked::Bad(Some(7), _)));
        let error = br#"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"no"}}"#;
        assert!(matches!(check(error, MODERN), Checked::Bad(Some(7), _)));
        let note = br#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#;
        assert_eq!(check(note, MODERN), Checked::ServerMessage);
        assert!(matches!(check(b"nope", MODERN), Checked::Bad(None, _)));
    }

    /// A phase against an in-memory echo server that answers out of order.
    #[tokio::test]
    async fn a_phase_matches_answers_by_id() {
        let (client, server) = tokio::io::duplex(1 << 16);
        let (server_read, mut server_write) = tokio::io::split(server);
        tokio::spawn(async move {
            let mut lines = BufReader::new(server_read).lines();
            let mut held = Vec::new();
            while let Ok(Some(line)) = lines.next_line().await {
                let request: serde_json::Value = serde_json::from_str(&line).unwrap();
                let answer = serde_json::json!({"jsonrpc": "2.0", "id": request["id"], "result": {
                    "content": [{"type": "text", "text": request["params"]["arguments"]["text"]}]}});
                held.push(answer.to_string() + "\n");
                if held.len() == 2 {
                    for line in held.drain(..).rev() {
                        server_write.write_all(line.as_bytes()).await.unwrap();
                    }
                }
            }
        });
        let (read, write) = tokio::io::split(client);
        let (_, _, stats) = run_phase(write, BufReader::new(read), MODERN, 1..11, 2).await.unwrap();
        assert_eq!((stats.received, stats.errors, stats.latencies_us.len()), (10, 0, 10));
        assert!(!stats.eof);
    }
}
