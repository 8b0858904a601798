//! The checks every request passes before any work is done for it (docs/DECISIONS.md order:
//! head 431 / 400 → Host 403 → Origin 403 → method 405 → Content-Type 415 → Accept 406 → body
//! size 413).

use http::{HeaderMap, HeaderName, HeaderValue, StatusCode, Version, header};

#[cfg(test)]
use crate::config::HttpConfig;

/// A refusal before dispatch: a status and a short plain-text reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub(crate) status: StatusCode,
    pub(crate) reason: &'static str,
}

fn refuse(status: StatusCode, reason: &'static str) -> Refusal {
    Refusal { status, reason }
}

/// The request head, before anything else: the header limits (`431`; the standalone server's
/// hyper applies them while reading, this check is for routers mounted elsewhere) and exactly
/// one `Host` (RFC 9112 §3.2: none in HTTP/1.1, or more than one, is `400`) — an allowlist that
/// reads one `Host` while a proxy routes on another would check nothing.
pub(crate) fn head(
    max_headers: usize,
    max_header_bytes: usize,
    version: Version,
    headers: &HeaderMap,
) -> Result<(), Refusal> {
    head_seeing(max_headers, max_header_bytes, version, headers, |_, _| {})
}

/// [`head`], showing `each` every field it walks to count their bytes (all of them, unless
/// there are too many to walk): a caller that wants a field by name finds it on the way,
/// instead of hashing the name for a lookup of its own.
pub(crate) fn head_seeing<'h>(
    max_headers: usize,
    max_header_bytes: usize,
    version: Version,
    headers: &'h HeaderMap,
    mut each: impl FnMut(&'h HeaderName, &'h HeaderValue),
) -> Result<(), Refusal> {
    if headers.len() > max_headers {
        return Err(refuse(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE, "too many header fields"));
    }
    // Each field as sent: name, ": ", value, CRLF.
    let mut bytes = 0usize;
    for (name, value) in headers {
        bytes += name.as_str().len() + value.len() + 4;
        each(name, value);
    }
    if bytes > max_header_bytes {
        return Err(refuse(StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE, "request header fields too large"));
    }
    match headers.get_all(header::HOST).iter().count() {
        0 if version == Version::HTTP_11 => Err(refuse(StatusCode::BAD_REQUEST, "Host is required")),
        0 | 1 => Ok(()),
        _ => Err(refuse(StatusCode::BAD_REQUEST, "more than one Host header")),
    }
}

/// DNS rebinding changes `Host`; a cross-site page sends a foreign `Origin`. Both are refused.
/// An empty `hosts` accepts any `Host`; `origins` lists the only `Origin`s accepted.
pub(crate) fn host_and_origin(
    hosts: &[String],
    origins: &[String],
    headers: &HeaderMap,
) -> Result<(), Refusal> {
    host(hosts, headers)?;
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("null");
        if origin == "null" || !origins.iter().any(|allowed| allowed.eq_ignore_ascii_case(origin)) {
            logged_refusal(&ORIGINS_REFUSED, "Origin", origin);
            return Err(refuse(StatusCode::FORBIDDEN, "Origin not allowed"));
        }
    }
    Ok(())
}

/// The `Host` allowlist alone (an empty list accepts any).
pub(crate) fn host(hosts: &[String], headers: &HeaderMap) -> Result<(), Refusal> {
    if !hosts.is_empty() {
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
        if !hosts.iter().any(|allowed| allowed.eq_ignore_ascii_case(host)) {
            logged_refusal(&HOSTS_REFUSED, "Host", host);
            return Err(refuse(StatusCode::FORBIDDEN, "Host not allowed"));
        }
    }
    Ok(())
}

