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
use std::process::ExitCode;

use anyhow::{Context, anyhow, bail};
use serde_json::{Map, Value, json};
use tokio::io::AsyncWriteExt;

mod check;
mod http;

use crate::record::{FORMAT, FORMAT_VERSION};

#[derive(clap::Args, Debug)]
pub(crate) struct ReplayArgs {
    /// The recording.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Send the recorded client side to the server after `--` and report every answer that
    /// differs from the recorded one, instead of serving the recording.
    #[arg(long, requires = "command")]
    check: bool,
    /// Serve the recording over Streamable HTTP on ADDR (HOST:PORT, or PORT on 127.0.0.1; 0
    /// picks a free port and `listening on URL` says which) instead of stdio.
    #[arg(long, value_name = "ADDR", conflicts_with = "check")]
    http: Option<String>,
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
    crate::status::block_on("mcpkit replay", async {
        let entries = read(&args.file)?;
        if args.check {
            check::check(&args, &entries).await
        } else if let Some(addr) = &args.http {
            http::serve(addr, &entries).await
        } else {
            serve(&entries).await
        }
    })
}

/// The recorded answers, given out as requests come.
pub(crate) struct Replayer {
    answers: HashMap<String, VecDeque<Value>>,
    methods: std::collections::HashSet<String>,
}

impl Replayer {
    fn new(entries: &[Entry]) -> Self {
        let answers = answers(entries);
        let methods = answers.keys().map(|k| k.split(' ').next().unwrap_or_default().to_owned()).collect();
        Replayer { answers, methods }
    }

    /// The answer to `message`: the recorded one (each once, in order; the last one again after
    /// that), or an error; `None` for a notification or an answer, which get none.
    pub(crate) fn answer(&mut self, message: &Value) -> Option<Value> {
        let (Some(id), Some(method)) = (message.get("id"), message.get("method").and_then(Value::as_str))
        else {
            return None;
        };
        let answer = match self.answers.get_mut(&key(method, message.get("params"))) {
            Some(queue) if queue.len() > 1 => queue.pop_front(),
            Some(queue) => queue.front().cloned(),
            None => None,
        };
        let mut answer = match answer {
            Some(Value::Object(answer)) => answer,
            _ if method == "ping" => Map::from_iter([("result".to_owned(), json!({}))]),
            _ => {
                let (code, why) = if self.methods.contains(method) {
                    (-32602, format!("the recording has no answer to {method} with these params"))
                } else {
                    (-32601, format!("the recording has no {method} request"))
                };
                Map::from_iter([("error".to_owned(), json!({"code": code, "message": why}))])
            }
        };
        answer.insert("jsonrpc".into(), json!("2.0"));
        answer.insert("id".into(), id.clone());
        Some(Value::Object(answer))
    }
}

/// An error answer with no id: the message could not be read.
pub(crate) fn unreadable(code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}})
}

/// Serves the recording on stdin/stdout until stdin ends.
async fn serve(entries: &[Entry]) -> anyhow::Result<ExitCode> {
    let mut replayer = Replayer::new(entries);
    // Lines as a server reads them: bounded, a bad one answered and skipped.
    let mut input = mcp_stdio::FramedReader::new(tokio::io::stdin());
    let mut out = tokio::io::stdout();
    while let Some(frame) = input.next_frame().await {
        let answer = match frame {
            Ok(frame) => match serde_json::from_str::<Value>(frame.as_str()) {
                Ok(message) => replayer.answer(&message),
                Err(_) => Some(unreadable(-32700, "Parse error")),
            },
            Err(mcp_stdio::ReadError::Frame(e)) => {
                let code =
                    if matches!(e, mcp_stdio::FrameError::LineTooLong { .. }) { -32600 } else { -32700 };
                Some(unreadable(code, &e.to_string()))
            }
            Err(e) => return Err(e.into()),
        };
        if let Some(answer) = answer {
            out.write_all(format!("{answer}\n").as_bytes()).await?;
            out.flush().await?;
        }
    }
    Ok(ExitCode::SUCCESS)
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
