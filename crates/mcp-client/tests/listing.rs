//! The `list_all_*` helpers against a server whose cursor never ends: every listing is bounded
//! by the client's `ListLimits` (bytes, items, pages of all pages together), with an error
//! naming the bound, and a `tools/call` that lists the tools first still proceeds.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_client::transport::{OutgoingKind, TransportKind};
use mcp_client::{ClientBuilder, ClientError, ListLimits, ListingBound, Outcome, RequestOptions};
use serde_json::{Value, json};
use support::{Fake, Reply, discover_result, result, text_result};

/// How many pages the endless servers below serve before they give in (a last page without
/// `nextCursor`): far past every default bound, so an unbounded client lists them all.
const SERVED_PAGES: usize = 200;

fn builder() -> ClientBuilder {
    ClientBuilder::new("test-client", "1.0.0").probe_timeout(Duration::from_millis(300))
}

/// One page of `tools` tools whose descriptions add up to about `bytes`, named after the page;
/// the first page also has `echo`, which mirrors its `region` argument in a header.
fn tools_page(page: usize, tools: usize, bytes: usize) -> Vec<Value> {
    let description = "d".repeat(bytes / tools.max(1));
    let mut list: Vec<Value> = (0..tools)
        .map(|i| json!({"name": format!("t{page}-{i}"), "description": description, "inputSchema": {"type": "object"}}))
        .collect();
    if page == 0 {
        list.push(json!({"name": "echo", "inputSchema": {"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"}}}}));
    }
    list
}

/// A modern server whose `tools/list` (and `resources/list`) hands out a fresh cursor with
/// every page of `tools` items and about `bytes` bytes, up to [`SERVED_PAGES`]; `served` counts
/// the pages.
fn endless(
    kind: TransportKind,
    tools: usize,
    bytes: usize,
    served: Arc<AtomicUsize>,
) -> (Arc<Fake>, mcp_client::transport::InboundReceiver) {
    Fake::new(
        kind,
        Box::new(move |s| match s.method() {
            Some("server/discover") => result(s.id(), discover_result()),
            Some(method @ ("tools/list" | "resources/list")) => {
                let page = served.fetch_add(1, Ordering::SeqCst);
                let mut body = json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private"});
                if method == "tools/list" {
                    body["tools"] = Value::Array(tools_page(page, tools, bytes));
                } else {
                    body["resources"] = (0..tools)
                        .map(|i| json!({"uri": format!("file:///{page}/{i}"), "name": "r"}))
                        .collect();
                }
                if page + 1 < SERVED_PAGES {
                    body["nextCursor"] = Value::String(format!("page-{}", page + 1));
                }
                result(s.id(), body)
            }
            Some("tools/call") => result(s.id(), text_result("called")),
            _ => Reply::Nothing,
        }),
    )
}

/// The listings of 16 MiB must not overlap: each measures the whole process's memory.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A line of /proc/self/status, in bytes.
fn status_bytes(key: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with(key)).unwrap_or_else(|| panic!("no {key}"));
    let kib: u64 = line[key.len()..].trim().trim_end_matches("kB").trim().parse().unwrap();
    kib * 1024
}

/// Resets the peak resident set (`VmHWM`) to the current one (Linux ≥ 4.0) and returns the
/// current one.
fn reset_peak() -> u64 {
    std::fs::write("/proc/self/clear_refs", "5").unwrap();
    status_bytes("VmRSS:")
}

fn bound_of(error: &ClientError) -> ListingBound {
    match error {
        ClientError::ListingTooLarge { bound, .. } => *bound,
        other => panic!("expected ListingTooLarge, got {other:?}"),
    }
}