/// Requests refused for their `Host`, and for their `Origin`, since the process started.
static HOSTS_REFUSED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static ORIGINS_REFUSED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Logs a refused `Host` or `Origin` — an operator whose clients use a name the server does not
/// know sees why they get `403` — at the 1st, 2nd, 4th, 8th... refusal: a flood of them (a
/// rebinding attempt) cannot flood the log.
fn logged_refusal(count: &std::sync::atomic::AtomicU64, header: &str, value: &str) {
    let n = count.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
    if n.is_power_of_two() {
        let value: String = value.chars().take(256).collect();
        tracing::warn!(
            target: "mcp_http",
            "refused a request with {header} {value:?}: not an allowed {} ({n} refused so far; allow it in the server's configuration)",
            header.to_ascii_lowercase()
        );
    }
}

/// A POST body must be JSON (a cross-site form POST sends `text/plain`).
pub(crate) fn content_type(headers: &HeaderMap) -> Result<(), Refusal> {
    let value = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let essence = value.split(';').next().unwrap_or("").trim_ascii();
    if essence.eq_ignore_ascii_case("application/json") {
        Ok(())
    } else {
        Err(refuse(StatusCode::UNSUPPORTED_MEDIA_TYPE, "Content-Type must be application/json"))
    }
}

/// What the client accepts for a POST answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Accepts {
    pub(crate) json: bool,
    pub(crate) sse: bool,
}

/// Reads `Accept` (wildcards count; no header means anything). `406` only when neither JSON
/// nor SSE is acceptable (docs/DECISIONS.md). Read in place as bytes, every request: no list of
/// the values, no lower-cased copy of a media range, no character decoding (a value `to_str`
/// accepts is visible ASCII and tabs).
pub(crate) fn accepts(headers: &HeaderMap) -> Result<Accepts, Refusal> {
    let mut accepts = Accepts { json: false, sse: false };
    let mut any = false;
    for value in headers.get_all(header::ACCEPT).iter().filter_map(|v| v.to_str().ok()) {
        any = true;
        for range in value.as_bytes().split(|&b| b == b',') {
            let (media, parameters) = match range.iter().position(|&b| b == b';') {
                Some(at) => (&range[..at], Some(&range[at + 1..])),
                None => (range, None),
            };
            if parameters.is_some_and(refused) {
                continue;
            }
            let media = media.trim_ascii();
            let is = |name: &[u8]| media.eq_ignore_ascii_case(name);
            if is(b"*/*") {
                accepts = Accepts { json: true, sse: true };
            } else if is(b"application/json") || is(b"application/*") {
                accepts.json = true;
            } else if is(b"text/event-stream") || is(b"text/*") {
                accepts.sse = true;
            }
        }
    }
    if !any {
        return Ok(Accepts { json: true, sse: true });
    }
    if accepts.json || accepts.sse {
        Ok(accepts)
    } else {
        Err(refuse(StatusCode::NOT_ACCEPTABLE, "Accept must allow application/json or text/event-stream"))
    }
}

