//! What a policy changes beyond the lists: the capabilities `server/discover` and `initialize`
//! declare to each caller, and the cache scope of what differs per caller.

use std::sync::Arc;

use mcp_server::policy::{Decision, Item, Policy, Question};
use mcp_server::{Connection, NullSink, Principal, Prompts, Server, Tools};
use mcp_types::{DecodeOptions, Message};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// Admins see everything; anyone else sees the `echo` tool only.
struct AdminsOnly;

impl Policy for AdminsOnly {
    fn decide(&self, question: &Question<'_>) -> Decision {
        let admin = question.principal.and_then(|p| p.subject.as_deref()) == Some("admin");
        match question.item {
            _ if admin => Decision::Allow,
            Item::Tool(tool) if tool.name == "echo" => Decision::Allow,
            _ => Decision::Deny(vec!["admins-only".into()]),
        }
    }
}

async fn echo() -> String {
    "echo".into()
}

async fn poem() -> String {
    "a poem".into()
}

fn server(tools: bool) -> Server {
    let completions = mcp_server::Completions::new()
        .prompt_argument("poem", "subject", |_| async { vec!["the sea".to_owned()] });
    let mut builder = Server::builder("policy", "1")
        .prompts(Prompts::new().add("poem", "A poem", poem))
        .completions(completions);
    if tools {
        builder = builder.tools(Tools::new().add("echo", "Echo", echo).add("wipe", "Wipe", echo));
    }
    builder.policy(Arc::new(AdminsOnly)).build().unwrap()
}

async fn ask(server: &Server, body: Value, subject: Option<&str>) -> Value {
    let options = DecodeOptions::new().with_accept_responses(false);
    let Ok(Message::Request(request)) = mcp_types::decode_message(body.to_string().as_bytes(), options)
    else {
        panic!("not a request")
    };
    let connection = Connection::new(Arc::new(NullSink));
    let sink: Arc<dyn mcp_server::MessageSink> = Arc::new(NullSink);
    let principal = subject.map(|s| Arc::new(Principal::new(None, Some(s.into()), None)));
    let reply = server
        .handle_request_as(&connection, request, CancellationToken::new(), sink, principal)
        .await
        .expect("a reply");
    serde_json::to_value(Message::Response(reply.response)).unwrap()
}

fn discover() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}})
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}})
}

#[tokio::test]
async fn a_feature_whose_every_item_is_hidden_is_not_declared_to_that_caller() {
    let server = server(true);
    let admin = ask(&server, discover(), Some("admin")).await;
    let caps = &admin["result"]["capabilities"];
    assert!(
        caps["tools"].is_object() && caps["prompts"].is_object() && caps["completions"].is_object(),
        "{admin}"
    );
    // Per caller: never to be shared by an intermediary's cache.
    assert_eq!(admin["result"]["cacheScope"], "private", "{admin}");

    let guest = ask(&server, discover(), Some("guest")).await;
    let caps = &guest["result"]["capabilities"];
    assert!(caps["tools"].is_object(), "one tool is visible: {guest}");
    assert!(caps.get("prompts").is_none(), "every prompt is hidden: {guest}");
    assert!(caps.get("completions").is_none(), "nothing left to complete: {guest}");

    // The legacy handshake declares the same.
    let guest = ask(&server, initialize(), Some("guest")).await;
    let caps = &guest["result"]["capabilities"];
    assert!(caps["tools"].is_object() && caps.get("prompts").is_none(), "{guest}");
    let anonymous = ask(&server, initialize(), None).await;
    assert!(anonymous["result"]["capabilities"].get("prompts").is_none(), "{anonymous}");
    let admin = ask(&server, initialize(), Some("admin")).await;
    assert!(admin["result"]["capabilities"]["prompts"].is_object(), "{admin}");

    // A list's cache scope is private too.
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}});
    let listed = ask(&server, list, Some("guest")).await;
    assert_eq!(listed["result"]["cacheScope"], "private", "{listed}");
    let names: Vec<&str> =
        listed["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["echo"]);
}

#[tokio::test]
async fn without_a_policy_the_configured_scope_and_every_capability_stay() {
    let server =
        Server::builder("plain", "1").prompts(Prompts::new().add("poem", "A poem", poem)).build().unwrap();
    let reply = ask(&server, discover(), Some("guest")).await;
    assert_eq!(reply["result"]["cacheScope"], "public", "{reply}");
    assert!(reply["result"]["capabilities"]["prompts"].is_object(), "{reply}");
}
