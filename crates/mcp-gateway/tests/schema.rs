//! `gateway.schema.json`, the JSON Schema of the gateway's TOML, agrees with the parser: the
//! example of docs/GATEWAY.md and valid files pass both; typos and contradictions fail both.

use mcp_gateway::config::{Format, parse};
use mcp_schema::Schema;
use serde_json::Value;

fn schema() -> Schema {
    let text = include_str!("../gateway.schema.json");
    let value: Value = serde_json::from_str(text).expect("the schema is JSON");
    Schema::compile(&value).expect("the schema compiles")
}

fn as_json(toml_text: &str) -> Value {
    toml::from_str(toml_text).expect("TOML")
}

fn env(name: &str) -> Option<String> {
    Some(format!("value-of-{name}"))
}

/// The ```toml block of docs/GATEWAY.md.
fn documented_example() -> String {
    let guide = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/GATEWAY.md"));
    let start = guide.find("```toml\n").expect("a TOML example in docs/GATEWAY.md") + "```toml\n".len();
    let end = start + guide[start..].find("```").expect("the end of the example");
    guide[start..end].to_owned()
}

#[test]
fn the_documented_example_passes_the_schema_and_the_parser() {
    let example = documented_example();
    let schema = schema();
    if let Err(e) = schema.validate(&as_json(&example)) {
        panic!("the schema refuses docs/GATEWAY.md's example: {e}\n{example}");
    }
    let config = parse(&example, Format::Toml, &env).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(config.upstreams.len(), 2);
}

#[test]
fn what_the_parser_refuses_the_schema_refuses() {
    let schema = schema();
    for bad in [
        "[gateway]\nnameing = \"always\"\n",
        "[gateway]\nnaming = \"sometimes\"\n",
        "[servers.x]\ncommand = \"a\"\nurl = \"http://h/mcp\"\n",
        "[servers.x]\nargs = [\"a\"]\n",
        "[servers.x]\nurl = \"ftp://h/mcp\"\n",
        "[servers.x]\ncommand = \"a\"\nmax_concurrency = 0\n",
        "[servers.x]\ncommand = \"a\"\nstart = \"later\"\n",
        "[servers.x]\ncommand = \"a\"\nbreaker_cooldown_ms = 0\n",
        "[servers.x]\ncommand = \"a\"\nbreaker_failures = -1\n",
        "[servers.x]\ncommand = \"a\"\ncredentials = \"passthrough\"\n",
        "[servers.x]\nurl = \"http://h/mcp\"\ncredentials = \"token-exchange\"\nclient_id = \"g\"\n",
        "[servers.x]\nurl = \"http://h/mcp\"\nclient_id = \"g\"\n",
        "[servers.x]\nurl = \"http://h/mcp\"\naudience = \"g\"\n",
        "[servers.x]\nurl = \"http://h/mcp\"\ncredentials = \"forward\"\n",
        "[gateway]\nrate_limit_per_minute = 0\n",
        "[gateway]\napprove_destructive = \"yes\"\n",
        "[servers.\"bad name\"]\ncommand = \"a\"\n",
        "[server.x]\ncommand = \"a\"\n",
    ] {
        assert!(schema.validate(&as_json(bad)).is_err(), "the schema accepts:\n{bad}");
        assert!(parse(bad, Format::Toml, &env).is_err(), "the parser accepts:\n{bad}");
    }
    for good in [
        "",
        "[gateway]\nsession_key_file = \"k\"\n",
        "[servers.x]\nurl = \"https://h/mcp\"\ntype = \"sse\"\nheaders = { A = \"b\" }\n",
        "[servers.x]\ncommand = \"a\"\nstart = \"lazy\"\nrename = { a = \"b\" }\nprotocol_version = \"2025-06-18\"\n",
        "[mcpServers.y]\ncommand = \"a\"\n",
        "[servers.x]\ncommand = \"a\"\nbreaker_failures = 0\nbreaker_cooldown_ms = 500\n",
        "[servers.x]\nurl = \"https://h/mcp\"\ncredentials = \"passthrough\"\naudience = \"api://h\"\n",
        "[servers.x]\nurl = \"https://h/mcp\"\ncredentials = \"none\"\n",
        "[servers.x]\nurl = \"https://h/mcp\"\ncredentials = \"token-exchange\"\ntoken_endpoint = \"https://as/t\"\nclient_id = \"gw\"\nclient_secret = \"${env:S}\"\nscope = \"r\"\n",
    ] {
        if let Err(e) = schema.validate(&as_json(good)) {
            panic!("the schema refuses ({e}):\n{good}");
        }
        assert!(parse(good, Format::Toml, &env).is_ok(), "the parser refuses:\n{good}");
    }
}

/// The first ```toml block after `heading` in docs/OPERATIONS.md.
fn operations_example(heading: &str) -> String {
    let guide = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/OPERATIONS.md"));
    let section = &guide[guide.find(heading).expect("the section")..];
    let start = section.find("```toml\n").expect("a TOML example") + "```toml\n".len();
    let end = start + section[start..].find("```").expect("the end of the example");
    section[start..end].to_owned()
}

#[test]
fn the_operations_example_passes_the_schema_and_the_parser() {
    let example = operations_example("## An example");
    if let Err(e) = schema().validate(&as_json(&example)) {
        panic!("the schema refuses docs/OPERATIONS.md's example: {e}\n{example}");
    }
    let config = parse(&example, Format::Toml, &env).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(config.upstreams.len(), 2);
    let settings = &config.settings;
    assert!(settings.approvals.destructive && settings.approvals.exempt.contains("ci-bot"));
    assert!(settings.rate_limit.is_some());
    assert_eq!(settings.policy_file.as_deref(), Some(std::path::Path::new("policy.toml")));
}
