//! Which server a client command talks to: `--url`, a command line after `--`, or `--server NAME`
//! from an `mcpServers` config file. Also the options every client command shares.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, anyhow, bail};
use mcp_client::transport::TransportError;
use mcp_client::transport::http::{HeaderName, HeaderValue, HttpConfig};
use mcp_client::transport::stdio::StdioCommand;
use mcp_client::{Client, ClientBuilder, ClientError};
use mcp_gateway::config::Transport;
use mcp_types::ProtocolVersion;

use crate::interactive::AnswerArgs;
use crate::server_log::LogLevel;
use crate::servers;

/// Options shared by every client command: which server, and how to talk to it. How `call`,
/// `read` and `prompt` answer the server's own requests is [`InteractionArgs`].
#[derive(clap::Args, Debug)]
pub(crate) struct TargetArgs {
    /// Connect to this Streamable HTTP (or HTTP+SSE) endpoint.
    #[arg(long, value_name = "URL", conflicts_with_all = ["server", "command"], help_heading = CONNECTION)]
    url: Option<String>,
    /// Connect to this server of a config file: `mcpServers` (Claude, Cursor) or VS Code's
    /// `servers`, looked for in ./.mcp.json, ./.vscode/mcp.json, ./.cursor/mcp.json, then the
    /// user's file (see --config). `${VAR}`, `${VAR:-default}`, `${env:VAR}` and `${input:ID}`
    /// are expanded; an input is asked for on a terminal ($MCPKIT_INPUT_ID gives it in a pipe).
    #[arg(long, value_name = "NAME", conflicts_with = "command", help_heading = CONNECTION)]
    server: Option<String>,
    /// The config file to find --server in, alone (default: the project's files, then
    /// $MCPKIT_CONFIG, else $XDG_CONFIG_HOME/mcpkit/config.json, else ~/.config/mcpkit/config.json).
    #[arg(long, value_name = "FILE", help_heading = CONNECTION)]
    config: Option<PathBuf>,
    /// Give up on each request after this many seconds (more than 0), a hard limit that the
    /// server's progress notifications do not extend. Without it, the client's defaults apply:
    /// a request fails after 300 s without an answer, each progress notification restarting
    /// that wait, and after 1 hour in any case.
    #[arg(long, value_name = "SECS", value_parser = parse_timeout, help_heading = CONNECTION)]
    timeout: Option<Duration>,
    /// Speak only this protocol revision (no era detection).
    #[arg(long, value_name = "REV", help_heading = CONNECTION)]
    protocol_version: Option<ProtocolVersion>,
    /// Send this HTTP header with every request, `'NAME: VALUE'` (repeatable): an API key, or
    /// `'Authorization: Bearer TOKEN'` (then no stored login is used). Over a config entry's
    /// `headers`, one of the same name replaces it. Values are never printed, not even with -v.
    #[arg(long = "header", value_name = "'NAME: VALUE'", value_parser = parse_header, conflicts_with = "command", help_heading = CONNECTION)]
    headers: Vec<(String, String)>,
    /// Print JSON (the default when stdout is not a terminal): results exactly as the server
    /// sent them; for `list`, the items of every page in one document.
    #[arg(long)]
    pub(crate) json: bool,
    // The heading stays set after the flatten: every field below names its own.
    #[command(flatten, next_help_heading = CONNECTION)]
    pub(crate) oauth: crate::login::OAuthArgs,
    /// Ask the server for its log messages at LEVEL and above, and show them on stderr as
    /// `[level] logger: data` lines (`off`: ask for none).
    #[arg(long, value_name = "LEVEL", value_enum, default_value_t = LogLevel::Warning, help_heading = CONNECTION)]
    pub(crate) log_level: LogLevel,
    /// Give a stdio server your whole environment (tokens and secrets included). Without it, it
    /// gets PATH, HOME, USER, LOGNAME, SHELL, TERM, TMPDIR and the locale, plus its config
    /// entry's `env` (or run it as `-- env NAME=VALUE server ...`).
    #[arg(long, conflicts_with = "url", help_heading = CONNECTION)]
    inherit_env: bool,
    /// The server command line (stdio transport), after `--`.
    #[arg(last = true, value_name = "COMMAND", help_heading = CONNECTION)]
    command: Vec<String>,
    /// The `protocol_version` of the `--server`'s config entry, once read.
    #[arg(skip)]
    entry_pin: std::sync::OnceLock<ProtocolVersion>,
}

