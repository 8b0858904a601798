//! `mcpkit login URL`, `mcpkit logout URL`, and the OAuth client every HTTP target gets.
//!
//! The authorization code grant runs through a loopback redirect (RFC 8252 §7.3): mcpkit listens
//! on `127.0.0.1` on a port the system picks, prints the authorization URL (and opens a browser
//! when it can), and waits for the browser to come back to `http://127.0.0.1:PORT/callback`.
//! Tokens are kept in the [`FileStore`].

use std::io::IsTerminal;
use std::net::IpAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, bail};
use mcp_client::ClientBuilder;
use mcp_client::auth::{
    AuthError, AuthorizationPrompt, ClientRegistration, CredentialStore, DpopPolicy, OAuthClient,
    PreRegistered,
};
use mcp_client::reqwest::{self, Method, Url, header};
use mcp_client::transport::BoxFuture;
use mcp_client::transport::http::{HttpAuth, HttpConfig, Refusal};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

use crate::credentials::FileStore;
use crate::target::redact_url;

/// The environment variable holding the secret of a `--client-id` (never a flag: flags show up
/// in process listings).
const CLIENT_SECRET_ENV: &str = "MCPKIT_CLIENT_SECRET";
/// The largest request head the loopback listener reads.
const MAX_REQUEST_HEAD: usize = 8 * 1024;
/// How long one connection to the loopback listener may take to send its request.
const CONNECTION_TIMEOUT: Duration = Duration::from_secs(10);

/// How mcpkit obtains OAuth tokens (shared by `login` and every client command).
#[derive(clap::Args, Debug, Clone, Default)]
pub(crate) struct OAuthArgs {
    /// Do not open a browser for authorization: only print the URL to open.
    #[arg(long)]
    pub(crate) no_browser: bool,
    /// Ask for DPoP-bound tokens (RFC 9449) when the authorization server supports them. Their
    /// key lives only in this process, so they are never stored: the next command authorizes
    /// again. Without --dpop, mcpkit uses bearer tokens.
    #[arg(long)]
    pub(crate) dpop: bool,
    /// How long to wait for the browser to come back, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 300)]
    pub(crate) login_timeout: u64,
}

/// `mcpkit login`.
#[derive(clap::Args, Debug)]
pub(crate) struct LoginArgs {
    /// The MCP server's URL.
    url: String,
    /// A client id registered at the authorization server beforehand (instead of a dynamic
    /// registration); its secret, if it has one, is read from MCPKIT_CLIENT_SECRET. It is
    /// remembered for that authorization server.
    #[arg(long, value_name = "ID")]
    client_id: Option<String>,
    #[command(flatten)]
    oauth: OAuthArgs,
}

/// `mcpkit logout`.
#[derive(clap::Args, Debug)]
pub(crate) struct LogoutArgs {
    /// The MCP server's URL.
    url: String,
}

/// An [`OAuthClient`] for one MCP server, with its store and prompt.
pub(crate) struct Authorization {
    pub(crate) oauth: Arc<OAuthClient>,
    pub(crate) store: Arc<FileStore>,
    pub(crate) prompt: Arc<LoopbackPrompt>,
}

impl Authorization {
    /// The OAuth client for the MCP server at `url`, keeping credentials in `store`. The
    /// browser flow runs only when `interactive`; otherwise a server demanding authorization
    /// makes [`Authorization::login_needed`] true.
    ///
    /// Metadata and token requests to private network addresses are allowed when the MCP
    /// server itself is on loopback or a private address (the user chose that network);
    /// otherwise only public addresses (and the MCP server's own host) are contacted.
    pub(crate) async fn new(
        url: &str,
        args: &OAuthArgs,
        interactive: bool,
        store: FileStore,
        pre_registered: Option<PreRegistered>,
    ) -> anyhow::Result<Self> {
        let parsed = Url::parse(url).with_context(|| format!("invalid URL {:?}", redact_url(url)))?;
        let open_browser = interactive
            && !args.no_browser
            && std::io::stderr().is_terminal()
            && std::env::var_os("CI").is_none();
        let timeout = Duration::from_secs(args.login_timeout.max(1));
        let prompt = Arc::new(LoopbackPrompt::bind(interactive, open_browser, timeout).await?);
        let store = Arc::new(store);
        let mut builder = OAuthClient::builder()
            .client_name("mcpkit")
            .redirect_uri(&prompt.redirect_uri)?
            .store(store.clone())
            .prompt(prompt.clone())
            .dpop(if args.dpop { DpopPolicy::WhenSupported } else { DpopPolicy::Never })
            .allow_private_networks(is_local_network(&parsed));
        if let Some(pre) = pre_registered {
            builder = builder.pre_registered(pre);
        }
        let oauth = Arc::new(builder.build()?);
        Ok(Authorization { oauth, store, prompt })
    }

