//! The real `mcpkit` binary answering the demonstration server's questions — elicitation
//! (`greet_me`), sampling (`haiku`), roots (`roots`) — from piped stdin with `--interactive`,
//! and showing `countdown`'s progress with `--progress`, in both protocol eras.

mod support;

use support::BIN;

const MODERN: &str = "2026-07-28";
const LEGACY: &str = "2025-11-25";

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// `mcpkit <args> --protocol-version <version> -- mcpkit serve --stdio`, with `input` piped to
/// stdin (`None`: stdin is /dev/null). The client ends its server when it exits.
fn mcpkit(version: &str, args: &[&str], input: Option<&str>) -> Run {
    let mut command = support::command(args);
    command.args(["--protocol-version", version, "--", BIN, "serve", "--stdio"]);
    let (code, stdout, stderr) = support::run_with(command, input);
    Run { code, stdout, stderr }
}

/// The text blocks of the printed `tools/call` result, and its `isError`.
fn result(run: &Run) -> (String, bool) {
    let value: serde_json::Value = serde_json::from_str(run.stdout.trim())
        .unwrap_or_else(|e| panic!("stdout is not one JSON result ({e}): {:?} / {}", run.stdout, run.stderr));
    let text = value["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n");
    (text, value["isError"] == true)
}

fn ok_text(run: &Run) -> String {
    assert_eq!(run.code, 0, "stdout {:?} stderr {}", run.stdout, run.stderr);
    let (text, is_error) = result(run);
    assert!(!is_error, "{text}");
    text
}

fn error_text(run: &Run) -> String {
    assert_eq!(run.code, 1, "stdout {:?} stderr {}", run.stdout, run.stderr);
    let (text, is_error) = result(run);
    assert!(is_error, "{text}");
    text
}

const ERAS: [&str; 2] = [MODERN, LEGACY];

#[test]
fn greet_me_takes_the_typed_name() {
    for v in ERAS {
        let run = mcpkit(v, &["call", "greet_me", "--interactive"], Some("Ada Lovelace\ny\n"));
        assert_eq!(ok_text(&run), "Hello, Ada Lovelace!", "{v}");
        assert!(run.stderr.contains("asks:\n  What is your name?\n"), "{v}: {}", run.stderr);
        assert!(run.stderr.contains("name (required) — Your name\n  text: "), "{v}: {}", run.stderr);
        assert!(run.stderr.contains("Send it?"), "{v}: {}", run.stderr);
        assert!(!run.stdout.contains("What is your name"), "prompts stay off stdout");
    }
}

#[test]
fn invalid_input_is_asked_again_and_answers_can_be_edited() {
    for v in ERAS {
        // An empty answer to a required field is refused; then the review offers an edit.
        let run = mcpkit(v, &["call", "greet_me", "--interactive"], Some("\nAda\ne\nGrace\n\n"));
        assert_eq!(ok_text(&run), "Hello, Grace!", "{v}");
        assert_eq!(run.stderr.matches("! a value is required").count(), 1, "{v}: {}", run.stderr);
        assert!(run.stderr.contains("text [Ada]: "), "editing offers the previous answer: {}", run.stderr);
    }
}

#[test]
fn greet_me_declined_or_cancelled() {
    for v in ERAS {
        let declined = mcpkit(v, &["call", "greet_me", "--interactive"], Some(":decline\n"));
        assert_eq!(error_text(&declined), "no name given (decline)", "{v}");
        let at_review = mcpkit(v, &["call", "greet_me", "--interactive"], Some("Ada\nd\n"));
        assert_eq!(error_text(&at_review), "no name given (decline)", "{v}");
        let cancelled = mcpkit(v, &["call", "greet_me", "--interactive"], Some(":cancel\n"));
        assert_eq!(error_text(&cancelled), "no name given (cancel)", "{v}");
        let eof = mcpkit(v, &["call", "greet_me", "--interactive"], Some(""));
        assert_eq!(error_text(&eof), "no name given (cancel)", "{v}: the end of input cancels");
    }
}

#[test]
fn haiku_is_the_typed_reply() {
    for v in ERAS {
        let run = mcpkit(
            v,
            &["call", "haiku", "--arg", "topic=autumn", "--interactive"],
            Some("old pond\na frog jumps in\n\nnot part of it\n"),
        );
        assert_eq!(ok_text(&run), "old pond\na frog jumps in", "{v}");
        assert!(run.stderr.contains("user:\n    Write a haiku about autumn.\n"), "{v}: {}", run.stderr);
        assert!(run.stderr.contains("(at most 200 tokens)"), "{v}: {}", run.stderr);
    }
}

#[test]
fn a_declined_haiku_reaches_the_server_as_a_rejection() {
    let args = ["call", "haiku", "--arg", "topic=autumn", "--interactive"];
    // Modern: the input round cannot be completed, so the call fails client-side.
    let modern = mcpkit(MODERN, &args, Some(":decline\n"));
    assert_eq!(modern.code, 4, "{}", modern.stderr);
    let last = modern.stderr.lines().last().unwrap();
    assert!(
        last.starts_with("mcpkit: ") && last.contains("the user declined the sampling request"),
        "{last}"
    );
    assert!(modern.stdout.is_empty());
    // Legacy: the server receives the JSON-RPC error (-1) and the tool reports it.
    let legacy = mcpkit(LEGACY, &args, Some(":decline\n"));
    let text = error_text(&legacy);
    assert!(text.contains("the user declined the sampling request") && text.contains("-1"), "{text}");
}