/// The `--help` heading of the options that say which server and how to connect to it (all of
/// [`TargetArgs`] but `--json`, which is about the output).
const CONNECTION: &str = "Connection";

/// What a client command connects to.
enum Target {
    /// A child process; `program` and `server` (its `mcpServers` name) say what could not be
    /// started, `cwd` where.
    Stdio { cmd: StdioCommand, program: String, server: Option<String>, cwd: Option<PathBuf> },
    /// `sse`: the deprecated HTTP+SSE transport, not detected but chosen (`"type": "sse"`).
    Http { config: HttpConfig, sse: bool },
}

pub(crate) fn http_config(
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

/// `--header`'s value: `NAME: VALUE` (the value trimmed, and possibly empty).
pub(crate) fn parse_header(text: &str) -> Result<(String, String), String> {
    let Some((name, value)) = text.split_once(':') else {
        return Err("expected 'NAME: VALUE' (a colon between the header's name and its value)".into());
    };
    let name = name.trim();
    HeaderName::from_bytes(name.as_bytes()).map_err(|_| format!("{name:?} is not a header name"))?;
    let value = value.trim();
    HeaderValue::from_str(value).map_err(|_| format!("the value of {name} is not a valid header value"))?;
    Ok((name.to_owned(), value.to_owned()))
}

/// `headers` with `given` over them, a name replacing one that differs only in case.
fn with_headers(
    mut headers: BTreeMap<String, String>,
    given: &[(String, String)],
) -> BTreeMap<String, String> {
    for (name, value) in given {
        headers.retain(|existing, _| !existing.eq_ignore_ascii_case(name));
        headers.insert(name.clone(), value.clone());
    }
    headers
}

/// `--timeout`'s value: a number of seconds, more than 0 and at most [`MAX_TIMEOUT_SECS`].
fn parse_timeout(text: &str) -> Result<Duration, String> {
    let secs: f64 = text.trim().parse().map_err(|_| "not a number of seconds".to_owned())?;
    if secs.is_nan() {
        return Err("not a number of seconds".into());
    }
    if secs <= 0.0 {
        return Err("must be more than 0 seconds".into());
    }
    if secs > MAX_TIMEOUT_SECS {
        return Err(format!("too large: at most {MAX_TIMEOUT_SECS} seconds (about 31 years)"));
    }
    match Duration::try_from_secs_f64(secs) {
        Ok(duration) if !duration.is_zero() => Ok(duration),
        _ => Err("too small: at least 1 nanosecond".into()),
    }
}

/// The largest `--timeout`: far beyond any request, and far from overflowing a deadline.
const MAX_TIMEOUT_SECS: f64 = 1e9;

/// `url` with the password of its userinfo replaced by `***` (`http://user:***@host/`), for
/// every URL mcpkit prints. Text that is not a URL is returned as it is.
pub(crate) fn redact_url(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else { return url.to_owned() };
    let authority_start = scheme_end + 3;
    let rest = &url[authority_start..];
    let authority_len = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_len];
    let Some(at) = authority.rfind('@') else { return url.to_owned() };
    let Some(colon) = authority[..at].find(':') else { return url.to_owned() };
    format!("{}:***{}", &url[..authority_start + colon], &url[authority_start + at..])
}

/// Why a child process could not be started, from mcp-client's `cannot start NAME: CAUSE`.
fn start_failure(error: &ClientError, display: &str) -> Option<String> {
    let ClientError::Transport { error: TransportError::NotSent(message), .. } = error else {
        return None;
    };
    let cause = message.strip_prefix(&format!("cannot start {display}: "))?;
    let cause = match cause.rfind(" (os error ") {
        Some(at) if cause.ends_with(')') => &cause[..at],
        _ => cause,
    };
    Some(cause.to_owned())
}

/// The one line saying why a child process could not be started or did not answer: which
/// program, and what to do about it.
/// How long the error of a server that exited while connecting waits for the end of its stderr.
const STDERR_WAIT: Duration = Duration::from_millis(500);

