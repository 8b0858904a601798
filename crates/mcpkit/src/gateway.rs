//! `mcpkit gateway`: one MCP endpoint in front of the servers of a configuration file.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use mcp_gateway::Gateway;
use mcp_gateway::config::{self, GatewayConfig};

use crate::{SHUTDOWN_GRACE, auth, bind_http, signals};

/// How often the configuration file is checked for changes.
const CONFIG_POLL: Duration = Duration::from_millis(500);

#[derive(clap::Args, Debug)]
pub(crate) struct GatewayArgs {
    /// The configuration: the gateway's own TOML (`.toml`), an `mcpServers` JSON file (Claude
    /// Desktop, Claude Code's `.mcp.json`, Cursor) or VS Code's `mcp.json`. Reloaded when it
    /// changes, and on SIGHUP. Without it: the demonstration server (`mcpkit serve`) and the
    /// servers of your own `mcpServers` file ($MCPKIT_CONFIG, else
    /// ~/.config/mcpkit/config.json) when there is one, served over HTTP on a loopback port.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Serve over stdin/stdout (the default).
    #[arg(long, conflicts_with = "http")]
    stdio: bool,
    /// Serve Streamable HTTP (both eras, and HTTP+SSE at /sse) on this address: HOST:PORT, or
    /// PORT on 127.0.0.1; port 0 picks a free port. `GET /status` reports the upstreams.
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
    /// Start the upstreams, print the status as JSON and exit: 0 when every eager upstream is
    /// ready and no name conflicts, 1 otherwise.
    #[arg(long, conflicts_with_all = ["http", "stdio"])]
    check: bool,
    #[command(flatten)]
    threads: crate::runtime::ThreadsArgs,
    #[command(flatten)]
    auth: auth::AuthArgs,
    #[command(flatten)]
    metrics: crate::metrics::MetricsArgs,
    #[command(flatten)]
    log: crate::logging::ServerLogArgs,
    #[command(subcommand)]
    action: Option<GatewayAction>,
}

#[derive(clap::Subcommand, Debug)]
enum GatewayAction {
    /// Validate a configuration without starting anything: prints each upstream, exits 0; or
    /// the first problem (file, upstream, field) and exit 2.
    Check {
        /// The configuration file.
        #[arg(value_name = "CONFIG")]
        file: PathBuf,
    },
    /// Show a running gateway's upstreams (its `GET /status`): state, transport, revision,
    /// counts, last error. Exits 0 when every upstream is up and no name conflicts, 1
    /// otherwise, 2 when the gateway cannot be reached.
    Status {
        /// The gateway: its MCP URL as `mcpkit gateway --http` printed it
        /// (http://127.0.0.1:PORT/mcp), its base URL, HOST:PORT or PORT on 127.0.0.1.
        #[arg(value_name = "URL")]
        url: String,
        /// Print the status as JSON, as the endpoint returned it.
        #[arg(long)]
        json: bool,
    },
}

impl GatewayArgs {
    /// How its diagnostics are written.
    pub(crate) fn log(&self) -> &crate::logging::ServerLogArgs {
        &self.log
    }
}

/// The policy rules of `file` (trusted: refused when every user may write it).
pub(crate) fn load_policy(file: &std::path::Path) -> Result<mcp_policy::RulePolicy, String> {
    let text = config::trust::read_trusted(file, config::trust::Holds::Settings)?;
    text.parse::<mcp_policy::RulePolicy>().map_err(|e| format!("{}: {e}", file.display()))
}

/// `mcpkit gateway check CONFIG`.
fn validate(file: &std::path::Path) -> ExitCode {
    let config = match config::load(file) {
        Ok(config) => config,
        Err(e) => return fail(e),
    };
    if let Some(key) = &config.settings.session_key_file {
        let read = config::trust::read_trusted(key, config::trust::Holds::Secret);
        if let Err(e) = read.and_then(|t| mcp_http::SessionKey::parse(&t).map(|_| ())) {
            return fail(format!("session_key_file {}: {e}", key.display()));
        }
    }
    if let Some(policy) = &config.settings.policy_file {
        match load_policy(policy) {
            Ok(policy) => println!("policy: {} rule(s)", policy.len()),
            Err(e) => return fail(format!("policy_file {e}")),
        }
    }
    println!("{}: {} upstream(s)", file.display(), config.upstreams.len());
    for u in &config.upstreams {
        let what = match &u.transport {
            config::Transport::Stdio { command, .. } => format!("stdio: {command}"),
            config::Transport::Http { url, .. } => format!("http: {}", crate::target::redact_url(url)),
            config::Transport::Sse { url, .. } => format!("sse: {}", crate::target::redact_url(url)),
        };
        println!("  {} ({what})", u.name);
    }
    ExitCode::SUCCESS
}

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("mcpkit: {message}");
    ExitCode::from(2)
}

