//! The stdio leg: each client owns one server process and keeps a few calls in flight on it,
//! reusing a small set of ids, sending some ids twice while the first is in flight (the second
//! must be refused with `-32600` and the first answered), cancelling some calls, and — on the
//! disconnecting clients — closing its pipes in the middle of a large answer, then starting a
//! new server.

use std::collections::{HashMap, VecDeque};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::Plan;
use crate::expect::{Tally, Verdict, call, cancel, judge, token};

/// How long a client waits for the next line before it counts what is pending as lost.
const STALL: Duration = Duration::from_secs(30);

struct Server {
    child: Child,
    writer: BufWriter<ChildStdin>,
    reader: BufReader<ChildStdout>,
}

impl Server {
    async fn start(program: &str, modern: bool) -> Result<Server, String> {
        let mut child = Command::new(program)
            .args(["serve", "--stdio"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start {program}: {e}"))?;
        let writer = BufWriter::new(child.stdin.take().expect("piped"));
        let reader = BufReader::new(child.stdout.take().expect("piped"));
        let mut server = Server { child, writer, reader };
        if !modern {
            server.send(r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcp-soak","version":"1"}}}"#).await?;
            server.flush().await?;
            let answer = server.next().await?.ok_or("the server closed its output during initialize")?;
            if answer.get("result").is_none() {
                return Err(format!("initialize failed: {answer}"));
            }
            server.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await?;
        }
        Ok(server)
    }

    fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    async fn send(&mut self, line: &str) -> Result<(), String> {
        self.writer.write_all(line.as_bytes()).await.map_err(|e| format!("write: {e}"))?;
        self.writer.write_all(b"\n").await.map_err(|e| format!("write: {e}"))
    }

    async fn flush(&mut self) -> Result<(), String> {
        self.writer.flush().await.map_err(|e| format!("flush: {e}"))
    }

    /// The next message, `None` at end of output.
    async fn next(&mut self) -> Result<Option<Value>, String> {
        let mut line = String::new();
        let read = tokio::time::timeout(STALL, self.reader.read_line(&mut line))
            .await
            .map_err(|_| format!("no message for {} s", STALL.as_secs()))?
            .map_err(|e| format!("read: {e}"))?;
        if read == 0 {
            return Ok(None);
        }
        serde_json::from_str(&line)
            .map(Some)
            .map_err(|e| format!("not JSON ({e}): {}", &line[..line.len().min(80)]))
    }

    /// Sends a call for a large answer, reads the first bytes of it, then closes both pipes;
    /// the server must exit by itself.
    async fn disconnect_mid_answer(mut self, text_len: usize) -> Result<(), String> {
        let text = "d".repeat(text_len);
        self.send(&call(r#""disconnect""#, &text, true)).await?;
        self.flush().await?;
        let _ = tokio::time::timeout(STALL, self.reader.fill_buf()).await;
        let Server { mut child, writer, reader } = self;
        drop(writer);
        drop(reader);
        match tokio::time::timeout(Duration::from_secs(10), child.wait()).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(format!("waiting for the server: {e}")),
            Err(_) => {
                let _ = child.kill().await;
                Err("the server did not exit within 10 s of its pipes closing".to_owned())
            }
        }
    }

    async fn close(self) {
        let Server { mut child, writer, reader } = self;
        drop(writer);
        drop(reader);
        if tokio::time::timeout(Duration::from_secs(10), child.wait()).await.is_err() {
            let _ = child.kill().await;
        }
    }
}

/// What a call in flight is waiting for.
struct Pending {
    /// The call's own text, until it is answered.
    original: Option<String>,
    /// A deliberate duplicate's text, until it is refused (`-32600`) or — when it reached the
    /// server after the original had finished — answered as a call of its own.
    twin: Option<String>,
    /// Cancelled: an answer is welcome but not due.
    cancelled: bool,
}

/// Runs one client; `pids` receives the pid of its server when it is long-lived (for RSS).
pub(crate) async fn client(
    index: usize,
    plan: Arc<Plan>,
    progress: Arc<AtomicU64>,
    pids: Arc<std::sync::Mutex<Vec<u32>>>,
    finished: Arc<tokio::sync::Barrier>,
    sampled: Arc<tokio::sync::Barrier>,
) -> Tally {
    let mut tally = Tally::default();
    let disconnecting = plan.disconnect_every > 0 && index % 8 == 7;
    let mut server = match Server::start(&plan.program, plan.modern).await {
        Ok(s) => Some(s),
        Err(e) => {
            tally.problem(format!("client {index}: {e}"));
            tally.lost += plan.calls;
            None
        }
    };
    if let (Some(s), false) = (&server, disconnecting) {
        pids.lock().unwrap().extend(s.pid());
    }
    if let Some(s) = server.take() {
        server = drive(index, s, &plan, disconnecting, &progress, &mut tally).await;
    }
    finished.wait().await;
    sampled.wait().await;
    if let Some(s) = server {
        s.close().await;
    }
    tally
}

async fn drive(
    index: usize,
    mut server: Server,
    plan: &Plan,
    disconnecting: bool,
    progress: &AtomicU64,
    tally: &mut Tally,
) -> Option<Server> {
    let mut free: VecDeque<u64> = (1..=8).collect();
    let mut pending: HashMap<String, Pending> = HashMap::new();
    let mut due_calls = 0usize;
    let mut seq = 0u64;
    let mut next_disconnect = if disconnecting { plan.disconnect_every / 2 } else { u64::MAX };
    loop {
        if seq >= next_disconnect && due_calls == 0 && seq < plan.calls {
            next_disconnect += plan.disconnect_every;
            pending.clear();
            if let Err(e) = server.disconnect_mid_answer(plan.disconnect_bytes).await {
                tally.failed += 1;
                tally.problem(format!("client {index}: {e}"));
            }
            tally.disconnects += 1;
            seq += 1;
            server = match Server::start(&plan.program, plan.modern).await {
                Ok(s) => s,
                Err(e) => {
                    tally.problem(format!("client {index}: restart: {e}"));
                    tally.lost += plan.calls - seq;
                    return None;
                }
            };
        }
        while due_calls < plan.depth && seq < plan.calls && seq < next_disconnect {
            seq += 1;
            progress.fetch_add(1, Ordering::Relaxed);
            let text = token(index, seq, plan.text_bytes);
            if seq % 53 == 0 {
                let id = format!("\"x{seq}\"");
                let sent = server
                    .send(&call(&id, &text, plan.modern))
                    .await
                    .and(server.send(&cancel(&id, plan.modern)).await);
                if let Err(e) = sent {
                    tally.problem(format!("client {index}: {e}"));
                }
                tally.cancelled += 1;
                pending.insert(id, Pending { original: Some(text), twin: None, cancelled: true });
                continue;
            }
            let number = free.pop_front().expect("fewer calls due than ids");
            let id = number.to_string();
            let mut entry = Pending { original: Some(text.clone()), twin: None, cancelled: false };
            let mut sent = server.send(&call(&id, &text, plan.modern)).await;
            if seq % 101 == 0 {
                let twin = token(index, seq + 1_000_000_000, plan.text_bytes);
                sent = sent.and(server.send(&call(&id, &twin, plan.modern)).await);
                entry.twin = Some(twin);
            }
            if let Err(e) = sent {
                tally.problem(format!("client {index}: {e}"));
            }
            pending.insert(id, entry);
            due_calls += 1;
        }
        if due_calls == 0 && seq >= plan.calls {
            // Cancelled calls may still be answered; none is due.
            return Some(server);
        }
        if let Err(e) = server.flush().await {
            tally.problem(format!("client {index}: {e}"));
        }
        let message = match server.next().await {
            Ok(Some(m)) => m,
            Ok(None) | Err(_) => {
                tally.lost += due_calls as u64 + (plan.calls - seq);
                tally.problem(format!(
                    "client {index}: the server stopped answering with {due_calls} calls due"
                ));
                return None;
            }
        };
        let Some(id) = message.get("id").map(Value::to_string) else { continue };
        let Some(entry) = pending.get_mut(&id) else {
            tally.cross_wired += 1;
            tally.problem(format!("client {index}: an answer under id {id}, which nothing awaits"));
            continue;
        };
        let id_value: Value = serde_json::from_str(&id).expect("an id we wrote");
        let echoes = |text: &Option<String>| {
            text.as_deref().is_some_and(|t| judge(&message, &id_value, t) == Verdict::Good)
        };
        if echoes(&entry.original) {
            entry.original = None;
            if entry.cancelled {
                tally.cancelled_answered += 1;
            } else {
                tally.good += 1;
            }
        } else if echoes(&entry.twin) {
            entry.twin = None;
            tally.duplicates_run += 1;
        } else {
            match judge(&message, &id_value, "") {
                Verdict::Error(-32600) if entry.twin.is_some() => {
                    entry.twin = None;
                    tally.duplicates_refused += 1;
                }
                Verdict::Error(_) if entry.cancelled => entry.original = None,
                Verdict::Error(code) => {
                    tally.failed += 1;
                    tally.problem(format!("client {index}: error {code} under id {id}: {message}"));
                    entry.original = None;
                }
                _ => {
                    tally.cross_wired += 1;
                    tally.problem(format!(
                        "client {index}: id {id} answered with another call's answer: {message}"
                    ));
                }
            }
        }
        if entry.cancelled {
            pending.remove(&id);
            continue;
        }
        if entry.original.is_none() && entry.twin.is_none() {
            pending.remove(&id);
            free.push_back(id.parse().expect("numeric id"));
            due_calls -= 1;
        }
    }
}
