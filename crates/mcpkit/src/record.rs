//! `mcpkit record FILE -- SERVER…`: a transparent stdio proxy in front of a server that writes
//! every message of the session, both ways, with its time, to FILE as JSON Lines (the format
//! is docs/RECORDING.md's). A host runs it in place of the server (its `mcpServers` entry's
//! `command` becomes `mcpkit`, `args` `["record", "FILE", "--", …]`); the host's messages and
//! the server's answers pass through unchanged, and the server's stderr is the proxy's.
//!
//! The recording keeps messages, never the environment or headers: a secret the host gives the
//! server through its environment is not written.

use std::path::PathBuf;
use std::process::{ExitCode, Stdio};
use std::time::Instant;

use anyhow::Context;
use serde_json::{Value, json};

mod http;
use tokio::io::{AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// The first line's `format` member, and its version.
pub(crate) const FORMAT: &str = "mcpkit-recording";
pub(crate) const FORMAT_VERSION: u64 = 1;

#[derive(clap::Args, Debug)]
pub(crate) struct RecordArgs {
    /// The recording to write (JSON Lines; replaced if it exists).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// Record a Streamable HTTP server instead: mcpkit is then a stdio server for the host and
    /// forwards each message to URL.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    url: Option<String>,
    /// With --url, send this header with every request, `'NAME: VALUE'` (repeatable; headers are
    /// never written to the recording).
    #[arg(long = "header", value_name = "'NAME: VALUE'", value_parser = crate::target::parse_header, requires = "url")]
    headers: Vec<(String, String)>,
    /// The server command line (stdio), after `--`. It gets mcpkit's whole environment, as it
    /// would from the host.
    #[arg(last = true, required_unless_present = "url", value_name = "COMMAND")]
    command: Vec<String>,
}

/// Which way a message went.
#[derive(Clone, Copy)]
pub(crate) enum Way {
    /// Host (client) to server.
    ToServer,
    /// Server to host (client).
    ToClient,
}

impl Way {
    fn as_str(self) -> &'static str {
        match self {
            Way::ToServer => "to-server",
            Way::ToClient => "to-client",
        }
    }
}

/// One line of the recording for `line` sent `way` at `ms` after the start: the message as
/// JSON, or (not JSON) as `raw` text.
fn entry(ms: f64, way: Way, line: &str) -> String {
    let ms = (ms * 1000.0).round() / 1000.0;
    let dir = way.as_str();
    // The message as it was sent, byte for byte (when it is JSON at all).
    match serde_json::from_str::<&serde_json::value::RawValue>(line) {
        Ok(message) => format!("{{\"ms\":{ms},\"dir\":\"{dir}\",\"message\":{}}}\n", message.get().trim()),
        Err(_) => format!("{}\n", json!({ "ms": ms, "dir": dir, "raw": line })),
    }
}

pub(crate) fn run(args: RecordArgs) -> ExitCode {
    // Reading the host's stdin is a blocking read that nothing interrupts: not waited for.
    crate::status::block_on("mcpkit record", record(args))
}

