//! Which server a client command talks to: `--url`, a command line after `--`, or `--server NAME`
//! from an `mcpServers` config file. Also the options every client command shares.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, anyhow, bail};
use mcp_client::transport::http::{HeaderName, HeaderValue, HttpConfig};
use mcp_client::transport::stdio::StdioCommand;
use mcp_client::{Client, ClientBuilder};
use mcp_types::ProtocolVersion;
use serde::Deserialize;

/// Options shared by every client command.
#[derive(clap::Args, Debug)]
pub(crate) struct TargetArgs {
    /// Connect to this Streamable HTTP (or HTTP+SSE) endpoint.
    #[arg(long, value_name = "URL", conflicts_with_all = ["server", "command"])]
    url: Option<String>,
    /// Connect to this server of the config file's `mcpServers`.
    #[arg(long, value_name = "NAME", conflicts_with = "command")]
    server: Option<String>,
    /// The `mcpServers` config file (default: $MCPKIT_CONFIG, else
    /// $XDG_CONFIG_HOME/mcpkit/config.json, else ~/.config/mcpkit/config.json).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Give up on any request after this many seconds.
    #[arg(long, value_name = "SECS")]
    timeout: Option<f64>,
    /// Speak only this protocol revision (no era detection).
    #[arg(long, value_name = "REV")]
    protocol_version: Option<ProtocolVersion>,
    /// Print JSON (the default when stdout is not a terminal): results exactly as the server
    /// sent them; for `list`, the items of every page in one document.
    #[arg(long)]
    pub(crate) json: bool,
    #[command(flatten)]
    pub(crate) oauth: crate::login::OAuthArgs,
    /// Answer the server's questions (elicitation, sampling) on stdin even when it is not a
    /// terminal (prompts go to stderr).
    #[arg(long, conflicts_with = "no_input")]
    pub(crate) interactive: bool,
    /// Never prompt, not even on a terminal: the server sees no elicitation or sampling support.
    #[arg(long)]
    pub(crate) no_input: bool,
    /// Share this directory or file with the server as a root (repeatable).
    #[arg(long = "root", value_name = "PATH")]
    pub(crate) roots: Vec<PathBuf>,
    /// Show progress on stderr even when it is not a terminal, as `progress N/TOTAL message` lines.
    #[arg(long)]
    pub(crate) progress: bool,
    /// The server command line (stdio transport), after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// One entry of `mcpServers`.
#[derive(Deserialize, Debug)]
#[serde(untagged)]
enum ServerEntry {
    Stdio {
        command: String,
        #[serde(default)]
        args: Vec<String>,
        #[serde(default)]
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    },
    Http {
        url: String,
        #[serde(default)]
        headers: BTreeMap<String, String>,
    },
}

#[derive(Deserialize, Debug)]
struct ConfigFile {
    #[serde(rename = "mcpServers")]
    mcp_servers: BTreeMap<String, ServerEntry>,
}

enum Target {
    Stdio(StdioCommand),
    Http(HttpConfig),
}

fn config_path(explicit: Option<&PathBuf>) -> anyhow::Result<PathBuf> {
    if let Some(path) = explicit {
        return Ok(path.clone());
    }
    if let Some(path) = std::env::var_os("MCPKIT_CONFIG").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    if let Some(dir) = std::env::var_os("XDG_CONFIG_HOME").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(dir).join("mcpkit").join("config.json"));
    }
    match std::env::var_os("HOME").filter(|p| !p.is_empty()) {
        Some(home) => Ok(PathBuf::from(home).join(".config").join("mcpkit").join("config.json")),
        None => bail!("no config file: pass --config FILE or set MCPKIT_CONFIG"),
    }
}

fn http_config(
    url: &str,
    headers: &BTreeMap<String, String>,
    timeout: Option<Duration>,
) -> anyhow::Result<HttpConfig> {
    let mut config = HttpConfig::new(url);
    for (name, value) in headers {
        let name = HeaderName::from_bytes(name.as_bytes())
            .with_context(|| format!("invalid header name {name:?}"))?;
        let value =
            HeaderValue::from_str(value).with_context(|| format!("invalid value for header {name}"))?;
        config = config.header(name, value);
    }
    if let Some(timeout) = timeout {
        config = config.connect_timeout(timeout);
    }
    Ok(config)
}

impl TargetArgs {
    fn timeout(&self) -> anyhow::Result<Option<Duration>> {
        match self.timeout {
            None => Ok(None),
            Some(secs) => Duration::try_from_secs_f64(secs)
                .map(Some)
                .map_err(|_| anyhow!("invalid --timeout {secs}: must be a non-negative number of seconds")),
        }
    }

    fn target(&self) -> anyhow::Result<Target> {
        let timeout = self.timeout()?;
        if let Some(url) = &self.url {
            return Ok(Target::Http(http_config(url, &BTreeMap::new(), timeout)?));
        }
        if let Some((program, args)) = self.command.split_first() {
            return Ok(Target::Stdio(StdioCommand::new(program).args(args)));
        }
        let Some(name) = &self.server else {
            bail!("no server given: use --url URL, --server NAME, or a command line after --");
        };
        let path = config_path(self.config.as_ref())?;
        let text =
            std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
        let config: ConfigFile =
            serde_json::from_str(&text).with_context(|| format!("invalid config {}", path.display()))?;
        match config.mcp_servers.get(name) {
            None => bail!("no server {name:?} in {}", path.display()),
            Some(ServerEntry::Http { url, headers }) => Ok(Target::Http(http_config(url, headers, timeout)?)),
            Some(ServerEntry::Stdio { command, args, env, cwd }) => {
                let mut cmd = StdioCommand::new(command).args(args).envs(env).name(name.clone());
                if let Some(cwd) = cwd {
                    cmd = cmd.current_dir(cwd);
                }
                Ok(Target::Stdio(cmd))
            }
        }
    }

    /// Connects to the chosen server.
    pub(crate) async fn connect(&self) -> anyhow::Result<Client> {
        let target = self.target()?;
        let mut builder = ClientBuilder::new("mcpkit", env!("CARGO_PKG_VERSION"));
        if let Some(version) = self.protocol_version {
            builder = builder.pin_version(version);
        }
        builder = builder.handlers(crate::interactive::handlers(self)?);
        if let Some(timeout) = self.timeout()? {
            builder = builder.request_timeout(Some(timeout)).probe_timeout(timeout);
        }
        let client = match target {
            Target::Stdio(cmd) => {
                let display = cmd.display();
                builder.connect_stdio(cmd).await.with_context(|| format!("cannot connect to {display}"))?
            }
            Target::Http(mut config) => {
                let url = config.url.clone();
                let auth = crate::login::attach(&mut config, &self.oauth).await?;
                match builder.connect_http(config).await {
                    Ok(client) => client,
                    Err(e) => match auth.and_then(|a| a.login_hint(&url)) {
                        Some(hint) => bail!(hint),
                        None => return Err(e).with_context(|| format!("cannot connect to {url}")),
                    },
                }
            }
        };
        Ok(client)
    }
}

impl TargetArgs {
    /// How prompts name the server: its `--server` name, its URL, or its command line.
    pub(crate) fn server_label(&self) -> String {
        if let Some(name) = &self.server {
            format!("server {name:?}")
        } else if let Some(url) = &self.url {
            format!("the server at {url}")
        } else {
            format!("server `{}`", self.command.join(" "))
        }
    }
}
