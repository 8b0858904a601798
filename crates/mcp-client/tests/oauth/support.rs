//! A protected MCP endpoint (with its protected resource metadata) and authorization servers for
//! the OAuth tests: raw axum handlers on 127.0.0.1 that record every request and can be set up
//! to misbehave. The authorization server really checks what it is sent (client
//! authentication, PKCE, redirect URI, resource); the MCP endpoint really checks tokens and
//! scopes.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use http::{HeaderMap, Method, StatusCode, Uri, header};
use mcp_auth::jose::{Algorithm, Jwk, JwkSet};
use mcp_client::auth::{NoFollowPrompt, OAuthClient, OAuthClientBuilder};
use mcp_client::transport::http::HttpConfig;
use mcp_client::{Client, ClientBuilder, ClientError};
use mcp_types::ProtocolVersion;
use serde_json::{Value, json};

pub(crate) const REDIRECT_URI: &str = "http://127.0.0.1:1/callback";

/// One request as a server saw it.
#[derive(Clone, Debug)]
pub(crate) struct Seen {
    /// `rs`, or the name of the authorization server.
    pub(crate) server: &'static str,
    pub(crate) method: Method,
    pub(crate) path: String,
    pub(crate) query: Option<String>,
    pub(crate) headers: HeaderMap,
    pub(crate) body: String,
}

impl Seen {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    pub(crate) fn form(&self) -> HashMap<String, String> {
        url::form_urlencoded::parse(self.body.as_bytes()).into_owned().collect()
    }

    pub(crate) fn params(&self) -> HashMap<String, String> {
        url::form_urlencoded::parse(self.query.as_deref().unwrap_or("").as_bytes()).into_owned().collect()
    }

    /// The JSON-RPC method of an MCP request.
    pub(crate) fn rpc_method(&self) -> Option<String> {
        let body: Value = serde_json::from_str(&self.body).ok()?;
        body.get("method")?.as_str().map(str::to_owned)
    }
}

pub(crate) type Log = Arc<Mutex<Vec<Seen>>>;
/// An issued access token: its scopes, and the thumbprint of the key it is bound to (DPoP).
#[derive(Clone, Debug)]
pub(crate) struct Issued {
    pub(crate) scopes: Vec<String>,
    pub(crate) jkt: Option<String>,
}

/// Issued access tokens: the authorization servers issue, the MCP endpoint checks.
pub(crate) type Tokens = Arc<Mutex<HashMap<String, Issued>>>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn record(log: &Log, server: &'static str, method: &Method, uri: &Uri, headers: &HeaderMap, body: &Bytes) {
    lock(log).push(Seen {
        server,
        method: method.clone(),
        path: uri.path().to_owned(),
        query: uri.query().map(str::to_owned),
        headers: headers.clone(),
        body: String::from_utf8_lossy(body).into_owned(),
    });
}

fn json_response(status: StatusCode, body: Value) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

fn oauth_error(status: StatusCode, error: &str) -> Response {
    json_response(status, json!({"error": error, "error_description": format!("test server: {error}")}))
}

// ---- The MCP endpoint -----------------------------------------------------------------------

/// How the MCP endpoint and its protected resource metadata behave.
#[derive(Clone, Debug)]
pub(crate) struct RsSetup {
    /// Whether refusals name the metadata URL (`resource_metadata`).
    pub(crate) prm_in_header: bool,
    /// Where the metadata is served.
    pub(crate) prm_path: String,
    /// Its `resource` (default: the endpoint's URL).
    pub(crate) resource: Option<String>,
    pub(crate) scopes_supported: Option<Vec<String>>,
    /// The `scope` of a `401` challenge.
    pub(crate) challenge_scope: Option<String>,
    /// JSON-RPC method → the scopes it needs (space-separated): a token without them gets
    /// `403 insufficient_scope`.
    pub(crate) needs: HashMap<String, String>,
    /// Every authenticated request gets `403 insufficient_scope` with this scope.
    pub(crate) always_forbid: Option<String>,
    /// The issuers listed in the metadata.
    pub(crate) authorization_servers: Vec<String>,
    /// The nonce DPoP proofs must carry (`use_dpop_nonce` otherwise).
    pub(crate) dpop_nonce: Option<String>,
}

