//! Replicas without a shared store, for modern callers: two gateways given the same
//! request-state key accept each other's MRTR `requestState` — a question asked through one is
//! answered through the other — and a gateway with another key refuses it.

mod support;

use mcp_client::{ClientBuilder, EraCache, RequestOptions};
use mcp_server::{Peer, Server, ToolError, Tools};
use mcp_types::methods::CallTool;
use mcp_types::{
    CallToolRequestParams, ElicitAction, ElicitRequestFormParams, ElicitResult, ElicitationSchema,
    InputResponse, MrtrResult, StringSchema, Tool,
};
use support::*;

async fn asking(peer: Peer) -> Result<String, ToolError> {
    let schema = ElicitationSchema::new().with_property("name", StringSchema::default(), true);
    let answer = peer.elicit("name", ElicitRequestFormParams::new("Your name?", schema)).await?;
    let name = answer.content.as_ref().and_then(|c| c.get("name")).and_then(|v| v.as_str()).unwrap_or("?");
    Ok(format!("Hello, {name}!"))
}

fn key(byte: u8) -> mcp_gateway::GatewayOptions {
    mcp_gateway::GatewayOptions::new().request_state_key(mcp_server::StateKey::from_bytes([byte; 32]))
}

async fn modern_client(url: &str) -> mcp_client::Client {
    let builder = ClientBuilder::new("gateway-replicas-test", "1").era_cache(EraCache::new());
    bounded("connecting", builder.connect_http(mcp_client::transport::http::HttpConfig::new(url.to_owned())))
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_question_asked_through_one_gateway_is_answered_through_another_with_the_same_key() {
    let server = Server::builder("asking-upstream", "1")
        .tools(Tools::new().add_tool(Tool::without_arguments("asking"), asking))
        .build()
        .unwrap();
    let up = serve(server).await;
    let one = front_with(vec![upstream("up", &up.url())], key(3)).await;
    let two = front_with(vec![upstream("up", &up.url())], key(3)).await;
    let stranger = front_with(vec![upstream("up", &up.url())], key(4)).await;
    let (first, second, third) = (
        modern_client(&one.url()).await,
        modern_client(&two.url()).await,
        modern_client(&stranger.url()).await,
    );
    let capabilities =
        mcp_types::ClientCapabilities { elicitation: Some(Default::default()), ..Default::default() };
    let options = RequestOptions::new().client_capabilities(capabilities);

    let params = CallToolRequestParams::new("asking");
    let asked = bounded("the first round", first.request_mrtr::<CallTool>(&params, &options)).await.unwrap();
    let MrtrResult::InputRequired(required) = asked else { panic!("the call asks a question: {asked:?}") };
    let key_asked = required.input_requests.unwrap().into_keys().next().unwrap();
    let mut answer = ElicitResult::new(ElicitAction::Accept);
    answer.content = serde_json::from_value(serde_json::json!({"name": "Ada"})).ok();
    let mut retry = params.clone();
    retry.input_responses = Some([(key_asked, InputResponse::Elicit(answer))].into_iter().collect());
    retry.request_state = required.request_state;

    let refused =
        bounded("the retry through a stranger", third.request_mrtr::<CallTool>(&retry, &options)).await;
    assert!(refused.is_err(), "another key's state is refused: {refused:?}");
    let done =
        bounded("the retry through the other gateway", second.request_mrtr::<CallTool>(&retry, &options))
            .await
            .unwrap();
    let MrtrResult::Complete(result) = done else { panic!("the retry completes: {done:?}") };
    assert_eq!(text_of(&result), "Hello, Ada!");
    for client in [first, second, third] {
        client.close().await;
    }
    for gateway in [one, two, stranger] {
        gateway.close().await;
    }
}
