//! The real `mcpkit` binary, over real pipes.

use std::io::Write;
use std::process::{Command, Stdio};

mod support;

use support::{BIN, run, serve_http};

/// Runs `mcpkit args...` with `stdin` as its input.
fn mcpkit(args: &[&str], stdin: &str) -> (i32, String, String) {
    support::run_with(support::command(args), Some(stdin))
}

#[test]
fn check_reports_and_sets_exit_status() {
    let (code, out, _) = mcpkit(&["check"], "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\"}\n");
    assert_eq!(code, 0);
    assert_eq!(out.trim(), r#"{"id":7,"kind":"request","method":"tools/call"}"#);

    let (code, out, _) =
        mcpkit(&["check", "--requests-only"], "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\u{feff}{}\n");
    assert_eq!(code, 1);
    let lines: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines[0]["code"], -32600);
    assert_eq!(lines[1]["code"], -32700);
}

#[test]
fn usage_errors_exit_2_with_one_message() {
    let (code, _, err) = mcpkit(&["check", "--protocol-version", "1999-01-01"], "");
    assert_eq!(code, 2);
    assert!(err.contains("unknown MCP protocol version"), "{err}");
}

#[test]
fn versions_lists_every_revision() {
    // Piped: JSON, with or without --json.
    for args in [&["versions"][..], &["versions", "--json"]] {
        let (code, out, err) = mcpkit(args, "");
        assert_eq!(code, 0, "{err}");
        let list: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        let list = list.as_array().unwrap();
        assert_eq!(list.len(), 5, "{out}");
        assert_eq!(list[0], serde_json::json!({"version": "2026-07-28", "era": "modern", "batches": false}));
        assert!(
            list.contains(&serde_json::json!({"version": "2025-03-26", "era": "legacy", "batches": true})),
            "{out}"
        );
    }
}

#[cfg(unix)]
#[test]
fn versions_on_a_terminal_is_a_text_table() {
    let out = support::on_a_terminal(support::command(&["versions"]));
    assert_eq!(out.lines().next(), Some("2026-07-28  modern"), "{out:?}");
    assert!(out.contains("2025-03-26  legacy (batches)"), "{out:?}");
    assert_eq!(out.lines().count(), 5, "{out:?}");
}

