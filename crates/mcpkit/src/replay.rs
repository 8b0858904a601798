//! `mcpkit replay FILE`: a recording (`mcpkit record`, docs/RECORDING.md) served as a stdio
//! server — a mock for a host's tests — answering each request with the answer recorded for the
//! same method and params (`_meta` aside, and `initialize`/`server/discover` whatever the
//! client says of itself), so it speaks whatever era the recording does.
//!
//! `mcpkit replay --check FILE -- SERVER…`: the recorded client side sent again, in order, to a
//! live server, and every answer compared with the recorded one: a regression test for a
//! server's author. Exits 1 when an answer differs.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::time::Duration;

use anyhow::{Context, anyhow, bail};
use serde_json::{Map, Value, json};
use tokio::io::AsyncWriteExt;

use crate::record::{FORMAT, FORMAT_VERSION};
use crate::status::{Status, tag};

#[derive(clap::Args, Debug)]
pub(crate) struct ReplayArgs {
    /// The recording.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Send the recorded client side to the server after `--` and report every answer that
    /// differs from the recorded one, instead of serving the recording.
    #[arg(long, requires = "command")]
    check: bool,
    /// How long --check waits for each answer, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = 30.0)]
    timeout: f64,
    /// The live server's command line (stdio), after `--` (with --check).
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// One message of a recording.
#[derive(Debug, Clone)]
struct Entry {
    to_server: bool,
    message: Value,
}

/// The messages of the recording at `path`, in order (lines that are not messages skipped).
fn read(path: &Path) -> anyhow::Result<Vec<Entry>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    let (_, head) = lines.next().ok_or_else(|| anyhow!("{} is empty", path.display()))?;
    let head: Value =
        serde_json::from_str(head).with_context(|| format!("{}: line 1 is not JSON", path.display()))?;
    if head["format"] != FORMAT {
        bail!(
            "{} is not an mcpkit recording (its first line has no \"format\": \"{FORMAT}\")",
            path.display()
        );
    }
    if head["version"].as_u64() != Some(FORMAT_VERSION) {
        bail!(
            "{}: recording version {} (this mcpkit reads version {FORMAT_VERSION})",
            path.display(),
            head["version"]
        );
    }
    let mut entries = Vec::new();
    for (n, line) in lines {
        let entry: Value = serde_json::from_str(line)
            .with_context(|| format!("{}: line {} is not JSON", path.display(), n + 1))?;
        let to_server = match entry["dir"].as_str() {
            Some("to-server") => true,
            Some("to-client") => false,
            _ => bail!("{}: line {}: \"dir\" must be \"to-server\" or \"to-client\"", path.display(), n + 1),
        };
        if let Some(message) = entry.get("message") {
            entries.push(Entry { to_server, message: message.clone() });
        }
    }
    Ok(entries)
}

/// What a request is matched by: its method, and its params without `_meta` (nothing of them
/// for the handshake, whose params describe the client).
fn key(method: &str, params: Option<&Value>) -> String {
    if matches!(method, "initialize" | "server/discover") {
        return method.to_owned();
    }
    // No params and params of `_meta` alone are the same request.
    let mut params = match params {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(params) => params.clone(),
    };
    if let Value::Object(map) = &mut params {
        map.remove("_meta");
    }
    // serde_json's maps are sorted: equal params print alike.
    format!("{method} {params}")
}

/// The recorded answers, by request key: each answer (its `result` or `error` member) in order.
fn answers(entries: &[Entry]) -> HashMap<String, VecDeque<Value>> {
    let mut requests: HashMap<String, String> = HashMap::new();
    let mut answers: HashMap<String, VecDeque<Value>> = HashMap::new();
    for entry in entries {
        let m = &entry.message;
        let id = m.get("id").map(Value::to_string);
        match (entry.to_server, m.get("method").and_then(Value::as_str), id) {
            (true, Some(method), Some(id)) => {
                requests.insert(id, key(method, m.get("params")));
            }
            (false, None, Some(id)) => {
                if let Some(key) = requests.remove(&id) {
                    let mut answer = m.as_object().cloned().unwrap_or_default();
                    answer.remove("id");
                    answer.remove("jsonrpc");
                    answers.entry(key).or_default().push_back(Value::Object(answer));
                }
            }
            _ => {}
        }
    }
    answers
}

pub(crate) fn run(args: ReplayArgs) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("mcpkit replay: {e}");
            return ExitCode::from(2);
        }
    };
    let result = match read(&args.file) {
        Ok(entries) if args.check => runtime.block_on(check(&args, &entries)),
        Ok(entries) => runtime.block_on(serve(&entries)),
        Err(e) => Err(e),
    };
    runtime.shutdown_timeout(Duration::from_millis(100));
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("mcpkit replay: {}", crate::client::one_line(&e));
            crate::status::of(&e).exit_code()
        }
    }
}

