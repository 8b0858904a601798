//! `mcpkit replay --check`: the recorded client side sent to a live server, each answer
//! compared with the recorded one.

use std::collections::HashMap;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, anyhow};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;

use super::{Entry, ReplayArgs};
use crate::status::{Status, tag};

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
pub(super) async fn check(args: &ReplayArgs, entries: &[Entry]) -> anyhow::Result<ExitCode> {
    let wait = Duration::try_from_secs_f64(args.timeout)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| tag(Status::Usage, anyhow!("--timeout must be a positive number of seconds")))?;
    let mut child = crate::record::spawn(&args.command)?;
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
}
