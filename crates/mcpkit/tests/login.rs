//! `mcpkit login`, `mcpkit logout`, and OAuth on `--url`, against real processes: `mcpkit serve
//! --http --auth-issuer` as the resource server, and a test authorization server. The test plays
//! the browser: it reads the authorization URL mcpkit prints, follows it by hand, and delivers
//! the redirect to mcpkit's loopback listener.

#[path = "login/auth_server.rs"]
mod auth_server;
mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use auth_server::AuthServer;
use mcp_client::reqwest::Url;
use mcp_testkit::process::ListeningProcess;

/// A bound on waits that only a hang would reach (not a timing assertion).
const HANG: Duration = Duration::from_secs(120);

/// A child process, killed and reaped when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Self {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "mcpkit-login-test-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `mcpkit serve --http` requiring tokens from `issuer`.
fn serve(issuer: &str) -> (ListeningProcess, String) {
    let server = support::serve_http(&["--auth-issuer", issuer, "--auth-scope", "mcp:tools"]);
    let url = server.url().to_owned();
    (server, url)
}

/// A running mcpkit client process: its stderr lines as they come, and all of its output.
struct Running {
    child: Killed,
    lines: Receiver<String>,
    stdout: JoinHandle<String>,
    stderr: Arc<Mutex<String>>,
    stderr_done: JoinHandle<()>,
}

struct Finished {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

fn mcpkit(credentials: &Path, args: &[&str]) -> Running {
    let mut child = Killed(
        Command::new(env!("CARGO_BIN_EXE_mcpkit"))
            .args(args)
            .env("MCPKIT_CREDENTIALS_DIR", credentials)
            .env_remove("RUST_LOG")
            .env_remove("MCPKIT_CLIENT_SECRET")
            .env("MCPKIT_METRICS", "off")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn mcpkit"),
    );
    let mut out = child.0.stdout.take().unwrap();
    let stdout = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = out.read_to_string(&mut text);
        text
    });
    let err = child.0.stderr.take().unwrap();
    let stderr = Arc::new(Mutex::new(String::new()));
    let (sender, lines) = channel();
    let sink = stderr.clone();
    let stderr_done = std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            sink.lock().unwrap().push_str(&format!("{line}\n"));
            let _ = sender.send(line);
        }
    });
    Running { child, lines, stdout, stderr, stderr_done }
}

impl Running {
    /// The authorization URL mcpkit prints.
    fn authorization_url(&self) -> Url {
        loop {
            let line = self.lines.recv_timeout(HANG).unwrap_or_else(|_| {
                panic!("no authorization URL printed; stderr so far:\n{}", self.stderr.lock().unwrap())
            });
            if let Some((_, url)) = line.split_once("Open this URL in your browser to authorize mcpkit: ") {
                return Url::parse(url.trim()).unwrap();
            }
        }
    }

    fn finish(mut self) -> Finished {
        let status = self.child.0.wait().unwrap();
        let stdout = self.stdout.join().unwrap();
        self.stderr_done.join().unwrap();
        let stderr = self.stderr.lock().unwrap().clone();
        Finished { status, stdout, stderr }
    }
}

/// The one line a command without a terminal prints when `url` needs a login.
fn needs_login(url: &str) -> String {
    format!(
        "mcpkit: {url} requires authorization: run 'mcpkit login {url}', or give a token or key with \
         --header 'Authorization: Bearer TOKEN' (or `headers` in its config entry)\n"
    )
}

