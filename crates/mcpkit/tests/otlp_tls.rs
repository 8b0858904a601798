//! OTLP exports over TLS, as the standard variables configure them, from the real binary to a
//! collector in the test that speaks HTTPS and asks for the client's certificate
//! (`OTEL_EXPORTER_OTLP_CERTIFICATE`, `…_CLIENT_CERTIFICATE`, `…_CLIENT_KEY`) and decodes gzip
//! bodies (`OTEL_EXPORTER_OTLP_COMPRESSION=gzip`), traces and metrics alike.

mod gateway_support;
mod support;

use std::io::Read;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gateway_support::{eventually, through_url};
use mcp_testkit::process::ListeningProcess;
use mcp_testkit::tls::fixture;

/// One export the collector took: its path, `Content-Encoding`, the service that sent it, and
/// the spans' or metrics' names.
#[derive(Debug, Clone)]
struct Export {
    path: String,
    encoding: Option<String>,
    service: String,
    names: Vec<String>,
}

#[derive(Default)]
struct Seen {
    exports: Vec<Export>,
    /// Handshakes that failed (a client without a certificate the CA signed, say).
    refused_handshakes: usize,
}

fn service_of(resource: Option<&opentelemetry_proto::tonic::resource::v1::Resource>) -> String {
    use opentelemetry_proto::tonic::common::v1::any_value::Value;
    resource
        .into_iter()
        .flat_map(|r| &r.attributes)
        .find(|a| a.key == "service.name")
        .and_then(|a| match a.value.as_ref().and_then(|v| v.value.as_ref()) {
            Some(Value::StringValue(s)) => Some(s.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

/// Decodes one export request: (service, names).
fn decode(path: &str, body: &[u8]) -> (String, Vec<String>) {
    use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use prost::Message;
    let mut service = String::new();
    let mut names = Vec::new();
    if path == "/v1/traces" {
        let request = ExportTraceServiceRequest::decode(body).expect("OTLP trace protobuf");
        for resource in request.resource_spans {
            service = service_of(resource.resource.as_ref());
            names.extend(resource.scope_spans.into_iter().flat_map(|s| s.spans).map(|s| s.name));
        }
    } else {
        let request = ExportMetricsServiceRequest::decode(body).expect("OTLP metrics protobuf");
        for resource in request.resource_metrics {
            service = service_of(resource.resource.as_ref());
            names.extend(resource.scope_metrics.into_iter().flat_map(|s| s.metrics).map(|m| m.name));
        }
    }
    (service, names)
}

/// An OTLP/HTTPS collector on 127.0.0.1:0 with the test CA's server certificate, which takes
/// only clients whose certificate the test CA signed; on a thread of its own, for the life of
/// the test process. Its base URL and what it saw.
fn collector() -> (String, Arc<Mutex<Seen>>) {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    use tokio_rustls::rustls;

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    roots.add(CertificateDer::from_pem_file(fixture("ca.pem")).unwrap()).unwrap();
    let verifier =
        rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
            .build()
            .unwrap();
    let chain = vec![CertificateDer::from_pem_file(fixture("server.pem")).unwrap()];
    let key = PrivateKeyDer::from_pem_file(fixture("server.key")).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_client_cert_verifier(verifier)
        .with_single_cert(chain, key)
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));

    let seen = Arc::new(Mutex::new(Seen::default()));
    let sink = seen.clone();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("https://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                let acceptor = acceptor.clone();
                let sink = sink.clone();
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(stream).await else {
                        sink.lock().unwrap().refused_handshakes += 1;
                        return;
                    };
                    let service =
                        hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                            let sink = sink.clone();
                            async move {
                                use http_body_util::BodyExt;
                                let path = request.uri().path().to_owned();
                                let encoding = request
                                    .headers()
                                    .get("content-encoding")
                                    .map(|v| v.to_str().unwrap_or_default().to_owned());
                                let body = request.into_body().collect().await.unwrap().to_bytes();
                                let body = if encoding.as_deref() == Some("gzip") {
                                    let mut plain = Vec::new();
                                    flate2::read::GzDecoder::new(&body[..]).read_to_end(&mut plain).unwrap();
                                    plain
                                } else {
                                    body.to_vec()
                                };
                                let (service, names) = decode(&path, &body);
                                sink.lock().unwrap().exports.push(Export { path, encoding, service, names });
                                Ok::<_, std::convert::Infallible>(hyper::Response::new(
                                    http_body_util::Empty::<bytes::Bytes>::new(),
                                ))
                            }
                        });
                    let io = hyper_util::rt::TokioIo::new(tls);
                    let _ = hyper::server::conn::http1::Builder::new().serve_connection(io, service).await;
                });
            }
        });
    });
    (url, seen)
}

/// A private copy of the client's key (mode 600), in a directory of its own.
fn private_key(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mcpkit-otlp-tls-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let key = dir.join("client.key");
    std::fs::copy(fixture("client.key"), &key).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    key
}

