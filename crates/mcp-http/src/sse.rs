//! Server-sent events: encoding, and a response body fed by a channel.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use tokio::sync::mpsc;

/// One SSE `message` event carrying a JSON-RPC message. JSON never contains a raw newline
/// outside strings except as whitespace, which is replaced, so the data stays one line.
pub fn event(json: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(json.len() + 24);
    out.extend_from_slice(b"event: message\ndata: ");
    out.extend(json.iter().map(|&b| if b == b'\n' || b == b'\r' { b' ' } else { b }));
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// A `message` event with an id (resumable streams).
pub fn event_with_id(id: &str, json: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(json.len() + id.len() + 32);
    out.extend_from_slice(b"id: ");
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(b"\n");
    out.extend_from_slice(&event(json));
    Bytes::from(out)
}

/// The first event of a resumable stream: an id to resume from and the reconnection delay,
/// with empty data.
pub fn priming(id: &str, retry: std::time::Duration) -> Bytes {
    Bytes::from(format!("id: {id}\nretry: {}\ndata: \n\n", retry.as_millis()))
}

/// A keep-alive comment.
pub(crate) fn comment() -> Bytes {
    Bytes::from_static(b": keep-alive\n\n")
}

/// Forwards JSON-RPC messages from `messages` to an SSE body as `message` events, with a
/// keep-alive comment after every `keep_alive` of silence. Returns when the producer side closes
/// (`messages` ends) or the client goes away (`body` is closed or refuses a chunk).
pub(crate) async fn pump(
    mut messages: mpsc::Receiver<Vec<u8>>,
    body: mpsc::Sender<Bytes>,
    keep_alive: std::time::Duration,
) {
    let mut ticker = tokio::time::interval(keep_alive);
    ticker.tick().await;
    loop {
        let chunk = tokio::select! {
            message = messages.recv() => match message {
                Some(json) => event(&json),
                None => return,
            },
            _ = ticker.tick() => comment(),
            _ = body.closed() => return,
        };
        if body.send(chunk).await.is_err() {
            return;
        }
    }
}

/// A response body that yields what the channel delivers; dropping it (the client went away)
/// closes the channel, which the producer notices.
pub(crate) struct ChannelBody(pub(crate) mpsc::Receiver<Bytes>);

impl futures_core::Stream for ChannelBody {
    type Item = Result<Bytes, Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0.poll_recv(cx).map(|item| item.map(Ok))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_single_line_data() {
        assert_eq!(&event(b"{\"a\":\n1}")[..], b"event: message\ndata: {\"a\": 1}\n\n");
    }
}
