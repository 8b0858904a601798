//! Tasks (the tasks extension) through the gateway: an upstream's task is passed to the caller
//! under an id that names the upstream and its task, bound to the caller — polled, answered
//! and cancelled through any gateway holding the same key, followed on `subscriptions/listen`
//! — and a legacy upstream's long call becomes a task of the gateway's own.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use mcp_client::transport::http::HttpConfig;
use mcp_client::{ClientBuilder, EraCache, Handlers, RequestOptions, ToolOutcome};
use mcp_server::{Peer, Server, State, TaskHandle, ToolError, Tools};
use mcp_types::extensions::tasks::TaskStatus;
use mcp_types::{
    CallToolRequestParams, ElicitAction, ElicitRequestFormParams, ElicitRequestParams, ElicitResult,
    ElicitationSchema, StringSchema, TaskSupport, Tool,
};
use serde_json::json;
use support::*;

#[derive(Default)]
struct Shared {
    /// Runs of `long` that started, and that were dropped before their end.
    started: AtomicUsize,
    dropped: AtomicBool,
}

struct OnDrop(Arc<Shared>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.dropped.store(true, Ordering::SeqCst);
    }
}

async fn long(State(shared): State<Arc<Shared>>) -> String {
    shared.started.fetch_add(1, Ordering::SeqCst);
    let guard = OnDrop(shared.clone());
    tokio::time::sleep(Duration::from_secs(3600)).await;
    std::mem::forget(guard);
    "never".into()
}

async fn asking(task: TaskHandle, peer: Peer) -> Result<String, ToolError> {
    task.detach().await;
    let schema = ElicitationSchema::new().with_property("name", StringSchema::default(), true);
    let answer = peer.elicit("name", ElicitRequestFormParams::new("Your name?", schema)).await?;
    let name = answer.content.as_ref().and_then(|c| c.get("name")).and_then(|v| v.as_str()).unwrap_or("?");
    Ok(format!("Hello, {name}!"))
}

async fn slow() -> String {
    tokio::time::sleep(Duration::from_millis(1500)).await;
    "slow work done".into()
}

fn upstream_server(shared: Arc<Shared>) -> Server {
    let task = |name: &str| Tool::without_arguments(name).with_task_support(TaskSupport::Optional);
    Server::builder("tasks-upstream", "1")
        .tools(
            Tools::new()
                .add_tool(task("long"), long)
                .add_tool(task("asking"), asking)
                .add_tool(task("slow"), slow),
        )
        .state(shared)
        .build()
        .unwrap()
}

fn naming() -> Handlers {
    Handlers::default().on_elicit(false, |_: ElicitRequestParams| async move {
        let mut r = ElicitResult::new(ElicitAction::Accept);
        r.content = serde_json::from_value(json!({"name": "Ada"})).ok();
        Ok(r)
    })
}

