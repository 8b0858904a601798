//! mcp-client's own HTTP/1.1 connections, for plain `http://` servers, and the answer type both
//! ways of sending share.
//!
//! A client in front of one MCP server (the gateway's upstream, above all) sends the same
//! small POST to the same origin again and again. reqwest's general client parses the URL
//! again for its redirect policy and once more when the answer comes, clones the headers for
//! retries it never makes here, and hands every exchange to a connection task of its own
//! (a wake-up across tasks each way). For an `http://` URL without user information, and with
//! no proxy in the environment, [`Direct`] does instead: a small pool of keep-alive
//! connections to that one origin, made with hyper's HTTP/1.1 connection API, each driven by
//! the task that uses it — the request's own task while it waits for the status and the
//! headers, and whoever reads the body until its end, when the connection goes back to the
//! pool. Everything else (`https://`, proxies, a `reqwest::Client` of the caller's) still
//! goes through reqwest, and either way the transports see one [`Response`].
//!
//! What the two ways keep the same: same-origin `307`/`308` redirects followed (at most
//! [`MAX_REDIRECTS`](super::common) times, method and body kept), anything else answered as
//! the redirect itself; the connect timeout; `User-Agent` and `Accept` defaults; a request
//! that never reached the server is [`TransportError::NotSent`], one that may have is
//! [`TransportError::Lost`]. A pooled connection the server has closed is found out before
//! it is used (and a request it refused unsent goes out once on a new connection).

use std::future::{Future, poll_fn};
use std::net::{IpAddr, SocketAddr};
use std::pin::{Pin, pin};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::{Body as _, Incoming};
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use reqwest::header::{self, HeaderMap, HeaderValue};
use reqwest::{Method, StatusCode, Url};
use tokio::net::TcpStream;

use crate::error::with_causes;
use crate::transport::TransportError;
use crate::wire;

/// Idle connections kept per origin; more are closed when they come back.
const MAX_IDLE: usize = 32;
/// How long an idle connection is kept (as reqwest's pool does).
const IDLE_TIMEOUT: Duration = Duration::from_secs(90);
const USER_AGENT: HeaderValue =
    HeaderValue::from_static(concat!("mcpkit-client/", env!("CARGO_PKG_VERSION")));
const ANY: HeaderValue = HeaderValue::from_static("*/*");

/// An HTTP answer, whichever client fetched it: its status, its headers, and a body read one
/// chunk at a time.
pub(crate) struct Response {
    status: StatusCode,
    headers: HeaderMap,
    body: Body,
}

enum Body {
    Reqwest(reqwest::Body),
    Direct(DirectBody),
}

impl Response {
    pub(crate) fn from_reqwest(response: reqwest::Response) -> Response {
        let (parts, body) = http::Response::<reqwest::Body>::from(response).into_parts();
        Response { status: parts.status, headers: parts.headers, body: Body::Reqwest(body) }
    }

    pub(crate) fn status(&self) -> StatusCode {
        self.status
    }

    pub(crate) fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The `Content-Length` the answer declares.
    pub(crate) fn content_length(&self) -> Option<u64> {
        self.headers.get(header::CONTENT_LENGTH)?.to_str().ok()?.trim().parse().ok()
    }

    /// The next piece of the body; `None` at its end. The error says why it broke.
    pub(crate) async fn chunk(&mut self) -> Result<Option<Bytes>, String> {
        match &mut self.body {
            Body::Reqwest(body) => loop {
                match body.frame().await {
                    None => return Ok(None),
                    Some(Err(e)) => return Err(super::common::error_text(e)),
                    Some(Ok(frame)) => {
                        if let Ok(data) = frame.into_data()
                            && !data.is_empty()
                        {
                            return Ok(Some(data));
                        }
                    }
                }
            },
            Body::Direct(body) => poll_fn(|cx| body.poll_chunk(cx)).await,
        }
    }
}