fn stdio_failure(
    error: &ClientError,
    display: &str,
    program: &str,
    server: Option<&str>,
    cwd: Option<PathBuf>,
) -> anyhow::Error {
    if let Some(cause) = start_failure(error, display) {
        let path = cwd.map_or_else(|| PathBuf::from(program), |dir| dir.join(program));
        let spaced = program.contains(char::is_whitespace) && !path.exists();
        return match server {
            Some(name) => {
                let hint = if spaced {
                    " — \"command\" is the program alone; put its arguments in \"args\""
                } else {
                    ""
                };
                anyhow!("cannot start {program:?} (server {name:?}): {cause}{hint}")
            }
            None => {
                let hint =
                    if spaced { " — give the program and its arguments as separate words" } else { "" };
                anyhow!("cannot start {program:?}: {cause}{hint}")
            }
        };
    }
    // The server exited (or stopped reading) during the handshake: its stderr says why.
    let gone = matches!(error, ClientError::Transport { .. });
    let told = if gone { crate::logging::tail::describe(STDERR_WAIT) } else { None };
    anyhow!("cannot connect to {display}: {error}{}", told.unwrap_or_default())
}

impl TargetArgs {
    /// `--timeout`: the hard limit on each request.
    pub(crate) fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    fn target(&self) -> anyhow::Result<Target> {
        let timeout = self.timeout;
        if let Some(url) = &self.url {
            let config = http_config(url, &with_headers(BTreeMap::new(), &self.headers), timeout)?;
            return Ok(Target::Http { config, sse: false });
        }
        if let Some((program, args)) = self.command.split_first() {
            return Ok(Target::Stdio {
                cmd: StdioCommand::new(program).args(args).inherit_env(self.inherit_env),
                program: program.clone(),
                server: None,
                cwd: None,
            });
        }
        let Some(name) = &self.server else {
            bail!("no server given: use --url URL, --server NAME, or a command line after --");
        };
        let servers::Found { upstream, file } = servers::find(name, self.config.as_ref())?;
        let file = file.display();
        // `"type": "sse"`: the deprecated HTTP+SSE transport, without detecting the era.
        let sse = matches!(upstream.transport, Transport::Sse { .. });
        if let Some(version) = &upstream.protocol_version {
            // The config entry's pin, unless --protocol-version gives one.
            let version = ProtocolVersion::parse(version)
                .ok_or_else(|| anyhow!("server {name:?} in {file}: unknown protocol_version {version:?}"))?;
            self.entry_pin.get_or_init(|| version);
        }
        match upstream.transport {
            Transport::Http { url, headers } | Transport::Sse { url, headers } if !self.inherit_env => {
                let config = http_config(&url, &with_headers(headers, &self.headers), timeout)
                    .with_context(|| format!("server {name:?} in {file}"))?;
                Ok(Target::Http { config, sse })
            }
            Transport::Http { .. } | Transport::Sse { .. } => {
                bail!("--inherit-env is for stdio servers; server {name:?} in {file} is an HTTP server")
            }
            Transport::Stdio { .. } if !self.headers.is_empty() => {
                bail!("--header is for HTTP servers; server {name:?} in {file} is a command (stdio)")
            }
            Transport::Stdio { command, args, env, cwd } => {
                let mut cmd = StdioCommand::new(&command)
                    .args(args)
                    .envs(env)
                    .inherit_env(self.inherit_env || upstream.inherit_env)
                    .name(format!("server {name:?}"));
                if let Some(cwd) = &cwd {
                    cmd = cmd.current_dir(cwd);
                }
                Ok(Target::Stdio { cmd, program: command, server: Some(name.clone()), cwd })
            }
        }
    }

    /// Connects to the chosen server. With `interaction` (`call`, `read`, `prompt`), the client
    /// answers the server's elicitation, sampling and roots requests as it says; without it, the
    /// client registers no handlers, so it declares none of those capabilities.
    pub(crate) async fn connect(&self, interaction: Option<&AnswerArgs>) -> anyhow::Result<Client> {
        self.connect_as(interaction, self.protocol_version, false).await
    }

    /// [`connect`](Self::connect) declaring MCP Apps (`mcpkit app`: a server may offer its app
    /// tools only to clients that take apps).
    pub(crate) async fn connect_for_apps(&self) -> anyhow::Result<Client> {
        self.connect_as(None, self.protocol_version, true).await
    }

    /// [`connect`](Self::connect) speaking `version` only, whatever `--protocol-version` says.
    pub(crate) async fn connect_pinned(&self, version: ProtocolVersion) -> anyhow::Result<Client> {
        self.connect_as(None, Some(version), false).await
    }