/// Serves the recording on stdin/stdout until stdin ends.
async fn serve(entries: &[Entry]) -> anyhow::Result<ExitCode> {
    let mut answers = answers(entries);
    let recorded_methods: std::collections::HashSet<String> =
        answers.keys().map(|k| k.split(' ').next().unwrap_or_default().to_owned()).collect();
    // Lines as a server reads them: bounded, a bad one answered and skipped.
    let mut input = mcp_stdio::FramedReader::new(tokio::io::stdin());
    let mut out = tokio::io::stdout();
    while let Some(frame) = input.next_frame().await {
        let frame = match frame {
            Ok(frame) => frame,
            Err(mcp_stdio::ReadError::Frame(e)) => {
                let code =
                    if matches!(e, mcp_stdio::FrameError::LineTooLong { .. }) { -32600 } else { -32700 };
                let error =
                    json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": e.to_string()}});
                out.write_all(format!("{error}\n").as_bytes()).await?;
                out.flush().await?;
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let Ok(request) = serde_json::from_str::<Value>(frame.as_str()) else {
            let error =
                json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}});
            out.write_all(format!("{error}\n").as_bytes()).await?;
            out.flush().await?;
            continue;
        };
        let (Some(id), Some(method)) = (request.get("id"), request.get("method").and_then(Value::as_str))
        else {
            // A notification, or an answer: nothing to say.
            continue;
        };
        let key = key(method, request.get("params"));
        let answer = match answers.get_mut(&key) {
            // Each recorded answer once, in order; the last one again after that.
            Some(queue) if queue.len() > 1 => queue.pop_front(),
            Some(queue) => queue.front().cloned(),
            None => None,
        };
        let mut message = match answer {
            Some(Value::Object(answer)) => answer,
            _ if method == "ping" => Map::from_iter([("result".to_owned(), json!({}))]),
            _ => {
                let (code, why) = if recorded_methods.contains(method) {
                    (-32602, format!("the recording has no answer to {method} with these params"))
                } else {
                    (-32601, format!("the recording has no {method} request"))
                };
                Map::from_iter([("error".to_owned(), json!({"code": code, "message": why}))])
            }
        };
        message.insert("jsonrpc".into(), json!("2.0"));
        message.insert("id".into(), id.clone());
        out.write_all(format!("{}\n", Value::Object(message)).as_bytes()).await?;
        out.flush().await?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The differences between a recorded and a live value, as `path: recorded …, now …` lines.
fn differences(path: &str, recorded: &Value, live: &Value, out: &mut Vec<String>) {
    match (recorded, live) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let p = format!("{path}/{}", k.replace('~', "~0").replace('/', "~1"));
                match (a.get(k), b.get(k)) {
                    (Some(x), Some(y)) => differences(&p, x, y, out),
                    (Some(x), None) => out.push(format!("{p}: recorded {x}, now absent")),
                    (None, Some(y)) => out.push(format!("{p}: absent then, now {y}")),
                    (None, None) => {}
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for i in 0..a.len().max(b.len()) {
                let p = format!("{path}/{i}");
                match (a.get(i), b.get(i)) {
                    (Some(x), Some(y)) => differences(&p, x, y, out),
                    (Some(x), None) => out.push(format!("{p}: recorded {x}, now absent")),
                    (None, Some(y)) => out.push(format!("{p}: absent then, now {y}")),
                    (None, None) => {}
                }
            }
        }
        (a, b) if a != b => {
            out.push(format!("{}: recorded {a}, now {b}", if path.is_empty() { "/" } else { path }))
        }
        _ => {}
    }
}