/// Whether a media range's parameters (after its first `;`) refuse it: `q=0`.
fn refused(parameters: &[u8]) -> bool {
    parameters.split(|&b| b == b';').any(|p| {
        p.trim_ascii().strip_prefix(b"q=").is_some_and(|q| {
            std::str::from_utf8(q.trim_ascii()).ok().and_then(|q| q.parse::<f32>().ok()) == Some(0.0)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn the_head_has_limits_and_one_host() {
        let head = |version, headers: &HeaderMap| head(3, 64, version, headers);
        let ok = headers(&[("host", "a:1"), ("accept", "*/*")]);
        assert!(head(Version::HTTP_11, &ok).is_ok());
        let two_hosts = headers(&[("host", "a:1"), ("host", "b:2")]);
        assert_eq!(head(Version::HTTP_11, &two_hosts).unwrap_err().status, StatusCode::BAD_REQUEST);
        assert_eq!(head(Version::HTTP_10, &two_hosts).unwrap_err().status, StatusCode::BAD_REQUEST);
        assert_eq!(head(Version::HTTP_11, &headers(&[])).unwrap_err().status, StatusCode::BAD_REQUEST);
        assert!(head(Version::HTTP_10, &headers(&[])).is_ok(), "HTTP/1.0 may omit Host");
        assert!(head(Version::HTTP_2, &headers(&[])).is_ok(), "HTTP/2 has :authority");
        let many = headers(&[("host", "a"), ("a", "1"), ("b", "2"), ("c", "3")]);
        assert_eq!(
            head(Version::HTTP_11, &many).unwrap_err().status,
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE
        );
        let big =
            headers(&[("host", "a"), ("x", "0123456789012345678901234567890123456789012345678901234567890")]);
        assert_eq!(
            head(Version::HTTP_11, &big).unwrap_err().status,
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE
        );
    }

    #[test]
    fn host_and_origin_allowlists() {
        let config = HttpConfig::for_bind("127.0.0.1:8080".parse().unwrap());
        let host_and_origin = |_: &HttpConfig, h: &HeaderMap| {
            host_and_origin(&config.allowed_hosts, &config.allowed_origins, h)
        };
        assert!(host_and_origin(&config, &headers(&[("host", "127.0.0.1:8080")])).is_ok());
        assert!(
            host_and_origin(
                &config,
                &headers(&[("host", "LOCALHOST:8080"), ("origin", "http://localhost:8080")])
            )
            .is_ok()
        );
        let evil = headers(&[("host", "evil.example.com"), ("origin", "http://evil.example.com")]);
        assert_eq!(host_and_origin(&config, &evil).unwrap_err().status, StatusCode::FORBIDDEN);
        let rebinding = headers(&[("host", "127.0.0.1:8080"), ("origin", "http://evil.example.com")]);
        assert_eq!(host_and_origin(&config, &rebinding).unwrap_err().status, StatusCode::FORBIDDEN);
        let other_port = headers(&[("host", "127.0.0.1:8080"), ("origin", "http://localhost:9999")]);
        assert!(host_and_origin(&config, &other_port).is_err());
        let null = headers(&[("host", "127.0.0.1:8080"), ("origin", "null")]);
        assert!(host_and_origin(&config, &null).is_err());
        assert!(host_and_origin(&config, &headers(&[])).is_err(), "no Host at all");
    }

    #[test]
    fn content_type_and_accept() {
        assert!(content_type(&headers(&[("content-type", "application/json; charset=utf-8")])).is_ok());
        assert_eq!(
            content_type(&headers(&[("content-type", "text/plain")])).unwrap_err().status,
            StatusCode::UNSUPPORTED_MEDIA_TYPE
        );
        assert!(content_type(&headers(&[])).is_err());
        let both = accepts(&headers(&[("accept", "application/json, text/event-stream")])).unwrap();
        assert_eq!(both, Accepts { json: true, sse: true });
        assert_eq!(accepts(&headers(&[("accept", "*/*")])).unwrap(), Accepts { json: true, sse: true });
        assert_eq!(
            accepts(&headers(&[("accept", "application/json")])).unwrap(),
            Accepts { json: true, sse: false }
        );
        assert_eq!(
            accepts(&headers(&[("accept", "text/html")])).unwrap_err().status,
            StatusCode::NOT_ACCEPTABLE
        );
        assert!(accepts(&headers(&[("accept", "application/json;q=0")])).is_err());
        // Media ranges are case-insensitive, may come in several fields, and a refused one
        // (`q=0`) leaves the others standing.
        assert_eq!(
            accepts(&headers(&[("accept", "Application/JSON"), ("accept", "TEXT/*")])).unwrap(),
            Accepts { json: true, sse: true }
        );
        assert_eq!(
            accepts(&headers(&[("accept", "text/event-stream ; q=0 , application/* ;q=0.5")])).unwrap(),
            Accepts { json: true, sse: false }
        );
        assert_eq!(
            accepts(&headers(&[("accept", "text/event-stream")])).unwrap(),
            Accepts { json: false, sse: true }
        );
        // A value that is not visible ASCII is not read: as if there were no `Accept`.
        let mut opaque = HeaderMap::new();
        opaque.append(header::ACCEPT, HeaderValue::from_bytes(b"application/json\xff").unwrap());
        assert_eq!(accepts(&opaque).unwrap(), Accepts { json: true, sse: true });
    }
}
