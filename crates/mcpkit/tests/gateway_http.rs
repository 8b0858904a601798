//! `mcpkit gateway --http`: its `/status` route, and the configuration reloaded while it serves.

mod gateway_support;
mod support;

use gateway_support::{Dir, PATIENCE, eventually, json, stdio_upstream, through_url, tool_names};

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

/// The tool names the gateway at `url` lists now (`Err`: what went wrong).
fn listed(url: &str) -> Result<Vec<String>, String> {
    let (code, out, err) = through_url(url, &["list", "tools"]);
    if code != 0 {
        return Err(format!("exit {code}: {err}"));
    }
    Ok(tool_names(&json(&out)))
}

#[test]
fn a_changed_configuration_is_reloaded_and_a_bad_one_refused() {
    let dir = Dir::new("reload");
    let a = stdio_upstream("a", "");
    let config = dir.write_config(&a);
    let gateway = gateway_support::gateway_http(&config);
    let before = listed(gateway.url()).unwrap();
    assert!(before.iter().any(|n| n == "echo"), "{before:?}");
    assert!(!before.iter().any(|n| n.starts_with("c__")), "{before:?}");

    // A second upstream, always prefixed.
    dir.write_config(&[a.clone(), stdio_upstream("second", "naming = \"always\"\nprefix = \"c\"")].concat());
    let names = eventually("c__echo to be listed", PATIENCE, || {
        let names = listed(gateway.url())?;
        if names.iter().any(|n| n == "c__echo") {
            Ok(names)
        } else {
            Err(format!("{names:?}\ngateway stderr:\n{}", gateway.stderr()))
        }
    });
    assert!(names.iter().any(|n| n == "echo"), "a keeps its names: {names:?}");
    let (code, out, err) = through_url(gateway.url(), &["call", "c__add", r#"{"a":2,"b":2}"#]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(json(&out)["structuredContent"]["sum"], 4.0, "{out}");

    // Both unprefixed: a clash the `never` policy refuses; the running configuration stays.
    let clash = format!("[gateway]\nnaming = \"never\"\n\n{a}{}", stdio_upstream("second", "prefix = \"c\""));
    dir.write_config(&clash);
    eventually("the reload to be refused", PATIENCE, || {
        let stderr = gateway.stderr();
        if stderr.contains("reload refused") { Ok(()) } else { Err(stderr) }
    });
    let refused = gateway.stderr();
    let line = refused.lines().find(|l| l.contains("reload refused")).unwrap();
    assert!(line.contains("echo"), "names the clashing tool: {line}");
    let after = listed(gateway.url()).unwrap();
    assert!(after.iter().any(|n| n == "c__echo") && after.iter().any(|n| n == "echo"), "{after:?}");
    let status = gateway_support::status(&gateway);
    assert_eq!(gateway_support::upstream(&status, "second")["state"], "ready", "{status}");
}