/// A token given with `--header` is the authorization: no login, no stored credentials, and
/// never printed, not even on -v's wire trace. A refused one names the ways out.
#[test]
fn a_token_given_with_header_is_used_and_never_printed() {
    let auth = AuthServer::start();
    let (_server, url) = serve(&auth.issuer);
    let temp = TempDir::new();
    let credentials = temp.0.join("credentials");
    let token = auth.mint("carol", &[&url]);
    let bearer = format!("Authorization: Bearer {token}");
    let listed = mcpkit(&credentials, &["-vv", "list", "tools", "--url", &url, "--header", &bearer]).finish();
    assert_eq!(listed.status.code(), Some(0), "{}", listed.stderr);
    let tools: serde_json::Value = serde_json::from_str(listed.stdout.trim()).unwrap();
    assert!(tools["tools"].as_array().is_some_and(|t| !t.is_empty()), "{}", listed.stdout);
    assert!(!listed.stderr.contains(&token), "the token was printed:\n{}", listed.stderr);
    assert!(listed.stderr.contains("-> {"), "-vv shows the wire: {}", listed.stderr);
    assert_eq!(auth.record().authorizations, 0, "no login flow");
    assert!(!credentials.exists() || json_files(&credentials).is_empty(), "nothing stored");

    // A token the server refuses: the error says which header was refused (a login would not
    // help: the header given replaces it), and still not the token.
    let wrong = "Authorization: Bearer not-a-token";
    let refused = mcpkit(&credentials, &["list", "tools", "--url", &url, "--header", wrong]).finish();
    assert_eq!(refused.status.code(), Some(3), "{}", refused.stderr);
    assert!(refused.stderr.contains("refused the Authorization header given"), "{}", refused.stderr);
    assert!(!refused.stderr.contains("mcpkit login"), "{}", refused.stderr);
    assert!(!refused.stderr.contains("not-a-token"), "{}", refused.stderr);

    // Malformed: a usage error before anything is sent.
    let malformed = mcpkit(&credentials, &["list", "tools", "--url", &url, "--header", "no colon"]).finish();
    assert_eq!(malformed.status.code(), Some(2), "{}", malformed.stderr);
    assert!(malformed.stderr.contains("'NAME: VALUE'"), "{}", malformed.stderr);
}

/// A plain HTTP/1.1 GET (no redirect following): the status and the raw answer.
fn get(url: &Url) -> (u16, String) {
    let authority = format!("{}:{}", url.host_str().unwrap(), url.port().unwrap());
    let mut target = url.path().to_owned();
    if let Some(query) = url.query() {
        target = format!("{target}?{query}");
    }
    let mut stream = TcpStream::connect(&authority).unwrap();
    write!(stream, "GET {target} HTTP/1.1\r\nhost: {authority}\r\nconnection: close\r\n\r\n").unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, answer)
}

fn location(answer: &str) -> Url {
    let line = answer
        .lines()
        .find(|l| l.to_ascii_lowercase().starts_with("location:"))
        .unwrap_or_else(|| panic!("no Location: {answer}"));
    Url::parse(line["location:".len()..].trim()).unwrap()
}

fn param(url: &Url, name: &str) -> String {
    url.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned()).unwrap_or_default()
}

