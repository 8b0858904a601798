//! A server in memory: answers every request at once, reading nothing of it but its id and
//! method — `initialize` opens a 2025-11-25 session, anything else gets the text `hello` — so
//! that what a call costs is the client's own call path (no process, no socket, no server
//! library). One home for the Criterion bench (`benches/client.rs`), the allocation counter
//! (`examples/call_path.rs`) and the tests (`tests/queue_limits.rs`), each including this file
//! by path: dev-only code, kept out of the library's API.
#![allow(dead_code)]

use std::sync::Arc;

use mcp_client::transport::{
    BoxFuture, Inbound, InboundSender, Outgoing, OutgoingKind, Transport, TransportError, TransportKind,
};
use mcp_types::{ProtocolVersion, RequestId};

/// The result of `initialize`.
pub(crate) const INITIALIZE_RESULT: &str = r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"memory","version":"1"}}"#;

/// The result of every other request: one text content, `hello`.
pub(crate) const HELLO_RESULT: &str =
    r#"{"resultType":"complete","content":[{"type":"text","text":"hello"}]}"#;

/// Sees each message the client sends that is no request (its answers to the server's requests,
/// its notifications).
pub(crate) type Observer = Box<dyn Fn(&Outgoing) + Send + Sync>;

/// The in-memory server, behind the public `Transport` trait (a stdio-like transport).
pub(crate) struct Memory {
    inbound: InboundSender,
    observer: Option<Observer>,
}

impl Memory {
    /// A server answering on `inbound` (from the client builder's `inbound_channel`).
    pub(crate) fn new(inbound: InboundSender) -> Arc<Memory> {
        Arc::new(Memory { inbound, observer: None })
    }

    /// [`Memory::new`], showing `observer` what the client sends besides requests.
    pub(crate) fn observed(inbound: InboundSender, observer: Observer) -> Arc<Memory> {
        Arc::new(Memory { inbound, observer: Some(observer) })
    }
}

impl Transport for Memory {
    fn kind(&self) -> TransportKind {
        TransportKind::Stdio
    }

    fn send(&self, message: Outgoing) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async move {
            let OutgoingKind::Request { id, method, .. } = &message.kind else {
                if let Some(observe) = &self.observer {
                    observe(&message);
                }
                return Ok(());
            };
            let id = serde_json::to_string(id).unwrap_or_default();
            let result = if method == "initialize" { INITIALIZE_RESULT } else { HELLO_RESULT };
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