#[cfg(target_os = "linux")]
#[test]
fn versions_on_a_full_disk_is_one_error_line_and_status_2() {
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    let out = support::command(&["versions"]).stdin(Stdio::null()).stdout(full).output().unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.starts_with("mcpkit: cannot write the output: "), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

/// Runs `mcpkit serve --stdio` as a real process, feeds it `input`, closes stdin and returns
/// the messages it wrote. The server must exit by itself after its input ends.
fn serve(input: &[serde_json::Value]) -> Vec<serde_json::Value> {
    let mut child = Command::new(BIN)
        .args(["serve", "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mcpkit serve");
    {
        let mut stdin = child.stdin.take().unwrap();
        for message in input {
            writeln!(stdin, "{message}").unwrap();
        }
    }
    let started = std::time::Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if started.elapsed() > std::time::Duration::from_secs(10) {
            child.kill().unwrap();
            panic!("mcpkit serve did not exit after its input ended");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn serve_answers_modern_and_legacy_clients_over_real_pipes() {
    use serde_json::json;
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    let out = serve(&[
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta": meta,"name":"echo","arguments":{"text":"hi"}}}),
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta": meta,"name":"add","arguments":{"a":1.5,"b":2}}}),
        json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta": meta,"name":"fail","arguments":{}}}),
        json!({"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}),
        // Pipelined: a legacy request right behind `initialize` could overtake it, so this one
        // carries modern metadata (a real legacy client waits for the initialize answer).
        json!({"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"_meta": meta,"uri":"demo://notes/42"}}),
    ]);
    let by_id =
        |id: i64| out.iter().find(|m| m["id"] == id).unwrap_or_else(|| panic!("no answer to {id}: {out:?}"));
    assert_eq!(by_id(1)["result"]["content"][0]["text"], "hi");
    assert_eq!(by_id(2)["result"]["structuredContent"]["sum"], 3.5);
    assert_eq!(by_id(3)["result"]["isError"], true);
    assert_eq!(by_id(4)["result"]["serverInfo"]["name"], "mcpkit-demo");
    assert!(by_id(5)["result"]["contents"][0]["text"].as_str().unwrap().starts_with("Note 42"));
}

#[test]
fn serve_http_answers_over_a_real_socket() {
    use std::io::Read;
    let server = serve_http(&[]);
    let authority = server.authority().to_owned();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"echo","arguments":{"text":"over http"}}}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nhost: {authority}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\nmcp-method: tools/call\r\nmcp-name: echo\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut stream = std::net::TcpStream::connect(&authority).unwrap();
    stream.set_read_timeout(Some(std::time::Duration::from_secs(10))).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let json: serde_json::Value = serde_json::from_str(answer.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(json["result"]["content"][0]["text"], "over http");
}

/// `serve --http IP:PORT` runs on the main thread and tokio's workers (one per core; none on
/// one core, where the main thread is the runtime), and nothing else: no blocking-pool thread
/// (an address is not looked up: `lookup_host` parses it before it would call `getaddrinfo`),
/// no thread of its own.
#[cfg(target_os = "linux")]
#[test]
fn serve_http_runs_on_the_workers_and_the_main_thread_only() {
    let server = serve_http(&[]);
    let workers = match std::thread::available_parallelism().map_or(1, usize::from) {
        1 => 0,
        cores => cores,
    };
    assert_eq!(threads_of(server.id()), 1 + workers);
}

#[cfg(target_os = "linux")]
fn threads_of(pid: u32) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status.lines().find_map(|l| l.strip_prefix("Threads:")).unwrap().trim().parse().unwrap()
}

/// `--threads N`: N workers whatever the cores (1: the main thread alone).
#[cfg(target_os = "linux")]
#[test]
fn serve_http_takes_the_threads_it_is_given() {
    for (threads, expected) in [("1", 1), ("2", 3), ("5", 6)] {
        let server = serve_http(&["--threads", threads]);
        assert_eq!(threads_of(server.id()), expected, "--threads {threads}");
    }
    // Tokio's own variable, when --threads is not given.
    let mut command = support::command(&["serve", "--http", "127.0.0.1:0"]);
    command.env("TOKIO_WORKER_THREADS", "1");
    let server = mcp_testkit::process::ListeningProcess::start(command);
    assert_eq!(threads_of(server.id()), 1, "TOKIO_WORKER_THREADS=1");
    let mut command = support::command(&["serve", "--http", "127.0.0.1:0", "--threads", "2"]);
    command.env("TOKIO_WORKER_THREADS", "1");
    let server = mcp_testkit::process::ListeningProcess::start(command);
    assert_eq!(threads_of(server.id()), 3, "--threads wins over TOKIO_WORKER_THREADS");
    let (code, _, err) = support::run(&["serve", "--threads", "2"]);
    assert_eq!(code, 2, "--threads needs --http: {err}");
    // More threads than any machine has: refused before any is started, where Tokio would
    // abort the process when the system refuses one.
    for refused in ["0", "100000"] {
        let (code, _, err) = support::run(&["serve", "--http", "127.0.0.1:0", "--threads", refused]);
        assert_eq!(code, 2, "--threads {refused}: {err}");
        assert!(err.contains("from 1 to 1024"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    // The same value in Tokio's variable is ignored, said so, and the server runs.
    let mut command = support::command(&["serve", "--http", "127.0.0.1:0"]);
    command.env("TOKIO_WORKER_THREADS", "100000");
    let server = mcp_testkit::process::ListeningProcess::start(command);
    assert!(server.stderr().contains("TOKIO_WORKER_THREADS=\"100000\" ignored"), "{}", server.stderr());
}

/// One raw HTTP/1.1 exchange (`connection: close`), returning the whole answer.
fn http_exchange(authority: &str, request: &str) -> String {
    use std::io::Read;
    let mut stream = std::net::TcpStream::connect(authority).unwrap();
    stream.set_read_timeout(Some(std::time::Duration::from_secs(10))).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    answer
}

#[test]
fn serve_http_with_auth_options_is_a_resource_server() {
    // The issuer is never contacted: the request below carries no token, and the metadata
    // endpoint only names it.
    let server = serve_http(&["--auth-issuer", "http://127.0.0.1:9/issuer", "--auth-scope", "mcp:tools"]);
    let url = server.url().to_owned();
    let authority = server.authority().to_owned();

    // Without a token: 401 and a challenge naming the metadata and the scope; no body is read.
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let answer = http_exchange(
        &authority,
        &format!(
            "POST /mcp HTTP/1.1\r\nhost: {authority}\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\nmcp-method: server/discover\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        ),
    );
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    let challenge = answer
        .lines()
        .find(|l| l.to_ascii_lowercase().starts_with("www-authenticate:"))
        .unwrap_or_else(|| panic!("no challenge: {answer}"));
    assert!(challenge.contains("Bearer"), "{challenge}");
    assert!(challenge.contains("resource_metadata=\""), "{challenge}");
    assert!(challenge.contains("/.well-known/oauth-protected-resource"), "{challenge}");
    assert!(challenge.contains("mcp:tools"), "{challenge}");

    // The Protected Resource Metadata names this server and the issuer.
    let answer = http_exchange(
        &authority,
        &format!(
            "GET /.well-known/oauth-protected-resource/mcp HTTP/1.1\r\nhost: {authority}\r\nconnection: close\r\n\r\n"
        ),
    );
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let json: serde_json::Value = serde_json::from_str(answer.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(json["resource"], url);
    assert_eq!(json["authorization_servers"][0], "http://127.0.0.1:9/issuer");
    assert!(json["scopes_supported"].as_array().unwrap().iter().any(|s| s == "mcp:tools"), "{json}");
}

// ---- Usage errors, help, completions, man pages, the wire trace -------------------------------

/// The subcommands `mcpkit --help` lists (without `help`).
fn subcommands() -> Vec<String> {
    let (code, out, _) = run(&["--help"]);
    assert_eq!(code, 0);
    out.lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

#[test]
fn usage_errors_are_one_line_on_stderr_and_exit_2() {
    let cases: [(&[&str], &str, &str); 6] = [
        (&["list"], "the following required arguments were not provided: <KIND>", "mcpkit list"),
        (&["list", "tools", "--frobnicate"], "unexpected argument '--frobnicate' found", "mcpkit list"),
        (&["list", "bogus"], "invalid value 'bogus' for '<KIND>'", "mcpkit list"),
        (
            &["list", "tools", "--url", "http://127.0.0.1:9/mcp", "--server", "x"],
            "cannot be used with",
            "mcpkit list",
        ),
        (&["-v", "serve", "--http"], "a value is required for '--http <ADDR>'", "mcpkit serve"),
        (&["frobnicate"], "unrecognized subcommand 'frobnicate'", "mcpkit"),
    ];
    for (args, message, command) in cases {
        let (code, out, err) = run(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert_eq!(out, "", "{args:?}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("mcpkit: "), "{args:?}: {err}");
        assert!(err.contains(message), "{args:?}: {err}");
        assert!(err.trim_end().ends_with(&format!("(see '{command} --help')")), "{args:?}: {err}");
    }
}

#[test]
fn help_and_version_print_on_stdout_and_exit_0() {
    let (code, out, err) = run(&["--version"]);
    assert_eq!((code, err.as_str()), (0, ""));
    assert!(out.starts_with("mcpkit "), "{out}");
    // The top-level help gives a tour: a server, its tools, a call, a config-file server.
    let (code, out, _) = run(&["--help"]);
    assert_eq!(code, 0);
    for part in [
        "Examples:",
        "mcpkit serve --http",
        "mcpkit list tools --url",
        "mcpkit call",
        "--server",
        "mcpServers",
    ] {
        assert!(out.contains(part), "{part} missing:\n{out}");
    }
}

#[test]
fn every_subcommand_help_has_examples() {
    let names = subcommands();
    for expected in [
        "check",
        "versions",
        "serve",
        "info",
        "list",
        "call",
        "read",
        "prompt",
        "complete",
        "listen",
        "completions",
        "man",
    ] {
        assert!(names.iter().any(|n| n == expected), "{expected} missing from {names:?}");
    }
    for name in &names {
        let (code, out, err) = run(&[name, "--help"]);
        assert_eq!(code, 0, "{name}: {err}");
        let examples =
            out.split("Example").nth(1).unwrap_or_else(|| panic!("no examples for {name}:\n{out}"));
        assert!(examples.contains("mcpkit"), "{name}:\n{out}");
    }
}

#[test]
fn interaction_options_belong_to_the_commands_that_use_them() {
    let interaction = ["--interactive", "--no-input", "--root", "--progress"];
    // Only during call, read and prompt may the server ask for something or report progress.
    for name in ["call", "read", "prompt"] {
        let (code, out, err) = run(&[name, "--help"]);
        assert_eq!(code, 0, "{name}: {err}");
        assert!(out.contains("\nInteraction:\n") && out.contains("\nConnection:\n"), "{name}:\n{out}");
        for flag in interaction {
            assert!(out.contains(flag), "{flag} missing from {name} --help:\n{out}");
        }
    }
    // `list` and `describe` declare the capabilities `call` would: they take what sets them.
    for name in ["list", "describe"] {
        let (code, out, err) = run(&[name, "--help"]);
        assert_eq!(code, 0, "{name}: {err}");
        for flag in ["--interactive", "--no-input", "--root", "--yes"] {
            assert!(out.contains(flag), "{flag} missing from {name} --help:\n{out}");
        }
        assert!(!out.contains("--progress"), "{name}:\n{out}");
    }
    for name in ["info", "complete", "listen"] {
        let (code, out, err) = run(&[name, "--help"]);
        assert_eq!(code, 0, "{name}: {err}");
        assert!(out.contains("\nConnection:\n") && !out.contains("Interaction:"), "{name}:\n{out}");
        for flag in interaction {
            assert!(!out.contains(flag), "{flag} in {name} --help:\n{out}");
        }
    }
    let (code, out, err) = run(&["info", "--interactive", "--", BIN, "serve", "--stdio"]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("mcpkit: unexpected argument '--interactive' found"), "{err}");
    assert!(err.trim_end().ends_with("(see 'mcpkit info --help')"), "{err}");
}

#[test]
fn completions_come_from_the_command_definitions() {
    let (code, out, err) = run(&["completions", "bash"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("complete -F _mcpkit"), "{out}");
    for name in subcommands() {
        assert!(out.contains(&name), "{name} missing from the bash completions");
    }
    assert!(out.contains("--verbose") && out.contains("--protocol-version"));
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let (code, out, err) = run(&["completions", shell]);
        assert_eq!(code, 0, "{shell}: {err}");
        assert!(out.contains("serve") && out.contains("listen"), "{shell}");
    }
    let (code, _, err) = run(&["completions", "tcsh"]);
    assert_eq!((code, err.lines().count()), (2, 1), "{err}");
}

#[test]
fn man_pages_come_from_the_command_definitions() {
    let (code, out, err) = run(&["man"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.lines().take(5).any(|l| l.starts_with(".TH mcpkit 1")), "{out}");
    assert!(out.contains(".SH NAME") && out.contains(".SH COMMANDS"), "{out}");
    // One page documents every command with its own options and examples, in order.
    let mut from = out.find(".SH COMMANDS").unwrap();
    for name in subcommands() {
        let heading = format!(".SS \"mcpkit {name}\"");
        let at = out[from..].find(&heading).unwrap_or_else(|| panic!("no {heading} after the previous one"));
        from += at;
    }
    let call = &out[out.find(".SS \"mcpkit call\"").unwrap()..];
    let call = &call[..call[1..].find(".SS ").map_or(call.len(), |n| n + 1)];
    assert!(call.contains("\\-\\-arg") && call.contains("mcpkit call echo"), "{call}");
    // The two lines defining \*(Aq once, first; no hyphenation.
    assert_eq!(out.matches(".ds Aq").count(), 2, "{out}");
    assert!(out.lines().any(|l| l == ".nh"), "{out}");

    let dir = std::env::temp_dir().join(format!("mcpkit-man-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (code, out, err) = run(&["man", "--out", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut expected: Vec<String> = subcommands().iter().map(|n| format!("mcpkit-{n}.1")).collect();
    expected.push("mcpkit.1".to_owned());
    // A nested subcommand gets a page of its own.
    expected.push("mcpkit-gateway-check.1".to_owned());
    expected.push("mcpkit-gateway-status.1".to_owned());
    expected.sort();
    assert_eq!(files, expected);
    assert_eq!(out.lines().count(), expected.len(), "{out}");
    let list = std::fs::read_to_string(dir.join("mcpkit-list.1")).unwrap();
    assert!(list.contains(".TH mcpkit-list 1"), "{list}");
    assert!(list.contains("mcpkit list"), "{list}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn verbose_shows_the_messages_on_stderr_and_keeps_stdout_pure() {
    let bin = BIN;
    let (code, out, err) = run(&["-v", "list", "tools", "--", bin, "serve", "--stdio"]);
    assert_eq!(code, 0, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert!(json["tools"].as_array().is_some_and(|t| !t.is_empty()), "{out}");
    let sent = err.lines().find(|l| l.starts_with("-> ") && l.contains(r#""method":"tools/list""#));
    let sent = sent.unwrap_or_else(|| panic!("no tools/list request:\n{err}"));
    let id = serde_json::from_str::<serde_json::Value>(&sent[3..]).unwrap()["id"].clone();
    let answered = err.lines().filter_map(|l| l.strip_prefix("<- ")).any(|l| {
        let message: serde_json::Value = serde_json::from_str(l).unwrap();
        message["id"] == id && message["result"]["tools"].is_array()
    });
    assert!(answered, "no tools/list response:\n{err}");
    // Only the trace: every line is a message.
    assert!(err.lines().all(|l| l.starts_with("-> ") || l.starts_with("<- ")), "{err}");

    // The flag is global: after the subcommand too. Without it, stderr stays empty.
    let (code, _, err) = run(&["list", "tools", "-v", "--", bin, "serve", "--stdio"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains(r#""method":"tools/list""#), "{err}");
    let (code, _, err) = run(&["list", "tools", "--", bin, "serve", "--stdio"]);
    assert_eq!((code, err.as_str()), (0, ""));
}

#[test]
fn verbose_shows_http_status_lines() {
    let server = serve_http(&[]);
    let url = server.url().to_owned();

    let (code, out, err) = run(&["-v", "call", "echo", "--arg", "text=over http", "--url", &url]);
    assert_eq!(code, 0, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(json["content"][0]["text"], "over http");
    let status = format!("HTTP POST {url} -> 200 OK");
    assert!(err.lines().any(|l| l.starts_with(&status)), "no {status:?}:\n{err}");
    assert!(err.lines().any(|l| l.starts_with("-> ") && l.contains("over http")), "{err}");
    assert!(err.lines().any(|l| l.starts_with("<- ") && l.contains("over http")), "{err}");

    // A legacy session: the GET stream and the DELETE show too.
    let (code, _, err) = run(&["-v", "list", "tools", "--protocol-version", "2025-06-18", "--url", &url]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.lines().any(|l| l.starts_with(&format!("HTTP GET {url} -> 200 OK (text/event-stream)"))),
        "{err}"
    );
    assert!(err.lines().any(|l| l.starts_with(&format!("HTTP DELETE {url} -> "))), "{err}");
}

/// Started by hand on a terminal, `serve --stdio` says what it is waiting for, and Ctrl-D
/// ends it.
#[cfg(unix)]
#[test]
fn serve_stdio_on_a_terminal_says_what_it_waits_for() {
    // Ctrl-D at the start of a line, once the note is shown: end of input. A server that never
    // says it (the bug) is stopped by the helper's watchdog, and the assertions then fail.
    let (text, status) =
        support::on_a_terminal_with_status(support::command(&["serve", "--stdio"]), &[("Ctrl-D", "\x04")]);
    assert!(text.contains("waiting for a client's JSON-RPC messages"), "{text:?}");
    assert!(status.success(), "{status:?}");
}
