//! The validation rules, each with the content of its message.

use super::*;

#[test]
fn names() {
    let e = json_err(r#"{"mcpServers": {"": {"command": "x"}}}"#);
    assert_has(&e, &["<config>", "server ``", "the name is empty"]);
    let e = toml_err("[servers.\"a b\"]\ncommand = \"x\"\n");
    assert_has(&e, &["server `a b`", "ASCII letters, digits"]);
    let e = toml_err("[servers.\"é\"]\ncommand = \"x\"\n");
    assert_has(&e, &["server `é`", "ASCII letters"]);
    let long = "n".repeat(65);
    let e = json_err(&format!(r#"{{"servers": {{"{long}": {{"command": "x"}}}}}}"#));
    assert_has(&e, &[&long, "longer than 64"]);
    let ok = "A-z_09".to_owned() + &"x".repeat(58);
    assert_eq!(json_ok(&format!(r#"{{"servers": {{"{ok}": {{"command": "x"}}}}}}"#)).upstreams[0].name, ok);
}

#[test]
fn duplicate_names() {
    let e = json_err(r#"{"mcpServers": {"a": {"command": "x"}, "a": {"command": "y"}}}"#);
    assert_has(&e, &["server `a`", "defined twice in `mcpServers`"]);
    let e = json_err(r#"{"servers": {"a": {"command": "x"}}, "mcpServers": {"a": {"command": "y"}}}"#);
    assert_has(&e, &["server `a`", "both `servers` and `mcpServers`"]);
    // Case-sensitive: these are two upstreams.
    let c = json_ok(r#"{"mcpServers": {"a": {"command": "x"}, "A": {"command": "y"}}}"#);
    assert_eq!(c.upstreams.len(), 2);
}

#[test]
fn command_and_url() {
    let e = toml_err("[servers.a]\ncommand = \"x\"\nurl = \"https://x/\"\n");
    assert_has(&e, &["server `a`", "both `command` and `url`"]);
    let e = toml_err("[servers.a]\nargs = [\"x\"]\n");
    assert_has(&e, &["server `a`", "neither `command`", "nor `url`"]);
    let e = json_err(r#"{"mcpServers": {"a": {}}}"#);
    assert_has(&e, &["server `a`", "neither"]);
    let e = toml_err("[servers.a]\ncommand = \"\"\n");
    assert_has(&e, &["server `a`", "field `command`", "is empty"]);
}

#[test]
fn type_must_match_members() {
    let e = toml_err("[servers.a]\nurl = \"https://x/\"\ntype = \"stdio\"\n");
    assert_has(&e, &["server `a`", "field `type`", "\"stdio\" but there is no `command`"]);
    let e = toml_err("[servers.a]\ncommand = \"x\"\ntype = \"http\"\n");
    assert_has(&e, &["server `a`", "field `type`", "\"http\" but there is no `url`"]);
    let e = json_err(r#"{"servers": {"a": {"command": "x", "type": "sse"}}}"#);
    assert_has(&e, &["server `a`", "\"sse\" but there is no `url`"]);
    let e = json_err(r#"{"servers": {"a": {"command": "x", "type": "websocket"}}}"#);
    assert_has(&e, &["server `a`", "field `type`", "unknown transport \"websocket\""]);
}

#[test]
fn url_must_be_http() {
    for url in ["ftp://x/", "example.com/mcp", "http://", "ws://x/"] {
        let e = json_err(&format!(r#"{{"mcpServers": {{"a": {{"url": "{url}"}}}}}}"#));
        assert_has(&e, &["server `a`", "field `url`", "not an http:// or https:// URL"]);
    }
    let c = json_ok(r#"{"mcpServers": {"a": {"url": "HTTPS://x/"}}}"#);
    assert!(matches!(c.upstreams[0].transport, Transport::Http { .. }));
}

#[test]
fn numbers() {
    let e = toml_err("[servers.a]\ncommand = \"x\"\nmax_concurrency = 0\n");
    assert_has(&e, &["server `a`", "field `max_concurrency`", "at least 1"]);
    let e = toml_err("[servers.a]\ncommand = \"x\"\nmax_concurrency = -1\n");
    assert_has(&e, &["field `max_concurrency`", "non-negative integer"]);
    for field in ["timeout_ms", "start_timeout_ms"] {
        let e = toml_err(&format!("[servers.a]\ncommand = \"x\"\n{field} = 0\n"));
        assert_has(&e, &["server `a`", &format!("field `{field}`"), "must not be zero"]);
    }
    let e = toml_err("[gateway]\nlist_timeout_ms = 0\n");
    assert_has(&e, &["field `gateway.list_timeout_ms`", "must not be zero"]);
    let e = json_err(r#"{"mcpServers": {"a": {"command": "x", "timeout_ms": 1.5}}}"#);
    assert_has(&e, &["field `timeout_ms`", "expected a non-negative integer, found a number"]);
    let e = json_err(r#"{"mcpServers": {"a": {"command": "x", "timeout_ms": "10"}}}"#);
    assert_has(&e, &["field `timeout_ms`", "found a string"]);
}

#[test]
fn protocol_version() {
    let e = toml_err("[servers.a]\ncommand = \"x\"\nprotocol_version = \"2025-01-01\"\n");
    assert_has(
        &e,
        &["server `a`", "field `protocol_version`", "unknown protocol version \"2025-01-01\"", "2025-06-18"],
    );
    for v in mcp_types::ProtocolVersion::ALL {
        let c = toml_ok(&format!("[servers.a]\ncommand = \"x\"\nprotocol_version = \"{}\"\n", v.as_str()));
        assert_eq!(c.upstreams[0].protocol_version.as_deref(), Some(v.as_str()));
    }
}

#[test]
fn rename_targets() {
    let e = toml_err("[servers.a]\ncommand = \"x\"\nrename = { t = \"\" }\n");
    assert_has(&e, &["server `a`", "field `rename.t`", "new name is empty"]);
    let e = toml_err("[servers.a]\ncommand = \"x\"\nrename = { t1 = \"same\", t2 = \"same\" }\n");
    assert_has(&e, &["server `a`", "field `rename.t2`", "\"same\" is already the new name of \"t1\""]);
    let e = toml_err("[servers.a]\ncommand = \"x\"\nrename = { t1 = 3 }\n");
    assert_has(&e, &["field `rename.t1`", "expected a string"]);
    // The same target in two upstreams is fine here (the router decides).
    let c = toml_ok(
        "[servers.a]\ncommand = \"x\"\nrename = { t = \"n\" }\n[servers.b]\ncommand = \"y\"\nrename = { t = \"n\" }\n",
    );
    assert_eq!(c.upstreams.len(), 2);
}

#[test]
fn naming_and_start_values() {
    let e = toml_err("[servers.a]\ncommand = \"x\"\nnaming = \"sometimes\"\n");
    assert_has(&e, &["server `a`", "field `naming`", "unknown value \"sometimes\"", "when-ambiguous"]);
    let e = toml_err("[gateway]\nnaming = \"whenAmbiguous\"\n");
    assert_has(&e, &["field `gateway.naming`", "unknown value"]);
    let e = toml_err("[servers.a]\ncommand = \"x\"\nstart = \"later\"\n");
    assert_has(&e, &["server `a`", "field `start`", "unknown value \"later\" (eager, lazy)"]);
    let c = toml_ok("[servers.a]\ncommand = \"x\"\nstart = \"eager\"\nnaming = \"when-ambiguous\"\n");
    assert_eq!((c.upstreams[0].start, c.upstreams[0].naming), (Start::Eager, Some(Naming::WhenAmbiguous)));
}

#[test]
fn gateway_table_denies_unknown_keys() {
    let e = toml_err("[gateway]\nseperator = \"__\"\n");
    assert_has(&e, &["<config>", "field `gateway.seperator`", "unknown key", "separator"]);
    let e = json_err(r#"{"gateway": {"list_timeout": 5}}"#);
    assert_has(&e, &["field `gateway.list_timeout`", "unknown key"]);
    let e = toml_err("[gateway]\nseparator = \"\"\n");
    assert_has(&e, &["field `gateway.separator`", "must not be empty"]);
    let e = json_err(r#"{"gateway": []}"#);
    assert_has(&e, &["field `gateway`", "must be a table/object"]);
    // The gateway's own TOML also refuses unknown top-level keys; JSON files hold other tools' keys.
    let e = toml_err("[server.a]\ncommand = \"x\"\n");
    assert_has(&e, &["field `server`", "unknown key"]);
}

#[test]
fn server_entries_ignore_unknown_keys_but_check_known_types() {
    let c = toml_ok("[servers.a]\ncommand = \"x\"\nfuture_option = { deep = true }\n");
    assert_eq!(c.upstreams[0].transport, stdio("x", &[]));
    let cases: [(&str, &str, &str); 13] = [
        (r#""command": ["x"]"#, "command", "expected a string, found an array"),
        (r#""command": "x", "args": "a b""#, "args", "expected an array of strings, found a string"),
        (r#""command": "x", "args": ["a", 2]"#, "args[1]", "expected a string, found an integer"),
        (r#""command": "x", "env": ["A=1"]"#, "env", "expected a table/object of strings"),
        (r#""command": "x", "env": {"A": 1}"#, "env.A", "expected a string, found an integer"),
        (r#""command": "x", "cwd": false"#, "cwd", "expected a string, found a boolean"),
        (r#""command": "x", "disabled": "yes""#, "disabled", "expected a boolean"),
        (r#""url": "https://x/", "headers": {"A": true}"#, "headers.A", "expected a string"),
        (r#""url": 5"#, "url", "expected a string, found an integer"),
        (r#""command": "x", "prefix": 1"#, "prefix", "expected a string"),
        (r#""command": "x", "rename": "a""#, "rename", "expected a table/object of strings"),
        (r#""command": "x", "type": 1"#, "type", "expected a string"),
        (r#""command": "x", "envFile": []"#, "envFile", "expected a string, found an array"),
    ];
    for (members, field, message) in cases {
        let e = json_err(&format!(r#"{{"mcpServers": {{"a": {{{members}}}}}}}"#));
        assert_has(&e, &["<config>", "server `a`", &format!("field `{field}`"), message]);
    }
    // A known member on the other transport's side is still type-checked, and otherwise ignored.
    let e = json_err(r#"{"mcpServers": {"a": {"url": "https://x/", "args": 1}}}"#);
    assert_has(&e, &["field `args`"]);
    let c = json_ok(r#"{"mcpServers": {"a": {"url": "https://x/", "args": ["ignored"]}}}"#);
    assert!(matches!(c.upstreams[0].transport, Transport::Http { .. }));
    // A member given twice in JSON, an entry that is not an object.
    let e = json_err(r#"{"mcpServers": {"a": {"command": "x", "command": "y"}}}"#);
    assert_has(&e, &["server `a`", "field `command`", "given twice"]);
    let e = json_err(r#"{"mcpServers": {"a": "npx server"}}"#);
    assert_has(&e, &["server `a`", "must be a table/object, found a string"]);
    let e = json_err(r#"{"mcpServers": []}"#);
    assert_has(&e, &["field `mcpServers`", "found an array"]);
}

#[test]
fn null_members_count_as_absent() {
    let c = json_ok(r#"{"mcpServers": {"a": {"command": "x", "cwd": null, "url": null, "env": null}}}"#);
    assert_eq!(c.upstreams[0].transport, stdio("x", &[]));
}

#[test]
fn disabled_entries_are_not_validated_beyond_their_name() {
    let c = json_ok(r#"{"mcpServers": {"a": {"disabled": true, "url": "ftp://x", "command": "${UNSET}"}}}"#);
    assert!(c.upstreams.is_empty());
    let e = json_err(r#"{"mcpServers": {"a b": {"disabled": true}}}"#);
    assert_has(&e, &["server `a b`"]);
}

#[test]
fn prefix_rules() {
    let e = toml_err("[servers.a]\ncommand = \"x\"\nprefix = \"\"\n");
    assert_has(&e, &["server `a`", "field `prefix`", "non-empty"]);
    let e = toml_err("[servers.a]\ncommand = \"x\"\nprefix = \"a b\"\n");
    assert_has(&e, &["field `prefix`"]);
}

#[test]
fn inputs_are_type_checked() {
    let e = json_err(r#"{"inputs": {"id": "x"}}"#);
    assert_has(&e, &["field `inputs`", "expected an array"]);
    let e = json_err(r#"{"inputs": [{"type": "promptString"}]}"#);
    assert_has(&e, &["field `inputs[0].id`", "every input needs an \"id\""]);
    let e = json_err(r#"{"inputs": [{"id": "a"}, {"id": "b", "default": 3}]}"#);
    assert_has(&e, &["field `inputs[1].default`", "expected a string"]);
    let e = json_err(r#"{"inputs": [{"id": "a", "password": "no"}]}"#);
    assert_has(&e, &["field `inputs[0].password`", "expected a boolean"]);
    let e = json_err(r#"{"inputs": ["a"]}"#);
    assert_has(&e, &["field `inputs[0]`", "an input must be a table/object"]);
}

#[test]
fn errors_expose_their_location() {
    let e =
        parse("[servers.a]\ncommand = \"x\"\nmax_concurrency = 0\n", Format::Toml, &env_of(&[])).unwrap_err();
    let at = e.location().unwrap();
    assert_eq!(at.file, "<config>");
    assert_eq!(at.upstream.as_deref(), Some("a"));
    assert_eq!(at.field.as_deref(), Some("max_concurrency"));
}

#[test]
fn sharing() {
    let e = toml_err("[servers.a]\ncommand = \"x\"\nsharing = \"per-client\"\n");
    assert_has(&e, &["server `a`", "field `sharing`", "unknown value \"per-client\"", "shared, per-session"]);
    let e = toml_err("[servers.a]\nurl = \"https://x/\"\nsharing = \"per-session\"\n");
    assert_has(&e, &["server `a`", "field `sharing`", "for stdio upstreams"]);
    let e = json_err(r#"{"mcpServers": {"a": {"command": "x", "sharing": 1}}}"#);
    assert_has(&e, &["server `a`", "sharing"]);
    let c = toml_ok("[servers.a]\ncommand = \"x\"\nsharing = \"per-session\"\n");
    assert_eq!(c.upstreams[0].sharing, Sharing::PerSession);
}

#[test]
fn inherit_env() {
    let e = toml_err("[servers.a]\nurl = \"https://x/\"\ninherit_env = true\n");
    assert_has(&e, &["server `a`", "field `inherit_env`", "for stdio upstreams"]);
    let e = toml_err("[servers.a]\ncommand = \"x\"\ninherit_env = \"yes\"\n");
    assert_has(&e, &["server `a`", "inherit_env"]);
    assert!(!toml_ok("[servers.a]\ncommand = \"x\"\n").upstreams[0].inherit_env, "minimal by default");
}
