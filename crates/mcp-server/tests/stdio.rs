//! The stdio transport's promises: concurrency, cancellation, duplicate ids, malformed input,
//! progress and logging filters, batches where allowed, prompt shutdown.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mcp_server::{Args, Cancel, Log, Progress, Server, State, Tools};
use mcp_types::LoggingLevel;
use serde_json::{Value, json};
use support::*;

#[derive(Clone, Default)]
struct Flags {
    dropped: Arc<AtomicBool>,
    started: Arc<AtomicUsize>,
}

struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

async fn slow(State(flags): State<Flags>, _cancel: Cancel) -> &'static str {
    let _guard = DropFlag(flags.dropped.clone());
    flags.started.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(400)).await;
    "slow done"
}

async fn forever(State(flags): State<Flags>) -> &'static str {
    let _guard = DropFlag(flags.dropped.clone());
    flags.started.fetch_add(1, Ordering::SeqCst);
    std::future::pending::<()>().await;
    "never"
}

async fn fast() -> &'static str {
    "fast done"
}

async fn progress(progress: Progress) -> &'static str {
    for (p, message) in
        [(0.0, "start"), (50.0, "half"), (50.0, "repeat"), (10.0, "backwards"), (100.0, "done")]
    {
        progress.report(p, Some(100.0), Some(message)).await;
    }
    "progressed"
}

async fn logs(log: Log) -> &'static str {
    log.debug("debug message").await;
    log.info("info message").await;
    log.log(LoggingLevel::Warning, json!({"w": 1})).await;
    log.error("error message").await;
    "logged"
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    text: String,
}

/// Reports progress (a small message queued first), then answers with the text: a large
/// answer when the text is large.
async fn echo_after_progress(progress: Progress, Args(EchoArgs { text }): Args<EchoArgs>) -> String {
    progress.report(1.0, None, Some("about to answer")).await;
    text
}

fn server(flags: Flags) -> Server {
    let tools = Tools::new()
        .add("slow", "Sleeps 400 ms", slow)
        .add("forever", "Never returns", forever)
        .add("fast", "Returns at once", fast)
        .add("progress", "Reports progress", progress)
        .add("logs", "Logs at four levels", logs)
        .add("echo", "Reports progress, then echoes the text", echo_after_progress);
    Server::builder("stdio-test", "1").tools(tools).state(flags).build().unwrap()
}

fn call(id: Value, name: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"_meta": meta(json!({})), "name": name}})
}

#[tokio::test]
async fn a_slow_request_does_not_hold_back_a_fast_one() {
    let mut p = Peer::start(server(Flags::default()));
    p.send(call(json!(1), "slow")).await;
    p.send(call(json!(2), "fast")).await;
    let first = p.recv().await;
    assert_eq!(first["id"], 2, "the fast answer comes first: {first}");
    let second = p.recv().await;
    assert_eq!(second["id"], 1);
    assert_eq!(second["result"]["content"][0]["text"], "slow done");
    p.close().await;
}

#[tokio::test]
async fn cancellation_drops_the_handler_and_nothing_more_is_sent() {
    let flags = Flags::default();
    let mut p = Peer::start(server(flags.clone()));
    p.send(call(json!("long"), "forever")).await;
    while flags.started.load(Ordering::SeqCst) == 0 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    p.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "long", "reason": "test"}}))
        .await;
    p.expect_silence(Duration::from_millis(300)).await;
    assert!(flags.dropped.load(Ordering::SeqCst), "the handler's future was dropped");
    // The id is free again and the server keeps serving.
    p.send(call(json!("long"), "fast")).await;
    assert_eq!(p.recv().await["result"]["content"][0]["text"], "fast done");
    p.close().await;
}

#[tokio::test]
async fn a_duplicate_in_flight_id_is_refused_and_the_first_is_untouched() {
    let mut p = Peer::start(server(Flags::default()));
    p.send(call(json!(7), "slow")).await;
    p.send(call(json!(7), "fast")).await;
    let refusal = p.recv().await;
    assert_eq!(refusal["id"], 7);
    assert_eq!(refusal["error"]["code"], -32600);
    let first = p.recv().await;
    assert_eq!(first["result"]["content"][0]["text"], "slow done");
    p.close().await;
}

