//! Questions and progress through `mcpkit gateway`, in every pairing of protocol eras: the
//! downstream `mcpkit call --interactive` (modern by default, legacy with `--protocol-version`)
//! answers what the upstream `mcpkit serve --stdio` (modern, or pinned legacy by the
//! configuration) asks.

mod gateway_support;
mod support;

use std::path::PathBuf;

use gateway_support::{Dir, json, stdio_upstream, text, through_stdio};

const LEGACY_DOWNSTREAM: &str = "2025-11-25";
const LEGACY_UPSTREAM: &str = "2025-06-18";

/// The downstream eras: extra `mcpkit call` arguments, and a label.
const DOWNSTREAMS: [(&[&str], &str); 2] =
    [(&[], "modern downstream"), (&["--protocol-version", LEGACY_DOWNSTREAM], "legacy downstream")];

/// One configuration per upstream era (a single upstream `up`), and a label.
fn upstreams(dir: &Dir) -> Vec<(PathBuf, &'static str)> {
    let modern = dir.path().join("modern.toml");
    std::fs::write(&modern, stdio_upstream("up", "")).unwrap();
    let legacy = dir.path().join("legacy.toml");
    let pinned = format!("protocol_version = {}", gateway_support::quoted(LEGACY_UPSTREAM));
    std::fs::write(&legacy, stdio_upstream("up", &pinned)).unwrap();
    vec![(modern, "modern upstream"), (legacy, "legacy upstream")]
}

/// `mcpkit call args... [era args] -- mcpkit gateway --config CONFIG` with `stdin`.
fn call(config: &std::path::Path, args: &[&str], era: &[&str], stdin: Option<&str>) -> (i32, String, String) {
    through_stdio(config, &[args, era].concat(), stdin)
}

#[test]
fn the_pinned_upstream_speaks_its_revision() {
    let dir = Dir::new("pinned");
    for (config, label) in upstreams(&dir) {
        let (code, out, err) = support::run(&["gateway", "--config", config.to_str().unwrap(), "--check"]);
        assert_eq!(code, 0, "{label}: {out}\n{err}");
        let status = json(&out);
        let up = gateway_support::upstream(&status, "up");
        let expected = if label.starts_with("legacy") { LEGACY_UPSTREAM } else { "2026-07-28" };
        assert_eq!(up["protocol_version"], expected, "{label}: {status}");
    }
}

#[test]
fn elicitation_in_every_pairing_of_eras() {
    let dir = Dir::new("elicitation");
    for (config, upstream) in upstreams(&dir) {
        for (era, downstream) in DOWNSTREAMS {
            let (code, out, err) =
                call(&config, &["call", "greet_me", "--interactive"], era, Some("Ann\ny\n"));
            assert_eq!(code, 0, "{downstream}, {upstream}: {out}\n{err}");
            let result = json(&out);
            assert_eq!(result["isError"], serde_json::Value::Null, "{downstream}, {upstream}: {result}");
            assert_eq!(text(&result), "Hello, Ann!", "{downstream}, {upstream}");
            // The question was the upstream's, shown by the downstream client.
            assert!(err.contains("What is your name?"), "{downstream}, {upstream}: {err}");
        }
    }
}

#[test]
fn a_declined_elicitation_reaches_the_upstream() {
    let dir = Dir::new("declined");
    for (config, upstream) in upstreams(&dir) {
        for (era, downstream) in DOWNSTREAMS {
            let (code, out, err) =
                call(&config, &["call", "greet_me", "--interactive"], era, Some(":decline\n"));
            assert_eq!(code, 1, "{downstream}, {upstream}: {out}\n{err}");
            let result = json(&out);
            assert_eq!(result["isError"], true, "{downstream}, {upstream}: {result}");
            assert_eq!(text(&result), "no name given (decline)", "{downstream}, {upstream}");
        }
    }
}

