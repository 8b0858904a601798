//! A small OAuth 2.1 authorization server for the login tests, on 127.0.0.1: RFC 8414 metadata,
//! Dynamic Client Registration, an authorization endpoint that approves at once (a 302 to the
//! redirect URI with `code`, `state` and `iss`), a token endpoint issuing ES256 JWT access
//! tokens for the requested resource, and its JWKS. It checks what it is sent: the client id,
//! the redirect URI (any port on loopback, RFC 8252 §7.3), the PKCE challenge and verifier,
//! the resource. Its token endpoint also exchanges the tokens it issued (RFC 8693) for the
//! client `gw` (secret `gw-secret`), and a test can mint tokens directly ([`AuthServer::mint`]).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::extract::{Form, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use mcp_auth::jose::{JwkSet, SigningKey};
use mcp_client::reqwest::Url;
use serde_json::{Map, Value, json};

/// What the server issued and saw.
#[derive(Default)]
pub(crate) struct Record {
    /// Registered clients: id → redirect URIs.
    clients: HashMap<String, Vec<String>>,
    /// Pending authorization codes.
    codes: HashMap<String, Grant>,
    /// Every access token issued.
    pub(crate) tokens: Vec<String>,
    /// How many authorization requests were approved.
    pub(crate) authorizations: usize,
    /// The subject of each token issued: token → `sub`.
    subjects: HashMap<String, String>,
    /// Every token exchange: (subject, resource).
    pub(crate) exchanges: Vec<(String, String)>,
}

struct Grant {
    client_id: String,
    redirect_uri: String,
    challenge: String,
    resource: String,
    scope: Option<String>,
}

struct Shared {
    issuer: String,
    key: SigningKey,
    record: Mutex<Record>,
}

/// The running server; it stops with its runtime when dropped.
pub(crate) struct AuthServer {
    pub(crate) issuer: String,
    shared: Arc<Shared>,
    _runtime: tokio::runtime::Runtime,
}

impl AuthServer {
    pub(crate) fn start() -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))))
            .expect("bind the authorization server");
        let issuer = format!("http://{}", listener.local_addr().unwrap());
        let shared = Arc::new(Shared {
            issuer: issuer.clone(),
            key: SigningKey::generate_es256().expect("key").with_kid("test-key"),
            record: Mutex::new(Record::default()),
        });
        let app = Router::new()
            .route("/.well-known/oauth-authorization-server", get(metadata))
            .route("/register", post(register))
            .route("/authorize", get(authorize))
            .route("/token", post(token))
            .route("/jwks", get(jwks))
            .with_state(shared.clone());
        runtime.spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        AuthServer { issuer, shared, _runtime: runtime }
    }

    pub(crate) fn record(&self) -> MutexGuard<'_, Record> {
        self.shared.record.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// An access token for `sub`, meant for `audiences`, with the scope `mcp:tools`.
    pub(crate) fn mint(&self, sub: &str, audiences: &[&str]) -> String {
        issue(&self.shared, sub, json!(audiences), "test-client", Some("mcp:tools"))
    }
}

/// Signs an access token and records it.
fn issue(shared: &Shared, sub: &str, aud: Value, client_id: &str, scope: Option<&str>) -> String {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
    let mut claims = Map::new();
    claims.insert("iss".into(), json!(shared.issuer));
    claims.insert("sub".into(), json!(sub));
    claims.insert("aud".into(), aud);
    claims.insert("client_id".into(), json!(client_id));
    claims.insert("iat".into(), json!(now));
    claims.insert("exp".into(), json!(now + 3600));
    claims.insert("jti".into(), json!(random()));
    if let Some(scope) = scope {
        claims.insert("scope".into(), json!(scope));
    }
    let mut jwt_header = Map::new();
    jwt_header.insert("typ".into(), json!("at+jwt"));
    let access_token = shared.key.sign_jwt(&jwt_header, &claims).expect("sign");
    let mut record = record(shared);
    record.tokens.push(access_token.clone());
    record.subjects.insert(access_token.clone(), sub.to_owned());
    access_token
}

fn record(shared: &Shared) -> MutexGuard<'_, Record> {
    shared.record.lock().unwrap_or_else(|e| e.into_inner())
}

fn refuse(status: StatusCode, error: &str, description: &str) -> Response {
    (status, Json(json!({ "error": error, "error_description": description }))).into_response()
}

fn random() -> String {
    mcp_auth::pkce::random_state()
}

async fn metadata(State(shared): State<Arc<Shared>>) -> Json<Value> {
    let issuer = &shared.issuer;
    Json(json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "registration_endpoint": format!("{issuer}/register"),
        "jwks_uri": format!("{issuer}/jwks"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "authorization_response_iss_parameter_supported": true,
        "scopes_supported": ["mcp:tools"],
    }))
}

/// Whether `uri` is an `http` loopback redirect URI (whose port may vary).
fn loopback_without_port(uri: &str) -> Option<String> {
    let mut url = Url::parse(uri).ok()?;
    if url.scheme() != "http" || url.host_str() != Some("127.0.0.1") {
        return None;
    }
    url.set_port(None).ok()?;
    Some(url.to_string())
}

