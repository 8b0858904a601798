//! The tasks extension on the client, against our own server over real sockets: a call that
//! becomes a task is followed to its end, its questions answered by the client's handlers; a
//! task can be held and polled by hand; dropping the call cancels the task.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mcp_client::transport::http::HttpConfig;
use mcp_client::{Client, ClientBuilder, ClientError, Handlers, RequestOptions, ToolOutcome};
use mcp_server::task::TaskConfig;
use mcp_server::{Peer, ServerConfig, State, TaskHandle, ToolError, Tools};
use mcp_types::extensions::tasks::TaskStatus;
use mcp_types::{
    CallToolRequestParams, ElicitAction, ElicitRequestFormParams, ElicitRequestParams, ElicitResult,
    ElicitationSchema, StringSchema, TaskSupport, Tool,
};
use serde_json::json;

/// Set when the long tool's work is dropped before it ends (`.0`), and when it starts (`.1`).
#[derive(Clone, Default)]
struct Dropped(Arc<AtomicBool>, Arc<AtomicBool>);

struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

async fn long(State(dropped): State<Dropped>) -> String {
    let _guard = SetOnDrop(dropped.0.clone());
    dropped.1.store(true, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(3600)).await;
    "never".into()
}

async fn brief() -> String {
    tokio::time::sleep(Duration::from_millis(50)).await;
    "brief work done".into()
}

async fn failing() -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_millis(20)).await;
    Err(ToolError::new("it did not work"))
}

async fn asking(task: TaskHandle, peer: Peer) -> Result<String, ToolError> {
    task.detach().await;
    let schema = ElicitationSchema::new().with_property("name", StringSchema::default(), true);
    let answer = peer.elicit("name", ElicitRequestFormParams::new("Your name?", schema)).await?;
    let name = answer.content.as_ref().and_then(|c| c.get("name")).and_then(|v| v.as_str()).unwrap_or("?");
    Ok(format!("Hello, {name}!"))
}

struct Serving {
    url: String,
    dropped: Dropped,
    serving: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Drop for Serving {
    fn drop(&mut self) {
        self.serving.abort();
    }
}

async fn serve() -> Serving {
    let task = |name: &str, support| Tool::without_arguments(name).with_task_support(support);
    let dropped = Dropped::default();
    let tools = Tools::new()
        .add_tool(task("long", TaskSupport::Optional), long)
        .add_tool(task("brief", TaskSupport::Optional), brief)
        .add_tool(task("failing", TaskSupport::Required), failing)
        .add_tool(task("asking", TaskSupport::Optional), asking);
    let config = ServerConfig::default()
        .with_tasks(TaskConfig::default().with_poll_interval(Duration::from_millis(20)));
    let server = mcp_server::Server::builder("tasks-server", "1")
        .tools(tools)
        .state(dropped.clone())
        .config(config)
        .build()
        .unwrap();
    let bound = mcp_http::bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = bound.local_addr();
    let serving = tokio::spawn(mcp_http::serve(server, bound, Some(mcp_http::HttpConfig::for_bind(addr))));
    Serving { url: format!("http://{addr}/mcp"), dropped, serving }
}

fn naming(name: &'static str) -> Handlers {
    Handlers::default().on_elicit(false, move |_: ElicitRequestParams| async move {
        let mut r = ElicitResult::new(ElicitAction::Accept);
        r.content = serde_json::from_value(json!({"name": name})).ok();
        Ok(r)
    })
}

async fn client(url: &str, tasks: bool) -> Client {
    ClientBuilder::new("tasks-test", "1")
        .tasks(tasks)
        .handlers(naming("Grace"))
        .connect_http(HttpConfig::new(url))
        .await
        .unwrap()
}

fn text(result: &mcp_types::CallToolResult) -> String {
    serde_json::to_value(&result.content).unwrap()[0]["text"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn a_call_that_becomes_a_task_is_followed_to_its_result() {
    let server = serve().await;
    let client = client(&server.url, true).await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let options = RequestOptions::default().on_task(move |t| record.lock().unwrap().push(t.status.clone()));
    let params = CallToolRequestParams::new("brief");
    let result = client.call_tool_with(&params, &options).await.unwrap();
    assert_eq!(text(&result), "brief work done");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.first(), Some(&TaskStatus::Working), "{seen:?}");
    assert_eq!(seen.last(), Some(&TaskStatus::Completed), "{seen:?}");

    // Its questions are answered by the client's handlers.
    let greeted = client.call_tool("asking", json!({})).await.unwrap();
    assert_eq!(text(&greeted), "Hello, Grace!");

    // A tool error is the result; a failed task is its JSON-RPC error.
    let failed = client.call_tool("failing", json!({})).await.unwrap();
    assert_eq!(failed.is_error, Some(true));
    assert_eq!(text(&failed), "it did not work");
}

#[tokio::test]
async fn a_task_can_be_held_polled_and_cancelled() {
    let server = serve().await;
    let client = client(&server.url, true).await;
    let (params, options) = (CallToolRequestParams::new("long"), RequestOptions::default());
    let ToolOutcome::Task(created) = client.call_tool_or_task(&params, &options).await.unwrap() else {
        panic!("long becomes a task")
    };
    assert!(created.is_created());
    assert_eq!(created.poll_interval_ms, Some(20));
    let got = client.get_task(&created.task_id).await.unwrap();
    assert_eq!(got.status, TaskStatus::Working);
    client.cancel_task(&created.task_id).await.unwrap();
    let mut status = TaskStatus::Working;
    for _ in 0..100 {
        status = client.get_task(&created.task_id).await.unwrap().status;
        if status.is_terminal() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(status, TaskStatus::Cancelled);
    // Following a cancelled task says so.
    let followed = client.follow_task(created, &RequestOptions::default()).await;
    assert!(matches!(followed, Err(ClientError::TaskCancelled(_))), "{followed:?}");
    assert!(matches!(
        client.get_task("unknown").await,
        Err(ClientError::Protocol(e)) if e.code == -32602
    ));
}

#[tokio::test]
async fn dropping_the_call_cancels_its_task() {
    let server = serve().await;
    let client = client(&server.url, true).await;
    let call = client.call_tool("long", json!({}));
    // The call runs until its work has started on the server; then it is dropped.
    let started = async {
        while !server.dropped.1.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::select! {
        ended = call => panic!("the long call ended: {ended:?}"),
        () = started => {}
        () = tokio::time::sleep(Duration::from_secs(30)) => panic!("the long work never started"),
    }
    for _ in 0..200 {
        if server.dropped.0.load(Ordering::SeqCst) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the abandoned task was not cancelled");
}

#[tokio::test]
async fn a_client_without_the_extension_is_answered_without_tasks() {
    let server = serve().await;
    let client = client(&server.url, false).await;
    let result = client.call_tool("brief", json!({})).await.unwrap();
    assert_eq!(text(&result), "brief work done");
    let refused = client.call_tool("failing", json!({})).await;
    assert!(matches!(refused, Err(ClientError::Protocol(e)) if e.code == -32021), "required: refused");
    // Holding a task needs the extension, which the task methods declare themselves.
    let ToolOutcome::Complete(result, _) = client
        .call_tool_or_task(&CallToolRequestParams::new("brief"), &RequestOptions::default())
        .await
        .unwrap()
    else {
        panic!("no task for a client without the extension")
    };
    assert_eq!(text(&result), "brief work done");
}
