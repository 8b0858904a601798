//! The Streamable HTTP leg: one server, each client on its own keep-alive connection with one
//! call at a time, every client using the same few ids (so ids collide across clients all the
//! time: an answer must belong to its own exchange), some calls cancelled (2026-07-28: the
//! connection is dropped mid-call; legacy: `notifications/cancelled` on a second connection),
//! and some connections dropped in the middle of a large answer.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpStream;

use crate::Plan;
use crate::expect::{Tally, Verdict, call, cancel, judge, sse_messages, token};

/// How long one exchange may take before it counts as lost.
const STALL: Duration = Duration::from_secs(30);

type Connection = SendRequest<Full<Bytes>>;

async fn connect(addr: std::net::SocketAddr) -> Result<Connection, String> {
    let stream = TcpStream::connect(addr).await.map_err(|e| format!("connect: {e}"))?;
    stream.set_nodelay(true).map_err(|e| format!("nodelay: {e}"))?;
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("handshake: {e}"))?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(sender)
}

/// One client's view of the endpoint: its address and, on legacy, its session.
struct Endpoint {
    addr: std::net::SocketAddr,
    session: Option<String>,
}

impl Endpoint {
    fn post(&self, body: String, method: &str) -> Request<Full<Bytes>> {
        let mut request = Request::post("/mcp")
            .header("host", self.addr.to_string())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        request = match &self.session {
            Some(session) => {
                request.header("mcp-session-id", session).header("mcp-protocol-version", "2025-11-25")
            }
            None => {
                let r = request.header("mcp-protocol-version", "2026-07-28").header("mcp-method", method);
                if method == "tools/call" { r.header("mcp-name", "echo") } else { r }
            }
        };
        request.body(Full::new(Bytes::from(body))).expect("a valid request")
    }
}

/// The JSON-RPC messages of an answer (one JSON body, or the events of an SSE stream).
async fn messages(response: Response<hyper::body::Incoming>) -> Result<(StatusCode, Vec<Value>), String> {
    let status = response.status();
    let sse = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    let body = response.into_body().collect().await.map_err(|e| format!("body: {e}"))?.to_bytes();
    let text = String::from_utf8_lossy(&body);
    let messages = if sse {
        sse_messages(&text)
    } else if text.trim().is_empty() {
        Vec::new()
    } else {
        vec![
            serde_json::from_str(&text)
                .map_err(|e| format!("not JSON ({e}): {}", &text[..text.len().min(80)]))?,
        ]
    };
    Ok((status, messages))
}

async fn exchange(
    connection: &mut Connection,
    request: Request<Full<Bytes>>,
) -> Result<(StatusCode, Vec<Value>), String> {
    let work = async {
        connection.ready().await.map_err(|e| format!("connection: {e}"))?;
        let response = connection.send_request(request).await.map_err(|e| format!("request: {e}"))?;
        messages(response).await
    };
    tokio::time::timeout(STALL, work).await.map_err(|_| format!("no answer within {} s", STALL.as_secs()))?
}

async fn open_session(addr: std::net::SocketAddr, connection: &mut Connection) -> Result<String, String> {
    let endpoint = Endpoint { addr, session: None };
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcp-soak","version":"1"}}}"#;
    let mut request = endpoint.post(init.to_owned(), "initialize");
    request.headers_mut().remove("mcp-protocol-version");
    request.headers_mut().remove("mcp-method");
    connection.ready().await.map_err(|e| format!("connection: {e}"))?;
    let response = connection.send_request(request).await.map_err(|e| format!("initialize: {e}"))?;
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .ok_or("initialize answered without a session id")?;
    messages(response).await?;
    let endpoint = Endpoint { addr, session: Some(session.clone()) };
    let initialized =
        endpoint.post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(), "");
    let (status, _) = exchange(connection, initialized).await?;
    if status != StatusCode::ACCEPTED {
        return Err(format!("notifications/initialized answered {status}"));
    }
    Ok(session)
}

/// Runs one client against the server at `addr`.
pub(crate) async fn client(
    index: usize,
    addr: std::net::SocketAddr,
    plan: Arc<Plan>,
    progress: Arc<AtomicU64>,
) -> Tally {
    let mut tally = Tally::default();
    if let Err(e) = drive(index, addr, &plan, &progress, &mut tally).await {
        tally.problem(format!("client {index}: {e}"));
    }
    tally
}

