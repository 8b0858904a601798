//! `conformance-client`: the MCP client under test of the official conformance suite
//! (`npx conformance client --command "conformance-client" ...`).
//!
//! ```text
//! conformance-client URL
//! ```
//!
//! The suite passes the scenario in `MCP_CONFORMANCE_SCENARIO`, the revision in
//! `MCP_CONFORMANCE_PROTOCOL_VERSION` (the client speaks exactly that one) and, for some
//! scenarios, JSON in `MCP_CONFORMANCE_CONTEXT`. Written only against `mcp-client`'s public API.
//!
//! Authorization: every connection carries an OAuth client (`mcp_client::auth`) configured from
//! the context — pre-registered credentials, client credentials, `private_key_jwt`, JWT bearer,
//! enterprise-managed authorization — or, without one, the authorization code grant with the
//! Client ID Metadata Document URL the suite expects and dynamic registration as the fallback;
//! the authorization step follows no redirect (the suite's authorization servers approve at
//! once). A server that never refuses a request never sees any of it.
//!
//! What it does: connect; list tools and call each with arguments derived from its schema (or
//! the arguments the context names); list resources and read each; list prompts and get each.
//! A few scenarios need something particular (`json-schema-2020-12-preservation` echoes a
//! schema back). Exit status 0 when every step succeeded, 1 otherwise; logs on stderr.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use mcp_client::auth::{
    AuthError, EnterpriseIdp, Grant, NoFollowPrompt, OAuthClient, PreRegistered, StaticAssertion,
};
use mcp_client::transport::http::HttpConfig;
use mcp_client::{Client, ClientBuilder, ClientError, Handlers};
use mcp_types::{
    CreateMessageResult, ElicitAction, ElicitRequestParams, ElicitResult, ErrorObject, ListRootsResult,
    ProtocolVersion,
};
use serde_json::{Map, Value, json};

fn main() -> ExitCode {
    init_tracing();
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: conformance-client URL   (MCP_CONFORMANCE_SCENARIO names the scenario)");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION").ok();
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(Value::Null);
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("conformance-client: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(run(&url, &scenario, version.as_deref(), &context));
    runtime.shutdown_timeout(Duration::from_secs(1));
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("conformance-client: {scenario}: {e}");
            ExitCode::FAILURE
        }
    }
}

fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(false).init();
}

async fn run(url: &str, scenario: &str, version: Option<&str>, context: &Value) -> Result<(), ClientError> {
    let mut builder = ClientBuilder::new("mcpkit-conformance-client", env!("CARGO_PKG_VERSION"))
        .handlers(handlers())
        .request_timeout(Some(Duration::from_secs(20)));
    if let Some(v) = version.and_then(ProtocolVersion::parse) {
        builder = builder.pin_version(v);
    }
    let oauth = oauth_client(scenario, context).map_err(|e| ClientError::Unsupported(e.to_string()))?;
    let client = builder.connect_http(HttpConfig::new(url).auth(Arc::new(oauth))).await?;
    tracing::info!(version = %client.protocol_version(), "connected");
    let result = exercise(&client, scenario, context).await;
    client.close().await;
    result
}

async fn exercise(client: &Client, scenario: &str, context: &Value) -> Result<(), ClientError> {
    if scenario == "initialize" {
        return Ok(());
    }
    if scenario.starts_with("sep-2640-client") {
        return skills(client, scenario).await;
    }
    let caps = client.server_capabilities();
    let tools = client.list_all_tools().await?;
    let mut failures = Vec::new();
    if scenario == "json-schema-ref-no-deref" {
        // Listing is the test: the schema's network `$ref` must never be fetched.
        tracing::info!(tools = tools.len(), "listed");
        return Ok(());
    }
    if scenario == "json-schema-2020-12-preservation" {
        let focal = tools.iter().find(|t| t.name == "json_schema_2020_12_tool");
        if let Some(focal) = focal {
            let args = json!({"schema": Value::Object(focal.input_schema.clone())});
            client.call_tool("json_schema_echo", args).await?;
        }
        return Ok(());
    }
    let planned: Vec<(String, Value)> = match context.get("toolCalls").and_then(Value::as_array) {
        Some(calls) => calls
            .iter()
            .filter_map(|c| {
                Some((c.get("name")?.as_str()?.to_string(), c.get("arguments").cloned().unwrap_or(json!({}))))
            })
            .collect(),
        None => tools
            .iter()
            .map(|t| (t.name.clone(), arguments_for(&Value::Object(t.input_schema.clone()))))
            .collect(),
    };
    for (name, args) in planned {
        match client.call_tool(&name, args).await {
            Ok(result) => tracing::info!(tool = %name, is_error = ?result.is_error, "called"),
            Err(e) => {
                tracing::warn!(tool = %name, "call failed: {e}");
                failures.push(format!("tools/call {name}: {e}"));
            }
        }
    }
    if caps.resources.is_some() || scenario == "http-standard-headers" {
        match client.list_all_resources().await {
            Ok(resources) => {
                for r in resources {
                    if let Err(e) = client.read_resource(&r.uri).await {
                        failures.push(format!("resources/read {}: {e}", r.uri));
                    }
                }
            }
            Err(e) => failures.push(format!("resources/list: {e}")),
        }
    }
    if caps.prompts.is_some() || scenario == "http-standard-headers" {
        match client.list_all_prompts().await {
            Ok(prompts) => {
                for p in prompts {
                    let args: BTreeMap<String, String> = p
                        .arguments
                        .iter()
                        .flatten()
                        .filter(|a| a.required == Some(true))
                        .map(|a| (a.name.clone(), "test".to_string()))
                        .collect();
                    if let Err(e) = client.get_prompt(&p.name, args).await {
                        failures.push(format!("prompts/get {}: {e}", p.name));
                    }
                }
            }
            Err(e) => failures.push(format!("prompts/list: {e}")),
        }
    }
    if failures.is_empty() { Ok(()) } else { Err(ClientError::Unsupported(failures.join("; "))) }
}

