//! `mcpkit gateway` in front of two real `mcpkit serve --stdio` upstreams: how their tools and
//! resources are named and forwarded (over stdio and HTTP downstream), and what `--check`
//! reports.

mod gateway_support;
mod support;

use gateway_support::{Dir, json, stdio_upstream, text, through_stdio, through_url, tool_names};

/// `a` with the default naming, `b` always prefixed, and b's echo renamed to `say`.
fn two_upstreams(dir: &Dir) -> std::path::PathBuf {
    let config =
        [stdio_upstream("a", ""), stdio_upstream("b", "naming = \"always\"\nrename = { echo = \"say\" }")]
            .concat();
    dir.write_config(&config)
}

#[test]
fn tools_of_two_upstreams_are_named_and_forwarded() {
    let dir = Dir::new("naming");
    let config = two_upstreams(&dir);

    let (code, out, err) = through_stdio(&config, &["list", "tools"], None);
    assert_eq!(code, 0, "{err}");
    let names = tool_names(&json(&out));
    for bare in ["echo", "add", "countdown", "greet_me", "haiku", "fail"] {
        assert!(names.iter().any(|n| n == bare), "a's {bare} is bare: {names:?}");
        let prefixed = format!("b__{bare}");
        if bare == "echo" {
            assert!(!names.contains(&prefixed), "b's echo is renamed: {names:?}");
        } else {
            assert!(names.contains(&prefixed), "b's {bare} is prefixed: {names:?}");
        }
    }
    assert!(names.iter().any(|n| n == "say"), "b's echo renamed to say: {names:?}");
    assert!(!names.iter().any(|n| n == "b__say" || n == "a__echo"), "{names:?}");

    // A prefixed tool reaches b under its own name; its structured result comes back.
    let (code, out, err) = through_stdio(&config, &["call", "b__add", r#"{"a":1,"b":2}"#], None);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json(&out)["structuredContent"], serde_json::json!({"sum": 3.0}), "{out}");

    // The renamed tool is b's echo.
    let (code, out, err) = through_stdio(&config, &["call", "say", "--arg", "text=hi from b"], None);
    assert_eq!(code, 0, "{err}");
    assert_eq!(text(&json(&out)), "hi from b");
    let (code, out, err) = through_stdio(&config, &["call", "echo", "--arg", "text=hi from a"], None);
    assert_eq!(code, 0, "{err}");
    assert_eq!(text(&json(&out)), "hi from a");

    // A tool error stays a tool error: printed, exit status 1.
    let (code, out, err) = through_stdio(&config, &["call", "b__fail"], None);
    assert_eq!(code, 1, "{out} {err}");
    assert_eq!(json(&out)["isError"], true, "{out}");

    // A name nobody serves is the gateway's invalid-params error.
    let (code, out, err) = through_stdio(&config, &["call", "no_such_tool"], None);
    assert_eq!(code, 5, "{out} {err}");
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("-32602"), "{err}");
    // Nor is a prefixed name of the unprefixed upstream served.
    let (code, _, err) = through_stdio(&config, &["call", "a__echo", "--arg", "text=x"], None);
    assert_eq!(code, 5, "{err}");
    assert!(err.contains("-32602"), "{err}");
}

#[test]
fn the_same_over_http_downstream() {
    let dir = Dir::new("naming-http");
    let config = two_upstreams(&dir);
    let gateway = gateway_support::gateway_http(&config);

    let (code, out, err) = through_url(gateway.url(), &["list", "tools"]);
    assert_eq!(code, 0, "{err}\n{}", gateway.stderr());
    let names = tool_names(&json(&out));
    assert!(names.iter().any(|n| n == "echo") && names.iter().any(|n| n == "b__add"), "{names:?}");

    let (code, out, err) = through_url(gateway.url(), &["call", "b__add", r#"{"a":1,"b":2}"#]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json(&out)["structuredContent"], serde_json::json!({"sum": 3.0}), "{out}");

    let (code, out, _) = through_url(gateway.url(), &["call", "fail"]);
    assert_eq!(code, 1, "{out}");
    assert_eq!(json(&out)["isError"], true, "{out}");

    let (code, _, err) = through_url(gateway.url(), &["call", "no_such_tool"]);
    assert_eq!(code, 5, "{err}");
    assert!(err.contains("-32602"), "{err}");
}

#[test]
fn a_clashing_resource_uri_is_namespaced() {
    let dir = Dir::new("resources");
    let config = two_upstreams(&dir);

    let (code, out, err) = through_stdio(&config, &["list", "resources"], None);
    assert_eq!(code, 0, "{err}");
    let uris: Vec<String> = json(&out)["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap().to_owned())
        .collect();
    assert!(uris.iter().any(|u| u == "demo://readme"), "{uris:?}");
    assert!(uris.iter().any(|u| u == "b+demo://readme"), "{uris:?}");

    let (code, out, err) = through_stdio(&config, &["read", "b+demo://readme"], None);
    assert_eq!(code, 0, "{err}");
    let result = json(&out);
    assert_eq!(result["contents"][0]["uri"], "b+demo://readme", "{result}");
    assert!(result["contents"][0]["text"].as_str().unwrap().contains("mcpkit demo"), "{result}");

    let (code, out, err) = through_stdio(&config, &["read", "demo://readme"], None);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json(&out)["contents"][0]["uri"], "demo://readme", "{out}");
}

#[test]
fn a_never_clash_fails_the_start() {
    let dir = Dir::new("never");
    let config = dir.write_config(&[stdio_upstream("a", ""), stdio_upstream("b", "")].concat().replacen(
        "[servers.a]",
        "[gateway]\nnaming = \"never\"\n\n[servers.a]",
        1,
    ));
    let (code, out, err) = support::run(&["gateway", "--config", config.to_str().unwrap(), "--check"]);
    assert_eq!(code, 2, "{out}\n{err}");
    let message = err.lines().find(|l| l.starts_with("mcpkit: ")).unwrap_or_else(|| panic!("{err}"));
    assert!(message.contains("conflict"), "{message}");
    assert!(message.contains("\"echo\""), "names the tool: {message}");
    assert!(message.contains(" a ") && message.contains(" b"), "names both upstreams: {message}");
}

#[test]
fn check_reports_ready_upstreams() {
    let dir = Dir::new("check");
    let config = two_upstreams(&dir);
    let (code, out, err) = support::run(&["gateway", "--config", config.to_str().unwrap(), "--check"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let status = json(&out);
    for name in ["a", "b"] {
        let upstream = gateway_support::upstream(&status, name);
        assert_eq!(upstream["state"], "ready", "{status}");
        assert_eq!(upstream["transport"], "stdio", "{status}");
        assert!(upstream["tools"].as_u64().unwrap() >= 6, "{status}");
    }
    let each = gateway_support::upstream(&status, "a")["tools"].as_u64().unwrap();
    assert_eq!(status["tools"].as_u64().unwrap(), 2 * each, "{status}");
    assert_eq!(status["conflicts"], serde_json::json!([]), "{status}");
}

#[test]
fn a_missing_command_is_down_and_the_rest_is_served() {
    let dir = Dir::new("missing");
    let missing = dir.path().join("no-such-server");
    let config = [
        stdio_upstream("a", ""),
        format!("[servers.gone]\ncommand = {}\n", gateway_support::quoted(missing.to_str().unwrap())),
    ]
    .concat();
    let config = dir.write_config(&config);

    let (code, out, err) = support::run(&["gateway", "--config", config.to_str().unwrap(), "--check"]);
    assert_eq!(code, 1, "{out}\n{err}");
    let status = json(&out);
    assert_eq!(gateway_support::upstream(&status, "a")["state"], "ready", "{status}");
    let gone = gateway_support::upstream(&status, "gone");
    assert_eq!(gone["state"], "down", "{status}");
    assert!(gone["last_error"].as_str().is_some_and(|e| !e.is_empty()), "{status}");
    assert!(status["tools"].as_u64().unwrap() >= 6, "{status}");

    // A live gateway serves a's tools all the same.
    let (code, out, err) = through_stdio(&config, &["list", "tools"], None);
    assert_eq!(code, 0, "{err}");
    let names = tool_names(&json(&out));
    assert!(names.iter().any(|n| n == "echo") && names.iter().any(|n| n == "add"), "{names:?}");
    let (code, out, err) = through_stdio(&config, &["call", "echo", "--arg", "text=still here"], None);
    assert_eq!(code, 0, "{err}");
    assert_eq!(text(&json(&out)), "still here");
}

#[test]
fn prompts_and_templates_are_named_like_tools_and_resources() {
    let dir = Dir::new("prompts");
    let config = two_upstreams(&dir);

    let (code, out, err) = through_stdio(&config, &["list", "prompts"], None);
    assert_eq!(code, 0, "{err}");
    let prompts: Vec<String> = json(&out)["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(prompts.contains(&"poem".to_owned()) && prompts.contains(&"b__poem".to_owned()), "{prompts:?}");
    let (code, out, err) = through_stdio(&config, &["prompt", "b__poem", "--arg", "subject=sea"], None);
    assert_eq!(code, 0, "{err}");
    let result = json(&out);
    assert!(result["messages"][0]["content"]["text"].as_str().unwrap().contains("sea"), "{result}");

    let (code, out, err) = through_stdio(&config, &["list", "templates"], None);
    assert_eq!(code, 0, "{err}");
    let templates: Vec<String> = json(&out)["resourceTemplates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["uriTemplate"].as_str().unwrap().to_owned())
        .collect();
    assert!(templates.contains(&"demo://notes/{id}".to_owned()), "{templates:?}");
    assert!(templates.contains(&"b+demo://notes/{id}".to_owned()), "{templates:?}");
    let (code, out, err) = through_stdio(&config, &["read", "b+demo://notes/7"], None);
    assert_eq!(code, 0, "{err}");
    let result = json(&out);
    assert_eq!(result["contents"][0]["uri"], "b+demo://notes/7", "{result}");
    assert!(result["contents"][0]["text"].as_str().unwrap().starts_with("Note 7"), "{result}");
}

#[test]
fn an_mcp_servers_json_file_is_a_configuration_too() {
    let dir = Dir::new("mcp-servers");
    let config = dir.path().join("mcp.json");
    let servers = serde_json::json!({
        "mcpServers": {
            "one": {"command": support::BIN, "args": ["serve", "--stdio"]},
            "two": {"command": support::BIN, "args": ["serve", "--stdio"], "naming": "always"},
        }
    });
    std::fs::write(&config, servers.to_string()).unwrap();
    let (code, out, err) = through_stdio(&config, &["list", "tools"], None);
    assert_eq!(code, 0, "{err}");
    let names = tool_names(&json(&out));
    assert!(names.iter().any(|n| n == "echo") && names.iter().any(|n| n == "two__echo"), "{names:?}");
    let (code, out, err) = through_stdio(&config, &["call", "two__echo", "--arg", "text=from json"], None);
    assert_eq!(code, 0, "{err}");
    assert_eq!(text(&json(&out)), "from json");
}

#[test]
fn a_rename_onto_a_taken_name_fails_the_start() {
    let dir = Dir::new("rename-clash");
    let config =
        [stdio_upstream("a", ""), stdio_upstream("b", "naming = \"always\"\nrename = { echo = \"add\" }")];
    let config = dir.write_config(&config.concat());
    let (code, out, err) = support::run(&["gateway", "--config", config.to_str().unwrap(), "--check"]);
    assert_eq!(code, 2, "{out}\n{err}");
    assert!(err.contains("tool \"add\" is offered by a and b"), "{err}");
}

/// The README's main job: `mcpkit gateway` with no configuration serves the demonstration
/// server on a loopback port, prints each upstream's state, and adds the user's own
/// `mcpServers` servers when there is such a file.
#[test]
fn without_a_configuration_the_gateway_serves_the_demo_and_the_users_servers() {
    let dir = Dir::new("demo");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let start = |mcpkit_config: Option<&std::path::Path>| {
        let mut command = support::command(&["gateway"]);
        command.env("HOME", &home).env_remove("XDG_CONFIG_HOME").env_remove("MCPKIT_CONFIG");
        if let Some(file) = mcpkit_config {
            command.env("MCPKIT_CONFIG", file);
        }
        gateway_support::HttpGateway(mcp_testkit::process::ListeningProcess::start(command))
    };

    let gateway = start(None);
    let (code, out, err) = through_url(gateway.url(), &["list", "tools"]);
    assert_eq!(code, 0, "{err}");
    assert!(tool_names(&json(&out)).contains(&"echo".to_owned()), "{out}");
    gateway_support::eventually("the upstream's state line", std::time::Duration::from_secs(10), || {
        let stderr = gateway.stderr();
        if stderr.contains("upstream demo: ready (stdio") { Ok(()) } else { Err(stderr) }
    });
    drop(gateway);

    let mine = dir.path().join("mine.json");
    let exe = support::BIN;
    std::fs::write(
        &mine,
        serde_json::json!({"mcpServers": {"mine": {"command": exe, "args": ["serve", "--stdio"]}}})
            .to_string(),
    )
    .unwrap();
    let gateway = start(Some(&mine));
    let (code, out, err) = through_url(gateway.url(), &["list", "tools"]);
    assert_eq!(code, 0, "{err}");
    let names = tool_names(&json(&out));
    // Both upstreams offer the same tools: when-ambiguous prefixes them for both.
    assert!(
        names.contains(&"demo__echo".to_owned()) && names.contains(&"mine__echo".to_owned()),
        "{names:?}"
    );
}

/// `mcpkit gateway check CONFIG` validates without starting anything: a command that does not
/// exist is no error there (nothing runs), a typo in `[gateway]` is, naming the field.
#[test]
fn gateway_check_validates_without_starting_anything() {
    let dir = Dir::new("check-only");
    let config = dir.write_config("[servers.ghost]\ncommand = \"/nonexistent/mcp-server\"\n");
    let (code, out, err) = support::run(&["gateway", "check", config.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("1 upstream(s)") && out.contains("ghost (stdio: /nonexistent/mcp-server)"), "{out}");

    let bad = dir.write_config("[gateway]\nnameing = \"always\"\n");
    let (code, _, err) = support::run(&["gateway", "check", bad.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("gateway.nameing") && err.contains("unknown key"), "{err}");
}

/// A configuration every user may write is refused (they would choose what runs), and so is a
/// `${file:…}` secret they may write; once they may not, it is read.
#[cfg(unix)]
#[test]
fn files_other_users_may_write_are_refused() {
    use std::os::unix::fs::PermissionsExt;
    let set = |path: &std::path::Path, mode| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    let dir = Dir::new("permissions");
    std::fs::write(dir.path().join("token"), "t0k\n").unwrap();
    let config = dir.write_config(
        "[servers.remote]\nurl = \"https://mcp.example.com/mcp\"\nheaders = { Authorization = \"Bearer ${file:token}\" }\n",
    );
    let check = || support::run(&["gateway", "check", config.to_str().unwrap()]);

    set(&config, 0o666);
    let (code, _, err) = check();
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("writable by other users") && err.contains("chmod go-w"), "{err}");

    set(&config, 0o644);
    set(&dir.path().join("token"), 0o602);
    let (code, _, err) = check();
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("${file:") && err.contains("/token is writable by other users"), "{err}");

    set(&dir.path().join("token"), 0o600);
    let (code, out, err) = check();
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("remote (http: "), "{out}");
}