pub(crate) fn run(args: GatewayArgs) -> ExitCode {
    match &args.action {
        Some(GatewayAction::Check { file }) => return validate(file),
        Some(GatewayAction::Status { url, json }) => return crate::gateway_status::run(url, *json),
        None => {}
    }
    let runtime = match args.threads.runtime() {
        Ok(rt) => rt,
        Err(e) => return fail(e),
    };
    let code = runtime.block_on(async move {
        // Caught before the upstreams start: a signal while they connect stops the gateway
        // and them (the start is dropped, and the children it started with it), instead of
        // killing the gateway by default and leaving its upstreams behind.
        let mut signals = match signals::Signals::catch() {
            Ok(signals) => signals,
            Err(e) => return fail(format!("cannot catch signals: {e}")),
        };
        let config = match &args.config {
            Some(file) => config::load(file).map_err(|e| e.to_string()),
            None => demonstration(),
        };
        let config = match config {
            Ok(config) => config,
            Err(e) => return fail(e),
        };
        let session_key = match &config.settings.session_key_file {
            Some(file) => match config::trust::read_trusted(file, config::trust::Holds::Secret)
                .and_then(|t| mcp_http::SessionKey::parse(&t))
            {
                Ok(key) => Some(key),
                Err(e) => return fail(format!("session_key_file {}: {e}", file.display())),
            },
            None => None,
        };
        let policy_file = config.settings.policy_file.clone();
        let policy = match &config.settings.policy_file {
            Some(file) => match load_policy(file) {
                Ok(policy) => Some(policy),
                Err(e) => return fail(format!("policy_file {e}")),
            },
            None => None,
        };
        // HTTP upstreams use what `mcpkit login` stored (refreshed as it expires).
        let options =
            mcp_gateway::GatewayOptions::new().upstream_auth(|upstream| match &upstream.transport {
                config::Transport::Http { url, headers } | config::Transport::Sse { url, headers } => {
                    crate::login::upstream_oauth(url, headers)
                }
                config::Transport::Stdio { .. } => None,
            });
        // Upstream latency goes to the metrics once they exist (they sample the gateway).
        let metrics_cell: std::sync::Arc<std::sync::OnceLock<mcp_metrics::Metrics>> = Default::default();
        let cell = metrics_cell.clone();
        let options = options.upstream_timing(move |upstream, took, answered| {
            if let Some(metrics) = cell.get() {
                metrics.upstream_request(upstream, took, answered);
            }
        });
        // Reloads replace the rules in place (`Reloader`).
        let policy = policy.map(|rules| std::sync::Arc::new(mcp_policy::Reloadable::new(rules)));
        let options = match &policy {
            Some(policy) => options.policy(policy.clone()),
            None => options,
        };
        // Replicas sharing the session key accept each other's MRTR states and task ids.
        let options = match &session_key {
            Some(key) => options.request_state_key(mcp_server::StateKey::from_bytes(key.derived_state_key())),
            None => options,
        };
        let http = args
            .http
            .clone()
            .or_else(|| (args.config.is_none() && !args.stdio).then(|| "127.0.0.1:0".to_owned()));
        let transport = if http.is_some() { "tcp" } else { "pipe" };
        // Traced when the OTEL_* variables say where: a SERVER span per request, and a CLIENT
        // span per request sent upstream (set before the upstreams connect).
        let tracing = if args.check { None } else { crate::metrics::tracing("mcpkit-gateway", transport) };
        let options = match &tracing {
            Some(tracing) => options.upstream_requests(std::sync::Arc::new(tracing.clone())),
            None => options,
        };
        // A SIGHUP while starting does what it does once serving: with a configuration file, a
        // reload (done once the gateway serves); without one, nothing over stdio, and a stop
        // over HTTP (and for `--check`).
        let reloads = args.config.is_some() && !args.check;
        let ignores_hangup = !args.check && http.is_none();
        let mut hangup = false;
        let starting = Gateway::start_with(config, options);
        tokio::pin!(starting);
        let gateway = loop {
            tokio::select! {
                started = &mut starting => match started {
                    Ok(gateway) => break gateway,
                    Err(e) => return fail(e),
                },
                number = signals.next_number() => {
                    if number == signals::SIGHUP && (reloads || ignores_hangup) {
                        hangup |= reloads;
                        continue;
                    }
                    return signals::status(number);
                }
            }
        };
        let mut exporter = None;
        if !args.check {
            // On by default, on loopback; `--metrics off` turns them off.
            let metrics = crate::metrics::gateway_metrics(&gateway, transport);
            let otlp = crate::metrics::otlp("mcpkit-gateway");
            let served =
                args.metrics.address(Some(crate::metrics::GATEWAY_DEFAULT)).is_some() || otlp.is_some();
            if served {
                let _ = metrics_cell.set(metrics.clone());
            }
            exporter = otlp.map(|export| metrics.export_otlp(export));
            crate::metrics::observe(
                &gateway.server(),
                served.then_some(&metrics),
                tracing.as_ref(),
                &args.log,
            );
            if let Err(e) = args.metrics.start(&metrics, Some(crate::metrics::GATEWAY_DEFAULT)).await {
                gateway.close().await;
                return fail(e);
            }
        }
        let reloader =
            args.config.clone().map(|path| Reloader::new(gateway.clone(), policy, path, policy_file));
        if hangup && let Some(reloader) = &reloader {
            reloader.reload().await;
        }
        let (code, stop) = if args.check {
            (check(&gateway), Stop::Closing)
        } else if let Some(addr) = http {
            serve_http(&gateway, &args, &addr, session_key, reloader, signals).await
        } else {
            (serve_stdio(&gateway, reloader, signals).await, Stop::Closing)
        };
        if stop == Stop::AtOnce {
            // The runtime's shutdown drops the upstreams' tasks, and each takes its process
            // group down (SIGKILL): no closing handshake, no last export.
            return code;
        }
        gateway.close().await;
        if let Some(exporter) = exporter {
            exporter.shutdown().await;
        }
        // The last spans, sent by the exporter's task on this runtime.
        if let Some(tracing) = tracing {
            tracing.close().await;
        }
        code
    });
    // Upstream tasks still winding down are not waited for: dropped, each kills its child's
    // process group (after a close, the children are already reaped).
    runtime.shutdown_timeout(Duration::from_secs(1));
    code
}