impl Default for RsSetup {
    fn default() -> Self {
        RsSetup {
            prm_in_header: true,
            prm_path: "/.well-known/oauth-protected-resource/mcp".into(),
            resource: None,
            scopes_supported: None,
            challenge_scope: None,
            needs: HashMap::new(),
            always_forbid: None,
            authorization_servers: Vec::new(),
            dpop_nonce: None,
        }
    }
}

pub(crate) struct Rs {
    pub(crate) setup: Mutex<RsSetup>,
    log: Log,
    tokens: Tokens,
    addr: SocketAddr,
}

impl Rs {
    pub(crate) fn setup(&self) -> MutexGuard<'_, RsSetup> {
        lock(&self.setup)
    }

    pub(crate) fn base(&self) -> String {
        format!("http://{}", self.addr)
    }
}

async fn rs_handler(
    State(rs): State<Arc<Rs>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    record(&rs.log, "rs", &method, &uri, &headers, &body);
    let setup = rs.setup().clone();
    let base = rs.base();
    if method == Method::GET && uri.path() == setup.prm_path {
        let mut prm = json!({
            "resource": setup.resource.clone().unwrap_or_else(|| format!("{base}/mcp")),
            "authorization_servers": setup.authorization_servers,
        });
        if let Some(scopes) = &setup.scopes_supported {
            prm["scopes_supported"] = json!(scopes);
        }
        return json_response(StatusCode::OK, prm);
    }
    if method != Method::POST || uri.path() != "/mcp" {
        return StatusCode::NOT_FOUND.into_response();
    }
    let challenge = |status: StatusCode, error: Option<&str>, scope: Option<&str>| {
        let mut params = Vec::new();
        if let Some(error) = error {
            params.push(format!("error=\"{error}\""));
        }
        if let Some(scope) = scope {
            params.push(format!("scope=\"{scope}\""));
        }
        if setup.prm_in_header {
            params.push(format!("resource_metadata=\"{base}{}\"", setup.prm_path));
        }
        let value =
            if params.is_empty() { "Bearer".to_owned() } else { format!("Bearer {}", params.join(", ")) };
        (status, [(header::WWW_AUTHENTICATE, value)], "refused").into_response()
    };
    let presented = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok());
    let (scheme, token) = match presented.and_then(|v| v.split_once(' ')) {
        Some((scheme, token)) if scheme == "Bearer" || scheme == "DPoP" => (scheme, token),
        _ => return challenge(StatusCode::UNAUTHORIZED, None, setup.challenge_scope.as_deref()),
    };
    let Some(issued) = lock(&rs.tokens).get(token).cloned() else {
        return challenge(StatusCode::UNAUTHORIZED, Some("invalid_token"), setup.challenge_scope.as_deref());
    };
    match (&issued.jkt, scheme) {
        (None, "Bearer") => {}
        (Some(jkt), "DPoP") => {
            let proof = headers.get("dpop").and_then(|v| v.to_str().ok()).unwrap_or("");
            let htu = format!("{base}/mcp");
            let mut check = mcp_auth::dpop::ProofCheck::new("POST", &htu);
            check.access_token = Some(token);
            check.expected_jkt = Some(jkt);
            check.nonce = setup.dpop_nonce.as_deref();
            match mcp_auth::dpop::verify_proof(proof, &check) {
                Ok(_) => {}
                Err(e) if e.is_nonce_error() => {
                    let nonce = setup.dpop_nonce.clone().unwrap_or_default();
                    let challenge = "DPoP error=\"use_dpop_nonce\"";
                    return (
                        StatusCode::UNAUTHORIZED,
                        [
                            (header::WWW_AUTHENTICATE, challenge.to_owned()),
                            (header::HeaderName::from_static("dpop-nonce"), nonce),
                        ],
                        "nonce",
                    )
                        .into_response();
                }
                Err(_) => return challenge(StatusCode::UNAUTHORIZED, Some("invalid_token"), None),
            }
        }
        _ => return challenge(StatusCode::UNAUTHORIZED, Some("invalid_token"), None),
    }
    let scopes = issued.scopes;
    let rpc: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let rpc_method = rpc.get("method").and_then(Value::as_str).unwrap_or("");
    if let Some(scope) = &setup.always_forbid {
        return challenge(StatusCode::FORBIDDEN, Some("insufficient_scope"), Some(scope));
    }
    if let Some(needed) = setup.needs.get(rpc_method)
        && !needed.split(' ').all(|n| scopes.iter().any(|s| s == n))
    {
        return challenge(StatusCode::FORBIDDEN, Some("insufficient_scope"), Some(needed));
    }
    let Some(id) = rpc.get("id").cloned() else { return StatusCode::ACCEPTED.into_response() };
    let result = match rpc_method {
        "tools/list" => json!({"tools": [
            {"name": "echo", "inputSchema": {"type": "object"}},
            {"name": "write", "inputSchema": {"type": "object"}},
        ]}),
        "tools/call" => json!({"content": [{"type": "text", "text": "ok"}]}),
        _ => json!({}),
    };
    json_response(StatusCode::OK, json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

// ---- Authorization servers ------------------------------------------------------------------

/// What the authorization response says about its issuer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Iss {
    Correct,
    Omit,
    Value(String),
}

