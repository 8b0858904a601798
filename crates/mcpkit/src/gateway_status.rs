//! `mcpkit gateway status URL`: a running gateway's `GET /status`, one line per upstream.

use std::process::ExitCode;
use std::time::Duration;

use serde_json::Value;

/// How long the gateway may take to answer.
const TIMEOUT: Duration = Duration::from_secs(10);

/// The status URL of the gateway at `given`: its MCP URL, its base URL, HOST:PORT or PORT.
pub(crate) fn status_url(given: &str) -> Result<reqwest::Url, String> {
    let with_scheme = if given.contains("://") {
        given.to_owned()
    } else if given.bytes().all(|b| b.is_ascii_digit()) {
        format!("http://127.0.0.1:{given}")
    } else {
        format!("http://{given}")
    };
    let mut url = reqwest::Url::parse(&with_scheme).map_err(|e| format!("{given:?} is not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("{given:?} is not an http:// or https:// URL"));
    }
    let path = url.path().trim_end_matches('/');
    let base = path.strip_suffix("/mcp").or_else(|| path.strip_suffix("/status")).unwrap_or(path);
    let status = format!("{base}/status");
    url.set_path(&status);
    url.set_query(None);
    Ok(url)
}

/// One line about an upstream of a status: `upstream NAME: STATE (transport, revision, counts)`,
/// its sessions when it has a child per session, and its last error.
pub(crate) fn describe(u: &Value) -> String {
    let text = |key: &str| u[key].as_str().unwrap_or("?").to_owned();
    let count = |key: &str| u[key].as_u64().unwrap_or(0);
    let mut line = format!("upstream {}: {} ({}", text("name"), text("state"), text("transport"));
    if let Some(version) = u["protocol_version"].as_str() {
        line.push_str(&format!(", {version}"));
    }
    line.push_str(&format!(
        ", {} tools, {} prompts, {} resources",
        count("tools"),
        count("prompts"),
        count("resources")
    ));
    if u["sharing"] == "per-session" {
        line.push_str(&format!(", {} sessions", count("sessions")));
    }
    if count("restarts") > 0 {
        line.push_str(&format!(", {} restarts", count("restarts")));
    }
    if let Some(circuit) = u["circuit"].as_str().filter(|c| *c != "closed") {
        line.push_str(&format!(", circuit {circuit}"));
    }
    line.push(')');
    if let Some(error) = u["last_error"].as_str() {
        line.push_str(&format!(": {error}"));
    }
    line
}

fn fetch(url: reqwest::Url) -> Result<Value, String> {
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    runtime.block_on(async move {
        let client = reqwest::Client::builder().timeout(TIMEOUT).build().map_err(|e| e.to_string())?;
        let response = client.get(url.clone()).send().await.map_err(|e| format!("{url}: {e}"))?;
        let status = response.status();
        let body = response.text().await.map_err(|e| format!("{url}: {e}"))?;
        if !status.is_success() {
            return Err(format!("{url}: HTTP {status}: {}", body.trim()));
        }
        serde_json::from_str(&body).map_err(|e| format!("{url}: not a gateway status ({e})"))
    })
}

pub(crate) fn run(given: &str, json: bool) -> ExitCode {
    let status = match status_url(given).and_then(fetch) {
        Ok(status) => status,
        Err(e) => {
            eprintln!("mcpkit: {e}");
            return ExitCode::from(2);
        }
    };
    let empty = Vec::new();
    let upstreams = status["upstreams"].as_array().unwrap_or(&empty);
    let conflicts = status["conflicts"].as_array().unwrap_or(&empty);
    let left_out = status["left_out"].as_array().unwrap_or(&empty);
    if json {
        println!("{}", serde_json::to_string_pretty(&status).unwrap_or_default());
    } else {
        for upstream in upstreams {
            println!("{}", describe(upstream));
        }
        for conflict in conflicts {
            println!("conflict: {conflict}");
        }
        for entry in left_out {
            println!("left out: {entry}");
        }
        for shared in status["shared_app_names"].as_array().unwrap_or(&empty) {
            let upstreams: Vec<&str> =
                shared["upstreams"].as_array().unwrap_or(&empty).iter().filter_map(|u| u.as_str()).collect();
            println!(
                "app tool name {} shared by {}: each app is served at /mcp/{{upstream}}",
                shared["name"],
                upstreams.join(", ")
            );
        }
    }
    let down = upstreams.iter().any(|u| u["state"] == "down");
    if down || !conflicts.is_empty() || !left_out.is_empty() { ExitCode::from(1) } else { ExitCode::SUCCESS }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_url_of_what_people_type() {
        let cases = [
            ("http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080/status"),
            ("http://127.0.0.1:8080/mcp/", "http://127.0.0.1:8080/status"),
            ("http://127.0.0.1:8080", "http://127.0.0.1:8080/status"),
            ("https://gw.example/team/mcp?x=1", "https://gw.example/team/status"),
            ("localhost:9000", "http://localhost:9000/status"),
            ("9000", "http://127.0.0.1:9000/status"),
            ("http://h:1/status", "http://h:1/status"),
        ];
        for (given, expected) in cases {
            assert_eq!(status_url(given).unwrap().as_str(), expected, "{given}");
        }
        assert!(status_url("ftp://h/mcp").unwrap_err().contains("not an http"));
    }

    #[test]
    fn one_line_per_upstream() {
        let u = serde_json::json!({"name": "a", "state": "down", "transport": "stdio", "tools": 2,
            "prompts": 0, "resources": 1, "restarts": 3, "last_error": "exited", "sharing": "per-session",
            "sessions": 4, "circuit": "closed"});
        assert_eq!(
            describe(&u),
            "upstream a: down (stdio, 2 tools, 0 prompts, 1 resources, 4 sessions, 3 restarts): exited"
        );
        let u = serde_json::json!({"name": "b", "state": "ready", "transport": "http", "tools": 1,
            "prompts": 0, "resources": 0, "circuit": "open", "last_error": "no answer within 1s"});
        assert_eq!(
            describe(&u),
            "upstream b: ready (http, 1 tools, 0 prompts, 0 resources, circuit open): no answer within 1s"
        );
    }
}
