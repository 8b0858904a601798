//! The checks every request passes before any work is done for it (docs/DECISIONS.md order:
//! Host 403 → Origin 403 → method 405 → Content-Type 415 → Accept 406 → body size 413).

use http::{HeaderMap, StatusCode, header};

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

/// DNS rebinding changes `Host`; a cross-site page sends a foreign `Origin`. Both are refused.
pub(crate) fn host_and_origin(config: &HttpConfig, headers: &HeaderMap) -> Result<(), Refusal> {
    if !config.allowed_hosts.is_empty() {
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
        if !config.allowed_hosts.iter().any(|allowed| allowed.eq_ignore_ascii_case(host)) {
            return Err(refuse(StatusCode::FORBIDDEN, "Host not allowed"));
        }
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("null");
        if origin == "null"
            || !config.allowed_origins.iter().any(|allowed| allowed.eq_ignore_ascii_case(origin))
        {
            return Err(refuse(StatusCode::FORBIDDEN, "Origin not allowed"));
        }
    }
    Ok(())
}

/// A POST body must be JSON (a cross-site form POST sends `text/plain`).
pub(crate) fn content_type(headers: &HeaderMap) -> Result<(), Refusal> {
    let value = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let essence = value.split(';').next().unwrap_or("").trim();
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
/// nor SSE is acceptable (docs/DECISIONS.md).
pub(crate) fn accepts(headers: &HeaderMap) -> Result<Accepts, Refusal> {
    let mut accepts = Accepts { json: false, sse: false };
    let values: Vec<&str> = headers.get_all(header::ACCEPT).iter().filter_map(|v| v.to_str().ok()).collect();
    if values.is_empty() {
        return Ok(Accepts { json: true, sse: true });
    }
    for range in values.iter().flat_map(|v| v.split(',')) {
        let mut parts = range.split(';');
        let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
        let refused = parts.any(|p| {
            let p = p.trim();
            p.strip_prefix("q=").is_some_and(|q| q.trim().parse::<f32>().is_ok_and(|q| q == 0.0))
        });
        if refused {
            continue;
        }
        match media.as_str() {
            "*/*" => accepts = Accepts { json: true, sse: true },
            "application/*" | "application/json" => accepts.json = true,
            "text/*" | "text/event-stream" => accepts.sse = true,
            _ => {}
        }
    }
    if accepts.json || accepts.sse {
        Ok(accepts)
    } else {
        Err(refuse(StatusCode::NOT_ACCEPTABLE, "Accept must allow application/json or text/event-stream"))
    }
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
    fn host_and_origin_allowlists() {
        let config = HttpConfig::for_bind("127.0.0.1:8080".parse().unwrap());
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
    }
}
