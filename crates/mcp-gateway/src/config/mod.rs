//! The gateway configuration: which upstream MCP servers to front, how to reach them, and how
//! their tools and prompts are named downstream.
//!
//! Three file shapes are read, each into one [`GatewayConfig`]:
//!
//! * the gateway's own TOML: a `[gateway]` table ([`Settings`]) and one `[servers.NAME]` table
//!   per upstream; a `mcpServers` table (the JSON shape below) may sit beside `servers`;
//! * the `mcpServers` JSON of Claude Desktop, Claude Code (`.mcp.json`) and Cursor, optionally
//!   with a top-level `"gateway"` object;
//! * VS Code's `mcp.json`: `"servers"` and `"inputs"`.
//!
//! Every string that reaches an upstream (command, args, env values, cwd, url, headers, envFile)
//! is expanded: `${VAR}`, `${env:VAR}`, `${VAR:-default}` (the default also when `VAR` is
//! empty), `${input:ID}`, `${workspaceFolder}`; `$$` is a literal `$`. A variable that cannot be
//! resolved is an error, never sent literally.
//!
//! Unknown members of a server entry are ignored (these files hold other tools' keys); a known
//! member with the wrong type is an error. Unknown keys of the `gateway` table are errors, and so
//! are unknown top-level keys of the gateway's own TOML.

mod document;
mod expand;
mod node;
/// Files the configuration trusts, read through mcp-server's one rule for them.
pub use mcp_server::trust;
mod upstream;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use expand::{Ask, Input, input_env_var};

/// The whole configuration: the gateway's settings and its upstreams.
#[derive(Clone, Debug, PartialEq)]
pub struct GatewayConfig {
    /// Gateway-wide settings (the `gateway` table).
    pub settings: Settings,
    /// The enabled upstreams, in file order (`servers` before `mcpServers`).
    pub upstreams: Vec<UpstreamConfig>,
}

/// Gateway-wide settings.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// When downstream names carry the upstream's prefix; default [`Naming::WhenAmbiguous`].
    pub naming: Naming,
    /// Between prefix and name: a prefixed name is `{prefix}{separator}{tool}`; default `"__"`.
    pub separator: String,
    /// How long an aggregated list waits for an upstream; default 5 s (`list_timeout_ms`).
    pub list_timeout: Duration,
    /// The file holding the key that seals legacy session ids (`session_key_file`, relative to
    /// the configuration's folder): 32 bytes as 64 hex digits or base64url. Replicas with the
    /// same key serve each other's sessions. `None`: session ids are local to the process.
    pub session_key_file: Option<std::path::PathBuf>,
    /// Which tool calls a person approves first (`approve_destructive`, default `true`;
    /// `approve_tools`: downstream names; `approval_exempt`: token subjects never asked). Read
    /// at start: a reload does not change it.
    pub approvals: mcp_server::Approvals,
    /// Requests per caller × method × tool (`rate_limit_per_minute`, with `rate_limit_burst`,
    /// default the same number); `None` (the default): unlimited. Read at start.
    pub rate_limit: Option<mcp_server::RateLimit>,
    /// A policy rules file (`policy_file`: CEL rules in TOML, relative to the configuration's
    /// folder): who may see and use which tools, prompts and resources. Read by whoever starts
    /// the gateway (`mcpkit gateway` parses it and passes it as `GatewayOptions::policy`); read
    /// at start.
    pub policy_file: Option<std::path::PathBuf>,
}

impl Settings {
    /// The default separator.
    pub const DEFAULT_SEPARATOR: &'static str = "__";
    /// The default list timeout.
    pub const DEFAULT_LIST_TIMEOUT: Duration = Duration::from_secs(5);
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            naming: Naming::WhenAmbiguous,
            separator: Self::DEFAULT_SEPARATOR.to_owned(),
            list_timeout: Self::DEFAULT_LIST_TIMEOUT,
            session_key_file: None,
            approvals: mcp_server::Approvals::destructive(),
            rate_limit: None,
            policy_file: None,
        }
    }
}

/// When a downstream tool or prompt name carries its upstream's prefix.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Naming {
    /// Always `{prefix}{separator}{name}`.
    Always,
    /// Prefixed only when two upstreams offer the same name.
    #[default]
    WhenAmbiguous,
    /// Never prefixed (a clash is the operator's problem).
    Never,
}

impl Naming {
    /// The spelling in the configuration file.
    pub const fn as_str(self) -> &'static str {
        match self {
            Naming::Always => "always",
            Naming::WhenAmbiguous => "when-ambiguous",
            Naming::Never => "never",
        }
    }
}