/// A client the authorization server knows.
#[derive(Clone, Debug)]
pub(crate) struct AsClient {
    pub(crate) secret: Option<String>,
    pub(crate) method: String,
    pub(crate) jwk: Option<Jwk>,
}

/// How an authorization server behaves.
#[derive(Clone, Debug)]
pub(crate) struct AsSetup {
    /// The path of the issuer (`""` or `/tenant1`).
    pub(crate) issuer_path: String,
    /// The well-known paths that answer (default: the first one MCP tries).
    pub(crate) serve_at: Option<Vec<String>>,
    /// An `issuer` other than the real one in the metadata.
    pub(crate) metadata_issuer: Option<String>,
    pub(crate) auth_methods: Option<Vec<String>>,
    pub(crate) iss_supported: Option<bool>,
    pub(crate) iss: Iss,
    pub(crate) registration: bool,
    /// The `token_endpoint_auth_method` a registration gets (default: the requested one).
    pub(crate) registered_method: Option<String>,
    pub(crate) scopes_supported: Option<Vec<String>>,
    pub(crate) cimd: bool,
    pub(crate) pkce: bool,
    pub(crate) expires_in: u64,
    pub(crate) refresh_tokens: bool,
    pub(crate) clients: HashMap<String, AsClient>,
    /// `dpop_signing_alg_values_supported`: tokens requested with a proof are DPoP-bound.
    pub(crate) dpop_algs: Option<Vec<String>>,
    /// The nonce DPoP proofs at the token endpoint must carry.
    pub(crate) dpop_nonce: Option<String>,
    /// The assertion a JWT bearer grant must present.
    pub(crate) jwt_assertion: Option<String>,
}

impl Default for AsSetup {
    fn default() -> Self {
        AsSetup {
            issuer_path: String::new(),
            serve_at: None,
            metadata_issuer: None,
            auth_methods: Some(vec!["none".into()]),
            iss_supported: Some(true),
            iss: Iss::Correct,
            registration: true,
            registered_method: None,
            scopes_supported: None,
            cimd: false,
            pkce: true,
            expires_in: 3600,
            refresh_tokens: false,
            clients: HashMap::new(),
            dpop_algs: None,
            dpop_nonce: None,
            jwt_assertion: None,
        }
    }
}

