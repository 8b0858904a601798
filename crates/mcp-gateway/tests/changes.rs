//! Changes reaching the gateway's clients: a tool an upstream adds (over a modern
//! `subscriptions/listen` stream or a legacy session's notifications) is announced to
//! downstream clients of both eras and listed; a lazy upstream stays out of the way until it
//! is needed.

mod support;

use mcp_client::{Handlers, SubscriptionEvent};
use mcp_gateway::UpstreamState;
use mcp_gateway::config::Start;
use mcp_server::{Server, Tools};
use mcp_types::{ServerNotification, SubscriptionFilter};
use support::*;

async fn alpha() -> String {
    "alpha ran".to_owned()
}

async fn beta() -> String {
    "beta ran".to_owned()
}

fn tools(with_beta: bool) -> Tools {
    let tools = Tools::new().add("alpha", "The first tool", alpha);
    if with_beta { tools.add("beta", "The tool added later", beta) } else { tools }
}

fn upstream_server() -> Server {
    Server::builder("changing-upstream", "1").tools(tools(false)).build().unwrap()
}

/// Waits for a `tools/list_changed` on a modern downstream subscription.
async fn next_tools_changed(subscription: &mut mcp_client::Subscription) {
    bounded("tools/list_changed on the downstream subscription", async {
        let mut seen = Vec::new();
        loop {
            match subscription.next().await {
                Some(SubscriptionEvent::Notification(ServerNotification::ToolListChanged(_))) => return,
                Some(SubscriptionEvent::Ended(end)) => {
                    panic!("the subscription ended: {end:?}; seen {seen:?}")
                }
                None => panic!("the subscription ended; seen {seen:?}"),
                Some(other) => seen.push(format!("{other:?}")),
            }
        }
    })
    .await;
}

/// Waits for a `tools/list_changed` among a legacy client's notifications.
async fn next_legacy_tools_changed(rx: &mut tokio::sync::broadcast::Receiver<ServerNotification>) {
    bounded("tools/list_changed among the legacy client's notifications", async {
        loop {
            match rx.recv().await {
                Ok(ServerNotification::ToolListChanged(_)) => return,
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(e) => panic!("the notifications ended: {e}"),
            }
        }
    })
    .await;
}

/// An upstream that adds a tool: both downstream eras hear of it and list it.
async fn added_tool_reaches_both_eras(legacy_upstream_link: bool) {
    let up = serve(upstream_server()).await;
    let config =
        if legacy_upstream_link { legacy_upstream("up", &up.url()) } else { upstream("up", &up.url()) };
    let front = front(vec![config]).await;
    let ready = front.wait_state("up", UpstreamState::Ready).await;
    let want = if legacy_upstream_link { LEGACY } else { "2026-07-28" };
    assert_eq!(ready.protocol_version.as_deref(), Some(want), "the gateway's era towards the upstream");

    let modern = client(&front.url(), false, Handlers::default()).await;
    let legacy = client(&front.url(), true, Handlers::default()).await;
    assert_eq!(wait_tool(&modern, "alpha", true).await, ["alpha"]);
    assert_eq!(wait_tool(&legacy, "alpha", true).await, ["alpha"]);

    let filter = SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() };
    let mut subscription = bounded("listen", modern.listen(filter)).await.expect("listen");
    // The subscription is in place once acknowledged.
    bounded("the acknowledgement", async {
        loop {
            match subscription.next().await {
                Some(SubscriptionEvent::Acknowledged(_)) => return,
                Some(SubscriptionEvent::Ended(end)) => panic!("the subscription ended at once: {end:?}"),
                None => panic!("the subscription ended at once"),
                Some(_) => {}
            }
        }
    })
    .await;
    let mut notifications = legacy.notifications();

    up.server.set_tools(tools(true)).unwrap();

    next_tools_changed(&mut subscription).await;
    next_legacy_tools_changed(&mut notifications).await;
    let mut names = wait_tool(&modern, "beta", true).await;
    names.sort();
    assert_eq!(names, ["alpha", "beta"], "the modern client's list");
    let mut names = wait_tool(&legacy, "beta", true).await;
    names.sort();
    assert_eq!(names, ["alpha", "beta"], "the legacy client's list");
    let called =
        bounded("calling the new tool", modern.call_tool("beta", serde_json::json!({}))).await.unwrap();
    assert_eq!(text_of(&called), "beta ran");
    assert_eq!(front.upstream("up").tools, 2, "the status counts the upstream's new tool");

    drop(subscription);
    modern.close().await;
    legacy.close().await;
    front.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_added_by_a_modern_upstream_is_announced_to_modern_and_legacy_clients() {
    added_tool_reaches_both_eras(false).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_added_by_a_legacy_upstream_is_announced_to_modern_and_legacy_clients() {
    added_tool_reaches_both_eras(true).await;
}

/// A lazy upstream is connected once at start to learn what it offers — so its entries are
/// listed and routable — then left alone (idle: no connection, no process) until a request
/// needs it; the first call starts it.
#[tokio::test(flavor = "multi_thread")]
async fn a_lazy_upstream_is_listed_at_start_then_idle_until_its_first_call() {
    let eager =
        serve(Server::builder("eager", "1").tools(Tools::new().add("alpha", "", alpha)).build().unwrap())
            .await;
    let lazy =
        serve(Server::builder("lazy", "1").tools(Tools::new().add("beta", "", beta)).build().unwrap()).await;
    let mut lazy_config = upstream("lazy", &lazy.url());
    lazy_config.start = Start::Lazy;
    let front = front(vec![upstream("eager", &eager.url()), lazy_config]).await;

    assert_eq!(front.upstream("eager").state, UpstreamState::Ready, "the eager upstream after start");
    let status = front.upstream("lazy");
    assert_eq!(status.state, UpstreamState::Idle, "the lazy upstream after start: {status:?}");
    assert_eq!(
        (status.tools, status.connects),
        (1, 0),
        "listed at start, never connected for use: {status:?}"
    );

    let downstream = client(&front.url(), false, Handlers::default()).await;
    assert_eq!(tool_names(&downstream).await.unwrap(), ["alpha", "beta"], "both upstreams' tools");
    // Listing is served from what the gateway learnt: the upstream stays idle.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let status = front.upstream("lazy");
    assert_eq!((status.state, status.connects), (UpstreamState::Idle, 0), "after a listing: {status:?}");

    let called = bounded("calling beta", downstream.call_tool("beta", serde_json::json!({}))).await.unwrap();
    assert_eq!(text_of(&called), "beta ran");
    let status = front.upstream("lazy");
    assert_eq!(
        (status.state, status.connects),
        (UpstreamState::Ready, 1),
        "started by its first call: {status:?}"
    );

    downstream.close().await;
    front.close().await;
}
