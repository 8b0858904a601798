//! Raw HTTP/1.1 over loopback, shared by the test binaries that speak it byte by byte (the
//! limits, the budgets' memory, the endpoint and dispatch tests): one-shot requests read to the
//! end (chunked bodies decoded) and streams kept open, from any loopback address (127.0.0.2
//! is another peer, with budgets of its own). Each binary uses part of it.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// The usual client address.
pub(crate) const ONE: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);
/// Another peer on the loopback network.
pub(crate) const TWO: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));

pub(crate) const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

pub(crate) async fn connect(from: IpAddr, addr: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::new(from, 0)).unwrap();
    socket.connect(addr).await.unwrap()
}

/// A request to `/mcp`, or to the path after the method (`"GET /sse"`), with the loopback
/// `Host` unless `headers` name one.
pub(crate) fn request(addr: SocketAddr, method: &str, headers: &[(&str, &str)], body: &str) -> String {
    let (method, path) = method.split_once(' ').unwrap_or((method, "/mcp"));
    let mut raw = format!("{method} {path} HTTP/1.1\r\ncontent-length: {}\r\n", body.len());
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        raw.push_str(&format!("host: 127.0.0.1:{}\r\n", addr.port()));
    }
    for (k, v) in headers {
        raw.push_str(&format!("{k}: {v}\r\n"));
    }
    raw.push_str("\r\n");
    raw.push_str(body);
    raw
}

/// A complete answer.
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) head: String,
    pub(crate) body: String,
}

impl Reply {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.head
            .lines()
            .filter_map(|l| l.split_once(':'))
            .find_map(|(k, v)| k.trim().eq_ignore_ascii_case(name).then_some(v.trim()))
    }

    /// The JSON of the body, or of the last `data:` line of an SSE body.
    pub(crate) fn json(&self) -> serde_json::Value {
        let text = self
            .body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .rfind(|d| !d.trim().is_empty())
            .unwrap_or(&self.body);
        serde_json::from_str(text.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }

    /// The `data:` payloads of an SSE body (priming events, which have none, left out).
    pub(crate) fn events(&self) -> Vec<serde_json::Value> {
        self.body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter(|d| !d.trim().is_empty())
            .map(|d| serde_json::from_str(d.trim()).unwrap())
            .collect()
    }
}

/// One request on its own connection (`connection: close`), read to the end.
pub(crate) async fn roundtrip(
    from: IpAddr,
    addr: SocketAddr,
    method: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Reply {
    let mut headers = headers.to_vec();
    headers.push(("connection", "close"));
    let mut stream = connect(from, addr).await;
    stream.write_all(request(addr, method, &headers, body).as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(60), stream.read_to_end(&mut raw))
        .await
        .expect("no answer")
        .unwrap();
    let text = String::from_utf8(raw).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let chunked = head.to_ascii_lowercase().contains("transfer-encoding: chunked");
    let body = if chunked { dechunk(body) } else { body.to_owned() };
    Reply { status, head: head.to_owned(), body }
}

/// The body of a chunked answer (chunk sizes and extensions dropped).
pub(crate) fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        out.push_str(&rest[..size]);
        body = &rest[size + 2..];
    }
    out
}

/// A streamed answer kept open: the status, and the raw bytes seen so far.
pub(crate) struct Open {
    pub(crate) tcp: TcpStream,
    pub(crate) status: u16,
    pub(crate) seen: Vec<u8>,
}

impl Open {
    /// Sends a request and reads its head (and, for a 200, until `until` has arrived).
    pub(crate) async fn start(
        from: IpAddr,
        addr: SocketAddr,
        method: &str,
        headers: &[(&str, &str)],
        body: &str,
        until: &str,
    ) -> Open {
        let mut tcp = connect(from, addr).await;
        tcp.write_all(request(addr, method, headers, body).as_bytes()).await.unwrap();
        let mut open = Open { tcp, status: 0, seen: Vec::new() };
        open.read_until("\r\n\r\n").await;
        let text = String::from_utf8_lossy(&open.seen).into_owned();
        open.status = text.split(' ').nth(1).unwrap().parse().unwrap();
        if open.status == 200 {
            open.read_until(until).await;
        }
        open
    }

    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.seen).into_owned()
    }

    /// Reads until `needle` has been seen; panics if the connection ends first.
    pub(crate) async fn read_until(&mut self, needle: &str) {
        let mut buf = [0u8; 4096];
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        while !self.text().contains(needle) {
            let n = tokio::time::timeout_at(deadline, self.tcp.read(&mut buf))
                .await
                .unwrap_or_else(|_| panic!("{needle:?} never arrived: {}", self.text()))
                .unwrap();
            assert!(n > 0, "the connection ended before {needle:?}: {}", self.text());
            self.seen.extend_from_slice(&buf[..n]);
        }
    }
}
