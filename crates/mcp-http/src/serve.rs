//! Running the transport standalone: an accept loop over hyper with the connection limit and
//! the header read timeout of DECISIONS.md.

use std::net::SocketAddr;
use std::sync::Arc;

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use mcp_server::Server;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

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
    let config = config.unwrap_or_else(|| HttpConfig::for_bind(bound.addr));
    let header_timeout = config.header_read_timeout;
    let connections = Arc::new(Semaphore::new(config.max_connections.max(1)));
    let router = McpHttp::new(server, config).router();
    loop {
        let (stream, _) = match bound.listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                // Running out of file descriptors and the like are transient: keep serving.
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        let permit = connections.clone().try_acquire_owned().ok();
        let router = router.clone();
        tokio::spawn(async move {
            let io = TokioIo::new(stream);
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder.timer(TokioTimer::new()).header_read_timeout(header_timeout).keep_alive(true);
            let result = match permit {
                Some(permit) => {
                    let service = TowerToHyperService::new(router);
                    let r = builder.serve_connection(io, service).await;
                    drop(permit);
                    r
                }
                None => {
                    // Over the connection limit: answer 503 with Retry-After and close.
                    let service = hyper::service::service_fn(|_req| async {
                        let mut response = hyper::Response::new(http_body_util::Full::new(
                            bytes::Bytes::from_static(b"too many connections"),
                        ));
                        *response.status_mut() = http::StatusCode::SERVICE_UNAVAILABLE;
                        response
                            .headers_mut()
                            .insert(http::header::RETRY_AFTER, http::HeaderValue::from_static("1"));
                        response
                            .headers_mut()
                            .insert(http::header::CONNECTION, http::HeaderValue::from_static("close"));
                        Ok::<_, std::convert::Infallible>(response)
                    });
                    builder.keep_alive(false).serve_connection(io, service).await
                }
            };
            if let Err(e) = result {
                tracing::debug!(error = %e, "connection ended with an error");
            }
        });
    }
}