#[test]
fn sampling_in_every_pairing_of_eras() {
    let dir = Dir::new("sampling");
    let args = ["call", "haiku", "--arg", "topic=autumn", "--interactive"];
    for (config, upstream) in upstreams(&dir) {
        for (era, downstream) in DOWNSTREAMS {
            let (code, out, err) = call(&config, &args, era, Some("old pond\na frog jumps in\n\n"));
            assert_eq!(code, 0, "{downstream}, {upstream}: {out}\n{err}");
            assert_eq!(text(&json(&out)), "old pond\na frog jumps in", "{downstream}, {upstream}");
            assert!(err.contains("Write a haiku about autumn."), "{downstream}, {upstream}: {err}");
        }
    }
}

/// The `progress ` lines of `mcpkit call --progress`'s stderr.
fn progress_lines(err: &str) -> Vec<&str> {
    err.lines().filter(|l| l.starts_with("progress ")).collect()
}

#[test]
fn progress_in_every_pairing_of_eras() {
    let dir = Dir::new("progress");
    let args = ["call", "countdown", "--arg", "seconds=2", "--progress"];
    for (config, upstream) in upstreams(&dir) {
        for (era, downstream) in DOWNSTREAMS {
            let (code, out, err) = call(&config, &args, era, None);
            assert_eq!(code, 0, "{downstream}, {upstream}: {out}\n{err}");
            assert_eq!(text(&json(&out)), "Lift-off!", "{downstream}, {upstream}");
            let lines = progress_lines(&err);
            assert!(!lines.is_empty(), "{downstream}, {upstream}: no progress shown: {err}");
            // The reports sent while the countdown runs (the last one: the test below).
            assert_eq!(lines[0], "progress 0/2 2 s left", "{downstream}, {upstream}: {lines:?}");
            assert!(
                lines.len() >= 2 && lines[1] == "progress 1/2 1 s left",
                "{downstream}, {upstream}: {lines:?}"
            );
        }
    }
}

#[test]
fn the_last_progress_report_is_passed_on() {
    let dir = Dir::new("last-progress");
    let args = ["call", "countdown", "--arg", "seconds=1", "--progress"];
    for (config, upstream) in upstreams(&dir) {
        for (era, downstream) in DOWNSTREAMS {
            // Several runs: the report and the result race inside the gateway.
            for _ in 0..3 {
                let (code, out, err) = call(&config, &args, era, None);
                assert_eq!(code, 0, "{downstream}, {upstream}: {out}\n{err}");
                let lines = progress_lines(&err);
                assert_eq!(
                    lines,
                    ["progress 0/1 1 s left", "progress 1/1 lift-off"],
                    "{downstream}, {upstream}: every report, as without the gateway"
                );
            }
        }
    }
}

#[test]
fn elicitation_over_http_downstream_in_every_pairing_of_eras() {
    let dir = Dir::new("elicitation-http");
    for (config, upstream) in upstreams(&dir) {
        let gateway = gateway_support::gateway_http(&config);
        for (era, downstream) in DOWNSTREAMS {
            let args = [&["call", "greet_me", "--interactive", "--url", gateway.url()], era].concat();
            let (code, out, err) = support::run_with(support::command(&args), Some("Ann\ny\n"));
            assert_eq!(code, 0, "{downstream}, {upstream}: {out}\n{err}\ngateway: {}", gateway.stderr());
            assert_eq!(text(&json(&out)), "Hello, Ann!", "{downstream}, {upstream}");
        }
    }
}

#[test]
fn roots_in_every_pairing_of_eras() {
    let dir = Dir::new("roots");
    let shared = dir.path().join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    let canonical = shared.canonicalize().unwrap();
    let expected = format!("shared: file://{}", canonical.to_str().unwrap());
    for (config, upstream) in upstreams(&dir) {
        for (era, downstream) in DOWNSTREAMS {
            let (code, out, err) =
                call(&config, &["call", "roots", "--root", shared.to_str().unwrap()], era, None);
            assert_eq!(code, 0, "{downstream}, {upstream}: {out}\n{err}");
            assert_eq!(text(&json(&out)), expected, "{downstream}, {upstream}");
        }
    }
}