/// The skills extension, as a host uses it: the listing builds its registry (no file is
/// fetched then: `sep-2640-client-no-prefetch`); loading a skill — what the verification
/// scenarios ask for — reads its `SKILL.md`, checked against the entry, and only then its
/// supporting files, each checked too.
async fn skills(client: &Client, scenario: &str) -> Result<(), ClientError> {
    if !client.serves_skills() {
        return Ok(());
    }
    let entries = client.list_all_skills().await?;
    tracing::info!(skills = entries.len(), "skills listed");
    if !scenario.starts_with("sep-2640-client-verify") {
        return Ok(());
    }
    for entry in &entries {
        let loaded = match client.load_skill(entry).await {
            Ok(loaded) => loaded,
            Err(e) => {
                tracing::warn!(skill = %entry.uri, "not loaded: {e}");
                continue;
            }
        };
        if let mcp_types::extensions::skills::SkillResources::Files(files) = &loaded.entry.resources {
            for file in files.iter().filter(|f| f.uri != entry.uri) {
                if let Err(e) = client.read_skill_file(entry, &file.uri).await {
                    tracing::warn!(file = %file.uri, "not used: {e}");
                }
            }
        }
    }
    Ok(())
}

/// Arguments that satisfy a tool's input schema: every required property with a value of its
/// type (its `default` or first `enum` member when it has one).
fn arguments_for(schema: &Value) -> Value {
    let mut args = Map::new();
    let props = schema.get("properties").and_then(Value::as_object);
    let required = schema.get("required").and_then(Value::as_array).cloned().unwrap_or_default();
    for name in required.iter().filter_map(Value::as_str) {
        let prop = props.and_then(|p| p.get(name)).cloned().unwrap_or(Value::Null);
        args.insert(name.to_string(), value_for(&prop));
    }
    Value::Object(args)
}

fn value_for(schema: &Value) -> Value {
    if let Some(d) = schema.get("default") {
        return d.clone();
    }
    if let Some(first) = schema.get("enum").and_then(Value::as_array).and_then(|e| e.first()) {
        return first.clone();
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("number") | Some("integer") => json!(1),
        Some("boolean") => json!(true),
        Some("object") => arguments_for(schema),
        Some("array") => json!([]),
        Some("null") => Value::Null,
        _ => json!("test"),
    }
}

/// The Client ID Metadata Document URL the suite's `auth/basic-cimd` expects.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The OAuth client for a scenario, from the fields of its context.
fn oauth_client(scenario: &str, context: &Value) -> Result<OAuthClient, AuthError> {
    let field = |name: &str| context.get(name).and_then(Value::as_str);
    let mut builder = OAuthClient::builder()
        .client_name("mcpkit-conformance-client")
        .redirect_uri("http://127.0.0.1:8976/callback")?
        .client_metadata_url(CLIENT_METADATA_URL)?
        .prompt(Arc::new(NoFollowPrompt::new()?));
    let Some(client_id) = field("client_id") else { return builder.build() };
    let mut credentials = PreRegistered::new(client_id);
    if let Some(secret) = field("client_secret") {
        credentials = credentials.secret(secret);
    }
    if let Some(pem) = field("private_key_pem") {
        credentials = credentials.private_key_pem(pem, field("signing_algorithm"))?;
    }
    if let Some(issuer) = field("issuer") {
        credentials = credentials.issuer(issuer);
    }
    builder = builder.pre_registered(credentials);
    if let (Some(endpoint), Some(idp_client), Some(id_token)) =
        (field("idp_token_endpoint"), field("idp_client_id"), field("idp_id_token"))
    {
        let idp = EnterpriseIdp::new(endpoint, idp_client, Arc::new(StaticAssertion::new(id_token)))?;
        builder = builder.grant(Grant::EnterpriseManaged(idp));
    } else if let Some(jwt) = field("valid_jwt") {
        builder = builder.grant(Grant::JwtBearer(Arc::new(StaticAssertion::new(jwt))));
    } else if scenario.starts_with("auth/client-credentials") {
        builder = builder.grant(Grant::ClientCredentials);
    }
    builder.build()
}

fn handlers() -> Handlers {
    Handlers::default()
        .on_elicit(false, |params: ElicitRequestParams| async move {
            let ElicitRequestParams::Form(form) = params else {
                return Ok(ElicitResult::new(ElicitAction::Decline));
            };
            // Accept with every field filled: its default (SEP-1034), else a value of its type.
            let schema = serde_json::to_value(&form.requested_schema).unwrap_or(Value::Null);
            let mut content = Map::new();
            if let Some(props) = schema.get("properties").and_then(Value::as_object) {
                for (name, prop) in props {
                    content.insert(name.clone(), value_for(prop));
                }
            }
            let mut result = ElicitResult::new(ElicitAction::Accept);
            result.content = serde_json::from_value(Value::Object(content)).ok();
            Ok(result)
        })
        .on_sample(|_params| async move {
            serde_json::from_value::<CreateMessageResult>(json!({
                "role": "assistant",
                "content": {"type": "text", "text": "This is a response from the conformance client."},
                "model": "mcpkit-conformance",
                "stopReason": "endTurn"
            }))
            .map_err(|e| ErrorObject::internal(e.to_string()))
        })
        .on_roots(false, || async move {
            serde_json::from_value::<ListRootsResult>(json!({"roots": []}))
                .map_err(|e| ErrorObject::internal(e.to_string()))
        })
}
