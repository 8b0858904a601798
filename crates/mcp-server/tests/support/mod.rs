//! An in-memory client for the server: lines in, lines out, every server message validated
//! against the schema of the revision in use.
#![allow(dead_code, unreachable_pub)]

use std::time::Duration;

use mcp_server::Server;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, WriteHalf};

pub const MODERN: &str = "2026-07-28";
pub const LEGACY: &str = "2025-11-25";

/// `_meta` of a modern request.
pub fn meta(caps: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "test-client", "version": "1.0.0"},
        "io.modelcontextprotocol/clientCapabilities": caps,
    })
}

pub struct Peer {
    writer: WriteHalf<DuplexStream>,
    lines: Lines<BufReader<tokio::io::ReadHalf<DuplexStream>>>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
    /// The revision server messages are validated against.
    pub revision: &'static str,
}

impl Peer {
    pub fn start(server: Server) -> Self {
        let (client, server_side) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server_side);
        let task = tokio::spawn(async move { server.serve_io(server_read, server_write).await });
        let (read, writer) = tokio::io::split(client);
        Peer { writer, lines: BufReader::new(read).lines(), task, revision: MODERN }
    }

    pub async fn send_raw(&mut self, line: &str) {
        self.writer.write_all(line.as_bytes()).await.unwrap();
        self.writer.write_all(b"\n").await.unwrap();
    }

    pub async fn send(&mut self, message: Value) {
        self.send_raw(&message.to_string()).await;
    }

    /// The next line from the server, unparsed.
    pub async fn recv_raw(&mut self) -> String {
        tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
            .await
            .expect("the server did not answer in time")
            .unwrap()
            .expect("the server closed its output")
    }

    /// The next message from the server, validated against the schema.
    pub async fn recv(&mut self) -> Value {
        let line = self.recv_raw().await;
        let value: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON: {e}: {line}"));
        validate(self.revision, &value);
        value
    }

    /// No message arrives within `wait`.
    pub async fn expect_silence(&mut self, wait: Duration) {
        if let Ok(line) = tokio::time::timeout(wait, self.lines.next_line()).await {
            panic!("unexpected message: {line:?}");
        }
    }

    /// Sends a request and returns its response (skipping nothing: the next message must be it).
    pub async fn request(&mut self, id: Value, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        self.recv().await
    }

    pub async fn close(mut self) {
        // End of input (a split duplex only closes when both halves go; shutdown says EOF).
        self.writer.shutdown().await.unwrap();
        tokio::time::timeout(Duration::from_secs(5), self.task)
            .await
            .expect("the server did not stop at end of input")
            .unwrap()
            .unwrap();
    }

    pub async fn initialize(&mut self, caps: Value) -> Value {
        self.revision = LEGACY;
        let r = self
            .request(
                json!(0),
                "initialize",
                json!({"protocolVersion": LEGACY, "capabilities": caps, "clientInfo": {"name": "t", "version": "1"}}),
            )
            .await;
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        r
    }
}

/// Validates a server message against the revision's schema.
pub fn validate(revision: &str, message: &Value) {
    mcp_testkit::assert_valid_message(revision, message);
}

/// Validates a result against a typed result definition.
pub fn validate_result(revision: &str, def: &str, response: &Value) {
    mcp_testkit::assert_valid(revision, def, &response["result"]);
}