async fn tasks_client(url: &str) -> mcp_client::Client {
    let builder = ClientBuilder::new("gateway-tasks-test", "1").era_cache(EraCache::new()).tasks(true);
    bounded("connecting", builder.handlers(naming()).connect_http(HttpConfig::new(url.to_owned())))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_upstream_task_is_followed_through_the_gateway_and_cancelled_up() {
    let shared = Arc::new(Shared::default());
    let up = serve(upstream_server(shared.clone())).await;
    let front = front(vec![upstream("up", &up.url())]).await;
    let downstream = tasks_client(&front.url()).await;

    // The caller's questions reach it through the gateway's task, and the result comes back.
    let greeted = bounded("asking", downstream.call_tool("asking", json!({}))).await.unwrap();
    assert_eq!(text_of(&greeted), "Hello, Ada!");

    // A task held by the caller: the upstream's, under an id of the gateway's.
    let (params, options) = (CallToolRequestParams::new("long"), RequestOptions::default());
    let outcome = bounded("calling long", downstream.call_tool_or_task(&params, &options)).await.unwrap();
    let ToolOutcome::Task(created) = outcome else { panic!("long becomes a task") };
    assert!(created.task_id.starts_with("r1."), "a relayed id: {}", created.task_id);
    poll("the upstream's work started", DEADLINE, || async {
        if shared.started.load(Ordering::SeqCst) == 1 { Ok(()) } else { Err("not yet".to_owned()) }
    })
    .await;
    let got = downstream.get_task(&created.task_id).await.unwrap();
    assert_eq!(got.status, TaskStatus::Working);
    downstream.cancel_task(&created.task_id).await.unwrap();
    poll("the upstream's work was cancelled", DEADLINE, || async {
        if shared.dropped.load(Ordering::SeqCst) { Ok(()) } else { Err("still running".to_owned()) }
    })
    .await;
    let status = poll("the gateway's task settled", DEADLINE, || async {
        let task = downstream.get_task(&created.task_id).await.map_err(|e| e.to_string())?;
        if task.status.is_terminal() { Ok(task.status) } else { Err(format!("{:?}", task.status)) }
    })
    .await;
    assert_eq!(status, TaskStatus::Cancelled);
    downstream.close().await;
    front.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_legacy_upstreams_long_call_becomes_a_task_of_the_gateway() {
    // `slow` is listed with task support: its call, past a quarter of a second, becomes the
    // gateway's task.
    let shared = Arc::new(Shared::default());
    let up = serve(upstream_server(shared)).await;
    let front = front(vec![legacy_upstream("up", &up.url())]).await;
    let downstream = tasks_client(&front.url()).await;
    let (params, options) = (CallToolRequestParams::new("slow"), RequestOptions::default());
    let outcome = bounded("calling slow", downstream.call_tool_or_task(&params, &options)).await.unwrap();
    let ToolOutcome::Task(created) = outcome else { panic!("a call of more than 250 ms becomes a task") };
    let (result, _) = bounded("following", downstream.follow_task(created, &options)).await.unwrap();
    assert_eq!(text_of(&result), "slow work done");
    downstream.close().await;
    front.close().await;
}

fn key(byte: u8) -> mcp_gateway::GatewayOptions {
    mcp_gateway::GatewayOptions::new().request_state_key(mcp_server::StateKey::from_bytes([byte; 32]))
}

/// The next `notifications/tasks` of a subscription: the task's id and status.
async fn next_task_change(subscription: &mut mcp_client::Subscription) -> (String, String) {
    loop {
        match bounded("a task notification", subscription.next()).await {
            Some(mcp_client::SubscriptionEvent::Notification(mcp_types::ServerNotification::Other {
                method,
                params,
            })) if method == "notifications/tasks" => {
                let params: serde_json::Value = serde_json::from_str(&params.unwrap_or_default()).unwrap();
                return (
                    params["taskId"].as_str().unwrap().to_owned(),
                    params["status"].as_str().unwrap().to_owned(),
                );
            }
            Some(mcp_client::SubscriptionEvent::Ended(end)) => panic!("the subscription ended: {end:?}"),
            None => panic!("the subscription ended"),
            Some(_) => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_task_made_through_one_gateway_is_served_by_another_with_the_same_key() {
    let shared = Arc::new(Shared::default());
    let up = serve(upstream_server(shared.clone())).await;
    let one = front_with(vec![upstream("up", &up.url())], key(1)).await;
    let two = front_with(vec![upstream("up", &up.url())], key(1)).await;
    let stranger = front_with(vec![upstream("up", &up.url())], key(2)).await;
    let first = tasks_client(&one.url()).await;
    let second = tasks_client(&two.url()).await;
    let third = tasks_client(&stranger.url()).await;

    let (params, options) = (CallToolRequestParams::new("long"), RequestOptions::default());
    let outcome = bounded("calling long", first.call_tool_or_task(&params, &options)).await.unwrap();
    let ToolOutcome::Task(created) = outcome else { panic!("long becomes a task") };
    poll("the upstream's work started", DEADLINE, || async {
        if shared.started.load(Ordering::SeqCst) == 1 { Ok(()) } else { Err("not yet".to_owned()) }
    })
    .await;

    // The other replica knows the task without having seen it made.
    let got =
        bounded("tasks/get through the other gateway", second.get_task(&created.task_id)).await.unwrap();
    assert_eq!(got.task_id, created.task_id, "the caller's id, not the upstream's");
    assert_eq!(got.status, TaskStatus::Working);
    // A gateway with another key does not: the id is as unknown as a made-up one.
    let refused =
        bounded("tasks/get through a stranger", third.get_task(&created.task_id)).await.unwrap_err();
    assert!(refused.to_string().contains("Task not found"), "{refused}");
    let made_up =
        bounded("a made-up id", second.get_task("r1.dXA.eA.AAAAAAAAAAAAAAAAAAAAAA")).await.unwrap_err();
    assert!(made_up.to_string().contains("Task not found"), "{made_up}");

    // Followed on a subscription through the second gateway, cancelled through the first.
    let filter =
        mcp_types::SubscriptionFilter { task_ids: Some(vec![created.task_id.clone()]), ..Default::default() };
    let mut subscription = bounded("listening", second.listen(filter)).await.unwrap();
    let (id, status) = next_task_change(&mut subscription).await;
    assert_eq!((id.as_str(), status.as_str()), (created.task_id.as_str(), "working"));
    bounded("cancelling", first.cancel_task(&created.task_id)).await.unwrap();
    poll("the upstream's work was cancelled", DEADLINE, || async {
        if shared.dropped.load(Ordering::SeqCst) { Ok(()) } else { Err("still running".to_owned()) }
    })
    .await;
    let (id, status) = next_task_change(&mut subscription).await;
    assert_eq!((id.as_str(), status.as_str()), (created.task_id.as_str(), "cancelled"));
    let got = bounded("tasks/get after the cancel", second.get_task(&created.task_id)).await.unwrap();
    assert_eq!(got.status, TaskStatus::Cancelled);
    drop(subscription);
    for client in [first, second, third] {
        client.close().await;
    }
    for gateway in [one, two, stranger] {
        gateway.close().await;
    }
}
