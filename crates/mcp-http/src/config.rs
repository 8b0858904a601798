//! Transport settings: the Host/Origin allowlists, the limits of docs/DECISIONS.md, and
//! authorization.

use std::net::SocketAddr;
use std::time::Duration;

#[cfg(feature = "oauth")]
use crate::auth::AuthConfig;

/// Settings of the Streamable HTTP transport; every limit has the default of docs/DECISIONS.md.
///
/// Settings are added over time, so the struct cannot be written as a literal outside this
/// crate: start from [`HttpConfig::default`] or [`HttpConfig::for_bind`] and change what you
/// need with the setter of the same name (`HttpConfig::default().max_body(1 << 20)`) or by
/// assigning the public field.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct HttpConfig {
    /// The MCP endpoint path.
    pub endpoint: String,
    /// Accepted `Host` header values (`host:port`, compared case-insensitively). Empty: any.
    pub allowed_hosts: Vec<String>,
    /// Accepted `Origin` header values (a request without `Origin` is accepted; `null` never).
    pub allowed_origins: Vec<String>,
    /// Largest request body.
    pub max_body: usize,
    /// All request bodies in flight together, before `503`.
    pub max_bodies_in_flight: usize,
    /// Requests handled at once, before `503`.
    pub max_in_flight: usize,
    /// Requests of one authenticated principal handled at once, before `503` (only with
    /// [`auth`](Self::auth) on).
    pub max_in_flight_per_principal: usize,
    /// Open connections (standalone server), before `503`.
    pub max_connections: usize,
    /// How long a client may take to send its request headers.
    pub header_read_timeout: Duration,
    /// How long a client may take to send its request body.
    pub body_read_timeout: Duration,
    /// Interval of keep-alive comments on long-lived SSE streams.
    pub keep_alive: Duration,
    /// A legacy session unused this long is closed.
    pub session_idle: Duration,
    /// The `retry` of resumable (legacy) streams: how long a client waits before reconnecting.
    pub sse_retry: Duration,
    /// Bytes of replay data (the recorded events of resumable legacy streams, for
    /// `Last-Event-ID`) kept in total by the default in-memory store; default 16 MiB. Past it,
    /// the oldest finished streams are evicted first, then the oldest events of running ones;
    /// resuming from an evicted event is refused with `410 Gone`.
    pub max_replay_bytes: usize,
    /// Long-lived streams (`subscriptions/listen`, and HTTP+SSE `GET /sse` streams, each of
    /// which is a session) open at once; default 128. They hold a
    /// stream slot instead of a request slot ([`max_in_flight`](Self::max_in_flight)), so idle
    /// subscribers cannot starve requests; beyond it, `503` with `Retry-After`. Keep it below
    /// [`max_connections`](Self::max_connections): each stream holds a connection.
    pub max_streams: usize,
    /// Long-lived streams of one caller open at once; default 16. The caller is the
    /// authenticated principal with [`auth`](Self::auth) on, otherwise the peer's IP address
    /// (known to the standalone server, and to a mounted router served with axum's
    /// `ConnectInfo<SocketAddr>`; behind a reverse proxy every client shares the proxy's).
    pub max_streams_per_principal: usize,
    /// Legacy sessions alive at once; default 4,096 (about 9 MiB of session state with small
    /// `initialize` parameters, plus up to 8 KiB each for the streams it remembers). A new
    /// session beyond it evicts the idlest one: its id then gets `404`, like an expired one,
    /// and its GET stream ends.
    pub max_sessions: usize,
    /// Legacy sessions of one caller (principal or peer address, as for
    /// [`max_streams_per_principal`](Self::max_streams_per_principal)) alive at once; default
    /// 64. A new session beyond it evicts that caller's idlest session.
    pub max_sessions_per_principal: usize,
    /// Seals legacy session ids under this key (`None`, the default: random ids known only to
    /// this process). A sealed id carries the session's revision, the client's capabilities and
    /// identity, and its principal, encrypted and authenticated: any server with the same key —
    /// a replica behind a plain load balancer — takes the session up. What it does not carry
    /// (the log level, subscriptions, resumable streams, a `DELETE`) stays with the process
    /// that had it (docs/DECISIONS.md).
    pub session_key: Option<crate::SessionKey>,
    /// How long a sealed session id is accepted after `initialize` (default 24 h); an idle
    /// session is still closed after [`session_idle`](Self::session_idle) where it lives, and
    /// taken up again by its next request.
    pub session_lifetime: Duration,
    /// OAuth 2.1 resource server settings; `None` (the default): no authorization. With it,
    /// every MCP request needs a valid access token and the Protected Resource Metadata is
    /// served (see [`AuthConfig`]). Only with the `oauth` feature (on by default): without it
    /// the setting does not exist, and nothing is linked for it.
    #[cfg(feature = "oauth")]
    pub auth: Option<AuthConfig>,

    // The request head and the socket (docs/DECISIONS.md): enforced by the standalone server
    // (`serve`, `serve_until`); the header limits and the `Host` rule are checked by the router
    // too, for applications that mount it in a server of their own.
    /// Largest request head: the request line and every header field together (`431`).
    pub max_header_bytes: usize,
    /// Most header fields in a request (`431`).
    pub max_headers: usize,
    /// Standalone server: a connection whose writes make no progress this long (the client
    /// stopped reading its answer or stream) is closed and its buffers freed.
    pub send_timeout: Duration,
}

