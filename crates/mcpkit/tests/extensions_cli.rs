//! The extensions from the shell, against `mcpkit serve` and through `mcpkit gateway` in front
//! of two of them: an app-bearing tool (MCP Apps) listed, described and its HTML saved; skills
//! listed, looked up, loaded (verified) and browsed, a skill path both upstreams serve
//! namespaced for the second; a task followed through the gateway; each upstream's own
//! endpoint (`/mcp/{upstream}`) serving its app under its own names.

mod gateway_support;
mod support;

use gateway_support::{Dir, json, quoted, through_stdio};
use support::{BIN, run as mcpkit};

fn skills_dir() -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/skills")
        .to_str()
        .unwrap()
        .to_owned()
}

/// `mcpkit <args> -- mcpkit serve --stdio --skills DIR`.
fn direct(args: &[&str]) -> (i32, String, String) {
    let dir = skills_dir();
    let mut all = args.to_vec();
    all.extend(["--", BIN, "serve", "--stdio", "--skills", &dir]);
    mcpkit(&all)
}

/// A gateway config: `a` and `b`, both `mcpkit serve --stdio --skills DIR`.
fn two_upstreams(dir: &Dir) -> std::path::PathBuf {
    let upstream = |name: &str| {
        format!(
            "[servers.{name}]\ncommand = {}\nargs = [\"serve\", \"--stdio\", \"--skills\", {}]\n",
            quoted(BIN),
            quoted(&skills_dir())
        )
    };
    dir.write_config(&[upstream("a"), upstream("b")].concat())
}

