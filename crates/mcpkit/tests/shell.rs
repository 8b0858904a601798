//! `mcpkit shell` on a pseudo-terminal, typed at as a person would: completion, calls, history,
//! and notifications shown as they arrive.

mod support;

use support::BIN;

fn state_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("mcpkit-test-shell-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[cfg(unix)]
#[test]
fn a_session_completes_names_and_keys_calls_and_keeps_its_history() {
    let state = state_dir("calls");
    let mut command = support::command(&["shell", "--", BIN, "serve", "--stdio"]);
    command.env("XDG_STATE_HOME", &state);
    let out = support::on_a_terminal_typing(
        command,
        &[
            ("mcp> ", "call ad\t"),
            ("call add ", "b\t"),
            ("call add b=", "22 a=20\r"),
            ("42.0", "list prompts\r"),
            ("Ask for a poem", "nonsense\r"),
            ("unknown command", "quit\r"),
        ],
    );
    assert!(out.contains("connected to mcpkit-demo"), "{out}");
    assert!(out.contains("\"sum\": 42.0"), "{out}");
    assert!(out.contains("error: unknown command \"nonsense\" (`help` lists them)"), "{out}");
    let history = std::fs::read_to_string(state.join("mcpkit/shell_history")).unwrap();
    assert!(history.contains("call add b=22 a=20"), "{history}");
    let _ = std::fs::remove_dir_all(&state);
}

#[cfg(unix)]
#[test]
fn listen_shows_notifications_as_they_arrive() {
    let state = state_dir("listen");
    let changing = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/changing_server.sh");
    let mut command = support::command(&["shell", "--", "bash", changing.to_str().unwrap()]);
    command.env("XDG_STATE_HOME", &state);
    let out = support::on_a_terminal_typing(command, &[("mcp> ", "listen\r"), ("tools changed", "quit\r")]);
    assert!(out.contains("listening for tool list changes (`listen off` stops)"), "{out}");
    assert!(out.contains("tools changed"), "{out}");
    let _ = std::fs::remove_dir_all(&state);
}

/// While listening, a list change lists that kind again: Tab completes a tool the server added.
#[cfg(unix)]
#[test]
fn completion_follows_a_changed_tool_list_while_listening() {
    let state = state_dir("growing");
    let growing = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/growing_server.sh");
    let mut command = support::command(&["shell", "--", "bash", growing.to_str().unwrap()]);
    command.env("XDG_STATE_HOME", &state);
    let out = support::on_a_terminal_typing(
        command,
        &[
            ("mcp> ", "listen tools\r"),
            ("tools changed", "describe be\t"),
            ("describe beta", "\r"),
            ("\"type\": \"object\"", "quit\r"),
        ],
    );
    assert!(out.contains("describe beta"), "the new tool completes: {out}");
    let _ = std::fs::remove_dir_all(&state);
}
