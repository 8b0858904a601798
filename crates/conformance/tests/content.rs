//! The exact content of every tool, resource, prompt and completion fixture, on both eras.

mod support;

use conformance::{PNG_BASE64, WAV_BASE64};
use serde_json::{Value, json};
use support::*;

/// A client of each era.
async fn clients() -> [Client; 2] {
    [Client::start(), Client::legacy(json!({})).await]
}

fn is_modern(client: &Client) -> bool {
    client.revision == MODERN
}

/// Sends a request with `params`, adding modern `_meta` when the client is modern.
async fn request(client: &mut Client, id: i64, method: &str, params: Value) -> Value {
    let params = if is_modern(client) { modern(json!({}), params) } else { params };
    client.request(json!(id), method, params).await
}

fn expected_content() -> Vec<(&'static str, Value)> {
    let image = json!({"type": "image", "data": PNG_BASE64, "mimeType": "image/png"});
    vec![
        (
            "test_simple_text",
            json!([{"type": "text", "text": "This is a simple text response for testing."}]),
        ),
        ("test_image_content", json!([image])),
        ("test_audio_content", json!([{"type": "audio", "data": WAV_BASE64, "mimeType": "audio/wav"}])),
        (
            "test_embedded_resource",
            json!([{"type": "resource", "resource": {
                "uri": "test://embedded-resource",
                "mimeType": "text/plain",
                "text": "This is an embedded resource content."
            }}]),
        ),
        (
            "test_multiple_content_types",
            json!([
                {"type": "text", "text": "Multiple content types test:"},
                image,
                {"type": "resource", "resource": {
                    "uri": "test://mixed-content-resource",
                    "mimeType": "application/json",
                    "text": "{\"test\":\"data\",\"value\":123}"
                }}
            ]),
        ),
    ]
}

#[tokio::test]
async fn content_tools_answer_their_exact_content_on_both_eras() {
    for mut client in clients().await {
        for (id, (name, content)) in expected_content().into_iter().enumerate() {
            // The suite sends no `arguments` member at all.
            let r = request(&mut client, id as i64 + 1, "tools/call", json!({"name": name})).await;
            assert_eq!(r["result"]["content"], content, "{name} on {}: {r}", client.revision);
            assert_ne!(r["result"]["isError"], true, "{r}");
        }
        client.close().await;
    }
}

#[tokio::test]
async fn error_tool_answers_an_is_error_result_on_both_eras() {
    for mut client in clients().await {
        let r = request(&mut client, 1, "tools/call", json!({"name": "test_error_handling"})).await;
        assert!(r.get("error").is_none(), "a result, not a JSON-RPC error: {r}");
        assert_eq!(r["result"]["isError"], true, "{r}");
        assert_eq!(first_text(&r), "This tool intentionally returns an error for testing");
        client.close().await;
    }
}

#[tokio::test]
async fn reconnection_tool_answers_over_stdio() {
    for mut client in clients().await {
        let r = request(&mut client, 1, "tools/call", json!({"name": "test_reconnection"})).await;
        assert_eq!(first_text(&r), "Reconnection test completed", "{r}");
        client.close().await;
    }
}

#[tokio::test]
async fn json_schema_tool_validates_against_its_2020_12_schema() {
    let mut client = Client::start();
    let valid = json!({
        "name": "Ada",
        "email": "ada@example.com",
        "address": {"street": "1 Main St", "city": "Springfield"},
        "contactType": "business",
        "company": "Analytical Engines"
    });
    let r = client.call_modern(1, json!({}), "json_schema_2020_12_tool", json!({"arguments": valid})).await;
    assert_ne!(r["result"]["isError"], true, "{r}");
    assert!(first_text(&r).contains("Analytical Engines"), "{r}");
    let invalid = [
        json!({"name": "Ada"}),                              // neither phone nor email
        json!({"name": "Ada", "phone": "1", "extra": true}), // additionalProperties
        json!({"name": "Ada", "phone": "1", "address": {"street": "x"}}), // $ref'd required city
        json!({"name": "Ada", "phone": "1", "contactType": "business"}), // if/then
        json!({"name": "Ada", "phone": "1", "contactType": "personal", "company": "c"}), // else
    ];
    for (id, arguments) in invalid.into_iter().enumerate() {
        let params = json!({"arguments": arguments});
        let r = client.call_modern(id as i64 + 2, json!({}), "json_schema_2020_12_tool", params).await;
        assert_eq!(r["result"]["isError"], true, "{arguments} must be refused: {r}");
    }
    client.close().await;
}

