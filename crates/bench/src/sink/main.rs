//! `mcp-otlp-sink`: an OTLP/HTTP collector that keeps nothing, for `scripts/bench-observability.sh`.
//!
//! It accepts HTTP/1.1 connections, reads each request's body (its `Content-Length`), and
//! answers `200` with an empty body, keeping the connection open as a collector does. What it
//! measures is the server that exports to it, so it does as little as it can: one thread, no
//! HTTP library, no decoding. A slow sink (the Python one this replaces took about 0.4 ms to
//! read a batch of 512 spans) makes the exporter wait with a full socket buffer and be woken
//! again and again, which is a cost of the sink, not of the server's tracing.
//!
//! On standard output it prints `listening ADDR` once bound, and on `SIGTERM` or `SIGINT` the
//! requests and body bytes it took (`requests N bytes M`), so a benchmark can tell that the
//! exports arrived.
//!
//! ```text
//! mcp-otlp-sink --listen 127.0.0.1:4318
//! ```

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use clap::Parser;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[derive(Parser, Debug)]
#[command(name = "mcp-otlp-sink", about = "Take OTLP/HTTP exports, answer 200, keep nothing")]
struct Cli {
    /// Where to listen (port 0: any free one, printed on standard output).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    listen: SocketAddr,
}

/// A request head larger than this is refused (the connection closed).
const MAX_HEAD: usize = 16 * 1024;
/// A body larger than this is refused (the connection closed); a batch of 512 spans is ~130 KB.
const MAX_BODY: usize = 64 * 1024 * 1024;

#[derive(Default)]
struct Taken {
    requests: AtomicU64,
    bytes: AtomicU64,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_io().enable_time().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("mcp-otlp-sink: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        let listener = match TcpListener::bind(cli.listen).await {
            Ok(listener) => listener,
            Err(e) => {
                eprintln!("mcp-otlp-sink: cannot listen on {}: {e}", cli.listen);
                return ExitCode::FAILURE;
            }
        };
        match listener.local_addr() {
            Ok(addr) => println!("listening {addr}"),
            Err(e) => {
                eprintln!("mcp-otlp-sink: {e}");
                return ExitCode::FAILURE;
            }
        }
        let taken = Arc::new(Taken::default());
        let stop = stopped();
        tokio::pin!(stop);
        loop {
            tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        let _ = stream.set_nodelay(true);
                        tokio::spawn(serve(stream, taken.clone()));
                    }
                    Err(e) => eprintln!("mcp-otlp-sink: accept: {e}"),
                },
                () = &mut stop => break,
            }
        }
        println!(
            "requests {} bytes {}",
            taken.requests.load(Ordering::Relaxed),
            taken.bytes.load(Ordering::Relaxed)
        );
        ExitCode::SUCCESS
    })
}

/// Resolves on the first `SIGTERM` or `SIGINT`.
async fn stopped() {
    let Ok(mut term) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}

/// Serves one connection's requests until it closes or sends what cannot be read.
async fn serve(mut stream: TcpStream, taken: Arc<Taken>) {
    const OK: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
    let mut buf = Vec::with_capacity(64 * 1024);
    loop {
        // The head: read until its blank line.
        let head_end = loop {
            if let Some(end) = find(&buf, b"\r\n\r\n") {
                break end + 4;
            }
            if buf.len() > MAX_HEAD || !fill(&mut stream, &mut buf).await {
                return;
            }
        };
        let Some(length) = content_length(&buf[..head_end]) else { return };
        if length > MAX_BODY {
            return;
        }
        // The body: whatever of it came with the head, then the rest.
        while buf.len() < head_end + length {
            if !fill(&mut stream, &mut buf).await {
                return;
            }
        }
        buf.drain(..head_end + length);
        taken.requests.fetch_add(1, Ordering::Relaxed);
        taken.bytes.fetch_add(length as u64, Ordering::Relaxed);
        if stream.write_all(OK).await.is_err() {
            return;
        }
    }
}

/// Reads more of the connection into `buf`; false at its end or on an error.
async fn fill(stream: &mut TcpStream, buf: &mut Vec<u8>) -> bool {
    if buf.capacity() - buf.len() < 16 * 1024 {
        buf.reserve(64 * 1024);
    }
    matches!(stream.read_buf(buf).await, Ok(n) if n > 0)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The head's `Content-Length` (0 when it has none; `None` when it is not a number or the
/// body is chunked, which an OTLP exporter does not send).
fn content_length(head: &[u8]) -> Option<usize> {
    let head = std::str::from_utf8(head).ok()?;
    let mut length = Some(0);
    for line in head.split("\r\n").skip(1) {
        let Some((name, value)) = line.split_once(':') else { continue };
        if name.eq_ignore_ascii_case("content-length") {
            length = value.trim().parse().ok();
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            return None;
        }
    }
    length
}