async fn register(State(shared): State<Arc<Shared>>, Json(body): Json<Value>) -> Response {
    let uris: Vec<String> = body["redirect_uris"]
        .as_array()
        .map(|a| a.iter().filter_map(|u| u.as_str().map(str::to_owned)).collect())
        .unwrap_or_default();
    if uris.is_empty() || uris.iter().any(|u| loopback_without_port(u).is_none()) {
        return refuse(StatusCode::BAD_REQUEST, "invalid_redirect_uri", "loopback redirect URIs only");
    }
    let client_id = format!("client-{}", random());
    record(&shared).clients.insert(client_id.clone(), uris.clone());
    let answer = json!({
        "client_id": client_id,
        "redirect_uris": uris,
        "token_endpoint_auth_method": "none",
        "grant_types": ["authorization_code"],
        "response_types": ["code"],
    });
    (StatusCode::CREATED, Json(answer)).into_response()
}

async fn authorize(State(shared): State<Arc<Shared>>, Query(q): Query<HashMap<String, String>>) -> Response {
    let param = |name: &str| q.get(name).cloned().unwrap_or_default();
    let (client_id, redirect_uri) = (param("client_id"), param("redirect_uri"));
    let mut record = record(&shared);
    let Some(registered) = record.clients.get(&client_id) else {
        return (StatusCode::BAD_REQUEST, "unknown client_id").into_response();
    };
    let requested = loopback_without_port(&redirect_uri);
    if requested.is_none() || !registered.iter().any(|u| loopback_without_port(u) == requested) {
        return (StatusCode::BAD_REQUEST, "unregistered redirect_uri").into_response();
    }
    if param("response_type") != "code"
        || param("code_challenge_method") != "S256"
        || param("code_challenge").is_empty()
        || param("resource").is_empty()
        || param("state").is_empty()
    {
        return (StatusCode::BAD_REQUEST, "code, S256 PKCE, resource and state are required").into_response();
    }
    let code = random();
    record.codes.insert(
        code.clone(),
        Grant {
            client_id,
            redirect_uri: redirect_uri.clone(),
            challenge: param("code_challenge"),
            resource: param("resource"),
            scope: q.get("scope").cloned(),
        },
    );
    record.authorizations += 1;
    let location = Url::parse_with_params(
        &redirect_uri,
        &[("code", code.as_str()), ("state", &param("state")), ("iss", &shared.issuer)],
    )
    .expect("redirect URI checked above");
    (StatusCode::FOUND, [(header::LOCATION, location.to_string())]).into_response()
}

async fn token(
    State(shared): State<Arc<Shared>>,
    headers: axum::http::HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let param = |name: &str| form.get(name).cloned().unwrap_or_default();
    if param("grant_type") == "urn:ietf:params:oauth:grant-type:token-exchange" {
        return exchange(&shared, &headers, &form);
    }
    if param("grant_type") != "authorization_code" {
        return refuse(StatusCode::BAD_REQUEST, "unsupported_grant_type", "authorization_code only");
    }
    let Some(grant) = record(&shared).codes.remove(&param("code")) else {
        return refuse(StatusCode::BAD_REQUEST, "invalid_grant", "unknown or used code");
    };
    if grant.client_id != param("client_id") || grant.redirect_uri != param("redirect_uri") {
        return refuse(StatusCode::BAD_REQUEST, "invalid_grant", "client or redirect URI mismatch");
    }
    if !mcp_auth::pkce::verify_s256(&param("code_verifier"), &grant.challenge) {
        return refuse(StatusCode::BAD_REQUEST, "invalid_grant", "PKCE verification failed");
    }
    if grant.resource != param("resource") {
        return refuse(StatusCode::BAD_REQUEST, "invalid_target", "resource mismatch");
    }
    let access_token =
        issue(&shared, "test-user", json!(grant.resource), &grant.client_id, grant.scope.as_deref());
    let mut answer = json!({ "access_token": access_token, "token_type": "Bearer", "expires_in": 3600 });
    if let Some(scope) = grant.scope {
        answer["scope"] = json!(scope);
    }
    ([(header::CACHE_CONTROL, "no-store")], Json(answer)).into_response()
}

/// RFC 8693: a token this server issued, presented by the client `gw` (HTTP Basic), for a new
/// one meant for `resource` alone, with the same subject.
fn exchange(shared: &Shared, headers: &axum::http::HeaderMap, form: &HashMap<String, String>) -> Response {
    let param = |name: &str| form.get(name).cloned().unwrap_or_default();
    let basic = format!("Basic {}", base64_encode(b"gw:gw-secret"));
    if headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()) != Some(basic.as_str()) {
        return refuse(StatusCode::UNAUTHORIZED, "invalid_client", "client authentication failed");
    }
    let access = "urn:ietf:params:oauth:token-type:access_token";
    if param("subject_token_type") != access || param("requested_token_type") != access {
        return refuse(StatusCode::BAD_REQUEST, "invalid_request", "access tokens only");
    }
    let Some(subject) = record(shared).subjects.get(&param("subject_token")).cloned() else {
        return refuse(StatusCode::BAD_REQUEST, "invalid_grant", "unknown subject token");
    };
    let resource = param("resource");
    if resource.is_empty() {
        return refuse(StatusCode::BAD_REQUEST, "invalid_target", "no resource");
    }
    record(shared).exchanges.push((subject.clone(), resource.clone()));
    let access_token = issue(shared, &subject, json!(resource), "gw", Some("mcp:tools"));
    let answer = json!({
        "access_token": access_token,
        "issued_token_type": access,
        "token_type": "Bearer",
        "expires_in": 3600,
    });
    ([(header::CACHE_CONTROL, "no-store")], Json(answer)).into_response()
}

fn base64_encode(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

async fn jwks(State(shared): State<Arc<Shared>>) -> Json<JwkSet> {
    Json(JwkSet::new(vec![shared.key.public_jwk()]))
}