fn json_files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn login_then_list_then_logout() {
    let auth = AuthServer::start();
    let (_server, url) = serve(&auth.issuer);
    let temp = TempDir::new();
    let credentials = temp.0.join("credentials");

    // Without a login, a command without a terminal fails with one line saying what to do.
    let before = mcpkit(&credentials, &["list", "tools", "--url", &url]).finish();
    assert_eq!(before.status.code(), Some(3), "{}", before.stderr);
    assert_eq!(before.stderr, needs_login(&url));
    assert_eq!(auth.record().authorizations, 0);

    // Login: the URL is printed, the test is the browser.
    let login = mcpkit(&credentials, &["login", &url, "--no-browser"]);
    let authorization = login.authorization_url();
    assert!(authorization.as_str().starts_with(&format!("{}/authorize?", auth.issuer)), "{authorization}");
    let redirect_uri = Url::parse(&param(&authorization, "redirect_uri")).unwrap();
    assert_eq!(redirect_uri.host_str(), Some("127.0.0.1"));
    assert_eq!(redirect_uri.path(), "/callback");
    assert_eq!(param(&authorization, "resource"), url);

    // Junk on the loopback port does not end the wait: a silent connection, garbage, another path.
    let loopback = format!("127.0.0.1:{}", redirect_uri.port().unwrap());
    let _silent = TcpStream::connect(&loopback).unwrap();
    let mut garbage = TcpStream::connect(&loopback).unwrap();
    garbage.write_all(b"\x00\x01\x02 not http\r\n\r\n").unwrap();
    let mut answer = String::new();
    let _ = garbage.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 404"), "{answer}");
    let (status, _) = get(&redirect_uri.join("/favicon.ico").unwrap());
    assert_eq!(status, 404);

    let (status, answer) = get(&authorization);
    assert_eq!(status, 302, "{answer}");
    let callback = location(&answer);
    assert_eq!(callback.origin(), redirect_uri.origin());
    let (status, page) = get(&callback);
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("mcpkit: authorized, you can close this tab"), "{page}");

    let done = login.finish();
    assert_eq!(done.status.code(), Some(0), "{}", done.stderr);
    assert_eq!(done.stdout, format!("logged in to {url} (issuer {}, scope mcp:tools)\n", auth.issuer));
    assert_eq!(auth.record().authorizations, 1);
    let tokens = auth.record().tokens.clone();
    assert_eq!(tokens.len(), 1);
    for token in &tokens {
        assert!(!done.stdout.contains(token.as_str()) && !done.stderr.contains(token.as_str()));
    }
    let files = json_files(&credentials);
    assert_eq!(files.len(), 1, "one file for the one issuer: {files:?}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&files[0]), 0o600);
        assert_eq!(mode(&credentials), 0o700);
    }
    let stored = std::fs::read_to_string(&files[0]).unwrap();
    assert!(
        stored.contains(&tokens[0]) && stored.contains(&auth.issuer),
        "the token and its issuer are stored"
    );

    // Other commands use the stored token silently: no new authorization.
    let list = mcpkit(&credentials, &["list", "tools", "--url", &url, "--json"]).finish();
    assert_eq!(list.status.code(), Some(0), "{}", list.stderr);
    assert!(list.stdout.contains("\"echo\""), "{}", list.stdout);
    assert!(!list.stdout.contains(&tokens[0]) && !list.stderr.contains(&tokens[0]));
    assert_eq!(auth.record().authorizations, 1);
    assert_eq!(auth.record().tokens.len(), 1);

    // An mcpServers entry with its own Authorization header gets no OAuth: that header is sent.
    let config = temp.0.join("config.json");
    let entry = serde_json::json!({ "mcpServers": { "pinned": {
        "url": url, "headers": { "Authorization": "Bearer not-a-token" } } } });
    std::fs::write(&config, entry.to_string()).unwrap();
    let config_arg = config.to_str().unwrap();
    let pinned =
        mcpkit(&credentials, &["list", "tools", "--server", "pinned", "--config", config_arg]).finish();
    assert_eq!(pinned.status.code(), Some(3), "{}", pinned.stderr);
    assert!(!pinned.stderr.contains("mcpkit login"), "{}", pinned.stderr);
    // ... while the same entry without it uses the stored token.
    let entry = serde_json::json!({ "mcpServers": { "plain": { "url": url } } });
    std::fs::write(&config, entry.to_string()).unwrap();
    let plain =
        mcpkit(&credentials, &["list", "tools", "--server", "plain", "--config", config_arg]).finish();
    assert_eq!(plain.status.code(), Some(0), "{}", plain.stderr);

    // Logout forgets the token; commands then ask for a login again.
    let logout = mcpkit(&credentials, &["logout", &url]).finish();
    assert_eq!(logout.status.code(), Some(0), "{}", logout.stderr);
    assert!(logout.stdout.starts_with(&format!("logged out of {url}")), "{}", logout.stdout);
    assert!(!std::fs::read_to_string(&files[0]).unwrap_or_default().contains(&tokens[0]));
    let again = mcpkit(&credentials, &["logout", &url]).finish();
    assert_eq!(again.status.code(), Some(0));
    assert!(again.stdout.starts_with(&format!("not logged in to {url}")), "{}", again.stdout);
    let after = mcpkit(&credentials, &["list", "tools", "--url", &url]).finish();
    assert_eq!(after.status.code(), Some(3), "{}", after.stderr);
    assert_eq!(after.stderr, needs_login(&url));
    assert_eq!(auth.record().authorizations, 1);
}

