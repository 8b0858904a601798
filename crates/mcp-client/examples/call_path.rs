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

#[path = "../tests/support/memory.rs"]
mod memory;

use mcp_client::{ClientBuilder, EraCache};
use mcp_types::ProtocolVersion;
use serde_json::json;

use memory::Memory;

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
        let client = builder.connect_transport(Memory::new(inbound), rx, "memory").await.expect("connects");
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
