//! `${...}` expansion, inputs, `${workspaceFolder}` and env files.

use super::*;
use crate::config::expand::parse_env_file;

/// The args of the single stdio server `a` whose one argument is `arg`.
fn expand_arg(arg: &str, env: &[(&str, &str)]) -> Result<String, ConfigError> {
    let text = format!(r#"{{"mcpServers": {{"a": {{"command": "x", "args": [{arg:?}]}}}}}}"#);
    let config = parse(&text, Format::Json, &env_of(env))?;
    match &config.upstreams[0].transport {
        Transport::Stdio { args, .. } => Ok(args[0].clone()),
        other => panic!("{other:?}"),
    }
}

#[test]
fn set_variables() {
    let env = [("HOME", "/users/me"), ("X", "1")];
    assert_eq!(expand_arg("${HOME}/data", &env).unwrap(), "/users/me/data");
    assert_eq!(expand_arg("${env:HOME}", &env).unwrap(), "/users/me");
    assert_eq!(expand_arg("a${X}b${X}c", &env).unwrap(), "a1b1c");
    assert_eq!(expand_arg("${X:-default}", &env).unwrap(), "1");
    assert_eq!(expand_arg("${env:X:-d}", &env).unwrap(), "1");
    assert_eq!(expand_arg("no variables", &env).unwrap(), "no variables");
}

#[test]
fn defaults() {
    assert_eq!(expand_arg("${NOPE:-fallback}", &[]).unwrap(), "fallback");
    assert_eq!(expand_arg("${NOPE:-}", &[]).unwrap(), "");
    assert_eq!(expand_arg("${NOPE:-a:b/c}", &[]).unwrap(), "a:b/c");
    assert_eq!(expand_arg("${EMPTY:-used}", &[("EMPTY", "")]).unwrap(), "used", "as in the shell");
    assert_eq!(expand_arg("${EMPTY}", &[("EMPTY", "")]).unwrap(), "");
}

#[test]
fn dollars() {
    assert_eq!(expand_arg("$$", &[]).unwrap(), "$");
    assert_eq!(expand_arg("$${HOME}", &[]).unwrap(), "${HOME}");
    assert_eq!(expand_arg("cost: 5$", &[]).unwrap(), "cost: 5$");
    assert_eq!(expand_arg("$HOME", &[]).unwrap(), "$HOME", "only ${{...}} is expanded");
    assert_eq!(expand_arg("$$$$", &[]).unwrap(), "$$");
}

#[test]
fn unset_variable_is_an_error_naming_it() {
    let e = expand_arg("--token=${TOKEN}", &[]).unwrap_err();
    assert!(matches!(&e, ConfigError::UnsetVariable { name, .. } if name == "TOKEN"));
    assert_has(&e.to_string(), &["<config>", "server `a`", "field `args[0]`", "`TOKEN` is not set"]);
    let e = expand_arg("${env:TOKEN}", &[]).unwrap_err();
    assert_has(&e.to_string(), &["`TOKEN` is not set"]);
}

#[test]
fn every_field_is_expanded_and_named_in_errors() {
    let env = env_of(&[("V", "v")]);
    let c = parse(
        r#"
        [servers.s]
        command = "${V}-cmd"
        args = ["${V}"]
        env = { K = "${V}" }
        cwd = "/${V}"
        [servers.h]
        url = "https://${V}.example/mcp"
        headers = { H = "x ${V}" }
        "#,
        Format::Toml,
        &env,
    )
    .unwrap();
    assert_eq!(
        c.upstreams[0].transport,
        Transport::Stdio {
            command: "v-cmd".into(),
            args: vec!["v".into()],
            env: map(&[("K", "v")]),
            cwd: Some("/v".into())
        }
    );
    assert_eq!(
        c.upstreams[1].transport,
        Transport::Http { url: "https://v.example/mcp".into(), headers: map(&[("H", "x v")]) }
    );
    let cases = [
        ("command = \"${U}\"", "command"),
        ("command = \"x\"\nenv = { K = \"${U}\" }", "env.K"),
        ("command = \"x\"\ncwd = \"${U}\"", "cwd"),
        ("url = \"${U}\"", "url"),
        ("url = \"https://x/\"\nheaders = { Authorization = \"Bearer ${U}\" }", "headers.Authorization"),
    ];
    for (body, field) in cases {
        let e = toml_err(&format!("[servers.up]\n{body}\n"));
        assert_has(&e, &["server `up`", &format!("field `{field}`"), "`U` is not set"]);
    }
}

#[test]
fn malformed_references() {
    let e = expand_arg("${HOME", &[("HOME", "h")]).unwrap_err();
    assert_has(&e.to_string(), &["field `args[0]`", "unterminated `${`"]);
    let e = expand_arg("${}", &[]).unwrap_err();
    assert_has(&e.to_string(), &["not a valid variable reference"]);
    let e = expand_arg("${input:}", &[]).unwrap_err();
    assert_has(&e.to_string(), &["names no input"]);
}

#[test]
fn inputs() {
    let text = r#"{
      "inputs": [{"id": "region", "type": "promptString", "default": "eu"},
                 {"id": "api-key", "type": "promptString", "password": true}],
      "servers": {"a": {"command": "x", "args": ["${input:region}", "${input:api-key}"]}}
    }"#;
    // The default wins over the environment.
    let env = env_of(&[("MCPKIT_INPUT_API_KEY", "k"), ("MCPKIT_INPUT_REGION", "us")]);
    let c = parse(text, Format::Json, &env).unwrap();
    assert_eq!(c.upstreams[0].transport, stdio("x", &["eu", "k"]));

    // Without a default or variable: an error saying how to give one.
    let e = parse(text, Format::Json, &env_of(&[])).unwrap_err();
    assert!(
        matches!(&e, ConfigError::UnresolvedInput { id, env_var, .. } if id == "api-key" && env_var == "MCPKIT_INPUT_API_KEY")
    );
    assert_has(
        &e.to_string(),
        &[
            "<config>",
            "server `a`",
            "field `args[1]`",
            "input `api-key`",
            "\"default\"",
            "MCPKIT_INPUT_API_KEY",
        ],
    );

    // An input not declared in "inputs" still comes from the environment.
    assert_eq!(expand_arg("${input:my.token}", &[("MCPKIT_INPUT_MY_TOKEN", "t")]).unwrap(), "t");
    assert_eq!(input_env_var("a-b.c9"), "MCPKIT_INPUT_A_B_C9");
}

