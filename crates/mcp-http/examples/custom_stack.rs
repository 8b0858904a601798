//! A stack of your own around the MCP routes: the transport's checks as `tower` layers, in
//! the order you choose, with two of your own beside them — a request counter (a plain
//! `tower::Layer`) and an API key check (`axum::middleware::from_fn`).
//!
//! ```text
//! cargo run -p mcp-http --example custom_stack
//! curl -s http://127.0.0.1:3000/requests
//! curl -s -X POST http://127.0.0.1:3000/mcp -H 'x-api-key: let-me-in' \
//!   -H 'content-type: application/json' -H 'accept: application/json' \
//!   -H 'mcp-protocol-version: 2026-07-28' -H 'mcp-method: tools/list' \
//!   -d '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{
//!        "io.modelcontextprotocol/protocolVersion":"2026-07-28",
//!        "io.modelcontextprotocol/clientCapabilities":{}}}}'
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use mcp_http::{HttpConfig, McpHttp};
use mcp_server::{Args, Server, Tools};
use schemars::JsonSchema;
use serde::Deserialize;
use tower::{Layer, Service, ServiceBuilder};

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to send back.
    text: String,
}

async fn echo(Args(EchoArgs { text }): Args<EchoArgs>) -> String {
    text
}

/// Counts every request that reaches it: a layer of your own, with no allocation per request.
#[derive(Clone, Default)]
struct CountLayer(Arc<AtomicU64>);

impl<S> Layer<S> for CountLayer {
    type Service = Count<S>;

    fn layer(&self, inner: S) -> Count<S> {
        Count { inner, count: self.0.clone() }
    }
}

#[derive(Clone)]
struct Count<S> {
    inner: S,
    count: Arc<AtomicU64>,
}

impl<S, B> Service<http::Request<B>> for Count<S>
where
    S: Service<http::Request<B>>,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        self.count.fetch_add(1, Ordering::Relaxed);
        self.inner.call(request)
    }
}

/// Your own authentication: an API key in a header (instead of the transport's OAuth).
async fn api_key(request: Request, next: Next) -> Response {
    match request.headers().get("x-api-key") {
        Some(key) if key == "let-me-in" => next.run(request).await,
        _ => (StatusCode::UNAUTHORIZED, "x-api-key required").into_response(),
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::builder("custom-stack", "1.0.0")
        .tools(Tools::new().add("echo", "Echo the text", echo))
        .build()?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:3000").await?;
    let addr = listener.local_addr()?;
    let http = McpHttp::new(server, HttpConfig::for_bind(addr));

    let counter = CountLayer::default();
    // Outermost first: the request head, the DNS-rebinding guard, then the count (of requests
    // from allowed hosts), the API key, and admission (slots and bytes in flight, body size)
    // before the endpoint's own checks and the MCP dispatch.
    let stack = ServiceBuilder::new()
        .layer(http.head_layer())
        .layer(http.host_guard_layer())
        .layer(counter.clone())
        .layer(middleware::from_fn(api_key))
        .layer(http.limits_layer());
    let count = counter.0.clone();
    let app = http.routes().layer(stack).route(
        "/requests",
        axum::routing::get(move || async move { count.load(Ordering::Relaxed).to_string() }),
    );
    eprintln!("MCP at http://{addr}/mcp (x-api-key: let-me-in), request count at http://{addr}/requests");
    axum::serve(listener, app.into_make_service_with_connect_info::<std::net::SocketAddr>()).await?;
    Ok(())
}
