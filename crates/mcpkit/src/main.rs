//! `mcpkit`: the command line of the mcpkit MCP implementation.
//!
//! `mcpkit serve` runs a demonstration server for people trying MCP clients. `mcpkit check`
//! reads newline-delimited JSON-RPC (a stdio transcript) and reports, line by line, what each
//! message is or exactly what is wrong with it — the same framing and envelope rules an mcpkit
//! server applies. `info`, `list`, `call`, `read`, `prompt`, `complete` and `listen` talk to any
//! MCP server (`--url`, a command line after `--`, or `--server NAME` from an `mcpServers` config).
//! `-v` shows the wire trace on stderr; `completions` and `man` are generated from the same
//! definitions the parser uses. A usage error is one line on stderr and exit status 2.

mod app;
mod auth;
mod bench;
mod check;
mod client;
mod credentials;
mod demo;
mod gateway;
mod gateway_status;
mod generate;
mod interactive;
mod listen;
mod logging;
mod login;
mod metrics;
mod output;
mod progress;
mod record;
mod replay;
mod runtime;
mod save;
mod server_log;
mod servers;
mod shell;
mod signals;
mod skill;
mod status;
mod target;
mod task;
mod terminal;
mod usage;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};
use mcp_types::ProtocolVersion;

/// How long `serve --http` lets requests in flight finish after a signal.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// A short tour, at the end of `mcpkit --help`.
const TOUR: &str = "\
Examples:
  mcpkit serve --http 127.0.0.1:8080                 # the demo server, on HTTP
  mcpkit list tools --url http://127.0.0.1:8080/mcp  # its tools
  mcpkit call echo --arg text=hi --url http://127.0.0.1:8080/mcp
  mcpkit list tools -- mcpkit serve --stdio          # a server as a child process
  mcpkit -v call add '{\"a\":1,\"b\":2}' -- mcpkit serve --stdio   # with the wire trace
  mcpkit list tools --server files --config ~/.config/mcpkit/config.json
      # config.json: {\"mcpServers\": {\"files\": {\"command\": \"npx\", \"args\": [\"-y\", \"@modelcontextprotocol/server-filesystem\", \".\"]}}}

Exit status: 0 success; 1 a tool reported an error (or `check` found a malformed message);
2 usage (the command line or the configuration); 3 cannot connect, lost or timed out; 4 the
server answered with an error; 5 no tool, prompt or resource of that name.";

