//! Every fixture is listed, on both eras, with what the suite checks: names, descriptions,
//! schemas, MIME types, capabilities, caching hints.

mod support;

use serde_json::{Value, json};
use support::*;

const TOOLS: &[&str] = &[
    "test_simple_text",
    "test_image_content",
    "test_audio_content",
    "test_embedded_resource",
    "test_multiple_content_types",
    "test_error_handling",
    "test_tool_with_progress",
    "test_tool_with_logging",
    "test_logging_tool",
    "test_reconnection",
    "json_schema_2020_12_tool",
    "test_custom_header",
    "test_sampling",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    "test_missing_capability",
    "test_streaming_elicitation",
    "test_input_required_result_elicitation",
    "test_input_required_result_sampling",
    "test_input_required_result_list_roots",
    "test_input_required_result_request_state",
    "test_input_required_result_multiple_inputs",
    "test_input_required_result_multi_round",
    "test_input_required_result_tampered_state",
    "test_input_required_result_capabilities",
    "test_trigger_tool_change",
    "test_trigger_prompt_change",
    "greet",
    "slow_compute",
    "failing_job",
    "protocol_error_job",
    "confirm_delete",
    "multi_input",
    "test_tool_with_task",
];

const RESOURCES: &[(&str, &str)] = &[
    ("test://static-text", "text/plain"),
    ("test://static-binary", "image/png"),
    ("test://watched-resource", "text/plain"),
];

const PROMPTS: &[(&str, &[&str])] = &[
    ("test_simple_prompt", &[]),
    ("test_prompt_with_arguments", &["arg1", "arg2"]),
    ("test_prompt_with_embedded_resource", &["resourceUri"]),
    ("test_prompt_with_image", &[]),
    ("test_input_required_result_prompt", &[]),
];

fn names(list: &Value, key: &str) -> Vec<String> {
    list.as_array().unwrap().iter().map(|item| item[key].as_str().unwrap().to_owned()).collect()
}

fn is_nonempty_string(value: &Value) -> bool {
    value.as_str().is_some_and(|s| !s.is_empty())
}

/// The lists, as the client of `era` sees them: (tools, resources, templates, prompts).
async fn lists(client: &mut Client, params: Value) -> [Value; 4] {
    let mut out = Vec::new();
    for (id, method) in
        ["tools/list", "resources/list", "resources/templates/list", "prompts/list"].into_iter().enumerate()
    {
        out.push(client.request(json!(100 + id), method, params.clone()).await["result"].clone());
    }
    out.try_into().unwrap()
}

fn check_lists([tools, resources, templates, prompts]: &[Value; 4]) {
    assert_eq!(names(&tools["tools"], "name"), TOOLS);
    for tool in tools["tools"].as_array().unwrap() {
        assert!(is_nonempty_string(&tool["description"]), "{tool}");
        assert_eq!(tool["inputSchema"]["type"], "object", "{tool}");
        let name = tool["name"].as_str().unwrap();
        assert!(name.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c)), "{name}");
        // The tasks fixtures say they may (or must) become tasks.
        let support = match name {
            "slow_compute" | "protocol_error_job" | "confirm_delete" | "multi_input" => json!("optional"),
            "failing_job" | "test_tool_with_task" => json!("required"),
            _ => Value::Null,
        };
        assert_eq!(tool["execution"]["taskSupport"], support, "{name}");
    }
    // The skills' files are resources too (after the fixtures): each with its type and size.
    let (skills, listed): (Vec<&Value>, Vec<&Value>) = resources["resources"]
        .as_array()
        .unwrap()
        .iter()
        .partition(|r| r["uri"].as_str().unwrap().starts_with("skill://"));
    assert_eq!(skills.len(), 5, "{resources}");
    assert!(skills.iter().all(|r| r["mimeType"].is_string() && r["size"].is_u64()), "{resources}");
    assert_eq!(listed.len(), RESOURCES.len(), "{resources}");
    for (entry, (uri, mime)) in listed.iter().zip(RESOURCES) {
        assert_eq!(entry["uri"], *uri);
        assert_eq!(entry["mimeType"], *mime);
        assert!(is_nonempty_string(&entry["name"]) && is_nonempty_string(&entry["description"]), "{entry}");
    }
    let template = &templates["resourceTemplates"];
    assert_eq!(template.as_array().unwrap().len(), 1, "{templates}");
    assert_eq!(template[0]["uriTemplate"], "test://template/{id}/data");
    assert_eq!(template[0]["mimeType"], "application/json");
    assert!(is_nonempty_string(&template[0]["name"]) && is_nonempty_string(&template[0]["description"]));
    let listed = prompts["prompts"].as_array().unwrap();
    assert_eq!(listed.len(), PROMPTS.len(), "{prompts}");
    for (prompt, (name, arguments)) in listed.iter().zip(PROMPTS) {
        assert_eq!(prompt["name"], *name);
        assert!(is_nonempty_string(&prompt["description"]), "{prompt}");
        let declared = prompt.get("arguments").map(|a| names(a, "name")).unwrap_or_default();
        assert_eq!(declared, *arguments, "{prompt}");
        for argument in prompt.get("arguments").and_then(Value::as_array).into_iter().flatten() {
            assert_eq!(argument["required"], true, "{argument}");
            assert!(is_nonempty_string(&argument["description"]), "{argument}");
        }
    }
}