/// One keep-alive connection: hyper's sending half and the connection it drives.
struct Conn {
    sender: http1::SendRequest<Full<Bytes>>,
    connection: Pin<Box<http1::Connection<TokioIo<TcpStream>, Full<Bytes>>>>,
    /// The connection future has finished (closed or failed): never polled again.
    ended: bool,
    idle_since: Instant,
}

impl Conn {
    /// Drives the connection; true while it is still open.
    fn drive(&mut self, cx: &mut Context<'_>) -> bool {
        if !self.ended && self.connection.as_mut().poll(cx).is_ready() {
            self.ended = true;
        }
        !self.ended
    }

    /// Whether it can take a request now (an idle connection the server closed cannot).
    fn ready(&mut self, cx: &mut Context<'_>) -> bool {
        self.drive(cx) && matches!(self.sender.poll_ready(cx), Poll::Ready(Ok(())))
    }
}

/// The body of a [`Direct`] answer, with the connection it arrives on: reading the body drives
/// the connection, and at its end the connection goes back to the pool.
struct DirectBody {
    body: Incoming,
    conn: Option<Conn>,
    pool: Arc<Pool>,
}

impl DirectBody {
    fn poll_chunk(&mut self, cx: &mut Context<'_>) -> Poll<Result<Option<Bytes>, String>> {
        loop {
            if let Some(conn) = &mut self.conn {
                conn.drive(cx);
            }
            match Pin::new(&mut self.body).poll_frame(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => {
                    self.release();
                    return Poll::Ready(Ok(None));
                }
                Poll::Ready(Some(Err(e))) => {
                    self.conn = None;
                    return Poll::Ready(Err(with_causes(&e)));
                }
                Poll::Ready(Some(Ok(frame))) => {
                    if let Ok(data) = frame.into_data()
                        && !data.is_empty()
                    {
                        return Poll::Ready(Ok(Some(data)));
                    }
                }
            }
        }
    }

    /// The body is over: the connection can serve another request.
    fn release(&mut self) {
        if let Some(conn) = self.conn.take() {
            self.pool.put(conn);
        }
    }
}

impl Drop for DirectBody {
    fn drop(&mut self) {
        // A body dropped before its end leaves the connection mid-answer: it is closed. One
        // read to its end (or empty from the start, as a `202`'s) leaves it reusable.
        if self.body.is_end_stream() {
            self.release();
        }
    }
}

#[derive(Default)]
struct Pool {
    idle: Mutex<Vec<Conn>>,
}

impl Pool {
    fn put(&self, mut conn: Conn) {
        if conn.ended {
            return;
        }
        conn.idle_since = Instant::now();
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < MAX_IDLE {
            idle.push(conn);
        }
    }

    fn take(&self) -> Option<Conn> {
        self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop()
    }
}

/// The connections to one `http://` origin ([the module](self)).
pub(crate) struct Direct {
    host: String,
    port: u16,
    /// `Host:` as the URL gives it (with the port when it is not 80).
    authority: HeaderValue,
    connect_timeout: Duration,
    pool: Arc<Pool>,
}

impl std::fmt::Debug for Direct {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Direct").field("host", &self.host).field("port", &self.port).finish_non_exhaustive()
    }
}