#[test]
fn without_a_prompt_the_server_sees_no_elicitation_support() {
    let modern = mcpkit(MODERN, &["call", "greet_me"], None);
    assert_eq!(modern.code, 2);
    assert!(modern.stdout.is_empty());
    assert_eq!(modern.stderr.lines().count(), 1, "{}", modern.stderr);
    assert!(
        modern.stderr.starts_with("mcpkit: server error -32021")
            && modern.stderr.contains("elicitation")
            && modern.stderr.contains("--interactive"),
        "{}",
        modern.stderr
    );
    let forced = mcpkit(MODERN, &["call", "greet_me", "--no-input"], Some("Ada\ny\n"));
    assert_eq!(forced.code, 2);
    assert!(forced.stderr.contains("--no-input forbids"), "{}", forced.stderr);
    // Legacy: the tool itself finds no elicitation capability and reports it.
    let legacy = mcpkit(LEGACY, &["call", "greet_me"], None);
    assert_eq!(error_text(&legacy), "the client does not support form elicitation");
    assert!(!legacy.stderr.contains("What is your name"), "{}", legacy.stderr);
    // --interactive and --no-input contradict each other.
    let both = mcpkit(MODERN, &["call", "greet_me", "--interactive", "--no-input"], None);
    assert_eq!(both.code, 2);
    assert!(both.stderr.contains("cannot be used with"), "{}", both.stderr);
}

#[test]
fn countdown_progress_as_plain_lines() {
    for v in ERAS {
        let run = mcpkit(v, &["call", "countdown", "--arg", "seconds=2", "--progress"], None);
        assert_eq!(ok_text(&run), "Lift-off!", "{v}");
        let lines: Vec<&str> = run.stderr.lines().filter(|l| l.starts_with("progress ")).collect();
        assert_eq!(lines.len(), 3, "{v}: {}", run.stderr);
        let done: Vec<f64> = lines
            .iter()
            .map(|l| {
                let fraction = l.split(' ').nth(1).unwrap();
                let (n, total) = fraction.split_once('/').unwrap();
                assert_eq!(total, "2", "{l}");
                n.parse().unwrap()
            })
            .collect();
        assert!(done.windows(2).all(|w| w[0] < w[1]), "{v}: progress increases: {lines:?}");
        assert_eq!(lines[0], "progress 0/2 2 s left");
        assert_eq!(*lines.last().unwrap(), "progress 2/2 lift-off");
        assert!(!run.stdout.contains("progress"), "progress stays off stdout");

        let quiet = mcpkit(v, &["call", "countdown", "--arg", "seconds=1"], None);
        assert_eq!(ok_text(&quiet), "Lift-off!", "{v}");
        assert!(
            !quiet.stderr.contains("progress"),
            "no --progress, no terminal: nothing shown: {}",
            quiet.stderr
        );
    }
}

#[test]
fn read_and_prompt_accept_progress() {
    let read = mcpkit(MODERN, &["read", "demo://readme", "--progress"], None);
    assert_eq!(read.code, 0, "{}", read.stderr);
    assert!(read.stdout.contains("mcpkit demo"), "{}", read.stdout);
    let prompt = mcpkit(LEGACY, &["prompt", "poem", "--arg", "subject=sea", "--progress"], None);
    assert_eq!(prompt.code, 0, "{}", prompt.stderr);
    assert!(prompt.stdout.contains("Write a haiku about sea."), "{}", prompt.stdout);
}

#[test]
fn roots_come_from_root_flags() {
    let base = std::env::temp_dir().join(format!("mcpkit-roots-test-{}", std::process::id()));
    let dir = base.join("shared dir");
    std::fs::create_dir_all(&dir).unwrap();
    let canonical = dir.canonicalize().unwrap();
    let expected = format!("shared dir: file://{}", canonical.to_str().unwrap().replace(' ', "%20"));
    let given = base.join(".").join("shared dir");
    for v in ERAS {
        let run = mcpkit(v, &["call", "roots", "--root", given.to_str().unwrap()], None);
        assert_eq!(ok_text(&run), expected, "{v}");
    }
    let missing = mcpkit(MODERN, &["call", "roots", "--root", base.join("nope").to_str().unwrap()], None);
    assert_eq!(missing.code, 2);
    assert!(missing.stderr.contains("invalid --root"), "{}", missing.stderr);
    std::fs::remove_dir_all(&base).unwrap();

    let modern = mcpkit(MODERN, &["call", "roots"], None);
    assert_eq!(modern.code, 2);
    assert!(modern.stderr.contains("--root PATH"), "{}", modern.stderr);
    let legacy = mcpkit(LEGACY, &["call", "roots"], None);
    assert_eq!(error_text(&legacy), "the client does not support roots");
}