#[derive(Parser)]
#[command(name = "mcpkit", version, about = "The Model Context Protocol, from the shell", after_help = TOUR)]
struct Cli {
    /// Show what goes over the wire, on stderr: -v the JSON-RPC messages and HTTP status lines,
    /// -vv also the client's debug logs and a stdio server's stderr (serve: more logs).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check newline-delimited JSON-RPC from stdin (or a file) as an MCP stdio peer would.
    ///
    /// Prints one JSON object per input message: its kind, method and id, or the JSON-RPC
    /// error a server would answer with. Exits 1 when any message is malformed.
    #[command(
        after_help = "Example:\n  printf '%s\\n' '{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}' | mcpkit check"
    )]
    Check(check::Args),
    /// List the protocol revisions mcpkit knows, newest first, with their era.
    #[command(
        after_help = "Examples:\n  mcpkit versions   # 2026-07-28  modern, then the legacy revisions\n  mcpkit versions --json | jq -r '.[].version'"
    )]
    Versions(VersionsArgs),
    /// Run the demonstration server (tools, resources, prompts that show what MCP can do).
    #[command(
        after_help = "Examples:\n  mcpkit serve --stdio   # then point an MCP client at this command\n  mcpkit serve --http 127.0.0.1:8080 --auth-issuer https://auth.example.com --auth-scope mcp:basic"
    )]
    Serve(ServeArgs),
    /// Serve one MCP endpoint in front of the servers of a configuration file.
    ///
    /// Upstreams are stdio commands, Streamable HTTP URLs (either era) and HTTP+SSE URLs;
    /// their tools, prompts, resources and templates are served as one list, each call routed
    /// to its owner, in the era each client speaks. The file is reloaded when it changes.
    #[command(
        after_help = "Examples:\n  mcpkit gateway --config gateway.toml --http 127.0.0.1:8080\n  mcpkit gateway --config ~/.cursor/mcp.json --stdio   # one mcpServers entry for all\n  mcpkit gateway --config gateway.toml --check        # start, report, exit\n  mcpkit gateway status http://127.0.0.1:8080/mcp     # a running gateway's upstreams"
    )]
    Gateway(gateway::GatewayArgs),
    #[command(flatten)]
    Client(client::ClientCommand),
    /// Record a server's session: a stdio proxy to put in place of the server in a host's
    /// config (for an HTTP server, with --url), writing every message both ways, with its
    /// time, to FILE (JSON Lines).
    #[command(
        after_help = "Examples:\n  mcpkit record session.jsonl -- npx -y @modelcontextprotocol/server-everything\n  mcpkit record session.jsonl --url https://mcp.example.com/mcp --header 'X-Api-Key: ...'\n  # in a host's mcpServers: {\"command\": \"mcpkit\", \"args\": [\"record\", \"/tmp/s.jsonl\", \"--\", \"my-server\"]}"
    )]
    Record(record::RecordArgs),
    /// Serve a recording as a stdio server (a mock for a host's tests), or with --check send its
    /// client side to a live server and report every answer that differs.
    #[command(
        after_help = "Examples:\n  mcpkit list tools -- mcpkit replay session.jsonl\n  mcpkit replay --check session.jsonl -- my-server --its-flags   # exits 1 when an answer differs"
    )]
    Replay(replay::ReplayArgs),
    /// An interactive session on one lasting connection: tab completion of tool, prompt and
    /// resource names and of argument keys, history, `call`, `read`, `prompt`, and `listen`
    /// with notifications shown as they arrive.
    #[command(
        after_help = "Examples:\n  mcpkit shell -- mcpkit serve --stdio\n  mcpkit shell --url http://127.0.0.1:8080/mcp\n  mcpkit shell --server files"
    )]
    Shell(shell::ShellArgs),
    /// Log in to an MCP server that requires OAuth authorization, and keep its tokens.
    ///
    /// Runs the authorization code grant in the browser through a loopback redirect
    /// (http://127.0.0.1:PORT/callback): the URL to open is printed on stderr (and opened when
    /// stderr is a terminal, unless --no-browser or $CI). Tokens are stored per authorization
    /// server in $MCPKIT_CREDENTIALS_DIR, else $XDG_CONFIG_HOME/mcpkit/credentials, else
    /// ~/.config/mcpkit/credentials (files readable by you only), and used by every command
    /// given --url (or an mcpServers `url` entry without an Authorization header). Bearer
    /// tokens only, unless --dpop: DPoP-bound tokens are never stored. Authorization servers on
    /// private networks are contacted only when the MCP server itself is on loopback or a
    /// private network. Exits 2 when the login fails.
    #[command(
        after_help = "Examples:\n  mcpkit login https://mcp.example.com/mcp\n  mcpkit login https://mcp.example.com/mcp --no-browser\n  MCPKIT_CLIENT_SECRET=... mcpkit login https://mcp.example.com/mcp --client-id my-app"
    )]
    Login(login::LoginArgs),
    /// Forget the stored tokens for an MCP server (the client registration is kept).
    #[command(after_help = "Example:\n  mcpkit logout https://mcp.example.com/mcp")]
    Logout(login::LogoutArgs),
    /// Print a shell completion script (generated from mcpkit's own command definitions).
    #[command(
        after_help = "Examples:\n  mcpkit completions bash > ~/.local/share/bash-completion/completions/mcpkit\n  mcpkit completions zsh > ~/.zfunc/_mcpkit   # with fpath+=~/.zfunc before compinit\n  mcpkit completions fish > ~/.config/fish/completions/mcpkit.fish"
    )]
    Completions(generate::CompletionsArgs),
    /// Print the man page of mcpkit, or write one page per command with --out.
    #[command(
        after_help = "Examples:\n  mcpkit man | man -l -\n  mcpkit man --out /usr/local/share/man/man1   # mcpkit.1, mcpkit-list.1, ..."
    )]
    Man(generate::ManArgs),
}