async fn drive(
    index: usize,
    addr: std::net::SocketAddr,
    plan: &Plan,
    progress: &AtomicU64,
    tally: &mut Tally,
) -> Result<(), String> {
    let mut connection = connect(addr).await?;
    let session = if plan.modern { None } else { Some(open_session(addr, &mut connection).await?) };
    let endpoint = Endpoint { addr, session };
    let mut control = if plan.modern { None } else { Some(connect(addr).await?) };
    let mut seq = 0u64;
    while seq < plan.calls {
        seq += 1;
        progress.fetch_add(1, Ordering::Relaxed);
        let number = seq % 8 + 1;
        let id = Value::from(number);
        if plan.disconnect_every > 0 && seq % plan.disconnect_every == plan.disconnect_every / 2 {
            let text = "d".repeat(plan.disconnect_bytes);
            let request = endpoint.post(call(&number.to_string(), &text, plan.modern), "tools/call");
            connection.ready().await.map_err(|e| format!("connection: {e}"))?;
            if let Ok(Ok(response)) = tokio::time::timeout(STALL, connection.send_request(request)).await {
                let mut body = response.into_body();
                let _ = tokio::time::timeout(STALL, body.frame()).await;
            }
            tally.disconnects += 1;
            connection = connect(addr).await?;
            continue;
        }
        let text = token(index, seq, plan.text_bytes);
        let request = endpoint.post(call(&number.to_string(), &text, plan.modern), "tools/call");
        if seq % 53 == 0 {
            tally.cancelled += 1;
            if let Some(control) = control.as_mut() {
                // Legacy: cancel by notification while the call is in flight, then read its answer.
                connection.ready().await.map_err(|e| format!("connection: {e}"))?;
                let answer = connection.send_request(request);
                let notice = endpoint.post(cancel(&number.to_string(), false), "notifications/cancelled");
                let (answer, cancelled) = tokio::join!(answer, exchange(control, notice));
                if let Err(e) = cancelled {
                    tally.failed += 1;
                    tally.problem(format!("client {index}: cancelling: {e}"));
                }
                let answer = match answer {
                    Ok(response) => {
                        tokio::time::timeout(STALL, messages(response)).await.unwrap_or_else(|_| {
                            Err(format!("no end of the answer within {} s", STALL.as_secs()))
                        })
                    }
                    Err(e) => Err(format!("request: {e}")),
                };
                match answer {
                    Ok((_, messages)) => {
                        for message in messages.iter().filter(|m| m.get("id") == Some(&id)) {
                            match judge(message, &id, &text) {
                                Verdict::Good => tally.cancelled_answered += 1,
                                Verdict::Error(_) | Verdict::Other => {}
                                Verdict::CrossWired(got) => {
                                    tally.cross_wired += 1;
                                    tally.problem(format!(
                                        "client {index}: cancelled call {seq} answered with {got}"
                                    ));
                                }
                            }
                        }
                    }
                    Err(e) => {
                        tally.problem(format!("client {index}: cancelled call {seq}: {e}"));
                        connection = connect(addr).await?;
                    }
                }
            } else {
                // 2026-07-28: closing the exchange is the cancellation.
                connection.ready().await.map_err(|e| format!("connection: {e}"))?;
                let answer =
                    tokio::time::timeout(Duration::from_micros(300), connection.send_request(request)).await;
                if let Ok(Ok(response)) = answer {
                    if let Ok(Ok((_, messages))) =
                        tokio::time::timeout(Duration::from_micros(300), messages(response)).await
                    {
                        if messages.iter().any(|m| judge(m, &id, &text) == Verdict::Good) {
                            tally.cancelled_answered += 1;
                        }
                    }
                }
                connection = connect(addr).await?;
            }
            continue;
        }
        let mut outcome = exchange(&mut connection, request.clone_parts()).await;
        if matches!(&outcome, Ok((StatusCode::SERVICE_UNAVAILABLE, _))) {
            tally.busy += 1;
            tokio::time::sleep(Duration::from_millis(5)).await;
            outcome = exchange(&mut connection, request).await;
        }
        match outcome {
            Ok((StatusCode::OK, messages)) => {
                let verdicts: Vec<Verdict> = messages.iter().map(|m| judge(m, &id, &text)).collect();
                if verdicts.contains(&Verdict::Good) {
                    tally.good += 1;
                } else if let Some(Verdict::CrossWired(got)) =
                    verdicts.iter().find(|v| matches!(v, Verdict::CrossWired(_)))
                {
                    tally.cross_wired += 1;
                    tally.problem(format!("client {index}: call {seq} (id {number}) answered with {got}"));
                } else {
                    tally.lost += 1;
                    tally.problem(format!(
                        "client {index}: call {seq} got no answer of its own: {messages:?}"
                    ));
                }
            }
            Ok((status, messages)) => {
                tally.failed += 1;
                tally.problem(format!("client {index}: call {seq} answered {status}: {messages:?}"));
            }
            Err(e) => {
                tally.lost += 1;
                tally.problem(format!("client {index}: call {seq}: {e}"));
                connection = connect(addr).await?;
            }
        }
    }
    if let Some(session) = &endpoint.session {
        let delete = Request::delete("/mcp")
            .header("host", addr.to_string())
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-11-25")
            .body(Full::new(Bytes::new()))
            .expect("a valid request");
        let _ = exchange(control.as_mut().unwrap_or(&mut connection), delete).await;
    }
    Ok(())
}

/// A request that can be sent twice (for the one retry after a `503`).
trait CloneParts {
    fn clone_parts(&self) -> Self;
}

impl CloneParts for Request<Full<Bytes>> {
    fn clone_parts(&self) -> Self {
        let mut copy = Request::new(self.body().clone());
        *copy.method_mut() = self.method().clone();
        *copy.uri_mut() = self.uri().clone();
        *copy.headers_mut() = self.headers().clone();
        copy
    }
}