    async fn connect_as(
        &self,
        interaction: Option<&AnswerArgs>,
        pinned: Option<ProtocolVersion>,
        apps: bool,
    ) -> anyhow::Result<Client> {
        let target = self.target()?;
        let mut builder = ClientBuilder::new("mcpkit", env!("CARGO_PKG_VERSION")).apps(apps);
        if let Some(version) = self.entry_pin.get() {
            builder = builder.pin_version(*version);
        }
        if let Some(context) = TRACE.get().filter(|c| !c.is_empty()) {
            builder = builder.trace_context(move || context.clone());
        }
        if let Some(version) = pinned {
            builder = builder.pin_version(version);
        }
        if let Some(interaction) = interaction {
            builder = builder.handlers(crate::interactive::handlers(interaction, &self.server_label())?);
            // A call may become a task: followed to its end (`call`), or printed (`--detach`).
            builder = builder.tasks(true);
        }
        if let Some(level) = self.log_level.level() {
            builder = builder.log_level(level);
        }
        if let Some(timeout) = self.timeout {
            // A hard limit on every request, that progress notifications do not extend.
            builder = builder
                .request_timeout(Some(timeout))
                .max_request_timeout(Some(timeout))
                .probe_timeout(timeout);
        }
        // From here on, a failure is one of connecting (status 3), whatever its cause.
        let connected = async move {
            Ok(match target {
                Target::Stdio { cmd, program, server, cwd } => {
                    let display = cmd.display();
                    match builder.connect_stdio(cmd).await {
                        Ok(client) => client,
                        Err(e) => return Err(stdio_failure(&e, &display, &program, server.as_deref(), cwd)),
                    }
                }
                Target::Http { mut config, sse } => {
                    let url = redact_url(&config.url);
                    let authorized = config.headers.contains_key(mcp_client::reqwest::header::AUTHORIZATION);
                    let auth = crate::login::attach(&mut config, &self.oauth).await?;
                    let connected = if sse {
                        builder.connect_http_sse(config).await
                    } else {
                        builder.connect_http(config).await
                    };
                    match connected {
                        Ok(client) => client,
                        Err(e) => match auth.and_then(|a| a.login_hint(&url)) {
                            Some(hint) => bail!(hint),
                            None if refused_authorization(&e) && authorized => {
                                return Err(e).with_context(|| {
                                    format!(
                                        "cannot connect to {url}: it refused the Authorization header given \
                                     (with --header or in the config entry's `headers`)"
                                    )
                                });
                            }
                            None if refused_authorization(&e) => {
                                return Err(e).with_context(|| {
                                format!(
                                    "cannot connect to {url}: it refused the request's authorization; give a \
                                     token or key with --header 'Authorization: Bearer TOKEN' (or the header \
                                     its documentation names), set `headers` in its config entry, or run \
                                     'mcpkit login {url}'"
                                )
                            });
                            }
                            None => {
                                let hint = endpoint_hint(&e, &url);
                                return Err(e).with_context(|| format!("cannot connect to {url}{hint}"));
                            }
                        },
                    }
                }
            })
        };
        connected.await.map_err(|e| crate::status::tag(crate::status::Status::Connection, e))
    }
}

/// The HTTP status connecting failed on, and whether the answer challenged for credentials.
fn refused_with(error: &mcp_client::ClientError) -> Option<(u16, bool)> {
    match error {
        mcp_client::ClientError::Transport {
            error: mcp_client::transport::TransportError::Http { status, www_authenticate, .. },
            ..
        } => Some((*status, www_authenticate.is_some())),
        _ => None,
    }
}

/// Whether connecting failed on a `401` (or a `403` with a challenge): the server wants
/// credentials it did not get. (A `403` without one is another refusal: a `Host` not allowed.)
fn refused_authorization(error: &mcp_client::ClientError) -> bool {
    matches!(refused_with(error), Some((401, _)) | Some((403, true)))
}

/// For a `404` on a URL whose path is not the usual endpoint: where the endpoint usually is.
fn endpoint_hint(error: &mcp_client::ClientError, url: &str) -> &'static str {
    let path = mcp_client::reqwest::Url::parse(url).map(|u| u.path().to_owned()).unwrap_or_default();
    match refused_with(error) {
        Some((404, _)) if !matches!(path.as_str(), "/mcp" | "/mcp/" | "/sse") => {
            " (is the endpoint /mcp? most servers serve MCP there)"
        }
        _ => "",
    }
}

