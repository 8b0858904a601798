//! Certificates for tests of TLS clients (`tls/` beside this crate's manifest, made with
//! `openssl` for these tests only, valid until 2126): a test CA, a server certificate it signed
//! for `127.0.0.1` and `localhost`, a client certificate it signed for mutual TLS, and a second
//! CA that signed neither. Keys are P-256, PKCS#8 PEM. Never trust any of them outside a test.

use std::path::PathBuf;

/// The path of the fixture `name`: `ca.pem`, `other-ca.pem`, `server.pem`, `server.key`,
/// `client.pem` or `client.key`.
pub fn fixture(name: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tls").join(name);
    assert!(path.is_file(), "no TLS fixture {}", path.display());
    path
}
