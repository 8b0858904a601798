//! `mcpkit check`: framing and envelope diagnostics for a stdio transcript.

use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use mcp_stdio::{FrameError, LineDecoder};
use mcp_types::{DecodeOptions, Incoming, Message, ProtocolVersion, ResponseId};
use serde_json::json;

/// Arguments of `mcpkit check`.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Read this file instead of stdin.
    file: Option<PathBuf>,
    /// The protocol revision to apply (decides whether batches are allowed).
    #[arg(long, default_value = "2026-07-28", value_parser = parse_version)]
    protocol_version: ProtocolVersion,
    /// Refuse responses, as a server does on modern stdio.
    #[arg(long)]
    requests_only: bool,
    /// The line limit in bytes.
    #[arg(long, default_value_t = mcp_stdio::DEFAULT_MAX_LINE)]
    max_line: usize,
}

fn parse_version(s: &str) -> Result<ProtocolVersion, String> {
    s.parse().map_err(|e: mcp_types::version::UnknownVersion| e.to_string())
}

pub(crate) fn run(args: Args) -> ExitCode {
    let input: Box<dyn Read> = match &args.file {
        Some(path) => match File::open(path) {
            Ok(f) => Box::new(f),
            Err(e) => {
                eprintln!("mcpkit: {}: {e}", path.display());
                return ExitCode::from(2);
            }
        },
        None => Box::new(io::stdin().lock()),
    };
    match check(input, &args, &mut BufWriter::new(io::stdout().lock())) {
        Ok(0) => ExitCode::SUCCESS,
        Ok(_) => ExitCode::from(1),
        Err(e) => {
            eprintln!("mcpkit: {e}");
            ExitCode::from(2)
        }
    }
}

/// Reads everything, writes one report line per item, returns how many were malformed.
fn check(mut input: impl Read, args: &Args, out: &mut impl Write) -> io::Result<usize> {
    let options = DecodeOptions::new()
        .with_allow_batch(args.protocol_version.allows_batches())
        .with_accept_responses(!args.requests_only);
    let mut decoder = LineDecoder::new(args.max_line);
    let mut chunk = vec![0u8; mcp_stdio::READ_CHUNK];
    let mut bad = 0;
    let mut eof = false;
    while !eof {
        let n = input.read(&mut chunk)?;
        if n == 0 {
            eof = true;
        } else {
            decoder.extend(&chunk[..n]);
        }
        loop {
            let item = if eof { decoder.decode_eof() } else { decoder.decode() };
            let Some(item) = item else { break };
            let report = match item {
                Ok(frame) => match mcp_types::decode(frame.as_bytes(), options) {
                    Ok(Incoming::Single(m)) => describe(&m),
                    Ok(Incoming::Batch(items)) => {
                        let reports: Vec<_> = items
                            .iter()
                            .map(|i| match i {
                                Ok(m) => describe(m),
                                Err(e) => {
                                    bad += 1;
                                    error_report(e.code(), &e.detail)
                                }
                            })
                            .collect();
                        json!({ "batch": reports })
                    }
                    Err(e) => {
                        bad += 1;
                        error_report(e.code(), &e.detail)
                    }
                },
                Err(e) => {
                    bad += 1;
                    let code = match e {
                        FrameError::LineTooLong { .. } => mcp_types::code::INVALID_REQUEST,
                        FrameError::ByteOrderMark | FrameError::InvalidUtf8 { .. } => {
                            mcp_types::code::PARSE_ERROR
                        }
                        // A refusal a later mcp-stdio adds (non-exhaustive).
                        _ => mcp_types::code::INVALID_REQUEST,
                    };
                    error_report(code, &e.to_string())
                }
            };
            serde_json::to_writer(&mut *out, &report)?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()?;
    Ok(bad)
}

fn describe(m: &Message) -> serde_json::Value {
    match m {
        Message::Request(r) => json!({ "kind": "request", "id": r.id, "method": r.method }),
        Message::Notification(n) => json!({ "kind": "notification", "method": n.method }),
        Message::Response(r) => {
            let id = match &r.id {
                ResponseId::Id(id) => json!(id),
                _ => serde_json::Value::Null,
            };
            match &r.result {
                Ok(_) => json!({ "kind": "result", "id": id }),
                Err(e) => json!({ "kind": "error", "id": id, "code": e.code }),
            }
        }
    }
}

fn error_report(code: i64, detail: &str) -> serde_json::Value {
    json!({ "kind": "malformed", "code": code, "detail": detail })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_check(input: &str, version: ProtocolVersion) -> (usize, Vec<serde_json::Value>) {
        let args = Args { file: None, protocol_version: version, requests_only: false, max_line: 64 };
        let mut out = Vec::new();
        let bad = check(input.as_bytes(), &args, &mut out).unwrap();
        let lines =
            String::from_utf8(out).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        (bad, lines)
    }

    #[test]
    fn reports_each_message_and_each_error() {
        let input = concat!(
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n",
            "\n",
            "not json\n",
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n",
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":{\"pad\":\"................................................\"}}\n",
            "{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{}}"
        );
        let (bad, lines) = run_check(input, ProtocolVersion::V2026_07_28);
        assert_eq!(bad, 2);
        assert_eq!(lines.len(), 5);
        assert_eq!(lines[0], json!({"kind":"request","id":1,"method":"tools/list"}));
        assert_eq!(lines[1]["code"], -32700);
        assert_eq!(lines[2], json!({"kind":"notification","method":"notifications/initialized"}));
        assert_eq!(lines[3]["code"], -32600, "over-long line");
        assert_eq!(lines[4], json!({"kind":"result","id":"a"}));
    }

    #[test]
    fn batches_follow_the_revision() {
        let input = "[{\"jsonrpc\":\"2.0\",\"method\":\"a\"}]\n";
        let (bad, lines) = run_check(input, ProtocolVersion::V2025_03_26);
        assert_eq!(bad, 0);
        assert_eq!(lines[0]["batch"][0]["method"], "a");
        let (bad, lines) = run_check(input, ProtocolVersion::V2025_06_18);
        assert_eq!(bad, 1);
        assert_eq!(lines[0]["code"], -32600);
    }
}
