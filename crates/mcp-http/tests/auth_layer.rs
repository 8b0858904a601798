//! `AuthLayer` in a stack of the application's own, over real sockets (127.0.0.1, port 0)
//! against the test authorization server: it answers before the layers inside it, hands the
//! caller on to the handlers, lets the public metadata through, and — left out — leaves the
//! endpoint to authenticate, never to serve unauthenticated.

#[allow(dead_code)]
#[path = "auth/authorization_server.rs"]
mod authorization_server;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use authorization_server::AuthorizationServer;
use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::Response;
use mcp_auth::jose::Algorithm;
use mcp_http::{AuthConfig, HttpConfig, McpHttp};
use mcp_server::{Principal, Server, Tools};
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tower::ServiceBuilder;

async fn whoami(principal: Principal) -> String {
    principal.subject.unwrap_or_default()
}

/// Where a stack puts the user's counting layer relative to `AuthLayer`.
#[derive(Clone, Copy)]
enum Stack {
    CounterInsideAuth,
    CounterOutsideAuth,
    NoAuthLayer,
}

struct Running {
    base: String,
    resource: String,
    seen: Arc<AtomicUsize>,
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

async fn count(seen: Arc<AtomicUsize>, request: Request, next: Next) -> Response {
    seen.fetch_add(1, Ordering::SeqCst);
    next.run(request).await
}

async fn run(authorization: &AuthorizationServer, stack: Stack) -> Running {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let resource = format!("http://{addr}/mcp");
    let auth = AuthConfig::builder(resource.clone()).issuer(authorization.issuer()).build().unwrap();
    let server = Server::builder("auth-layer-test", "1")
        .tools(Tools::new().add("whoami", "The caller", whoami))
        .build()
        .unwrap();
    let http = McpHttp::new(server, HttpConfig::for_bind(addr).auth(auth));
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = {
        let seen = seen.clone();
        middleware::from_fn(move |r, n| count(seen.clone(), r, n))
    };
    let app = match stack {
        Stack::CounterInsideAuth => http.routes().layer(
            ServiceBuilder::new()
                .layer(http.host_guard_layer())
                .option_layer(http.auth_layer())
                .layer(counter)
                .layer(http.limits_layer()),
        ),
        Stack::CounterOutsideAuth => http.routes().layer(
            ServiceBuilder::new()
                .layer(http.host_guard_layer())
                .layer(counter)
                .option_layer(http.auth_layer()),
        ),
        Stack::NoAuthLayer => {
            http.routes().layer(ServiceBuilder::new().layer(http.host_guard_layer()).layer(counter))
        }
    };
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>())
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .await
            .unwrap();
    });
    Running { base: format!("http://{addr}"), resource, seen, stop, task }
}

impl Running {
    async fn whoami(&self, token: Option<&str>) -> (u16, Option<String>, Value) {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}},
            "name": "whoami", "arguments": {}}});
        let mut request = reqwest::Client::new()
            .post(format!("{}/mcp", self.base))
            .header("content-type", "application/json")
            .header("accept", "application/json")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", "whoami")
            .body(body.to_string());
        if let Some(token) = token {
            request = request.header("authorization", format!("Bearer {token}"));
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let challenge = response.headers().get("www-authenticate").map(|v| v.to_str().unwrap().to_owned());
        let text = response.text().await.unwrap();
        (status, challenge, serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }

    fn seen(&self) -> usize {
        self.seen.load(Ordering::SeqCst)
    }

    async fn stop(self) {
        let _ = self.stop.send(());
        self.task.await.unwrap();
    }
}

#[tokio::test]
async fn an_auth_layer_in_a_custom_stack_answers_before_the_layers_inside_it() {
    let authorization = AuthorizationServer::start().await;
    let mcp = run(&authorization, Stack::CounterInsideAuth).await;
    let (status, challenge, _) = mcp.whoami(None).await;
    assert_eq!(status, 401);
    let challenge = challenge.expect("a WWW-Authenticate challenge");
    assert!(challenge.starts_with("Bearer") && challenge.contains("resource_metadata="), "{challenge}");
    assert_eq!(mcp.seen(), 0, "a layer inside AuthLayer never sees an unauthenticated request");

    // The caller it authenticated is the one the handler sees; the endpoint does not ask again.
    let token = authorization.sign(Algorithm::RS256, &authorization.claims(&mcp.resource, "alice", ""));
    let (status, _, answer) = mcp.whoami(Some(&token)).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "alice");
    assert_eq!(mcp.seen(), 1);

    // The Protected Resource Metadata is public: no token, any origin.
    let metadata = reqwest::Client::new()
        .get(format!("{}/.well-known/oauth-protected-resource/mcp", mcp.base))
        .header("origin", "https://client.example")
        .send()
        .await
        .unwrap();
    assert_eq!(metadata.status(), 200);
    let document: Value = serde_json::from_str(&metadata.text().await.unwrap()).unwrap();
    assert_eq!(document["resource"], mcp.resource);
    mcp.stop().await;

    // The user's layer moved outside AuthLayer sees the refused request too.
    let mcp = run(&authorization, Stack::CounterOutsideAuth).await;
    assert_eq!(mcp.whoami(None).await.0, 401);
    assert_eq!(mcp.seen(), 1);
    mcp.stop().await;
}

#[tokio::test]
async fn without_an_auth_layer_the_endpoint_still_authenticates() {
    let authorization = AuthorizationServer::start().await;
    let mcp = run(&authorization, Stack::NoAuthLayer).await;
    let (status, challenge, _) = mcp.whoami(None).await;
    assert_eq!(status, 401, "configured authorization is never dropped by a stack");
    assert!(challenge.is_some_and(|c| c.contains("resource_metadata=")));
    assert_eq!(mcp.seen(), 1);
    let token = authorization.sign(Algorithm::RS256, &authorization.claims(&mcp.resource, "bob", ""));
    let (status, _, answer) = mcp.whoami(Some(&token)).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "bob");
    mcp.stop().await;
}
