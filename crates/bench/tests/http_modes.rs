//! `mcp-load --url` against a real Streamable HTTP server on a loopback port, in both eras:
//! every request answered and checked, and each request really made in the era asked for
//! (the server's tool records the revision each call was served under).

use std::process::Command;
use std::sync::{Arc, Mutex};

use mcp_server::{Args, Server, Tools, Version};
use schemars::JsonSchema;
use serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    text: String,
}

type Seen = Arc<Mutex<Vec<&'static str>>>;

/// Serves an `echo` tool on 127.0.0.1 (a free port) until the runtime is dropped; returns the
/// endpoint's URL and the revision of every call served.
fn start_server(runtime: &tokio::runtime::Runtime) -> (String, Seen) {
    let seen = Seen::default();
    let record = seen.clone();
    let echo = move |Version(version): Version, Args(EchoArgs { text }): Args<EchoArgs>| {
        let record = record.clone();
        async move {
            record.lock().unwrap().push(version.as_str());
            text
        }
    };
    let server =
        Server::builder("echo", "1.0.0").tools(Tools::new().add("echo", "Echo", echo)).build().unwrap();
    let bound = runtime.block_on(mcp_http::bind("127.0.0.1:0".parse().unwrap())).unwrap();
    let url = format!("http://{}/mcp", bound.local_addr());
    runtime.spawn(mcp_http::serve(server, bound, None));
    (url, seen)
}

fn load(url: &str, extra: &[&str]) -> serde_json::Value {
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-load"))
        .args(["--url", url, "--connections", "3", "--requests", "60", "--warmup", "6", "--json"])
        .args(["--text-bytes", "40"])
        .args(extra)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "mcp-load failed: {stdout} {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_str(stdout.trim()).unwrap()
}

#[test]
fn a_legacy_run_opens_one_session_and_every_call_is_served_in_it() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (url, seen) = start_server(&runtime);
    let report = load(&url, &["--legacy"]);
    assert_eq!((report["mode"].as_str(), report["transport"].as_str()), (Some("legacy"), Some("http")));
    assert_eq!((report["requests"].as_u64(), report["errors"].as_u64()), (Some(60), Some(0)));
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 66, "warm-up and measured calls");
    assert!(seen.iter().all(|v| *v == "2025-11-25"), "a call outside the session's revision: {seen:?}");
}

#[test]
fn a_modern_run_sends_2026_07_28_requests() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (url, seen) = start_server(&runtime);
    let report = load(&url, &[]);
    assert_eq!((report["mode"].as_str(), report["errors"].as_u64()), (Some("modern"), Some(0)));
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 66);
    assert!(seen.iter().all(|v| *v == "2026-07-28"), "{seen:?}");
}
