//! Approvals through the gateway, over real HTTP, for both client eras: a tool its upstream
//! annotates `destructiveHint: true` runs only after the caller's client approves it through
//! the approval form (which names the tool, its upstream and its arguments, secrets redacted);
//! a decline runs nothing; a client that cannot be asked is refused; other tools never ask.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use mcp_client::{ClientError, Handlers};
use mcp_server::{Args, Server, State, Tools};
use mcp_types::elicitation::approval;
use mcp_types::{ElicitAction, ElicitRequestParams, ElicitResult, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use support::*;

#[derive(Deserialize, JsonSchema)]
struct Target {
    path: String,
    #[schemars(extend("writeOnly" = true))]
    token: String,
}

async fn delete(State(runs): State<Arc<AtomicUsize>>, Args(Target { path, token }): Args<Target>) -> String {
    runs.fetch_add(1, Ordering::SeqCst);
    format!("deleted {path} ({} byte token)", token.len())
}

async fn read(State(runs): State<Arc<AtomicUsize>>) -> String {
    runs.fetch_add(1, Ordering::SeqCst);
    "read".to_owned()
}

fn upstream_server(runs: Arc<AtomicUsize>) -> Server {
    let mut def = Tool::new("delete", Default::default());
    def.annotations = Some(ToolAnnotations { destructive_hint: Some(true), ..Default::default() });
    Server::builder("files", "1")
        .tools(Tools::new().add_tool(def, delete).add("read", "", read))
        .state(runs)
        .build()
        .unwrap()
}

/// Answers every form with `answer`, keeping each message asked.
fn answering(answer: fn() -> ElicitResult, asked: Arc<Mutex<Vec<String>>>) -> Handlers {
    Handlers::default().on_elicit(false, move |params| {
        let asked = asked.clone();
        async move {
            if let ElicitRequestParams::Form(form) = &params {
                assert!(approval::is_approval(form), "the gateway asks with the approval form");
                asked.lock().unwrap().push(form.message.clone());
            }
            Ok(answer())
        }
    })
}

fn decline() -> ElicitResult {
    ElicitResult::new(ElicitAction::Decline)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_destructive_tool_runs_only_when_a_person_approves() {
    let runs = Arc::new(AtomicUsize::new(0));
    let up = serve(upstream_server(runs.clone())).await;
    let front = front(vec![upstream("files", &up.url())]).await;
    let arguments = json!({"path": "/tmp/x", "token": "s3cret-token"});

    for legacy in [false, true] {
        let era = if legacy { "legacy" } else { "modern" };
        // Approved: it runs once, after one question naming the tool, its upstream, the path
        // and not the secret.
        let asked = Arc::new(Mutex::new(Vec::new()));
        let client = support::client(&front.url(), legacy, answering(approval::approve, asked.clone())).await;
        let before = runs.load(Ordering::SeqCst);
        let result = bounded("an approved call", client.call_tool("delete", arguments.clone()))
            .await
            .unwrap_or_else(|e| panic!("{era}: {e}"));
        assert_eq!(text_of(&result), "deleted /tmp/x (12 byte token)", "{era}");
        assert_eq!(runs.load(Ordering::SeqCst), before + 1, "{era}: it ran once");
        let messages = asked.lock().unwrap().clone();
        assert_eq!(messages.len(), 1, "{era}: asked once: {messages:?}");
        let message = &messages[0];
        assert!(message.contains("\"delete\"") && message.contains("\"files\""), "{era}: {message}");
        assert!(message.contains("/tmp/x") && !message.contains("s3cret"), "{era}: {message}");
        // A tool that is not destructive never asks.
        let result = bounded("a plain call", client.call_tool("read", json!({}))).await.unwrap();
        assert_eq!(text_of(&result), "read");
        assert_eq!(asked.lock().unwrap().len(), 1, "{era}: no question for a plain tool");
        client.close().await;

        // Declined: nothing runs, and the caller is told so as a tool error.
        let asked = Arc::new(Mutex::new(Vec::new()));
        let client = support::client(&front.url(), legacy, answering(decline, asked.clone())).await;
        let before = runs.load(Ordering::SeqCst);
        let result = bounded("a declined call", client.call_tool("delete", arguments.clone())).await.unwrap();
        assert_eq!(result.is_error, Some(true), "{era}");
        assert!(text_of(&result).contains("did not approve"), "{era}: {}", text_of(&result));
        assert_eq!(runs.load(Ordering::SeqCst), before, "{era}: nothing ran");
        assert_eq!(asked.lock().unwrap().len(), 1);
        client.close().await;

        // A client that cannot be asked is refused, and nothing runs.
        let client = support::client(&front.url(), legacy, Handlers::default()).await;
        let before = runs.load(Ordering::SeqCst);
        let outcome = bounded("an unaskable call", client.call_tool("delete", arguments.clone())).await;
        match (legacy, outcome) {
            (false, Err(ClientError::Protocol(e))) => {
                assert_eq!(e.code, mcp_types::code::MISSING_REQUIRED_CLIENT_CAPABILITY, "{e:?}")
            }
            (true, Ok(result)) => {
                assert_eq!(result.is_error, Some(true));
                assert!(text_of(&result).contains("cannot ask"), "{}", text_of(&result));
            }
            (_, other) => panic!("{era}: a client without elicitation is refused, not {other:?}"),
        }
        assert_eq!(runs.load(Ordering::SeqCst), before, "{era}: nothing ran");
        client.close().await;
    }
    front.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn exempt_callers_and_switched_off_approvals_are_not_asked() {
    let runs = Arc::new(AtomicUsize::new(0));
    let up = serve(upstream_server(runs.clone())).await;
    let settings = mcp_gateway::config::Settings {
        approvals: mcp_server::Approvals::none().with_tool("read"),
        ..Default::default()
    };
    let config =
        mcp_gateway::config::GatewayConfig { settings, upstreams: vec![upstream("files", &up.url())] };
    let gateway = bounded("the gateway", mcp_gateway::Gateway::start(config)).await.unwrap();
    let served = serve(gateway.server()).await;
    let asked = Arc::new(Mutex::new(Vec::new()));
    let client = support::client(&served.url(), false, answering(decline, asked.clone())).await;
    // Destructive approvals off: delete runs unasked; `read`, named, asks (and is declined).
    let result =
        bounded("delete", client.call_tool("delete", json!({"path": "p", "token": "t"}))).await.unwrap();
    assert_eq!(text_of(&result), "deleted p (1 byte token)");
    let result = bounded("read", client.call_tool("read", json!({}))).await.unwrap();
    assert_eq!(result.is_error, Some(true));
    assert_eq!(asked.lock().unwrap().len(), 1);
    client.close().await;
    gateway.close().await;
}

/// A policy that asks for approval of `read` when its caller's arguments say `"big": true`.
struct ApproveBigReads;

impl mcp_server::policy::Policy for ApproveBigReads {
    fn decide(&self, _question: &mcp_server::policy::Question<'_>) -> mcp_server::policy::Decision {
        mcp_server::policy::Decision::Allow
    }

    fn needs_approval(&self, question: &mcp_server::policy::Question<'_>) -> bool {
        question.item.name() == "read"
            && question.arguments.is_some_and(|a| a.get("big") == Some(&serde_json::Value::Bool(true)))
    }
}

/// A policy names what needs approval, down to the arguments: the same question is asked as for
/// a destructive tool, and only for the calls the policy names.
#[tokio::test(flavor = "multi_thread")]
async fn a_policy_names_the_calls_that_need_approval() {
    let runs = Arc::new(AtomicUsize::new(0));
    let up = serve(upstream_server(runs.clone())).await;
    let settings =
        mcp_gateway::config::Settings { approvals: mcp_server::Approvals::none(), ..Default::default() };
    let config =
        mcp_gateway::config::GatewayConfig { settings, upstreams: vec![upstream("files", &up.url())] };
    let options = mcp_gateway::GatewayOptions::new().policy(Arc::new(ApproveBigReads));
    let gateway = bounded("the gateway", mcp_gateway::Gateway::start_with(config, options)).await.unwrap();
    let served = serve(gateway.server()).await;
    for legacy in [false, true] {
        let asked = Arc::new(Mutex::new(Vec::new()));
        let client = support::client(&served.url(), legacy, answering(decline, asked.clone())).await;
        let before = runs.load(Ordering::SeqCst);
        let result = bounded("a small read", client.call_tool("read", json!({"big": false}))).await.unwrap();
        assert_eq!(text_of(&result), "read");
        assert!(asked.lock().unwrap().is_empty(), "not named by the policy: not asked");
        let result = bounded("a big read", client.call_tool("read", json!({"big": true}))).await.unwrap();
        assert_eq!(result.is_error, Some(true), "declined: {}", text_of(&result));
        assert_eq!(asked.lock().unwrap().len(), 1, "the policy's call was asked about");
        assert_eq!(runs.load(Ordering::SeqCst), before + 1, "only the small read ran");
        // Approvals are off in the settings: the destructive tool runs unasked.
        let result = bounded("a delete", client.call_tool("delete", json!({"path": "/p", "token": "t"})))
            .await
            .unwrap();
        assert_ne!(result.is_error, Some(true));
        assert_eq!(asked.lock().unwrap().len(), 1);
        client.close().await;
    }
    gateway.close().await;
}