/// `mcpkit serve --http` exporting traces and metrics to `endpoint` as the service `service`,
/// with `vars` on top of gzip and short delays.
fn serve(endpoint: &str, service: &str, vars: &[(&str, String)]) -> ListeningProcess {
    let mut command = support::command(&["serve", "--http", "127.0.0.1:0"]);
    command
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
        .env("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip")
        .env("OTEL_SERVICE_NAME", service)
        .env("OTEL_BSP_SCHEDULE_DELAY", "100")
        .env("OTEL_METRIC_EXPORT_INTERVAL", "200");
    for (name, value) in vars {
        command.env(name, value);
    }
    ListeningProcess::start(command)
}

fn path(name: &str) -> String {
    fixture(name).display().to_string()
}

#[test]
fn traces_and_metrics_reach_a_collector_over_mutual_tls_gzipped() {
    let (endpoint, seen) = collector();
    let key = private_key("mutual");
    let server = serve(
        &endpoint,
        "tls-ok",
        &[
            ("OTEL_EXPORTER_OTLP_CERTIFICATE", path("ca.pem")),
            ("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", path("client.pem")),
            ("OTEL_EXPORTER_OTLP_CLIENT_KEY", key.display().to_string()),
        ],
    );
    let (code, _, err) = through_url(server.url(), &["call", "echo", "--arg", "text=over tls"]);
    assert_eq!(code, 0, "{err}");
    let exports = eventually("a span and a metrics export over TLS", Duration::from_secs(30), || {
        let seen = seen.lock().unwrap();
        let span = seen
            .exports
            .iter()
            .any(|e| e.path == "/v1/traces" && e.names.iter().any(|n| n == "tools/call echo"));
        let metrics = seen
            .exports
            .iter()
            .any(|e| e.path == "/v1/metrics" && e.names.iter().any(|n| n == "mcp.server.operation.duration"));
        if span && metrics {
            Ok(seen.exports.clone())
        } else {
            Err(format!("{:?}\nserver: {}", seen.exports, server.stderr()))
        }
    });
    for export in &exports {
        assert_eq!(export.encoding.as_deref(), Some("gzip"), "every export is compressed: {export:?}");
        assert_eq!(export.service, "tls-ok");
    }
    assert_eq!(seen.lock().unwrap().refused_handshakes, 0);
    std::fs::remove_dir_all(key.parent().unwrap()).unwrap();
}

#[test]
fn a_collector_the_named_ca_did_not_sign_or_a_client_without_its_certificate_gets_nothing() {
    let (endpoint, seen) = collector();

    // Trusting another CA: the collector's certificate is refused by the exporter.
    let key = private_key("other-ca");
    let server = serve(
        &endpoint,
        "tls-other-ca",
        &[
            ("OTEL_EXPORTER_OTLP_CERTIFICATE", path("other-ca.pem")),
            ("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", path("client.pem")),
            ("OTEL_EXPORTER_OTLP_CLIENT_KEY", key.display().to_string()),
        ],
    );
    let (code, _, err) = through_url(server.url(), &["call", "echo", "--arg", "text=x"]);
    assert_eq!(code, 0, "the server serves whatever its exports do: {err}");
    eventually("a failed export, logged", Duration::from_secs(30), || {
        let stderr = server.stderr();
        if stderr.contains("OTLP export of") && stderr.contains("failed") { Ok(()) } else { Err(stderr) }
    });
    drop(server);

    // The collector's CA trusted, but no client certificate: the collector refuses the handshake.
    let server = serve(&endpoint, "tls-anonymous", &[("OTEL_EXPORTER_OTLP_CERTIFICATE", path("ca.pem"))]);
    let (code, _, err) = through_url(server.url(), &["call", "echo", "--arg", "text=y"]);
    assert_eq!(code, 0, "{err}");
    eventually("a refused handshake", Duration::from_secs(30), || {
        let refused = seen.lock().unwrap().refused_handshakes;
        if refused > 0 { Ok(()) } else { Err(server.stderr()) }
    });
    assert!(seen.lock().unwrap().exports.is_empty(), "nothing reached the collector");
    std::fs::remove_dir_all(key.parent().unwrap()).unwrap();
}

#[cfg(unix)]
#[test]
fn a_client_key_other_users_may_write_is_not_read_and_the_server_still_serves() {
    use std::os::unix::fs::PermissionsExt;
    let key = private_key("writable");
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o666)).unwrap();
    let server = serve(
        "https://127.0.0.1:9",
        "tls-writable",
        &[
            ("OTEL_EXPORTER_OTLP_CERTIFICATE", path("ca.pem")),
            ("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", path("client.pem")),
            ("OTEL_EXPORTER_OTLP_CLIENT_KEY", key.display().to_string()),
        ],
    );
    let (code, out, err) = through_url(server.url(), &["call", "echo", "--arg", "text=still here"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("still here"), "{out}");
    let stderr = server.stderr();
    for signal in ["tracing", "metrics"] {
        assert!(
            stderr
                .lines()
                .any(|l| l.starts_with(&format!("mcpkit: {signal}: OTEL_EXPORTER_OTLP_CLIENT_KEY"))
                    && l.contains("writable by other users")),
            "{signal}: {stderr}"
        );
    }
    std::fs::remove_dir_all(key.parent().unwrap()).unwrap();
}
