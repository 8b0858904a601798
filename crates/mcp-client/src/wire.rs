//! The wire trace: one `trace` event under [`WIRE_TARGET`] for every JSON-RPC message sent or
//! received (its exact bytes as text) and for every HTTP exchange (a status line). Nothing here
//! formats anything unless a subscriber enabled the target: the values are wrapped in
//! [`Display`](std::fmt::Display) types that do their work only when an event is recorded.

use std::fmt;

/// The tracing target of the wire trace (level `trace`). Each event's message is one of:
///
/// * `-> {json}`: a JSON-RPC message sent, exactly the bytes handed to the transport;
/// * `<- {json}`: a JSON-RPC message received, exactly the bytes the transport delivered;
/// * `HTTP <METHOD> <url> -> <status> (<content type>)`, `HTTP <METHOD> <url> -> failed: ...`,
///   `HTTP redirect <status> -> <url>`, `HTTP GET <url> stream closed`: the HTTP exchanges of
///   the transports and of the authorization layer.
///
/// URLs are shown without query, fragment or user information; headers, the bodies of
/// authorization requests and answers, tokens, codes and secrets are never part of the trace.
/// JSON-RPC messages are shown whole: a server that puts secrets in its results shows them.
pub const WIRE_TARGET: &str = "mcp_client::wire";

/// The tracing target (level `warn`) of what the server sent that is not JSON-RPC and was
/// ignored — a line a stdio server printed on its stdout, say — with the start of it.
pub const IGNORED_TARGET: &str = "mcp_client::ignored";

/// The start of an ignored message, for [`IGNORED_TARGET`]: at most 120 characters, lossily.
pub(crate) fn preview(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(480)]);
    let mut preview: String = text.trim_end().chars().take(120).collect();
    if text.chars().count() > 120 || bytes.len() > 480 {
        preview.push('…');
    }
    preview
}

/// Traces a message sent.
pub(crate) fn sent(body: &[u8]) {
    tracing::trace!(target: WIRE_TARGET, "-> {}", Text(body));
}

/// Traces a message received.
pub(crate) fn received(body: &[u8]) {
    tracing::trace!(target: WIRE_TARGET, "<- {}", Text(body));
}

/// Bytes shown as text: UTF-8 as it is, anything else replaced (never re-serialized).
pub(crate) struct Text<'a>(pub(crate) &'a [u8]);

impl fmt::Display for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for chunk in self.0.utf8_chunks() {
            f.write_str(chunk.valid())?;
            if !chunk.invalid().is_empty() {
                f.write_str("\u{FFFD}")?;
            }
        }
        Ok(())
    }
}

/// A URL (or any text holding URLs, such as a command line) for error messages and logs: the
/// password of every `scheme://user:password@host` is shown as `***`; everything else is kept,
/// so the user still recognizes the URL they gave. The one helper for every URL the client
/// prints outside the wire trace (which leaves user information out altogether, see [`Shown`]).
pub(crate) struct Redacted<'a>(pub(crate) &'a str);

impl fmt::Display for Redacted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
        while let Some(start) = rest.find("://") {
            let authority_start = start + 3;
            f.write_str(&rest[..authority_start])?;
            rest = &rest[authority_start..];
            let end =
                rest.find(|c: char| matches!(c, '/' | '?' | '#') || c.is_whitespace()).unwrap_or(rest.len());
            let authority = &rest[..end];
            match authority.rfind('@').and_then(|at| authority[..at].find(':').map(|colon| (colon, at))) {
                Some((colon, at)) => {
                    f.write_str(&authority[..=colon])?;
                    f.write_str("***")?;
                    f.write_str(&authority[at..])?;
                }
                None => f.write_str(authority)?,
            }
            rest = &rest[end..];
        }
        f.write_str(rest)
    }
}

#[cfg(feature = "http")]
pub(crate) use http::*;

#[cfg(feature = "http")]
mod http {
    use std::fmt;

    use reqwest::header::{CONTENT_TYPE, HeaderMap};
    use reqwest::{Method, StatusCode, Url};

