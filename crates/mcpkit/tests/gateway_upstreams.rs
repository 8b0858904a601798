//! Kinds of upstreams behind `mcpkit gateway`: `mcpkit serve --http` reached by URL (in either
//! era), a lazily started one, and one that does not answer in time.

mod gateway_support;
mod support;

use gateway_support::{
    Dir, PATIENCE, eventually, json, quoted, stdio_upstream, text, through_stdio, through_url, tool_names,
};

/// A `[servers.NAME]` table reaching `url`, with `extra` lines after.
fn http_upstream(name: &str, url: &str, extra: &str) -> String {
    format!("[servers.{name}]\nurl = {}\n{extra}\n", quoted(url))
}

#[test]
fn http_upstreams_beside_a_stdio_one() {
    let modern = support::serve_http(&[]);
    let legacy = support::serve_http(&[]);
    let dir = Dir::new("http-upstreams");
    let config = dir.write_config(
        &[
            stdio_upstream("local", ""),
            http_upstream("web", modern.url(), ""),
            http_upstream("old", legacy.url(), "naming = \"always\"\nprotocol_version = \"2025-06-18\""),
        ]
        .concat(),
    );

    let (code, out, err) = support::run(&["gateway", "--config", config.to_str().unwrap(), "--check"]);
    assert_eq!(code, 0, "{out}\n{err}");
    let status = json(&out);
    assert_eq!(gateway_support::upstream(&status, "web")["transport"], "http", "{status}");
    assert_eq!(gateway_support::upstream(&status, "old")["protocol_version"], "2025-06-18", "{status}");
    for name in ["local", "web", "old"] {
        assert_eq!(gateway_support::upstream(&status, name)["state"], "ready", "{status}");
    }

    // local and web both offer echo under the default naming: both are prefixed.
    let (code, out, err) = through_stdio(&config, &["list", "tools"], None);
    assert_eq!(code, 0, "{err}");
    let names = tool_names(&json(&out));
    for name in ["local__echo", "web__echo", "old__echo", "web__add", "old__add"] {
        assert!(names.iter().any(|n| n == name), "{name} missing from {names:?}");
    }
    assert!(!names.iter().any(|n| n == "echo"), "an ambiguous name stays prefixed: {names:?}");

    for (tool, label) in [("web__add", "modern http"), ("old__add", "legacy http")] {
        let (code, out, err) = through_stdio(&config, &["call", tool, r#"{"a":1,"b":2}"#], None);
        assert_eq!(code, 0, "{label}: {err}");
        assert_eq!(json(&out)["structuredContent"]["sum"], 3.0, "{label}: {out}");
        let (code, out, err) = through_stdio(
            &config,
            &["call", &tool.replace("add", "greet_me"), "--interactive"],
            Some("Ann\ny\n"),
        );
        assert_eq!(code, 0, "{label}: {out}\n{err}");
        assert_eq!(text(&json(&out)), "Hello, Ann!", "{label}");
    }
}

#[test]
fn a_slow_upstream_is_an_internal_error_naming_it() {
    let dir = Dir::new("slow");
    // The countdown reports progress every second, and progress restarts the limit: one of
    // 800 ms expires between two reports (and leaves the start's requests room on a loaded
    // machine).
    let config = dir.write_config(&stdio_upstream("slow", "timeout_ms = 800"));
    let (code, out, err) = through_stdio(&config, &["-v", "call", "countdown", "--arg", "seconds=5"], None);
    assert_eq!(code, 4, "an error answer: {out}\n{err}");
    let answer = err
        .lines()
        .filter_map(|l| l.strip_prefix("<- "))
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|m| m.get("error").is_some())
        .unwrap_or_else(|| panic!("no error response:\n{err}"));
    let error = &answer["error"];
    assert_eq!(error["code"], -32603, "{answer}");
    assert_eq!(error["data"]["upstream"], "slow", "{answer}");
    assert!(error["data"]["outcome"].is_string(), "{answer}");
    assert!(error["message"].as_str().unwrap().contains("slow"), "{answer}");

    // The upstream itself is fine: a quick call still goes through.
    let (code, out, err) = through_stdio(&config, &["call", "echo", "--arg", "text=quick"], None);
    assert_eq!(code, 0, "{err}");
    assert_eq!(text(&json(&out)), "quick");
}

#[test]
fn a_lazy_upstream_starts_when_needed() {
    let dir = Dir::new("lazy");
    let config = dir.write_config(
        &[stdio_upstream("a", ""), stdio_upstream("b", "naming = \"always\"\nstart = \"lazy\"")].concat(),
    );
    let gateway = gateway_support::gateway_http(&config);
    let status = gateway_support::status(&gateway);
    assert_eq!(gateway_support::upstream(&status, "b")["state"], "idle", "not started yet: {status}");

    // Listed at start (its tools are known while it idles); its first call starts it.
    let names = eventually("b's tools to be listed", PATIENCE, || {
        let (code, out, err) = through_url(gateway.url(), &["list", "tools"]);
        let names = if code == 0 { tool_names(&json(&out)) } else { return Err(err) };
        if names.iter().any(|n| n == "b__echo") { Ok(names) } else { Err(format!("{names:?}")) }
    });
    assert!(names.iter().any(|n| n == "echo"), "{names:?}");
    let (code, out, err) = through_url(gateway.url(), &["call", "b__echo", "--arg", "text=lazy"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(text(&json(&out)), "lazy");
    let status = gateway_support::status(&gateway);
    assert_eq!(
        gateway_support::upstream(&status, "b")["state"],
        "ready",
        "started by its first call: {status}"
    );
}

#[test]
fn an_http_upstream_that_goes_away_is_left_out_until_it_is_back() {
    let mut server = support::serve_http(&[]);
    let authority = server.authority().to_owned();
    let dir = Dir::new("http-restart");
    let config = dir.write_config(
        &[stdio_upstream("a", ""), http_upstream("web", server.url(), "naming = \"always\"")].concat(),
    );
    let gateway = gateway_support::gateway_http(&config);
    let (code, _, err) = through_url(gateway.url(), &["call", "web__echo", "--arg", "text=x"]);
    assert_eq!(code, 0, "{err}");

    server.kill();
    // A failed request or the broken stream tells the gateway; its tools are left out.
    let status = eventually("web to be down and its tools left out", PATIENCE, || {
        let _ = through_url(gateway.url(), &["call", "web__echo", "--arg", "text=x"]);
        let status = gateway_support::status(&gateway);
        let web = gateway_support::upstream(&status, "web");
        let (code, out, err) = through_url(gateway.url(), &["list", "tools"]);
        let names = if code == 0 { tool_names(&json(&out)) } else { return Err(err) };
        if web["state"] == "down" && !names.iter().any(|n| n.starts_with("web__")) {
            Ok(status)
        } else {
            Err(format!("{status}\n{names:?}"))
        }
    });
    let web = gateway_support::upstream(&status, "web");
    assert!(web["last_error"].as_str().is_some_and(|e| !e.is_empty()), "{status}");
    assert_eq!(gateway_support::upstream(&status, "a")["state"], "ready", "{status}");
    let (code, out, err) = through_url(gateway.url(), &["call", "echo", "--arg", "text=a still"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(text(&json(&out)), "a still");

    // The server is back on the same address: the gateway reconnects (with backoff).
    let _back =
        mcp_testkit::process::ListeningProcess::start(support::command(&["serve", "--http", &authority]));
    eventually("web to be ready again", PATIENCE, || {
        let status = gateway_support::status(&gateway);
        let web = gateway_support::upstream(&status, "web");
        if web["state"] == "ready" && web["connects"] == 2 { Ok(()) } else { Err(status.to_string()) }
    });
    // Ready comes first; its tools are served once it has been listed again.
    eventually("web's tools to be served again", PATIENCE, || {
        let (code, out, err) = through_url(gateway.url(), &["list", "tools"]);
        let names = if code == 0 { tool_names(&json(&out)) } else { return Err(err) };
        if names.iter().any(|n| n == "web__echo") { Ok(()) } else { Err(format!("{names:?}")) }
    });
    let (code, out, err) = through_url(gateway.url(), &["call", "web__echo", "--arg", "text=back"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(text(&json(&out)), "back");
}