#[test]
fn workspace_folder() {
    let e = expand_arg("${workspaceFolder}/x", &[("workspaceFolder", "no")]).unwrap_err();
    assert_has(&e.to_string(), &["server `a`", "field `args[0]`", "`${workspaceFolder}` needs"]);
    let text = r#"{"servers": {"a": {"command": "x", "args": ["${workspaceFolder}"]}}}"#;
    let at = |dir: &str| {
        let c = parse_at(text, Format::Json, Some(std::path::Path::new(dir)), &env_of(&[])).unwrap();
        let Transport::Stdio { args, .. } = &c.upstreams[0].transport else { panic!() };
        args[0].clone()
    };
    assert_eq!(at("/proj/.vscode"), "/proj");
    assert_eq!(at("/proj"), "/proj");
    assert_eq!(at(".vscode"), ".");
}

#[test]
fn env_file_lines() {
    let text = "# comment\n\nA=1\n  B = \"two words\" \nC='x=y'\nexport D=4\nE=\nF=\"unbalanced\n";
    let pairs = parse_env_file(text).unwrap();
    let expected =
        [("A", "1"), ("B", "two words"), ("C", "x=y"), ("D", "4"), ("E", ""), ("F", "\"unbalanced")];
    let expected: Vec<(String, String)> =
        expected.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    assert_eq!(pairs, expected);
    assert_eq!(parse_env_file("A=1\nnonsense\n").unwrap_err(), "line 2: expected KEY=VALUE");
    assert_eq!(parse_env_file("=1\n").unwrap_err(), "line 1: the key is empty");
}

