//! One server entry (`[servers.NAME]`, `mcpServers.NAME`, VS Code `servers.NAME`) into an
//! [`UpstreamConfig`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mcp_types::ProtocolVersion;

use super::document::Fields;
use super::expand::{Expander, read_env_file};
use super::{ConfigError, Credentials, Exchange, Sharing, Start, Transport, UpstreamConfig};

/// The transport an entry asks for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Stdio,
    Http,
    Sse,
}

/// Reads one entry; `None` when it is disabled.
pub(crate) fn read(
    f: &Fields<'_>,
    x: &Expander<'_>,
    base_dir: Option<&Path>,
) -> Result<Option<UpstreamConfig>, ConfigError> {
    if f.bool("disabled")? == Some(true) {
        return Ok(None);
    }
    let name = f.upstream.unwrap_or_default();
    let mut upstream = UpstreamConfig::new(name, read_transport(f, x, base_dir)?);

    if let Some(prefix) = f.string("prefix")? {
        let ok = !prefix.is_empty()
            && prefix.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
        if !ok {
            return Err(
                f.invalid("prefix", "must be non-empty ASCII letters, digits, `_`, `-` or `.`".to_owned())
            );
        }
        upstream.prefix = Some(prefix.to_owned());
    }
    upstream.naming = f.naming("naming")?;
    upstream.rename = read_rename(f)?;
    if let Some(start) = f.string("start")? {
        upstream.start = match start {
            "eager" => Start::Eager,
            "lazy" => Start::Lazy,
            other => return Err(f.invalid("start", format!("unknown value {other:?} (eager, lazy)"))),
        };
    }
    if let Some(sharing) = f.string("sharing")? {
        upstream.sharing = match sharing {
            "shared" => Sharing::Shared,
            "per-session" => Sharing::PerSession,
            other => {
                return Err(f.invalid("sharing", format!("unknown value {other:?} (shared, per-session)")));
            }
        };
        if upstream.sharing == Sharing::PerSession && !matches!(upstream.transport, Transport::Stdio { .. }) {
            let message =
                "\"per-session\" is for stdio upstreams (a `command`): an HTTP server keeps its own sessions";
            return Err(f.invalid("sharing", message.to_owned()));
        }
    }
    if let Some(inherit) = f.bool("inherit_env")? {
        if inherit && !matches!(upstream.transport, Transport::Stdio { .. }) {
            return Err(f.invalid("inherit_env", "is for stdio upstreams (a `command`)".to_owned()));
        }
        upstream.inherit_env = inherit;
    }
    if let Some(timeout) = f.millis("start_timeout_ms")? {
        upstream.start_timeout = timeout;
    }
    if let Some(timeout) = f.millis("timeout_ms")? {
        upstream.request_timeout = timeout;
    }
    if let Some(n) = f.uint("max_concurrency")? {
        if n == 0 {
            return Err(f.invalid("max_concurrency", "must be at least 1".to_owned()));
        }
        upstream.max_concurrency = usize::try_from(n).unwrap_or(usize::MAX);
    }
    if let Some(n) = f.uint("breaker_failures")? {
        upstream.breaker_failures = u32::try_from(n).unwrap_or(u32::MAX);
    }
    if let Some(cooldown) = f.millis("breaker_cooldown_ms")? {
        upstream.breaker_cooldown = cooldown;
    }
    if let Some(version) = f.string("protocol_version")? {
        if ProtocolVersion::parse(version).is_none() {
            let known: Vec<&str> = ProtocolVersion::ALL.iter().map(|v| v.as_str()).collect();
            let message = format!("unknown protocol version {version:?} (known: {})", known.join(", "));
            return Err(f.invalid("protocol_version", message));
        }
        upstream.protocol_version = Some(version.to_owned());
    }
    upstream.credentials = read_credentials(f, x, &upstream.transport)?;
    Ok(Some(upstream))
}