    /// Whether the server demanded authorization that needs a browser, but there was no terminal.
    pub(crate) fn login_needed(&self) -> bool {
        self.prompt.login_needed.load(Ordering::SeqCst)
    }

    /// When a login is needed: the one line saying so (and why stored credentials could not be
    /// used, when reading them failed).
    pub(crate) fn login_hint(&self, url: &str) -> Option<String> {
        if !self.login_needed() {
            return None;
        }
        let url = redact_url(url);
        let hint = format!(
            "{url} requires authorization: run 'mcpkit login {url}', or give a token or key with \
             --header 'Authorization: Bearer TOKEN' (or `headers` in its config entry)"
        );
        Some(match self.store.last_error() {
            Some(error) => format!("{hint} ({error})"),
            None => hint,
        })
    }

    /// Obtains a token before the MCP session starts when the server refuses a request without
    /// one, so that the browser flow is not cut short by the handshake's timeouts: a `ping`
    /// whose answer is only looked at for `401` (or `403 insufficient_scope`).
    pub(crate) async fn authorize_up_front(&self, url: &str) -> anyhow::Result<()> {
        let url = Url::parse(url).with_context(|| format!("invalid URL {:?}", redact_url(url)))?;
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(Duration::from_secs(30))
            .build()?;
        for _ in 0..3 {
            let presented = self.oauth.authorize(&Method::POST, &url).await?;
            let response = http
                .post(url.clone())
                .headers(presented.clone())
                .header(header::CONTENT_TYPE, "application/json")
                .header(header::ACCEPT, "application/json, text/event-stream")
                .body(r#"{"jsonrpc":"2.0","id":"mcpkit-login","method":"ping"}"#)
                .send()
                .await
                .map_err(|e| {
                    let error = anyhow::anyhow!(
                        "cannot reach {}: {}",
                        redact_url(url.as_str()),
                        mcp_client::error::with_causes(&e.without_url())
                    );
                    crate::status::tag(crate::status::Status::Connection, error)
                })?;
            let status = response.status().as_u16();
            let headers = response.headers().clone();
            drop(response);
            let challenged = headers
                .get_all(header::WWW_AUTHENTICATE)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .any(|v| v.to_ascii_lowercase().contains("insufficient_scope"));
            if status != 401 && !(status == 403 && challenged) {
                return Ok(());
            }
            let refusal = Refusal::new(status, Method::POST, url.clone(), headers, presented);
            if !self.oauth.refused(&refusal).await? {
                return Ok(());
            }
        }
        Ok(())
    }
}

/// Gives an HTTP target the OAuth client with the stored credentials, unless its configuration
/// sets an `Authorization` header (then that header is the authorization). With a terminal
/// (stdin and stderr), a server demanding authorization gets the browser flow right away;
/// without one, the returned [`Authorization`] tells when a login is needed. No OAuth when no
/// credentials directory can be determined (no `$HOME` nor `$MCPKIT_CREDENTIALS_DIR`).
pub(crate) async fn attach(
    config: &mut HttpConfig,
    args: &OAuthArgs,
) -> anyhow::Result<Option<Authorization>> {
    if config.headers.contains_key(header::AUTHORIZATION) {
        return Ok(None);
    }
    let Ok(dir) = crate::credentials::default_dir() else { return Ok(None) };
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let auth = Authorization::new(&config.url, args, interactive, FileStore::at(dir), None).await?;
    if interactive {
        auth.authorize_up_front(&config.url)
            .await
            .with_context(|| format!("authorization at {} failed", redact_url(&config.url)))?;
    }
    config.auth = Some(auth.oauth.clone());
    Ok(Some(auth))
}

/// OAuth for an HTTP upstream of `mcpkit gateway` (unless its configuration sets an
/// `Authorization` header): the credentials `mcpkit login URL` stored, refreshed as they
/// expire. A gateway has no user at hand: where a login is needed, the upstream fails to start
/// with the line saying what to run (in the status and the logs), and is tried again with its
/// backoff — after `mcpkit login`, it comes up by itself. `None` when no credentials directory
/// can be determined.
pub(crate) fn upstream_oauth(
    url: &str,
    headers: &std::collections::BTreeMap<String, String>,
) -> Option<Arc<dyn HttpAuth>> {
    if headers.keys().any(|name| name.eq_ignore_ascii_case("authorization")) {
        return None;
    }
    let dir = crate::credentials::default_dir().ok()?;
    let local = Url::parse(url).is_ok_and(|parsed| is_local_network(&parsed));
    let built = OAuthClient::builder()
        .client_name("mcpkit")
        // The redirect of `mcpkit login`'s flow; the gateway itself never runs one.
        .redirect_uri("http://127.0.0.1/callback")
        .and_then(|builder| {
            builder
                .store(Arc::new(FileStore::at(dir)))
                .prompt(Arc::new(LoginFirst { url: redact_url(url) }))
                .allow_private_networks(local)
                .build()
        });
    match built {
        Ok(oauth) => Some(Arc::new(oauth)),
        Err(e) => {
            tracing::warn!(url = %redact_url(url), "no OAuth for this upstream: {e}");
            None
        }
    }
}

/// The prompt of a gateway's upstream: there is no browser to open, only a command to name.
struct LoginFirst {
    url: String,
}

impl AuthorizationPrompt for LoginFirst {
    fn authorize(&self, _authorization_url: Url) -> BoxFuture<'_, Result<Url, AuthError>> {
        Box::pin(async move {
            Err(AuthError::Prompt(format!(
                "{} requires authorization: run 'mcpkit login {}'",
                self.url, self.url
            )))
        })
    }
}

