//! The tasks extension (SEP-2663) on the server: a call that becomes a task, its polling, its
//! questions, its cancellation, its failures, and what a client that did not declare the
//! extension gets instead.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mcp_server::task::TaskConfig;
use mcp_server::{Args, Peer as Asker, Rejection, Server, ServerConfig, State, TaskHandle, ToolError, Tools};
use mcp_types::{ElicitRequestFormParams, ElicitationSchema, StringSchema, TaskSupport, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use support::*;
use tokio::sync::Notify;

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// Released by the test: a task's work waits for it.
#[derive(Clone, Default)]
struct Gate(Arc<Notify>);

/// Set when a task's work is dropped before it finished.
#[derive(Clone, Default)]
struct Dropped(Arc<AtomicBool>);

struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[derive(Deserialize, JsonSchema)]
struct Word {
    word: String,
}

async fn gated(State(gate): State<Gate>, State(dropped): State<Dropped>, Args(w): Args<Word>) -> String {
    let guard = SetOnDrop(dropped.0.clone());
    gate.0.notified().await;
    std::mem::forget(guard);
    format!("done: {}", w.word)
}

async fn quick() -> String {
    "at once".into()
}

async fn napping(Args(Nap { ms }): Args<Nap>) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    format!("slept {ms} ms")
}

#[derive(Deserialize, JsonSchema)]
struct Nap {
    ms: u64,
}

fn name_form() -> ElicitRequestFormParams {
    let schema = ElicitationSchema::new().with_property("name", StringSchema::default(), true);
    ElicitRequestFormParams::new("Your name?", schema)
}

async fn asking(task: TaskHandle, asker: Asker) -> Result<String, ToolError> {
    task.detach().await;
    let answer = asker.elicit("name", name_form()).await?;
    let name = answer.content.as_ref().and_then(|c| c.get("name")).and_then(|v| v.as_str()).unwrap_or("?");
    Ok(format!("Hello, {name}! (task {})", task.id().unwrap_or("none")))
}

async fn panicking() -> String {
    tokio::time::sleep(Duration::from_millis(10)).await;
    panic!("on purpose");
}

fn server_with(config: ServerConfig, gate: Gate, dropped: Dropped) -> Server {
    let task = |name: &str, support| Tool::without_arguments(name).with_task_support(support);
    let tools = Tools::new()
        .add_tool(task("gated", TaskSupport::Optional), gated)
        .add_tool(task("required", TaskSupport::Required), gated)
        .add_tool(task("quick", TaskSupport::Optional), quick)
        .add_tool(task("napping", TaskSupport::Optional), napping)
        .add_tool(task("asking", TaskSupport::Optional), asking)
        .add_tool(task("panicking", TaskSupport::Optional), panicking)
        // A proxy becomes a task only when its handler says so (it knows when the server it
        // passes the call to made one).
        .add_proxy(task("refusing", TaskSupport::Optional), |call| async move {
            call.extract::<TaskHandle>()?.detach().await;
            tokio::time::sleep(Duration::from_millis(10)).await;
            Err::<mcp_types::CallToolResult, _>(Rejection::Protocol(mcp_types::ErrorObject::new(
                -32001,
                "upstream said no",
            )))
        })
        .add("plain", "Never a task", quick);
    Server::builder("tasks-test", "1.0.0")
        .tools(tools)
        .state(gate)
        .state(dropped)
        .config(config)
        .build()
        .unwrap()
}

fn server() -> (Server, Gate, Dropped) {
    let (gate, dropped) = (Gate::default(), Dropped::default());
    (server_with(ServerConfig::default(), gate.clone(), dropped.clone()), gate, dropped)
}

fn with_tasks() -> Value {
    json!({"elicitation": {}, "extensions": {TASKS: {}}})
}

fn call(id: i64, name: &str, caps: Value, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"_meta": meta(caps), "name": name, "arguments": arguments}})
}