#[derive(clap::Args)]
struct VersionsArgs {
    /// Print JSON (the default when stdout is not a terminal): an array of
    /// `{"version", "era", "batches"}` objects.
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args, Debug)]
struct ServeArgs {
    /// Serve over stdin/stdout (the default).
    #[arg(long, conflicts_with = "http")]
    stdio: bool,
    /// Serve Streamable HTTP on this address: HOST:PORT (a host name, an IP address, [IPv6]),
    /// or just PORT on 127.0.0.1. Port 0 picks a free port; `listening on URL` tells which.
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
    /// Also accept requests whose Host is NAME (repeatable): the name or address clients reach
    /// this server by, when it is not a loopback one (`*`: any Host and Origin — no protection
    /// against DNS rebinding). Without it only loopback names are accepted (and 0.0.0.0 or [::]
    /// when bound to every interface).
    #[arg(long = "allow-host", value_name = "NAME", requires = "http")]
    allow_host: Vec<String>,
    /// Worker threads of the HTTP server (1 to 1024): the CPUs this process may use (its
    /// affinity and CPU quota) when not given. With 1, one thread runs everything: the default
    /// on one CPU. (Over stdio one thread always serves.)
    #[arg(long, value_name = "N", requires = "http", value_parser = runtime::threads_value)]
    threads: Option<std::num::NonZeroUsize>,
    #[command(flatten)]
    auth: auth::AuthArgs,
    #[command(flatten)]
    metrics: metrics::MetricsArgs,
    #[command(flatten)]
    log: logging::ServerLogArgs,
    /// Policy rules (CEL, in TOML; docs/OPERATIONS.md): who may see and use which tools,
    /// prompts and resources. Hidden items leave every list and are refused as unknown; each
    /// refusal goes to the audit log on stderr.
    #[arg(long, value_name = "FILE")]
    policy: Option<std::path::PathBuf>,
    /// Also serve the Agent Skills in DIR (the skills extension): each directory under it with a
    /// SKILL.md, at its path below DIR (`skill://PATH/SKILL.md`), listed by `skills/list`.
    /// Symbolic links are not followed; a skill over 512 files or 16 MiB is refused.
    #[arg(long, value_name = "DIR")]
    skills: Option<std::path::PathBuf>,
}

/// Widens the Host and Origin allowlists of a server bound to `addr`: its own unspecified
/// address when bound to every interface (the URL it prints), and each `--allow-host` name (`*`
/// lifts both checks). The note to print when bound to every interface with no name given.
fn allow_hosts(
    config: &mut mcp_http::HttpConfig,
    addr: std::net::SocketAddr,
    allow: &[String],
) -> Option<String> {
    let port = addr.port();
    let mut add = |host: String| {
        for scheme in ["http", "https"] {
            config.allowed_origins.push(format!("{scheme}://{host}"));
        }
        config.allowed_hosts.push(host);
    };
    if addr.ip().is_unspecified() {
        add(addr.to_string());
    }
    if allow.iter().any(|name| name == "*") {
        config.allowed_hosts.clear();
        config.allowed_origins.clear();
        return None;
    }
    for name in allow {
        // A name with its port as given; without one, at the port served (and as given, for a
        // proxy in front on the default port).
        let bare = name.trim_start_matches('[').trim_end_matches(']');
        let has_port = name.starts_with('[') && name.contains("]:")
            || (!name.starts_with('[') && bare.contains(':') && bare.matches(':').count() == 1);
        if has_port {
            add(name.clone());
        } else {
            let host = if bare.contains(':') { format!("[{bare}]") } else { bare.to_owned() };
            add(format!("{host}:{port}"));
            add(host);
        }
    }
    (addr.ip().is_unspecified() && allow.is_empty()).then(|| {
        format!(
            "note: serving every interface, but only loopback names and {addr} are accepted as Host; \
             add --allow-host NAME for each name clients use (or '*' for any)"
        )
    })
}

/// `mcpkit serve` parsed alone: the same global `-v` and the same `serve` arguments as [`Cli`],
/// without building the rest of the command tree (clap builds every subcommand's arguments
/// before parsing: a tenth of a server's start-up). Anything it does not accept — `--help`, an
/// error — is parsed again by [`Cli`], so help and errors are the full command's.
#[derive(Parser)]
#[command(name = "mcpkit")]
struct ServeCli {
    // Word for word `Cli::verbose`: `tests::serve_alone_parses_as_the_full_command_does`
    // compares the two definitions, help included.
    /// Show what goes over the wire, on stderr: -v the JSON-RPC messages and HTTP status lines,
    /// -vv also the client's debug logs and a stdio server's stderr (serve: more logs).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: ServeOnly,
}