impl TargetArgs {
    /// How prompts name the server: its `--server` name, its URL, or its command line.
    pub(crate) fn server_label(&self) -> String {
        if let Some(name) = &self.server {
            format!("server {name:?}")
        } else if let Some(url) = &self.url {
            format!("the server at {}", redact_url(url))
        } else {
            format!("server `{}`", self.command.join(" "))
        }
    }
}

/// The trace context of every request the command sends (`trace_requests`).
static TRACE: std::sync::OnceLock<mcp_types::trace::TraceContext> = std::sync::OnceLock::new();

/// Sends `context` with every request this process makes from now on.
pub(crate) fn trace_requests(context: mcp_types::trace::TraceContext) {
    let _ = TRACE.set(context);
}

/// The trace context a script gives a command in its environment (`TRACEPARENT`, `TRACESTATE`,
/// `BAGGAGE`, as OpenTelemetry's environment carrier names them), each kept only when valid.
pub(crate) fn environment_trace_context() -> mcp_types::trace::TraceContext {
    let mut meta = mcp_types::JsonObject::new();
    for (variable, key) in [
        ("TRACEPARENT", mcp_types::trace::TRACEPARENT),
        ("TRACESTATE", mcp_types::trace::TRACESTATE),
        ("BAGGAGE", mcp_types::trace::BAGGAGE),
    ] {
        if let Ok(value) = std::env::var(variable) {
            meta.insert(key.to_owned(), value.into());
        }
    }
    mcp_types::trace::TraceContext::from_meta(&meta)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_name_colon_value_and_replace_by_name() {
        assert_eq!(parse_header("X-Api-Key:  k1 ").unwrap(), ("X-Api-Key".to_owned(), "k1".to_owned()));
        assert_eq!(parse_header("Authorization: Bearer a:b").unwrap().1, "Bearer a:b");
        assert!(parse_header("no colon").unwrap_err().contains("'NAME: VALUE'"));
        assert!(parse_header("bad name: v").is_err());
        assert!(parse_header("X: line\nbreak").is_err());
        let config = BTreeMap::from([
            ("authorization".to_owned(), "old".to_owned()),
            ("x".to_owned(), "1".to_owned()),
        ]);
        let merged = with_headers(config, &[("Authorization".to_owned(), "new".to_owned())]);
        assert_eq!(
            merged,
            BTreeMap::from([
                ("Authorization".to_owned(), "new".to_owned()),
                ("x".to_owned(), "1".to_owned())
            ])
        );
    }

    #[test]
    fn timeouts_are_positive_and_bounded() {
        assert_eq!(parse_timeout("2.5"), Ok(Duration::from_millis(2500)));
        assert_eq!(parse_timeout("1e9"), Ok(Duration::from_secs(1_000_000_000)));
        for (text, expected) in [
            ("0", "more than 0"),
            ("-1", "more than 0"),
            ("1e30", "too large"),
            ("inf", "too large"),
            ("NaN", "not a number"),
            ("soon", "not a number"),
            ("1e-12", "too small"),
        ] {
            let error = parse_timeout(text).unwrap_err();
            assert!(error.contains(expected), "{text}: {error}");
        }
    }

    #[test]
    fn passwords_are_redacted() {
        assert_eq!(redact_url("http://user:s3cr3t@127.0.0.1:1/mcp"), "http://user:***@127.0.0.1:1/mcp");
        assert_eq!(redact_url("https://:pw@h/p?q=a:b@c"), "https://:***@h/p?q=a:b@c");
        assert_eq!(redact_url("http://a:b:c@d@h/"), "http://a:***@h/");
        for unchanged in ["http://user@h/", "http://h:8080/a@b", "not a url", "http://h/?x=u:p@y"] {
            assert_eq!(redact_url(unchanged), unchanged);
        }
    }

    #[test]
    fn start_failures_are_recognised() {
        let error = ClientError::Transport {
            error: TransportError::NotSent(
                "cannot start server \"x\": No such file or directory (os error 2)".into(),
            ),
            outcome: mcp_client::Outcome::NotExecuted,
        };
        assert_eq!(start_failure(&error, "server \"x\"").as_deref(), Some("No such file or directory"));
        assert_eq!(start_failure(&error, "server \"y\""), None);
    }
}
