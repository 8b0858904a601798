//! Skills and apps on the client, against our own server over real sockets: skills listed
//! without fetching a file, one looked up and loaded (verified), its files read (verified), a
//! directory browsed; an app's HTML read with its metadata.

use mcp_client::transport::http::HttpConfig;
use mcp_client::{Client, ClientBuilder, ClientError};
use mcp_server::{Resources, Server, Skills, Tools};
use mcp_types::extensions::ui::{Csp, ResourceUi, ToolUi};
use mcp_types::{Resource, Tool};

async fn time() -> String {
    "noon".into()
}

struct Serving {
    url: String,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Drop for Serving {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve() -> Serving {
    let manifest = b"---\nname: notes\ndescription: Take notes\n---\nRead docs/a.md.\n".to_vec();
    let server = Server::builder("skills-apps", "1")
        .tools(
            Tools::new()
                .add_tool(Tool::without_arguments("time").with_ui(ToolUi::new("ui://t/view.html")), time),
        )
        .resources(Resources::new().app(
            Resource::new("ui://t/view.html", "view"),
            "<!DOCTYPE html><p>view</p>",
            ResourceUi {
                csp: Some(Csp {
                    connect_domains: Some(vec!["https://api.example.com".into()]),
                    ..Default::default()
                }),
                ..Default::default()
            },
        ))
        .skills(
            Skills::new()
                .files("notes", vec![("SKILL.md".into(), manifest), ("docs/a.md".into(), b"A".to_vec())]),
        )
        .build()
        .unwrap();
    let bound = mcp_http::bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = bound.local_addr();
    let task = tokio::spawn(mcp_http::serve(server, bound, Some(mcp_http::HttpConfig::for_bind(addr))));
    Serving { url: format!("http://{addr}/mcp"), task }
}

async fn client(url: &str) -> Client {
    ClientBuilder::new("skills-apps-test", "1").apps(true).connect_http(HttpConfig::new(url)).await.unwrap()
}

#[tokio::test]
async fn skills_are_listed_then_loaded_and_read_verified() {
    let server = serve().await;
    let client = client(&server.url).await;
    assert!(client.serves_skills());
    let skills = client.list_all_skills().await.unwrap();
    assert_eq!(skills.len(), 1);
    let entry = client.get_skill("skill://notes/SKILL.md").await.unwrap();
    assert_eq!(entry, skills[0]);
    let loaded = client.load_skill(&entry).await.unwrap();
    assert!(loaded.text.ends_with("Read docs/a.md.\n"));
    assert_eq!(loaded.frontmatter["description"], "Take notes");
    assert_eq!(client.read_skill_file(&entry, "skill://notes/docs/a.md").await.unwrap(), b"A");
    // A file the entry does not list is not read at all.
    let unlisted = client.read_skill_file(&entry, "skill://notes/docs/b.md").await;
    assert!(matches!(unlisted, Err(ClientError::InvalidAnswer { .. })), "{unlisted:?}");
    // An entry that no longer matches what is served (a stale digest): refused.
    let mut stale = entry.clone();
    if let mcp_types::extensions::skills::SkillResources::Files(files) = &mut stale.resources {
        files[1].digest = mcp_skills::digest(b"B");
    }
    let refused = client.read_skill_file(&stale, "skill://notes/docs/a.md").await;
    assert!(refused.unwrap_err().to_string().contains("does not match its digest"));
    let children = client.read_directory("skill://notes/docs").await.unwrap();
    assert_eq!(children.len(), 1);
    assert_eq!(children[0].uri, "skill://notes/docs/a.md");
    assert!(
        matches!(client.get_skill("skill://other/SKILL.md").await, Err(ClientError::Protocol(e)) if e.code == -32602)
    );
}

#[tokio::test]
async fn an_apps_html_is_read_with_its_sandbox_metadata() {
    let server = serve().await;
    let client = client(&server.url).await;
    let tools = client.list_all_tools().await.unwrap();
    let uri = Client::tool_app(&tools[0]).and_then(|ui| ui.resource_uri).unwrap();
    let app = client.read_app(&uri).await.unwrap();
    assert_eq!(app.html, "<!DOCTYPE html><p>view</p>");
    assert_eq!(app.ui.csp.unwrap().connect_domains.unwrap(), ["https://api.example.com"]);
    assert!(matches!(client.read_app("https://example.com/x").await, Err(ClientError::Unsupported(_))));
    assert!(client.read_app("ui://t/missing.html").await.is_err());
}
