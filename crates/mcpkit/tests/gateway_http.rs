//! `mcpkit gateway --http`: its `/status` route.

mod gateway_support;
mod support;

use gateway_support::{Dir, json, quoted, stdio_upstream, text, through_url};

#[test]
fn status_reports_every_upstream() {
    let dir = Dir::new("status");
    let config =
        dir.write_config(&[stdio_upstream("a", ""), stdio_upstream("b", "naming = \"always\"")].concat());
    let gateway = gateway_support::gateway_http(&config);

    let status = gateway_support::status(&gateway);
    let mut total = 0;
    for name in ["a", "b"] {
        let upstream = gateway_support::upstream(&status, name);
        assert_eq!(upstream["state"], "ready", "{status}");
        assert_eq!(upstream["connects"], 1, "{status}");
        assert_eq!(upstream["server"].as_str().map(|s| s.contains("mcpkit-demo")), Some(true), "{status}");
        let tools = upstream["tools"].as_u64().unwrap();
        assert!(tools >= 6, "{status}");
        assert!(upstream["resources"].as_u64().unwrap() >= 1, "{status}");
        total += tools;
    }
    assert_eq!(status["tools"], total, "{status}");

    // Forwarded requests are counted.
    let (code, _, err) = through_url(gateway.url(), &["call", "b__echo", "--arg", "text=x"]);
    assert_eq!(code, 0, "{err}");
    let status = gateway_support::status(&gateway);
    assert!(gateway_support::upstream(&status, "b")["requests"].as_u64().unwrap() >= 1, "{status}");
}