fn assert_app(run: impl Fn(&[&str]) -> (i32, String, String), tool: &str, uri: &str, what: &str) {
    let (code, out, err) = run(&["list", "tools"]);
    assert_eq!(code, 0, "{what}: {err}");
    let tools = json(&out)["tools"].as_array().unwrap().clone();
    let clock =
        tools.iter().find(|t| t["name"] == tool).unwrap_or_else(|| panic!("{what}: no {tool}: {out}"));
    assert_eq!(clock["_meta"]["ui"]["resourceUri"], uri, "{what}");

    let saved =
        std::env::temp_dir().join(format!("mcpkit-apps-{}-{}", std::process::id(), tool.replace('_', "-")));
    let _ = std::fs::remove_dir_all(&saved);
    let (code, out, err) = run(&["app", tool, "--save", saved.to_str().unwrap()]);
    assert_eq!(code, 0, "{what}: {err}");
    assert_eq!(json(&out)["uri"], uri, "{what}: {out}");
    assert_eq!(json(&out)["ui"]["prefersBorder"], true, "{what}: {out}");
    let html = std::fs::read_to_string(saved.join("clock.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.contains("ui/notifications/tool-result"), "{what}");
    assert!(err.contains("saved "), "{what}: {err}");
    let _ = std::fs::remove_dir_all(&saved);

    let (code, _, err) = run(&["app", "echo"]);
    assert_eq!(code, 5, "{what}: a tool without an app: {err}");
}

#[test]
fn an_app_is_listed_and_saved_directly_and_through_the_gateway() {
    assert_app(direct, "clock", "ui://mcpkit-demo/clock.html", "direct");
    let dir = Dir::new("apps");
    let config = two_upstreams(&dir);
    let gateway = |args: &[&str]| through_stdio(&config, args, None);
    // Both upstreams have `clock`: each is prefixed, and b's app (the same URI as a's) is
    // namespaced.
    assert_app(gateway, "a__clock", "ui://mcpkit-demo/clock.html", "gateway, a");
    assert_app(gateway, "b__clock", "ui://b+mcpkit-demo/clock.html", "gateway, b");
    // An app calls its tools by the names its server gave them: both apps call `clock`, so the
    // gateway's endpoint cannot tell which app calls and refuses the name (it never guesses)...
    let (code, _, err) = gateway(&["call", "clock"]);
    assert_ne!(code, 0, "an ambiguous app tool name is refused");
    assert!(err.contains("Unknown tool"), "{err}");
    let (code, out, _) = gateway(&["list", "tools"]);
    assert_eq!(code, 0);
    assert!(
        !json(&out)["tools"].as_array().unwrap().iter().any(|t| t["name"] == "clock"),
        "not listed: {out}"
    );
    // ...and over HTTP each upstream's own endpoint serves its app under its own names and
    // URIs, where `clock` is the app's own tool.
    let served = gateway_support::gateway_http(&config);
    let own_b = format!("{}/b", served.url());
    let through_b = |args: &[&str]| gateway_support::through_url(&own_b, args);
    assert_app(through_b, "clock", "ui://mcpkit-demo/clock.html", "b's own endpoint");
    let (code, out, err) = through_b(&["call", "clock"]);
    assert_eq!(code, 0, "{err}");
    assert!(json(&out)["content"][0]["text"].as_str().unwrap().starts_with("It is "), "{out}");
    let (code, _, err) =
        gateway_support::through_url(&format!("{}/nobody", served.url()), &["list", "tools"]);
    assert_ne!(code, 0, "no such upstream: {err}");
}

#[test]
fn skills_are_listed_loaded_and_browsed_directly_and_through_the_gateway() {
    let (code, out, err) = direct(&["list", "skills"]);
    assert_eq!(code, 0, "{err}");
    let uris: Vec<String> = json(&out)["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["uri"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(uris, ["skill://acme/billing/refunds/SKILL.md", "skill://pdf-processing/SKILL.md"]);

    let dir = Dir::new("skills");
    let config = two_upstreams(&dir);
    let gateway = |args: &[&str]| through_stdio(&config, args, None);
    let (code, out, err) = gateway(&["list", "skills"]);
    assert_eq!(code, 0, "{err}");
    let listed = json(&out)["skills"].as_array().unwrap().clone();
    let uris: Vec<&str> = listed.iter().map(|s| s["uri"].as_str().unwrap()).collect();
    assert_eq!(
        uris,
        [
            "skill://acme/billing/refunds/SKILL.md",
            "skill://pdf-processing/SKILL.md",
            "b+skill://acme/billing/refunds/SKILL.md",
            "b+skill://pdf-processing/SKILL.md"
        ],
        "the second upstream's skills at the same paths are namespaced"
    );
    let b_files: Vec<&str> =
        listed[3]["resources"].as_array().unwrap().iter().map(|f| f["uri"].as_str().unwrap()).collect();
    assert!(b_files.iter().all(|f| f.starts_with("b+skill://pdf-processing/")), "{b_files:?}");

    for (run, uri, what) in [
        (&direct as &dyn Fn(&[&str]) -> (i32, String, String), "skill://pdf-processing/SKILL.md", "direct"),
        (&gateway, "skill://pdf-processing/SKILL.md", "gateway, a"),
        (&gateway, "b+skill://pdf-processing/SKILL.md", "gateway, b"),
    ] {
        let (code, out, err) = run(&["skill", "get", uri]);
        assert_eq!(code, 0, "{what}: {err}");
        let entry = json(&out);
        assert_eq!(entry["uri"], uri, "{what}");
        assert_eq!(entry["frontmatter"]["name"], "pdf-processing", "{what}");
        let (code, out, err) = run(&["skill", "load", uri]);
        assert_eq!(code, 0, "{what}: {err}");
        assert!(json(&out)["text"].as_str().unwrap().contains("# PDF processing"), "{what}: {out}");
        let root = uri.strip_suffix("/SKILL.md").unwrap();
        let (code, out, err) = run(&["skill", "dir", root]);
        assert_eq!(code, 0, "{what}: {err}");
        let children: Vec<String> = json(&out)["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["uri"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            children,
            [format!("{root}/SKILL.md"), format!("{root}/references"), format!("{root}/scripts")],
            "{what}"
        );
        let (code, out, err) = run(&["read", &format!("{root}/references/FORMS.md")]);
        assert_eq!(code, 0, "{what}: {err}");
        assert!(out.contains("conformance form"), "{what}: {out}");
        let (code, _, err) = run(&["skill", "get", &format!("{root}/nothing/SKILL.md")]);
        assert_eq!(code, 5, "{what}: {err}");
    }
}

#[test]
fn a_task_is_followed_through_the_gateway() {
    let dir = Dir::new("tasks");
    let config = two_upstreams(&dir);
    let (code, out, err) =
        through_stdio(&config, &["call", "a__report", "--arg", "seconds=1", "--progress"], None);
    assert_eq!(code, 0, "{err}");
    assert!(
        json(&out)["content"][0]["text"].as_str().unwrap().starts_with("Report after 1 s (task "),
        "{out}"
    );
    assert!(err.contains(": working") && err.contains(": completed"), "{err}");
}
