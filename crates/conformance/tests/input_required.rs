//! The MRTR flows of 2026-07-28: first call → `input_required` with the expected questions and
//! a `requestState`; retry (new id) with the answers and the echoed state → complete.

mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::*;

/// Calls `tool` with these extra params; returns the result (asserting it is one).
async fn call(client: &mut Client, id: i64, caps: Value, tool: &str, extra: Value) -> Value {
    let r = client.call_modern(id, caps, tool, extra).await;
    assert!(r.get("result").is_some(), "{tool}: {r}");
    r["result"].clone()
}

/// Asserts an `input_required` result; returns (its inputRequests, its requestState).
fn input_required(result: &Value) -> (Value, String) {
    assert_eq!(result["resultType"], "input_required", "{result}");
    let state = result["requestState"].as_str().unwrap_or_else(|| panic!("no requestState: {result}"));
    (result["inputRequests"].clone(), state.to_owned())
}

fn keys_and_methods(requests: &Value) -> Vec<(String, String)> {
    let object = requests.as_object().unwrap();
    object.iter().map(|(k, v)| (k.clone(), v["method"].as_str().unwrap().to_owned())).collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(k, m)| ((*k).to_owned(), (*m).to_owned())).collect()
}

fn text(result: &Value) -> &str {
    assert_eq!(result["resultType"], "complete", "{result}");
    result["content"][0]["text"].as_str().unwrap()
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

fn sampled(text: &str) -> Value {
    json!({"role": "assistant", "content": {"type": "text", "text": text}, "model": "test-model", "stopReason": "endTurn"})
}

fn roots() -> Value {
    json!({"roots": [{"uri": "file:///test/root", "name": "Test Root"}]})
}

fn retry(responses: Value, state: &str) -> Value {
    json!({"inputResponses": responses, "requestState": state})
}

const ELICIT: &str = "test_input_required_result_elicitation";

#[tokio::test]
async fn elicitation_asks_the_name_then_greets() {
    let mut client = Client::start();
    let first = call(&mut client, 1, all_caps(), ELICIT, json!({})).await;
    let (requests, state) = input_required(&first);
    let expected = json!({"user_name": {"method": "elicitation/create", "params": {
        "message": "What is your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    }}});
    assert_eq!(requests, expected);
    let answers = json!({"user_name": accept(json!({"name": "Alice"}))});
    let done = call(&mut client, 2, all_caps(), ELICIT, retry(answers.clone(), &state)).await;
    assert_eq!(text(&done), "Hello, Alice!");
    // The state only carries earlier answers: the answers alone complete as well.
    let done = call(&mut client, 3, all_caps(), ELICIT, json!({"inputResponses": answers})).await;
    assert_eq!(text(&done), "Hello, Alice!");
    client.close().await;
}

#[tokio::test]
async fn sampling_asks_the_model() {
    let tool = "test_input_required_result_sampling";
    let mut client = Client::start();
    let (requests, state) = input_required(&call(&mut client, 1, all_caps(), tool, json!({})).await);
    assert_eq!(keys_and_methods(&requests), pairs(&[("sample_request", "sampling/createMessage")]));
    let params = &requests["sample_request"]["params"];
    assert_eq!(params["messages"][0]["content"]["text"], "What is the capital of France?");
    assert_eq!(params["maxTokens"], 100);
    let answers = json!({"sample_request": sampled("Paris")});
    let done = call(&mut client, 2, all_caps(), tool, retry(answers, &state)).await;
    assert!(text(&done).contains("Paris"), "{done}");
    client.close().await;
}

#[tokio::test]
async fn list_roots_asks_for_roots() {
    let tool = "test_input_required_result_list_roots";
    let mut client = Client::start();
    let (requests, state) = input_required(&call(&mut client, 1, all_caps(), tool, json!({})).await);
    assert_eq!(requests, json!({"client_roots": {"method": "roots/list", "params": {}}}));
    let done = call(&mut client, 2, all_caps(), tool, retry(json!({"client_roots": roots()}), &state)).await;
    assert!(text(&done).contains("file:///test/root"), "{done}");
    client.close().await;
}

#[tokio::test]
async fn request_state_round_trips() {
    let tool = "test_input_required_result_request_state";
    let mut client = Client::start();
    let (requests, state) = input_required(&call(&mut client, 1, all_caps(), tool, json!({})).await);
    assert_eq!(keys_and_methods(&requests), pairs(&[("confirm", "elicitation/create")]));
    let schema = &requests["confirm"]["params"]["requestedSchema"];
    assert_eq!(schema["properties"]["ok"]["type"], "boolean", "{requests}");
    let answers = json!({"confirm": accept(json!({"ok": true}))});
    let done = call(&mut client, 2, all_caps(), tool, retry(answers, &state)).await;
    assert!(text(&done).contains("state-ok"), "{done}");
    client.close().await;
}

#[tokio::test]
async fn multiple_inputs_are_asked_in_one_round() {
    let tool = "test_input_required_result_multiple_inputs";
    let mut client = Client::start();
    let (requests, state) = input_required(&call(&mut client, 1, all_caps(), tool, json!({})).await);
    let expected = [
        ("client_roots", "roots/list"),
        ("greeting", "sampling/createMessage"),
        ("user_name", "elicitation/create"),
    ];
    assert_eq!(keys_and_methods(&requests), pairs(&expected));
    // Answering one question leaves the other two.
    let partial = json!({"user_name": accept(json!({"name": "Alice"}))});
    let again = call(&mut client, 2, all_caps(), tool, retry(partial, &state)).await;
    let (requests, _) = input_required(&again);
    assert_eq!(keys_and_methods(&requests), pairs(&expected[..2]));
    let answers = json!({
        "user_name": accept(json!({"name": "Alice"})),
        "greeting": sampled("Good morning"),
        "client_roots": roots(),
    });
    let done = call(&mut client, 3, all_caps(), tool, retry(answers, &state)).await;
    let text = text(&done);
    assert!(
        text.contains("Hello, Alice!") && text.contains("Good morning") && text.contains("Test Root"),
        "{text}"
    );
    client.close().await;
}

#[tokio::test]
async fn multi_round_takes_two_rounds_with_different_states() {
    let tool = "test_input_required_result_multi_round";
    let mut client = Client::start();
    let (requests, r1) = input_required(&call(&mut client, 1, all_caps(), tool, json!({})).await);
    assert_eq!(keys_and_methods(&requests), pairs(&[("step1", "elicitation/create")]));
    let step1 = json!({"step1": accept(json!({"name": "Alice"}))});
    let (requests, r2) = input_required(&call(&mut client, 2, all_caps(), tool, retry(step1, &r1)).await);
    assert_eq!(keys_and_methods(&requests), pairs(&[("step2", "elicitation/create")]));
    assert_ne!(r1, r2, "each round has its own state");
    // Round 3 sends only step2's answer: step1's comes back in the state.
    let step2 = json!({"step2": accept(json!({"color": "blue"}))});
    let done = call(&mut client, 3, all_caps(), tool, retry(step2, &r2)).await;
    let text = text(&done);
    assert!(text.contains("Alice") && text.contains("blue"), "{text}");
    client.close().await;
}

#[tokio::test]
async fn a_tampered_or_foreign_state_is_a_json_rpc_error() {
    let tool = "test_input_required_result_tampered_state";
    let mut client = Client::start();
    let (requests, state) = input_required(&call(&mut client, 1, all_caps(), tool, json!({})).await);
    let key = requests.as_object().unwrap().keys().next().unwrap().clone();
    let answers = json!({ key: accept(json!({"confirmed": true})) });
    let tampered = retry(answers.clone(), &format!("{state}-TAMPERED"));
    let r = client.call_modern(2, all_caps(), tool, tampered).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["id"], 2);
    // A genuine state of another tool does not fit this one either.
    let r = client.call_modern(3, all_caps(), ELICIT, retry(answers.clone(), &state)).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let done = call(&mut client, 4, all_caps(), tool, retry(answers, &state)).await;
    assert!(text(&done).contains("intact"), "{done}");
    client.close().await;
}

#[tokio::test]
async fn only_declared_capabilities_are_asked_for() {
    let tool = "test_input_required_result_capabilities";
    let cases = [
        (json!({"sampling": {}}), vec!["sampling/createMessage"]),
        (json!({"elicitation": {}}), vec!["elicitation/create"]),
        (all_caps(), vec!["sampling/createMessage", "elicitation/create"]),
    ];
    let mut client = Client::start();
    for (id, (caps, expected)) in cases.into_iter().enumerate() {
        let (requests, _) =
            input_required(&call(&mut client, id as i64, caps.clone(), tool, json!({})).await);
        let mut asked: Vec<String> = keys_and_methods(&requests).into_iter().map(|(_, m)| m).collect();
        asked.sort();
        let mut expected: Vec<String> = expected.into_iter().map(str::to_owned).collect();
        expected.sort();
        assert_eq!(asked, expected, "with {caps}");
    }
    let done = call(&mut client, 9, json!({}), tool, json!({})).await;
    assert!(text(&done).contains("nothing was asked"), "{done}");
    client.close().await;
}

#[tokio::test]
async fn missing_or_invalid_answers_are_asked_again() {
    let mut client = Client::start();
    let (_, state) = input_required(&call(&mut client, 1, all_caps(), ELICIT, json!({})).await);
    let wrong_key = json!({"wrong_key": accept(json!({"name": "Alice"}))});
    let cases = [retry(wrong_key, &state), retry(json!({"user_name": 12345}), &state)];
    for (id, params) in cases.into_iter().enumerate() {
        let again = call(&mut client, 2 + id as i64, all_caps(), ELICIT, params).await;
        let (requests, _) = input_required(&again);
        assert_eq!(keys_and_methods(&requests), pairs(&[("user_name", "elicitation/create")]));
    }
    let r = client.call_modern(5, all_caps(), ELICIT, json!({"inputResponses": null})).await;
    assert_ne!(r["result"]["resultType"], "complete", "null answers must not complete: {r}");
    // Extra answers nobody asked for are ignored.
    let extra = json!({"user_name": accept(json!({"name": "Alice"})), "unused": {"anything": 1}});
    let done = call(&mut client, 6, all_caps(), ELICIT, retry(extra, &state)).await;
    assert_eq!(text(&done), "Hello, Alice!");
    client.close().await;
}

#[tokio::test]
async fn a_prompt_asks_for_context_first() {
    let mut client = Client::start();
    let get =
        |extra: Value| modern(all_caps(), json!({"name": "test_input_required_result_prompt"}).tap(extra));
    let first = client.request(json!(1), "prompts/get", get(json!({}))).await;
    let (requests, state) = input_required(&first["result"]);
    assert_eq!(keys_and_methods(&requests), pairs(&[("user_context", "elicitation/create")]));
    let schema = &requests["user_context"]["params"]["requestedSchema"];
    assert_eq!(schema["properties"]["context"]["type"], "string", "{requests}");
    let answers = json!({"user_context": accept(json!({"context": "a rainy day"}))});
    let done = client.request(json!(2), "prompts/get", get(retry(answers, &state))).await;
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    let message = &done["result"]["messages"][0]["content"]["text"];
    assert!(message.as_str().unwrap().contains("a rainy day"), "{done}");
    client.close().await;
}

#[tokio::test]
async fn a_missing_capability_is_error_32021() {
    let mut client = Client::start();
    let r = client.call_modern(1, json!({}), "test_missing_capability", json!({})).await;
    assert_eq!(r["error"]["code"], -32021, "{r}");
    assert_eq!(r["error"]["data"]["requiredCapabilities"], json!({"sampling": {}}), "{r}");
    let with = call(&mut client, 2, json!({"sampling": {}}), "test_missing_capability", json!({})).await;
    input_required(&with);
    client.close().await;
}

#[tokio::test]
async fn streaming_elicitation_answers_input_required_without_server_requests() {
    let mut client = Client::start();
    let started = Instant::now();
    let params = modern(json!({"elicitation": {}}), json!({"name": "test_streaming_elicitation"}));
    let (before, response) = client.exchange(json!(1), "tools/call", params).await;
    assert!(before.is_empty(), "only the result: {before:?}");
    let (requests, _) = input_required(&response["result"]);
    assert_eq!(keys_and_methods(&requests).len(), 1);
    assert!(started.elapsed() < Duration::from_millis(500));
    client.close().await;
}

#[tokio::test]
async fn legacy_style_tools_use_input_required_on_modern() {
    let mut client = Client::start();
    let args = json!({"arguments": {"prompt": "Hi"}});
    let (requests, state) = input_required(&call(&mut client, 1, all_caps(), "test_sampling", args).await);
    let key = requests.as_object().unwrap().keys().next().unwrap().clone();
    let mut extra = retry(json!({ key: sampled("Hello!") }), &state);
    extra["arguments"] = json!({"prompt": "Hi"});
    let done = call(&mut client, 2, all_caps(), "test_sampling", extra).await;
    assert_eq!(text(&done), "LLM response: Hello!");
    client.close().await;
}

/// Merges the members of `extra` into a JSON object.
trait Tap {
    fn tap(self, extra: Value) -> Value;
}

impl Tap for Value {
    fn tap(mut self, extra: Value) -> Value {
        for (k, v) in extra.as_object().unwrap() {
            self[k] = v.clone();
        }
        self
    }
}
