//! `mcpkit replay FILE --http ADDR`: the recording served over Streamable HTTP. Each POST is
//! one JSON-RPC message; a request is answered with the recorded answer as `application/json`,
//! a notification or an answer with `202`. There is no GET stream and no session: a replayed
//! server sends nothing of its own. A `Host` other than the address it listens on (or
//! `localhost` with its port) is refused, as is a cross-site `Origin` (DNS rebinding).

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use anyhow::{Context, anyhow};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::{Entry, Replayer, unreadable};

/// The largest request body read (the stdio line limit).
const MAX_BODY: usize = mcp_stdio::DEFAULT_MAX_LINE;

struct Shared {
    replayer: Mutex<Replayer>,
    /// The `Host` values accepted.
    hosts: Vec<String>,
}

pub(super) async fn serve(addr: &str, entries: &[Entry]) -> anyhow::Result<ExitCode> {
    let spec = match addr.strip_prefix(':').unwrap_or(addr).parse::<u16>() {
        Ok(port) => format!("127.0.0.1:{port}"),
        Err(_) => addr.to_owned(),
    };
    let listener =
        tokio::net::TcpListener::bind(&spec).await.with_context(|| format!("cannot listen on {addr}"))?;
    let bound: SocketAddr = listener.local_addr()?;
    let mut hosts = vec![bound.to_string(), format!("localhost:{}", bound.port())];
    if bound.ip().is_unspecified() {
        hosts.push(format!("127.0.0.1:{}", bound.port()));
    }
    let shared = Arc::new(Shared { replayer: Mutex::new(Replayer::new(entries)), hosts });
    let app = axum::Router::new()
        .route("/mcp", axum::routing::any(endpoint))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_BODY))
        .with_state(shared);
    eprintln!("listening on http://{bound}/mcp");
    axum::serve(listener, app).await.map_err(|e| anyhow!("serving: {e}"))?;
    Ok(ExitCode::SUCCESS)
}

async fn endpoint(
    State(shared): State<Arc<Shared>>,
    method: axum::http::Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or_default();
    if !shared.hosts.iter().any(|h| h.eq_ignore_ascii_case(host)) {
        return (StatusCode::FORBIDDEN, "Host not allowed").into_response();
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or_default();
        if !shared.hosts.iter().any(|h| origin.eq_ignore_ascii_case(&format!("http://{h}"))) {
            return (StatusCode::FORBIDDEN, "Origin not allowed").into_response();
        }
    }
    if method != axum::http::Method::POST {
        // No GET stream (nothing of the server's own to send), no session to DELETE.
        return (StatusCode::METHOD_NOT_ALLOWED, [(header::ALLOW, "POST")]).into_response();
    }
    let answer = match serde_json::from_slice::<Value>(&body) {
        Ok(message) => shared.replayer.lock().unwrap_or_else(|p| p.into_inner()).answer(&message),
        Err(_) => Some(unreadable(-32700, "Parse error")),
    };
    match answer {
        Some(answer) => ([(header::CONTENT_TYPE, "application/json")], answer.to_string()).into_response(),
        None => StatusCode::ACCEPTED.into_response(),
    }
}