/// Whether the URL's host is loopback or a private address.
fn is_local_network(url: &Url) -> bool {
    let Some(host) = url.host_str() else { return false };
    let host = host.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
    if host == "localhost" || host.ends_with(".localhost") {
        return true;
    }
    match host.parse::<IpAddr>() {
        Ok(IpAddr::V4(ip)) => ip.is_loopback() || ip.is_private() || ip.is_link_local(),
        Ok(IpAddr::V6(ip)) => ip.is_loopback() || (ip.segments()[0] & 0xfe00) == 0xfc00,
        Err(_) => false,
    }
}

/// The key tokens for the MCP server at `url` are stored under (its canonical URL, as the
/// OAuth client computes it).
fn resource_key(url: &str) -> anyhow::Result<String> {
    let mut parsed = Url::parse(url).with_context(|| format!("invalid URL {:?}", redact_url(url)))?;
    parsed.set_fragment(None);
    Ok(mcp_auth::metadata::canonical_resource(&parsed))
}

/// The user-agent step on a loopback redirect: prints the authorization URL, opens a browser
/// when asked, and waits for `GET /callback` on `127.0.0.1`.
pub(crate) struct LoopbackPrompt {
    listener: tokio::sync::Mutex<TcpListener>,
    redirect_uri: String,
    interactive: bool,
    open_browser: bool,
    timeout: Duration,
    login_needed: AtomicBool,
}

impl LoopbackPrompt {
    async fn bind(interactive: bool, open_browser: bool, timeout: Duration) -> anyhow::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .context("cannot listen on 127.0.0.1 for the authorization redirect")?;
        let port = listener.local_addr()?.port();
        Ok(LoopbackPrompt {
            listener: tokio::sync::Mutex::new(listener),
            redirect_uri: format!("http://127.0.0.1:{port}/callback"),
            interactive,
            open_browser,
            timeout,
            login_needed: AtomicBool::new(false),
        })
    }

    /// Serves connections until one brings the callback with the expected `state`.
    async fn wait_for_callback(&self, state: Option<String>) -> Url {
        let listener = self.listener.lock().await;
        let (sender, mut receiver) = mpsc::channel::<Url>(1);
        let mut connections = tokio::task::JoinSet::new();
        let base = Arc::new(self.redirect_uri.clone());
        let state = Arc::new(state);
        loop {
            tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        let (base, state, sender) = (base.clone(), state.clone(), sender.clone());
                        connections.spawn(async move {
                            let answer = tokio::time::timeout(CONNECTION_TIMEOUT, serve(stream, &base, &state));
                            if let Ok(Some(url)) = answer.await {
                                let _ = sender.send(url).await;
                            }
                        });
                    }
                    // Out of descriptors and the like: give the system a moment.
                    Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
                },
                Some(url) = receiver.recv() => return url,
                // Reap finished connection tasks.
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
            }
        }
    }
}

impl AuthorizationPrompt for LoopbackPrompt {
    fn authorize(&self, authorization_url: Url) -> BoxFuture<'_, Result<Url, AuthError>> {
        Box::pin(async move {
            if !self.interactive {
                self.login_needed.store(true, Ordering::SeqCst);
                return Err(AuthError::Prompt(
                    "authorization needs a browser, and there is no terminal".into(),
                ));
            }
            eprintln!("Open this URL in your browser to authorize mcpkit: {authorization_url}");
            if self.open_browser {
                open_browser(authorization_url.as_str());
            }
            let state =
                authorization_url.query_pairs().find(|(k, _)| k == "state").map(|(_, v)| v.into_owned());
            tokio::time::timeout(self.timeout, self.wait_for_callback(state)).await.map_err(|_| {
                AuthError::Prompt(format!(
                    "the browser did not come back within {} s (see --login-timeout)",
                    self.timeout.as_secs()
                ))
            })
        })
    }
}

