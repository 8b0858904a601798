//! `mcpkit gateway --http`: its `/status` route.

mod gateway_support;
mod support;

use gateway_support::{Dir, json, stdio_upstream, through_url};

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
