//! `mcpkit record` as a proxy between a real client and a real server, `mcpkit replay` serving
//! what it wrote, in both eras, and `replay --check` against live servers.

mod support;

use support::{BIN, run as mcpkit};

fn json(out: &str) -> serde_json::Value {
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("not one JSON document ({e}): {out}"))
}

/// A recording file of this test process.
fn recording(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("mcpkit-test-recordings-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}.jsonl"));
    let _ = std::fs::remove_file(&path);
    path
}

/// `mcpkit call echo --arg text=TEXT [extra] -- mcpkit record FILE -- mcpkit serve --stdio`.
fn record_echo(file: &str, text: &str, extra: &[&str]) -> serde_json::Value {
    let arg = format!("text={text}");
    let mut args = vec!["call", "echo", "--arg", &arg];
    args.extend_from_slice(extra);
    args.extend(["--", BIN, "record", file, "--", BIN, "serve", "--stdio"]);
    let (code, out, err) = mcpkit(&args);
    assert_eq!(code, 0, "{err}");
    json(&out)
}

#[test]
fn a_recorded_session_is_replayed_in_its_era() {
    for (era, extra) in [("modern", &[][..]), ("legacy", &["--protocol-version", "2025-11-25"][..])] {
        let path = recording(era);
        let file = path.to_str().unwrap();
        let answer = record_echo(file, "recorded", extra);
        assert_eq!(answer["content"][0]["text"], "recorded", "{era}: the proxy passed it through");

        // The file: a head, then each message both ways with its time, as sent.
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<serde_json::Value> = text.lines().map(json).collect();
        assert_eq!(
            (lines[0]["format"].as_str(), lines[0]["version"].as_u64()),
            (Some("mcpkit-recording"), Some(1))
        );
        let first = if era == "modern" { "server/discover" } else { "initialize" };
        assert_eq!(lines[1]["dir"], "to-server", "{era}");
        assert_eq!(lines[1]["message"]["method"], first, "{era}");
        assert!(lines[1]["ms"].as_f64().is_some(), "{era}");
        assert!(
            lines.iter().any(
                |l| l["dir"] == "to-client" && l["message"]["result"]["content"][0]["text"] == "recorded"
            )
        );

        // Replayed: the same request gets the recorded answer; another one an error (status 4).
        let mut args = vec!["call", "echo", "--arg", "text=recorded"];
        args.extend_from_slice(extra);
        args.extend(["--", BIN, "replay", file]);
        let (code, out, err) = mcpkit(&args);
        assert_eq!(code, 0, "{era}: {err}");
        assert_eq!(json(&out)["content"][0]["text"], "recorded", "{era}");
        args[3] = "text=other";
        let (code, _, err) = mcpkit(&args);
        assert_eq!(code, 4, "{era}: {err}");
        assert!(err.contains("the recording has no answer to tools/call with these params"), "{era}: {err}");

        // The same over Streamable HTTP.
        let server =
            mcp_testkit::process::ListeningProcess::start(support::command(&["replay", file, "--http", "0"]));
        let mut args = vec!["call", "echo", "--arg", "text=recorded", "--url", server.url()];
        args.extend_from_slice(extra);
        let (code, out, err) = mcpkit(&args);
        assert_eq!(code, 0, "{era} over HTTP: {err}");
        assert_eq!(json(&out)["content"][0]["text"], "recorded", "{era} over HTTP");
        let (code, out, err) = mcpkit(&["info", "--url", server.url()]);
        assert_eq!(code, 0, "{era} over HTTP: {err}");
        assert_eq!(json(&out)["era"], era, "detected as the recording's era");
    }
}

#[test]
fn check_reports_what_a_live_server_answers_differently() {
    let path = recording("check");
    let file = path.to_str().unwrap();
    record_echo(file, "same", &[]);
    let (code, out, err) = mcpkit(&["replay", "--check", file, "--", BIN, "serve", "--stdio"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("same    tools/call echo") && out.ends_with("2 requests, 0 answered differently\n"),
        "{out}"
    );

    let other = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/session_server.sh");
    let (code, out, err) = mcpkit(&["replay", "--check", file, "--", "bash", other.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(out.contains("differs tools/call echo\n"), "{out}");
    assert!(out.contains("/result/content/0/text: recorded \"same\", now \"pid "), "{out}");
    assert!(out.ends_with("2 requests, 2 answered differently\n"), "{out}");
}

#[test]
fn what_is_not_a_recording_is_refused() {
    let path = recording("not");
    std::fs::write(&path, "{\"jsonrpc\":\"2.0\"}\n").unwrap();
    let (code, _, err) = mcpkit(&["replay", path.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("is not an mcpkit recording"), "{err}");
}

/// `record --url`: a Streamable HTTP server recorded through mcpkit as a stdio proxy, in both
/// eras; its headers (a key) are sent and never written.
#[test]
fn an_http_server_is_recorded_through_a_stdio_proxy() {
    let server = support::serve_http(&[]);
    for (era, extra) in [("modern", &[][..]), ("legacy", &["--protocol-version", "2025-11-25"][..])] {
        let path = recording(&format!("http-{era}"));
        let file = path.to_str().unwrap();
        let mut args = vec!["call", "countdown", "--arg", "seconds=1", "--progress"];
        args.extend_from_slice(extra);
        args.extend(["--", BIN, "record", file, "--url", server.url(), "--header", "X-Api-Key: s3cret-key"]);
        let (code, out, err) = mcpkit(&args);
        assert_eq!(code, 0, "{era}: {err}");
        assert_eq!(json(&out)["content"][0]["text"], "Lift-off!", "{era}");
        assert!(err.contains("progress 1/1"), "{era}: the server's progress came through: {err}");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("s3cret-key"), "{era}: a header was recorded");
        let lines: Vec<serde_json::Value> = text.lines().map(json).collect();
        assert_eq!(lines[0]["transport"], "streamable-http", "{era}");
        assert!(
            lines
                .iter()
                .any(|l| l["dir"] == "to-client" && l["message"]["method"] == "notifications/progress"),
            "{era}"
        );

        // And the recording replays.
        let mut args = vec!["call", "countdown", "--arg", "seconds=1"];
        args.extend_from_slice(extra);
        args.extend(["--", BIN, "replay", file]);
        let (code, out, err) = mcpkit(&args);
        assert_eq!(code, 0, "{era}: {err}");
        assert_eq!(json(&out)["content"][0]["text"], "Lift-off!", "{era}");
    }
}
