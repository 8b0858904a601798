//! Helpers of the library-level gateway tests: in-process upstream servers served over
//! Streamable HTTP on 127.0.0.1, a gateway in front of them served the same way, downstream
//! clients of either era, and bounded polling. Everything a test starts is stopped when its
//! guard drops, panicking or not.
#![allow(dead_code, unreachable_pub)]

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_client::transport::http::HttpConfig;
use mcp_client::{Client, ClientBuilder, EraCache, Handlers};
use mcp_gateway::config::{GatewayConfig, Settings, Transport, UpstreamConfig};
use mcp_gateway::{Gateway, UpstreamState, UpstreamStatus};
use mcp_server::{CancellationToken, Server};
use mcp_types::ProtocolVersion;
use tokio::task::JoinHandle;

/// The longest any condition is waited for: only a broken feature (or a hang) reaches it.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// The legacy revision the tests pin.
pub const LEGACY: &str = "2025-11-25";

/// Fails the test instead of hanging.
pub async fn bounded<T>(what: &str, f: impl Future<Output = T>) -> T {
    tokio::time::timeout(DEADLINE, f)
        .await
        .unwrap_or_else(|_| panic!("{what}: still waiting after {DEADLINE:?}"))
}

/// Polls `probe` every 50 ms until it gives `Some`, for at most `deadline`; panics with the
/// last thing seen (`describe`) otherwise.
pub async fn poll<T, F, Fut>(what: &str, deadline: Duration, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let until = tokio::time::Instant::now() + deadline;
    loop {
        match probe().await {
            Ok(value) => return value,
            Err(seen) if tokio::time::Instant::now() >= until => {
                panic!("{what}: not within {deadline:?}; last seen: {seen}")
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

/// A task aborted when the guard drops.
pub struct Task(pub JoinHandle<()>);

impl Drop for Task {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// An MCP server served over Streamable HTTP until [`Served::stop`] or drop.
pub struct Served {
    pub server: Server,
    pub addr: SocketAddr,
    stop: CancellationToken,
    task: Option<JoinHandle<()>>,
}

impl Served {
    /// The MCP endpoint.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// Stops serving: no new connections, open ones (streams included) cut at once.
    pub async fn stop(&mut self) {
        self.stop.cancel();
        if let Some(task) = self.task.take() {
            let _ = bounded("the server stopping", task).await;
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.stop.cancel();
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// Serves `server` on `addr` (port 0: any free port; a fixed port is retried while the OS
/// still holds it).
pub async fn serve_on(server: Server, addr: SocketAddr) -> Served {
    let bound = poll("binding the upstream's address", DEADLINE, || async {
        mcp_http::bind(addr).await.map_err(|e| format!("bind {addr}: {e}"))
    })
    .await;
    let addr = bound.local_addr();
    let stop = CancellationToken::new();
    let shutdown = stop.clone();
    let serving = server.clone();
    let task = tokio::spawn(async move {
        let config = mcp_http::HttpConfig::for_bind(addr);
        let _ =
            mcp_http::serve_until(serving, bound, Some(config), shutdown.cancelled_owned(), Duration::ZERO)
                .await;
    });
    Served { server, addr, stop, task: Some(task) }
}

/// Serves `server` on a free loopback port.
pub async fn serve(server: Server) -> Served {
    serve_on(server, "127.0.0.1:0".parse().unwrap()).await
}

/// An upstream entry reaching `url` over Streamable HTTP, every other setting at its default.
pub fn upstream(name: &str, url: &str) -> UpstreamConfig {
    UpstreamConfig::new(name, Transport::Http { url: url.to_owned(), headers: Default::default() })
}

/// `upstream` pinned to the legacy revision (the gateway speaks 2025-11-25 to it).
pub fn legacy_upstream(name: &str, url: &str) -> UpstreamConfig {
    let mut config = upstream(name, url);
    config.protocol_version = Some(LEGACY.to_owned());
    config
}

/// A running gateway and its server over HTTP; closed when dropped (best effort) or by
/// [`Front::close`].
pub struct Front {
    pub gateway: Gateway,
    pub served: Served,
}

impl Front {
    pub fn url(&self) -> String {
        self.served.url()
    }

    /// The status of upstream `name`.
    pub fn upstream(&self, name: &str) -> UpstreamStatus {
        self.gateway
            .status()
            .upstreams
            .into_iter()
            .find(|u| u.name == name)
            .unwrap_or_else(|| panic!("no upstream {name} in the status"))
    }

    /// Waits until upstream `name` is in `state`.
    pub async fn wait_state(&self, name: &str, state: UpstreamState) -> UpstreamStatus {
        poll(&format!("upstream {name} {}", state.as_str()), DEADLINE, || async {
            let status = self.upstream(name);
            if status.state == state { Ok(status) } else { Err(format!("{status:?}")) }
        })
        .await
    }

    pub async fn close(mut self) {
        self.served.stop().await;
        self.gateway.close().await;
    }
}

impl Drop for Front {
    fn drop(&mut self) {
        let gateway = self.gateway.clone();
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move { gateway.close().await });
        }
    }
}

/// Starts a gateway over `upstreams` (bounded) and serves it over HTTP.
pub async fn front(upstreams: Vec<UpstreamConfig>) -> Front {
    front_with(upstreams, mcp_gateway::GatewayOptions::new()).await
}

/// [`front`] with `options`.
pub async fn front_with(upstreams: Vec<UpstreamConfig>, options: mcp_gateway::GatewayOptions) -> Front {
    let config = GatewayConfig { settings: Settings::default(), upstreams };
    let gateway =
        bounded("Gateway::start", Gateway::start_with(config, options)).await.expect("the gateway starts");
    let served = serve(gateway.server()).await;
    Front { gateway, served }
}

/// A downstream client of its own era cache; `legacy` pins 2025-11-25.
pub async fn client(url: &str, legacy: bool, handlers: Handlers) -> Client {
    let mut builder = ClientBuilder::new("gateway-test", "1").era_cache(EraCache::new()).handlers(handlers);
    if legacy {
        builder = builder.pin_version(ProtocolVersion::V2025_11_25);
    }
    let client = bounded("connecting", builder.connect_http(HttpConfig::new(url.to_owned())))
        .await
        .unwrap_or_else(|e| panic!("connecting to {url}: {e}"));
    let want = if legacy { ProtocolVersion::V2025_11_25 } else { ProtocolVersion::V2026_07_28 };
    assert_eq!(client.protocol_version(), want, "the downstream client's era");
    client
}

/// The names of the tools `client` lists, fresh (no cache).
pub async fn tool_names(client: &Client) -> Result<Vec<String>, String> {
    let options = mcp_client::RequestOptions::new().bypass_cache();
    client
        .list_all_tools_with(&options)
        .await
        .map(|tools| tools.into_iter().map(|t| t.name).collect())
        .map_err(|e| format!("tools/list failed: {e}"))
}

/// Waits until `client` lists (or, with `present` false, no longer lists) tool `name`.
pub async fn wait_tool(client: &Client, name: &str, present: bool) -> Vec<String> {
    let what = if present { format!("tool {name} listed") } else { format!("tool {name} gone") };
    poll(&what, DEADLINE, || async {
        let names = tool_names(client).await?;
        if names.iter().any(|n| n == name) == present { Ok(names) } else { Err(format!("{names:?}")) }
    })
    .await
}

/// The text blocks of a tool result, joined.
pub fn text_of(result: &mcp_types::CallToolResult) -> String {
    let value = serde_json::to_value(&result.content).unwrap();
    value
        .as_array()
        .map(|blocks| blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n"))
        .unwrap_or_default()
}

/// A TCP relay in front of `target` that counts the connections it accepts.
pub struct Relay {
    pub addr: SocketAddr,
    pub accepted: Arc<AtomicUsize>,
    _task: Task,
}

impl Relay {
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

pub async fn relay(target: SocketAddr) -> Relay {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    let task = tokio::spawn(async move {
        let mut pipes = tokio::task::JoinSet::new();
        while let Ok((mut inbound, _)) = listener.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            pipes.spawn(async move {
                if let Ok(mut outbound) = tokio::net::TcpStream::connect(target).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    });
    Relay { addr, accepted, _task: Task(task) }
}

/// A TCP server that accepts every connection, holds it, and never sends a byte.
pub async fn silent() -> (SocketAddr, Task) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    (addr, Task(task))
}