/// The recording being written: lines go through a bounded channel to one writer task, in the
/// order they passed (a full disk slows the session rather than growing memory).
pub(crate) struct Recording {
    pub(crate) lines: mpsc::Sender<String>,
    pub(crate) started: Instant,
    writer: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Recording {
    /// Creates `path` and writes its first line: `transport` and `server` say what was recorded.
    pub(crate) async fn create(
        path: &std::path::Path,
        transport: &str,
        server: Value,
    ) -> anyhow::Result<Recording> {
        let file = tokio::fs::File::create(path)
            .await
            .with_context(|| format!("cannot create {}", path.display()))?;
        let unix_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or_default();
        let (lines, mut written) = mpsc::channel::<String>(1024);
        let head = json!({
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "transport": transport,
            "server": server,
            "startedUnixMs": unix_ms,
        });
        lines.send(format!("{head}\n")).await.ok();
        let writer = tokio::spawn(async move {
            let mut file = tokio::io::BufWriter::new(file);
            while let Some(line) = written.recv().await {
                file.write_all(line.as_bytes()).await?;
                if written.is_empty() {
                    file.flush().await?;
                }
            }
            file.flush().await
        });
        Ok(Recording { lines, started: Instant::now(), writer })
    }

    /// Records one message (a line of text) sent `way` now.
    pub(crate) async fn message(&self, way: Way, text: &str) {
        record_line(&self.lines, self.started, way, text.as_bytes(), text.len()).await;
    }

    /// Waits until every line is written.
    pub(crate) async fn finish(self) -> anyhow::Result<()> {
        drop(self.lines);
        self.writer.await.context("the recording's writer")?.context("cannot write the recording")
    }
}

async fn record(args: RecordArgs) -> anyhow::Result<ExitCode> {
    if let Some(url) = &args.url {
        return http::record(&args.file, url, &args.headers).await;
    }
    let mut child = spawn(&args.command)?;
    let recording = Recording::create(&args.file, "stdio", json!(args.command)).await?;
    let (lines, started) = (recording.lines.clone(), recording.started);
    let server_in = child.stdin.take().context("the server's stdin")?;
    let server_out = child.stdout.take().context("the server's stdout")?;
    let to_server = pump(tokio::io::stdin(), server_in, Way::ToServer, lines.clone(), started);
    let to_client = pump(server_out, tokio::io::stdout(), Way::ToClient, lines, started);
    let to_server = tokio::spawn(to_server);
    // The session ends when the server's output does (it exited, or closed it after the host
    // closed its input).
    let _ = to_client.await;
    to_server.abort();
    let status = match tokio::time::timeout(std::time::Duration::from_secs(5), child.wait()).await {
        Ok(status) => status.ok(),
        Err(_) => {
            let _ = child.kill().await;
            None
        }
    };
    recording.finish().await?;
    Ok(match status.and_then(|s| s.code()) {
        Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        None => ExitCode::from(1),
    })
}

/// Starts the server `command` with piped stdin and stdout, its stderr ours; killed on drop.
pub(crate) fn spawn(command: &[String]) -> anyhow::Result<tokio::process::Child> {
    let (program, rest) = command.split_first().context("no server command after --")?;
    tokio::process::Command::new(program)
        .args(rest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| {
            crate::status::tag(
                crate::status::Status::Connection,
                anyhow::anyhow!("cannot start {program:?}: {e}"),
            )
        })
}

/// Copies bytes from `from` to `to` as they come (nothing held back), and sends each line to
/// the recording; a line longer than [`mcp_stdio::DEFAULT_MAX_LINE`] is recorded by its length
/// alone, so memory stays bounded whatever passes.
async fn pump<R, W>(
    from: R,
    mut to: W,
    way: Way,
    lines: mpsc::Sender<String>,
    started: Instant,
) -> std::io::Result<()>
where
    R: tokio::io::AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut from = BufReader::with_capacity(mcp_stdio::READ_CHUNK, from);
    let mut line = Vec::new();
    let mut length = 0usize;
    loop {
        let chunk = from.fill_buf().await?;
        if chunk.is_empty() {
            if length > 0 {
                record_line(&lines, started, way, &line, length).await;
            }
            // The end of this direction: the other side sees it too.
            to.shutdown().await.ok();
            return Ok(());
        }
        // Each line that ends here is recorded before its last byte goes on: the peer cannot
        // answer a message before it is in the recording, so an answer is never written ahead
        // of its request (the replay pairs them in the order the file gives).
        let mut rest = chunk;
        while !rest.is_empty() {
            let (piece, ends) = match rest.iter().position(|&b| b == b'\n') {
                Some(at) => (&rest[..at], true),
                None => (rest, false),
            };
            length += piece.len();
            if line.len() + piece.len() <= mcp_stdio::DEFAULT_MAX_LINE {
                line.extend_from_slice(piece);
            }
            rest = &rest[piece.len() + usize::from(ends)..];
            if ends {
                record_line(&lines, started, way, &line, length).await;
                line.clear();
                length = 0;
            }
        }
        to.write_all(chunk).await?;
        to.flush().await?;
        let n = chunk.len();
        from.consume(n);
    }
}

