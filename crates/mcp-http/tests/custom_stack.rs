//! A stack of the application's own over a real socket (127.0.0.1, port 0): `McpHttp::routes`
//! behind `tower::ServiceBuilder` with the transport's layers and a user layer beside them.
//! The user layer runs where it is placed, a reordered or omitted layer changes which refusal
//! comes first, and the MCP answers are those of the default router.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use mcp_http::layers::{HeadLayer, HostGuardLayer};
use mcp_http::{HttpConfig, McpHttp};
use mcp_server::{Args, Server, Tools};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio::sync::{Semaphore, oneshot};
use tower::ServiceBuilder;

#[allow(dead_code)]
#[path = "support/raw_http.rs"]
mod support;

use support::{META, ONE, Reply, roundtrip};

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    text: String,
}

/// Echoes, and — for the text "hold" — waits until the test lets it go, holding its slot.
fn server(entered: Arc<Semaphore>, release: Arc<Semaphore>) -> Server {
    let echo = move |Args(EchoArgs { text }): Args<EchoArgs>| {
        let (entered, release) = (entered.clone(), release.clone());
        async move {
            if text == "hold" {
                entered.add_permits(1);
                release.acquire().await.unwrap().forget();
            }
            text
        }
    };
    Server::builder("stack-test", "1").tools(Tools::new().add("echo", "Echo", echo)).build().unwrap()
}

/// A running server; dropping the sender stops it, `stop` waits until it has.
struct Running {
    addr: SocketAddr,
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

impl Running {
    async fn stop(self) {
        let _ = self.stop.send(());
        self.task.await.unwrap();
    }
}

/// Binds 127.0.0.1:0 and serves the router `make` builds for the config of that address.
async fn run(
    config: impl FnOnce(HttpConfig) -> HttpConfig,
    make: impl FnOnce(McpHttp) -> axum::Router,
) -> Running {
    run_server(server(Arc::new(Semaphore::new(0)), Arc::new(Semaphore::new(0))), config, make).await
}

async fn run_server(
    server: Server,
    config: impl FnOnce(HttpConfig) -> HttpConfig,
    make: impl FnOnce(McpHttp) -> axum::Router,
) -> Running {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let app = make(McpHttp::new(server, config(HttpConfig::for_bind(addr))));
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>())
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .await
            .unwrap();
    });
    Running { addr, stop, task }
}

/// The user's own layer: counts the requests that reach it and wants `x-api-key: secret`.
async fn api_key(counter: Arc<AtomicUsize>, request: Request, next: Next) -> Response {
    counter.fetch_add(1, Ordering::SeqCst);
    match request.headers().get("x-api-key") {
        Some(key) if key == "secret" => next.run(request).await,
        _ => (StatusCode::UNAUTHORIZED, "API key required").into_response(),
    }
}

const JSON: [(&str, &str); 4] = [
    ("content-type", "application/json"),
    ("accept", "application/json, text/event-stream"),
    ("mcp-protocol-version", "2026-07-28"),
    ("mcp-method", "tools/call"),
];

fn call_body(text: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{{META},"name":"echo","arguments":{{"text":"{text}"}}}}}}"#
    )
}

async fn call(addr: SocketAddr, extra: &[(&'static str, &'static str)], text: &str) -> Reply {
    let mut headers = JSON.to_vec();
    headers.push(("mcp-name", "echo"));
    headers.extend_from_slice(extra);
    roundtrip(ONE, addr, "POST", &headers, &call_body(text)).await
}

#[tokio::test]
async fn a_user_layer_runs_where_it_is_placed_and_the_answers_are_the_default_routers() {
    let counter = Arc::new(AtomicUsize::new(0));
    // Head, Host/Origin, then the user's API key, then admission: the key is checked only for
    // requests from an allowed Host.
    let key = counter.clone();
    let custom = run(
        |c| c,
        move |http| {
            let stack = ServiceBuilder::new()
                .layer(http.head_layer())
                .layer(http.host_guard_layer())
                .layer(middleware::from_fn(move |r, n| api_key(key.clone(), r, n)))
                .layer(http.limits_layer());
            http.routes().layer(stack)
        },
    )
    .await;
    let default = run(|c| c, |http| http.router()).await;

    let evil = call(custom.addr, &[("host", "evil.example")], "x").await;
    assert_eq!(evil.status, 403, "the Host guard answers before the user layer: {}", evil.body);
    assert_eq!(counter.load(Ordering::SeqCst), 0, "a refused Host never reaches the user layer");
    let keyless = call(custom.addr, &[], "x").await;
    assert_eq!(keyless.status, 401);
    assert_eq!(keyless.body, "API key required");
    assert_eq!(counter.load(Ordering::SeqCst), 1);

    // Through every layer, the MCP answer is the default router's, byte for byte.
    let served = call(custom.addr, &[("x-api-key", "secret")], "hello").await;
    let reference = call(default.addr, &[], "hello").await;
    assert_eq!(served.status, 200, "{}", served.body);
    assert_eq!(
        (served.status, served.header("content-type")),
        (reference.status, reference.header("content-type"))
    );
    assert_eq!(served.body, reference.body);
    assert_eq!(served.json()["result"]["content"][0]["text"], "hello");
    // And its refusals too: the endpoint's own checks run behind the stack.
    let bad_header = call(custom.addr, &[("x-api-key", "secret"), ("mcp-name", "other")], "x").await;
    let reference = call(default.addr, &[("mcp-name", "other")], "x").await;
    assert_eq!(bad_header.status, 400);
    assert_eq!((bad_header.status, bad_header.body), (reference.status, reference.body));
    custom.stop().await;
    default.stop().await;

    // The user layer in front of the Host guard: now it answers first.
    let counter = Arc::new(AtomicUsize::new(0));
    let key = counter.clone();
    let reordered = run(
        |c| c,
        move |http| {
            let stack = ServiceBuilder::new()
                .layer(HeadLayer::from_config(&HttpConfig::default()))
                .layer(middleware::from_fn(move |r, n| api_key(key.clone(), r, n)))
                .layer(http.host_guard_layer());
            http.routes().layer(stack)
        },
    )
    .await;
    let evil = call(reordered.addr, &[("host", "evil.example")], "x").await;
    assert_eq!(evil.status, 401, "the user layer answers before the Host guard");
    assert_eq!(counter.load(Ordering::SeqCst), 1);
    let evil = call(reordered.addr, &[("host", "evil.example"), ("x-api-key", "secret")], "x").await;
    assert_eq!(evil.status, 403, "and the Host guard still runs behind it");
    reordered.stop().await;
}

