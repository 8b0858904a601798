//! MCP Apps through the gateway: an app calls its tools by the names its own server gave
//! them. A name only one upstream's app tools have reaches that upstream on the gateway's
//! endpoint, unlisted; a name two upstreams' app tools share is refused there (nothing in the
//! call says which app makes it) and each app is served with its own names and URIs on its
//! upstream's own endpoint (`Gateway::upstream_server`) — the gateway's policy and named
//! approvals applied there under the gateway's names.

mod support;

use std::sync::Arc;

use mcp_client::{ClientBuilder, EraCache};
use mcp_gateway::Gateway;
use mcp_gateway::config::{GatewayConfig, Settings};
use mcp_server::policy::{Decision, Item, Policy, Question};
use mcp_server::{Resources, Server, Tools};
use mcp_types::extensions::ui::{ResourceUi, ToolUi, Visibility};
use mcp_types::{Resource, ResourceContents, Tool};
use serde_json::json;
use support::*;

const VIEW: &str = "ui://app/view.html";

/// An upstream with an app at [`VIEW`] shown by `show`, which calls `refresh` (app only);
/// `poll` is an app tool of `a`'s alone.
fn app_server(who: &'static str) -> Server {
    let app = || ToolUi::new(VIEW);
    let mut tools = Tools::new()
        .add_tool(
            Tool::without_arguments("show").with_ui(app()),
            move || async move { format!("{who} shows") },
        )
        .add_tool(
            Tool::without_arguments("refresh").with_ui(app().with_visibility(vec![Visibility::App])),
            move || async move { format!("{who} refreshed") },
        );
    if who == "a" {
        tools = tools
            .add_tool(Tool::without_arguments("poll").with_ui(app()), || async { "a polled".to_owned() });
    }
    let html = format!("<!doctype html><title>{who}'s app</title>");
    Server::builder(&format!("apps-{who}"), "1")
        .tools(tools)
        .resources(Resources::new().app(Resource::new(VIEW, "view"), html, ResourceUi::default()))
        .build()
        .unwrap()
}

/// Refuses `b__refresh` (the gateway's name for b's `refresh`).
struct NoRefreshOfB;

impl Policy for NoRefreshOfB {
    fn decide(&self, question: &Question<'_>) -> Decision {
        match question.item {
            Item::Tool(tool) if tool.name == "b__refresh" => Decision::Deny(vec!["no-b-refresh".into()]),
            _ => Decision::Allow,
        }
    }
}

async fn modern(url: &str) -> mcp_client::Client {
    let builder = ClientBuilder::new("gateway-apps-test", "1").era_cache(EraCache::new());
    bounded("connecting", builder.connect_http(mcp_client::transport::http::HttpConfig::new(url.to_owned())))
        .await
        .unwrap()
}

async fn called(client: &mcp_client::Client, tool: &str) -> Result<String, String> {
    match client.call_tool(tool, json!({})).await {
        Ok(result) if result.is_error != Some(true) => Ok(text_of(&result)),
        Ok(result) => Err(text_of(&result)),
        Err(e) => Err(e.to_string()),
    }
}

async fn listed(client: &mcp_client::Client) -> Vec<Tool> {
    let options = mcp_client::RequestOptions::new().bypass_cache();
    client.list_all_tools_with(&options).await.unwrap()
}

fn html(contents: &[ResourceContents]) -> String {
    match &contents[0] {
        ResourceContents::Text(t) => t.text.clone(),
        other => panic!("not text: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn each_apps_tool_calls_reach_its_own_upstream() {
    let (a, b) = (serve(app_server("a")).await, serve(app_server("b")).await);
    let mut settings = Settings::default();
    settings.approvals.tools.insert("a__refresh".to_owned());
    let mut config_a = upstream("a", &a.url());
    config_a.rename.insert("poll".to_owned(), "a_poll".to_owned());
    let config = GatewayConfig { settings, upstreams: vec![config_a, upstream("b", &b.url())] };
    let options = mcp_gateway::GatewayOptions::new().policy(Arc::new(NoRefreshOfB));
    let gateway = bounded("Gateway::start", Gateway::start_with(config, options)).await.unwrap();
    let front = Front { served: serve(gateway.server()).await, gateway };

    // The gateway's endpoint: both `show`s and `refresh`es prefixed; `poll` renamed.
    let client = modern(&front.url()).await;
    let names: Vec<String> = listed(&client).await.into_iter().map(|t| t.name).collect();
    for name in ["a__show", "b__show", "a__refresh", "a_poll"] {
        assert!(names.contains(&name.to_owned()), "{name} in {names:?}");
    }
    assert!(!names.contains(&"b__refresh".to_owned()), "the policy hides it: {names:?}");
    // `poll`, an app tool name of a's alone, still reaches a, unlisted.
    assert_eq!(called(&client, "poll").await.unwrap(), "a polled");
    // `refresh` is both apps' name: refused, not sent to the first upstream.
    let refused = called(&client, "refresh").await.unwrap_err();
    assert!(refused.contains("Unknown tool"), "{refused}");
    let status = front.gateway.status();
    let shared: Vec<(&str, Vec<&str>)> = status
        .shared_app_names
        .iter()
        .map(|s| (s.name.as_str(), s.upstreams.iter().map(String::as_str).collect()))
        .collect();
    assert_eq!(shared, [("refresh", vec!["a", "b"]), ("show", vec!["a", "b"])], "the status says why");
    assert!(status.left_out.is_empty(), "nothing is left out: {:?}", status.left_out);

    // b's own endpoint: its names and URIs; its app's calls reach b.
    let own_b = serve(front.gateway.upstream_server("b").expect("b's own endpoint")).await;
    let client_b = modern(&own_b.url()).await;
    let tools_b = listed(&client_b).await;
    let show = tools_b.iter().find(|t| t.name == "show").expect("show under its own name");
    assert_eq!(mcp_types::extensions::ui::tool_ui(show).unwrap().resource_uri.as_deref(), Some(VIEW));
    assert_eq!(
        html(&client_b.read_resource(VIEW).await.unwrap().contents),
        "<!doctype html><title>b's app</title>"
    );
    assert_eq!(called(&client_b, "show").await.unwrap(), "b shows");
    // The gateway's policy holds here, under the gateway's name for the tool.
    assert!(!tools_b.iter().any(|t| t.name == "refresh"), "hidden here too");
    let refused = called(&client_b, "refresh").await.unwrap_err();
    assert!(refused.contains("Unknown tool"), "{refused}");

    // a's own endpoint: `refresh` and `poll` reach a; `approve_tools` names `a__refresh`, so
    // its call asks for approval — which a client that cannot be asked is refused.
    let own_a = serve(front.gateway.upstream_server("a").expect("a's own endpoint")).await;
    let client_a = modern(&own_a.url()).await;
    assert_eq!(
        html(&client_a.read_resource(VIEW).await.unwrap().contents),
        "<!doctype html><title>a's app</title>"
    );
    assert_eq!(called(&client_a, "poll").await.unwrap(), "a polled");
    let unapproved = called(&client_a, "refresh").await.unwrap_err();
    // (A modern client that did not declare elicitation is told it is missing: `-32021`.)
    assert!(unapproved.contains("-32021"), "{unapproved}");
    assert_eq!(called(&client_a, "show").await.unwrap(), "a shows");
    assert!(front.gateway.upstream_server("c").is_none());

    for c in [client, client_a, client_b] {
        c.close().await;
    }
    front.close().await;
}
