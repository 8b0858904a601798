//! Golden wire transcripts, replayed over an in-memory pipe.
//!
//! Each `tests/transcripts/*.jsonl` file is a conversation: `> ` lines are sent to the server,
//! `< ` lines are what it must answer, in order, compared as JSON values. The string
//! `"<any>"` matches any value (request states, which are random). `# ` lines are comments.
//! Every message the server sends is also validated against the schema of the transcript's
//! revision (named in its first line: `# revision: 2026-07-28`).

mod support;

use std::path::Path;

use mcp_server::{Args, Completions, Json, Prompts, Resources, Server, Tools, UriVars};
use mcp_types::{Resource, ResourceTemplate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// Text to echo.
    text: String,
}

async fn echo(Args(EchoArgs { text }): Args<EchoArgs>) -> String {
    text
}

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

#[derive(Serialize, JsonSchema)]
struct Sum {
    sum: i64,
}

async fn add(Args(AddArgs { a, b }): Args<AddArgs>) -> Json<Sum> {
    Json(Sum { sum: a + b })
}

#[derive(Deserialize, JsonSchema)]
struct GreetArgs {
    /// Who to greet.
    name: String,
}

async fn greet(Args(GreetArgs { name }): Args<GreetArgs>) -> String {
    format!("Please greet {name}.")
}

async fn item(vars: UriVars) -> String {
    format!("item {}", vars.get("id").unwrap_or_default())
}

fn server() -> Server {
    Server::builder("golden", "1.0.0")
        .instructions("Golden transcript server")
        .tools(Tools::new().add("echo", "Echo text", echo).add("add", "Add integers", add))
        .resources(
            Resources::new()
                .text(Resource::new("test://hello", "hello").with_mime_type("text/plain"), "Hello, world")
                .template(
                    ResourceTemplate::new("test://items/{id}", "item").with_mime_type("text/plain"),
                    item,
                ),
        )
        .prompts(Prompts::new().add("greet", "Greet someone", greet))
        .completions(Completions::new().prompt_argument(
            "greet",
            "name",
            Completions::from_list(&["Ada", "Alan", "Grace"]),
        ))
        .build()
        .unwrap()
}

fn matches(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::String(s), _) if s == "<any>" => true,
        (Value::Object(e), Value::Object(a)) => {
            e.len() == a.len() && e.iter().all(|(k, v)| a.get(k).is_some_and(|w| matches(v, w)))
        }
        (Value::Array(e), Value::Array(a)) => {
            e.len() == a.len() && e.iter().zip(a).all(|(x, y)| matches(x, y))
        }
        _ => expected == actual,
    }
}

async fn replay(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap();
    let revision = text
        .lines()
        .find_map(|l| l.strip_prefix("# revision: "))
        .unwrap_or_else(|| panic!("{}: no `# revision:` line", path.display()))
        .trim()
        .to_owned();
    let mut peer = support::Peer::start(server());
    peer.revision = Box::leak(revision.into_boxed_str());
    for (n, line) in text.lines().enumerate() {
        let at = format!("{}:{}", path.display(), n + 1);
        if let Some(sent) = line.strip_prefix("> ") {
            peer.send_raw(sent).await;
        } else if let Some(expected) = line.strip_prefix("< ") {
            if std::env::var_os("MCPKIT_RECORD").is_some() {
                // Bootstrapping a new transcript: print what the server says instead.
                println!("{}\t< {}", path.display(), peer.recv().await);
                continue;
            }
            let expected: Value = serde_json::from_str(expected).unwrap_or_else(|e| panic!("{at}: {e}"));
            let actual = peer.recv().await;
            assert!(matches(&expected, &actual), "{at}\nexpected: {expected}\nactual:   {actual}");
        } else {
            assert!(line.is_empty() || line.starts_with('#'), "{at}: unknown line");
        }
    }
    peer.close().await;
}

#[tokio::test]
async fn every_transcript_replays() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/transcripts");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert!(files.len() >= 2, "transcripts missing in {}", dir.display());
    for file in files {
        replay(&file).await;
    }
}
