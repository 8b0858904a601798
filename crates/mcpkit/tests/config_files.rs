//! `--server NAME` from the files other hosts write: the project's `.mcp.json`,
//! `.vscode/mcp.json` (VS Code's `servers` and `inputs`) and `.cursor/mcp.json`, then the user's
//! file; variables expanded, inputs asked for on a terminal, disabled entries refused.

use std::path::{Path, PathBuf};
use std::process::Command;

mod support;

use support::BIN;

/// A project directory (and a user config directory beside it) of this test process.
struct Project {
    root: PathBuf,
}

impl Project {
    fn new(name: &str) -> Project {
        let root = std::env::temp_dir().join(format!("mcpkit-test-project-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("work/.vscode")).unwrap();
        std::fs::create_dir_all(root.join("xdg/mcpkit")).unwrap();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/session_server.sh");
        std::fs::copy(script, root.join("work/server.sh")).unwrap();
        Project { root }
    }

    fn write(&self, file: &str, content: &serde_json::Value) {
        std::fs::write(self.root.join(file), content.to_string()).unwrap();
    }

    /// `mcpkit args…` started in the project's directory, with the user's file in `xdg/`.
    fn command(&self, args: &[&str]) -> Command {
        let mut command = support::command(args);
        command
            .current_dir(self.root.join("work"))
            .env("XDG_CONFIG_HOME", self.root.join("xdg"))
            .env_remove("MCPKIT_INPUT_SECRET")
            .env_remove("MCPKIT_TEST_UNSET_VARIABLE");
        command
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn project(name: &str) -> Project {
    let project = Project::new(name);
    project.write(
        "work/.vscode/mcp.json",
        &serde_json::json!({
            "inputs": [{"id": "secret", "type": "promptString", "description": "The secret", "password": true}],
            "servers": {
                "asks": {"type": "stdio", "command": "bash", "args": ["${workspaceFolder}/server.sh"],
                         "env": {"MCPKIT_TEST_SECRET": "${input:secret}"}},
                "filed": {"command": "bash", "args": ["server.sh"], "envFile": "${workspaceFolder}/.env"},
                "defaulted": {"command": "bash", "args": ["server.sh"],
                              "env": {"MCPKIT_TEST_SECRET": "${MCPKIT_TEST_UNSET_VARIABLE:-fallback}"}},
                "unset": {"command": "bash", "args": ["server.sh"],
                          "env": {"MCPKIT_TEST_SECRET": "${MCPKIT_TEST_UNSET_VARIABLE}"}},
                "off": {"command": "bash", "args": ["server.sh"], "disabled": true},
                "shadowed": {"command": "bash", "args": ["server.sh"], "env": {"MCPKIT_TEST_SECRET": "vscode"}}
            }
        }),
    );
    std::fs::write(
        project.root.join("work/.env"),
        "# the server's secret\nexport MCPKIT_TEST_SECRET=\"from-env-file\"\n",
    )
    .unwrap();
    project.write(
        "work/.mcp.json",
        &serde_json::json!({"mcpServers": {
            "shadowed": {"command": "bash", "args": ["server.sh"], "env": {"MCPKIT_TEST_SECRET": "dot-mcp"}}
        }}),
    );
    project.write(
        "xdg/mcpkit/config.json",
        &serde_json::json!({"mcpServers": {
            "demo": {"command": BIN, "args": ["serve", "--stdio"]},
            "shadowed": {"command": "/nonexistent/program"}
        }}),
    );
    project
}

/// What `whoami` said of `$MCPKIT_TEST_SECRET`, or the error.
fn secret(project: &Project, server: &str, env: &[(&str, &str)]) -> Result<String, String> {
    let mut command = project.command(&["call", "whoami", "--json", "--server", server]);
    command.envs(env.iter().copied());
    let (code, out, err) = support::run_with(command, None);
    if code != 0 {
        return Err(err);
    }
    let text = out.split("secret ").nth(1).ok_or_else(|| out.clone())?;
    Ok(text.split('"').next().unwrap().to_owned())
}

#[test]
fn project_files_come_first_and_vs_code_entries_are_expanded() {
    let project = project("files");
    // `.mcp.json` before `.vscode/mcp.json` before the user's file; the user's when only it has it.
    assert_eq!(secret(&project, "shadowed", &[]).unwrap(), "dot-mcp");
    let (code, out, err) = support::run_with(project.command(&["list", "tools", "--server", "demo"]), None);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\"echo\""), "{out}");

    // `envFile`, `${workspaceFolder}`, `${VAR:-default}`, an input from the environment.
    assert_eq!(secret(&project, "filed", &[]).unwrap(), "from-env-file");
    assert_eq!(secret(&project, "defaulted", &[]).unwrap(), "fallback");
    assert_eq!(secret(&project, "defaulted", &[("MCPKIT_TEST_UNSET_VARIABLE", "set")]).unwrap(), "set");
    assert_eq!(secret(&project, "asks", &[("MCPKIT_INPUT_SECRET", "s3")]).unwrap(), "s3");

    // Never sent literally: an unset variable, an input nobody can be asked for (a pipe).
    let err = secret(&project, "unset", &[]).unwrap_err();
    assert!(err.contains("MCPKIT_TEST_UNSET_VARIABLE` is not set"), "{err}");
    assert!(err.contains("server `unset`: field `env.MCPKIT_TEST_SECRET`"), "{err}");
    let err = secret(&project, "asks", &[]).unwrap_err();
    for part in ["input `secret` has no value", "MCPKIT_INPUT_SECRET", "on a terminal to be asked"] {
        assert!(err.contains(part), "{part}: {err}");
    }

    let err = secret(&project, "off", &[]).unwrap_err();
    assert!(err.contains("server \"off\" in .vscode/mcp.json is disabled"), "{err}");
    let err = secret(&project, "nope", &[]).unwrap_err();
    for part in [
        "no server \"nope\" in .mcp.json (it has: shadowed)",
        ".vscode/mcp.json (it has: asks, defaulted, filed, off, shadowed, unset)",
        ".cursor/mcp.json (none)",
        "config.json (it has: demo, shadowed)",
    ] {
        assert!(err.contains(part), "{part}: {err}");
    }
    // Without a home (so no user file), the project's files still name their servers.
    let mut command = project.command(&["call", "whoami", "--json", "--server", "filed"]);
    command.env_remove("HOME").env_remove("XDG_CONFIG_HOME");
    let (code, out, err) = support::run_with(command, None);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("secret from-env-file"), "{out}");
    // --config: that file alone.
    let user = project.root.join("xdg/mcpkit/config.json");
    let args = ["call", "whoami", "--server", "shadowed", "--config", user.to_str().unwrap()];
    let (code, _, err) = support::run_with(project.command(&args), None);
    assert_eq!(code, 3, "cannot start");
    assert!(err.contains("cannot start \"/nonexistent/program\""), "{err}");
}

/// On a terminal, an input is asked for once, a password without echo.
#[cfg(unix)]
#[test]
fn an_input_is_asked_on_a_terminal_without_echoing_a_password() {
    let project = project("asked");
    let command = project.command(&["call", "whoami", "--server", "asks"]);
    let out = support::on_a_terminal_typing(command, &[("The secret: ", "typed-in\n")]);
    assert!(out.contains("The secret: "), "{out}");
    assert!(out.contains("secret typed-in"), "{out}");
    assert_eq!(out.matches("typed-in").count(), 1, "echoed: {out}");
}