#[derive(Subcommand)]
enum ServeOnly {
    Serve(ServeArgs),
}

/// The arguments of `mcpkit serve` with its verbosity, when `args` is a valid `serve` command
/// line (the first word after the options is `serve`).
fn parse_serve_alone(args: &[std::ffi::OsString]) -> Option<(u8, ServeArgs)> {
    let first_word = args.iter().skip(1).find(|a| !a.to_string_lossy().starts_with('-'))?;
    if first_word != "serve" {
        return None;
    }
    let ServeCli { verbose, command: ServeOnly::Serve(serve) } = ServeCli::try_parse_from(args).ok()?;
    Some((verbose, serve))
}

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some((verbose, args)) = parse_serve_alone(&args) {
        logging::init_server(verbose, &args.log);
        return serve(args);
    }
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => return usage::report(&e, &Cli::command(), &args),
    };
    match cli.command {
        Command::Serve(args) => {
            logging::init_server(cli.verbose, &args.log);
            serve(args)
        }
        Command::Check(args) => check::run(args),
        Command::Gateway(args) => {
            logging::init_server(cli.verbose, args.log());
            gateway::run(args)
        }
        Command::Client(command) => {
            logging::init_client(cli.verbose);
            client::run(command)
        }
        Command::Login(args) => {
            logging::init_client(cli.verbose);
            login::login(args)
        }
        Command::Logout(args) => login::logout(args),
        Command::Record(args) => record::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Shell(args) => {
            logging::init_client(cli.verbose);
            shell::run(args)
        }
        Command::Completions(args) => generate::completions(args, Cli::command()),
        Command::Man(args) => generate::man(args, Cli::command()),
        Command::Versions(args) => versions(&args),
    }
}

/// `mcpkit versions`: the revisions, newest first, as JSON or as text on a terminal.
fn versions(args: &VersionsArgs) -> ExitCode {
    use std::io::IsTerminal;
    let era = |v: &ProtocolVersion| if v.is_modern() { "modern" } else { "legacy" };
    let text = if args.json || !std::io::stdout().is_terminal() {
        let list: Vec<serde_json::Value> = ProtocolVersion::ALL
            .iter()
            .rev()
            .map(|v| serde_json::json!({ "version": v.as_str(), "era": era(v), "batches": v.allows_batches() }))
            .collect();
        format!("{}\n", serde_json::Value::Array(list))
    } else {
        ProtocolVersion::ALL
            .iter()
            .rev()
            .map(|v| format!("{v}  {}{}\n", era(v), if v.allows_batches() { " (batches)" } else { "" }))
            .collect()
    };
    output::exit_status(output::write(&text))
}