    use super::WIRE_TARGET;

    /// A URL for the trace: scheme, host, port and path; query, fragment and user information
    /// are left out (a query may carry a code, a state or a key).
    pub(crate) struct Shown<'a>(pub(crate) &'a Url);

    impl fmt::Display for Shown<'_> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            let url = self.0;
            f.write_str(url.scheme())?;
            f.write_str("://")?;
            if let Some(host) = url.host_str() {
                f.write_str(host)?;
            }
            if let Some(port) = url.port() {
                write!(f, ":{port}")?;
            }
            f.write_str(url.path())?;
            if url.query().is_some() {
                f.write_str("?…")?;
            }
            Ok(())
        }
    }

    /// The status line of one HTTP exchange that got an answer.
    pub(crate) fn answered(method: &Method, url: &Url, status: StatusCode, headers: &HeaderMap) {
        tracing::trace!(
            target: WIRE_TARGET,
            "HTTP {method} {} -> {}{}",
            Shown(url),
            status,
            ContentType(headers),
        );
    }

    /// The status line of one HTTP exchange that got no answer.
    pub(crate) fn failed(method: &Method, url: &Url, error: &dyn fmt::Display) {
        tracing::trace!(target: WIRE_TARGET, "HTTP {method} {} -> failed: {error}", Shown(url));
    }

    /// A redirect being followed.
    pub(crate) fn redirect(status: reqwest::StatusCode, to: &Url) {
        tracing::trace!(target: WIRE_TARGET, "HTTP redirect {status} -> {}", Shown(to));
    }

    /// The end of a long-lived SSE stream (a GET stream, or a request's response stream).
    pub(crate) fn stream_closed(method: &Method, url: &Url) {
        tracing::trace!(target: WIRE_TARGET, "HTTP {method} {} stream closed", Shown(url));
    }

    /// ` (content/type)`, parameters included, or nothing.
    struct ContentType<'a>(&'a HeaderMap);

    impl fmt::Display for ContentType<'_> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self.0.get(CONTENT_TYPE).and_then(|v| v.to_str().ok()) {
                Some(value) => write!(f, " ({value})"),
                None => Ok(()),
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn urls_are_shown_without_query_fragment_or_credentials() {
            let url = Url::parse("https://u:p@as.example.com:8443/cb?code=secret&state=s#frag").unwrap();
            assert_eq!(Shown(&url).to_string(), "https://as.example.com:8443/cb?…");
            let url = Url::parse("http://127.0.0.1:3000/mcp").unwrap();
            assert_eq!(Shown(&url).to_string(), "http://127.0.0.1:3000/mcp");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Redacted, Text};

    #[test]
    fn passwords_in_urls_are_masked_and_nothing_else_changes() {
        let shown = |s: &str| Redacted(s).to_string();
        assert_eq!(shown("http://user:secret@host:8080/mcp?x=1"), "http://user:***@host:8080/mcp?x=1");
        assert_eq!(shown("https://:s3cr%40t@host/mcp"), "https://:***@host/mcp");
        assert_eq!(shown("http://user@host/mcp"), "http://user@host/mcp");
        assert_eq!(shown("http://127.0.0.1:3000/mcp"), "http://127.0.0.1:3000/mcp");
        assert_eq!(shown("http://host/a@b:c"), "http://host/a@b:c");
        assert_eq!(shown("http://u:p@a@host"), "http://u:***@host");
        assert_eq!(
            shown("stdio:srv --url http://a:pw@h/x --other https://b:pw2@i"),
            "stdio:srv --url http://a:***@h/x --other https://b:***@i"
        );
        assert_eq!(shown("not a url: 1"), "not a url: 1");
    }

    #[test]
    fn text_is_the_bytes_as_they_are() {
        assert_eq!(Text(br#"{"a": 1 }"#).to_string(), r#"{"a": 1 }"#);
        assert_eq!(Text(b"a\xffb").to_string(), "a\u{FFFD}b");
    }
}
