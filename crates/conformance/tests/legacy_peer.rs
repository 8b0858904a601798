//! In a legacy (2025-11-25) session the same tools send real server→client requests —
//! `sampling/createMessage`, `elicitation/create`, `roots/list` — and their results echo the
//! client's answers.

mod support;

use serde_json::{Value, json};
use support::*;

fn all_legacy_caps() -> Value {
    json!({"sampling": {}, "elicitation": {}, "roots": {"listChanged": true}})
}

/// Sends a `tools/call` and returns the server→client request it causes.
async fn call_until_request(client: &mut Client, id: i64, tool: &str, arguments: Value) -> Value {
    let params = json!({"name": tool, "arguments": arguments});
    client.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})).await;
    let request = client.recv().await;
    assert!(request.get("method").is_some() && request.get("id").is_some(), "a request: {request}");
    request
}

#[tokio::test]
async fn sampling_sends_a_real_request_and_echoes_the_answer() {
    let mut client = Client::legacy(all_legacy_caps()).await;
    let request = call_until_request(&mut client, 1, "test_sampling", json!({"prompt": "Say hi"})).await;
    assert_eq!(request["method"], "sampling/createMessage");
    assert_eq!(
        request["params"],
        json!({"messages": [{"role": "user", "content": {"type": "text", "text": "Say hi"}}], "maxTokens": 100})
    );
    let answer = json!({"role": "assistant", "content": {"type": "text", "text": "Hi there"},
                        "model": "test-model", "stopReason": "endTurn"});
    client.answer(&request, answer).await;
    let response = client.recv().await;
    assert_eq!(response["id"], 1);
    assert_eq!(first_text(&response), "LLM response: Hi there");
    client.close().await;
}

#[tokio::test]
async fn elicitation_sends_a_real_request_and_echoes_the_answer() {
    let mut client = Client::legacy(all_legacy_caps()).await;
    let message = "Please provide your information";
    let request = call_until_request(&mut client, 1, "test_elicitation", json!({"message": message})).await;
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], message);
    let schema = &request["params"]["requestedSchema"];
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["username"]["type"], "string", "{schema}");
    assert_eq!(schema["properties"]["email"]["type"], "string", "{schema}");
    assert_eq!(schema["required"], json!(["username", "email"]));
    let answer = json!({"action": "accept", "content": {"username": "alice", "email": "alice@example.com"}});
    client.answer(&request, answer).await;
    let response = client.recv().await;
    assert_eq!(
        first_text(&response),
        r#"User response: action=accept, content={"email":"alice@example.com","username":"alice"}"#
    );
    client.close().await;
}

#[tokio::test]
async fn sep1034_defaults_are_requested_exactly() {
    let mut client = Client::legacy(all_legacy_caps()).await;
    let request = call_until_request(&mut client, 1, "test_elicitation_sep1034_defaults", json!({})).await;
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(
        request["params"]["requestedSchema"],
        json!({"type": "object", "required": [], "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "default": true}
        }})
    );
    client.answer(&request, json!({"action": "decline"})).await;
    let response = client.recv().await;
    assert!(first_text(&response).contains("action=decline"), "{response}");
    client.close().await;
}