fn serve(args: ServeArgs) -> ExitCode {
    let policy = match &args.policy {
        Some(file) => match gateway::load_policy(file) {
            Ok(policy) => Some(std::sync::Arc::new(policy) as std::sync::Arc<dyn mcp_server::policy::Policy>),
            Err(e) => {
                eprintln!("mcpkit: --policy {e}");
                return ExitCode::from(2);
            }
        },
        None => None,
    };
    let server = match demo::server(policy, args.skills.as_deref()) {
        Ok(server) => server,
        Err(e) => {
            eprintln!("mcpkit: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = if args.http.is_some() {
        runtime::ThreadsArgs { threads: args.threads }.runtime()
    } else {
        stdio_runtime()
    };
    let runtime = match runtime {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mcpkit: {e}");
            return ExitCode::from(2);
        }
    };
    // Metrics and the request log only when asked for: without an observer the request path
    // does none of it. Metrics are counted for the Prometheus listener and for an OTLP push.
    let transport = if args.http.is_some() { "tcp" } else { "pipe" };
    let otlp = metrics::otlp("mcpkit");
    let metrics = (args.metrics.address(None).is_some() || otlp.is_some())
        .then(|| mcp_metrics::Metrics::new(transport));
    let exporter = match (&metrics, otlp) {
        (Some(metrics), Some(export)) => {
            let _runtime = runtime.enter();
            Some(metrics.export_otlp(export))
        }
        _ => None,
    };
    let tracing = runtime.block_on(async { metrics::tracing("mcpkit", transport) });
    metrics::observe(&server, metrics.as_ref(), tracing.as_ref(), &args.log);
    let code = serve_on(args, server, metrics, &runtime);
    if let Some(exporter) = exporter {
        // What was counted since the last push goes out before the process ends.
        runtime.block_on(exporter.shutdown());
    }
    if let Some(tracing) = tracing {
        // Its exports are a task on this runtime, which sends the last ones here.
        runtime.block_on(tracing.close());
    }
    code
}

/// `serve`, its observers set.
fn serve_on(
    args: ServeArgs,
    server: mcp_server::Server,
    metrics: Option<mcp_metrics::Metrics>,
    runtime: &tokio::runtime::Runtime,
) -> ExitCode {
    if let Some(metrics) = &metrics {
        if let Err(e) = runtime.block_on(args.metrics.start(metrics, None)) {
            eprintln!("mcpkit: {e}");
            return ExitCode::from(2);
        }
    }
    if let Some(addr) = args.http {
        return runtime.block_on(async move {
            // SIGINT/SIGTERM/SIGHUP: stop accepting, let requests in flight finish (a second
            // signal stops at once). Caught before the address is announced: whoever reads it
            // may signal at once.
            let signals = match signals::Signals::catch() {
                Ok(signals) => signals,
                Err(e) => {
                    eprintln!("mcpkit: cannot catch signals: {e}");
                    return ExitCode::from(2);
                }
            };
            let bound = match bind_http(&addr).await {
                Ok(bound) => bound,
                Err(e) => {
                    eprintln!("mcpkit: {e}");
                    return ExitCode::from(2);
                }
            };
            let mut config = match args.auth.http_config(bound.local_addr()) {
                Ok(config) => config,
                Err(e) => {
                    eprintln!("mcpkit: {e}");
                    return ExitCode::from(2);
                }
            };
            let note = allow_hosts(&mut config, bound.local_addr(), &args.allow_host);
            eprintln!("listening on http://{}/mcp", bound.local_addr());
            if let Some(note) = note {
                eprintln!("{note}");
            }
            if let Some(auth) = &config.auth {
                eprintln!(
                    "authorization: tokens from {} for {} (metadata at {})",
                    auth.issuers().join(", "),
                    auth.resource(),
                    auth.resource_metadata_url()
                );
            }
            let (shutdown, at_once) = signals::graceful_stop(signals, SHUTDOWN_GRACE, signals::no_hangup());
            tokio::select! {
                served = mcp_http::serve_until(server, bound, Some(config), shutdown, SHUTDOWN_GRACE) => {
                    match served {
                        Ok(()) => ExitCode::SUCCESS,
                        Err(e) => {
                            eprintln!("mcpkit: {e}");
                            ExitCode::from(2)
                        }
                    }
                }
                // A second signal: the requests still in flight are dropped with the runtime.
                number = at_once => signals::status(number),
            }
        });
    }
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
        // Typed at, it would wait silently for JSON-RPC.
        eprintln!(
            "mcpkit serve: an MCP server on stdin/stdout, waiting for a client's JSON-RPC messages \
             (Ctrl-D ends it). Point a host at this command, or try: mcpkit list tools -- mcpkit serve"
        );
    }
    match runtime.block_on(server.serve_stdio()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcpkit: {e}");
            ExitCode::from(2)
        }
    }
}

/// The runtime of `serve --stdio`: one thread. A stdio server has one connection, whose stdin
/// and stdout are on the reactor (pipes and sockets, see mcp-server's `serve_stdio`): reading,
/// the handlers and writing interleave on the thread that reads, with no hand-off between
/// threads. The blocking pool is still there for handlers that call `spawn_blocking` (and for
/// a stdin or stdout that is a file or a terminal).
fn stdio_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread().enable_all().build()
}