/// Starts the system's browser on `url`; failure is ignored (the URL is printed anyway).
fn open_browser(url: &str) {
    let program = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(unix) {
        "xdg-open"
    } else {
        return;
    };
    let spawned = std::process::Command::new(program)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Ok(mut child) = spawned {
        std::thread::spawn(move || {
            let _ = child.wait();
        });
    }
}

/// Answers one connection to the loopback listener; the callback URL when it is the expected
/// callback (or an error callback with the expected `state`).
async fn serve(mut stream: TcpStream, base: &str, state: &Option<String>) -> Option<Url> {
    let mut head = Vec::with_capacity(1024);
    let mut buffer = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && !head.windows(2).any(|w| w == b"\n\n") {
        if head.len() >= MAX_REQUEST_HEAD {
            respond(&mut stream, "431 Request Header Fields Too Large", "request too large").await;
            return None;
        }
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => head.extend_from_slice(&buffer[..n.min(MAX_REQUEST_HEAD - head.len())]),
        }
    }
    let text = String::from_utf8_lossy(&head);
    let mut parts = text.lines().next().unwrap_or("").split(' ');
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let path = target.split('?').next().unwrap_or("");
    if method != "GET" || path != "/callback" {
        respond(&mut stream, "404 Not Found", "mcpkit: nothing here").await;
        return None;
    }
    let Ok(url) = Url::parse(base).and_then(|b| b.join(target)) else {
        respond(&mut stream, "400 Bad Request", "mcpkit: not a valid callback").await;
        return None;
    };
    let param = |name: &str| url.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned());
    if state.is_some() && param("state") != *state {
        respond(
            &mut stream,
            "400 Bad Request",
            "mcpkit: this is not the authorization mcpkit is waiting for",
        )
        .await;
        return None;
    }
    match param("error") {
        Some(error) => {
            let description = param("error_description").map(|d| format!(": {d}")).unwrap_or_default();
            let message = format!("mcpkit: authorization failed ({error}{description})");
            respond(&mut stream, "200 OK", &message).await;
        }
        None => respond(&mut stream, "200 OK", "mcpkit: authorized, you can close this tab").await,
    }
    Some(url)
}

async fn respond(stream: &mut TcpStream, status: &str, message: &str) {
    let body = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>mcpkit</title></head><body><p>{}</p></body></html>\n",
        html_escape(message)
    );
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\ncache-control: no-store\r\nreferrer-policy: no-referrer\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

fn html_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn block_on(work: impl std::future::Future<Output = anyhow::Result<()>>) -> ExitCode {
    crate::status::block_on("mcpkit", async { work.await.map(|()| ExitCode::SUCCESS) })
}

/// `mcpkit login URL`: 0 when logged in, 2 (one line on stderr) otherwise.
pub(crate) fn login(args: LoginArgs) -> ExitCode {
    block_on(run_login(args))
}

/// `mcpkit logout URL`: 0 whether or not there was anything to forget.
pub(crate) fn logout(args: LogoutArgs) -> ExitCode {
    block_on(async move {
        let key = resource_key(&args.url)?;
        let store = FileStore::open_default()?;
        let url = redact_url(&args.url);
        if store.remove_resource(&key)? {
            println!("logged out of {url}: its tokens were removed from {}", store.dir().display());
        } else {
            println!("not logged in to {url}: nothing to remove");
        }
        Ok(())
    })
}