impl Direct {
    /// The direct connections for `url`, when it is one they serve: `http://`, no user
    /// information (reqwest turns it into a `Basic` credential), and no proxy configured in
    /// the environment (reqwest would use it).
    pub(crate) fn for_url(url: &Url, connect_timeout: Duration) -> Option<Direct> {
        const PROXIES: [&str; 4] = ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"];
        if url.scheme() != "http" || !url.username().is_empty() || url.password().is_some() {
            return None;
        }
        if PROXIES.iter().any(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty())) {
            return None;
        }
        let host = url.host_str()?.to_owned();
        let port = url.port_or_known_default()?;
        let authority = match url.port() {
            Some(port) => HeaderValue::from_str(&format!("{host}:{port}")).ok()?,
            None => HeaderValue::from_str(&host).ok()?,
        };
        Some(Direct { host, port, authority, connect_timeout, pool: Arc::default() })
    }

    /// Whether `url` is on this origin.
    pub(crate) fn serves(&self, url: &Url) -> bool {
        url.scheme() == "http"
            && url.host_str() == Some(self.host.as_str())
            && url.port_or_known_default() == Some(self.port)
            && url.username().is_empty()
            && url.password().is_none()
    }

    /// Sends one request and returns its answer once the status and headers are in; the body
    /// is read from the answer. Same-origin `307`/`308` redirects are followed.
    pub(crate) async fn send(
        &self,
        method: Method,
        url: &Url,
        headers: &HeaderMap,
        body: Option<Bytes>,
    ) -> Result<Response, TransportError> {
        let body = body.unwrap_or_default();
        let mut target = std::borrow::Cow::Borrowed(url);
        let mut redirects = 0;
        loop {
            // Each exchange takes a copy of its own: the caller keeps the headers to send them
            // again (after a redirect here, or a refusal its authorization cures).
            let mut sent = headers.clone();
            if !sent.contains_key(header::USER_AGENT) {
                sent.insert(header::USER_AGENT, USER_AGENT);
            }
            if !sent.contains_key(header::ACCEPT) {
                sent.insert(header::ACCEPT, ANY);
            }
            sent.insert(header::HOST, self.authority.clone());
            let response = self.exchange(&method, &target, sent, body.clone()).await?;
            let status = response.status();
            if !matches!(status.as_u16(), 307 | 308) || redirects >= super::common::MAX_REDIRECTS {
                return Ok(response);
            }
            let next = response
                .headers()
                .get(header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|location| target.join(location).ok());
            match next {
                Some(next) if next.origin() == url.origin() && self.serves(&next) => {
                    wire::redirect(status, &next);
                    // The redirect's own body is not wanted; its connection is not reused.
                    drop(response);
                    redirects += 1;
                    target = std::borrow::Cow::Owned(next);
                }
                _ => return Ok(response),
            }
        }
    }

    /// One request and its answer's head, on a pooled connection or a new one.
    async fn exchange(
        &self,
        method: &Method,
        url: &Url,
        headers: HeaderMap,
        body: Bytes,
    ) -> Result<Response, TransportError> {
        let path = &url[url::Position::BeforePath..url::Position::AfterQuery];
        let uri = http::Uri::try_from(if path.is_empty() { "/" } else { path })
            .map_err(|e| TransportError::NotSent(format!("invalid request target: {e}")))?;
        let mut request = http::Request::new(Full::new(body));
        *request.method_mut() = method.clone();
        *request.uri_mut() = uri;
        *request.headers_mut() = headers;
        let mut fresh = false;
        let mut conn = match self.pooled().await {
            Some(conn) => conn,
            None => {
                fresh = true;
                self.connect().await?
            }
        };
        loop {
            match self.round_trip(&mut conn, request).await {
                Ok(response) => {
                    let (parts, body) = response.into_parts();
                    let mut body = DirectBody { body, conn: Some(conn), pool: self.pool.clone() };
                    if body.body.is_end_stream() {
                        body.release();
                    }
                    return Ok(Response {
                        status: parts.status,
                        headers: parts.headers,
                        body: Body::Direct(body),
                    });
                }
                Err(mut e) => match e.take_message() {
                    // A pooled connection closed under the request before it went out: once
                    // more on a new one.
                    Some(unsent) if !fresh => {
                        fresh = true;
                        request = unsent;
                        conn = self.connect().await?;
                    }
                    Some(_) => {
                        return Err(TransportError::NotSent(format!(
                            "error sending request: {}",
                            with_causes(e.error())
                        )));
                    }
                    None => {
                        return Err(TransportError::Lost(format!(
                            "error sending request: {}",
                            with_causes(e.error())
                        )));
                    }
                },
            }
        }
    }

    /// Sends `request` on `conn` and waits for the answer's head, driving the connection.
    async fn round_trip(
        &self,
        conn: &mut Conn,
        request: http::Request<Full<Bytes>>,
    ) -> Result<http::Response<Incoming>, hyper::client::conn::TrySendError<http::Request<Full<Bytes>>>> {
        let mut answer = pin!(conn.sender.try_send_request(request));
        poll_fn(|cx| {
            conn.drive(cx);
            answer.as_mut().poll(cx)
        })
        .await
    }

    /// An idle connection that can take a request now, if there is one.
    async fn pooled(&self) -> Option<Conn> {
        while let Some(mut conn) = self.pool.take() {
            if conn.idle_since.elapsed() >= IDLE_TIMEOUT {
                continue;
            }
            // One look: a connection ready for a request says so at once.
            if poll_fn(|cx| Poll::Ready(conn.ready(cx))).await {
                return Some(conn);
            }
        }
        None
    }

    /// A new connection to the origin: an address as it is, `localhost` as the loopback
    /// addresses ([`is_localhost`]), any other name resolved by the system.
    async fn connect(&self) -> Result<Conn, TransportError> {
        let connecting = async {
            let host = self.host.trim_start_matches('[').trim_end_matches(']');
            let stream = match host.parse::<IpAddr>() {
                Ok(ip) => TcpStream::connect(SocketAddr::new(ip, self.port)).await?,
                Err(_) if is_localhost(host) => TcpStream::connect(&loopback(self.port)[..]).await?,
                Err(_) => TcpStream::connect((host, self.port)).await?,
            };
            stream.set_nodelay(true)?;
            Ok::<_, std::io::Error>(stream)
        };
        let stream = match tokio::time::timeout(self.connect_timeout, connecting).await {
            Ok(Ok(stream)) => stream,
            Ok(Err(e)) => {
                return Err(TransportError::NotSent(format!(
                    "error sending request: tcp connect error: {e}"
                )));
            }
            Err(_) => {
                return Err(TransportError::NotSent("error sending request: tcp connect timed out".into()));
            }
        };
        let (sender, connection) = http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| TransportError::NotSent(format!("error sending request: {}", with_causes(&e))))?;
        Ok(Conn { sender, connection: Box::pin(connection), ended: false, idle_since: Instant::now() })
    }
}

