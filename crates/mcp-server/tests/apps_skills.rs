//! MCP Apps and skills on the server: an app's resource and the tool linked to it, the
//! extensions declared, skills listed, looked up and browsed, and a bad definition refused.

mod support;

use mcp_server::{Resources, Server, Skills, Tools};
use mcp_types::extensions::ui::{ResourceUi, ToolUi, Visibility};
use mcp_types::{Resource, Tool};
use serde_json::{Value, json};
use support::*;

async fn time() -> String {
    "noon".into()
}

fn server() -> Server {
    let skill =
        |name: &str| format!("---\nname: {name}\ndescription: About {name}\n---\n# {name}\n").into_bytes();
    Server::builder("apps-skills", "1")
        .tools(
            Tools::new()
                .add_tool(Tool::without_arguments("time").with_ui(ToolUi::new("ui://t/view.html")), time)
                .add_tool(
                    Tool::without_arguments("refresh")
                        .with_ui(ToolUi::new("ui://t/view.html").with_visibility(vec![Visibility::App])),
                    time,
                ),
        )
        .resources(Resources::new().app(
            Resource::new("ui://t/view.html", "view"),
            "<!DOCTYPE html><p>hi</p>",
            ResourceUi { prefers_border: Some(false), ..Default::default() },
        ))
        .skills(
            Skills::new()
                .files(
                    "notes",
                    vec![("SKILL.md".into(), skill("notes")), ("docs/a.md".into(), b"A".to_vec())],
                )
                .files("team/review", vec![("SKILL.md".into(), skill("review"))]),
        )
        .build()
        .unwrap()
}

fn request(method: &str, params: Value) -> Value {
    let mut params = params;
    params["_meta"] = meta(json!({}));
    params
        .as_object()
        .map(|_| json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
        .unwrap()
}

async fn ask(p: &mut Peer, method: &str, params: Value) -> Value {
    p.send(request(method, params)).await;
    p.recv().await
}

#[tokio::test]
async fn an_app_is_a_ui_resource_a_tool_links_to() {
    let mut p = Peer::start(server());
    let caps = ask(&mut p, "server/discover", json!({})).await["result"]["capabilities"].clone();
    assert_eq!(caps["extensions"]["io.modelcontextprotocol/ui"], json!({}));
    assert_eq!(caps["extensions"]["io.modelcontextprotocol/skills"], json!({"directoryRead": true}));
    let tools = ask(&mut p, "tools/list", json!({})).await["result"]["tools"].clone();
    assert_eq!(tools[0]["_meta"]["ui"], json!({"resourceUri": "ui://t/view.html"}));
    assert_eq!(tools[1]["_meta"]["ui"]["visibility"], json!(["app"]));
    let listed = ask(&mut p, "resources/list", json!({})).await["result"]["resources"].clone();
    let view = listed.as_array().unwrap().iter().find(|r| r["uri"] == "ui://t/view.html").unwrap().clone();
    assert_eq!(view["mimeType"], "text/html;profile=mcp-app");
    assert_eq!(view["_meta"]["ui"], json!({"prefersBorder": false}));
    let read = ask(&mut p, "resources/read", json!({"uri": "ui://t/view.html"})).await["result"]["contents"]
        [0]
    .clone();
    assert_eq!(read["mimeType"], "text/html;profile=mcp-app");
    assert_eq!(read["text"], "<!DOCTYPE html><p>hi</p>");
    assert_eq!(read["_meta"]["ui"], json!({"prefersBorder": false}));

    let refused = Server::builder("bad", "1")
        .resources(Resources::new().app(
            Resource::new("https://x/view.html", "v"),
            "<p>",
            ResourceUi::default(),
        ))
        .build()
        .unwrap_err();
    assert!(refused.to_string().contains("ui://"), "{refused}");
}

#[tokio::test]
async fn skills_are_listed_got_and_browsed() {
    let mut p = Peer::start(server());
    let listed = ask(&mut p, "skills/list", json!({})).await["result"].clone();
    let uris: Vec<&str> =
        listed["skills"].as_array().unwrap().iter().map(|s| s["uri"].as_str().unwrap()).collect();
    assert_eq!(uris, ["skill://notes/SKILL.md", "skill://team/review/SKILL.md"]);
    assert!(listed["ttlMs"].is_u64() && listed["cacheScope"].is_string(), "{listed}");
    let notes = &listed["skills"][0];
    assert_eq!(notes["frontmatter"], json!({"name": "notes", "description": "About notes"}));
    assert_eq!(
        notes["resources"][1],
        json!({"uri": "skill://notes/docs/a.md", "digest": mcp_skills_digest(b"A"), "size": 1})
    );

    let got =
        ask(&mut p, "skills/get", json!({"uri": "skill://team/review/SKILL.md"})).await["result"].clone();
    assert_eq!(got["skill"]["frontmatter"]["name"], "review");
    assert!(got.get("nextCursor").is_none());
    let unknown = ask(&mut p, "skills/get", json!({"uri": "skill://team/SKILL.md"})).await;
    assert_eq!(unknown["error"]["code"], -32602);

    let root =
        ask(&mut p, "resources/directory/read", json!({"uri": "skill://notes"})).await["result"].clone();
    let children: Vec<(&str, &str)> = root["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["uri"].as_str().unwrap(), r["mimeType"].as_str().unwrap()))
        .collect();
    assert_eq!(
        children,
        [("skill://notes/SKILL.md", "text/markdown"), ("skill://notes/docs", "inode/directory")]
    );
    let team =
        ask(&mut p, "resources/directory/read", json!({"uri": "skill://team"})).await["result"].clone();
    assert_eq!(team["resources"][0]["uri"], "skill://team/review");
    for not_a_directory in ["skill://notes/SKILL.md", "skill://nowhere", "skill://notes/../notes"] {
        let r = ask(&mut p, "resources/directory/read", json!({"uri": not_a_directory})).await;
        assert_eq!(r["error"]["code"], -32602, "{not_a_directory}");
    }
    let file = ask(&mut p, "resources/read", json!({"uri": "skill://notes/docs/a.md"})).await;
    assert_eq!(file["result"]["contents"][0]["text"], "A");
    assert_eq!(file["result"]["contents"][0]["mimeType"], "text/markdown");

    // A legacy session is served too (the extension is not 2026-07-28's alone).
    let mut legacy = Peer::start(server());
    let init = legacy.initialize(json!({})).await;
    assert_eq!(
        init["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/skills"]["directoryRead"],
        true
    );
    let r = legacy.request(json!(2), "skills/list", json!({})).await;
    assert_eq!(r["result"]["skills"].as_array().unwrap().len(), 2);
}

fn mcp_skills_digest(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = "sha256:".to_owned();
    for b in <sha2::Sha256 as sha2::Digest>::digest(bytes) {
        write!(out, "{b:02x}").unwrap();
    }
    out
}