#[tokio::test]
async fn an_endless_listing_of_large_pages_stops_at_the_byte_bound() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let served = Arc::new(AtomicUsize::new(0));
    // About 260 KB per page: 16 MiB are passed after some 63 pages.
    let (fake, rx) = endless(TransportKind::Stdio, 100, 260_000, served.clone());
    let client = builder().connect_transport(fake, rx, "fake").await.unwrap();
    let before = reset_peak();
    let error = client.list_all_tools().await.unwrap_err();
    let peak = status_bytes("VmHWM:").saturating_sub(before);
    eprintln!("refusing the listing: peak resident set +{} KiB", peak >> 10);
    // What the listing holds is bounded by the 16 MiB of result text it accepts: the tools
    // decoded from it (their descriptions are as long as in the text), the tool table's copy of
    // each (kept for header mirroring and output validation), the page in flight (its text,
    // the fake server's copies, its decoded tools) and allocator slack: three and a half times
    // the budget (25 to 46 MiB measured). Without the byte bound the listing runs on to the
    // item bound (100 pages, 26 MB of tools held twice) and peaks above 70 MiB.
    assert!(peak < 56 * 1024 * 1024, "the peak resident set grew by {} MiB", peak >> 20);
    assert_eq!(bound_of(&error), ListingBound::Bytes(16 * 1024 * 1024));
    assert_eq!(error.outcome(), Outcome::Answered);
    let text = error.to_string();
    assert!(text.contains("tools/list") && text.contains("16777216 bytes"), "{text}");
    let pages = served.load(Ordering::SeqCst);
    assert!((60..=66).contains(&pages), "{pages} pages fetched");
}

#[tokio::test]
async fn an_endless_listing_of_many_items_stops_at_the_item_bound() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let served = Arc::new(AtomicUsize::new(0));
    let (fake, rx) = endless(TransportKind::Stdio, 1_000, 0, served.clone());
    let client = builder().connect_transport(fake, rx, "fake").await.unwrap();
    let error = client.list_all_resources().await.unwrap_err();
    assert_eq!(bound_of(&error), ListingBound::Items(10_000));
    assert!(error.to_string().contains("resources/list"), "{error}");
    // 10,000 resources are allowed: the 11th page is one too many.
    assert_eq!(served.load(Ordering::SeqCst), 11);
}

#[tokio::test]
async fn list_limits_are_set_per_client_and_per_call() {
    let served = Arc::new(AtomicUsize::new(0));
    let (fake, rx) = endless(TransportKind::Stdio, 1, 0, served.clone());
    let limits = ListLimits::default().with_max_pages(3);
    let client = builder().list_limits(limits).connect_transport(fake, rx, "fake").await.unwrap();
    let error = client.list_all_tools().await.unwrap_err();
    assert_eq!(bound_of(&error), ListingBound::Pages(3));
    assert_eq!(served.swap(0, Ordering::SeqCst), 3);
    let options = RequestOptions::new().list_limits(ListLimits::default().with_max_bytes(100));
    let error = client.list_all_tools_with(&options).await.unwrap_err();
    assert_eq!(bound_of(&error), ListingBound::Bytes(100));
    assert_eq!(served.load(Ordering::SeqCst), 1, "the first page alone is over 100 bytes");
}

#[tokio::test]
async fn a_call_that_lists_the_tools_first_proceeds_when_the_listing_passes_its_bound() {
    let _alone = ONE_AT_A_TIME.lock().await;
    let served = Arc::new(AtomicUsize::new(0));
    let (fake, rx) = endless(TransportKind::StreamableHttp, 100, 260_000, served.clone());
    let client = builder().connect_transport(fake.clone(), rx, "fake").await.unwrap();
    // `echo` came on the first page: its mirror is known and sent.
    let called = client.call_tool("echo", json!({"region": "eu"})).await.unwrap();
    assert_eq!(called.content.len(), 1);
    let pages = served.load(Ordering::SeqCst);
    assert!((60..=66).contains(&pages), "{pages} pages fetched before the call");
    // A tool the bounded listing never reached is called all the same, without mirrors, and the
    // listing is not tried again for it.
    client.call_tool("unlisted", json!({"region": "eu"})).await.unwrap();
    assert_eq!(served.load(Ordering::SeqCst), pages);
    let calls = fake.sent_with_method("tools/call");
    let headers = |i: usize| match &calls[i].kind {
        OutgoingKind::Request { headers, .. } => headers.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(headers(0).params, vec![("Region".to_owned(), "eu".to_owned())]);
    assert!(headers(1).params.is_empty());
}