#[test]
fn env_file_needs_a_directory_or_an_absolute_path() {
    let text = r#"{"servers": {"a": {"command": "x", "envFile": ".env"}}}"#;
    let e = json_err(text);
    assert_has(&e, &["<config>", "server `a`", "field `envFile`", "needs the configuration's directory"]);

    let dir = temp_dir("envfile");
    std::fs::write(dir.join(".env"), "A=from-file\nB=b\n").unwrap();
    let c = parse_at(text, Format::Json, Some(&dir), &env_of(&[])).unwrap();
    let Transport::Stdio { env, .. } = &c.upstreams[0].transport else { panic!() };
    assert_eq!(env, &map(&[("A", "from-file"), ("B", "b")]));

    // Absolute: no directory needed; the entry's env wins over the file.
    let abs = dir.join(".env").display().to_string();
    let text =
        format!(r#"{{"servers": {{"a": {{"command": "x", "envFile": {abs:?}, "env": {{"A": "env"}}}}}}}}"#);
    let c = json_ok(&text);
    let Transport::Stdio { env, .. } = &c.upstreams[0].transport else { panic!() };
    assert_eq!(env, &map(&[("A", "env"), ("B", "b")]));

    // Missing or malformed file: an error naming the upstream, the field and the file.
    let e = parse_at(
        r#"{"servers": {"a": {"command": "x", "envFile": "nope.env"}}}"#,
        Format::Json,
        Some(&dir),
        &env_of(&[]),
    )
    .unwrap_err();
    assert!(matches!(e, ConfigError::EnvFile { .. }));
    assert_has(&e.to_string(), &["server `a`", "field `envFile`", "nope.env"]);
    std::fs::write(dir.join("bad.env"), "ok=1\nbad line\n").unwrap();
    let e = parse_at(
        r#"{"servers": {"a": {"command": "x", "envFile": "bad.env"}}}"#,
        Format::Json,
        Some(&dir),
        &env_of(&[]),
    )
    .unwrap_err();
    assert_has(&e.to_string(), &["bad.env", "line 2: expected KEY=VALUE"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn load_threads_the_file_directory() {
    let dir = temp_dir("load-vscode");
    let vscode = dir.join(".vscode");
    std::fs::create_dir_all(&vscode).unwrap();
    std::fs::write(vscode.join("a.env"), "A=1\n").unwrap();
    let text = r#"{"servers": {"a": {"command": "x", "args": ["${workspaceFolder}"], "envFile": "a.env"}}}"#;
    std::fs::write(vscode.join("mcp.json"), text).unwrap();
    let c = load(&vscode.join("mcp.json")).unwrap_or_else(|e| panic!("{e}"));
    let Transport::Stdio { args, env, .. } = &c.upstreams[0].transport else { panic!() };
    assert_eq!(args, &[dir.display().to_string()]);
    assert_eq!(env, &map(&[("A", "1")]));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The server `parse_server` found, or a panic saying what it found instead.
fn found(lookup: Result<Lookup, ConfigError>) -> UpstreamConfig {
    match lookup {
        Ok(Lookup::Found(upstream)) => *upstream,
        other => panic!("{other:?}"),
    }
}

#[test]
fn one_server_is_read_alone_and_its_inputs_are_asked_once() {
    let text = r#"{
      "inputs": [{"id": "region", "type": "pickString", "options": ["eu", {"label": "US", "value": "us"}], "default": "eu"},
                 {"id": "key", "type": "promptString", "description": "API key", "password": true}],
      "servers": {
        "a": {"command": "x", "args": ["${input:region}", "${input:key}", "${input:key}"]},
        "broken": {"command": 5, "args": ["${UNSET}"]},
        "off": {"command": "x", "disabled": true}
      },
      "mcpServers": {"b": {"url": "http://h/mcp", "headers": {"K": "${input:key}"}}}
    }"#;
    let asked = std::cell::RefCell::new(Vec::new());
    let ask = |input: &Input| {
        asked.borrow_mut().push(input.clone());
        Ok(Some(format!("typed-{}", input.id)))
    };
    // Asked: the environment does not give it; each input once, with what VS Code shows.
    let a = found(parse_server(text, Format::Json, &env_of(&[]), "a", &ask));
    assert_eq!(a.transport, stdio("x", &["typed-region", "typed-key", "typed-key"]));
    let asked = asked.into_inner();
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert_eq!(asked[0].options, ["eu", "us"]);
    assert_eq!(asked[0].default.as_deref(), Some("eu"));
    assert_eq!((asked[1].description.as_deref(), asked[1].password), (Some("API key"), true));

    // The environment comes first; nobody to ask: the default, else an error naming the variable.
    let nobody = |_: &Input| Ok(None);
    let env = env_of(&[("MCPKIT_INPUT_KEY", "from-env")]);
    let a = found(parse_server(text, Format::Json, &env, "a", &nobody));
    assert_eq!(a.transport, stdio("x", &["eu", "from-env", "from-env"]));
    let e = parse_server(text, Format::Json, &env_of(&[]), "b", &nobody).unwrap_err();
    assert_has(&e.to_string(), &["server `b`", "field `headers.K`", "input `key`", "MCPKIT_INPUT_KEY"]);
    // A person who gives up: an error, nothing sent.
    let refuse = |_: &Input| Err("no answer (end of input)".to_owned());
    let e = parse_server(text, Format::Json, &env_of(&[]), "b", &refuse).unwrap_err();
    assert_has(&e.to_string(), &["field `headers.K`", "input `key`: no answer"]);

    // Disabled, missing (with the names there are), and a malformed entry when it is the one.
    assert!(matches!(parse_server(text, Format::Json, &env_of(&[]), "off", &nobody), Ok(Lookup::Disabled)));
    match parse_server(text, Format::Json, &env_of(&[]), "zz", &nobody) {
        Ok(Lookup::Missing { names }) => assert_eq!(names, ["a", "broken", "off", "b"]),
        other => panic!("{other:?}"),
    }
    let e = parse_server(text, Format::Json, &env_of(&[]), "broken", &nobody).unwrap_err();
    assert_has(&e.to_string(), &["server `broken`", "field `command`", "expected a string"]);
    // The gateway's order is unchanged: the default before the environment.
    let env = env_of(&[("MCPKIT_INPUT_REGION", "us"), ("MCPKIT_INPUT_KEY", "k"), ("UNSET", "u")]);
    let text = text.replace(r#""command": 5"#, r#""command": "y""#);
    let all = parse(&text, Format::Json, &env).unwrap();
    assert_eq!(all.upstreams[0].transport, stdio("x", &["eu", "k", "k"]));
}