#[tokio::test]
async fn malformed_lines_get_their_error_and_the_server_keeps_serving() {
    let mut p = Peer::start(server(Flags::default()));
    p.send_raw("not json").await;
    let r = p.recv().await;
    assert_eq!(r["error"]["code"], -32700);
    assert!(r.get("id").is_none(), "modern: no id when unreadable: {r}");
    p.send_raw("").await;
    p.send_raw("   ").await;
    p.send_raw("\u{feff}{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}").await;
    assert_eq!(p.recv().await["error"]["code"], -32700);
    p.send_raw(r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#).await;
    assert_eq!(p.recv().await["error"]["code"], -32600, "no batches outside 2025-03-26");
    p.send_raw(r#"{"jsonrpc":"1.0","id":"v","method":"tools/list"}"#).await;
    let r = p.recv().await;
    assert_eq!((r["error"]["code"].clone(), r["id"].clone()), (json!(-32600), json!("v")));
    let huge = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{{\"p\":\"{}\"}}}}",
        "a".repeat(5 << 20)
    );
    p.send_raw(&huge).await;
    assert_eq!(p.recv().await["error"]["code"], -32600, "over the 4 MiB line limit");
    // A request method sent as a notification is not executed and not answered.
    p.send(json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"_meta": meta(json!({})), "name": "fast"}})).await;
    p.expect_silence(Duration::from_millis(200)).await;
    p.send(call(json!(2), "fast")).await;
    assert_eq!(p.recv().await["id"], 2);
    p.close().await;
}

#[tokio::test]
async fn progress_is_sent_only_when_asked_and_only_increasing() {
    let mut p = Peer::start(server(Flags::default()));
    let mut request = call(json!(1), "progress");
    request["params"]["_meta"]["progressToken"] = json!("tok");
    p.send(request).await;
    let mut seen = Vec::new();
    let result = loop {
        let m = p.recv().await;
        if m.get("method").is_some() {
            assert_eq!(m["params"]["progressToken"], "tok");
            seen.push(m["params"]["progress"].as_f64().unwrap());
        } else {
            break m;
        }
    };
    assert_eq!(seen, [0.0, 50.0, 100.0]);
    assert_eq!(result["result"]["content"][0]["text"], "progressed");
    // Without a token: no notifications at all.
    p.send(call(json!(2), "progress")).await;
    assert_eq!(p.recv().await["id"], 2);
    p.close().await;
}

