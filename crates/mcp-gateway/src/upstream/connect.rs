//! Opening a connection to an upstream through mcp-client: the transport from the
//! configuration, the gateway's identity, and the handlers that pass the upstream's questions
//! on to the downstream caller.

use std::str::FromStr;
use std::sync::{Arc, Weak};

use mcp_client::transport::http::{HeaderName, HeaderValue, HttpAuth, HttpConfig};
use mcp_client::transport::stdio::StdioCommand;
use mcp_client::{Client, ClientBuilder, ClientError, EraCache};
use mcp_types::ProtocolVersion;

use crate::bridge::{self, Callers};
use crate::config::{Transport, UpstreamConfig};

/// The client's name towards upstreams.
pub(crate) const CLIENT_NAME: &str = "mcpkit-gateway";

fn builder(
    config: &UpstreamConfig,
    callers: Weak<Callers>,
    only: Option<&mcp_types::ClientCapabilities>,
) -> Result<ClientBuilder, ClientError> {
    let mut builder = ClientBuilder::new(CLIENT_NAME, env!("CARGO_PKG_VERSION"))
        .handlers(bridge::handlers(callers, only))
        .request_timeout(Some(config.request_timeout))
        .probe_timeout(config.start_timeout)
        // Each upstream's era is its own: never learnt from another connection to the same URL.
        .era_cache(EraCache::new())
        // The gateway's own server validates what it serves against the schemas it lists.
        .validate_output(false, Default::default());
    if let Some(version) = &config.protocol_version {
        let version = ProtocolVersion::parse(version)
            .ok_or_else(|| ClientError::Unsupported(format!("unknown protocol version {version:?}")))?;
        builder = builder.pin_version(version);
    }
    Ok(builder)
}

/// Connects to `config`'s server (spawning it, for stdio) and completes the handshake; the
/// server's questions go to one of `callers`; `auth` authorizes an HTTP server's requests; a
/// connection of one downstream session declares `only` that session client's capabilities;
/// `observer` is told about each request sent on it.
pub(crate) async fn connect(
    config: &UpstreamConfig,
    auth: Option<Arc<dyn HttpAuth>>,
    callers: Weak<Callers>,
    only: Option<&mcp_types::ClientCapabilities>,
    observer: Option<&Arc<dyn mcp_client::observe::RequestObserver>>,
) -> Result<Client, ClientError> {
    let mut builder = builder(config, callers, only)?;
    if let Some(observer) = observer {
        builder = builder.observe(observer.clone());
    }
    match &config.transport {
        Transport::Stdio { command, args, env, cwd } => {
            let mut cmd = StdioCommand::new(command)
                .args(args)
                .envs(env)
                .inherit_env(config.inherit_env)
                .name(config.name.clone());
            if let Some(cwd) = cwd {
                cmd = cmd.current_dir(cwd);
            }
            builder.connect_stdio(cmd).await
        }
        Transport::Http { url, headers } | Transport::Sse { url, headers } => {
            let sse = matches!(config.transport, Transport::Sse { .. });
            let mut http = HttpConfig::new(url.clone());
            for (name, value) in headers {
                let name = HeaderName::from_str(name)
                    .map_err(|e| ClientError::Unsupported(format!("header name {name:?}: {e}")))?;
                let value = HeaderValue::from_str(value)
                    .map_err(|e| ClientError::Unsupported(format!("the value of header {name}: {e}")))?;
                http = http.header(name, value);
            }
            if let Some(auth) = auth {
                http = http.auth(auth);
            }
            // `"type": "sse"` goes straight to the HTTP+SSE transport; otherwise the era is detected.
            if sse { builder.connect_http_sse(http).await } else { builder.connect_http(http).await }
        }
    }
}