/// Binds `serve --http`'s address: `HOST:PORT` with a host name (resolved; the first address
/// that can be bound wins), an IPv4 address or a bracketed IPv6 address, or just `PORT` (or
/// `:PORT`) on 127.0.0.1.
async fn bind_http(addr: &str) -> Result<mcp_http::Bound, String> {
    let port_only = addr.strip_prefix(':').unwrap_or(addr);
    let spec = match port_only.parse::<u16>() {
        Ok(port) => format!("127.0.0.1:{port}"),
        Err(_) if addr.contains(':') => addr.to_owned(),
        Err(_) => return Err(format!("invalid address {addr:?}: expected HOST:PORT or PORT")),
    };
    let candidates: Vec<std::net::SocketAddr> = tokio::net::lookup_host(spec.as_str())
        .await
        .map_err(|e| format!("invalid address {addr:?}: {e}"))?
        .collect();
    let mut last_error = None;
    for candidate in candidates {
        match mcp_http::bind(candidate).await {
            Ok(bound) => return Ok(bound),
            Err(e) => last_error = Some(format!("cannot listen on {addr} ({candidate}): {e}")),
        }
    }
    Err(last_error.unwrap_or_else(|| format!("invalid address {addr:?}: it resolves to no address")))
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use clap::{CommandFactory, Parser};

    use super::{Cli, Command, ServeCli, allow_hosts, parse_serve_alone};

    fn argv(line: &str) -> Vec<OsString> {
        line.split_whitespace().map(OsString::from).collect()
    }

    /// The short parser and the full one define `-v` and `serve`'s arguments identically, and
    /// agree on every `serve` command line the short one accepts.
    #[test]
    fn hosts_are_allowed_as_asked() {
        let local: std::net::SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let mut config = mcp_http::HttpConfig::for_bind(local);
        assert_eq!(
            allow_hosts(&mut config, local, &["mcp.example.com".into(), "10.0.0.5:9000".into()]),
            None
        );
        for host in ["localhost:8080", "mcp.example.com:8080", "mcp.example.com", "10.0.0.5:9000"] {
            assert!(config.allowed_hosts.iter().any(|h| h == host), "{host}: {:?}", config.allowed_hosts);
        }
        assert!(config.allowed_origins.iter().any(|o| o == "https://mcp.example.com:8080"));
        let every: std::net::SocketAddr = "0.0.0.0:8080".parse().unwrap();
        let mut config = mcp_http::HttpConfig::for_bind(every);
        let note = allow_hosts(&mut config, every, &[]).expect("a note");
        assert!(note.contains("--allow-host"), "{note}");
        assert!(config.allowed_hosts.iter().any(|h| h == "0.0.0.0:8080"), "the URL it prints");
        let mut config = mcp_http::HttpConfig::for_bind(every);
        allow_hosts(&mut config, every, &["*".into()]);
        assert!(config.allowed_hosts.is_empty() && config.allowed_origins.is_empty());
        let mut config = mcp_http::HttpConfig::for_bind(local);
        allow_hosts(&mut config, local, &["::1".into(), "[fe80::1]:9".into()]);
        for host in ["[::1]:8080", "[fe80::1]:9"] {
            assert!(config.allowed_hosts.iter().any(|h| h == host), "{host}: {:?}", config.allowed_hosts);
        }
    }

    #[test]
    fn serve_alone_parses_as_the_full_command_does() {
        let full = Cli::command();
        let alone = ServeCli::command();
        fn describe<'a>(args: impl Iterator<Item = &'a clap::Arg>) -> Vec<String> {
            args.map(|a| format!("{a:?}")).collect()
        }
        let globals = |c: &clap::Command| describe(c.get_arguments().filter(|a| a.is_global_set()));
        assert_eq!(globals(&full), globals(&alone));
        let serve = |c: &clap::Command| describe(c.find_subcommand("serve").expect("serve").get_arguments());
        assert!(!serve(&full).is_empty());
        assert_eq!(serve(&full), serve(&alone));

        for line in [
            "mcpkit serve",
            "mcpkit serve --stdio",
            "mcpkit -vv serve --http 127.0.0.1:0",
            "mcpkit serve -v --http 8080 --auth-issuer https://a.example --auth-scope s",
        ] {
            let (verbose, alone) = parse_serve_alone(&argv(line)).expect(line);
            let cli = Cli::try_parse_from(argv(line)).expect(line);
            let Command::Serve(full) = cli.command else { panic!("{line}: not serve") };
            assert_eq!((verbose, format!("{alone:?}")), (cli.verbose, format!("{full:?}")), "{line}");
        }
    }

    /// Help, errors and other commands are left to the full parser.
    #[test]
    fn anything_else_goes_to_the_full_parser() {
        for line in [
            "mcpkit serve --help",
            "mcpkit serve --stdio --http 1",
            "mcpkit serve --bogus",
            "mcpkit --version serve",
            "mcpkit list tools -- mcpkit serve --stdio",
            "mcpkit check serve",
            "mcpkit",
        ] {
            assert!(parse_serve_alone(&argv(line)).is_none(), "{line}");
        }
    }
}