#[tokio::test]
async fn an_omitted_host_guard_lets_any_host_through_and_its_own_lists_apply_when_placed() {
    let bare = run(|c| c, |http| http.routes()).await;
    let reply = call(bare.addr, &[("host", "evil.example"), ("origin", "http://evil.example")], "hi").await;
    assert_eq!(reply.status, 200, "no Host/Origin check without the layer: {}", reply.body);
    assert_eq!(reply.json()["result"]["content"][0]["text"], "hi");
    bare.stop().await;

    let listed =
        run(|c| c, |http| http.routes().layer(HostGuardLayer::new(["mcp.example"], ["https://app.example"])))
            .await;
    assert_eq!(call(listed.addr, &[], "x").await.status, 403, "the loopback Host is not on this list");
    let allowed = call(listed.addr, &[("host", "MCP.example"), ("origin", "https://app.example")], "x").await;
    assert_eq!(allowed.status, 200, "{}", allowed.body);
    let foreign =
        call(listed.addr, &[("host", "mcp.example"), ("origin", "https://evil.example")], "x").await;
    assert_eq!(foreign.status, 403);
    listed.stop().await;
}

/// Holds the one request slot with a `hold` call until the returned semaphore gets a permit.
async fn hold_the_slot(addr: SocketAddr, entered: &Semaphore) -> tokio::task::JoinHandle<Reply> {
    let held = tokio::spawn(async move { call(addr, &[], "hold").await });
    // A stack that refused it (a slot or its bytes taken twice) would never get here.
    let entered = tokio::time::timeout(std::time::Duration::from_secs(30), entered.acquire()).await;
    entered.expect("the held call never reached its tool").unwrap().forget();
    held
}

#[tokio::test]
async fn the_limits_layer_admits_where_it_is_placed_and_charges_a_body_once() {
    let one_slot = |c: HttpConfig| c.max_in_flight(1).max_bodies_in_flight(1024);
    let form = [("content-type", "text/plain")];

    // Default order: Content-Type (415) before admission (503).
    let (entered, release) = (Arc::new(Semaphore::new(0)), Arc::new(Semaphore::new(0)));
    let default = run_server(server(entered.clone(), release.clone()), one_slot, |http| http.router()).await;
    let held = hold_the_slot(default.addr, &entered).await;
    let reply = roundtrip(ONE, default.addr, "POST", &form, "{}").await;
    assert_eq!(reply.status, 415, "{}", reply.body);
    release.add_permits(1);
    assert_eq!(held.await.unwrap().status, 200);
    default.stop().await;

    // The limits layer in front: admission answers first.
    let (entered, release) = (Arc::new(Semaphore::new(0)), Arc::new(Semaphore::new(0)));
    let limited = run_server(server(entered.clone(), release.clone()), one_slot, |http| {
        let limits = http.limits_layer();
        http.routes().layer(limits)
    })
    .await;
    let held = hold_the_slot(limited.addr, &entered).await;
    let reply = roundtrip(ONE, limited.addr, "POST", &form, "{}").await;
    assert_eq!(reply.status, 503, "{}", reply.body);
    assert_eq!(reply.header("retry-after"), Some("1"));
    release.add_permits(1);
    let held = held.await.unwrap();
    assert_eq!(held.status, 200, "{}", held.body);
    // The whole 1 KiB budget is one body's: charged by the layer only, never again by the
    // endpoint (which would find none left and answer 503).
    let padded = format!("pad{}", "d".repeat(700));
    let reply = call(limited.addr, &[], &padded).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.json()["result"]["content"][0]["text"], padded);
    // Over `max_body` the layer answers 413.
    let small = run(
        |c| c.max_body(64),
        |http| {
            let limits = http.limits_layer();
            http.routes().layer(limits)
        },
    )
    .await;
    assert_eq!(call(small.addr, &[], "x").await.status, 413);
    small.stop().await;
    limited.stop().await;
}
