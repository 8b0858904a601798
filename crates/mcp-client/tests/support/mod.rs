//! A scripted server behind the public `Transport` trait: every message the client sends is
//! recorded and handed to a script that answers with messages or transport errors. It lets the
//! tests drive the client core through situations a real server rarely produces (a probe left
//! unanswered, a crash mid-call, an expired session) and look at exactly what went out.
#![allow(dead_code)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use mcp_client::transport::{
    BoxFuture, Inbound, InboundReceiver, InboundSender, Outgoing, OutgoingKind, Transport, TransportError,
    TransportKind,
};
use mcp_types::{ProtocolVersion, RequestId};
use serde_json::{Value, json};

/// What the script does with one message.
pub(crate) enum Reply {
    /// Push these messages back (in order).
    Messages(Vec<Value>),
    /// Push this message back exactly as written.
    Raw(String),
    /// Fail the send with this error (nothing pushed).
    Fail(TransportError),
    /// Say nothing.
    Nothing,
    /// Never finish sending (an HTTP server that accepted the connection and never answers the
    /// POST, a child that does not read its stdin).
    Hang,
}

pub(crate) type Script = Box<dyn FnMut(&Sent) -> Reply + Send>;

/// One message the client sent.
#[derive(Debug, Clone)]
pub(crate) struct Sent {
    pub(crate) body: Value,
    pub(crate) kind: OutgoingKind,
    pub(crate) version: Option<ProtocolVersion>,
}

impl Sent {
    pub(crate) fn method(&self) -> Option<&str> {
        self.body.get("method").and_then(Value::as_str)
    }
    pub(crate) fn id(&self) -> Value {
        self.body.get("id").cloned().unwrap_or(Value::Null)
    }
    pub(crate) fn params(&self) -> &Value {
        self.body.get("params").unwrap_or(&Value::Null)
    }
}

pub(crate) struct Fake {
    kind: TransportKind,
    inbound: InboundSender,
    script: Mutex<Script>,
    pub(crate) sent: Mutex<Vec<Sent>>,
    pub(crate) abandoned: Mutex<Vec<RequestId>>,
    pub(crate) sessions: Mutex<Vec<ProtocolVersion>>,
    pub(crate) resets: Mutex<u32>,
}

impl Fake {
    pub(crate) fn new(kind: TransportKind, script: Script) -> (Arc<Fake>, InboundReceiver) {
        Fake::with_channel(kind, script, mcp_client::transport::inbound_channel())
    }

    /// [`Fake::new`] delivering to `channel` (a client's `ClientBuilder::inbound_channel`).
    pub(crate) fn with_channel(
        kind: TransportKind,
        script: Script,
        channel: (InboundSender, InboundReceiver),
    ) -> (Arc<Fake>, InboundReceiver) {
        let (inbound, rx) = channel;
        let fake = Arc::new(Fake {
            kind,
            inbound,
            script: Mutex::new(script),
            sent: Mutex::new(Vec::new()),
            abandoned: Mutex::new(Vec::new()),
            sessions: Mutex::new(Vec::new()),
            resets: Mutex::new(0),
        });
        (fake, rx)
    }

    /// Pushes a message as if the server sent it now (the channel must have room: the tests
    /// push a few at a time).
    pub(crate) fn push(&self, message: Value) {
        self.push_event(Inbound::Message(Bytes::from(message.to_string())));
    }

    /// Pushes a message, or gives it back when the channel is full.
    pub(crate) fn try_push(&self, message: Value) -> Result<(), ()> {
        match self.inbound.try_send(Inbound::Message(Bytes::from(message.to_string()))) {
            Err(tokio::sync::mpsc::error::TrySendError::Full(_)) => Err(()),
            _ => Ok(()),
        }
    }

    /// Pushes a message, waiting for room.
    pub(crate) async fn push_wait(&self, message: Value) {
        let _ = self.inbound.send(Inbound::Message(Bytes::from(message.to_string()))).await;
    }

    pub(crate) fn push_event(&self, event: Inbound) {
        match self.inbound.try_send(event) {
            Ok(()) | Err(tokio::sync::mpsc::error::TrySendError::Closed(_)) => {}
            Err(tokio::sync::mpsc::error::TrySendError::Full(_)) => panic!("the inbound channel is full"),
        }
    }

    pub(crate) fn sent(&self) -> Vec<Sent> {
        self.sent.lock().unwrap().clone()
    }

    pub(crate) fn sent_with_method(&self, method: &str) -> Vec<Sent> {
        self.sent().into_iter().filter(|s| s.method() == Some(method)).collect()
    }

    /// Waits (bounded) until a message with `method` has been sent.
    pub(crate) async fn wait_for(&self, method: &str) -> Sent {
        for _ in 0..500 {
            if let Some(s) = self.sent_with_method(method).pop() {
                return s;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("{method} was never sent; sent: {:?}", self.sent());
    }
}

impl Transport for Fake {
    fn kind(&self) -> TransportKind {
        self.kind
    }

    fn send(&self, message: Outgoing) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async move {
            let body: Value = serde_json::from_slice(&message.body).expect("the client sends JSON");
            let sent = Sent { body, kind: message.kind, version: message.protocol_version };
            self.sent.lock().unwrap().push(sent.clone());
            let reply = (self.script.lock().unwrap())(&sent);
            match reply {
                Reply::Messages(messages) => {
                    for m in messages {
                        let _ = self.inbound.send(Inbound::Message(Bytes::from(m.to_string()))).await;
                    }
                    Ok(())
                }
                Reply::Raw(text) => {
                    let _ = self.inbound.send(Inbound::Message(Bytes::from(text))).await;
                    Ok(())
                }
                Reply::Fail(e) => Err(e),
                Reply::Nothing => Ok(()),
                Reply::Hang => std::future::pending().await,
            }
        })
    }

    fn abandon(&self, id: &RequestId) {
        self.abandoned.lock().unwrap().push(id.clone());
    }

    fn session_ready(&self, version: ProtocolVersion) -> BoxFuture<'_, ()> {
        self.sessions.lock().unwrap().push(version);
        Box::pin(async {})
    }

    fn reset_session(&self) {
        *self.resets.lock().unwrap() += 1;
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let _ = self.inbound.send(Inbound::Closed(TransportError::Closed)).await;
        })
    }
}

pub(crate) fn result(id: Value, result: Value) -> Reply {
    Reply::Messages(vec![json!({"jsonrpc": "2.0", "id": id, "result": result})])
}

pub(crate) fn error(id: Value, code: i64, message: &str, data: Option<Value>) -> Reply {
    let mut e = json!({"code": code, "message": message});
    if let Some(d) = data {
        e["data"] = d;
    }
    Reply::Messages(vec![json!({"jsonrpc": "2.0", "id": id, "error": e})])
}

pub(crate) fn discover_result() -> Value {
    json!({
        "resultType": "complete",
        "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {"listChanged": true}, "resources": {}, "prompts": {}},
        "instructions": "be nice",
        "ttlMs": 0,
        "cacheScope": "public",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fake", "version": "1.0"}}
    })
}

pub(crate) fn initialize_result(version: &str) -> Value {
    json!({
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": true}, "logging": {}},
        "serverInfo": {"name": "fake-legacy", "version": "0.9"}
    })
}

pub(crate) fn text_result(text: &str) -> Value {
    json!({"resultType": "complete", "content": [{"type": "text", "text": text}]})
}