/// When an upstream is started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Start {
    /// When the gateway starts (the default).
    #[default]
    Eager,
    /// On first use.
    Lazy,
}

/// How many children a stdio upstream has.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Sharing {
    /// One child (one connection) for every client; the default.
    #[default]
    Shared,
    /// One child per downstream legacy session, started on the session's first request to it
    /// and stopped when the session ends; stateless (2026-07-28) requests and the lists use
    /// the shared child. Stdio upstreams only.
    PerSession,
}

impl Sharing {
    /// The spelling in the configuration file.
    pub const fn as_str(self) -> &'static str {
        match self {
            Sharing::Shared => "shared",
            Sharing::PerSession => "per-session",
        }
    }
}

/// One upstream MCP server.
#[derive(Clone, Debug, PartialEq)]
pub struct UpstreamConfig {
    /// The entry's key in the file; also the default prefix.
    pub name: String,
    /// How to reach it.
    pub transport: Transport,
    /// The prefix of its downstream names; `None`: the name.
    pub prefix: Option<String>,
    /// Overrides [`Settings::naming`] for this upstream.
    pub naming: Option<Naming>,
    /// Upstream tool/prompt name → downstream name (exact, never prefixed).
    pub rename: BTreeMap<String, String>,
    /// When it is started.
    pub start: Start,
    /// How long starting (spawn/connect and handshake) may take; default 30 s.
    pub start_timeout: Duration,
    /// How long one request may take (`timeout_ms`); default 60 s.
    pub request_timeout: Duration,
    /// Requests in flight at once; default 32, at least 1.
    pub max_concurrency: usize,
    /// Requests in a row left unanswered (timed out, or lost with their connection) that open
    /// the circuit breaker (`breaker_failures`); default 5, 0: never.
    pub breaker_failures: u32,
    /// How long an open breaker fails requests fast before letting a probe through
    /// (`breaker_cooldown_ms`); default 30 s.
    pub breaker_cooldown: Duration,
    /// A pinned protocol revision (a string [`mcp_types::ProtocolVersion::parse`] knows).
    pub protocol_version: Option<String>,
    /// One child for all clients, or one per downstream session (stdio only).
    pub sharing: Sharing,
    /// A stdio child gets the gateway's whole environment (`inherit_env = true`), not only
    /// `mcp_client::transport::stdio::StdioCommand::MINIMAL_ENV` and its `env`.
    pub inherit_env: bool,
    /// What an HTTP upstream is shown of who is calling (`credentials`).
    pub credentials: Credentials,
}

/// The credentials an HTTP upstream receives (`credentials = "…"`). Whatever the mode, the
/// entry's `headers` go with every request; the caller's own token is never forwarded unless
/// the mode is `passthrough`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Credentials {
    /// `"gateway"` (the default): the gateway's own — its `headers`, and the token `mcpkit
    /// login` stored for the upstream's URL, if any.
    #[default]
    Gateway,
    /// `"none"`: only the `headers`; no stored login is used.
    None,
    /// `"passthrough"`: each request made for a caller carries the caller's own access token,
    /// and only when that token names `audience` (by default the upstream's URL) among its
    /// audiences; DPoP-bound tokens are never passed on. The gateway's own requests (its
    /// handshake, lists and subscriptions) use its own credentials, as with `Gateway`.
    Passthrough {
        /// The audience the caller's token must name.
        audience: String,
    },
    /// `"token-exchange"`: each request made for a caller carries a token the authorization
    /// server issued in exchange for the caller's (RFC 8693), cached until it expires.
    TokenExchange(Exchange),
}

impl Credentials {
    /// The spelling in the configuration file.
    pub const fn as_str(&self) -> &'static str {
        match self {
            Credentials::Gateway => "gateway",
            Credentials::None => "none",
            Credentials::Passthrough { .. } => "passthrough",
            Credentials::TokenExchange(_) => "token-exchange",
        }
    }

    /// Whether requests made for a caller carry a credential of the caller's (so the
    /// downstream transport must keep each verified token).
    pub fn per_caller(&self) -> bool {
        matches!(self, Credentials::Passthrough { .. } | Credentials::TokenExchange(_))
    }
}

/// Where and how a caller's token is exchanged (RFC 8693).
#[derive(Clone, PartialEq, Eq)]
pub struct Exchange {
    /// The authorization server's token endpoint (`token_endpoint`).
    pub token_endpoint: String,
    /// The gateway's client id there (`client_id`).
    pub client_id: String,
    /// Its client secret (`client_secret`, from `${env:…}` or `${file:…}`); `None`: a public
    /// client.
    pub client_secret: Option<String>,
    /// The `resource` asked for: the upstream's URL.
    pub resource: String,
    /// The `audience` asked for (`audience`), if the authorization server wants one.
    pub audience: Option<String>,
    /// The `scope` asked for (`scope`).
    pub scope: Option<String>,
}