impl HttpConfig {
    /// Settings for a server bound to `addr`: the allowlists accept the loopback names at
    /// that port (`localhost`, `127.0.0.1`, `[::1]`), which stops DNS rebinding and
    /// cross-site requests (docs/DECISIONS.md trap 4).
    pub fn for_bind(addr: SocketAddr) -> Self {
        let port = addr.port();
        let hosts = vec![format!("localhost:{port}"), format!("127.0.0.1:{port}"), format!("[::1]:{port}")];
        let origins = hosts.iter().flat_map(|h| [format!("http://{h}"), format!("https://{h}")]).collect();
        HttpConfig { allowed_hosts: hosts, allowed_origins: origins, ..Self::default() }
    }
}

/// A chained setter per field: `pub fn field(self, value) -> Self`.
macro_rules! setters {
    ($($field:ident: $ty:ty),* $(,)?) => {
        impl HttpConfig {
            $(
                #[doc = concat!("Sets [`", stringify!($field), "`](HttpConfig::", stringify!($field), ").")]
                #[must_use]
                pub fn $field(mut self, value: $ty) -> Self {
                    self.$field = value;
                    self
                }
            )*
        }
    };
}

impl HttpConfig {
    /// Sets [`endpoint`](HttpConfig::endpoint).
    #[must_use]
    pub fn endpoint(mut self, path: impl Into<String>) -> Self {
        self.endpoint = path.into();
        self
    }

    /// Sets [`auth`](HttpConfig::auth): authorization on, with these settings.
    #[cfg(feature = "oauth")]
    #[must_use]
    pub fn auth(mut self, auth: AuthConfig) -> Self {
        self.auth = Some(auth);
        self
    }
}

setters! {
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
    max_body: usize,
    max_bodies_in_flight: usize,
    max_in_flight: usize,
    max_in_flight_per_principal: usize,
    max_connections: usize,
    header_read_timeout: Duration,
    body_read_timeout: Duration,
    keep_alive: Duration,
    session_idle: Duration,
    sse_retry: Duration,
    max_replay_bytes: usize,
    max_streams: usize,
    max_streams_per_principal: usize,
    max_sessions: usize,
    max_sessions_per_principal: usize,
    max_header_bytes: usize,
    max_headers: usize,
    send_timeout: Duration,
    session_key: Option<crate::SessionKey>,
    session_lifetime: Duration,
}

impl Default for HttpConfig {
    /// Defaults with empty allowlists (any Host, no Origin but loopback ones): use
    /// [`HttpConfig::for_bind`] for a listening server.
    fn default() -> Self {
        HttpConfig {
            endpoint: "/mcp".to_owned(),
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            max_body: 4 * 1024 * 1024,
            max_bodies_in_flight: 64 * 1024 * 1024,
            max_in_flight: 64,
            max_in_flight_per_principal: 16,
            max_connections: 256,
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            keep_alive: Duration::from_secs(15),
            session_idle: Duration::from_secs(30 * 60),
            sse_retry: Duration::from_millis(1000),
            max_replay_bytes: crate::events::DEFAULT_MAX_REPLAY_BYTES,
            max_streams: 128,
            max_streams_per_principal: 16,
            max_sessions: 4096,
            max_sessions_per_principal: 64,
            session_key: None,
            session_lifetime: Duration::from_secs(24 * 3600),
            #[cfg(feature = "oauth")]
            auth: None,

            max_header_bytes: 64 * 1024,
            max_headers: 100,
            send_timeout: Duration::from_secs(30),
        }
    }
}