#[tokio::test]
async fn modern_lists_every_fixture_with_caching_hints() {
    let mut client = Client::start();
    let lists = lists(&mut client, json!({"_meta": meta(json!({}))})).await;
    check_lists(&lists);
    for list in &lists {
        assert_eq!(list["resultType"], "complete", "{list}");
        assert!(list["ttlMs"].as_u64().is_some(), "{list}");
        assert!(["public", "private"].contains(&list["cacheScope"].as_str().unwrap()), "{list}");
        assert_eq!(list["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], conformance::NAME);
    }
    client.close().await;
}

#[tokio::test]
async fn legacy_lists_every_fixture_without_modern_members() {
    let mut client = Client::legacy(json!({})).await;
    let lists = lists(&mut client, json!({})).await;
    check_lists(&lists);
    for list in &lists {
        assert!(list.get("resultType").is_none() && list.get("ttlMs").is_none(), "{list}");
    }
    client.close().await;
}

#[tokio::test]
async fn modern_tools_list_is_deterministic() {
    let mut client = Client::start();
    let first = client.request(json!(1), "tools/list", json!({"_meta": meta(json!({}))})).await;
    let second = client.request(json!(2), "tools/list", json!({"_meta": meta(json!({}))})).await;
    assert_eq!(first["result"]["tools"], second["result"]["tools"]);
    client.close().await;
}

#[tokio::test]
async fn discover_declares_what_is_served() {
    let mut client = Client::start();
    let r = client.request(json!(1), "server/discover", json!({"_meta": meta(json!({}))})).await;
    let result = &r["result"];
    assert!(result["supportedVersions"].as_array().unwrap().contains(&json!(MODERN)), "{r}");
    let caps = &result["capabilities"];
    assert_eq!(caps["tools"]["listChanged"], true, "{r}");
    assert_eq!(caps["prompts"]["listChanged"], true, "{r}");
    assert_eq!(caps["resources"]["listChanged"], true, "{r}");
    assert!(caps["completions"].is_object(), "{r}");
    assert!(caps.get("logging").is_none(), "2026-07-28 has no logging capability: {r}");
    assert_eq!(result["instructions"], conformance::INSTRUCTIONS);
    assert_eq!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], conformance::NAME);
    client.close().await;
}

#[tokio::test]
async fn initialize_declares_what_is_served() {
    let mut client = Client::start();
    let r = client.initialize(json!({"sampling": {}, "elicitation": {}})).await;
    let result = &r["result"];
    let caps = &result["capabilities"];
    assert_eq!(caps["tools"]["listChanged"], true, "{r}");
    assert_eq!(caps["prompts"]["listChanged"], true, "{r}");
    assert_eq!(caps["resources"]["subscribe"], true, "{r}");
    assert!(caps["logging"].is_object() && caps["completions"].is_object(), "{r}");
    assert_eq!(result["serverInfo"]["name"], conformance::NAME);
    assert_eq!(result["instructions"], conformance::INSTRUCTIONS);
    client.close().await;
}

#[tokio::test]
async fn json_schema_2020_12_tool_keeps_its_raw_schema() {
    let mut client = Client::start();
    let r = client.request(json!(1), "tools/list", json!({"_meta": meta(json!({}))})).await;
    let tools = r["result"]["tools"].as_array().unwrap();
    let tool = tools.iter().find(|t| t["name"] == "json_schema_2020_12_tool").unwrap();
    let schema = &tool["inputSchema"];
    assert_eq!(schema, &Value::Object(conformance::tools::json_schema_2020_12()));
    assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
    assert_eq!(schema["$defs"]["address"]["$anchor"], "addressDef");
    assert_eq!(schema["properties"]["address"]["$ref"], "#/$defs/address");
    assert_eq!(schema["allOf"][0]["anyOf"], json!([{"required": ["phone"]}, {"required": ["email"]}]));
    assert!(schema["if"].is_object() && schema["then"].is_object() && schema["else"].is_object());
    assert_eq!(schema["additionalProperties"], false);
    client.close().await;
}
