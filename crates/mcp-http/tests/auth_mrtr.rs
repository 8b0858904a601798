//! MRTR with authorization on: a `requestState` is bound to the principal it was issued to.
//! A real authorization server (`tests/auth/`) signs the tokens; both servers listen on
//! 127.0.0.1, port 0.

#[path = "auth/authorization_server.rs"]
#[allow(dead_code)]
mod authorization_server;

use authorization_server::AuthorizationServer;
use mcp_auth::jose::Algorithm;
use mcp_http::{AuthConfig, HttpConfig};
use mcp_server::{Peer, Server, ToolError, Tools};
use mcp_types::{ElicitRequestFormParams, ElicitationSchema, PrimitiveSchemaDefinition, StringSchema};
use serde_json::{Value, json};

fn form(message: &str) -> ElicitRequestFormParams {
    let mut schema = ElicitationSchema::default();
    schema.properties.insert("name".to_owned(), PrimitiveSchemaDefinition::String(StringSchema::default()));
    schema.required = Some(vec!["name".to_owned()]);
    ElicitRequestFormParams::new(message, schema)
}

fn name(result: &mcp_types::ElicitResult) -> String {
    result.content.as_ref().and_then(|c| c.get("name")).and_then(|v| v.as_str()).unwrap_or("?").to_owned()
}

/// Asks twice; the first answer travels in the `requestState` of the second round.
async fn full_name(client: Peer) -> Result<String, ToolError> {
    let first = client.elicit("first", form("First name?")).await?;
    let last = client.elicit("last", form("Last name?")).await?;
    Ok(format!("{} {}", name(&first), name(&last)))
}

struct Mcp {
    url: String,
    resource: String,
    http: reqwest::Client,
}

async fn start(authorization: &AuthorizationServer) -> Mcp {
    let server = Server::builder("mrtr-auth", "1")
        .tools(Tools::new().add("full_name", "Asks", full_name))
        .build()
        .unwrap();
    let bound = mcp_http::bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = bound.local_addr();
    let resource = format!("http://{addr}/mcp");
    let auth = AuthConfig::builder(resource.clone()).issuer(authorization.issuer()).build().unwrap();
    let mut config = HttpConfig::for_bind(addr);
    config.auth = Some(auth);
    tokio::spawn(mcp_http::serve(server, bound, Some(config)));
    Mcp { url: resource.clone(), resource, http: reqwest::Client::new() }
}

/// A modern `tools/call` of `full_name` with `extra` params (the MRTR members), as `token`.
async fn call(mcp: &Mcp, token: &str, id: u32, extra: Value) -> (u16, Value) {
    let mut params = json!({
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}},
        "name": "full_name", "arguments": {}});
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    let response = mcp
        .http
        .post(&mcp.url)
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "full_name")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let reply: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    mcp_testkit::assert_valid_message("2026-07-28", &reply);
    (status, reply)
}

fn accept(name: &str) -> Value {
    json!({"action": "accept", "content": {"name": name}})
}

#[tokio::test]
async fn a_request_state_issued_to_one_principal_is_refused_for_another() {
    let authorization = AuthorizationServer::start().await;
    let mcp = start(&authorization).await;
    let alice = authorization.sign(Algorithm::RS256, &authorization.claims(&mcp.resource, "alice", ""));
    let alice_again = authorization.sign(Algorithm::ES256, &authorization.claims(&mcp.resource, "alice", ""));
    let mallory = authorization.sign(Algorithm::RS256, &authorization.claims(&mcp.resource, "mallory", ""));

    let (_, r1) = call(&mcp, &alice, 1, json!({})).await;
    assert_eq!(r1["result"]["resultType"], "input_required", "{r1}");
    let s1 = r1["result"]["requestState"].clone();
    let (_, r2) =
        call(&mcp, &alice, 2, json!({"inputResponses": {"first": accept("Ada")}, "requestState": s1})).await;
    assert_eq!(r2["result"]["resultType"], "input_required", "{r2}");
    // This state carries Alice's first answer.
    let s2 = r2["result"]["requestState"].clone();

    // Mallory, holding Alice's state, cannot complete her request (nor read what it carries).
    let stolen = json!({"inputResponses": {"last": accept("Mallory")}, "requestState": s2.clone()});
    let (status, refused) = call(&mcp, &mallory, 3, stolen).await;
    assert_eq!((status, refused["error"]["code"].clone()), (400, json!(-32602)), "{refused}");
    assert_eq!(refused["id"], 3);
    assert!(!refused.to_string().contains("Ada"), "{refused}");

    // Alice, with a refreshed token, completes it.
    let own = json!({"inputResponses": {"last": accept("Lovelace")}, "requestState": s2});
    let (status, done) = call(&mcp, &alice_again, 4, own).await;
    assert_eq!(status, 200, "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "Ada Lovelace", "{done}");
}