#[tokio::test]
async fn sep1330_enums_are_requested_exactly() {
    let mut client = Client::legacy(all_legacy_caps()).await;
    let request = call_until_request(&mut client, 1, "test_elicitation_sep1330_enums", json!({})).await;
    let options = |titles: [&str; 3]| {
        json!([
            {"const": "value1", "title": titles[0]},
            {"const": "value2", "title": titles[1]},
            {"const": "value3", "title": titles[2]}
        ])
    };
    assert_eq!(
        request["params"]["requestedSchema"],
        json!({"type": "object", "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "oneOf": options(["First Option", "Second Option", "Third Option"])},
            "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                           "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array", "minItems": 1, "maxItems": 3,
                              "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {"type": "array",
                            "items": {"anyOf": options(["First Choice", "Second Choice", "Third Choice"])}}
        }})
    );
    let content = json!({"untitledSingle": "option2", "untitledMulti": ["option1", "option3"]});
    client.answer(&request, json!({"action": "accept", "content": content})).await;
    let response = client.recv().await;
    assert!(first_text(&response).contains(r#""untitledMulti":["option1","option3"]"#), "{response}");
    client.close().await;
}

#[tokio::test]
async fn a_client_error_becomes_an_error_result() {
    let mut client = Client::legacy(all_legacy_caps()).await;
    let request = call_until_request(&mut client, 1, "test_sampling", json!({"prompt": "x"})).await;
    let error = json!({"code": -1, "message": "User rejected sampling request"});
    client.send(json!({"jsonrpc": "2.0", "id": request["id"], "error": error})).await;
    let response = client.recv().await;
    assert_eq!(response["result"]["isError"], true, "{response}");
    assert!(first_text(&response).contains("User rejected"), "{response}");
    client.close().await;
}

#[tokio::test]
async fn undeclared_capabilities_are_never_asked_for() {
    let mut client = Client::legacy(json!({})).await;
    for (id, (tool, arguments)) in [
        ("test_missing_capability", json!({})),
        ("test_sampling", json!({"prompt": "x"})),
        ("test_elicitation", json!({"message": "x"})),
        ("test_input_required_result_list_roots", json!({})),
    ]
    .into_iter()
    .enumerate()
    {
        // The next message is the response: no server→client request was sent.
        let r = client.call_legacy(id as i64 + 1, tool, arguments).await;
        assert_eq!(r["result"]["isError"], true, "{tool}: {r}");
        assert!(first_text(&r).contains("does not support"), "{tool}: {r}");
    }
    let r = client.call_legacy(9, "test_input_required_result_capabilities", json!({})).await;
    assert!(first_text(&r).contains("nothing was asked"), "{r}");
    client.close().await;
}

#[tokio::test]
async fn multiple_inputs_are_three_concurrent_requests() {
    let mut client = Client::legacy(all_legacy_caps()).await;
    let params = json!({"name": "test_input_required_result_multiple_inputs"});
    client.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})).await;
    // All three questions are out before any is answered.
    let mut requests = [client.recv().await, client.recv().await, client.recv().await];
    requests.sort_by_key(|r| r["method"].as_str().unwrap().to_owned());
    let methods: Vec<&str> = requests.iter().map(|r| r["method"].as_str().unwrap()).collect();
    assert_eq!(methods, ["elicitation/create", "roots/list", "sampling/createMessage"]);
    let answers = [
        json!({"action": "accept", "content": {"name": "Bob"}}),
        json!({"roots": [{"uri": "file:///test/root", "name": "Test Root"}]}),
        json!({"role": "assistant", "content": {"type": "text", "text": "Howdy"}, "model": "m"}),
    ];
    for (request, answer) in requests.iter().zip(answers).rev() {
        client.answer(request, answer).await;
    }
    let response = client.recv().await;
    let text = first_text(&response);
    assert!(text.contains("Hello, Bob!") && text.contains("Howdy") && text.contains("Test Root"), "{text}");
    client.close().await;
}

#[tokio::test]
async fn multi_round_asks_twice_in_sequence() {
    let mut client = Client::legacy(all_legacy_caps()).await;
    let first = call_until_request(&mut client, 1, "test_input_required_result_multi_round", json!({})).await;
    client.answer(&first, json!({"action": "accept", "content": {"name": "Carol"}})).await;
    let second = client.recv().await;
    assert_eq!(second["method"], "elicitation/create", "{second}");
    assert_ne!(first["id"], second["id"]);
    client.answer(&second, json!({"action": "accept", "content": {"color": "green"}})).await;
    let response = client.recv().await;
    let text = first_text(&response);
    assert!(text.contains("Carol") && text.contains("green"), "{text}");
    client.close().await;
}

#[tokio::test]
async fn the_prompt_elicits_context_in_a_session() {
    let mut client = Client::legacy(all_legacy_caps()).await;
    let params = json!({"name": "test_input_required_result_prompt"});
    client.send(json!({"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": params})).await;
    let request = client.recv().await;
    assert_eq!(request["method"], "elicitation/create", "{request}");
    client.answer(&request, json!({"action": "accept", "content": {"context": "tea time"}})).await;
    let response = client.recv().await;
    let text = response["result"]["messages"][0]["content"]["text"].as_str().unwrap();
    assert!(text.contains("tea time"), "{response}");
    client.close().await;
}