fn tasks_request(id: i64, method: &str, caps: Value, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = meta(caps);
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

async fn get(p: &mut Peer, id: i64, task: &str) -> Value {
    p.send(tasks_request(id, "tasks/get", with_tasks(), json!({"taskId": task}))).await;
    p.recv().await
}

/// Polls `tasks/get` until the task's status is `want` (or any terminal one).
async fn until(p: &mut Peer, task: &str, want: &str) -> Value {
    for i in 0..200 {
        let r = get(p, 1000 + i, task).await;
        let status = r["result"]["status"].as_str().unwrap_or_default().to_owned();
        if status == want || ["completed", "failed", "cancelled"].contains(&status.as_str()) {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("task {task} never reached {want}");
}

#[tokio::test]
async fn a_call_becomes_a_task_that_is_polled_to_its_result() {
    let (server, gate, _) = server();
    let mut p = Peer::start(server);
    p.send(call(1, "gated", with_tasks(), json!({"word": "one"}))).await;
    let created = p.recv().await["result"].clone();
    assert_eq!(created["resultType"], "task");
    assert_eq!(created["status"], "working");
    let id = created["taskId"].as_str().unwrap().to_owned();
    assert_eq!(id.len(), 32, "128 random bits, hex: {id}");
    assert_eq!(created["ttlMs"], 3_600_000);
    assert_eq!(created["pollIntervalMs"], 500);
    for member in ["result", "error", "inputRequests", "requestState", "task", "ttl"] {
        assert!(created.get(member).is_none(), "{member} in {created}");
    }
    assert!(created["createdAt"].as_str().unwrap().ends_with('Z'));

    // Found at once (created before it was announced), working, with no payload.
    let working = get(&mut p, 2, &id).await["result"].clone();
    assert_eq!(working["resultType"], "complete");
    assert_eq!(working["taskId"], id.as_str());
    assert_eq!(working["status"], "working");
    assert!(working.get("result").is_none());

    gate.0.notify_one();
    let done = until(&mut p, &id, "completed").await["result"].clone();
    assert_eq!(done["status"], "completed");
    assert_eq!(done["result"]["content"][0]["text"], "done: one");
    assert_eq!(done["result"]["isError"], Value::Null);
    assert!(done["result"].get("_meta").is_none());
    assert!(done["lastUpdatedAt"].as_str().unwrap() >= done["createdAt"].as_str().unwrap());

    // A finished task's cancellation is acknowledged and changes nothing.
    p.send(tasks_request(3, "tasks/cancel", with_tasks(), json!({"taskId": id}))).await;
    let ack = p.recv().await["result"].clone();
    assert_eq!(ack, json!({"resultType": "complete", "_meta": ack["_meta"]}));
    assert_eq!(get(&mut p, 4, &id).await["result"]["status"], "completed");
}

#[tokio::test]
async fn what_finishes_without_waiting_is_answered_at_once_and_a_grace_keeps_short_calls_sync() {
    let (server, _, _) = server();
    let mut p = Peer::start(server);
    let r =
        p.request(json!(1), "tools/call", call(1, "quick", with_tasks(), json!({}))["params"].clone()).await;
    assert_eq!(r["result"]["resultType"], "complete");
    assert_eq!(r["result"]["content"][0]["text"], "at once");

    let config =
        ServerConfig::default().with_tasks(TaskConfig::default().with_grace(Duration::from_millis(300)));
    let mut p = Peer::start(server_with(config, Gate::default(), Dropped::default()));
    p.send(call(2, "napping", with_tasks(), json!({"ms": 5}))).await;
    let short = p.recv().await;
    assert_eq!(short["result"]["content"][0]["text"], "slept 5 ms");
    p.send(call(3, "napping", with_tasks(), json!({"ms": 2000}))).await;
    assert_eq!(p.recv().await["result"]["resultType"], "task");
}

#[tokio::test]
async fn a_client_without_the_extension_gets_no_task() {
    let (server, gate, _) = server();
    let mut p = Peer::start(server);
    let plain = json!({"elicitation": {}});
    // Optional: runs to its end within the call.
    p.send(call(1, "gated", plain.clone(), json!({"word": "sync"}))).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    gate.0.notify_one();
    let r = p.recv().await;
    assert_eq!(r["result"]["resultType"], "complete");
    assert_eq!(r["result"]["content"][0]["text"], "done: sync");
    // Required: refused before it runs, naming the extension.
    p.send(call(2, "required", plain.clone(), json!({"word": "x"}))).await;
    let refused = p.recv().await;
    assert_eq!(refused["error"]["code"], -32021);
    assert_eq!(refused["error"]["data"]["requiredCapabilities"], json!({"extensions": {TASKS: {}}}));
    // The methods too.
    for (i, method) in ["tasks/get", "tasks/cancel"].into_iter().enumerate() {
        p.send(tasks_request(10 + i as i64, method, plain.clone(), json!({"taskId": "x"}))).await;
        assert_eq!(p.recv().await["error"]["code"], -32021, "{method}");
    }
    p.send(tasks_request(12, "tasks/update", plain, json!({"taskId": "x", "inputResponses": {}}))).await;
    assert_eq!(p.recv().await["error"]["code"], -32021);
    // A tool without task support never becomes one.
    p.send(call(13, "plain", with_tasks(), json!({}))).await;
    assert_eq!(p.recv().await["result"]["resultType"], "complete");
}

#[tokio::test]
async fn unknown_tasks_and_removed_methods() {
    let (server, _, _) = server();
    let mut p = Peer::start(server);
    let r = get(&mut p, 1, "no-such-task").await;
    assert_eq!(r["error"]["code"], -32602);
    assert!(r["error"]["message"].as_str().unwrap().contains("no-such-task"));
    for (i, method) in ["tasks/update", "tasks/cancel"].into_iter().enumerate() {
        let params = json!({"taskId": "no-such-task", "inputResponses": {}});
        p.send(tasks_request(2 + i as i64, method, with_tasks(), params)).await;
        assert_eq!(p.recv().await["error"]["code"], -32602, "{method}");
    }
    for (i, method) in ["tasks/result", "tasks/list"].into_iter().enumerate() {
        p.send(tasks_request(5 + i as i64, method, with_tasks(), json!({"taskId": "t"}))).await;
        assert_eq!(p.recv().await["error"]["code"], -32601, "{method}");
    }
}

#[tokio::test]
async fn a_task_asks_through_input_requests_and_tasks_update_answers() {
    let (server, _, _) = server();
    let mut p = Peer::start(server);
    p.send(call(1, "asking", with_tasks(), json!({}))).await;
    let created = p.recv().await["result"].clone();
    assert_eq!(created["resultType"], "task", "detach() makes it a task before it asks");
    let id = created["taskId"].as_str().unwrap().to_owned();

    let asking = until(&mut p, &id, "input_required").await["result"].clone();
    assert_eq!(asking["status"], "input_required");
    assert_eq!(asking["inputRequests"]["name"]["method"], "elicitation/create");

    // Unknown keys are ignored; an answer that does not fit is asked again under a new key.
    let wrong = json!({"name": {"action": "accept", "content": {"nom": 3}}, "other": {"ignored": true}});
    p.send(tasks_request(2, "tasks/update", with_tasks(), json!({"taskId": id, "inputResponses": wrong})))
        .await;
    assert_eq!(p.recv().await["result"]["resultType"], "complete");
    let again = until(&mut p, &id, "input_required").await["result"].clone();
    let keys: Vec<&String> = again["inputRequests"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["name-2"], "a key is never used for a second question");

    let right = json!({"name-2": {"action": "accept", "content": {"name": "Ada"}}});
    p.send(tasks_request(3, "tasks/update", with_tasks(), json!({"taskId": id, "inputResponses": right})))
        .await;
    let ack = p.recv().await["result"].clone();
    for member in ["taskId", "status", "result", "inputRequests"] {
        assert!(ack.get(member).is_none(), "{member} in the acknowledgement {ack}");
    }
    let done = until(&mut p, &id, "completed").await["result"].clone();
    assert_eq!(done["result"]["content"][0]["text"], format!("Hello, Ada! (task {id})"));
    assert!(done.get("inputRequests").is_none());
}

#[tokio::test]
async fn cancelling_drops_the_work_and_the_task_settles_cancelled() {
    let (server, _, dropped) = server();
    let mut p = Peer::start(server);
    p.send(call(1, "gated", with_tasks(), json!({"word": "never"}))).await;
    let id = p.recv().await["result"]["taskId"].as_str().unwrap().to_owned();
    p.send(tasks_request(2, "tasks/cancel", with_tasks(), json!({"taskId": id}))).await;
    assert_eq!(p.recv().await["result"]["resultType"], "complete");
    let settled = until(&mut p, &id, "cancelled").await["result"].clone();
    assert_eq!(settled["status"], "cancelled");
    assert!(settled.get("result").is_none() && settled.get("error").is_none());
    for _ in 0..100 {
        if dropped.0.load(Ordering::SeqCst) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the cancelled task's work was not dropped");
}

#[tokio::test]
async fn protocol_failures_fail_the_task_with_their_error() {
    let (server, _, _) = server();
    let mut p = Peer::start(server);
    p.send(call(1, "panicking", with_tasks(), json!({}))).await;
    let id = p.recv().await["result"]["taskId"].as_str().unwrap().to_owned();
    let failed = until(&mut p, &id, "failed").await["result"].clone();
    assert_eq!(failed["status"], "failed");
    assert_eq!(failed["error"]["code"], -32603);
    assert!(failed["statusMessage"].as_str().unwrap().contains("panicked"));
    assert!(failed.get("result").is_none());

    p.send(call(2, "refusing", with_tasks(), json!({}))).await;
    let id = p.recv().await["result"]["taskId"].as_str().unwrap().to_owned();
    let failed = until(&mut p, &id, "failed").await["result"].clone();
    assert_eq!(failed["error"], json!({"code": -32001, "message": "upstream said no"}));

    // The server goes on serving.
    p.send(call(3, "quick", with_tasks(), json!({}))).await;
    assert_eq!(p.recv().await["result"]["content"][0]["text"], "at once");
}

#[tokio::test]
async fn the_extension_is_declared_to_modern_clients_only() {
    let (server, _, _) = server();
    let mut p = Peer::start(server.clone());
    let discovered = p.request(json!(1), "server/discover", json!({"_meta": meta(json!({}))})).await;
    assert_eq!(discovered["result"]["capabilities"]["extensions"][TASKS], json!({}));
    assert!(discovered["result"]["capabilities"].get("tasks").is_none());

    let mut legacy = Peer::start(server);
    let init = legacy.initialize(json!({"extensions": {TASKS: {}}})).await;
    assert!(init["result"]["capabilities"].get("extensions").is_none());
    let r = legacy.request(json!(2), "tasks/get", json!({"taskId": "x"})).await;
    assert_eq!(r["error"]["code"], -32601);
    // A required tool is refused to a legacy session, whatever it declared.
    let r =
        legacy.request(json!(3), "tools/call", json!({"name": "required", "arguments": {"word": "w"}})).await;
    assert_eq!(r["error"]["code"], -32021);
    // An optional one runs within the call.
    let r = legacy.request(json!(4), "tools/call", json!({"name": "quick", "arguments": {}})).await;
    assert_eq!(r["result"]["content"][0]["text"], "at once");

    let without = Server::builder("plain", "1").tools(Tools::new().add("quick", "q", quick)).build().unwrap();
    let mut p = Peer::start(without);
    let discovered = p.request(json!(1), "server/discover", json!({"_meta": meta(json!({}))})).await;
    assert!(discovered["result"]["capabilities"].get("extensions").is_none());
    let r = get(&mut p, 2, "x").await;
    assert_eq!(r["error"]["code"], -32601, "no task support: no tasks methods");
}

#[tokio::test]
async fn listening_for_a_task_hears_its_changes() {
    let (server, gate, _) = server();
    let mut p = Peer::start(server);
    p.send(call(1, "gated", with_tasks(), json!({"word": "heard"}))).await;
    let id = p.recv().await["result"]["taskId"].as_str().unwrap().to_owned();

    p.send(tasks_request(
        2,
        "subscriptions/listen",
        with_tasks(),
        json!({"notifications": {"taskIds": [id]}}),
    ))
    .await;
    let ack = p.recv().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["notifications"]["taskIds"], json!([id]));
    gate.0.notify_one();
    let note = p.recv().await;
    assert_eq!(note["method"], "notifications/tasks");
    assert_eq!(note["params"]["taskId"], id.as_str());
    assert_eq!(note["params"]["status"], "completed");
    assert_eq!(note["params"]["result"]["content"][0]["text"], "done: heard");
    assert_eq!(note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 2);

    // Asking for task notifications needs the extension.
    let plain = json!({});
    p.send(tasks_request(3, "subscriptions/listen", plain, json!({"notifications": {"taskIds": [id]}})))
        .await;
    assert_eq!(p.recv().await["error"]["code"], -32021);
}

#[tokio::test]
async fn a_task_past_its_ttl_is_stopped_and_forgotten() {
    let config =
        ServerConfig::default().with_tasks(TaskConfig::default().with_ttl(Some(Duration::from_millis(200))));
    let dropped = Dropped::default();
    let mut p = Peer::start(server_with(config, Gate::default(), dropped.clone()));
    p.send(call(1, "gated", with_tasks(), json!({"word": "late"}))).await;
    let created = p.recv().await["result"].clone();
    assert_eq!(created["ttlMs"], 200);
    let id = created["taskId"].as_str().unwrap().to_owned();
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(get(&mut p, 2, &id).await["error"]["code"], -32602);
    assert!(dropped.0.load(Ordering::SeqCst), "the expired task's work was dropped");
}

#[tokio::test]
async fn the_store_is_bounded_running_tasks_are_never_evicted() {
    let config = ServerConfig::default().with_tasks(TaskConfig::default().with_capacity(16));
    let mut p = Peer::start(server_with(config, Gate::default(), Dropped::default()));
    let (mut made, mut refused) = (0, 0);
    for i in 0..64 {
        p.send(call(i, "gated", with_tasks(), json!({"word": "w"}))).await;
        let r = p.recv().await;
        if r["result"]["resultType"] == "task" {
            made += 1;
        } else {
            assert_eq!(r["error"]["code"], -32603);
            assert!(r["error"]["message"].as_str().unwrap().contains("too many tasks"), "{r}");
            refused += 1;
        }
    }
    assert!(made <= 16 && refused >= 48, "made {made}, refused {refused}");
}