struct Code {
    challenge: String,
    client_id: String,
    redirect_uri: String,
    resource: Option<String>,
    scope: Option<String>,
}

pub(crate) struct As {
    pub(crate) name: &'static str,
    setup: Mutex<AsSetup>,
    log: Log,
    tokens: Tokens,
    addr: SocketAddr,
    codes: Mutex<HashMap<String, Code>>,
    refresh: Mutex<HashMap<String, (String, Vec<String>)>>,
    counter: AtomicU64,
}

impl As {
    pub(crate) fn setup(&self) -> MutexGuard<'_, AsSetup> {
        lock(&self.setup)
    }

    pub(crate) fn issuer(&self) -> String {
        format!("http://{}{}", self.addr, self.setup().issuer_path)
    }

    fn next(&self) -> u64 {
        self.counter.fetch_add(1, Ordering::Relaxed) + 1
    }

    fn metadata(&self, setup: &AsSetup) -> Value {
        let issuer = self.issuer();
        let mut metadata = json!({
            "issuer": setup.metadata_issuer.clone().unwrap_or_else(|| issuer.clone()),
            "authorization_endpoint": format!("{issuer}/authorize"),
            "token_endpoint": format!("{issuer}/token"),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
        });
        if setup.registration {
            metadata["registration_endpoint"] = json!(format!("{issuer}/register"));
        }
        if setup.pkce {
            metadata["code_challenge_methods_supported"] = json!(["S256"]);
        }
        if let Some(methods) = &setup.auth_methods {
            metadata["token_endpoint_auth_methods_supported"] = json!(methods);
        }
        if let Some(iss) = setup.iss_supported {
            metadata["authorization_response_iss_parameter_supported"] = json!(iss);
        }
        if let Some(scopes) = &setup.scopes_supported {
            metadata["scopes_supported"] = json!(scopes);
        }
        if setup.cimd {
            metadata["client_id_metadata_document_supported"] = json!(true);
        }
        if let Some(algs) = &setup.dpop_algs {
            metadata["dpop_signing_alg_values_supported"] = json!(algs);
        }
        metadata
    }

    fn authorize(&self, setup: &AsSetup, seen: &Seen) -> Response {
        let params = seen.params();
        let get = |name: &str| params.get(name).cloned();
        let Some(client_id) = get("client_id") else {
            return oauth_error(StatusCode::BAD_REQUEST, "invalid_request");
        };
        let known =
            setup.clients.contains_key(&client_id) || (setup.cimd && client_id.starts_with("https://"));
        let (Some(redirect_uri), Some(challenge)) = (get("redirect_uri"), get("code_challenge")) else {
            return oauth_error(StatusCode::BAD_REQUEST, "invalid_request");
        };
        if !known
            || get("response_type").as_deref() != Some("code")
            || get("code_challenge_method").as_deref() != Some("S256")
        {
            return oauth_error(StatusCode::BAD_REQUEST, "invalid_request");
        }
        let code = format!("code-{}", self.next());
        let entry = Code {
            challenge,
            client_id,
            redirect_uri: redirect_uri.clone(),
            resource: get("resource"),
            scope: get("scope"),
        };
        lock(&self.codes).insert(code.clone(), entry);
        let mut location = url::Url::parse(&redirect_uri).expect("redirect URI");
        location.query_pairs_mut().append_pair("code", &code);
        if let Some(state) = get("state") {
            location.query_pairs_mut().append_pair("state", &state);
        }
        match &setup.iss {
            Iss::Correct => {
                location.query_pairs_mut().append_pair("iss", &self.issuer());
            }
            Iss::Value(value) => {
                location.query_pairs_mut().append_pair("iss", value);
            }
            Iss::Omit => {}
        }
        (StatusCode::FOUND, [(header::LOCATION, location.to_string())]).into_response()
    }

    /// The authenticated client of a token request, checked against its registered method.
    fn authenticate(&self, setup: &AsSetup, seen: &Seen, form: &HashMap<String, String>) -> Option<String> {
        let (client_id, method, secret) = if let Some(basic) = seen.header("authorization") {
            let encoded = basic.strip_prefix("Basic ")?;
            let decoded = base64::engine::general_purpose::STANDARD.decode(encoded).ok()?;
            let decoded = String::from_utf8(decoded).ok()?;
            let (id, secret) = decoded.split_once(':')?;
            let unescape = |s: &str| -> String {
                let pair = format!("x={s}");
                url::form_urlencoded::parse(pair.as_bytes())
                    .next()
                    .map(|(_, v)| v.into_owned())
                    .unwrap_or_default()
            };
            (unescape(id), "client_secret_basic", Some(unescape(secret)))
        } else if let Some(assertion) = form.get("client_assertion") {
            if form.get("client_assertion_type").map(String::as_str)
                != Some("urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
            {
                return None;
            }
            let (_, claims) = mcp_auth::jose::decode_unverified(assertion).ok()?;
            let id = claims.get("iss").and_then(Value::as_str)?.to_owned();
            let client = setup.clients.get(&id)?;
            let keys = JwkSet::new(vec![client.jwk.clone()?]);
            let verified = mcp_auth::jose::verify(assertion, &keys, &[Algorithm::ES256]).ok()?;
            let claim = |name: &str| verified.claims.get(name).and_then(Value::as_str).map(str::to_owned);
            let fresh = verified.claims.get("exp").and_then(Value::as_u64).is_some_and(|exp| exp > now());
            if claim("sub").as_deref() != Some(id.as_str())
                || claim("aud") != Some(self.issuer())
                || claim("jti").is_none()
                || !fresh
            {
                return None;
            }
            (id, "private_key_jwt", None)
        } else if let Some(secret) = form.get("client_secret") {
            (form.get("client_id")?.clone(), "client_secret_post", Some(secret.clone()))
        } else {
            (form.get("client_id")?.clone(), "none", None)
        };
        if setup.cimd && client_id.starts_with("https://") && method == "none" {
            return Some(client_id);
        }
        let client = setup.clients.get(&client_id)?;
        if client.method != method || (secret.is_some() && client.secret != secret) {
            return None;
        }
        Some(client_id)
    }

    fn token(&self, setup: &AsSetup, seen: &Seen) -> Response {
        let form = seen.form();
        let mut jkt = None;
        if let (Some(proof), Some(_)) = (seen.header("dpop"), &setup.dpop_algs) {
            let htu = format!("{}/token", self.issuer());
            let mut check = mcp_auth::dpop::ProofCheck::new("POST", &htu);
            check.nonce = setup.dpop_nonce.as_deref();
            match mcp_auth::dpop::verify_proof(proof, &check) {
                Ok(info) => jkt = Some(info.jkt),
                Err(e) if e.is_nonce_error() => {
                    let nonce = setup.dpop_nonce.clone().unwrap_or_default();
                    let body = json!({"error": "use_dpop_nonce"}).to_string();
                    return (
                        StatusCode::BAD_REQUEST,
                        [
                            (header::CONTENT_TYPE, "application/json".to_owned()),
                            (header::HeaderName::from_static("dpop-nonce"), nonce),
                        ],
                        body,
                    )
                        .into_response();
                }
                Err(_) => return oauth_error(StatusCode::BAD_REQUEST, "invalid_dpop_proof"),
            }
        }
        let Some(client_id) = self.authenticate(setup, seen, &form) else {
            return oauth_error(StatusCode::UNAUTHORIZED, "invalid_client");
        };
        let scope_of =
            |s: Option<&String>| s.map(|s| s.split(' ').map(str::to_owned).collect()).unwrap_or_default();
        let scopes: Vec<String> = match form.get("grant_type").map(String::as_str) {
            Some("authorization_code") => {
                let Some(code) = form.get("code").and_then(|c| lock(&self.codes).remove(c)) else {
                    return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant");
                };
                let verifier = form.get("code_verifier").map(String::as_str).unwrap_or("");
                if !mcp_auth::pkce::verify_s256(verifier, &code.challenge)
                    || code.client_id != client_id
                    || form.get("redirect_uri") != Some(&code.redirect_uri)
                    || form.get("resource") != code.resource.as_ref()
                {
                    return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant");
                }
                scope_of(code.scope.as_ref())
            }
            Some("refresh_token") => {
                let entry = form.get("refresh_token").and_then(|r| lock(&self.refresh).get(r).cloned());
                match entry {
                    Some((owner, scopes)) if owner == client_id => scopes,
                    _ => return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant"),
                }
            }
            Some("client_credentials") => scope_of(form.get("scope")),
            Some("urn:ietf:params:oauth:grant-type:jwt-bearer") => {
                if setup.jwt_assertion.is_none() || form.get("assertion") != setup.jwt_assertion.as_ref() {
                    return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant");
                }
                scope_of(form.get("scope"))
            }
            _ => return oauth_error(StatusCode::BAD_REQUEST, "unsupported_grant_type"),
        };
        let n = self.next();
        let token = format!("at-{}-{n}-secret", self.name);
        let token_type = if jkt.is_some() { "DPoP" } else { "Bearer" };
        lock(&self.tokens).insert(token.clone(), Issued { scopes: scopes.clone(), jkt });
        let mut response =
            json!({"access_token": token, "token_type": token_type, "expires_in": setup.expires_in});
        if !scopes.is_empty() {
            response["scope"] = json!(scopes.join(" "));
        }
        if setup.refresh_tokens {
            let refresh = format!("rt-{}-{n}-secret", self.name);
            lock(&self.refresh).insert(refresh.clone(), (client_id, scopes));
            response["refresh_token"] = json!(refresh);
        }
        json_response(StatusCode::OK, response)
    }

    fn register(&self, seen: &Seen) -> Response {
        let body: Value = serde_json::from_str(&seen.body).unwrap_or(Value::Null);
        let client_id = format!("{}-client-{}", self.name, self.next());
        let mut setup = self.setup();
        let requested =
            body.get("token_endpoint_auth_method").and_then(Value::as_str).unwrap_or("client_secret_basic");
        let method = setup.registered_method.clone().unwrap_or_else(|| requested.to_owned());
        let secret = (method != "none").then(|| format!("{client_id}-secret"));
        setup.clients.insert(
            client_id.clone(),
            AsClient { secret: secret.clone(), method: method.clone(), jwk: None },
        );
        let mut answer = json!({"client_id": client_id, "token_endpoint_auth_method": method});
        if let Some(secret) = secret {
            answer["client_secret"] = json!(secret);
        }
        json_response(StatusCode::CREATED, answer)
    }
}