#[test]
fn a_refused_authorization_fails_the_login() {
    let auth = AuthServer::start();
    let (_server, url) = serve(&auth.issuer);
    let temp = TempDir::new();
    let credentials = temp.0.join("credentials");

    let login = mcpkit(&credentials, &["login", &url, "--no-browser"]);
    let authorization = login.authorization_url();
    let redirect_uri = param(&authorization, "redirect_uri");
    // The user said no: the authorization server sends the browser back with an error.
    let callback = Url::parse_with_params(
        &redirect_uri,
        &[
            ("error", "access_denied"),
            ("error_description", "the user <declined>"),
            ("state", &param(&authorization, "state")),
            ("iss", &auth.issuer),
        ],
    )
    .unwrap();
    let (status, page) = get(&callback);
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("authorization failed (access_denied: the user &lt;declined&gt;)"), "{page}");

    let done = login.finish();
    assert_eq!(done.status.code(), Some(4), "{}", done.stderr);
    let last = done.stderr.lines().last().unwrap_or_default();
    assert!(last.starts_with(&format!("mcpkit: login to {url} failed")), "{}", done.stderr);
    assert!(last.contains("access_denied"), "{}", done.stderr);
    assert_eq!(done.stdout, "");
    assert!(auth.record().tokens.is_empty());
    let files = json_files(&credentials);
    assert!(files.iter().all(|f| !std::fs::read_to_string(f).unwrap().contains("access_token")));

    // A corrupt credentials file is named, and left alone.
    assert_eq!(files.len(), 1, "the registration: {files:?}");
    std::fs::write(&files[0], "{ corrupt").unwrap();
    let list = mcpkit(&credentials, &["list", "tools", "--url", &url]).finish();
    assert_eq!(list.status.code(), Some(3), "{}", list.stderr);
    assert_eq!(list.stderr.lines().count(), 1, "{}", list.stderr);
    assert!(
        list.stderr.starts_with(&format!("mcpkit: {url} requires authorization: run 'mcpkit login {url}'"))
    );
    assert!(list.stderr.contains(&files[0].display().to_string()) && list.stderr.contains("corrupt"));
    assert_eq!(std::fs::read_to_string(&files[0]).unwrap(), "{ corrupt");
}

