//! Tests of the configuration reader: each format here, the rules in `validation`, variable
//! expansion and env files in `expand`.

mod expand;
mod validation;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::*;

/// An environment holding exactly `pairs`.
fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
    let map: BTreeMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    move |name| map.get(name).cloned()
}

fn toml_ok(text: &str) -> GatewayConfig {
    parse(text, Format::Toml, &env_of(&[])).unwrap_or_else(|e| panic!("{e}"))
}

fn json_ok(text: &str) -> GatewayConfig {
    parse(text, Format::Json, &env_of(&[])).unwrap_or_else(|e| panic!("{e}"))
}

/// The error's message for TOML text.
fn toml_err(text: &str) -> String {
    match parse(text, Format::Toml, &env_of(&[])) {
        Ok(config) => panic!("accepted: {config:?}"),
        Err(e) => e.to_string(),
    }
}

/// The error's message for JSON text.
fn json_err(text: &str) -> String {
    match parse(text, Format::Json, &env_of(&[])) {
        Ok(config) => panic!("accepted: {config:?}"),
        Err(e) => e.to_string(),
    }
}

/// Asserts that `message` holds every one of `parts`.
#[track_caller]
fn assert_has(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(message.contains(part), "{message:?} lacks {part:?}");
    }
}

/// A fresh empty directory under the system's temp dir.
fn temp_dir(tag: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("mcp-gateway-config-{}-{tag}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn stdio(command: &str, args: &[&str]) -> Transport {
    Transport::Stdio {
        command: command.to_owned(),
        args: args.iter().map(|a| a.to_string()).collect(),
        env: BTreeMap::new(),
        cwd: None,
    }
}

fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

const FULL_TOML: &str = r#"
[gateway]
naming = "always"
separator = "."
list_timeout_ms = 2500

[servers.files]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-filesystem", "."]
env = { ROOT = "${HOME}" }
cwd = "/tmp"
prefix = "fs"
naming = "never"
rename = { read_file = "read" }
start = "lazy"
start_timeout_ms = 1000
timeout_ms = 2000
max_concurrency = 8
protocol_version = "2025-11-25"
sharing = "per-session"
inherit_env = true
breaker_failures = 2
breaker_cooldown_ms = 1500
disabled = false

[servers.remote]
url = "https://example.com/mcp"
type = "http"
headers = { Authorization = "Bearer ${TOKEN}" }

[servers.old]
url = "http://localhost:9000/sse"
type = "sse"

[servers.off]
command = "nothing"
disabled = true
"#;

#[test]
fn toml_full_example() {
    let env = env_of(&[("HOME", "/users/me"), ("TOKEN", "t0k")]);
    let config = parse(FULL_TOML, Format::Toml, &env).unwrap();
    assert_eq!(
        config.settings,
        Settings {
            naming: Naming::Always,
            separator: ".".into(),
            list_timeout: Duration::from_millis(2500),
            session_key_file: None,
            approvals: mcp_server::Approvals::destructive(),
            rate_limit: None,
            policy_file: None,
        }
    );
    let names: Vec<&str> = config.upstreams.iter().map(|u| u.name.as_str()).collect();
    assert_eq!(names, ["files", "remote", "old"], "file order, disabled left out");

    let files = &config.upstreams[0];
    let expected = UpstreamConfig {
        name: "files".into(),
        transport: Transport::Stdio {
            command: "npx".into(),
            args: vec!["-y".into(), "@modelcontextprotocol/server-filesystem".into(), ".".into()],
            env: map(&[("ROOT", "/users/me")]),
            cwd: Some(PathBuf::from("/tmp")),
        },
        prefix: Some("fs".into()),
        naming: Some(Naming::Never),
        rename: map(&[("read_file", "read")]),
        start: Start::Lazy,
        start_timeout: Duration::from_secs(1),
        request_timeout: Duration::from_secs(2),
        max_concurrency: 8,
        breaker_failures: 2,
        breaker_cooldown: Duration::from_millis(1500),
        protocol_version: Some("2025-11-25".into()),
        sharing: Sharing::PerSession,
        inherit_env: true,
        credentials: Credentials::Gateway,
    };
    assert_eq!(files, &expected);
    assert_eq!(files.effective_prefix(), "fs");
    assert_eq!(files.effective_naming(&config.settings), Naming::Never);

    let remote = &config.upstreams[1];
    let http = Transport::Http {
        url: "https://example.com/mcp".into(),
        headers: map(&[("Authorization", "Bearer t0k")]),
    };
    assert_eq!(remote, &UpstreamConfig::new("remote", http));
    assert_eq!(remote.effective_prefix(), "remote");
    assert_eq!(remote.effective_naming(&config.settings), Naming::Always);
    let sse = Transport::Sse { url: "http://localhost:9000/sse".into(), headers: BTreeMap::new() };
    assert_eq!(config.upstreams[2].transport, sse);
}

#[test]
fn defaults() {
    let config = toml_ok("[servers.a]\ncommand = \"x\"\n");
    assert_eq!(config.settings, Settings::default());
    assert_eq!(config.settings.naming, Naming::WhenAmbiguous);
    assert_eq!(config.settings.separator, "__");
    assert_eq!(config.settings.list_timeout, Duration::from_secs(5));
    let a = &config.upstreams[0];
    assert_eq!(a, &UpstreamConfig::new("a", stdio("x", &[])));
    assert_eq!((a.prefix.as_deref(), a.naming, a.start), (None, None, Start::Eager));
    assert_eq!(a.start_timeout, Duration::from_secs(30));
    assert_eq!(a.request_timeout, Duration::from_secs(60));
    assert_eq!(a.max_concurrency, 32);
    assert!(a.rename.is_empty() && a.protocol_version.is_none());
}

#[test]
fn no_upstreams_is_valid() {
    for config in [toml_ok(""), toml_ok("[gateway]\n"), json_ok("{}"), json_ok(r#"{"mcpServers": {}}"#)] {
        assert!(config.upstreams.is_empty());
        assert_eq!(config.settings, Settings::default());
    }
}

#[test]
fn toml_mcp_servers_table_joins_servers() {
    let config = toml_ok(
        r#"
        [servers.b]
        command = "b"
        [mcpServers.a]
        url = "https://a.example/mcp"
        [mcpServers.c]
        command = "c"
        type = "stdio"
        "#,
    );
    let names: Vec<&str> = config.upstreams.iter().map(|u| u.name.as_str()).collect();
    assert_eq!(names, ["b", "a", "c"]);
    let e = toml_err("[servers.x]\ncommand = \"a\"\n[mcpServers.x]\ncommand = \"b\"\n");
    assert_has(&e, &["<config>", "server `x`", "both `servers` and `mcpServers`"]);
}

#[test]
fn json_mcp_servers() {
    let config = json_ok(
        r#"{
          "mcpServers": {
            "zeta": {"command": "uvx", "args": ["mcp-server-git"], "env": {"A": "1"}, "cwd": "/srv"},
            "alpha": {"url": "https://x.example/mcp", "type": "streamable-http", "headers": {"K": "v"}},
            "sse": {"url": "https://x.example/sse", "type": "sse"},
            "plain": {"url": "https://x.example/mcp"},
            "off": {"command": "x", "disabled": true},
            "tuned": {"command": "t", "prefix": "T", "naming": "always", "rename": {"a": "b"},
                      "start": "lazy", "timeout_ms": 5, "start_timeout_ms": 6, "max_concurrency": 1,
                      "breaker_failures": 0, "breaker_cooldown_ms": 7,
                      "protocol_version": "2024-11-05", "sharing": "shared", "autoApprove": ["x"], "alwaysAllow": 3}
          },
          "gateway": {"naming": "never", "separator": "-", "list_timeout_ms": 100},
          "globalShortcut": "Ctrl+Space"
        }"#,
    );
    assert_eq!(config.settings.naming, Naming::Never);
    assert_eq!(config.settings.separator, "-");
    assert_eq!(config.settings.list_timeout, Duration::from_millis(100));
    let names: Vec<&str> = config.upstreams.iter().map(|u| u.name.as_str()).collect();
    assert_eq!(names, ["zeta", "alpha", "sse", "plain", "tuned"], "file order, not sorted");
    let u = &config.upstreams;
    assert_eq!(
        u[0].transport,
        Transport::Stdio {
            command: "uvx".into(),
            args: vec!["mcp-server-git".into()],
            env: map(&[("A", "1")]),
            cwd: Some("/srv".into())
        }
    );
    assert_eq!(
        u[1].transport,
        Transport::Http { url: "https://x.example/mcp".into(), headers: map(&[("K", "v")]) }
    );
    assert_eq!(
        u[2].transport,
        Transport::Sse { url: "https://x.example/sse".into(), headers: BTreeMap::new() }
    );
    assert_eq!(
        u[3].transport,
        Transport::Http { url: "https://x.example/mcp".into(), headers: BTreeMap::new() }
    );
    let t = &u[4];
    assert_eq!(t.prefix.as_deref(), Some("T"));
    assert_eq!((t.naming, t.start, t.max_concurrency), (Some(Naming::Always), Start::Lazy, 1));
    assert_eq!((t.request_timeout, t.start_timeout), (Duration::from_millis(5), Duration::from_millis(6)));
    assert_eq!(t.rename, map(&[("a", "b")]));
    assert_eq!(t.protocol_version.as_deref(), Some("2024-11-05"));
    assert_eq!((t.sharing, u[0].sharing), (Sharing::Shared, Sharing::Shared), "shared unless asked");
    assert_eq!((t.breaker_failures, t.breaker_cooldown), (0, Duration::from_millis(7)));
    assert_eq!(
        (u[0].breaker_failures, u[0].breaker_cooldown),
        (UpstreamConfig::DEFAULT_BREAKER_FAILURES, UpstreamConfig::DEFAULT_BREAKER_COOLDOWN),
        "the breaker is on by default"
    );
}

#[test]
fn json_type_http_and_stdio_spellings() {
    let c = json_ok(
        r#"{"mcpServers": {"a": {"url": "https://a/", "type": "http"}, "b": {"command": "b", "type": "stdio"}}}"#,
    );
    assert!(matches!(c.upstreams[0].transport, Transport::Http { .. }));
    assert!(matches!(c.upstreams[1].transport, Transport::Stdio { .. }));
}

#[test]
fn vscode_mcp_json() {
    let dir = temp_dir("vscode");
    let vscode = dir.join(".vscode");
    std::fs::create_dir_all(&vscode).unwrap();
    std::fs::write(vscode.join("server.env"), "# secrets\nAPI_KEY=\"k1\"\n\nMODE=fast\n").unwrap();
    std::fs::write(
        vscode.join("mcp.json"),
        r#"{
          "inputs": [
            {"type": "promptString", "id": "api-key", "description": "API key", "password": true},
            {"type": "promptString", "id": "region", "description": "Region", "default": "eu"}
          ],
          "servers": {
            "local": {"type": "stdio", "command": "node", "args": ["${workspaceFolder}/server.js", "--region=${input:region}"],
                      "env": {"KEY": "${input:api-key}", "MODE": "slow"}, "envFile": "${workspaceFolder}/.vscode/server.env"},
            "web": {"type": "http", "url": "https://api.example.com/mcp", "headers": {"X-Key": "${input:api-key}"}},
            "legacy": {"type": "sse", "url": "http://localhost:3000/sse", "dev": {"watch": "src/**"}}
          }
        }"#,
    )
    .unwrap();
    let env = env_of(&[("MCPKIT_INPUT_API_KEY", "secret")]);
    let base = vscode.as_path();
    let config =
        parse_at(&std::fs::read_to_string(vscode.join("mcp.json")).unwrap(), Format::Json, Some(base), &env)
            .unwrap_or_else(|e| panic!("{e}"));
    let ws = dir.display().to_string();
    assert_eq!(
        config.upstreams[0].transport,
        Transport::Stdio {
            command: "node".into(),
            args: vec![format!("{ws}/server.js"), "--region=eu".into()],
            env: map(&[("API_KEY", "k1"), ("KEY", "secret"), ("MODE", "slow")]),
            cwd: None,
        },
        "env overrides envFile"
    );
    assert_eq!(
        config.upstreams[1].transport,
        Transport::Http { url: "https://api.example.com/mcp".into(), headers: map(&[("X-Key", "secret")]) }
    );
    assert!(matches!(config.upstreams[2].transport, Transport::Sse { .. }));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn load_picks_the_format_by_extension() {
    let dir = temp_dir("load");
    let toml_path = dir.join("gateway.toml");
    std::fs::write(&toml_path, "[servers.a]\ncommand = \"a\"\n").unwrap();
    assert_eq!(load(&toml_path).unwrap().upstreams[0].name, "a");
    let json_path = dir.join(".mcp.json");
    std::fs::write(&json_path, r#"{"mcpServers": {"b": {"command": "b"}}}"#).unwrap();
    assert_eq!(load(&json_path).unwrap().upstreams[0].name, "b");
    let other = dir.join("config.conf");
    std::fs::write(&other, r#"{"servers": {"c": {"command": "c"}}}"#).unwrap();
    assert_eq!(load(&other).unwrap().upstreams[0].name, "c");
    assert_eq!(Format::for_path(std::path::Path::new("x.TOML")), Format::Toml);
    assert_eq!(Format::for_path(std::path::Path::new("toml")), Format::Json);

    // Messages from load() name the file.
    std::fs::write(&toml_path, "[servers.a]\ncommand = 1\n").unwrap();
    let e = load(&toml_path).unwrap_err().to_string();
    assert_has(&e, &[&toml_path.display().to_string(), "server `a`", "field `command`", "expected a string"]);
    let missing = dir.join("missing.json");
    let e = load(&missing).unwrap_err();
    assert!(matches!(e, ConfigError::Read { .. }));
    assert_has(&e.to_string(), &["missing.json", "cannot read"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn syntax_errors_name_the_file_and_format() {
    let e = parse("[servers.a", Format::Toml, &env_of(&[])).unwrap_err();
    assert!(matches!(e, ConfigError::Syntax { format: Format::Toml, .. }));
    assert_has(&e.to_string(), &["<config>", "not valid TOML"]);
    let e = json_err(r#"{"mcpServers": "#);
    assert_has(&e, &["<config>", "not valid JSON"]);
    let e = json_err("[]");
    assert_has(&e, &["the top level must be a table/object", "found an array"]);
}

#[test]
fn toml_specifics() {
    let e = toml_err("[servers.a]\ncommand = 1979-05-27\n");
    assert_has(&e, &["server `a`", "field `command`", "found a date/time"]);
    let c = toml_ok("[servers.a]\ncommand = \"~/bin/server\"\ncwd = \"~/\"\nmax_concurrency = 0x10\n");
    assert_eq!(c.upstreams[0].max_concurrency, 16);
    let Transport::Stdio { command, cwd, .. } = &c.upstreams[0].transport else { panic!() };
    assert_eq!(
        (command.as_str(), cwd.as_deref()),
        ("~/bin/server", Some(std::path::Path::new("~/"))),
        "`~` is kept"
    );
    let e = toml_err("servers = 3\n");
    assert_has(&e, &["field `servers`", "found an integer"]);
    let e = toml_err("[servers]\na = \"npx x\"\n");
    assert_has(&e, &["server `a`", "a server entry must be a table/object"]);
}

#[test]
fn naming_and_start_deserialize_kebab_case() {
    let naming: Vec<Naming> = serde_json::from_str(r#"["always", "when-ambiguous", "never"]"#).unwrap();
    assert_eq!(naming, [Naming::Always, Naming::WhenAmbiguous, Naming::Never]);
    assert!(
        naming.iter().all(|n| serde_json::from_str::<Naming>(&format!("{:?}", n.as_str())).unwrap() == *n)
    );
    let start: Vec<Start> = serde_json::from_str(r#"["eager", "lazy"]"#).unwrap();
    assert_eq!(start, [Start::Eager, Start::Lazy]);
}

#[test]
fn the_session_key_file_is_relative_to_the_configuration() {
    let base = std::path::Path::new("/etc/gateway");
    let text = "[gateway]\nsession_key_file = \"keys/session\"\n";
    let config = parse_at(text, Format::Toml, Some(base), &env_of(&[])).unwrap();
    assert_eq!(config.settings.session_key_file, Some(base.join("keys/session")));
    let config = toml_ok("[gateway]\nsession_key_file = \"/abs/key\"\n");
    assert_eq!(config.settings.session_key_file, Some(PathBuf::from("/abs/key")));
    assert_eq!(toml_ok("").settings.session_key_file, None);
    assert_has(&toml_err("[gateway]\nsession_key_file = \"\"\n"), &["session_key_file", "must not be empty"]);
}

#[test]
fn a_secret_can_come_from_a_file() {
    let dir = temp_dir("file-secret");
    std::fs::write(dir.join("token"), "s3cret\n").unwrap();
    let text =
        "[servers.r]\nurl = \"https://h/mcp\"\nheaders = { Authorization = \"Bearer ${file:token}\" }\n";
    let config = parse_at(text, Format::Toml, Some(&dir), &env_of(&[])).unwrap();
    let Transport::Http { headers, .. } = &config.upstreams[0].transport else { panic!("http") };
    assert_eq!(headers["Authorization"], "Bearer s3cret");
    let missing = "[servers.r]\nurl = \"https://h/mcp\"\nheaders = { A = \"${file:nope}\" }\n";
    let e = parse_at(missing, Format::Toml, Some(&dir), &env_of(&[])).unwrap_err().to_string();
    assert_has(&e, &["headers", "${file:", "cannot be read"]);
}

#[test]
fn credentials_modes() {
    let config = toml_ok("[servers.a]\nurl = \"https://a.example/mcp\"\n");
    assert_eq!(config.upstreams[0].credentials, Credentials::Gateway);
    let config = toml_ok("[servers.a]\nurl = \"https://a.example/mcp\"\ncredentials = \"none\"\n");
    assert_eq!(config.upstreams[0].credentials, Credentials::None);
    let config = toml_ok("[servers.a]\nurl = \"https://a.example/mcp\"\ncredentials = \"passthrough\"\n");
    assert_eq!(
        config.upstreams[0].credentials,
        Credentials::Passthrough { audience: "https://a.example/mcp".into() },
        "the audience defaults to the upstream's URL"
    );
    let config = toml_ok(
        "[servers.a]\nurl = \"https://a.example/mcp\"\ncredentials = \"passthrough\"\naudience = \"api://a\"\n",
    );
    assert_eq!(config.upstreams[0].credentials, Credentials::Passthrough { audience: "api://a".into() });

    let text = "[servers.a]\nurl = \"https://a.example/mcp\"\ncredentials = \"token-exchange\"\n\
                token_endpoint = \"https://as.example/token\"\nclient_id = \"gw\"\n\
                client_secret = \"${env:SECRET}\"\nscope = \"read\"\n";
    let config = parse(text, Format::Toml, &env_of(&[("SECRET", "s3cr3t")])).unwrap();
    let Credentials::TokenExchange(x) = &config.upstreams[0].credentials else { panic!("{config:?}") };
    assert_eq!(x.token_endpoint, "https://as.example/token");
    assert_eq!(x.client_id, "gw");
    assert_eq!(x.client_secret.as_deref(), Some("s3cr3t"));
    assert_eq!(x.resource, "https://a.example/mcp");
    assert_eq!(x.scope.as_deref(), Some("read"));
    assert!(!format!("{config:?}").contains("s3cr3t"), "the secret in Debug");

    for (text, expected) in [
        ("[servers.a]\ncommand = \"x\"\ncredentials = \"passthrough\"\n", "is for HTTP upstreams"),
        ("[servers.a]\nurl = \"https://a/mcp\"\ncredentials = \"always\"\n", "unknown value"),
        (
            "[servers.a]\nurl = \"https://a/mcp\"\ncredentials = \"token-exchange\"\nclient_id = \"gw\"\n",
            "token_endpoint",
        ),
        (
            "[servers.a]\nurl = \"https://a/mcp\"\ncredentials = \"token-exchange\"\ntoken_endpoint = \"https://as/t\"\n",
            "client_id",
        ),
        (
            "[servers.a]\nurl = \"https://a/mcp\"\ncredentials = \"token-exchange\"\ntoken_endpoint = \"as/t\"\nclient_id = \"g\"\n",
            "not an http",
        ),
        ("[servers.a]\nurl = \"https://a/mcp\"\ntoken_endpoint = \"https://as/t\"\n", "token-exchange"),
        ("[servers.a]\nurl = \"https://a/mcp\"\naudience = \"x\"\n", "passthrough"),
    ] {
        let e = toml_err(text);
        assert!(e.contains(expected), "{text}: {e}");
    }
}