/// `credentials` and the members of its mode (`audience`, `token_endpoint`, `client_id`,
/// `client_secret`, `scope`).
fn read_credentials(
    f: &Fields<'_>,
    x: &Expander<'_>,
    transport: &Transport,
) -> Result<Credentials, ConfigError> {
    let name = f.upstream.unwrap_or_default();
    let audience = f.string("audience")?;
    let token_endpoint = f.string("token_endpoint")?;
    let client_id = f.string("client_id")?;
    let client_secret = f.string("client_secret")?;
    let scope = f.string("scope")?;
    let mode = f.string("credentials")?.unwrap_or("gateway");
    let url = match transport {
        Transport::Http { url, .. } | Transport::Sse { url, .. } => Some(url.as_str()),
        Transport::Stdio { .. } => None,
    };
    let expand = |value: Option<&str>, field: &str| value.map(|v| x.expand(v, name, field)).transpose();
    let exchange_only = [
        ("token_endpoint", token_endpoint.is_some()),
        ("client_id", client_id.is_some()),
        ("client_secret", client_secret.is_some()),
        ("scope", scope.is_some()),
    ];
    if mode != "token-exchange"
        && let Some((field, _)) = exchange_only.iter().find(|(_, given)| *given)
    {
        return Err(f.invalid(field, "is for `credentials = \"token-exchange\"`".to_owned()));
    }
    if audience.is_some() && !matches!(mode, "passthrough" | "token-exchange") {
        return Err(
            f.invalid("audience", "is for `credentials = \"passthrough\"` or \"token-exchange\"".to_owned())
        );
    }
    let per_caller = |mode: &str| -> Result<&str, ConfigError> {
        url.ok_or_else(|| {
            f.invalid(
                "credentials",
                format!("{mode:?} is for HTTP upstreams (a `url`): a stdio server is not sent tokens"),
            )
        })
    };
    Ok(match mode {
        "gateway" => Credentials::Gateway,
        "none" => Credentials::None,
        "passthrough" => {
            let url = per_caller(mode)?;
            let audience = expand(audience, "audience")?.unwrap_or_else(|| url.to_owned());
            Credentials::Passthrough { audience }
        }
        "token-exchange" => {
            let url = per_caller(mode)?;
            let Some(endpoint) = expand(token_endpoint, "token_endpoint")? else {
                return Err(f.invalid(
                    "token_endpoint",
                    "is needed with `credentials = \"token-exchange\"`".to_owned(),
                ));
            };
            if !is_http_url(&endpoint) {
                return Err(
                    f.invalid("token_endpoint", format!("{endpoint:?} is not an http:// or https:// URL"))
                );
            }
            let Some(client_id) = expand(client_id, "client_id")?.filter(|c| !c.is_empty()) else {
                return Err(
                    f.invalid("client_id", "is needed with `credentials = \"token-exchange\"`".to_owned())
                );
            };
            Credentials::TokenExchange(Exchange {
                token_endpoint: endpoint,
                client_id,
                client_secret: expand(client_secret, "client_secret")?.filter(|s| !s.is_empty()),
                resource: url.to_owned(),
                audience: expand(audience, "audience")?,
                scope: expand(scope, "scope")?,
            })
        }
        other => {
            return Err(f.invalid(
                "credentials",
                format!("unknown value {other:?} (gateway, none, passthrough, token-exchange)"),
            ));
        }
    })
}

/// `http://` or `https://` and something after it.
fn is_http_url(url: &str) -> bool {
    ["http://", "https://"]
        .iter()
        .any(|s| url.len() > s.len() && url.get(..s.len()).is_some_and(|p| p.eq_ignore_ascii_case(s)))
}

fn read_rename(f: &Fields<'_>) -> Result<BTreeMap<String, String>, ConfigError> {
    let mut rename = BTreeMap::new();
    let mut targets: BTreeMap<&str, &str> = BTreeMap::new();
    for (from, to) in f.string_map("rename")? {
        let field = format!("rename.{from}");
        if from.is_empty() {
            return Err(f.invalid(&field, "the name to rename is empty".to_owned()));
        }
        if to.is_empty() {
            return Err(f.invalid(&field, "the new name is empty".to_owned()));
        }
        if let Some(first) = targets.insert(to, from) {
            return Err(f.invalid(&field, format!("{to:?} is already the new name of {first:?}")));
        }
        rename.insert(from.to_owned(), to.to_owned());
    }
    Ok(rename)
}

