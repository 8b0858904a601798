//! The real `mcpkit` binary as an MCP client, against `mcpkit serve` over stdio and HTTP and
//! through an `mcpServers` config file. Stdout is a pipe here, so the output is JSON.

use std::io::{BufRead, BufReader};
use std::process::Stdio;

mod support;

use support::{BIN, run as mcpkit, serve_http};

/// `mcpkit <args> -- mcpkit serve --stdio`.
fn stdio(args: &[&str]) -> (i32, String, String) {
    let mut all = args.to_vec();
    all.extend(["--", BIN, "serve", "--stdio"]);
    mcpkit(&all)
}

fn json(out: &str) -> serde_json::Value {
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("not one JSON document ({e}): {out}"))
}

fn tool_names(result: &serde_json::Value) -> Vec<String> {
    result["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
}

fn assert_demo_tools(out: &str) {
    let names = tool_names(&json(out));
    for expected in ["echo", "add", "countdown", "greet_me", "haiku", "fail"] {
        assert!(names.iter().any(|n| n == expected), "{expected} missing from {names:?}");
    }
}

fn text_of(result: &serde_json::Value) -> &str {
    result["content"][0]["text"].as_str().unwrap()
}

#[test]
fn list_tools_over_stdio() {
    let (code, out, err) = stdio(&["list", "tools"]);
    assert_eq!(code, 0, "{err}");
    assert_demo_tools(&out);
}

#[test]
fn list_resources_templates_prompts_over_stdio() {
    let (code, out, err) = stdio(&["list", "resources"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json(&out)["resources"][0]["uri"], "demo://readme");
    let (code, out, err) = stdio(&["list", "templates"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json(&out)["resourceTemplates"][0]["uriTemplate"], "demo://notes/{id}");
    let (code, out, err) = stdio(&["list", "prompts"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json(&out)["prompts"][0]["name"], "poem");
}

/// A server that declares tools and nothing else (the flood fixture, flooding nothing).
fn tools_only(args: &[&str]) -> (i32, String, String) {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/flood_server.py");
    let script = script.to_str().unwrap().to_owned();
    let mut all = args.to_vec();
    all.extend(["--", "python3", &script, "0"]);
    mcpkit(&all)
}

#[test]
fn a_line_a_server_prints_that_is_not_json_rpc_is_named_and_skipped() {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/noisy_server.py");
    let (code, out, err) = mcpkit(&["list", "tools", "--", "python3", script.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(tool_names(&json(&out)), ["quiet"]);
    assert!(err.contains("not JSON-RPC") && err.contains("Server starting on stdio..."), "{err}");
}

#[test]
fn a_list_the_server_does_not_offer_is_empty() {
    for (kind, key) in
        [("resources", "resources"), ("templates", "resourceTemplates"), ("prompts", "prompts")]
    {
        let (code, out, err) = tools_only(&["list", kind]);
        assert_eq!(code, 0, "list {kind}: {err}");
        assert_eq!(json(&out), serde_json::json!({ key: [] }), "list {kind}");
    }
    let (code, out, err) = tools_only(&["list", "tools"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(tool_names(&json(&out)), ["still_here"]);
}

#[test]
fn call_echo_with_json_and_with_arg() {
    let (code, out, err) = stdio(&["call", "echo", r#"{"text":"hello"}"#]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(text_of(&json(&out)), "hello");

    let (code, out, err) = stdio(&["call", "echo", "--arg", "text=from arg"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(text_of(&json(&out)), "from arg");

    // --arg values are JSON when they parse: numbers for add.
    let (code, out, err) = stdio(&["call", "add", "--arg", "a=2", "--arg", "b=3.5"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json(&out)["structuredContent"]["sum"], 5.5);
}

#[test]
fn call_fail_exits_1() {
    let (code, out, _) = stdio(&["call", "fail"]);
    assert_eq!(code, 1);
    assert_eq!(json(&out)["isError"], true);
}

#[test]
fn call_unknown_tool_exits_5_with_one_line() {
    let (code, out, err) = stdio(&["call", "no_such_tool"]);
    assert_eq!(code, 5, "unknown tool");
    assert!(out.is_empty(), "{out}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("mcpkit: "), "{err}");
}

#[test]
fn read_readme() {
    let (code, out, err) = stdio(&["read", "demo://readme"]);
    assert_eq!(code, 0, "{err}");
    let result = json(&out);
    assert_eq!(result["contents"][0]["uri"], "demo://readme");
    assert!(result["contents"][0]["text"].as_str().unwrap().contains("mcpkit demo"));
}

#[test]
fn prompt_poem_with_arg() {
    let (code, out, err) = stdio(&["prompt", "poem", "--arg", "subject=sea"]);
    assert_eq!(code, 0, "{err}");
    let result = json(&out);
    assert!(result["messages"][0]["content"]["text"].as_str().unwrap().contains("sea"), "{result}");

    // Prompt arguments are strings: sent as typed, not re-serialized.
    let (code, out, err) = stdio(&["prompt", "poem", "--arg", r#"subject={"a":  1}"#]);
    assert_eq!(code, 0, "{err}");
    let result = json(&out);
    assert!(result["messages"][0]["content"]["text"].as_str().unwrap().contains(r#"{"a":  1}"#), "{result}");
}

#[test]
fn the_demo_readme_and_instructions_name_every_tool() {
    let (code, out, err) = stdio(&["list", "tools"]);
    assert_eq!(code, 0, "{err}");
    let names = tool_names(&json(&out));
    let (code, out, err) = stdio(&["read", "demo://readme"]);
    assert_eq!(code, 0, "{err}");
    let readme = json(&out)["contents"][0]["text"].as_str().unwrap().to_owned();
    let (code, out, err) = stdio(&["info"]);
    assert_eq!(code, 0, "{err}");
    let instructions = json(&out)["instructions"].as_str().unwrap().to_owned();
    let words = |text: &str| -> Vec<String> {
        text.split(|c: char| !(c.is_alphanumeric() || c == '_')).map(str::to_owned).collect()
    };
    for name in &names {
        assert!(words(&readme).contains(name), "{name}: {readme}");
        assert!(words(&instructions).contains(name), "{name}: {instructions}");
    }
}

/// The server's log messages are on stderr at --log-level and above (the demo's countdown logs
/// at info when it ends), in both eras; the default level, warning, leaves info out.
#[test]
fn server_log_messages_are_shown_on_stderr() {
    for version in ["2026-07-28", "2025-11-25"] {
        let call = ["call", "countdown", "--arg", "seconds=1", "--protocol-version", version];
        let (code, out, err) = stdio(&[&call[..], &["--log-level", "info"]].concat());
        assert_eq!(code, 0, "{version}: {err}");
        assert_eq!(text_of(&json(&out)), "Lift-off!");
        assert!(err.lines().any(|l| l == "[info] countdown of 1 s finished"), "{version}: {err:?}");
        assert!(!out.contains("finished"), "{version}: stdout is the result alone: {out}");

        let (code, _, err) = stdio(&call);
        assert_eq!(code, 0, "{version}: {err}");
        assert!(!err.contains("countdown of"), "{version}: {err:?}");
        let (code, _, err) = stdio(&[&call[..], &["--log-level", "off"]].concat());
        assert_eq!(code, 0, "{version}: {err}");
        assert!(!err.contains("countdown of"), "{version}: {err:?}");
    }
}

#[test]
fn info_reports_era_version_and_server() {
    let (code, out, err) = stdio(&["info"]);
    assert_eq!(code, 0, "{err}");
    let info = json(&out);
    assert_eq!(info["era"], "modern");
    assert_eq!(info["protocolVersion"], "2026-07-28");
    assert_eq!(info["transport"], "stdio");
    assert_eq!(info["serverInfo"]["name"], "mcpkit-demo");

    let (code, out, err) = stdio(&["info", "--protocol-version", "2025-06-18"]);
    assert_eq!(code, 0, "{err}");
    let info = json(&out);
    assert_eq!(info["era"], "legacy");
    assert_eq!(info["protocolVersion"], "2025-06-18");
}

#[test]
fn usage_errors_exit_2() {
    // No server at all.
    let (code, out, err) = mcpkit(&["list", "tools"]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("mcpkit: "), "{err}");
    // A malformed --arg.
    let (code, _, err) = stdio(&["call", "echo", "--arg", "novalue"]);
    assert_eq!(code, 2);
    assert!(err.contains("KEY=VALUE"), "{err}");
    // Arguments that are not an object.
    let (code, _, _) = stdio(&["call", "echo", "[1]"]);
    assert_eq!(code, 2);
    // An unknown list kind (clap).
    let (code, _, _) = stdio(&["list", "widgets"]);
    assert_eq!(code, 2);
}

#[test]
fn complete_prompt_and_template_arguments() {
    let (code, out, err) = stdio(&["complete", "--prompt", "poem", "style", "s"]);
    assert_eq!(code, 0, "{err}");
    let values = json(&out)["completion"]["values"].clone();
    assert!(values.as_array().unwrap().iter().any(|v| v == "sonnet"), "{values}");

    let (code, out, err) = stdio(&["complete", "--resource", "demo://notes/{id}", "id"]);
    assert_eq!(code, 0, "{err}");
    assert!(json(&out)["completion"]["values"].as_array().is_some());

    // No completions: JSON as the server sent it; on a terminal, a word saying so.
    let (code, out, err) = stdio(&["complete", "--prompt", "poem", "style", "zz"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json(&out)["completion"]["values"], serde_json::json!([]));
    #[cfg(unix)]
    {
        let args = ["complete", "--prompt", "poem", "style", "zz", "--", BIN, "serve", "--stdio"];
        assert_eq!(support::on_a_terminal(support::command(&args)), "(no completions)\n");
    }

    // Neither --prompt nor --resource.
    let (code, _, err) = stdio(&["complete", "style"]);
    assert_eq!(code, 2);
    assert_eq!(err, "mcpkit: give --prompt NAME or --resource URI_TEMPLATE\n");
}

#[test]
fn a_server_given_as_a_positional_is_refused_with_a_hint() {
    for (line, hint) in [
        (&["list", "tools", "http://127.0.0.1:1/mcp"][..], "--url http://127.0.0.1:1/mcp"),
        (&["list", "tools", "npx", "-y", "server"][..], "-- npx"),
        (&["call", "echo", "http://127.0.0.1:1/mcp"][..], "--url http://127.0.0.1:1/mcp"),
    ] {
        let (code, out, err) = mcpkit(line);
        assert_eq!(code, 2, "{line:?}: {err}");
        assert!(out.is_empty(), "{line:?}: {out}");
        assert!(err.contains(hint) && err.lines().count() == 1, "{line:?}: {err}");
    }
}

/// The status of a `ping` POSTed to `url` with `host` as its Host header.
fn status_with_host(url: &str, host: &str) -> String {
    use std::io::{Read, Write};
    let address = url.trim_start_matches("http://").split('/').next().unwrap();
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer.lines().next().unwrap_or_default().to_owned()
}

#[test]
fn serve_accepts_the_hosts_it_is_told_to() {
    let plain = serve_http(&[]);
    let port = plain.url().rsplit(':').next().unwrap().split('/').next().unwrap().to_owned();
    assert!(status_with_host(plain.url(), &format!("mcp.test:{port}")).contains(" 403 "));
    // The server says why, so that its operator knows what to allow.
    let logged = format!("refused a request with Host \"mcp.test:{port}\": not an allowed host");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !plain.stderr().contains(&logged) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(plain.stderr().contains(&logged), "{}", plain.stderr());
    let widened = serve_http(&["--allow-host", "mcp.test"]);
    let port = widened.url().rsplit(':').next().unwrap().split('/').next().unwrap().to_owned();
    let status = status_with_host(widened.url(), &format!("mcp.test:{port}"));
    assert!(!status.contains(" 403 ") && status.starts_with("HTTP/1.1 "), "{status}");
    assert!(status_with_host(widened.url(), "other.test").contains(" 403 "));
}

#[test]
fn describe_shows_one_tool_whole() {
    let (code, out, err) = stdio(&["describe", "add"]);
    assert_eq!(code, 0, "{err}");
    let tool = json(&out);
    assert_eq!(tool["name"], "add");
    assert_eq!(tool["inputSchema"]["required"], serde_json::json!(["a", "b"]));
    assert_eq!(tool["outputSchema"]["properties"]["sum"]["type"], "number");
    let (code, out, err) = stdio(&["describe", "nope"]);
    assert_eq!(code, 5, "{out}");
    assert!(err.contains(r#"unknown tool "nope""#) && err.contains("echo, add"), "{err}");
}

#[test]
fn completion_context_arguments_are_sent() {
    let (code, out, err) =
        stdio(&["-v", "complete", "--prompt", "poem", "style", "li", "--context", "subject=rust"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json(&out)["completion"]["values"][0], "limerick");
    let sent =
        err.lines().find(|l| l.contains("completion/complete")).expect("the request on the wire trace");
    assert!(sent.contains(r#""context":{"arguments":{"subject":"rust"}}"#), "{sent}");
    // A context argument without `=` is a usage error, before any server is started.
    let (code, _, err) = stdio(&["complete", "--prompt", "poem", "style", "li", "--context", "subject"]);
    assert_eq!(code, 2, "{err}");
}

/// The first line `mcpkit listen <args> -- mcpkit serve --stdio` prints (then it is killed).
fn first_listen_event(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["listen"];
    all.extend(args);
    all.extend(["--", BIN, "serve", "--stdio"]);
    let mut child = support::command(&all)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn mcpkit listen");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let read = stdout.read_line(&mut line);
    let _ = child.kill();
    let _ = child.wait();
    read.unwrap();
    json(&line)
}

#[test]
fn listen_prints_one_json_line_per_event() {
    let event = first_listen_event(&["--tools", "--resource", "demo://readme"]);
    assert_eq!(event["acknowledged"]["toolsListChanged"], true, "{event}");
    assert_eq!(event["acknowledged"]["resourceSubscriptions"][0], "demo://readme", "{event}");
    assert!(event["acknowledged"].get("promptsListChanged").is_none(), "{event}");
}

#[test]
fn listen_without_a_choice_listens_to_every_list() {
    for args in [&[][..], &["--resource", "demo://readme"][..]] {
        let event = first_listen_event(args);
        for list in ["toolsListChanged", "promptsListChanged", "resourcesListChanged"] {
            assert_eq!(event["acknowledged"][list], true, "{args:?}: {event}");
        }
        if !args.is_empty() {
            assert_eq!(event["acknowledged"]["resourceSubscriptions"][0], "demo://readme", "{event}");
        }
    }
}

#[test]
fn over_http() {
    let server = serve_http(&[]);
    let url = server.url();
    let (code, out, err) = mcpkit(&["list", "tools", "--url", url]);
    assert_eq!(code, 0, "{err}");
    assert_demo_tools(&out);

    let (code, out, err) = mcpkit(&["call", "echo", "--url", url, "--arg", "text=over http"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(text_of(&json(&out)), "over http");

    let (code, _, _) = mcpkit(&["call", "fail", "--url", url]);
    assert_eq!(code, 1);

    let (code, _, err) = mcpkit(&["call", "no_such_tool", "--url", url]);
    assert_eq!(code, 5);
    assert_eq!(err.lines().count(), 1, "{err}");

    let (code, out, err) = mcpkit(&["info", "--url", url]);
    assert_eq!(code, 0, "{err}");
    let info = json(&out);
    assert_eq!(info["transport"], "streamable-http");
    assert_eq!(info["serverInfo"]["name"], "mcpkit-demo");

    let (code, out, err) = mcpkit(&["read", "demo://readme", "--url", url]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json(&out)["contents"][0]["uri"], "demo://readme");
}

#[test]
fn via_config_file() {
    let server = serve_http(&[]);
    let dir = std::env::temp_dir().join(format!("mcpkit-client-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("config.json");
    let config = serde_json::json!({
        "mcpServers": {
            "demo": { "command": BIN, "args": ["serve", "--stdio"], "env": { "RUST_LOG": "warn" } },
            "web": { "url": server.url(), "headers": { "x-test": "yes" } },
        }
    });
    std::fs::write(&path, config.to_string()).unwrap();
    let file = path.to_str().unwrap();

    let (code, out, err) = mcpkit(&["list", "tools", "--config", file, "--server", "demo"]);
    assert_eq!(code, 0, "{err}");
    assert_demo_tools(&out);

    let (code, out, err) =
        mcpkit(&["call", "echo", "--config", file, "--server", "web", "--arg", "text=cfg"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(text_of(&json(&out)), "cfg");

    // $MCPKIT_CONFIG names the file when --config is not given.
    let out = support::command(&["prompt", "poem", "--arg", "subject=sea", "--server", "demo"])
        .env("MCPKIT_CONFIG", file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));

    // An unknown server name is a usage error.
    let (code, _, err) = mcpkit(&["list", "tools", "--config", file, "--server", "nope"]);
    assert_eq!(code, 2);
    assert_eq!(err, format!("mcpkit: no server \"nope\" in {file}; it has: demo, web\n"));
    let empty = dir.join("empty.json");
    std::fs::write(&empty, r#"{"mcpServers": {}}"#).unwrap();
    let empty = empty.to_str().unwrap();
    let (code, _, err) = mcpkit(&["list", "tools", "--config", empty, "--server", "nope"]);
    assert_eq!(code, 2);
    assert_eq!(err, format!("mcpkit: no server \"nope\" in {empty}; it has none\n"));

    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn arg_values_that_the_schema_wants_as_strings_stay_text() {
    // echo's `text` is a string: `123`, `true` and `[1, 2]` are sent as typed.
    for text in ["123", "true", "[1, 2]", "null"] {
        let (code, out, err) = stdio(&["call", "echo", "--arg", &format!("text={text}")]);
        assert_eq!(code, 0, "{text}: {out}{err}");
        assert_eq!(text_of(&json(&out)), text);
    }
    // add's `a` and `b` are numbers: still sent as numbers.
    let (code, out, err) = stdio(&["call", "add", "--arg", "a=1", "--arg", "b=2"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json(&out)["structuredContent"]["sum"], 3.0);
}

#[test]
fn a_repeated_arg_is_a_usage_error() {
    for command in [["call", "echo"], ["prompt", "poem"]] {
        let mut args = command.to_vec();
        args.extend(["--arg", "text=a", "--arg", "subject=b", "--arg", "text=c"]);
        let (code, out, err) = stdio(&args);
        assert_eq!(code, 2, "{command:?}: {out}");
        assert_eq!(err, "mcpkit: --arg \"text\" is given more than once\n", "{command:?}");
    }
}

#[test]
fn timeouts_must_be_positive_and_not_too_large() {
    for (value, expected) in [("0", "must be more than 0"), ("1e30", "too large"), ("-2", "more than 0")] {
        let (code, out, err) = stdio(&["info", &format!("--timeout={value}")]);
        assert_eq!(code, 2, "{value}: {out}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(expected), "{value}: {err}");
    }
}

#[test]
fn progress_does_not_extend_the_timeout() {
    // The countdown reports progress every second: a 1.5 s limit ends it all the same.
    let (code, out, err) = stdio(&["call", "countdown", "--arg", "seconds=3", "--timeout", "1.5"]);
    assert_eq!(code, 3, "timed out: {out}");
    assert!(err.contains("no answer within 1.5s"), "{err}");
}

#[test]
fn passwords_in_urls_are_not_printed() {
    let url = format!("http://user:s3cr3tpw@{}/mcp", support::closed_authority());
    for args in [vec!["info", "--url", &url], vec!["login", &url]] {
        let (code, _, err) = mcpkit(&args);
        assert_eq!(code, 3, "{args:?}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!err.contains("s3cr3tpw"), "{err}");
        assert!(err.contains("http://user:***@127.0.0.1:"), "{err}");
        // Why the connection failed, not just that it did.
        assert!(err.to_lowercase().contains("connection refused"), "{err}");
    }
}

#[test]
fn a_server_that_exits_while_connecting_points_to_its_stderr() {
    // Its stderr's last lines are in the error, without -vv.
    let (code, _, err) = mcpkit(&["info", "--", BIN, "serve", "--no-such-flag"]);
    assert_eq!(code, 3, "cannot connect");
    assert!(err.starts_with("mcpkit: cannot connect to "), "{err}");
    assert!(err.contains("its stderr ended with:") && err.contains("--no-such-flag"), "{err}");
    // A server that says nothing: the error says so.
    let (code, _, err) = mcpkit(&["info", "--", "sh", "-c", "exit 3"]);
    assert_eq!(code, 3);
    assert!(err.contains("it wrote nothing on its stderr"), "{err}");
    // With -vv its stderr was shown as it came: not repeated in the error.
    let (code, _, err) = mcpkit(&["-vv", "info", "--", BIN, "serve", "--no-such-flag"]);
    assert_eq!(code, 3);
    assert!(err.contains("[stderr] ") && !err.contains("its stderr ended with"), "{err}");
}

#[test]
fn serve_http_on_a_host_name_or_a_port() {
    for (addr, hosts) in [("localhost:0", &["127.0.0.1", "[::1]"][..]), ("0", &["127.0.0.1"][..])] {
        let server =
            mcp_testkit::process::ListeningProcess::start(support::command(&["serve", "--http", addr]));
        let url = server.url();
        assert!(hosts.iter().any(|h| url.starts_with(&format!("http://{h}:"))), "{addr}: {url}");
        assert!(!url.ends_with(":0/mcp"), "{url}");
        let (code, out, err) = mcpkit(&["info", "--url", url]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(json(&out)["transport"], "streamable-http");
    }
}

#[test]
fn config_entries_are_decoded_one_at_a_time() {
    let server = serve_http(&[]);
    let config = serde_json::json!({
        "mcpServers": {
            "demo": { "type": "stdio", "command": BIN, "args": ["serve", "--stdio"] },
            "web": { "type": "http", "url": server.url() },
            "streamable": { "type": "streamable-http", "url": server.url() },
            "legacy": { "type": "sse", "url": server.url().replace("/mcp", "/sse") },
            "spaces": { "command": format!("{BIN} serve --stdio") },
            "missing": { "command": "/nonexistent/mcpkit-test-program" },
            "both": { "command": BIN, "url": server.url() },
            "neither": { "args": ["serve"] },
            "env": { "command": BIN, "env": { "N": 1 } },
            "kind": { "type": "websocket", "url": "ws://127.0.0.1:1/" },
            "mismatch": { "type": "stdio", "url": server.url() },
            "empty": { "command": "" },
        }
    });
    let path = support::config_file("entries", &config);
    let file = path.to_str().unwrap();
    for name in ["demo", "web", "streamable", "legacy"] {
        let (code, out, err) = mcpkit(&["list", "tools", "--config", file, "--server", name]);
        assert_eq!(code, 0, "{name}: {err}");
        assert_demo_tools(&out);
    }
    // `"type": "sse"` is the HTTP+SSE transport, chosen rather than detected.
    for (name, transport) in [("web", "streamable-http"), ("legacy", "http+sse")] {
        let (code, out, err) = mcpkit(&["info", "--config", file, "--server", name]);
        assert_eq!(code, 0, "{name}: {err}");
        assert_eq!(json(&out)["transport"], transport, "{name}");
    }
    let cases = [
        ("both", format!("{file}: server `both`: field `command`: both `command` and `url` are given")),
        ("neither", format!("{file}: server `neither`: field `command`: neither `command` (stdio) nor `url`")),
        ("env", format!("{file}: server `env`: field `env.N`: expected a string, found")),
        ("kind", format!("{file}: server `kind`: field `type`: unknown transport \"websocket\"")),
        ("mismatch", format!("{file}: server `mismatch`: field `type`: `type` is \"stdio\" but there is no `command`")),
        ("empty", format!("{file}: server `empty`: field `command`: is empty")),
        (
            "spaces",
            format!(
                "cannot start \"{BIN} serve --stdio\" (server \"spaces\"): No such file or directory — \"command\" is the program alone; put its arguments in \"args\""
            ),
        ),
        (
            "missing",
            "cannot start \"/nonexistent/mcpkit-test-program\" (server \"missing\"): No such file or directory"
                .to_owned(),
        ),
    ];
    for (name, expected) in cases {
        let (code, _, err) = mcpkit(&["info", "--config", file, "--server", name]);
        assert_eq!(code, if matches!(name, "spaces" | "missing") { 3 } else { 2 }, "{name}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with(&format!("mcpkit: {expected}")), "{name}: {err}");
        if name == "missing" {
            assert!(!err.contains("\"args\""), "{err}");
        }
    }
    let _ = std::fs::remove_file(&path);
}

/// A stdio server started by mcpkit gets the minimal environment — not a secret of the
/// caller's — unless `--inherit-env`.
#[test]
fn a_stdio_server_gets_no_secret_unless_asked() {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/session_server.sh");
    let script = script.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["call", "whoami", "--json"];
        args.extend_from_slice(extra);
        args.extend(["--", "bash", script]);
        let mut command = support::command(&args);
        command.env("MCPKIT_TEST_SECRET", "s3cret");
        support::run_with(command, None)
    };
    let (code, out, err) = run(&[]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("secret unset"), "{out}");
    let (code, out, err) = run(&["--inherit-env"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("secret s3cret"), "{out}");
}

/// `list` declares what `call` run the same way declares: a tool offered only to clients that
/// can answer questions is listed exactly when `call` could use it.
#[test]
fn list_declares_what_call_would() {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/asking_server.sh");
    let script = script.to_str().unwrap();
    let names = |options: &[&str]| {
        let mut args = vec!["list", "tools"];
        args.extend_from_slice(options);
        args.extend(["--", "bash", script]);
        let (code, out, err) = mcpkit(&args);
        assert_eq!(code, 0, "{options:?}: {err}");
        tool_names(&json(&out))
    };
    // In a pipe, without --yes or --interactive, `call` declares no elicitation: nor does `list`.
    assert_eq!(names(&[]), ["plain"]);
    assert_eq!(names(&["--yes"]), ["plain", "confirm"]);
    assert_eq!(names(&["--interactive"]), ["plain", "confirm"]);
    assert_eq!(names(&["--no-input"]), ["plain"]);
    let (code, out, err) = mcpkit(&["describe", "confirm", "--yes", "--json", "--", "bash", script]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json(&out)["name"], "confirm");
}

/// `listen` asks only for what the server announces, says so on a terminal, and ends with the
/// server: never a wait that nothing can end.
#[test]
fn listen_hears_what_the_server_announces_and_ends_with_it() {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let changing = fixtures.join("changing_server.sh");
    let changing = changing.to_str().unwrap();
    // JSON: the acknowledgement, the change, then the server is gone (status 3).
    let (code, out, err) = mcpkit(&["listen", "--", "bash", changing]);
    assert_eq!(code, 3, "{out}\n{err}");
    let lines: Vec<serde_json::Value> = out.lines().map(json).collect();
    assert_eq!(lines[0], serde_json::json!({"acknowledged": {"toolsListChanged": true}}));
    assert_eq!(lines[1]["method"], "notifications/tools/list_changed");
    assert!(err.contains("server process exited"), "{err}");
    // A terminal: sentences.
    let out = support::on_a_terminal(support::command(&["listen", "--", "bash", changing]));
    assert!(out.contains("listening for tool list changes (Ctrl-C to stop)\ntools changed\n"), "{out}");
    // What it does not announce: refused at once (status 4), not waited for.
    for (args, expected) in [
        (&["--prompts"][..], "does not announce prompt list changes (prompts.listChanged)"),
        (&["--resource", "demo://x"][..], "does not announce resource updates (resources.subscribe)"),
    ] {
        let mut all = vec!["listen"];
        all.extend_from_slice(args);
        all.extend(["--", "bash", changing]);
        let (code, _, err) = mcpkit(&all);
        assert_eq!(code, 4, "{args:?}: {err}");
        assert!(err.contains(expected), "{args:?}: {err}");
    }
    let silent = fixtures.join("session_server.sh");
    let (code, _, err) = mcpkit(&["listen", "--", "bash", silent.to_str().unwrap()]);
    assert_eq!(code, 4, "{err}");
    assert!(
        err.contains("announces no change notifications") && err.contains("nothing to listen for"),
        "{err}"
    );
}

/// `--save DIR`: images and blobs land in files, named on stderr; the output is unchanged.
#[test]
fn images_and_blobs_are_saved_to_files() {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/media_server.sh");
    let script = script.to_str().unwrap();
    let dir = std::env::temp_dir().join(format!("mcpkit-test-saved-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let saved = dir.to_str().unwrap();
    let (code, out, err) = mcpkit(&["call", "picture", "--save", saved, "--", "bash", script]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json(&out)["content"][1]["type"], "image", "the result as sent: {out}");
    let png = dir.join("image-2.png");
    assert!(err.contains(&format!("saved {} (image/png, 8 bytes)", png.display())), "{err}");
    assert_eq!(std::fs::read(&png).unwrap(), b"\x89PNG\r\n\x1a\n");
    let (code, _, err) = mcpkit(&["read", "demo://files/data.bin", "--save", saved, "--", "bash", script]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(dir.join("data.bin")).unwrap(), [0, 1, 2], "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A legacy server names only the revision it agrees to: `info` says so, and `--probe` finds
/// the others it accepts.
#[test]
fn info_probes_the_revisions_of_a_legacy_server() {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/media_server.sh");
    let script = script.to_str().unwrap();
    let (code, out, err) = mcpkit(&["info", "--", "bash", script]);
    assert_eq!(code, 0, "{err}");
    let info = json(&out);
    assert_eq!(
        (info["serverVersions"].clone(), info["versionsProbed"].clone()),
        (serde_json::json!(["2025-11-25"]), false.into())
    );
    let (code, out, err) = mcpkit(&["info", "--probe", "--", "bash", script]);
    assert_eq!(code, 0, "{err}");
    let info = json(&out);
    assert_eq!(info["serverVersions"], serde_json::json!(["2025-11-25", "2025-03-26"]));
    assert_eq!(info["versionsProbed"], true);
    let text = support::on_a_terminal(support::command(&["info", "--", "bash", script]));
    assert!(text.contains("supports      2025-11-25 (a legacy server names only the revision it agrees to; --probe tries the others)"), "{text}");
    // A modern server says them all itself.
    let (_, out, _) = stdio(&["info"]);
    assert!(json(&out).get("versionsProbed").is_none(), "{out}");
}

/// `bench`: every call measured is answered and counted; tool errors and unknown tools apart.
#[test]
fn bench_measures_a_tool_of_any_server() {
    let (code, out, err) = stdio(&[
        "bench",
        "echo",
        "--arg",
        "text=hi",
        "--requests",
        "300",
        "--concurrency",
        "4",
        "--warmup",
        "20",
    ]);
    assert_eq!(code, 0, "{err}");
    let report = json(&out);
    assert_eq!((report["answered"].as_u64(), report["failures"].as_u64()), (Some(300), Some(0)), "{report}");
    assert_eq!((report["tool"].as_str(), report["concurrency"].as_u64()), (Some("echo"), Some(4)));
    let ms = |q: &str| report["latencyMs"][q].as_f64().unwrap();
    assert!(
        0.0 < ms("p50") && ms("p50") <= ms("p90") && ms("p90") <= ms("p99") && ms("p99") <= ms("max"),
        "{report}"
    );
    assert!(report["callsPerSecond"].as_f64().unwrap() > 0.0, "{report}");

    let (code, out, _) = stdio(&["bench", "fail", "--requests", "10", "--warmup", "0"]);
    assert_eq!(code, 1, "tool errors");
    assert_eq!(json(&out)["toolErrors"], 10);
    let (code, out, err) = stdio(&["bench", "nope", "--requests", "10"]);
    assert_eq!((code, out.as_str()), (5, ""), "{err}");
    assert!(err.contains("unknown tool \"nope\""), "{err}");

    let server = serve_http(&[]);
    let (code, out, err) =
        mcpkit(&["bench", "add", r#"{"a": 1, "b": 2}"#, "--requests", "100", "--url", server.url()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json(&out)["answered"], 100);
}

/// A command carries the trace context its environment gives it (`TRACEPARENT`, `TRACESTATE`,
/// `BAGGAGE`) in every request's `_meta`: passed through unchanged when the command records no
/// span of its own (no OTLP endpoint), and a malformed value left out.
#[test]
fn the_environments_trace_context_goes_on_with_every_request() {
    let server = serve_http(&[]);
    let parent = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01";
    let call = |baggage: &str| {
        let mut command = support::command(&["call", "echo", "--arg", "text=x", "--url", server.url(), "-v"]);
        command
            .env("TRACEPARENT", parent)
            .env("TRACESTATE", "vendor=1")
            .env("BAGGAGE", baggage)
            .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
            .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
        let (code, _, err) = support::run_with(command, None);
        assert_eq!(code, 0, "{err}");
        // The wire trace (-v): the tools/call request as sent.
        let line = err.lines().find(|l| l.starts_with("-> ") && l.contains(r#""method":"tools/call""#));
        let request = json(
            line.unwrap_or_else(|| panic!("no tools/call in the wire trace: {err}"))
                .trim_start_matches("-> "),
        );
        request["params"]["_meta"].clone()
    };
    let meta = call("userId=alice,isProduction=false");
    assert_eq!(meta["traceparent"], parent, "{meta}");
    assert_eq!(meta["tracestate"], "vendor=1", "{meta}");
    assert_eq!(meta["baggage"], "userId=alice,isProduction=false", "{meta}");
    let meta = call("not baggage");
    assert_eq!(meta["traceparent"], parent, "{meta}");
    assert!(meta.get("baggage").is_none(), "{meta}");
}