/// How serving ended: with the gateway to close (its upstreams asked to stop, the last metrics
/// and spans sent), or at once on a second signal.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stop {
    Closing,
    AtOnce,
}

fn check(gateway: &Gateway) -> ExitCode {
    let status = gateway.status();
    let text = serde_json::to_string_pretty(&status).unwrap_or_default();
    println!("{text}");
    let eager_down = status.upstreams.iter().any(|u| u.state == mcp_gateway::UpstreamState::Down);
    if eager_down || !status.conflicts.is_empty() || !status.left_out.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Serves stdin/stdout until the input ends or a signal (SIGINT, SIGTERM) arrives — then the
/// gateway is closed, its upstreams with it; SIGHUP reloads the configuration.
async fn serve_stdio(
    gateway: &Gateway,
    reloader: Option<Reloader>,
    mut signals: signals::Signals,
) -> ExitCode {
    let reloading = reloader.clone().map(|reloader| tokio::spawn(reloader.watch()));
    let server = gateway.server();
    let serving = server.serve_stdio();
    tokio::pin!(serving);
    let code = loop {
        tokio::select! {
            served = &mut serving => break match served {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => fail(e),
            },
            number = signals.next_number() => {
                if number == signals::SIGHUP {
                    if let Some(reloader) = &reloader {
                        reloader.reload().await;
                    }
                    continue;
                }
                break ExitCode::from(u8::try_from(128 + number).unwrap_or(1));
            }
        }
    };
    if let Some(reloading) = reloading {
        reloading.abort();
    }
    code
}

/// `/mcp/{upstream}`: each upstream's own endpoint (`Gateway::upstream_server`), with the
/// gateway endpoint's settings (Host/Origin, limits, authorization). Looked up per request, so
/// upstreams a reload adds are served and removed ones are not; each keeps its transport (its
/// legacy sessions) while its server lives.
fn upstream_endpoints(gateway: &Gateway, http: &mcp_http::HttpConfig) -> axum::Router {
    // Read without a lock on every request (a snapshot of name -> the server it was made for
    // and its router); a request for an upstream not in it, or whose server was replaced by a
    // reload, makes the next snapshot under the lock, dropping the endpoints of upstreams
    // that are gone.
    type Endpoints = std::collections::HashMap<String, (mcp_server::Server, axum::Router)>;
    let endpoints: std::sync::Arc<arc_swap::ArcSwap<Endpoints>> = Default::default();
    let making: std::sync::Arc<std::sync::Mutex<()>> = Default::default();
    let (gateway, http) = (gateway.clone(), http.clone());
    let serve = move |axum::extract::Path(name): axum::extract::Path<String>,
                      request: axum::extract::Request| {
        let router = gateway.upstream_server(&name).map(|server| {
            if let Some((kept, router)) = endpoints.load().get(&name)
                && kept.same(&server)
            {
                return router.clone();
            }
            let _making = making.lock().unwrap_or_else(|e| e.into_inner());
            let current = endpoints.load_full();
            if let Some((kept, router)) = current.get(&name)
                && kept.same(&server)
            {
                return router.clone();
            }
            // Observed as the gateway's endpoint is (metrics, traces, the request log).
            if let Some(observer) = gateway.server().observer() {
                server.observe(observer.clone());
            }
            let config = http.clone().endpoint(format!("/mcp/{name}"));
            let router = mcp_http::McpHttp::new(server.clone(), config).router();
            let mut next: Endpoints = current
                .iter()
                .filter(|(_, (kept, _))| gateway.upstream_server_is(kept))
                .map(|(name, entry)| (name.clone(), entry.clone()))
                .collect();
            next.insert(name.clone(), (server, router.clone()));
            endpoints.store(std::sync::Arc::new(next));
            router
        });
        async move {
            use axum::response::IntoResponse;
            use tower::ServiceExt;
            match router {
                Some(router) => router.oneshot(request).await.into_response(),
                None => {
                    (axum::http::StatusCode::NOT_FOUND, format!("no upstream {name:?}\n")).into_response()
                }
            }
        }
    };
    axum::Router::new().route("/mcp/{upstream}", axum::routing::any(serve))
}

async fn serve_http(
    gateway: &Gateway,
    args: &GatewayArgs,
    addr: &str,
    session_key: Option<mcp_http::SessionKey>,
    reloader: Option<Reloader>,
    // Caught before the address is announced (before the upstreams started): whoever reads it
    // may signal at once.
    signals: signals::Signals,
) -> (ExitCode, Stop) {
    let bound = match bind_http(addr).await {
        Ok(bound) => bound,
        Err(e) => return (fail(e), Stop::Closing),
    };
    let mut http = match args.auth.http_config(bound.local_addr()) {
        // Replicas with the same key serve each other's legacy sessions.
        Ok(config) => config.session_key(session_key),
        Err(e) => return (fail(e), Stop::Closing),
    };
    // Each verified token is kept with its principal, for the upstreams configured to see the
    // caller's credentials (passthrough, token exchange); the others never receive it.
    http.auth = http.auth.map(|auth| auth.keep_tokens(true));
    let limits = mcp_http::ConnectionLimits::of(&http);
    let endpoints = upstream_endpoints(gateway, &http);
    let mcp = mcp_http::McpHttp::new(gateway.server(), http);
    let status_gateway = gateway.clone();
    let status = axum::Router::new()
        .route(
            "/status",
            axum::routing::get(move || {
                let gateway = status_gateway.clone();
                async move {
                    let body = serde_json::to_string(&gateway.status()).unwrap_or_default();
                    ([(axum::http::header::CONTENT_TYPE, "application/json")], body)
                }
            }),
        )
        // The same Host/Origin rules as the MCP endpoint (no DNS rebinding to read it).
        .layer(mcp.host_guard_layer());
    let app = mcp.router().merge(status).merge(endpoints);
    eprintln!("listening on http://{}/mcp", bound.local_addr());
    eprintln!("each upstream's own endpoint: http://{}/mcp/{{upstream}}", bound.local_addr());
    for upstream in gateway.status().upstreams {
        eprintln!(
            "{}",
            crate::gateway_status::describe(&serde_json::to_value(&upstream).unwrap_or_default())
        );
    }
    let reloading = reloader.clone().map(|reloader| tokio::spawn(reloader.watch()));
    // SIGHUP reloads; SIGINT and SIGTERM stop (a second one at once).
    let on_hangup = reloader.map(|reloader| {
        move || {
            let reloader = reloader.clone();
            async move { reloader.reload().await }
        }
    });
    let (shutdown, at_once) = signals::graceful_stop(signals, SHUTDOWN_GRACE, on_hangup);
    let ended = tokio::select! {
        served = mcp_http::serve_app_until(app, bound, limits, shutdown, SHUTDOWN_GRACE) => match served {
            Ok(()) => (ExitCode::SUCCESS, Stop::Closing),
            Err(e) => (fail(e), Stop::Closing),
        },
        // A second signal: stop now, requests in flight and upstreams with the runtime.
        number = at_once => (signals::status(number), Stop::AtOnce),
    };
    if let Some(reloading) = reloading {
        reloading.abort();
    }
    ended
}

/// The configuration of `mcpkit gateway` without `--config`: the demonstration server as its
/// one upstream (`mcpkit serve --stdio`, this very binary), then the servers of the user's
/// `mcpServers` file when there is one.
fn demonstration() -> Result<GatewayConfig, String> {
    let exe = std::env::current_exe().map_or_else(|_| "mcpkit".to_owned(), |p| p.display().to_string());
    let demo = config::UpstreamConfig::new(
        "demo",
        config::Transport::Stdio {
            command: exe,
            args: vec!["serve".into(), "--stdio".into()],
            env: Default::default(),
            cwd: None,
        },
    );
    let mut gateway = GatewayConfig { settings: Default::default(), upstreams: vec![demo] };
    if let Ok(file) = crate::servers::user_config()
        && file.is_file()
    {
        let mine = config::load(&file).map_err(|e| e.to_string())?;
        gateway.upstreams.extend(mine.upstreams.into_iter().filter(|u| u.name != "demo"));
    }
    Ok(gateway)
}

/// Reloads the configuration file — and the policy's rules file it names — while the gateway
/// serves: on SIGHUP, and when either file changes. A configuration or rules file that cannot
/// be served is refused whole, with its error, and the running one kept.
#[derive(Clone)]
struct Reloader {
    gateway: Gateway,
    /// The policy in force, when the gateway started with one (`policy_file`).
    policy: Option<std::sync::Arc<mcp_policy::Reloadable>>,
    path: PathBuf,
    /// The rules file of the configuration in force (watched too).
    policy_file: std::sync::Arc<std::sync::Mutex<Option<PathBuf>>>,
}

impl Reloader {
    fn new(
        gateway: Gateway,
        policy: Option<std::sync::Arc<mcp_policy::Reloadable>>,
        path: PathBuf,
        policy_file: Option<PathBuf>,
    ) -> Self {
        Reloader {
            gateway,
            policy,
            path,
            policy_file: std::sync::Arc::new(std::sync::Mutex::new(policy_file)),
        }
    }

    fn policy_file(&self) -> Option<PathBuf> {
        self.policy_file.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    async fn reload(&self) {
        let refuse = |e: &dyn std::fmt::Display| {
            eprintln!("mcpkit: reload refused, the running configuration is kept: {e}");
        };
        let config: GatewayConfig = match config::load(&self.path) {
            Ok(config) => config,
            Err(e) => return refuse(&e),
        };
        // The rules are read (and compiled) before anything changes: bad rules refuse the whole
        // reload, as a bad configuration does.
        let rules = match (&config.settings.policy_file, &self.policy) {
            (Some(file), Some(_)) => match load_policy(file) {
                Ok(rules) => Some(rules),
                Err(e) => return refuse(&format!("policy_file {e}")),
            },
            (None, None) => None,
            // Serving under a policy or without one is decided at start: a reload that would
            // open every tool to every caller (or close them) is not a reload's to make.
            (Some(_), None) => {
                return refuse(
                    &"policy_file cannot be added by a reload: restart the gateway to serve under a policy",
                );
            }
            (None, Some(_)) => {
                return refuse(
                    &"policy_file cannot be removed by a reload: restart the gateway to serve without one",
                );
            }
        };
        let policy_file = config.settings.policy_file.clone();
        if let Err(e) = self.gateway.reload(config).await {
            return refuse(&e);
        }
        *self.policy_file.lock().unwrap_or_else(|e| e.into_inner()) = policy_file;
        if let (Some(rules), Some(policy)) = (rules, &self.policy) {
            let count = rules.len();
            policy.replace(rules);
            eprintln!("policy: {count} rule(s) in force");
            // What each caller may see can have changed: clients list again.
            let server = self.gateway.server();
            for change in
                [mcp_server::Change::Tools, mcp_server::Change::Prompts, mcp_server::Change::Resources]
            {
                server.notify(change);
            }
        }
        eprintln!("configuration reloaded from {}", self.path.display());
    }

    /// Reloads whenever the configuration's or the rules' modification time changes.
    async fn watch(self) {
        let stamps = |reloader: &Reloader| {
            (modified(&reloader.path), reloader.policy_file().and_then(|f| modified(&f)))
        };
        let mut last = stamps(&self);
        loop {
            tokio::time::sleep(CONFIG_POLL).await;
            let now = stamps(&self);
            if now != last && now.0.is_some() {
                self.reload().await;
                // The rules file may be another one now.
                last = stamps(&self);
            }
        }
    }
}

fn modified(path: &std::path::Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}