fn read_transport(
    f: &Fields<'_>,
    x: &Expander<'_>,
    base_dir: Option<&Path>,
) -> Result<Transport, ConfigError> {
    let name = f.upstream.unwrap_or_default();
    // Every known member is type-checked, whichever transport it belongs to.
    let command = f.string("command")?;
    let args = f.string_array("args")?;
    let env = f.string_map("env")?;
    let cwd = f.string("cwd")?;
    let env_file = f.string("envFile")?;
    let url = f.string("url")?;
    let headers = f.string_map("headers")?;
    let kind = match f.string("type")? {
        None => None,
        Some("stdio") => Some(Kind::Stdio),
        Some("http" | "streamable-http" | "streamableHttp") => Some(Kind::Http),
        Some("sse") => Some(Kind::Sse),
        Some(other) => {
            return Err(f.invalid(
                "type",
                format!("unknown transport {other:?} (stdio, http, streamable-http, sse)"),
            ));
        }
    };
    let kind = match (command, url, kind) {
        (Some(_), Some(_), _) => {
            return Err(f.invalid("command", "both `command` and `url` are given: keep one".to_owned()));
        }
        (None, None, _) => {
            return Err(
                f.invalid("command", "neither `command` (stdio) nor `url` (HTTP) is given".to_owned())
            );
        }
        (None, Some(_), Some(Kind::Stdio)) => {
            return Err(f.invalid("type", "`type` is \"stdio\" but there is no `command`".to_owned()));
        }
        (Some(_), None, Some(kind @ (Kind::Http | Kind::Sse))) => {
            let t = if kind == Kind::Sse { "sse" } else { "http" };
            return Err(f.invalid("type", format!("`type` is {t:?} but there is no `url`")));
        }
        (Some(_), None, _) => Kind::Stdio,
        (None, Some(_), kind) => kind.unwrap_or(Kind::Http),
    };

    let expand_map =
        |members: Vec<(&str, &str)>, field: &str| -> Result<BTreeMap<String, String>, ConfigError> {
            members
                .into_iter()
                .map(|(k, v)| Ok((k.to_owned(), x.expand(v, name, &format!("{field}.{k}"))?)))
                .collect()
        };

    if kind == Kind::Stdio {
        let command = x.expand(command.unwrap_or_default(), name, "command")?;
        if command.is_empty() {
            return Err(f.invalid("command", "is empty".to_owned()));
        }
        let args = args
            .into_iter()
            .enumerate()
            .map(|(i, a)| x.expand(a, name, &format!("args[{i}]")))
            .collect::<Result<Vec<_>, _>>()?;
        let mut vars = BTreeMap::new();
        if let Some(env_file) = env_file {
            let path = PathBuf::from(x.expand(env_file, name, "envFile")?);
            let path = match base_dir {
                _ if path.is_absolute() => path,
                Some(dir) => dir.join(path),
                None => {
                    let message =
                        "a relative `envFile` needs the configuration's directory (load it from a file)";
                    return Err(f.invalid("envFile", message.to_owned()));
                }
            };
            vars.extend(read_env_file(&path, f.at("envFile"))?);
        }
        vars.extend(expand_map(env, "env")?);
        let cwd = cwd.map(|c| x.expand(c, name, "cwd").map(PathBuf::from)).transpose()?;
        return Ok(Transport::Stdio { command, args, env: vars, cwd });
    }

    let url = x.expand(url.unwrap_or_default(), name, "url")?;
    if !is_http_url(&url) {
        return Err(f.invalid("url", format!("{url:?} is not an http:// or https:// URL")));
    }
    let headers = expand_map(headers, "headers")?;
    Ok(match kind {
        Kind::Sse => Transport::Sse { url, headers },
        _ => Transport::Http { url, headers },
    })
}