/// `mcpkit gateway status URL`: a line per upstream, `--json` the endpoint's document; exit 1
/// when an upstream is down, 2 when there is no gateway there.
#[test]
fn the_status_command_shows_each_upstream() {
    let dir = Dir::new("status-command");
    let config = dir.write_config(
        &[
            stdio_upstream("a", ""),
            "[servers.broken]\ncommand = \"/nonexistent/mcp-server\"\nstart_timeout_ms = 2000\n".to_owned(),
        ]
        .concat(),
    );
    let gateway = gateway_support::gateway_http(&config);

    let (code, out, err) = support::run(&["gateway", "status", gateway.url()]);
    assert_eq!(code, 1, "an upstream is down: {out}{err}");
    assert!(
        out.lines().any(|l| l.starts_with("upstream a: ready (stdio, ") && l.contains(" tools, ")),
        "{out}"
    );
    assert!(out.lines().any(|l| l.starts_with("upstream broken: down (stdio") && l.contains("): ")), "{out}");

    let (code, out, err) = support::run(&["gateway", "status", "--json", gateway.authority()]);
    assert_eq!(code, 1, "{err}");
    let status = json(&out);
    assert_eq!(gateway_support::upstream(&status, "a")["state"], "ready", "{status}");
    assert_eq!(gateway_support::upstream(&status, "broken")["state"], "down", "{status}");

    let (code, out, err) = support::run(&["gateway", "status", &support::closed_authority()]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(err.contains("/status"), "{err}");
}

#[test]
fn status_refuses_a_foreign_host() {
    let dir = Dir::new("status-host");
    let config = dir.write_config(&stdio_upstream("a", ""));
    let gateway = gateway_support::gateway_http(&config);
    let (code, body) = gateway_support::http_get(gateway.authority(), "/status", "attacker.example");
    assert_eq!(code, 403, "{body}");
    assert!(!body.contains("upstreams"), "{body}");
    // The same request with the gateway's own address is answered.
    let (code, body) = gateway_support::http_get(gateway.authority(), "/status", gateway.authority());
    assert_eq!(code, 200, "{body}");
    assert!(json(&body)["upstreams"].is_array(), "{body}");
}

/// One POST to `authority`'s `/mcp` (legacy headers, the session when given), on a connection
/// of its own: status, the session id it answered with, and the body.
fn post(authority: &str, session: Option<&str>, body: &str) -> gateway_support::Reply {
    gateway_support::Conn::open(authority).post(session, body)
}

/// Two gateways with the same `session_key_file` behind no shared store: a legacy session begun
/// on one is served by the other (requests alternate, as a plain load balancer sends them); a
/// gateway with another key does not know it.
#[test]
fn two_replicas_with_one_key_serve_each_others_sessions() {
    let dir = Dir::new("replicas");
    std::fs::write(dir.path().join("session.key"), "7f".repeat(32)).unwrap();
    let config = dir.write_config(&format!(
        "[gateway]\nsession_key_file = \"session.key\"\n\n{}",
        stdio_upstream("a", "")
    ));
    let (one, two) = (gateway_support::gateway_http(&config), gateway_support::gateway_http(&config));
    let initialize = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"lb","version":"1"}}}"#;
    let (code, session, body) = post(one.authority(), None, initialize);
    assert_eq!(code, 200, "{body}");
    let session = session.expect("a session id");
    let (code, _, body) =
        post(two.authority(), Some(&session), r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    assert_eq!(code, 202, "{body}");
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hop"}}}"#;
    for (n, gateway) in [&two, &one, &two].into_iter().enumerate() {
        let (code, _, body) = post(gateway.authority(), Some(&session), call);
        assert_eq!(code, 200, "request {n}: {body}");
        assert!(body.contains(r#""text":"hop""#), "request {n}: {body}");
    }

    let other_dir = Dir::new("replicas-other-key");
    std::fs::write(other_dir.path().join("session.key"), "01".repeat(32)).unwrap();
    let other_config = other_dir.write_config(&format!(
        "[gateway]\nsession_key_file = \"session.key\"\n\n{}",
        stdio_upstream("a", "")
    ));
    let other = gateway_support::gateway_http(&other_config);
    let (code, _, body) = post(other.authority(), Some(&session), call);
    assert_eq!(code, 404, "another key: {body}");
}

/// An upstream's task passed on by one gateway is polled and waited for through another with
/// the same `session_key_file` (the gateways keep no task: the id names the upstream and its
/// task, bound to the caller); a gateway with another key does not know it.
#[test]
fn a_task_begun_through_one_replica_is_followed_through_the_other() {
    let upstream = support::serve_http(&[]);
    let dir = Dir::new("replica-tasks");
    std::fs::write(dir.path().join("session.key"), "5a".repeat(32)).unwrap();
    let http_upstream = format!("[servers.up]\nurl = {}\n", quoted(upstream.url()));
    let config =
        dir.write_config(&format!("[gateway]\nsession_key_file = \"session.key\"\n\n{http_upstream}"));
    let (one, two) = (gateway_support::gateway_http(&config), gateway_support::gateway_http(&config));

    let (code, out, err) = through_url(one.url(), &["call", "report", "--arg", "seconds=1", "--detach"]);
    assert_eq!(code, 0, "{err}");
    let created = json(&out);
    assert_eq!(created["resultType"], "task", "{out}");
    let id = created["taskId"].as_str().unwrap().to_owned();
    assert!(id.starts_with("r1."), "an id the gateway made: {id}");

    let (code, out, err) = through_url(two.url(), &["task", "get", &id]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json(&out)["taskId"], id.as_str(), "{out}");
    let (code, out, err) = through_url(two.url(), &["task", "wait", &id]);
    assert_eq!(code, 0, "{err}");
    assert!(text(&json(&out)).starts_with("Report after 1 s"), "{out}");

    let other_dir = Dir::new("replica-tasks-other-key");
    std::fs::write(other_dir.path().join("session.key"), "01".repeat(32)).unwrap();
    let other_config =
        other_dir.write_config(&format!("[gateway]\nsession_key_file = \"session.key\"\n\n{http_upstream}"));
    let other = gateway_support::gateway_http(&other_config);
    let (code, _, err) = through_url(other.url(), &["task", "get", &id]);
    assert_eq!(code, 5, "another key: the task is unknown: {err}");
}

/// `approve_tools`: the gateway asks before `echo` runs; in a pipe `mcpkit call` cannot ask a
/// person, so without `--yes` the call is refused (and nothing runs), with `--yes` it is
/// approved and runs.
#[test]
fn a_tool_that_needs_approval_runs_in_a_pipe_only_with_yes() {
    let dir = Dir::new("approvals");
    let config =
        dir.write_config(&format!("[gateway]\napprove_tools = [\"echo\"]\n{}", stdio_upstream("demo", "")));
    let gateway = gateway_support::gateway_http(&config);

    let (code, out, err) = through_url(gateway.url(), &["call", "echo", "--arg", "text=unasked"]);
    assert_ne!(code, 0, "refused without a way to ask: {out}");
    assert!(err.contains("elicitation") || err.contains("ask you"), "the refusal says why: {err}");
    assert!(!out.contains("unasked"), "{out}");

    let (code, out, err) = through_url(gateway.url(), &["call", "echo", "--arg", "text=approved", "--yes"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("approved"), "{out}");
    // A tool not named runs without a question, --yes or not.
    let (code, _, err) = through_url(gateway.url(), &["call", "add", "--arg", "a=1", "--arg", "b=2"]);
    assert_eq!(code, 0, "{err}");
}

/// `policy_file`: CEL rules hide a tool from the list and refuse it as unknown, refuse a
/// visible tool for an argument value, and write each refusal to the audit log.
#[test]
fn policy_rules_filter_lists_and_refuse_calls() {
    let dir = Dir::new("policy");
    std::fs::write(
        dir.path().join("policy.toml"),
        r#"
default = "allow"

[[rule]]
id = "no-fail"
effect = "forbid"
when = 'item.kind == "tool" && item.name == "fail"'

[[rule]]
id = "no-secrets"
effect = "forbid"
when = 'action == "tools/call" && item.name == "echo" && has(context.arguments.text) && context.arguments.text.contains("secret")'
"#,
    )
    .unwrap();
    let config = dir
        .write_config(&format!("[gateway]\npolicy_file = \"policy.toml\"\n{}", stdio_upstream("demo", "")));
    let (code, out, err) = support::run(&["gateway", "check", config.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("policy: 2 rule(s)"), "{out}");
    let gateway = gateway_support::gateway_http(&config);

    let (code, out, err) = through_url(gateway.url(), &["list", "tools"]);
    assert_eq!(code, 0, "{err}");
    let names = gateway_support::tool_names(&json(&out));
    assert!(names.iter().any(|n| n == "echo") && !names.iter().any(|n| n == "fail"), "{names:?}");

    let (code, _, err) = through_url(gateway.url(), &["call", "fail"]);
    assert_ne!(code, 0);
    assert!(err.contains("Unknown tool: fail"), "a hidden tool is an unknown one: {err}");
    let (code, out, err) = through_url(gateway.url(), &["call", "echo", "--arg", "text=top secret"]);
    assert_ne!(code, 0, "{out}");
    assert!(err.contains("not allowed by policy"), "{err}");
    let (code, out, err) = through_url(gateway.url(), &["call", "echo", "--arg", "text=hello"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("hello"), "{out}");

    let audit = gateway_support::eventually("the audit log", std::time::Duration::from_secs(10), || {
        let stderr = gateway.stderr();
        if stderr.contains("no-secrets") { Ok(stderr) } else { Err(stderr) }
    });
    assert!(audit.contains("refused by policy") && audit.contains("no-fail"), "{audit}");
    assert!(!audit.contains("top secret"), "the audit log never shows arguments: {audit}");

    // Rules that do not compile are refused by `check`, naming the rule.
    std::fs::write(
        dir.path().join("policy.toml"),
        "[[rule]]\nid = \"bad\"\neffect = \"forbid\"\nwhen = 'item.name =='\n",
    )
    .unwrap();
    let (code, _, err) = support::run(&["gateway", "check", config.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("\"bad\"") && err.contains("does not compile"), "{err}");
}

/// A policy's `limit` rule: an allowed use it matches is held to its rate per caller × item —
/// beyond it `-31000` naming the rule, over HTTP `429` — while other tools are not.
#[test]
fn a_policy_limit_rule_caps_the_calls_it_matches() {
    let dir = Dir::new("policy-limit");
    std::fs::write(
        dir.path().join("policy.toml"),
        r#"
default = "allow"

[[rule]]
id = "echo-cap"
effect = "limit"
rate = "2/hour"
when = 'action == "tools/call" && item.name == "echo"'
"#,
    )
    .unwrap();
    let config = dir
        .write_config(&format!("[gateway]\npolicy_file = \"policy.toml\"\n{}", stdio_upstream("demo", "")));
    let gateway = gateway_support::gateway_http(&config);

    for n in 0..2 {
        let (code, out, err) =
            through_url(gateway.url(), &["call", "echo", "--arg", &format!("text=call {n}")]);
        assert_eq!(code, 0, "call {n}: {err}");
        assert!(out.contains(&format!("call {n}")), "{out}");
    }
    let (code, out, err) = through_url(gateway.url(), &["call", "echo", "--arg", "text=one too many"]);
    assert_ne!(code, 0, "{out}");
    assert!(err.contains("rate limited"), "{err}");
    assert!(!out.contains("one too many"), "the tool did not run: {out}");
    // Over HTTP: 429, the rule named; another tool is not limited by it.
    let mut conn = gateway_support::Conn::open(gateway.authority());
    let session = conn.open_session();
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"again"}}}"#;
    let (code, _, body) = conn.post(Some(&session), call);
    assert_eq!(code, 429, "{body}");
    let error = &json(&body)["error"];
    assert_eq!(error["code"], mcp_types::code::RATE_LIMITED, "{body}");
    assert_eq!(error["data"]["rule"], "echo-cap", "{body}");
    assert!(error["data"]["retryAfterMs"].as_u64().is_some_and(|ms| ms > 0), "{body}");
    let add =
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}"#;
    let (code, _, body) = conn.post(Some(&session), add);
    assert_eq!(code, 200, "{body}");
}

/// `mcpkit serve --policy FILE`: the same rules on a plain server (over stdio here), and rules
/// that do not compile stop it before it serves.
#[test]
fn serve_takes_the_same_policy_rules() {
    let dir = Dir::new("serve-policy");
    let rules = dir.path().join("rules.toml");
    std::fs::write(
        &rules,
        "default = \"allow\"\n\n[[rule]]\nid = \"no-fail\"\neffect = \"forbid\"\nwhen = 'item.name == \"fail\"'\n",
    )
    .unwrap();
    let serve = [support::BIN, "serve", "--stdio", "--policy", rules.to_str().unwrap()];
    let mut args = vec!["list", "tools", "--"];
    args.extend(serve);
    let (code, out, err) = support::run(&args);
    assert_eq!(code, 0, "{err}");
    let names = gateway_support::tool_names(&json(&out));
    assert!(names.iter().any(|n| n == "echo") && !names.iter().any(|n| n == "fail"), "{names:?}");
    let mut args = vec!["call", "fail", "--"];
    args.extend(serve);
    let (code, _, err) = support::run(&args);
    assert_ne!(code, 0);
    assert!(err.contains("Unknown tool: fail"), "{err}");

    // Prompts, resources and templates are filtered by the same rules.
    std::fs::write(
        &rules,
        "default = \"allow\"\n[[rule]]\nid = \"hide\"\neffect = \"forbid\"\nwhen = 'item.kind != \"tool\"'\n",
    )
    .unwrap();
    for (what, member) in
        [("prompts", "prompts"), ("resources", "resources"), ("templates", "resourceTemplates")]
    {
        let mut args = vec!["list", what, "--"];
        args.extend(serve);
        let (code, out, err) = support::run(&args);
        assert_eq!(code, 0, "{err}");
        assert_eq!(json(&out)[member], serde_json::json!([]), "{what} all hidden: {out}");
    }
    let (_, out, _) = support::run(&["list", "prompts", "--", support::BIN, "serve", "--stdio"]);
    assert!(out.contains("poem"), "without the policy the prompt is listed: {out}");

    std::fs::write(&rules, "[[rule]]\nid = \"x\"\neffect = \"permit\"\nwhen = 'true &&'\n").unwrap();
    let (code, _, err) = support::run(&["serve", "--stdio", "--policy", rules.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("does not compile"), "{err}");
}
