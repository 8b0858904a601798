//! `completion/complete` through the gateway: a prompt argument or template variable is
//! completed by the upstream that owns the prompt or template, under the upstream's own name,
//! whatever the downstream name; a prompt no upstream offers is refused.

mod support;

use mcp_client::Handlers;
use mcp_server::{Args, Completions, Prompts, Resources, Server, UriVars};
use mcp_types::{
    CompleteRequestParams, CompletionReference, PromptReference, ResourceTemplate, ResourceTemplateReference,
};
use support::{bounded, client, front, serve, upstream};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct GreetArgs {
    name: String,
}

async fn greet(Args(GreetArgs { name }): Args<GreetArgs>) -> String {
    format!("Hello, {name}")
}

async fn item(vars: UriVars) -> String {
    format!("item {}", vars.get("id").unwrap_or_default())
}

/// A server with prompt `greet` whose `name` completes from `names`, and template
/// `{scheme}://items/{id}` whose `id` completes from `ids`.
fn owner(scheme: &str, names: &'static [&'static str], ids: &'static [&'static str]) -> Server {
    let template = format!("{scheme}://items/{{id}}");
    Server::builder(scheme, "1")
        .prompts(Prompts::new().add("greet", "Greet someone", greet))
        .resources(Resources::new().template(ResourceTemplate::new(&template, "item"), item))
        .completions(
            Completions::new()
                .prompt_argument("greet", "name", Completions::from_list(names))
                .template_variable(&template, "id", Completions::from_list(ids)),
        )
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn completions_go_to_the_owner() {
    let a = serve(owner("a", &["Ada", "Alan"], &["a1", "a2"])).await;
    let b = serve(owner("b", &["Barbara", "Alonzo"], &["b1"])).await;
    let front = front(vec![upstream("a", &a.url()), upstream("b", &b.url())]).await;
    for legacy in [false, true] {
        let downstream = client(&front.url(), legacy, Handlers::default()).await;
        let complete = |reference: CompletionReference, argument: &str, value: &str| {
            let params = CompleteRequestParams::new(reference, argument, value);
            let downstream = downstream.clone();
            async move {
                let result = bounded("completion/complete", downstream.complete(&params)).await.unwrap();
                result.completion.values
            }
        };
        // Both offer `greet`: the downstream names are prefixed, each completes from its owner.
        let prompt = |name: &str| CompletionReference::Prompt(PromptReference::new(name));
        assert_eq!(complete(prompt("a__greet"), "name", "A").await, ["Ada", "Alan"], "legacy: {legacy}");
        assert_eq!(complete(prompt("b__greet"), "name", "A").await, ["Alonzo"], "legacy: {legacy}");
        // Templates keep their URIs (no clash here): routed by the URI.
        let template = |uri: &str| CompletionReference::ResourceTemplate(ResourceTemplateReference::new(uri));
        assert_eq!(complete(template("a://items/{id}"), "id", "a").await, ["a1", "a2"], "legacy: {legacy}");
        assert_eq!(complete(template("b://items/{id}"), "id", "b").await, ["b1"], "legacy: {legacy}");
        // A prompt nobody offers: the gateway's server refuses it as any server would.
        let params = CompleteRequestParams::new(prompt("nobody"), "name", "A");
        let refused = bounded("completion/complete", downstream.complete(&params)).await.unwrap_err();
        assert!(refused.to_string().contains("nobody"), "legacy: {legacy}: {refused}");
        downstream.close().await;
    }
    front.close().await;
}
