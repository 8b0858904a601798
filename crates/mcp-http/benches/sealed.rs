//! A sealed legacy session id (`HttpConfig::session_key`): sealing a session's state at
//! `initialize` and opening it on a replica that does not have the session — what replicas
//! without a shared store pay, once per session per replica. The state is a typical one: the
//! client's capabilities (none, or elicitation, sampling and roots), its identity, a principal.
//!
//! Run with `cargo bench -p mcp-http --bench sealed`.

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_http::{SessionKey, bench_seal_and_open};
use mcp_types::ClientCapabilities;

fn sealed(c: &mut Criterion) {
    let key = SessionKey::from_bytes([7; 32]);
    let none = ClientCapabilities::default();
    let full: ClientCapabilities = serde_json::from_str(
        r#"{"elicitation":{"form":{},"url":{}},"sampling":{"context":{},"tools":{}},"roots":{"listChanged":true}}"#,
    )
    .unwrap();
    let mut group = c.benchmark_group("sealed_session_id");
    group.bench_function("seal_and_open/no_capabilities", |b| {
        b.iter(|| assert!(bench_seal_and_open(&key, &none)));
    });
    group.bench_function("seal_and_open/elicitation_sampling_roots", |b| {
        b.iter(|| assert!(bench_seal_and_open(&key, &full)));
    });
    group.finish();
}

criterion_group!(benches, sealed);
criterion_main!(benches);
