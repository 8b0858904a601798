//! Running the transport standalone: an accept loop over hyper with the connection limit, the
//! header read timeout, the header limits and the send timeout of docs/DECISIONS.md.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use mcp_server::Server;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;

use crate::send_timeout::SendTimeout;
use crate::{HttpConfig, McpHttp};

/// A bound listener, whose address (with the port the OS chose for port 0) is known before
/// serving starts.
#[derive(Debug)]
pub struct Bound {
    listener: TcpListener,
    addr: SocketAddr,
}

impl Bound {
    /// The address actually bound.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }
}

/// Binds `addr` (use `127.0.0.1:0` for any free loopback port).
pub async fn bind(addr: SocketAddr) -> std::io::Result<Bound> {
    let listener = TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    Ok(Bound { listener, addr })
}

/// Serves `server` on a bound listener until the process ends. Without an explicit config,
/// the Host/Origin allowlists are derived from the bound address.
pub async fn serve(server: Server, bound: Bound, config: Option<HttpConfig>) -> std::io::Result<()> {
    serve_until(server, bound, config, std::future::pending(), Duration::ZERO).await
}

/// Serves `server` until `shutdown` resolves, then shuts down gracefully: no new connections
/// are accepted, idle keep-alive connections are closed, and requests in flight get up to
/// `grace` to finish (long-lived streams — a legacy GET stream, `subscriptions/listen`, HTTP+SSE —
/// are cut when it expires). Returns once every connection is gone or `grace` has passed.
pub async fn serve_until(
    server: Server,
    bound: Bound,
    config: Option<HttpConfig>,
    shutdown: impl Future<Output = ()>,
    grace: Duration,
) -> std::io::Result<()> {
    let config = config.unwrap_or_else(|| HttpConfig::for_bind(bound.addr));
    let limits = ConnectionLimits::of(&config);
    let router = McpHttp::new(server, config).router();
    serve_app_until(router, bound, limits, shutdown, grace).await
}

/// The connection-level settings of an [`HttpConfig`] (header timeout and limits, send
/// timeout, connection count), for [`serve_app_until`].
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    header_timeout: Duration,
    max_header_bytes: usize,
    max_headers: usize,
    send_timeout: Duration,
    max_connections: usize,
}

impl ConnectionLimits {
    /// The connection-level settings of `config`.
    pub fn of(config: &HttpConfig) -> Self {
        ConnectionLimits {
            header_timeout: config.header_read_timeout,
            max_header_bytes: config.max_header_bytes,
            max_headers: config.max_headers,
            send_timeout: config.send_timeout,
            max_connections: config.max_connections,
        }
    }
}

/// Like [`serve_until`], for an application that mounts the MCP endpoint beside routes of
/// its own (`McpHttp::router()` merged into a bigger [`axum::Router`]): the same connection
/// handling, limits and graceful shutdown.
pub async fn serve_app_until(
    router: axum::Router,
    bound: Bound,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()>,
    grace: Duration,
) -> std::io::Result<()> {
    let ConnectionLimits { header_timeout, max_header_bytes, max_headers, send_timeout, max_connections } =
        limits;
    let connections = Arc::new(Semaphore::new(max_connections.max(1)));
    // Every connection task holds a receiver: `true` asks it to finish gracefully, and the
    // channel closes (for `closed()` below) when the last task has ended.
    let (stop, stopping) = watch::channel(false);
    let mut tasks = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = bound.listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Running out of file descriptors and the like are transient: keep serving.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
            // Reap finished connection tasks as they end, so the set stays small.
            Some(_) = tasks.join_next(), if !tasks.is_empty() => continue,
        };
        let permit = connections.clone().try_acquire_owned().ok();
        let router = router.clone();
        let stopping = stopping.clone();
        tasks.spawn(async move {
            let io = TokioIo::new(SendTimeout::new(stream, send_timeout));
            let mut builder = hyper::server::conn::http1::Builder::new();
            // Over the header limits hyper answers 431 itself and closes the connection.
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout)
                .max_header_size(max_header_bytes)
                .max_headers(max_headers)
                .keep_alive(true);
            let result = match permit {
                Some(permit) => {
                    // Every request knows its peer (per-caller budgets without authorization).
                    let service = TowerToHyperService::new(tower::ServiceExt::map_request(
                        router,
                        move |mut request: http::Request<hyper::body::Incoming>| {
                            request.extensions_mut().insert(axum::extract::ConnectInfo(peer));
                            request
                        },
                    ));
                    let r = until_stopped(builder.serve_connection(io, service), stopping).await;
                    drop(permit);
                    r
                }
                None => {
                    let service =
                        hyper::service::service_fn(|_req| async { Ok::<_, Infallible>(too_many()) });
                    builder.keep_alive(false).serve_connection(io, service).await
                }
            };
            if let Err(e) = result {
                tracing::debug!(error = %e, "connection ended with an error");
            }
        });
    }
    drop(bound);
    let _ = stop.send(true);
    drop(stopping);
    let drained = async { while tasks.join_next().await.is_some() {} };
    if tokio::time::timeout(grace, drained).await.is_err() {
        tracing::info!(open = tasks.len(), "grace period over: closing the remaining connections");
        tasks.abort_all();
    }
    Ok(())
}

/// Drives one connection; when asked to stop, lets it finish its request in flight (hyper's
/// graceful shutdown closes it after the current response, or at once when idle).
async fn until_stopped<I, S>(
    conn: hyper::server::conn::http1::Connection<I, S>,
    mut stopping: watch::Receiver<bool>,
) -> hyper::Result<()>
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + 'static,
    S: hyper::service::HttpService<hyper::body::Incoming>,
    S::ResBody: 'static,
    <S::ResBody as hyper::body::Body>::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    tokio::pin!(conn);
    tokio::select! {
        result = conn.as_mut() => return result,
        _ = stopping.wait_for(|stop| *stop) => {}
    }
    conn.as_mut().graceful_shutdown();
    conn.await
}

/// The answer over the connection limit: 503 with Retry-After, and the connection closes.
fn too_many() -> hyper::Response<http_body_util::Full<bytes::Bytes>> {
    let mut response =
        hyper::Response::new(http_body_util::Full::new(bytes::Bytes::from_static(b"too many connections")));
    *response.status_mut() = http::StatusCode::SERVICE_UNAVAILABLE;
    response.headers_mut().insert(http::header::RETRY_AFTER, http::HeaderValue::from_static("1"));
    response.headers_mut().insert(http::header::CONNECTION, http::HeaderValue::from_static("close"));
    response
}