/// Sends one line of `length` bytes (`line` holds it unless it was too long) to the recording.
async fn record_line(lines: &mpsc::Sender<String>, started: Instant, way: Way, line: &[u8], length: usize) {
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    let entry = if length > line.len() {
        let ms = (ms * 1000.0).round() / 1000.0;
        format!("{}\n", json!({ "ms": ms, "dir": way.as_str(), "omitted": length }))
    } else {
        let text = String::from_utf8_lossy(line);
        let text = text.trim_end_matches('\r');
        if text.trim().is_empty() {
            return;
        }
        entry(ms, way, text)
    };
    // The session waits for room rather than the recording growing without bound.
    let _ = lines.send(entry).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn bytes_pass_unchanged_and_a_huge_line_is_recorded_by_its_length() {
        let long = "x".repeat(mcp_stdio::DEFAULT_MAX_LINE + 10);
        let input = format!("{{\"jsonrpc\":\"2.0\",\"method\":\"a\"}}\r\n{long}\nnot json");
        let (lines, mut recorded) = mpsc::channel(16);
        let mut out = Vec::new();
        pump(input.as_bytes(), &mut out, Way::ToClient, lines, Instant::now()).await.unwrap();
        assert_eq!(out, input.as_bytes(), "passed through as it came");
        let mut entries = Vec::new();
        while let Ok(line) = recorded.try_recv() {
            entries.push(serde_json::from_str::<Value>(&line).unwrap());
        }
        assert_eq!(entries.len(), 3, "{entries:?}");
        assert_eq!(entries[0]["message"], json!({"jsonrpc": "2.0", "method": "a"}));
        assert_eq!(entries[1]["omitted"], long.len());
        assert_eq!(entries[2]["raw"], "not json");
    }

    /// A sink that, at each write, takes what the recording holds so far.
    struct Witness {
        recorded: mpsc::Receiver<String>,
        seen: Vec<(Vec<u8>, usize)>,
    }

    impl AsyncWrite for Witness {
        fn poll_write(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            buf: &[u8],
        ) -> std::task::Poll<std::io::Result<usize>> {
            let mut held = 0;
            while self.recorded.try_recv().is_ok() {
                held += 1;
            }
            self.seen.push((buf.to_vec(), held));
            std::task::Poll::Ready(Ok(buf.len()))
        }

        fn poll_flush(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            std::task::Poll::Ready(Ok(()))
        }

        fn poll_shutdown(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            std::task::Poll::Ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn a_message_is_recorded_before_it_is_passed_on() {
        // Were it passed on first, the peer could answer it, and the answer be recorded, before
        // the message itself: the replay would find an answer with no request.
        let (lines, recorded) = mpsc::channel(16);
        let mut witness = Witness { recorded, seen: Vec::new() };
        let input = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"}\n";
        pump(input.as_bytes(), &mut witness, Way::ToServer, lines, Instant::now()).await.unwrap();
        assert_eq!(witness.seen, vec![(input.as_bytes().to_vec(), 1)], "the line was in the recording first");
    }

    #[test]
    fn entries_keep_the_message_or_its_text() {
        let e: Value = serde_json::from_str(&entry(
            1.23456,
            Way::ToServer,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        ))
        .unwrap();
        assert_eq!(
            e,
            json!({"ms": 1.235, "dir": "to-server", "message": {"jsonrpc": "2.0", "id": 1, "method": "ping"}})
        );
        let e: Value = serde_json::from_str(&entry(0.0, Way::ToClient, "Server started")).unwrap();
        assert_eq!(e, json!({"ms": 0.0, "dir": "to-client", "raw": "Server started"}));
    }
}
