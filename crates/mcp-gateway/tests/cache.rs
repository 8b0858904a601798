//! The upstream's caching hints reach the gateway's modern clients: a resource read through the
//! gateway carries the owner's `ttlMs` and `cacheScope`, not the gateway's defaults.

mod support;

use std::time::Duration;

use mcp_client::{Handlers, RequestOptions};
use mcp_server::{CachePolicy, Resources, Server, ServerConfig};
use mcp_types::{CacheScope, ReadResourceRequestParams, Resource};
use support::{bounded, client, front, serve, upstream};

#[tokio::test(flavor = "multi_thread")]
async fn a_read_carries_the_owners_caching_hint() {
    let cache =
        CachePolicy::default().with_read_ttl(Duration::from_secs(30)).with_read_scope(CacheScope::Public);
    let owner = Server::builder("owner", "1")
        .resources(Resources::new().text(Resource::new("memo://today", "today"), "sunny"))
        .config(ServerConfig::default().with_cache(cache))
        .build()
        .unwrap();
    let owner = serve(owner).await;
    let front = front(vec![upstream("owner", &owner.url())]).await;
    let downstream = client(&front.url(), false, Handlers::default()).await;
    let options = RequestOptions::new().bypass_cache();
    let read = bounded(
        "reading memo://today",
        downstream.read_resource_with(&ReadResourceRequestParams::new("memo://today"), &options),
    )
    .await
    .unwrap();
    assert_eq!(read.ttl_ms, Some(30_000), "{read:?}");
    assert_eq!(read.cache_scope, Some(CacheScope::Public), "{read:?}");
    downstream.close().await;
    front.close().await;
}