impl std::fmt::Debug for Exchange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exchange")
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "***"))
            .field("resource", &self.resource)
            .field("audience", &self.audience)
            .field("scope", &self.scope)
            .finish()
    }
}

impl UpstreamConfig {
    /// The default start timeout.
    pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(30);
    /// The default request timeout.
    pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
    /// The default concurrency limit.
    pub const DEFAULT_MAX_CONCURRENCY: usize = 32;
    /// The default number of failures in a row that open the circuit breaker.
    pub const DEFAULT_BREAKER_FAILURES: u32 = 5;
    /// The default time an open circuit breaker waits before a probe.
    pub const DEFAULT_BREAKER_COOLDOWN: Duration = Duration::from_secs(30);

    /// An upstream with every optional setting at its default.
    pub fn new(name: impl Into<String>, transport: Transport) -> Self {
        UpstreamConfig {
            name: name.into(),
            transport,
            prefix: None,
            naming: None,
            rename: BTreeMap::new(),
            start: Start::Eager,
            start_timeout: Self::DEFAULT_START_TIMEOUT,
            request_timeout: Self::DEFAULT_REQUEST_TIMEOUT,
            max_concurrency: Self::DEFAULT_MAX_CONCURRENCY,
            breaker_failures: Self::DEFAULT_BREAKER_FAILURES,
            breaker_cooldown: Self::DEFAULT_BREAKER_COOLDOWN,
            protocol_version: None,
            sharing: Sharing::Shared,
            inherit_env: false,
            credentials: Credentials::Gateway,
        }
    }

    /// The prefix in effect: [`prefix`](Self::prefix), else the name.
    pub fn effective_prefix(&self) -> &str {
        self.prefix.as_deref().unwrap_or(&self.name)
    }

    /// The naming in effect: this upstream's, else the gateway's.
    pub fn effective_naming(&self, settings: &Settings) -> Naming {
        self.naming.unwrap_or(settings.naming)
    }
}

/// How an upstream is reached.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking over stdin/stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to the gateway's environment (`envFile` first, then `env`).
        env: BTreeMap<String, String>,
        /// Its working directory; `None`: the gateway's.
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP.
    Http {
        /// The MCP endpoint.
        url: String,
        /// Headers sent with every request.
        headers: BTreeMap<String, String>,
    },
    /// The deprecated HTTP+SSE transport (2024-11-05).
    Sse {
        /// The SSE endpoint.
        url: String,
        /// Headers sent with every request.
        headers: BTreeMap<String, String>,
    },
}

/// The syntax of a configuration file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// The gateway's own TOML.
    Toml,
    /// `mcpServers` JSON or VS Code's `mcp.json`.
    Json,
}

impl Format {
    /// The format [`load`] picks for a path: `.toml` is TOML, anything else JSON.
    pub fn for_path(path: &Path) -> Format {
        match path.extension() {
            Some(ext) if ext.eq_ignore_ascii_case("toml") => Format::Toml,
            _ => Format::Json,
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Toml => "TOML",
            Format::Json => "JSON",
        })
    }
}

/// Where in the configuration a problem is: the file, the upstream, the field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The file (or `<config>` for text without one).
    pub file: String,
    /// The upstream's name, when the problem is in an entry.
    pub upstream: Option<String>,
    /// The field, e.g. `args[1]`, `headers.Authorization`, `gateway.separator`.
    pub field: Option<String>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        if let Some(upstream) = &self.upstream {
            write!(f, ": server `{upstream}`")?;
        }
        if let Some(field) = &self.field {
            write!(f, ": field `{field}`")?;
        }
        Ok(())
    }
}