async fn run_login(args: LoginArgs) -> anyhow::Result<()> {
    let key = resource_key(&args.url)?;
    let secret = std::env::var(CLIENT_SECRET_ENV).ok().filter(|s| !s.is_empty());
    let pre_registered = args.client_id.as_ref().map(|id| {
        let credentials = PreRegistered::new(id.clone());
        match &secret {
            Some(secret) => credentials.secret(secret.clone()),
            None => credentials,
        }
    });
    // A login always authorizes anew; the new tokens replace the stored ones.
    let store = FileStore::open_default()?.ignoring_stored_tokens();
    let auth = Authorization::new(&args.url, &args.oauth, true, store, pre_registered).await?;
    let url = redact_url(&args.url);
    let failed = || format!("login to {url} failed");
    auth.authorize_up_front(&args.url).await.with_context(failed)?;
    // The session is the proof that the token is accepted.
    let config = HttpConfig::new(args.url.clone()).auth(auth.oauth.clone());
    let client = ClientBuilder::new("mcpkit", env!("CARGO_PKG_VERSION"))
        .connect_http(config)
        .await
        .with_context(failed)?;
    client.close().await;
    let Some(issuer) = auth.oauth.issuer() else {
        println!("{url} did not ask for authorization: nothing to store");
        return Ok(());
    };
    if let Some(client_id) = args.client_id {
        // Remembered as this authorization server's registration, for the commands that follow.
        let registration = ClientRegistration {
            client_id,
            client_secret: secret,
            token_endpoint_auth_method: None,
            client_secret_expires_at: None,
        };
        auth.store.save_client(&issuer, registration).await?;
    }
    let scope = auth.oauth.granted_scope().filter(|s| !s.trim().is_empty()).unwrap_or_else(|| "none".into());
    println!("logged in to {url} (issuer {issuer}, scope {scope})");
    if !auth.store.is_persisted(&key) {
        if let Some(error) = auth.store.last_error() {
            bail!("logged in to {url}, but the tokens could not be stored: {error}");
        }
        eprintln!(
            "mcpkit: the token is bound to a key of this process only (DPoP): nothing was stored; log in without --dpop to stay logged in"
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_networks() {
        for url in
            ["http://127.0.0.1:8080/mcp", "http://localhost/mcp", "http://[::1]:1/mcp", "http://10.1.2.3/"]
        {
            assert!(is_local_network(&Url::parse(url).unwrap()), "{url}");
        }
        for url in ["https://mcp.example.com/mcp", "https://8.8.8.8/mcp", "http://[2001:db8::1]/"] {
            assert!(!is_local_network(&Url::parse(url).unwrap()), "{url}");
        }
    }

    #[test]
    fn resource_keys_match_the_oauth_client() {
        assert_eq!(resource_key("HTTP://Example.COM:443/mcp#x").unwrap(), "http://example.com:443/mcp");
        assert_eq!(resource_key("https://example.com/").unwrap(), "https://example.com");
        assert!(resource_key("not a url").is_err());
    }

    #[test]
    fn escaping() {
        assert_eq!(
            html_escape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[tokio::test]
    async fn the_loopback_prompt_ignores_junk_and_returns_the_callback() {
        let prompt = Arc::new(LoopbackPrompt::bind(true, false, Duration::from_secs(60)).await.unwrap());
        let authority =
            prompt.redirect_uri.trim_start_matches("http://").trim_end_matches("/callback").to_owned();
        let waiting = tokio::spawn({
            let prompt = prompt.clone();
            async move {
                let url = Url::parse("https://as.example/authorize?state=s1&client_id=c").unwrap();
                prompt.authorize(url).await
            }
        });
        let exchange = |request: &'static str| {
            let authority = authority.clone();
            async move {
                let mut stream = TcpStream::connect(&authority).await.unwrap();
                stream.write_all(request.as_bytes()).await.unwrap();
                let mut answer = String::new();
                let _ = stream.read_to_string(&mut answer).await;
                answer
            }
        };
        // A silent connection, junk, another path, another state: none of them ends the wait.
        let _silent = TcpStream::connect(&authority).await.unwrap();
        assert!(exchange("\x16\x03\x01 junk\r\n\r\n").await.starts_with("HTTP/1.1 404"));
        assert!(exchange("GET /favicon.ico HTTP/1.1\r\n\r\n").await.starts_with("HTTP/1.1 404"));
        let other = exchange("GET /callback?code=x&state=other HTTP/1.1\r\n\r\n").await;
        assert!(other.starts_with("HTTP/1.1 400"), "{other}");
        assert!(!waiting.is_finished());
        let answer = exchange("GET /callback?code=c1&state=s1&iss=https%3A%2F%2Fas HTTP/1.1\r\n\r\n").await;
        assert!(answer.starts_with("HTTP/1.1 200") && answer.contains("authorized"), "{answer}");
        let url = waiting.await.unwrap().unwrap();
        assert_eq!(url.as_str(), format!("{}?code=c1&state=s1&iss=https%3A%2F%2Fas", prompt.redirect_uri));
    }

    #[tokio::test]
    async fn without_a_terminal_the_prompt_asks_for_a_login() {
        let prompt = LoopbackPrompt::bind(false, false, Duration::from_secs(60)).await.unwrap();
        let url = Url::parse("https://as.example/authorize?state=s").unwrap();
        assert!(prompt.authorize(url).await.is_err());
        assert!(prompt.login_needed.load(Ordering::SeqCst));
    }
}
