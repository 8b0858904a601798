//! Where the server's own messages (notifications, and legacy server→client requests) go.
//!
//! A transport hands the server a [`MessageSink`] per connection or per exchange; the server
//! serializes each message once, on the task that produced it, and the sink only moves bytes.

use std::future::Future;
use std::pin::Pin;

use tokio::sync::mpsc;

/// A boxed future, as the sink returns it.
pub type SendFuture<'a> = Pin<Box<dyn Future<Output = bool> + Send + 'a>>;

/// A destination for serialized JSON-RPC messages (compact JSON, no trailing newline).
pub trait MessageSink: Send + Sync + 'static {
    /// Queues one whole message; resolves to `false` when the peer is gone.
    fn send(&self, json: Vec<u8>) -> SendFuture<'_>;

    /// Ends the response stream early, when the transport can resume it (legacy Streamable
    /// HTTP: the client reconnects with `Last-Event-ID` and receives the rest). Returns false
    /// where there is no such stream (stdio, modern HTTP).
    fn close_stream(&self) -> bool {
        false
    }
}

/// A sink backed by a bounded channel: a full channel applies back-pressure to the sender.
#[derive(Debug, Clone)]
pub struct ChannelSink(pub mpsc::Sender<Vec<u8>>);

impl MessageSink for ChannelSink {
    fn send(&self, json: Vec<u8>) -> SendFuture<'_> {
        Box::pin(async move { self.0.send(json).await.is_ok() })
    }
}

/// A sink that drops everything (a request whose notifications nobody can receive).
#[derive(Debug, Clone, Copy, Default)]
pub struct NullSink;

impl MessageSink for NullSink {
    fn send(&self, _json: Vec<u8>) -> SendFuture<'_> {
        Box::pin(async { false })
    }
}