/// Why a configuration was refused. Every message names the file, and the upstream and field
/// when there is one.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{}: cannot read the configuration: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The text is not valid TOML/JSON.
    #[error("{file}: not valid {format}: {message}")]
    Syntax {
        /// The file.
        file: String,
        /// The syntax expected.
        format: Format,
        /// The parser's message.
        message: String,
    },
    /// A value is missing, has the wrong type, or breaks a rule.
    #[error("{at}: {message}")]
    Invalid {
        /// Where.
        at: Location,
        /// What is wrong.
        message: String,
    },
    /// `${VAR}` names an unset variable and gives no default.
    #[error("{at}: environment variable `{name}` is not set (give a default with `${{{name}:-default}}`)")]
    UnsetVariable {
        /// Where.
        at: Location,
        /// The variable.
        name: String,
    },
    /// `${input:ID}` has neither a default nor an environment variable.
    #[error(
        "{at}: input `{id}` has no value: give it a \"default\" in \"inputs\" or set the environment variable {env_var}"
    )]
    UnresolvedInput {
        /// Where.
        at: Location,
        /// The input's id.
        id: String,
        /// The environment variable that would provide it.
        env_var: String,
    },
    /// An `envFile` could not be read or has a malformed line.
    #[error("{at}: env file {}: {message}", path.display())]
    EnvFile {
        /// Where.
        at: Location,
        /// The env file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

impl ConfigError {
    /// Where the problem is, when it is inside the file.
    pub fn location(&self) -> Option<&Location> {
        match self {
            ConfigError::Invalid { at, .. }
            | ConfigError::UnsetVariable { at, .. }
            | ConfigError::UnresolvedInput { at, .. }
            | ConfigError::EnvFile { at, .. } => Some(at),
            ConfigError::Read { .. } | ConfigError::Syntax { .. } => None,
        }
    }
}

/// Reads the file at `path` (TOML for `.toml`, JSON otherwise), with variables from the process
/// environment and `envFile`/`${workspaceFolder}` relative to the file's directory.
pub fn load(path: &Path) -> Result<GatewayConfig, ConfigError> {
    let (text, absolute) = read_trusted(path)?;
    let source = document::Source { file: path.display().to_string(), base_dir: absolute.parent() };
    document::read(&text, Format::for_path(path), &source, &|name| std::env::var(name).ok())
}

/// The text of the configuration file at `path`, once its permissions are checked, and its
/// absolute path (so that `${workspaceFolder}` and `envFile` do not depend on a later working
/// directory).
fn read_trusted(path: &Path) -> Result<(String, PathBuf), ConfigError> {
    // Whoever may write the file chooses what the gateway runs: refused when others may.
    trust::check(path, trust::Holds::Settings).map_err(|message| ConfigError::Read {
        path: path.to_owned(),
        source: std::io::Error::new(std::io::ErrorKind::PermissionDenied, message),
    })?;
    let text = std::fs::read_to_string(path)
        .map_err(|source| ConfigError::Read { path: path.to_owned(), source })?;
    Ok((text, std::path::absolute(path).unwrap_or_else(|_| path.to_owned())))
}

/// What a file says of one server ([`load_server`]).
#[derive(Debug)]
pub enum Lookup {
    /// The entry, expanded.
    Found(Box<UpstreamConfig>),
    /// The entry has `"disabled": true`.
    Disabled,
    /// No entry has the name; these are the names the file has.
    Missing {
        /// In file order (`servers` before `mcpServers`).
        names: Vec<String>,
    },
}

/// Reads one server of the file at `path`, for a client that talks to that server alone (`mcpkit
/// --server NAME`): only that entry is decoded and expanded, so a malformed neighbour or one whose
/// variables are unset does not matter. `${input:ID}` is `$MCPKIT_INPUT_ID` when set, else
/// `ask`'s answer, else the input's `default`.
pub fn load_server(path: &Path, name: &str, ask: Ask<'_>) -> Result<Lookup, ConfigError> {
    let (text, absolute) = read_trusted(path)?;
    let source = document::Source { file: path.display().to_string(), base_dir: absolute.parent() };
    document::read_server(&text, Format::for_path(path), &source, &|n| std::env::var(n).ok(), name, ask)
}

/// [`load_server`] on text that has no file, with the variables of `env`.
pub fn parse_server(
    text: &str,
    format: Format,
    env: &dyn Fn(&str) -> Option<String>,
    name: &str,
    ask: Ask<'_>,
) -> Result<Lookup, ConfigError> {
    let source = document::Source { file: "<config>".to_owned(), base_dir: None };
    document::read_server(text, format, &source, env, name, ask)
}

/// Parses configuration text that has no file: an `envFile` with a relative path and
/// `${workspaceFolder}` are errors (see [`parse_at`]).
pub fn parse(
    text: &str,
    format: Format,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<GatewayConfig, ConfigError> {
    parse_at(text, format, None, env)
}

/// Parses configuration text as if it were a file in `base_dir`: relative `envFile` paths are read
/// from there, and `${workspaceFolder}` is `base_dir` (its parent when `base_dir` is `.vscode` or `.cursor`).
pub fn parse_at(
    text: &str,
    format: Format,
    base_dir: Option<&Path>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<GatewayConfig, ConfigError> {
    let source = document::Source { file: "<config>".to_owned(), base_dir };
    document::read(text, format, &source, env)
}
