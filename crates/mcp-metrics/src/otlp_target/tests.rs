use std::io::Read;

use mcp_testkit::tls::fixture;

use super::*;

/// The variables of `pairs`, as `from_vars` reads them.
fn vars(pairs: Vec<(&'static str, String)>) -> impl Fn(&str) -> Option<String> + Clone {
    move |name: &str| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| v.clone())
}

fn path(name: &str) -> String {
    fixture(name).display().to_string()
}

fn with_endpoint(mut pairs: Vec<(&'static str, String)>) -> impl Fn(&str) -> Option<String> + Clone {
    pairs.push(("OTEL_EXPORTER_OTLP_ENDPOINT", "https://127.0.0.1:4318".into()));
    vars(pairs)
}

#[test]
fn each_signal_reads_its_own_variables_and_the_shared_ones() {
    let shared = vars(vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/".into()),
        ("OTEL_EXPORTER_OTLP_HEADERS", "api-key=a%20b".into()),
        ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x=1".into()),
        ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "2500".into()),
        ("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip".into()),
        ("OTEL_EXPORTER_OTLP_METRICS_COMPRESSION", "none".into()),
        ("OTEL_SERVICE_NAME", "svc".into()),
    ]);
    let traces = OtlpTarget::from_vars("traces", "default", shared.clone()).unwrap().unwrap();
    assert_eq!(traces.url, "http://collector:4318/v1/traces");
    assert_eq!(traces.headers, [("api-key".to_owned(), "a b".to_owned()), ("x".to_owned(), "1".to_owned())]);
    assert_eq!(traces.timeout, Duration::from_millis(2500));
    assert_eq!(traces.service, "svc");
    assert_eq!(traces.compression, OtlpCompression::Gzip, "the shared variable");
    let metrics = OtlpTarget::from_vars("metrics", "default", shared).unwrap().unwrap();
    assert_eq!(metrics.url, "http://collector:4318/v1/metrics");
    assert_eq!(metrics.headers.len(), 1);
    assert_eq!(metrics.timeout, Duration::from_secs(10));
    assert_eq!(metrics.compression, OtlpCompression::None, "the signal's own variable wins");
    let own = vars(vec![
        ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t/x".into()),
        ("OTEL_METRICS_EXPORTER", "none".into()),
    ]);
    assert_eq!(OtlpTarget::from_vars("traces", "d", own.clone()).unwrap().unwrap().url, "http://t/x");
    assert!(OtlpTarget::from_vars("metrics", "d", own).unwrap().is_none(), "no endpoint for metrics");
    let off = vars(vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c".into()),
        ("OTEL_TRACES_EXPORTER", "none".into()),
    ]);
    assert!(OtlpTarget::from_vars("traces", "d", off.clone()).unwrap().is_none());
    assert!(OtlpTarget::from_vars("metrics", "d", off).unwrap().is_some());
}

#[test]
fn a_mistake_in_a_variable_is_named() {
    let error = |pairs: Vec<(&'static str, String)>| {
        OtlpTarget::from_vars("traces", "d", with_endpoint(pairs)).map(|_| ()).unwrap_err()
    };
    let grpc = error(vec![("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc".into())]);
    assert!(grpc.contains("OTEL_EXPORTER_OTLP_PROTOCOL=grpc") && grpc.contains("http/protobuf"), "{grpc}");
    let own = error(vec![("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json".into())]);
    assert!(own.contains("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"), "{own}");
    let timeout = error(vec![("OTEL_EXPORTER_OTLP_TIMEOUT", "soon".into())]);
    assert!(timeout.contains("OTEL_EXPORTER_OTLP_TIMEOUT"), "{timeout}");
    let zstd = error(vec![("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "zstd".into())]);
    assert!(zstd.contains("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION=zstd") && zstd.contains("gzip"), "{zstd}");
    let missing = error(vec![("OTEL_EXPORTER_OTLP_CERTIFICATE", "/nonexistent/ca.pem".into())]);
    assert!(missing.contains("OTEL_EXPORTER_OTLP_CERTIFICATE=/nonexistent/ca.pem"), "{missing}");
    let not_pem = error(vec![("OTEL_EXPORTER_OTLP_CERTIFICATE", path("client.key"))]);
    assert!(not_pem.contains("no certificate"), "a key is not a certificate: {not_pem}");
    let half = error(vec![("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", path("client.pem"))]);
    assert!(half.contains("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE") && half.contains("both"), "{half}");
    let half = error(vec![("OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY", path("client.key"))]);
    assert!(half.contains("OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY"), "{half}");
    let wrong_key = error(vec![
        ("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", path("client.pem")),
        ("OTEL_EXPORTER_OTLP_CLIENT_KEY", path("ca.pem")),
    ]);
    assert!(wrong_key.contains("private key"), "{wrong_key}");
}

#[test]
fn certificates_and_a_client_identity_are_read_and_built_into_the_client() {
    let target = OtlpTarget::from_vars(
        "metrics",
        "d",
        with_endpoint(vec![
            ("OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE", path("ca.pem")),
            ("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", path("client.pem")),
            ("OTEL_EXPORTER_OTLP_CLIENT_KEY", path("client.key")),
        ]),
    )
    .unwrap()
    .unwrap();
    assert_eq!(target.tls.roots.len(), 1);
    assert!(target.tls.identity.is_some());
    target.client().expect("a client with the test CA and the client's identity");
    assert!(OtlpTarget::new("http://c", "s").tls.roots.is_empty(), "the built-in roots by default");
}

#[cfg(unix)]
#[test]
fn a_client_key_other_users_may_write_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("mcp-metrics-otlp-key-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let key = dir.join("client.key");
    std::fs::copy(fixture("client.key"), &key).unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o666)).unwrap();
    let pairs = vec![
        ("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", path("client.pem")),
        ("OTEL_EXPORTER_OTLP_CLIENT_KEY", key.display().to_string()),
    ];
    let error = OtlpTarget::from_vars("traces", "d", with_endpoint(pairs.clone())).map(|_| ()).unwrap_err();
    assert!(
        error.contains("OTEL_EXPORTER_OTLP_CLIENT_KEY") && error.contains("writable by other users"),
        "{error}"
    );
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert!(OtlpTarget::from_vars("traces", "d", with_endpoint(pairs)).unwrap().is_some());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_gzip_body_says_so_and_decodes_to_what_was_given() {
    let body: Vec<u8> = (0..20_000u32).flat_map(|i| (i % 251).to_le_bytes()).collect();
    let plain = OtlpTarget::new("http://c", "s");
    let (_, encoding) = plain.encoded(body.clone());
    assert_eq!(encoding, None);
    let mut compressed = OtlpTarget::new("http://c", "s");
    compressed.compression = OtlpCompression::Gzip;
    let (_, encoding) = compressed.encoded(body.clone());
    assert_eq!(encoding, Some("gzip"));
    let gzipped = gzip(&body);
    assert!(gzipped.len() < body.len() / 4, "{} of {}", gzipped.len(), body.len());
    let mut decoded = Vec::new();
    flate2::read::GzDecoder::new(gzipped.as_slice()).read_to_end(&mut decoded).unwrap();
    assert_eq!(decoded, body);
}

#[test]
fn headers_are_pairs_with_escapes() {
    let parsed = parse_headers("api-key=a%20b, x=1").unwrap();
    assert_eq!(parsed, [("api-key".to_owned(), "a b".to_owned()), ("x".to_owned(), "1".to_owned())]);
    assert!(parse_headers("novalue").is_err());
    assert!(parse_headers("k=%zz").is_err());
}