/// `localhost` and the names under it (RFC 6761, section 6.3: they always mean this machine).
/// They are not looked up: a name lookup runs on one of Tokio's blocking threads, and a
/// process that has started a second thread pays for it on every allocation from then on
/// (glibc's allocator takes its locks), which a gateway on one thread in front of local
/// servers would otherwise pay for good.
fn is_localhost(host: &str) -> bool {
    let host = host.strip_suffix('.').unwrap_or(host);
    host.eq_ignore_ascii_case("localhost")
        || host.len() > ".localhost".len()
            && host.as_bytes()[host.len() - ".localhost".len()..].eq_ignore_ascii_case(b".localhost")
}

/// The loopback addresses, tried in the order the system's resolver returns them for
/// `localhost` (RFC 6724 prefers IPv6): a server listening on one of them only is reached,
/// the other refusing at once.
fn loopback(port: u16) -> [SocketAddr; 2] {
    [
        SocketAddr::new(IpAddr::V6(std::net::Ipv6Addr::LOCALHOST), port),
        SocketAddr::new(IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), port),
    ]
}

#[cfg(test)]
mod tests {
    #[test]
    fn localhost_and_the_names_under_it_are_this_machine() {
        for host in ["localhost", "LocalHost", "localhost.", "api.localhost", "a.b.LOCALHOST."] {
            assert!(super::is_localhost(host), "{host}");
        }
        for host in ["notlocalhost", "localhost.example", ".localhost", "xlocalhost", "local", ""] {
            assert!(!super::is_localhost(host), "{host}");
        }
    }
}