async fn as_handler(
    State(auth): State<Arc<As>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    record(&auth.log, auth.name, &method, &uri, &headers, &body);
    let seen = lock(&auth.log).last().cloned().expect("just recorded");
    let setup = auth.setup().clone();
    let path = uri.path();
    let default_metadata_path = format!("/.well-known/oauth-authorization-server{}", setup.issuer_path);
    let serve_at = setup.serve_at.clone().unwrap_or_else(|| vec![default_metadata_path]);
    if method == Method::GET && serve_at.iter().any(|p| p == path) {
        return json_response(StatusCode::OK, auth.metadata(&setup));
    }
    let Some(endpoint) = path.strip_prefix(setup.issuer_path.as_str()) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    match (method, endpoint) {
        (Method::GET, "/authorize") => auth.authorize(&setup, &seen),
        (Method::POST, "/token") => auth.token(&setup, &seen),
        (Method::POST, "/register") if setup.registration => auth.register(&seen),
        _ => StatusCode::NOT_FOUND.into_response(),
    }
}

// ---- The world --------------------------------------------------------------------------------

/// The MCP endpoint and one or more authorization servers, sharing a request log and the
/// issued tokens.
pub(crate) struct World {
    pub(crate) rs: Arc<Rs>,
    pub(crate) auth: Arc<As>,
    pub(crate) log: Log,
    pub(crate) tokens: Tokens,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for World {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

async fn start_as(name: &'static str, log: &Log, tokens: &Tokens) -> (Arc<As>, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("address");
    let auth = Arc::new(As {
        name,
        setup: Mutex::new(AsSetup::default()),
        log: log.clone(),
        tokens: tokens.clone(),
        addr,
        codes: Mutex::default(),
        refresh: Mutex::default(),
        counter: AtomicU64::new(0),
    });
    let router = Router::new().fallback(as_handler).with_state(auth.clone());
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    (auth, task)
}

impl World {
    /// An MCP endpoint whose metadata names one authorization server (`as1`): defaults
    /// everywhere (dynamic registration with `none`, `iss` advertised and sent, PKCE).
    pub(crate) async fn new() -> World {
        let log = Log::default();
        let tokens = Tokens::default();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("address");
        let rs = Arc::new(Rs {
            setup: Mutex::new(RsSetup::default()),
            log: log.clone(),
            tokens: tokens.clone(),
            addr,
        });
        let router = Router::new().fallback(rs_handler).with_state(rs.clone());
        let rs_task = tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        let (auth, as_task) = start_as("as1", &log, &tokens).await;
        rs.setup().authorization_servers = vec![auth.issuer()];
        World { rs, auth, log, tokens, tasks: vec![rs_task, as_task] }
    }

    /// Another authorization server (not listed in the metadata until the test says so).
    pub(crate) async fn add_as(&mut self, name: &'static str) -> Arc<As> {
        let (auth, task) = start_as(name, &self.log, &self.tokens).await;
        self.tasks.push(task);
        auth
    }

    pub(crate) fn mcp_url(&self) -> String {
        format!("{}/mcp", self.rs.base())
    }

    pub(crate) fn requests(&self) -> Vec<Seen> {
        lock(&self.log).clone()
    }

    /// The requests one server saw at `path`.
    pub(crate) fn at(&self, server: &str, path: &str) -> Vec<Seen> {
        self.requests().into_iter().filter(|s| s.server == server && s.path == path).collect()
    }

    /// Every path one server saw, in order.
    pub(crate) fn paths(&self, server: &str) -> Vec<String> {
        self.requests().into_iter().filter(|s| s.server == server).map(|s| s.path).collect()
    }

    /// A client of the endpoint (2026-07-28, no `server/discover`) authorized by `oauth`.
    pub(crate) async fn connect(&self, oauth: OAuthClient) -> Client {
        self.try_connect(Arc::new(oauth)).await.expect("connect")
    }

    pub(crate) async fn try_connect(&self, oauth: Arc<OAuthClient>) -> Result<Client, ClientError> {
        ClientBuilder::new("oauth-test", "1")
            .pin_version(ProtocolVersion::V2026_07_28)
            .discover_on_connect(false)
            .request_timeout(Some(Duration::from_secs(10)))
            .connect_http(HttpConfig::new(self.mcp_url()).auth(oauth))
            .await
    }
}

/// A builder for the authorization code grant with the no-redirect prompt, bearer tokens.
pub(crate) fn oauth() -> OAuthClientBuilder {
    OAuthClient::builder()
        .client_name("oauth-test")
        .redirect_uri(REDIRECT_URI)
        .expect("redirect URI")
        .prompt(Arc::new(NoFollowPrompt::new().expect("prompt")))
        .dpop(mcp_client::auth::DpopPolicy::Never)
}

pub(crate) fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}