#[tokio::test]
async fn resources_read_their_exact_contents_on_both_eras() {
    let template_text = json!({"id": "123", "templateTest": true, "data": "Data for ID: 123"});
    for mut client in clients().await {
        let read = |uri: &str| json!({"uri": uri});
        let r = request(&mut client, 1, "resources/read", read("test://static-text")).await;
        assert_eq!(
            r["result"]["contents"],
            json!([{"uri": "test://static-text", "mimeType": "text/plain",
                    "text": "This is the content of the static text resource."}]),
            "{r}"
        );
        let r = request(&mut client, 2, "resources/read", read("test://static-binary")).await;
        assert_eq!(
            r["result"]["contents"],
            json!([{"uri": "test://static-binary", "mimeType": "image/png", "blob": PNG_BASE64}]),
            "{r}"
        );
        let r = request(&mut client, 3, "resources/read", read("test://watched-resource")).await;
        assert_eq!(r["result"]["contents"][0]["mimeType"], "text/plain", "{r}");
        assert!(!r["result"]["contents"][0]["text"].as_str().unwrap().is_empty(), "{r}");
        let r = request(&mut client, 4, "resources/read", read("test://template/123/data")).await;
        let contents = &r["result"]["contents"][0];
        assert_eq!(contents["uri"], "test://template/123/data", "{r}");
        assert_eq!(contents["mimeType"], "application/json", "{r}");
        let text: Value = serde_json::from_str(contents["text"].as_str().unwrap()).unwrap();
        assert_eq!(text, template_text);
        if is_modern(&client) {
            assert!(r["result"]["ttlMs"].is_u64() && r["result"]["cacheScope"].is_string(), "{r}");
        }
        client.close().await;
    }
}

#[tokio::test]
async fn unknown_resource_is_an_error_per_era() {
    let uri = "test://nonexistent-resource-for-conformance-testing";
    for (mut client, code) in clients().await.into_iter().zip([-32602, -32002]) {
        let r = request(&mut client, 1, "resources/read", json!({"uri": uri})).await;
        assert_eq!(r["error"]["code"], code, "{r}");
        assert_eq!(r["error"]["data"]["uri"], uri, "{r}");
        client.close().await;
    }
}

#[tokio::test]
async fn prompts_answer_their_exact_messages_on_both_eras() {
    let image = json!({"type": "image", "data": PNG_BASE64, "mimeType": "image/png"});
    for mut client in clients().await {
        let get = |name: &str, arguments: Value| json!({"name": name, "arguments": arguments});
        let r = request(&mut client, 1, "prompts/get", get("test_simple_prompt", json!({}))).await;
        assert_eq!(
            r["result"]["messages"],
            json!([{"role": "user", "content": {"type": "text", "text": "This is a simple prompt for testing."}}])
        );
        let arguments = json!({"arg1": "testValue1", "arg2": "testValue2"});
        let r = request(&mut client, 2, "prompts/get", get("test_prompt_with_arguments", arguments)).await;
        let text = r["result"]["messages"][0]["content"]["text"].as_str().unwrap();
        assert!(text.contains("testValue1") && text.contains("testValue2"), "{r}");
        let arguments = json!({"resourceUri": "test://example-resource"});
        let r = request(&mut client, 3, "prompts/get", get("test_prompt_with_embedded_resource", arguments))
            .await;
        assert_eq!(
            r["result"]["messages"],
            json!([
                {"role": "user", "content": {"type": "resource", "resource": {
                    "uri": "test://example-resource", "mimeType": "text/plain",
                    "text": "Embedded resource content for testing."}}},
                {"role": "user", "content": {"type": "text", "text": "Please process the embedded resource above."}}
            ])
        );
        let r = request(&mut client, 4, "prompts/get", get("test_prompt_with_image", json!({}))).await;
        assert_eq!(
            r["result"]["messages"],
            json!([
                {"role": "user", "content": image},
                {"role": "user", "content": {"type": "text", "text": "Please analyze the image above."}}
            ])
        );
        let r =
            request(&mut client, 5, "prompts/get", get("test_prompt_with_arguments", json!({"arg1": "x"})))
                .await;
        assert_eq!(r["error"]["code"], -32602, "a missing required argument: {r}");
        client.close().await;
    }
}

#[tokio::test]
async fn completions_filter_by_prefix_on_both_eras() {
    let prompt = json!({"type": "ref/prompt", "name": "test_prompt_with_arguments"});
    let template = json!({"type": "ref/resource", "uri": "test://template/{id}/data"});
    let cases = [
        (&prompt, "arg1", "test", json!(["test-value-1", "test-value-2", "testing"])),
        (&prompt, "arg1", "test-", json!(["test-value-1", "test-value-2"])),
        (&prompt, "arg1", "zzz", json!([])),
        (&template, "id", "1", json!(["123"])),
    ];
    for mut client in clients().await {
        for (id, (reference, argument, value, expected)) in cases.iter().enumerate() {
            let params = json!({"ref": reference, "argument": {"name": argument, "value": value}});
            let r = request(&mut client, id as i64 + 1, "completion/complete", params).await;
            assert_eq!(r["result"]["completion"]["values"], *expected, "{r}");
        }
        client.close().await;
    }
}
