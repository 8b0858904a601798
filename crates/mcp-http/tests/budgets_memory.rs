//! Every budget of the HTTP transport driven far past its limit by a hostile peer, with the
//! process's resident memory (VmRSS, `/proc/self/status`) watched: legacy sessions (in total
//! and per caller), long-lived stream slots, the request head, the send timeout and the bytes
//! of requests in flight. Each test checks the refusal and that memory stays within what the
//! budget allows, well below what keeping everything would cost.
//!
//! Each test runs in a process of its own, one at a time ([`memory::own_process`]): with the
//! server in the test's process, another test's traffic, or the memory an earlier test freed
//! to the allocator, would blur the reading.

#[path = "budgets_memory/heads.rs"]
mod heads;
#[path = "budgets_memory/in_flight.rs"]
mod in_flight;
#[path = "budgets_memory/memory.rs"]
mod memory;
#[path = "budgets_memory/send_timeout.rs"]
mod send_timeout;
#[path = "budgets_memory/sessions.rs"]
mod sessions;
#[path = "budgets_memory/streams.rs"]
mod streams;
#[allow(dead_code)]
#[path = "support/raw_http.rs"]
mod support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcp_http::HttpConfig;
use mcp_server::{Args, Server, State, Tools};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio::sync::Semaphore;

#[derive(Deserialize, JsonSchema)]
struct BigArgs {
    size: usize,
}

/// An answer of `size` bytes.
async fn big(Args(BigArgs { size }): Args<BigArgs>) -> String {
    "x".repeat(size)
}

#[derive(Deserialize, JsonSchema)]
struct HeldArgs {
    /// Makes the request as large as the test needs; kept while the call runs.
    pad: String,
}

/// Where `held` calls wait: they count themselves in, then wait for a permit.
struct Gate {
    entered: AtomicUsize,
    open: Semaphore,
}

/// Runs until the test opens the gate.
async fn held(State(gate): State<Arc<Gate>>, Args(HeldArgs { pad }): Args<HeldArgs>) -> String {
    gate.entered.fetch_add(1, Ordering::SeqCst);
    gate.open.acquire().await.expect("the gate stays open").forget();
    format!("released after {} bytes", pad.len())
}

async fn hello() -> &'static str {
    "hello"
}

/// A standalone server on a loopback port, with the gate of `held`.
async fn start(tune: impl FnOnce(&mut HttpConfig)) -> (SocketAddr, Arc<Gate>) {
    let gate = Arc::new(Gate { entered: AtomicUsize::new(0), open: Semaphore::new(0) });
    let server = Server::builder("budgets", "1")
        .state(gate.clone())
        .tools(Tools::new().add("hello", "Hello", hello).add("big", "Big", big).add("held", "Held", held))
        .build()
        .unwrap();
    let bound = mcp_http::bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = bound.local_addr();
    let mut config = HttpConfig::for_bind(addr);
    tune(&mut config);
    tokio::spawn(mcp_http::serve(server, bound, Some(config)));
    (addr, gate)
}