#[tokio::test]
async fn logging_follows_the_requested_level() {
    let mut p = Peer::start(server(Flags::default()));
    // Modern, no logLevel: nothing.
    p.send(call(json!(1), "logs")).await;
    assert_eq!(p.recv().await["id"], 1);
    // Modern, logLevel warning: warning and error only.
    let mut request = call(json!(2), "logs");
    request["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("warning");
    p.send(request).await;
    let (a, b, c) = (p.recv().await, p.recv().await, p.recv().await);
    assert_eq!(
        (a["params"]["level"].as_str(), b["params"]["level"].as_str()),
        (Some("warning"), Some("error"))
    );
    assert_eq!(c["id"], 2);
    // Legacy: everything until setLevel, then the threshold.
    p.initialize(json!({})).await;
    p.send(json!({"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"error"}})).await;
    assert_eq!(p.recv().await["result"], json!({}));
    p.send(json!({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"logs"}})).await;
    let (a, b) = (p.recv().await, p.recv().await);
    assert_eq!(a["params"]["level"], "error");
    assert_eq!(b["id"], 4);
    p.close().await;
}

#[tokio::test]
async fn batches_are_served_in_a_2025_03_26_session() {
    let mut p = Peer::start(server(Flags::default()));
    p.revision = "2025-03-26";
    p.request(json!(0), "initialize", json!({"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}))
        .await;
    p.send_raw(r#"[{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"fast"}},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":"b","method":"ping"}]"#).await;
    let line = p.recv_raw().await;
    let batch: Value = serde_json::from_str(&line).unwrap();
    mcp_testkit::assert_valid("2025-03-26", "JSONRPCBatchResponse", &batch);
    let ids: Vec<&Value> = batch.as_array().unwrap().iter().map(|r| &r["id"]).collect();
    assert_eq!(ids, [&json!("a"), &json!("b")]);
    p.close().await;
}

#[tokio::test]
async fn end_of_input_shuts_down_promptly_and_cancels_what_is_left() {
    let flags = Flags::default();
    let mut p = Peer::start(server(flags.clone()));
    p.send(call(json!(1), "forever")).await;
    p.send(call(json!(2), "fast")).await;
    assert_eq!(p.recv().await["id"], 2);
    let started = Instant::now();
    p.close().await;
    assert!(started.elapsed() < Duration::from_secs(4));
    assert!(flags.dropped.load(Ordering::SeqCst), "the unfinished handler was dropped");
}

/// A request and its cancellation in one write: the cancellation is read after the request, so
/// it must find it in flight (it used to be registered only once its task ran, so the
/// cancellation found nothing and the request ran to its answer).
#[tokio::test]
async fn a_cancellation_right_behind_its_request_cancels_it() {
    let flags = Flags::default();
    let mut peer = Peer::start(server(flags.clone()));
    let request = call(json!(7), "slow").to_string();
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"_meta": meta(json!({})), "requestId": 7}})
    .to_string();
    peer.send_raw(&format!("{request}\n{cancel}")).await;
    peer.expect_silence(Duration::from_millis(700)).await;
    assert_eq!(flags.started.load(Ordering::SeqCst), 0, "the cancelled request ran");
    let answer = peer.request(json!(8), "tools/call", call(json!(8), "fast")["params"].clone()).await;
    assert_eq!(answer["id"], 8);
    peer.close().await;
}

/// Two requests with one id in one write, on a runtime with several workers: the first is the
/// one that runs, the second is refused — whichever task the scheduler starts first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_two_requests_with_one_id_the_first_runs_and_the_second_is_refused() {
    let mut peer = Peer::start(server(Flags::default()));
    for round in 0..12 {
        let id = json!(format!("same-{round}"));
        let first = call(id.clone(), "slow").to_string();
        let second = call(id.clone(), "fast").to_string();
        peer.send_raw(&format!("{first}\n{second}")).await;
        let refusal = peer.recv().await;
        assert_eq!(refusal["id"], id, "{refusal}");
        assert_eq!(
            refusal["error"]["code"], -32600,
            "round {round}: the first request was refused: {refusal}"
        );
        let answer = peer.recv().await;
        assert_eq!(answer["result"]["content"][0]["text"], "slow done", "round {round}: {answer}");
    }
    peer.close().await;
}

#[tokio::test]
async fn large_and_small_messages_are_written_whole_and_in_the_order_queued() {
    let mut p = Peer::start(server(Flags::default()));
    // Answers of 1 MiB (written from their own buffers) between small messages (gathered into
    // one write): every line arrives whole, and a request's progress comes before its answer.
    let texts: Vec<String> = (0..4)
        .map(|i| format!("{i}\\\"\n\t{}", char::from(b'a' + i as u8).to_string().repeat((1 << 20) + i)))
        .collect();
    for (i, text) in texts.iter().enumerate() {
        let mut request = call(json!(i), "echo");
        request["params"]["arguments"] = json!({ "text": text });
        request["params"]["_meta"]["progressToken"] = json!(i);
        p.send(request).await;
        p.send(call(json!(format!("fast-{i}")), "fast")).await;
    }
    let (mut answered, mut fast) = (vec![false; texts.len()], 0);
    while answered.contains(&false) || fast < texts.len() {
        let m = p.recv().await;
        if m["method"] == "notifications/progress" {
            let i = m["params"]["progressToken"].as_u64().unwrap() as usize;
            assert!(!answered[i], "the progress of request {i} came after its answer");
        } else if let Some(i) = m["id"].as_u64() {
            assert_eq!(m["result"]["content"][0]["text"].as_str(), Some(texts[i as usize].as_str()));
            answered[i as usize] = true;
        } else {
            assert_eq!(m["result"]["content"][0]["text"], "fast done", "{m}");
            fast += 1;
        }
    }
    p.close().await;
}
