//! Resource subscriptions through the gateway: what its clients follow — legacy
//! `resources/subscribe` or a modern `subscriptions/listen` stream's `resourceSubscriptions` —
//! the gateway follows at the owner, under the owner's URI, in the owner's era, and only while
//! a client follows it; the owner's `notifications/resources/updated` reaches the clients under
//! the gateway's URI (namespaced when two upstreams offer the same one).

mod support;

use std::sync::{Arc, Mutex};

use mcp_client::{Client, Handlers, SubscriptionEvent};
use mcp_server::{Resources, Server};
use mcp_types::{Resource, ServerNotification, SubscriptionFilter};
use support::*;

/// An upstream offering `memo://today`, recording the interest its clients (the gateway)
/// show in each URI.
fn owner(name: &str, interest: Arc<Mutex<Vec<(String, bool)>>>) -> Server {
    Server::builder(name, "1")
        .resources(Resources::new().text(Resource::new("memo://today", "today"), "sunny"))
        .on_resource_interest(move |uri, on| interest.lock().unwrap().push((uri.to_owned(), on)))
        .build()
        .unwrap()
}

/// Waits until `interest` ends with `(uri, on)`.
async fn wait_interest(interest: &Arc<Mutex<Vec<(String, bool)>>>, uri: &str, on: bool) {
    poll(&format!("the owner sees interest {on} in {uri}"), DEADLINE, || async {
        let seen = interest.lock().unwrap().clone();
        let last = seen.iter().rev().find(|(u, _)| u == uri).map(|(_, on)| *on);
        if last == Some(on) { Ok(()) } else { Err(format!("{seen:?}")) }
    })
    .await;
}

/// Follows `uri` as `client` can (its era decides how) and returns the events.
async fn follow(client: &Client, uri: &str) -> mcp_client::Subscription {
    let filter =
        SubscriptionFilter { resource_subscriptions: Some(vec![uri.to_owned()]), ..Default::default() };
    bounded("listen", client.listen(filter)).await.expect("listen")
}

/// Waits for `notifications/resources/updated` of `uri` on `subscription`.
async fn next_update(subscription: &mut mcp_client::Subscription, uri: &str) {
    bounded(&format!("resources/updated {uri}"), async {
        loop {
            match subscription.next().await {
                Some(SubscriptionEvent::Notification(ServerNotification::ResourceUpdated(p)))
                    if p.uri == uri =>
                {
                    return;
                }
                Some(SubscriptionEvent::Ended(end)) => panic!("the subscription ended: {end:?}"),
                None => panic!("the subscription ended"),
                Some(_) => {}
            }
        }
    })
    .await;
}

async fn updates_reach_followers(legacy_link: bool) {
    let (seen_a, seen_b) = (Arc::default(), Arc::default());
    let a = serve(owner("a", Arc::clone(&seen_a))).await;
    let b = serve(owner("b", Arc::clone(&seen_b))).await;
    let config =
        |name: &str, url: &str| if legacy_link { legacy_upstream(name, url) } else { upstream(name, url) };
    let front = front(vec![config("a", &a.url()), config("b", &b.url())]).await;
    for legacy_client in [false, true] {
        let what = format!("legacy link {legacy_link}, legacy client {legacy_client}");
        let downstream = client(&front.url(), legacy_client, Handlers::default()).await;
        // `a` keeps the URI; `b`'s copy is served as `b+memo://today`.
        let mut today = follow(&downstream, "memo://today").await;
        wait_interest(&seen_a, "memo://today", true).await;
        a.server.resource_updated("memo://today");
        next_update(&mut today, "memo://today").await;

        let mut theirs = follow(&downstream, "b+memo://today").await;
        wait_interest(&seen_b, "memo://today", true).await;
        b.server.resource_updated("memo://today");
        next_update(&mut theirs, "b+memo://today").await;

        // Nobody follows any more: neither does the gateway. A modern client stops by ending
        // its stream; a legacy session's subscriptions end with the session.
        drop((today, theirs));
        if legacy_client {
            downstream.close().await;
        }
        wait_interest(&seen_a, "memo://today", false).await;
        wait_interest(&seen_b, "memo://today", false).await;
        downstream.close().await;
        eprintln!("{what}: ok");
    }
    front.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn updates_reach_followers_of_modern_upstreams() {
    updates_reach_followers(false).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn updates_reach_followers_of_legacy_upstreams() {
    updates_reach_followers(true).await;
}
