//! Where one OpenTelemetry signal (`metrics`, `traces`) is pushed over OTLP/HTTP (protobuf), and
//! how, as the standard variables of OpenTelemetry's OTLP exporter say: the endpoint, headers,
//! timeout, compression, and the TLS certificates of the collector and of the client. One home
//! for them, shared by these metrics and mcp-trace's spans, so both read the `OTEL_*` variables
//! the same way and build their HTTP clients alike.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use mcp_server::trust::{Holds, read_trusted};

/// How an export request's body is compressed (`OTEL_EXPORTER_OTLP_COMPRESSION`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum OtlpCompression {
    /// Sent as encoded (the variables' default).
    #[default]
    None,
    /// gzip, with `Content-Encoding: gzip`.
    Gzip,
}

/// Where one OpenTelemetry signal is pushed ([the module](self)).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct OtlpTarget {
    /// The full URL (`…/v1/metrics`, `…/v1/traces`).
    pub url: String,
    /// Extra request headers (often credentials: never log their values).
    pub headers: Vec<(String, String)>,
    /// How long one push may take.
    pub timeout: Duration,
    /// The `service.name` of the resource.
    pub service: String,
    /// How each request's body is compressed.
    pub compression: OtlpCompression,
    tls: Tls,
}

/// The certificates the variables name, read and parsed when they are read (a mistake in them
/// is reported at start, not at the first export).
#[derive(Clone, Debug, Default)]
struct Tls {
    /// `…_CERTIFICATE`: the certificates trusted to sign the collector's, instead of the
    /// built-in roots.
    roots: Vec<reqwest::Certificate>,
    /// `…_CLIENT_CERTIFICATE` and `…_CLIENT_KEY`: the client's own, for mutual TLS.
    identity: Option<reqwest::Identity>,
}

impl OtlpTarget {
    /// Pushes to `url` (the full URL) as the service `service`, without extra headers or
    /// compression, each push allowed 10 s.
    pub fn new(url: impl Into<String>, service: impl Into<String>) -> OtlpTarget {
        OtlpTarget {
            url: url.into(),
            headers: Vec::new(),
            timeout: Duration::from_secs(10),
            service: service.into(),
            compression: OtlpCompression::None,
            tls: Tls::default(),
        }
    }

    /// The target of `signal` (`"metrics"` or `"traces"`), each setting from its
    /// signal's own variable (`OTEL_EXPORTER_OTLP_TRACES_…`) or else the shared one
    /// (`OTEL_EXPORTER_OTLP_…`):
    ///
    /// - `…_ENDPOINT`: the signal's is the full URL; the shared one has `/v1/{signal}` appended;
    /// - `…_HEADERS`: both lists, the shared one first;
    /// - `…_TIMEOUT` in milliseconds (default 10,000);
    /// - `…_COMPRESSION`: `gzip` or `none` (the default);
    /// - `…_CERTIFICATE`: a PEM file of the certificates that sign the collector's, trusted
    ///   instead of the built-in roots;
    /// - `…_CLIENT_CERTIFICATE` and `…_CLIENT_KEY`: PEM files of the client's certificate and
    ///   key for mutual TLS, both or neither. The key is refused when other users may write its
    ///   file, and read with a warning when they may read it ([`mcp_server::trust`]);
    /// - `OTEL_SERVICE_NAME` (else `service`).
    ///
    /// `Ok(None)` without an endpoint, or with `OTEL_{SIGNAL}_EXPORTER=none` or
    /// `OTEL_SDK_DISABLED=true`; an error naming the variable for a protocol other than
    /// `http/protobuf`, a malformed value or a file that cannot be used.
    pub fn from_env(signal: &str, service: &str) -> Result<Option<OtlpTarget>, String> {
        Self::from_vars(signal, service, env)
    }

    pub(crate) fn from_vars(
        signal: &str,
        service: &str,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<OtlpTarget>, String> {
        let upper = signal.to_ascii_uppercase();
        let disabled = env("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"))
            || env(&format!("OTEL_{upper}_EXPORTER")).is_some_and(|v| v.eq_ignore_ascii_case("none"));
        let url = match (
            env(&format!("OTEL_EXPORTER_OTLP_{upper}_ENDPOINT")),
            env("OTEL_EXPORTER_OTLP_ENDPOINT"),
        ) {
            (Some(url), _) => url,
            (None, Some(base)) => format!("{}/v1/{signal}", base.trim_end_matches('/')),
            (None, None) => return Ok(None),
        };
        if disabled {
            return Ok(None);
        }
        // The signal's own variable, else the shared one: (the name that was set, its value).
        let setting = |setting: &str| {
            let own = format!("OTEL_EXPORTER_OTLP_{upper}_{setting}");
            match env(&own) {
                Some(value) => Some((own, value)),
                None => {
                    let shared = format!("OTEL_EXPORTER_OTLP_{setting}");
                    env(&shared).map(|value| (shared, value))
                }
            }
        };
        if let Some((name, protocol)) = setting("PROTOCOL")
            && protocol.trim() != "http/protobuf"
        {
            return Err(format!("{name}={protocol}: mcpkit exports {signal} as http/protobuf only"));
        }
        let mut headers = Vec::new();
        for name in ["OTEL_EXPORTER_OTLP_HEADERS".to_owned(), format!("OTEL_EXPORTER_OTLP_{upper}_HEADERS")] {
            if let Some(list) = env(&name) {
                headers.extend(parse_headers(&list).map_err(|e| format!("{name}: {e}"))?);
            }
        }
        let timeout = match setting("TIMEOUT") {
            None => Duration::from_secs(10),
            Some((name, ms)) => Duration::from_millis(positive_millis(&name, &ms)?),
        };
        let compression = match setting("COMPRESSION") {
            None => OtlpCompression::None,
            Some((name, value)) => match value.trim() {
                "none" => OtlpCompression::None,
                "gzip" => OtlpCompression::Gzip,
                other => return Err(format!("{name}={other}: the compression is gzip or none")),
            },
        };
        let roots = match setting("CERTIFICATE") {
            None => Vec::new(),
            Some((name, path)) => certificates(&name, Path::new(path.trim()))?.0,
        };
        let identity = match (setting("CLIENT_CERTIFICATE"), setting("CLIENT_KEY")) {
            (None, None) => None,
            (Some((name, _)), None) | (None, Some((name, _))) => {
                return Err(format!(
                    "{name} is set without its pair: mutual TLS takes both a client certificate and its key"
                ));
            }
            (Some((cert_name, cert)), Some((key_name, key))) => {
                Some(identity((&cert_name, Path::new(cert.trim())), (&key_name, Path::new(key.trim())))?)
            }
        };
        let service = env("OTEL_SERVICE_NAME").unwrap_or_else(|| service.to_owned());
        Ok(Some(OtlpTarget { url, headers, timeout, service, compression, tls: Tls { roots, identity } }))
    }

