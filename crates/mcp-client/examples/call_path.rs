//! The client's call path alone, for counting what one call costs: `N` sequential
//! `call_tool("echo", arguments)` calls over an in-memory transport that answers each at once
//! (no process, no socket, no server library), with an argument object of 100 rows of 2 keys
//! (the shape whose copies show up: each deep copy is some 300 allocations).
//!
//! Count heap allocations per call from the difference of two runs under valgrind:
//!
//! ```text
//! cargo build -p mcp-client --example call_path
//! valgrind target/debug/examples/call_path 200  2>&1 | grep 'total heap usage'
//! valgrind target/debug/examples/call_path 1200 2>&1 | grep 'total heap usage'
//! # (allocs at 1200 − allocs at 200) / 1000 = allocations per call
//! ```
//!
//! `legacy` as a second argument speaks 2025-11-25 instead of 2026-07-28.

use std::sync::Arc;

use mcp_client::transport::{
    BoxFuture, Inbound, InboundSender, Outgoing, OutgoingKind, Transport, TransportError, TransportKind,
};
use mcp_client::{ClientBuilder, EraCache};
use mcp_types::{ProtocolVersion, RequestId};
use serde_json::json;

/// A server in memory: answers `initialize` and every other request at once with a fixed
/// result, reading nothing of the request but its id.
struct Memory {
    inbound: InboundSender,
}

impl Transport for Memory {
    fn kind(&self) -> TransportKind {
        TransportKind::Stdio
    }

    fn send(&self, message: Outgoing) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async move {
            let OutgoingKind::Request { id, method, .. } = &message.kind else { return Ok(()) };
            let id = serde_json::to_string(id).unwrap_or_default();
            let result = if method == "initialize" {
                r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"memory","version":"1"}}"#
            } else {
                r#"{"resultType":"complete","content":[{"type":"text","text":"hello"}]}"#
            };
            let answer = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#);
            let _ = self.inbound.send(Inbound::Message(answer.into())).await;
            Ok(())
        })
    }

    fn abandon(&self, _: &RequestId) {}

    fn session_ready(&self, _: ProtocolVersion) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let _ = self.inbound.send(Inbound::Closed(TransportError::Closed)).await;
        })
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let calls: u64 = args.next().and_then(|n| n.parse().ok()).unwrap_or(1000);
    let version = if args.next().as_deref() == Some("legacy") {
        ProtocolVersion::V2025_11_25
    } else {
        ProtocolVersion::V2026_07_28
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    runtime.block_on(async {
        let builder = ClientBuilder::new("call-path", "1")
            .pin_version(version)
            .discover_on_connect(false)
            .era_cache(EraCache::new());
        let (inbound, rx) = builder.inbound_channel();
        let client =
            builder.connect_transport(Arc::new(Memory { inbound }), rx, "memory").await.expect("connects");
        let rows: Vec<_> = (0..100).map(|i| json!({"id": i, "name": "row"})).collect();
        let arguments = json!({"rows": rows});
        for _ in 0..calls {
            // The caller's own copy: a call takes its arguments by value.
            let result = client.call_tool("echo", arguments.clone()).await.expect("answered");
            assert_eq!(result.content.len(), 1);
        }
        client.close().await;
    });
}