/// The gateway's HTTP upstreams use what `mcpkit login` stored: without a login the upstream is
/// down with the line saying what to run; after one it comes up by itself (its backoff) and
/// calls go through, the token never printed.
#[test]
fn a_gateway_upstream_uses_the_stored_login() {
    let auth = AuthServer::start();
    let (_server, url) = serve(&auth.issuer);
    let temp = TempDir::new();
    let credentials = temp.0.join("credentials");
    let config = temp.0.join("gateway.toml");
    std::fs::write(&config, format!("[servers.remote]\nurl = {}\n", serde_json::to_string(&url).unwrap()))
        .unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcpkit"));
    command
        .args(["gateway", "--config", config.to_str().unwrap(), "--http", "127.0.0.1:0"])
        .env("MCPKIT_CREDENTIALS_DIR", &credentials)
        .env_remove("RUST_LOG");
    let gateway = ListeningProcess::start(command);
    let status = |gateway: &ListeningProcess| {
        let done = mcpkit(&credentials, &["gateway", "status", "--json", gateway.url()]).finish();
        let status: serde_json::Value = serde_json::from_str(&done.stdout)
            .unwrap_or_else(|e| panic!("{e}: {} {}", done.stdout, done.stderr));
        status["upstreams"][0].clone()
    };

    // No login yet: down, saying what to run.
    let remote = status(&gateway);
    assert_eq!(remote["state"], "down", "{remote}");
    let hint = format!("requires authorization: run 'mcpkit login {url}'");
    assert!(remote["last_error"].as_str().unwrap_or_default().contains(&hint), "{remote}");

    // Log in (the test is the browser); the gateway takes the stored token up by itself.
    let login = mcpkit(&credentials, &["login", &url, "--no-browser"]);
    let (status_code, answer) = get(&login.authorization_url());
    assert_eq!(status_code, 302, "{answer}");
    let (status_code, page) = get(&location(&answer));
    assert_eq!(status_code, 200, "{page}");
    let done = login.finish();
    assert_eq!(done.status.code(), Some(0), "{}", done.stderr);
    let deadline = std::time::Instant::now() + HANG;
    loop {
        let remote = status(&gateway);
        if remote["state"] == "ready" {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "not ready after the login: {remote}");
        std::thread::sleep(Duration::from_millis(200));
    }
    // Ready comes first; its tools are served once it has been listed again.
    let call = loop {
        let call =
            mcpkit(&credentials, &["call", "echo", "--arg", "text=through", "--url", gateway.url()]).finish();
        if call.status.code() == Some(0) || std::time::Instant::now() >= deadline {
            break call;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(call.status.code(), Some(0), "{}", call.stderr);
    assert!(call.stdout.contains("through"), "{}", call.stdout);
    assert_eq!(auth.record().authorizations, 1, "the gateway used the login, it did not authorize again");
    let tokens = auth.record().tokens.clone();
    let logs = gateway.stderr();
    assert!(tokens.iter().all(|t| !logs.contains(t.as_str())), "a token in the gateway's output");
}

/// A client of the gateway presenting `token`.
async fn gateway_client(url: &str, token: &str) -> mcp_client::Client {
    use mcp_client::transport::http::{HeaderName, HeaderValue, HttpConfig};
    let http = HttpConfig::new(url.to_owned()).header(
        HeaderName::from_static("authorization"),
        HeaderValue::from_str(&format!("Bearer {token}")).unwrap(),
    );
    mcp_client::ClientBuilder::new("credentials-test", "1")
        .connect_http(http)
        .await
        .expect("connect to the gateway")
}

/// The `tools/call` lines of a `--request-log --log-format json` server's stderr.
fn call_lines(process: &ListeningProcess) -> Vec<serde_json::Value> {
    process
        .stderr()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["target"] == "mcp_server::request" && v["method"] == "tools/call")
        .collect()
}

/// An upstream configured to see who calls receives, for each call, the caller's own token
/// (`passthrough`, only when the token names the upstream) or one the authorization server
/// exchanged for it (`token-exchange`, RFC 8693, asked once and cached); the gateway's own
/// requests (handshake, lists) keep its own credential; no token shows in the gateway's output.
#[test]
fn the_upstream_sees_the_caller_through_passthrough_or_token_exchange() {
    let auth = AuthServer::start();
    let upstream = support::serve_http(&[
        "--auth-issuer",
        &auth.issuer,
        "--auth-scope",
        "mcp:tools",
        "--request-log",
        "--log-format",
        "json",
    ]);
    let up = upstream.url().to_owned();
    let temp = TempDir::new();
    let config = temp.0.join("gateway.toml");
    let quoted = |s: &str| serde_json::to_string(s).unwrap();
    std::fs::write(
        &config,
        format!(
            "[servers.pass]\nurl = {up}\ncredentials = \"passthrough\"\n\
             headers = {{ Authorization = \"Bearer ${{env:GATEWAY_TOKEN}}\" }}\n\n\
             [servers.swap]\nurl = {up}\ncredentials = \"token-exchange\"\ntoken_endpoint = {endpoint}\n\
             client_id = \"gw\"\nclient_secret = \"${{env:EXCHANGE_SECRET}}\"\n\
             headers = {{ Authorization = \"Bearer ${{env:GATEWAY_TOKEN}}\" }}\n",
            up = quoted(&up),
            endpoint = quoted(&format!("{}/token", auth.issuer)),
        ),
    )
    .unwrap();
    let gateway_token = auth.mint("the-gateway", &[&up]);
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcpkit"));
    command
        .args(["gateway", "--config", config.to_str().unwrap(), "--http", "127.0.0.1:0"])
        .args(["--auth-issuer", &auth.issuer])
        .env("GATEWAY_TOKEN", &gateway_token)
        .env("EXCHANGE_SECRET", "gw-secret")
        .env("MCPKIT_CREDENTIALS_DIR", temp.0.join("credentials"))
        .env("MCPKIT_METRICS", "off")
        .env_remove("RUST_LOG");
    let gateway = ListeningProcess::start(command);
    let gw = gateway.url().to_owned();
    let alice = auth.mint("alice", &[&gw, &up]);
    let bob = auth.mint("bob", &[&gw]);

    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let client = gateway_client(&gw, &alice).await;
        let tools = client.list_all_tools().await.expect("list");
        let name = |prefix: &str| {
            tools
                .iter()
                .map(|t| t.name.clone())
                .find(|n| n.starts_with(prefix) && n.ends_with("echo"))
                .unwrap_or_else(|| {
                    panic!("no {prefix} echo in {:?}", tools.iter().map(|t| &t.name).collect::<Vec<_>>())
                })
        };
        let (pass, swap) = (name("pass"), name("swap"));

        // Passthrough: alice's token names the upstream, so it is what the upstream sees.
        let result =
            client.call_tool(&pass, serde_json::json!({"text": "one"})).await.expect("passthrough call");
        assert_ne!(result.is_error, Some(true), "{result:?}");
        // Token exchange: once for alice, then from the cache.
        for text in ["two", "three"] {
            let result =
                client.call_tool(&swap, serde_json::json!({"text": text})).await.expect("exchange call");
            assert_ne!(result.is_error, Some(true), "{result:?}");
        }
        client.close().await;

        // Bob's token is the gateway's alone: never passed on; an exchange would still work.
        let client = gateway_client(&gw, &bob).await;
        let refused = client.call_tool(&pass, serde_json::json!({"text": "four"})).await.unwrap_err();
        let text = refused.to_string();
        assert!(text.contains("not meant for it"), "{text}");
        let result =
            client.call_tool(&swap, serde_json::json!({"text": "five"})).await.expect("bob's exchange");
        assert_ne!(result.is_error, Some(true), "{result:?}");
        client.close().await;
    });

    let calls = call_lines(&upstream);
    let subjects: Vec<&str> = calls.iter().filter_map(|l| l["subject"].as_str()).collect();
    assert_eq!(subjects, ["alice", "alice", "alice", "bob"], "{calls:?}");
    let exchanges = auth.record().exchanges.clone();
    assert_eq!(
        exchanges,
        [("alice".to_owned(), up.clone()), ("bob".to_owned(), up.clone())],
        "one exchange per caller, for the upstream"
    );
    // The gateway's own requests (its handshake and lists) went with its own token.
    let own = upstream
        .stderr()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .any(|v| v["target"] == "mcp_server::request" && v["subject"] == "the-gateway");
    assert!(own, "no request with the gateway's own token: {}", upstream.stderr());
    let logs = gateway.stderr();
    let tokens = auth.record().tokens.clone();
    assert!(tokens.iter().all(|t| !logs.contains(t.as_str())), "a token in the gateway's output: {logs}");
}