    /// An HTTP client for this target: its timeout, and its certificates when the variables
    /// name any (then only those sign a collector's certificate).
    pub fn client(&self) -> reqwest::Result<reqwest::Client> {
        let mut builder = reqwest::Client::builder().timeout(self.timeout);
        if !self.tls.roots.is_empty() {
            builder = builder.tls_built_in_root_certs(false);
            for root in &self.tls.roots {
                builder = builder.add_root_certificate(root.clone());
            }
        }
        if let Some(identity) = &self.tls.identity {
            builder = builder.identity(identity.clone());
        }
        builder.build()
    }

    /// `body` as this target sends it, and the `Content-Encoding` it then carries.
    pub(crate) fn encoded<B>(&self, body: B) -> (reqwest::Body, Option<&'static str>)
    where
        B: AsRef<[u8]> + Into<reqwest::Body>,
    {
        match self.compression {
            OtlpCompression::None => (body.into(), None),
            OtlpCompression::Gzip => (gzip(body.as_ref()).into(), Some("gzip")),
        }
    }
}

/// `data` compressed with gzip, at the fastest level: exports are compressed on the server's
/// own threads, and for OTLP's protobuf the faster levels already take most of what there is
/// to gain.
pub(crate) fn gzip(data: &[u8]) -> Vec<u8> {
    let mut encoder =
        flate2::write::GzEncoder::new(Vec::with_capacity(data.len() / 4 + 64), flate2::Compression::fast());
    // Writing into a Vec cannot fail.
    let _ = encoder.write_all(data);
    encoder.finish().unwrap_or_default()
}

/// The certificates of the PEM file `path` (named by the variable `name`), with the file's
/// bytes.
fn certificates(name: &str, path: &Path) -> Result<(Vec<reqwest::Certificate>, Vec<u8>), String> {
    let pem = std::fs::read(path).map_err(|e| format!("{name}={}: {e}", path.display()))?;
    let certificates = reqwest::Certificate::from_pem_bundle(&pem)
        .map_err(|e| format!("{name}={}: not PEM certificates ({e})", path.display()))?;
    if certificates.is_empty() {
        return Err(format!("{name}={}: no certificate in the file (PEM expected)", path.display()));
    }
    Ok((certificates, pem))
}

/// The client's certificate and key for mutual TLS, from their PEM files (each as `(variable,
/// path)`); the key read as a secret ([`Holds::Secret`]).
fn identity(cert: (&str, &Path), key: (&str, &Path)) -> Result<reqwest::Identity, String> {
    let (_, mut pem) = certificates(cert.0, cert.1)?;
    let secret = read_trusted(key.1, Holds::Secret).map_err(|e| format!("{}: {e}", key.0))?;
    pem.push(b'\n');
    pem.extend_from_slice(secret.as_bytes());
    reqwest::Identity::from_pem(&pem).map_err(|e| {
        format!(
            "{}={} and {}={}: not a certificate and its private key in PEM ({e})",
            cert.0,
            cert.1.display(),
            key.0,
            key.1.display()
        )
    })
}

/// A variable holding a positive number of milliseconds.
pub fn positive_millis(name: &str, value: &str) -> Result<u64, String> {
    match value.trim().parse::<u64>() {
        Ok(ms) if ms > 0 => Ok(ms),
        _ => Err(format!("{name}={value}: not a positive number of milliseconds")),
    }
}

/// A variable's value, unset when empty.
pub(crate) fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// `key=value,key2=value2`, values percent-decoded (W3C Baggage's form, as the variables use).
fn parse_headers(list: &str) -> Result<Vec<(String, String)>, String> {
    list.split(',')
        .filter(|pair| !pair.trim().is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').ok_or_else(|| "expected key=value pairs".to_owned())?;
            let value = percent_decode(value.trim())?;
            Ok((key.trim().to_owned(), value))
        })
        .collect()
}

/// `%XX` escapes decoded (the form of the `OTEL_*` list variables).
pub fn percent_decode(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3).ok_or("a truncated %-escape")?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| "a malformed %-escape")?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| "a value that is not UTF-8".to_owned())
}

#[cfg(test)]
mod tests;