/// Sends the recorded client side to the live server, comparing answers.
async fn check(args: &ReplayArgs, entries: &[Entry]) -> anyhow::Result<ExitCode> {
    let wait = Duration::try_from_secs_f64(args.timeout)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| tag(Status::Usage, anyhow!("--timeout must be a positive number of seconds")))?;
    let (program, rest) = args.command.split_first().context("no server command after --")?;
    let mut child = tokio::process::Command::new(program)
        .args(rest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| tag(Status::Connection, anyhow!("cannot start {program:?}: {e}")))?;
    let mut to_server = child.stdin.take().context("the server's stdin")?;
    let mut from_server = mcp_stdio::FramedReader::new(child.stdout.take().context("the server's stdout")?);
    // The recorded answer to each recorded request id.
    let mut recorded: HashMap<String, Value> = HashMap::new();
    for entry in entries.iter().filter(|e| !e.to_server) {
        if let (Some(id), None) = (entry.message.get("id"), entry.message.get("method")) {
            recorded.insert(id.to_string(), entry.message.clone());
        }
    }
    let (mut requests, mut differing) = (0u32, 0u32);
    for entry in entries.iter().filter(|e| e.to_server) {
        let message = &entry.message;
        let method = message.get("method").and_then(Value::as_str);
        let id = message.get("id");
        if method.is_none() {
            // An answer the host gave to a server request of the recording: the live server
            // asks its own, answered below.
            continue;
        }
        to_server.write_all(format!("{message}\n").as_bytes()).await?;
        to_server.flush().await?;
        let (Some(id), Some(method)) = (id, method) else { continue };
        requests += 1;
        let live = loop {
            let frame = tokio::time::timeout(wait, from_server.next_frame())
                .await
                .map_err(|_| tag(Status::Connection, anyhow!("no answer to {method} within {wait:?}")))?
                .ok_or_else(|| {
                    tag(Status::Connection, anyhow!("the server exited before answering {method}"))
                })?;
            let frame = match frame {
                Ok(frame) => frame,
                // A line that is no message: not the answer.
                Err(mcp_stdio::ReadError::Frame(_)) => continue,
                Err(e) => return Err(anyhow::Error::new(e).context("reading the server")),
            };
            let Ok(got) = serde_json::from_str::<Value>(frame.as_str()) else { continue };
            match (got.get("id"), got.get("method")) {
                (Some(got_id), None) if got_id == id => break got,
                (Some(server_id), Some(_)) => {
                    // A request of the server's: nobody here to answer it.
                    let refusal = json!({"jsonrpc": "2.0", "id": server_id, "error": {"code": -32601, "message": "mcpkit replay --check answers no server requests"}});
                    to_server.write_all(format!("{refusal}\n").as_bytes()).await?;
                    to_server.flush().await?;
                }
                _ => {}
            }
        };
        let Some(then) = recorded.get(&id.to_string()) else {
            println!("new     {method}: not answered in the recording");
            continue;
        };
        let mut found = Vec::new();
        let strip = |v: &Value| {
            let mut v = v.clone();
            if let Value::Object(map) = &mut v {
                map.remove("id");
                map.remove("jsonrpc");
            }
            v
        };
        differences("", &strip(then), &strip(&live), &mut found);
        let what = match message.pointer("/params/name").and_then(Value::as_str) {
            Some(name) => format!("{method} {name}"),
            None => method.to_owned(),
        };
        if found.is_empty() {
            println!("same    {what}");
        } else {
            differing += 1;
            println!("differs {what}");
            for difference in found {
                println!("  {difference}");
            }
        }
    }
    drop(to_server);
    let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
    println!("{requests} requests, {differing} answered differently");
    Ok(if differing == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_match_by_method_and_params_but_not_meta() {
        let a = key(
            "tools/call",
            Some(&json!({"name": "echo", "arguments": {"b": 1, "a": 2}, "_meta": {"x": 1}})),
        );
        let b = key("tools/call", Some(&json!({"arguments": {"a": 2, "b": 1}, "name": "echo"})));
        assert_eq!(a, b);
        assert_ne!(a, key("tools/call", Some(&json!({"name": "echo"}))));
        assert_eq!(key("initialize", Some(&json!({"clientInfo": {"name": "x"}}))), "initialize");
    }

    #[test]
    fn differences_are_named_by_path() {
        let mut found = Vec::new();
        differences(
            "",
            &json!({"result": {"content": [{"text": "hi"}], "gone": 1}}),
            &json!({"result": {"content": [{"text": "ho"}, {"text": "new"}]}}),
            &mut found,
        );
        assert_eq!(
            found,
            [
                "/result/content/0/text: recorded \"hi\", now \"ho\"",
                "/result/content/1: absent then, now {\"text\":\"new\"}",
                "/result/gone: recorded 1, now absent",
            ]
        );
    }

    #[test]
    fn answers_are_kept_in_order_by_request() {
        let entries = [
            Entry { to_server: true, message: json!({"id": 1, "method": "tools/list"}) },
            Entry { to_server: false, message: json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}) },
            Entry {
                to_server: true,
                message: json!({"id": 2, "method": "tools/list", "params": {"_meta": {}}}),
            },
            Entry { to_server: false, message: json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": [1]}}) },
        ];
        let answers = answers(&entries);
        let queue = &answers[&key("tools/list", None)];
        assert_eq!(queue.len(), 2, "no params and params of _meta alone are one request: {answers:?}");
        assert_eq!(queue[1], json!({"result": {"tools": [1]}}));
    }
}
