//! A real (test) OAuth authorization server on 127.0.0.1: it signs JWT access tokens with the
//! fixture keys (RS256 and ES256), serves its metadata (RFC 8414) and JWKS, answers token
//! introspection (RFC 7662) for client `rs-client`, and can rotate its RSA key.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use http::{HeaderMap, StatusCode, header};
use mcp_auth::jose::{Algorithm, JwkSet, SigningKey};
use serde_json::{Map, Value, json};

pub(crate) const RSA1: &str = include_str!("rsa1.pem");
pub(crate) const RSA2: &str = include_str!("rsa2.pem");
pub(crate) const RSA1_PUBLIC: &str = include_str!("rsa1.pub.pem");
pub(crate) const EC1: &str = include_str!("ec1.pem");
pub(crate) const DPOP: &str = include_str!("dpop.pem");

/// The introspection client's credentials.
pub(crate) const CLIENT_ID: &str = "rs-client";
pub(crate) const CLIENT_SECRET: &str = "rs secret:with/odd+chars";

pub(crate) fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

pub(crate) fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

struct Keys {
    rsa: Arc<SigningKey>,
    ec: Arc<SigningKey>,
}

struct Inner {
    issuer: String,
    keys: Mutex<Keys>,
    jwks_hits: AtomicUsize,
    introspections: AtomicUsize,
    /// Opaque token → introspection answer.
    opaque: Mutex<HashMap<String, Value>>,
}

/// The running authorization server.
#[derive(Clone)]
pub(crate) struct AuthorizationServer {
    inner: Arc<Inner>,
}

fn key(pem: &str, kid: &str) -> Arc<SigningKey> {
    Arc::new(SigningKey::from_pem(pem, None).unwrap().with_kid(kid))
}

impl AuthorizationServer {
    /// Starts one on a free loopback port.
    pub(crate) async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr: SocketAddr = listener.local_addr().unwrap();
        let inner = Arc::new(Inner {
            issuer: format!("http://{addr}"),
            keys: Mutex::new(Keys { rsa: key(RSA1, "rsa-1"), ec: key(EC1, "ec-1") }),
            jwks_hits: AtomicUsize::new(0),
            introspections: AtomicUsize::new(0),
            opaque: Mutex::default(),
        });
        let router = axum::Router::new()
            .route("/.well-known/oauth-authorization-server", axum::routing::get(metadata))
            .route("/jwks", axum::routing::get(jwks))
            .route("/introspect", axum::routing::post(introspect))
            .with_state(inner.clone());
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        AuthorizationServer { inner }
    }

    pub(crate) fn issuer(&self) -> String {
        self.inner.issuer.clone()
    }

    pub(crate) fn jwks_uri(&self) -> String {
        format!("{}/jwks", self.inner.issuer)
    }

    pub(crate) fn introspection_endpoint(&self) -> String {
        format!("{}/introspect", self.inner.issuer)
    }

    /// How often the JWKS was fetched.
    pub(crate) fn jwks_hits(&self) -> usize {
        self.inner.jwks_hits.load(Ordering::SeqCst)
    }

    /// How often a token was introspected.
    pub(crate) fn introspections(&self) -> usize {
        self.inner.introspections.load(Ordering::SeqCst)
    }

    /// Replaces the RSA key (`rsa-1` → `rsa-2`): the JWKS no longer has the old one.
    pub(crate) fn rotate(&self) {
        self.inner.keys.lock().unwrap().rsa = key(RSA2, "rsa-2");
    }

    /// The claims of a good access token for `resource`, valid for an hour.
    pub(crate) fn claims(&self, resource: &str, subject: &str, scope: &str) -> Map<String, Value> {
        let now = now();
        let claims = json!({
            "iss": self.inner.issuer,
            "sub": subject,
            "aud": resource,
            "client_id": "test-client",
            "scope": scope,
            "iat": now,
            "exp": now + 3600,
            "jti": format!("{subject}-{now}-{}", rand_suffix()),
        });
        claims.as_object().unwrap().clone()
    }

    /// Signs `claims` with the current key for `alg` (RS256 or ES256).
    pub(crate) fn sign(&self, alg: Algorithm, claims: &Map<String, Value>) -> String {
        let key = {
            let keys = self.inner.keys.lock().unwrap();
            if alg == Algorithm::ES256 { keys.ec.clone() } else { keys.rsa.clone() }
        };
        let header = json!({"typ": "at+jwt"});
        key.sign_jwt(header.as_object().unwrap(), claims).unwrap()
    }

    /// Signs `claims` with `key` under `header` (for forged tokens).
    pub(crate) fn sign_with(key: &SigningKey, header: Value, claims: &Map<String, Value>) -> String {
        key.sign_jwt(header.as_object().unwrap(), claims).unwrap()
    }

    /// Makes `token` an opaque token the introspection endpoint answers `answer` for.
    pub(crate) fn register_opaque(&self, token: &str, answer: Value) {
        self.inner.opaque.lock().unwrap().insert(token.to_owned(), answer);
    }
}

fn rand_suffix() -> String {
    let mut bytes = [0u8; 6];
    getrandom::fill(&mut bytes).unwrap();
    b64(&bytes)
}

async fn metadata(State(inner): State<Arc<Inner>>) -> Response {
    let issuer = &inner.issuer;
    let body = json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "jwks_uri": format!("{issuer}/jwks"),
        "introspection_endpoint": format!("{issuer}/introspect"),
        "code_challenge_methods_supported": ["S256"],
        "response_types_supported": ["code"],
    });
    ([(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

async fn jwks(State(inner): State<Arc<Inner>>) -> Response {
    inner.jwks_hits.fetch_add(1, Ordering::SeqCst);
    let set = {
        let keys = inner.keys.lock().unwrap();
        JwkSet::new(vec![keys.rsa.public_jwk(), keys.ec.public_jwk()])
    };
    ([(header::CONTENT_TYPE, "application/json")], serde_json::to_string(&set).unwrap()).into_response()
}

fn form_decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
                out.push(u8::from_str_radix(hex, 16).unwrap());
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).unwrap()
}

async fn introspect(State(inner): State<Arc<Inner>>, headers: HeaderMap, body: String) -> Response {
    // client_secret_basic with form-urlencoded parts (RFC 6749 §2.3.1).
    let authorized = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Basic "))
        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|pair| pair.split_once(':').map(|(id, secret)| (form_decode(id), form_decode(secret))))
        .is_some_and(|(id, secret)| id == CLIENT_ID && secret == CLIENT_SECRET);
    if !authorized {
        return (StatusCode::UNAUTHORIZED, "invalid_client").into_response();
    }
    inner.introspections.fetch_add(1, Ordering::SeqCst);
    let token = body
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(name, _)| *name == "token")
        .map(|(_, value)| form_decode(value))
        .unwrap_or_default();
    let answer =
        inner.opaque.lock().unwrap().get(&token).cloned().unwrap_or_else(|| json!({"active": false}));
    ([(header::CONTENT_TYPE, "application/json")], answer.to_string()).into_response()
}
