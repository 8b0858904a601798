//! Test servers: our own (`mcp-http`) for realistic exchanges, and a small raw axum server whose
//! every answer the test scripts and whose every request it records.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use http::{HeaderMap, Method, StatusCode, Uri};
use mcp_client::transport::{Inbound, InboundReceiver};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// One request the raw server received.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub(crate) method: Method,
    pub(crate) path: String,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Bytes,
    pub(crate) at: Instant,
}

impl Seen {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(|v| v.to_str().unwrap())
    }

    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }

    /// The JSON-RPC method of a POSTed message.
    pub(crate) fn rpc_method(&self) -> Option<String> {
        serde_json::from_slice::<Value>(&self.body).ok()?.get("method")?.as_str().map(str::to_owned)
    }
}

/// A running server, stopped when dropped.
pub(crate) struct TestServer {
    pub(crate) addr: SocketAddr,
    pub(crate) log: Arc<Mutex<Vec<Seen>>>,
    task: JoinHandle<()>,
}

impl TestServer {
    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub(crate) fn requests(&self) -> Vec<Seen> {
        self.log.lock().unwrap().clone()
    }

    /// Waits until a request matching `pred` was received.
    pub(crate) async fn wait_for(&self, what: &str, pred: impl Fn(&Seen) -> bool) -> Seen {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(seen) = self.requests().into_iter().find(|s| pred(s)) {
                return seen;
            }
            assert!(Instant::now() < deadline, "the server never saw {what}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A raw server answering every request with `handler`.
pub(crate) async fn raw_server<F>(handler: F) -> TestServer
where
    F: Fn(&Seen) -> Response + Clone + Send + Sync + 'static,
{
    let log: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let recorder = log.clone();
    let app =
        axum::Router::new().fallback(move |method: Method, uri: Uri, headers: HeaderMap, body: Bytes| {
            let log = recorder.clone();
            let handler = handler.clone();
            async move {
                let seen = Seen { method, path: uri.path().to_owned(), headers, body, at: Instant::now() };
                log.lock().unwrap().push(seen.clone());
                handler(&seen)
            }
        });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    TestServer { addr, log, task }
}

/// Our own server (`mcp-http`), with the tools the tests use.
pub(crate) async fn our_server(
    configure: impl FnOnce(&mut mcp_http::HttpConfig),
) -> (TestServer, mcp_server::Server) {
    use mcp_server::{Args, Progress, Tools};

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct EchoArgs {
        text: String,
    }
    async fn echo(Args(EchoArgs { text }): Args<EchoArgs>) -> String {
        text
    }
    async fn progress(progress: Progress) -> &'static str {
        for step in [1.0, 2.0] {
            progress.report(step, Some(2.0), None).await;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        "done"
    }
    async fn polled(stream: mcp_server::ResponseStream) -> &'static str {
        stream.close();
        tokio::time::sleep(Duration::from_millis(100)).await;
        "polled"
    }

    let tools = Tools::new()
        .add("echo", "Echo", echo)
        .add("progress", "Progress", progress)
        .add("polled", "Polled", polled);
    let server = mcp_server::Server::builder("client-test", "1").tools(tools).build().unwrap();
    let bound = mcp_http::bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = bound.local_addr();
    let mut config = mcp_http::HttpConfig::for_bind(addr);
    configure(&mut config);
    let served = server.clone();
    let task = tokio::spawn(async move {
        let _ = mcp_http::serve(served, bound, Some(config)).await;
    });
    (TestServer { addr, log: Arc::default(), task }, server)
}

/// A response body fed by a channel; dropping the body (the client went away) makes the
/// sender fail.
struct ChannelBody(mpsc::Receiver<Bytes>);

impl futures_core::Stream for ChannelBody {
    type Item = Result<Bytes, Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0.poll_recv(cx).map(|item| item.map(Ok))
    }
}

/// A streamed answer of `content_type`; the test writes its body through the sender.
pub(crate) fn streamed(content_type: &str) -> (mpsc::Sender<Bytes>, Response) {
    let (tx, rx) = mpsc::channel(1);
    let response = Response::builder()
        .header("content-type", content_type)
        .body(Body::from_stream(ChannelBody(rx)))
        .unwrap();
    (tx, response)
}

/// An SSE answer that sends `chunks` (each after its delay) and then ends.
pub(crate) fn sse_script(chunks: Vec<(Duration, String)>) -> Response {
    let (tx, response) = streamed("text/event-stream");
    tokio::spawn(async move {
        for (delay, chunk) in chunks {
            tokio::time::sleep(delay).await;
            if tx.send(Bytes::from(chunk)).await.is_err() {
                return;
            }
        }
    });
    response
}

/// An SSE answer that sends `first`, then keep-alive comments until the client goes away;
/// `gone` is told when it does.
pub(crate) fn sse_until_disconnect(first: String, gone: mpsc::UnboundedSender<Instant>) -> Response {
    let (tx, response) = streamed("text/event-stream");
    tokio::spawn(async move {
        if tx.send(Bytes::from(first)).await.is_ok() {
            while tx.send(Bytes::from_static(b": ping\n\n")).await.is_ok() {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        let _ = gone.send(Instant::now());
    });
    response
}

pub(crate) fn json_answer(status: u16, headers: &[(&str, &str)], body: &str) -> Response {
    let mut builder = Response::builder().status(status).header("content-type", "application/json");
    for (k, v) in headers {
        builder = builder.header(*k, *v);
    }
    builder.body(Body::from(body.to_owned())).unwrap()
}

pub(crate) fn status(code: u16) -> Response {
    Response::builder().status(StatusCode::from_u16(code).unwrap()).body(Body::empty()).unwrap()
}

/// The next thing the transport delivered (10 s at most).
pub(crate) async fn next(rx: &mut InboundReceiver) -> Inbound {
    tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("nothing arrived within 10 s")
        .expect("the inbound channel closed")
}

/// The next delivery, which must be a message (on its own, or on a request's stream).
pub(crate) async fn next_message(rx: &mut InboundReceiver) -> Value {
    match next(rx).await {
        Inbound::Message(bytes) | Inbound::Related { message: bytes, .. } => {
            serde_json::from_slice(&bytes).unwrap()
        }
        other => panic!("expected a message, got {other:?}"),
    }
}

/// The next delivery, which must be a message that arrived on the stream of request `id`.
pub(crate) async fn next_related(rx: &mut InboundReceiver, id: i64) -> Value {
    match next(rx).await {
        Inbound::Related { message, request } => {
            assert_eq!(request, mcp_types::RequestId::Number(id), "the request whose stream carried it");
            serde_json::from_slice(&message).unwrap()
        }
        other => panic!("expected a message on the stream of request {id}, got {other:?}"),
    }
}

/// Asserts nothing more arrives within `wait`.
pub(crate) async fn assert_quiet(rx: &mut InboundReceiver, wait: Duration) {
    if let Ok(Some(item)) = tokio::time::timeout(wait, rx.recv()).await {
        panic!("unexpected delivery: {item:?}");
    }
}
