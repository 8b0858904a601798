//! Authorization end to end: a real authorization server (axum, `tests/auth/`) signing JWTs
//! with the fixture keys, serving metadata, JWKS and introspection, and a real `mcp_http`
//! server with auth on — both on 127.0.0.1, port 0, talked to over real sockets.

#[path = "auth/authorization_server.rs"]
mod authorization_server;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use authorization_server::{AuthorizationServer, CLIENT_ID, CLIENT_SECRET, DPOP, RSA1_PUBLIC, b64, now};
use hmac::{Hmac, KeyInit, Mac};
use mcp_auth::challenge::{Challenge, parse_www_authenticate};
use mcp_auth::jose::{Algorithm, SigningKey};
use mcp_http::{AuthConfig, DpopConfig, HttpConfig, Introspection, JwtValidation};
use mcp_server::{Principal, Server, State, Tools};
use serde_json::{Map, Value, json};

/// Counts calls of the `count` tool: it must stay 0 for every refused request.
#[derive(Clone, Default)]
struct Counter(Arc<AtomicUsize>);

async fn count(State(counter): State<Counter>) -> String {
    counter.0.fetch_add(1, Ordering::SeqCst);
    "counted".to_owned()
}

async fn whoami(principal: Principal) -> String {
    json!({
        "issuer": principal.issuer,
        "subject": principal.subject,
        "client_id": principal.client_id,
        "scopes": principal.scopes,
        "jkt": principal.jkt,
        "claims": principal.claims,
    })
    .to_string()
}

async fn admin() -> &'static str {
    "admin done"
}

/// Holds `slow` calls until released, and counts those that started.
#[derive(Clone, Default)]
struct Gate {
    entered: Arc<AtomicUsize>,
    open: Arc<std::sync::atomic::AtomicBool>,
}

async fn slow(State(gate): State<Gate>) -> &'static str {
    gate.entered.fetch_add(1, Ordering::SeqCst);
    for _ in 0..1000 {
        if gate.open.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    "slow done"
}

/// A running MCP server with authorization on.
struct Mcp {
    addr: SocketAddr,
    resource: String,
    counter: Counter,
    gate: Gate,
    http: reqwest::Client,
}

impl Mcp {
    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn metadata_url(&self) -> String {
        self.url("/.well-known/oauth-protected-resource/mcp")
    }

    fn calls(&self) -> usize {
        self.counter.0.load(Ordering::SeqCst)
    }
}

async fn start_mcp(
    authorization: &AuthorizationServer,
    configure: impl FnOnce(mcp_http::auth::AuthConfigBuilder) -> mcp_http::auth::AuthConfigBuilder,
    tweak: impl FnOnce(&mut HttpConfig),
) -> Mcp {
    let counter = Counter::default();
    let gate = Gate::default();
    let server = Server::builder("auth-test", "1")
        .state(counter.clone())
        .state(gate.clone())
        .tools(
            Tools::new()
                .add("count", "Counts its calls", count)
                .add("whoami", "The caller", whoami)
                .add("admin", "Needs mcp:admin", admin)
                .add("slow", "Takes a while", slow),
        )
        .build()
        .unwrap();
    let bound = mcp_http::bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = bound.local_addr();
    let resource = format!("http://{addr}/mcp");
    let builder = AuthConfig::builder(resource.clone())
        .issuer(authorization.issuer())
        .scopes_supported(["mcp:basic", "mcp:admin"])
        .tool_scopes("admin", ["mcp:admin"]);
    let auth = configure(builder).build().unwrap();
    let mut config = HttpConfig::for_bind(addr);
    config.auth = Some(auth);
    tweak(&mut config);
    tokio::spawn(mcp_http::serve(server, bound, Some(config)));
    Mcp { addr, resource, counter, gate, http: reqwest::Client::new() }
}

async fn start_default(authorization: &AuthorizationServer) -> Mcp {
    start_mcp(authorization, |b| b, |_| {}).await
}

/// An HTTP answer, read whole.
struct Reply {
    status: u16,
    headers: reqwest::header::HeaderMap,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    fn challenges(&self) -> Vec<Challenge> {
        self.headers
            .get_all("www-authenticate")
            .iter()
            .flat_map(|v| parse_www_authenticate(v.to_str().unwrap()))
            .collect()
    }

    fn challenge(&self, scheme: &str) -> Challenge {
        self.challenges()
            .into_iter()
            .find(|c| c.is(scheme))
            .unwrap_or_else(|| panic!("no {scheme} challenge in {:?}", self.headers))
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }

    /// The text of a tool result.
    fn text(&self) -> String {
        let json = self.json();
        json["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("no tool text in {json}"))
            .to_owned()
    }
}

async fn read(response: reqwest::Response) -> Reply {
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response.text().await.unwrap();
    Reply { status, headers, body }
}

fn modern_call(tool: &str) -> String {
    json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
            },
            "name": tool,
            "arguments": {}
        }
    })
    .to_string()
}

/// A modern `tools/call` of `tool` with `extra` headers (the credentials).
async fn call(mcp: &Mcp, path: &str, tool: &str, extra: &[(&str, String)]) -> Reply {
    let mut request = mcp
        .http
        .post(mcp.url(path))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool)
        .body(modern_call(tool));
    for (name, value) in extra {
        request = request.header(*name, value);
    }
    read(request.send().await.unwrap()).await
}

/// Request headers carrying credentials.
type Headers = Vec<(&'static str, String)>;

fn bearer(token: &str) -> Headers {
    vec![("authorization", format!("Bearer {token}"))]
}

/// Asserts a 401 whose Bearer challenge names the metadata and `error` (or none).
#[track_caller]
fn assert_unauthorized(reply: &Reply, mcp: &Mcp, error: Option<&str>, what: &str) {
    assert_eq!(reply.status, 401, "{what}: {}", reply.body);
    let challenge = reply.challenge("Bearer");
    assert_eq!(challenge.param("resource_metadata"), Some(mcp.metadata_url().as_str()), "{what}");
    assert_eq!(challenge.param("error"), error, "{what}: {challenge:?}");
}

fn forged_hs256(claims: &Map<String, Value>) -> String {
    let header = b64(json!({"alg": "HS256", "typ": "JWT", "kid": "rsa-1"}).to_string().as_bytes());
    let payload = b64(Value::Object(claims.clone()).to_string().as_bytes());
    let input = format!("{header}.{payload}");
    let mut mac = <Hmac<sha2::Sha256> as KeyInit>::new_from_slice(RSA1_PUBLIC.as_bytes()).unwrap();
    mac.update(input.as_bytes());
    format!("{input}.{}", b64(&mac.finalize().into_bytes()))
}

fn unsigned(claims: &Map<String, Value>) -> String {
    let header = b64(json!({"alg": "none", "typ": "JWT"}).to_string().as_bytes());
    let payload = b64(Value::Object(claims.clone()).to_string().as_bytes());
    format!("{header}.{payload}.")
}

#[tokio::test]
async fn bad_tokens_are_refused_with_challenges_and_never_reach_the_handler() {
    let authorization = AuthorizationServer::start().await;
    let mcp = start_default(&authorization).await;
    let good = authorization.claims(&mcp.resource, "alice", "mcp:basic");
    let with = |change: &dyn Fn(&mut Map<String, Value>)| {
        let mut claims = good.clone();
        change(&mut claims);
        claims
    };
    let valid = authorization.sign(Algorithm::RS256, &good);
    let ghost = SigningKey::generate_es256().unwrap().with_kid("ghost");
    let impostor = SigningKey::from_pem(authorization_server::RSA2, None).unwrap().with_kid("rsa-1");
    let in_query = format!("/mcp?access_token={valid}");
    // (what, credentials, path, the challenge's error)
    let cases: Vec<(&str, Headers, &str, Option<&str>)> = vec![
        (
            "wrong audience",
            bearer(&authorization.sign(
                Algorithm::RS256,
                &with(&|c| {
                    c.insert("aud".into(), json!("http://127.0.0.1:1/other-server"));
                }),
            )),
            "/mcp",
            Some("invalid_token"),
        ),
        (
            "wrong issuer",
            bearer(&authorization.sign(
                Algorithm::RS256,
                &with(&|c| {
                    c.insert("iss".into(), json!("https://evil.example"));
                }),
            )),
            "/mcp",
            Some("invalid_token"),
        ),
        (
            "expired",
            bearer(&authorization.sign(
                Algorithm::ES256,
                &with(&|c| {
                    c.insert("iat".into(), json!(now() - 7200));
                    c.insert("exp".into(), json!(now() - 3600));
                }),
            )),
            "/mcp",
            Some("invalid_token"),
        ),
        (
            "not yet valid",
            bearer(&authorization.sign(
                Algorithm::RS256,
                &with(&|c| {
                    c.insert("nbf".into(), json!(now() + 3600));
                }),
            )),
            "/mcp",
            Some("invalid_token"),
        ),
        ("alg none", bearer(&unsigned(&good)), "/mcp", Some("invalid_token")),
        (
            "HS256 with the public key as HMAC secret",
            bearer(&forged_hs256(&good)),
            "/mcp",
            Some("invalid_token"),
        ),
        (
            "unknown key id",
            bearer(&AuthorizationServer::sign_with(&ghost, json!({"typ": "at+jwt"}), &good)),
            "/mcp",
            Some("invalid_token"),
        ),
        (
            "signed by another key under a known kid",
            bearer(&AuthorizationServer::sign_with(&impostor, json!({"typ": "at+jwt"}), &good)),
            "/mcp",
            Some("invalid_token"),
        ),
        ("token in the query string", vec![], &in_query, Some("invalid_request")),
        ("token in the query string besides a header", bearer(&valid), &in_query, Some("invalid_request")),
        ("oversized token", bearer(&"a".repeat(9000)), "/mcp", Some("invalid_request")),
        ("garbage", bearer("not-a-jwt"), "/mcp", Some("invalid_token")),
        ("garbage with spaces", bearer("a b c"), "/mcp", Some("invalid_token")),
        ("no token", vec![], "/mcp", None),
        ("another scheme", vec![("authorization", format!("Basic {}", b64(b"u:p")))], "/mcp", None),
        (
            "two Authorization headers",
            vec![("authorization", format!("Bearer {valid}")), ("authorization", format!("Bearer {valid}"))],
            "/mcp",
            Some("invalid_request"),
        ),
    ];
    for (what, headers, path, error) in &cases {
        let reply = call(&mcp, path, "count", headers).await;
        assert_unauthorized(&reply, &mcp, *error, what);
        let token = headers.first().map(|(_, v)| v.trim_start_matches("Bearer ").to_owned());
        if let Some(token) = token.filter(|t| t.len() > 20) {
            let all = format!("{:?}{}", reply.headers, reply.body);
            assert!(!all.contains(&token), "{what}: the answer repeats the token");
        }
    }
    assert_eq!(mcp.calls(), 0, "no refused request reached the handler");
    let ok = call(&mcp, "/mcp", "count", &bearer(&valid)).await;
    assert_eq!(ok.status, 200, "{}", ok.body);
    assert_eq!(ok.text(), "counted");
    assert_eq!(mcp.calls(), 1);
}

#[tokio::test]
async fn a_valid_token_reaches_the_handler_with_its_principal() {
    let authorization = AuthorizationServer::start().await;
    let mcp = start_default(&authorization).await;
    for alg in [Algorithm::RS256, Algorithm::ES256] {
        let token =
            authorization.sign(alg, &authorization.claims(&mcp.resource, "alice", "mcp:basic files:read"));
        let reply = call(&mcp, "/mcp", "whoami", &bearer(&token)).await;
        assert_eq!(reply.status, 200, "{alg}: {}", reply.body);
        let who: Value = serde_json::from_str(&reply.text()).unwrap();
        assert_eq!(who["subject"], "alice");
        assert_eq!(who["issuer"], authorization.issuer());
        assert_eq!(who["client_id"], "test-client");
        assert_eq!(who["scopes"], json!(["mcp:basic", "files:read"]));
        assert_eq!(who["claims"]["aud"], mcp.resource);
        assert!(!reply.body.contains(&token), "the token itself never reaches the handler");
    }
}

#[tokio::test]
async fn refusals_come_in_the_decisions_order() {
    let authorization = AuthorizationServer::start().await;
    let mcp = start_default(&authorization).await;
    let token = authorization.sign(Algorithm::RS256, &authorization.claims(&mcp.resource, "alice", ""));
    // Host 403 and method 405 come before the bearer check.
    let reply =
        read(mcp.http.post(mcp.url("/mcp")).header("host", "evil.example").send().await.unwrap()).await;
    assert_eq!(reply.status, 403);
    let reply = read(mcp.http.put(mcp.url("/mcp")).send().await.unwrap()).await;
    assert_eq!(reply.status, 405);
    let cross_site = mcp.http.post(mcp.url("/mcp")).header("origin", "http://evil.example");
    assert_eq!(read(cross_site.send().await.unwrap()).await.status, 403);
    // Without a token: 401 whatever the body, the Content-Type or the Accept header.
    let form = mcp.http.post(mcp.url("/mcp")).header("content-type", "text/plain").body("{not json");
    let reply = read(form.send().await.unwrap()).await;
    assert_unauthorized(&reply, &mcp, None, "text/plain without a token");
    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let reply = read(mcp.http.request(method.clone(), mcp.url("/mcp")).send().await.unwrap()).await;
        assert_unauthorized(&reply, &mcp, None, method.as_str());
    }
    // With one: Content-Type 415 comes next.
    let form = mcp
        .http
        .post(mcp.url("/mcp"))
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "text/plain")
        .body("{}");
    assert_eq!(read(form.send().await.unwrap()).await.status, 415);
    assert_eq!(mcp.calls(), 0);
}

#[tokio::test]
async fn protected_resource_metadata_is_served() {
    let authorization = AuthorizationServer::start().await;
    let mcp = start_mcp(&authorization, |b| b.dpop(DpopConfig::default()), |_| {}).await;
    let challenge_url = call(&mcp, "/mcp", "count", &[])
        .await
        .challenge("Bearer")
        .param("resource_metadata")
        .unwrap()
        .to_owned();
    assert_eq!(challenge_url, mcp.metadata_url());
    for path in ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"] {
        let reply = read(mcp.http.get(mcp.url(path)).send().await.unwrap()).await;
        assert_eq!(reply.status, 200, "{path}");
        assert_eq!(reply.header("content-type"), Some("application/json"));
        let doc = reply.json();
        assert_eq!(doc["resource"], mcp.resource, "{path}");
        assert_eq!(doc["authorization_servers"], json!([authorization.issuer()]));
        assert_eq!(doc["scopes_supported"], json!(["mcp:basic", "mcp:admin"]));
        assert_eq!(doc["bearer_methods_supported"], json!(["header"]));
        assert_eq!(doc["dpop_signing_alg_values_supported"], json!(["ES256", "RS256"]));
        // Readable cross-origin, without credentials.
        let foreign = mcp.http.get(mcp.url(path)).header("origin", "https://client.example");
        assert_eq!(read(foreign.send().await.unwrap()).await.status, 200);
    }
    let rebinding = mcp.http.get(mcp.metadata_url()).header("host", "evil.example");
    assert_eq!(read(rebinding.send().await.unwrap()).await.status, 403, "the Host allowlist still applies");
    // Without DPoP the document does not mention it.
    let plain = start_default(&authorization).await;
    let doc = read(plain.http.get(plain.metadata_url()).send().await.unwrap()).await.json();
    assert!(doc.get("dpop_signing_alg_values_supported").is_none());
}

#[tokio::test]
async fn scopes_are_required_for_every_request_and_per_tool() {
    let authorization = AuthorizationServer::start().await;
    let mcp = start_mcp(&authorization, |b| b.required_scopes(["mcp:basic"]), |_| {}).await;
    // The 401 challenge names the scopes every request needs.
    let reply = call(&mcp, "/mcp", "count", &[]).await;
    assert_unauthorized(&reply, &mcp, None, "no token");
    assert_eq!(reply.challenge("Bearer").param("scope"), Some("mcp:basic"));
    // A valid token without them: 403 insufficient_scope.
    let bare = authorization.sign(Algorithm::RS256, &authorization.claims(&mcp.resource, "alice", "other"));
    let reply = call(&mcp, "/mcp", "count", &bearer(&bare)).await;
    assert_eq!(reply.status, 403);
    let challenge = reply.challenge("Bearer");
    assert_eq!(challenge.param("error"), Some("insufficient_scope"));
    assert_eq!(challenge.param("scope"), Some("mcp:basic"));
    assert_eq!(challenge.param("resource_metadata"), Some(mcp.metadata_url().as_str()));
    // The basic scope serves ordinary tools, not the admin one: that needs both, named at once.
    let basic =
        authorization.sign(Algorithm::RS256, &authorization.claims(&mcp.resource, "alice", "mcp:basic"));
    assert_eq!(call(&mcp, "/mcp", "count", &bearer(&basic)).await.status, 200);
    let reply = call(&mcp, "/mcp", "admin", &bearer(&basic)).await;
    assert_eq!(reply.status, 403, "{}", reply.body);
    let challenge = reply.challenge("Bearer");
    assert_eq!(challenge.param("error"), Some("insufficient_scope"));
    assert_eq!(challenge.param("scope"), Some("mcp:basic mcp:admin"));
    let both = authorization
        .sign(Algorithm::ES256, &authorization.claims(&mcp.resource, "alice", "mcp:basic mcp:admin"));
    let reply = call(&mcp, "/mcp", "admin", &bearer(&both)).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.text(), "admin done");
    assert_eq!(mcp.calls(), 1);
}

#[tokio::test]
async fn keys_rotate_and_unknown_kids_do_not_hammer_the_authorization_server() {
    let authorization = AuthorizationServer::start().await;
    let fast = JwtValidation::default().jwks_refetch_interval(Duration::ZERO);
    let mcp = start_mcp(&authorization, |b| b.jwt(fast), |_| {}).await;
    let old = authorization.sign(Algorithm::RS256, &authorization.claims(&mcp.resource, "alice", ""));
    assert_eq!(call(&mcp, "/mcp", "count", &bearer(&old)).await.status, 200);
    assert_eq!(authorization.jwks_hits(), 1, "the keys were discovered and fetched once");
    assert_eq!(call(&mcp, "/mcp", "count", &bearer(&old)).await.status, 200);
    assert_eq!(authorization.jwks_hits(), 1, "and cached");
    authorization.rotate();
    let new = authorization.sign(Algorithm::RS256, &authorization.claims(&mcp.resource, "alice", ""));
    let reply = call(&mcp, "/mcp", "count", &bearer(&new)).await;
    assert_eq!(reply.status, 200, "the new kid is accepted after a refetch: {}", reply.body);
    assert_eq!(authorization.jwks_hits(), 2);
    let reply = call(&mcp, "/mcp", "count", &bearer(&old)).await;
    assert_unauthorized(&reply, &mcp, Some("invalid_token"), "a token of the retired key");

    // With the default refetch interval, a flood of random kids costs one fetch at most.
    let authorization = AuthorizationServer::start().await;
    let mcp = start_default(&authorization).await;
    let good = authorization.sign(Algorithm::ES256, &authorization.claims(&mcp.resource, "alice", ""));
    assert_eq!(call(&mcp, "/mcp", "count", &bearer(&good)).await.status, 200);
    let claims = authorization.claims(&mcp.resource, "mallory", "");
    for i in 0..25 {
        let key = SigningKey::generate_es256().unwrap().with_kid(format!("random-{i}"));
        let forged = AuthorizationServer::sign_with(&key, json!({"typ": "at+jwt"}), &claims);
        let reply = call(&mcp, "/mcp", "count", &bearer(&forged)).await;
        assert_unauthorized(&reply, &mcp, Some("invalid_token"), "random kid");
    }
    assert!(authorization.jwks_hits() <= 2, "JWKS fetched {} times", authorization.jwks_hits());
}

#[tokio::test]
async fn an_unreachable_authorization_server_is_503_not_401() {
    let authorization = AuthorizationServer::start().await;
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let dead = format!("http://{}/jwks", closed.local_addr().unwrap());
    drop(closed);
    let jwt = JwtValidation::default().jwks_uri(dead);
    let mcp = start_mcp(&authorization, |b| b.jwt(jwt), |_| {}).await;
    let token = authorization.sign(Algorithm::RS256, &authorization.claims(&mcp.resource, "alice", ""));
    let reply = call(&mcp, "/mcp", "count", &bearer(&token)).await;
    assert_eq!(reply.status, 503, "{}", reply.body);
    assert!(reply.header("retry-after").is_some());
    assert_eq!(mcp.calls(), 0);
    // An explicit jwks_uri that works is used as is (no discovery).
    let jwt = JwtValidation::default().jwks_uri(authorization.jwks_uri());
    let mcp = start_mcp(&authorization, |b| b.jwt(jwt), |_| {}).await;
    let token = authorization.sign(Algorithm::RS256, &authorization.claims(&mcp.resource, "alice", ""));
    assert_eq!(call(&mcp, "/mcp", "count", &bearer(&token)).await.status, 200);
}

#[tokio::test]
async fn introspected_tokens() {
    let authorization = AuthorizationServer::start().await;
    let introspection = Introspection::new(authorization.introspection_endpoint(), CLIENT_ID, CLIENT_SECRET);
    let mcp = start_mcp(&authorization, |b| b.introspection(introspection), |_| {}).await;
    let answer = |active: bool, aud: &str| {
        json!({
            "active": active,
            "sub": "bob",
            "client_id": "opaque-client",
            "aud": aud,
            "iss": authorization.issuer(),
            "scope": "mcp:basic",
            "exp": now() + 600,
        })
    };
    authorization.register_opaque("opaque-active", answer(true, &mcp.resource));
    authorization.register_opaque("opaque-inactive", answer(false, &mcp.resource));
    authorization.register_opaque("opaque-elsewhere", answer(true, "https://other.example/mcp"));
    let mut expired = answer(true, &mcp.resource);
    expired["exp"] = json!(now() - 3600);
    authorization.register_opaque("opaque-expired", expired);

    let reply = call(&mcp, "/mcp", "whoami", &bearer("opaque-active")).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let who: Value = serde_json::from_str(&reply.text()).unwrap();
    assert_eq!(who["subject"], "bob");
    assert_eq!(who["client_id"], "opaque-client");
    assert_eq!(who["scopes"], json!(["mcp:basic"]));
    let asked = authorization.introspections();
    assert_eq!(call(&mcp, "/mcp", "whoami", &bearer("opaque-active")).await.status, 200);
    assert_eq!(authorization.introspections(), asked, "an active answer is cached briefly");
    for (token, what) in [
        ("opaque-inactive", "inactive"),
        ("opaque-elsewhere", "meant for another resource"),
        ("opaque-expired", "expired"),
        ("opaque-unknown", "unknown to the authorization server"),
    ] {
        let reply = call(&mcp, "/mcp", "count", &bearer(token)).await;
        assert_unauthorized(&reply, &mcp, Some("invalid_token"), what);
    }
    assert_eq!(mcp.calls(), 0);
    // Wrong client credentials: the authorization server refuses to answer → 503.
    let wrong = Introspection::new(authorization.introspection_endpoint(), CLIENT_ID, "wrong");
    let mcp = start_mcp(&authorization, |b| b.introspection(wrong), |_| {}).await;
    assert_eq!(call(&mcp, "/mcp", "count", &bearer("opaque-active")).await.status, 503);
}

/// A DPoP-bound token for `mcp`, and the client's key.
fn bound_token(authorization: &AuthorizationServer, mcp: &Mcp) -> (String, SigningKey) {
    let key = SigningKey::from_pem(DPOP, None).unwrap();
    let mut claims = authorization.claims(&mcp.resource, "carol", "mcp:basic");
    claims.insert("cnf".into(), json!({"jkt": key.thumbprint()}));
    (authorization.sign(Algorithm::ES256, &claims), key)
}

fn dpop_headers(token: &str, proof: &str) -> Headers {
    vec![("authorization", format!("DPoP {token}")), ("dpop", proof.to_owned())]
}

#[tokio::test]
async fn dpop_bound_tokens_need_their_proof() {
    let authorization = AuthorizationServer::start().await;
    let mcp = start_mcp(&authorization, |b| b.dpop(DpopConfig::default()), |_| {}).await;
    let (token, key) = bound_token(&authorization, &mcp);
    let url = mcp.url("/mcp");
    let proof = mcp_auth::dpop::proof(&key, "POST", &url, None, Some(&token)).unwrap();
    let reply = call(&mcp, "/mcp", "whoami", &dpop_headers(&token, &proof)).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let who: Value = serde_json::from_str(&reply.text()).unwrap();
    assert_eq!(who["jkt"], key.thumbprint());

    let dpop_error = |reply: &Reply, error: &str, what: &str| {
        assert_eq!(reply.status, 401, "{what}: {}", reply.body);
        let challenge = reply.challenge("DPoP");
        assert_eq!(challenge.param("error"), Some(error), "{what}: {challenge:?}");
        assert_eq!(challenge.param("algs"), Some("ES256 RS256"), "{what}");
    };
    let replayed = call(&mcp, "/mcp", "count", &dpop_headers(&token, &proof)).await;
    dpop_error(&replayed, "invalid_dpop_proof", "a replayed proof");
    let missing = call(&mcp, "/mcp", "count", &[("authorization", format!("DPoP {token}"))]).await;
    dpop_error(&missing, "invalid_dpop_proof", "no proof");
    let wrong_url = mcp_auth::dpop::proof(&key, "POST", &mcp.url("/other"), None, Some(&token)).unwrap();
    dpop_error(
        &call(&mcp, "/mcp", "count", &dpop_headers(&token, &wrong_url)).await,
        "invalid_dpop_proof",
        "htu",
    );
    let wrong_method = mcp_auth::dpop::proof(&key, "GET", &url, None, Some(&token)).unwrap();
    dpop_error(
        &call(&mcp, "/mcp", "count", &dpop_headers(&token, &wrong_method)).await,
        "invalid_dpop_proof",
        "htm",
    );
    let other_key = SigningKey::generate_es256().unwrap();
    let stolen = mcp_auth::dpop::proof(&other_key, "POST", &url, None, Some(&token)).unwrap();
    dpop_error(
        &call(&mcp, "/mcp", "count", &dpop_headers(&token, &stolen)).await,
        "invalid_dpop_proof",
        "a proof by another key",
    );
    let no_ath = mcp_auth::dpop::proof(&key, "POST", &url, None, None).unwrap();
    dpop_error(
        &call(&mcp, "/mcp", "count", &dpop_headers(&token, &no_ath)).await,
        "invalid_dpop_proof",
        "a proof without the token hash",
    );
    // The bound token presented as Bearer is refused, even with a good proof.
    let proof = mcp_auth::dpop::proof(&key, "POST", &url, None, Some(&token)).unwrap();
    let mut as_bearer = bearer(&token);
    as_bearer.push(("dpop", proof));
    let reply = call(&mcp, "/mcp", "count", &as_bearer).await;
    assert_unauthorized(&reply, &mcp, Some("invalid_token"), "a bound token as Bearer");
    assert!(reply.challenge("DPoP").param("algs").is_some(), "the DPoP scheme is offered");
    // An unbound token with the DPoP scheme is refused too.
    let unbound = authorization.sign(Algorithm::RS256, &authorization.claims(&mcp.resource, "carol", ""));
    let proof = mcp_auth::dpop::proof(&key, "POST", &url, None, Some(&unbound)).unwrap();
    dpop_error(
        &call(&mcp, "/mcp", "count", &dpop_headers(&unbound, &proof)).await,
        "invalid_token",
        "unbound",
    );
    // Unbound tokens still work as Bearer (DPoP is accepted, not required).
    assert_eq!(call(&mcp, "/mcp", "count", &bearer(&unbound)).await.status, 200);
    assert_eq!(mcp.calls(), 1);
}

#[tokio::test]
async fn dpop_nonces_and_required_dpop() {
    let authorization = AuthorizationServer::start().await;
    let config = DpopConfig::default().nonce(true).required(true);
    let mcp = start_mcp(&authorization, |b| b.dpop(config), |_| {}).await;
    let (token, key) = bound_token(&authorization, &mcp);
    let url = mcp.url("/mcp");
    let proof = mcp_auth::dpop::proof(&key, "POST", &url, None, Some(&token)).unwrap();
    let reply = call(&mcp, "/mcp", "count", &dpop_headers(&token, &proof)).await;
    assert_eq!(reply.status, 401);
    assert_eq!(reply.challenge("DPoP").param("error"), Some("use_dpop_nonce"));
    let nonce = reply.header("dpop-nonce").expect("a DPoP-Nonce header").to_owned();
    let proof = mcp_auth::dpop::proof(&key, "POST", &url, Some(&nonce), Some(&token)).unwrap();
    let reply = call(&mcp, "/mcp", "count", &dpop_headers(&token, &proof)).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let made_up = mcp_auth::dpop::proof(&key, "POST", &url, Some("made-up"), Some(&token)).unwrap();
    let reply = call(&mcp, "/mcp", "count", &dpop_headers(&token, &made_up)).await;
    assert_eq!(reply.challenge("DPoP").param("error"), Some("use_dpop_nonce"));
    // DPoP required: Bearer is not offered, and an unbound Bearer token is refused.
    let unbound = authorization.sign(Algorithm::RS256, &authorization.claims(&mcp.resource, "carol", ""));
    let reply = call(&mcp, "/mcp", "count", &bearer(&unbound)).await;
    assert_eq!(reply.status, 401);
    assert_eq!(reply.challenge("Bearer").param("error"), Some("invalid_token"));
    let reply = call(&mcp, "/mcp", "count", &[]).await;
    assert!(reply.challenges().iter().all(|c| !c.is("Bearer")), "{:?}", reply.challenges());
    assert_eq!(reply.challenge("DPoP").param("resource_metadata"), Some(mcp.metadata_url().as_str()));
    assert_eq!(mcp.calls(), 1);
}

fn initialize_body() -> String {
    json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}
        }
    })
    .to_string()
}

fn legacy_call(tool: &str) -> String {
    json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool, "arguments": {}}})
        .to_string()
}

async fn legacy_post(mcp: &Mcp, token: &str, session: Option<&str>, body: String) -> Reply {
    let mut request = mcp
        .http
        .post(mcp.url("/mcp"))
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body);
    if let Some(session) = session {
        request = request.header("mcp-session-id", session).header("mcp-protocol-version", "2025-06-18");
    }
    read(request.send().await.unwrap()).await
}

#[tokio::test]
async fn legacy_sessions_are_bound_to_their_principal() {
    let authorization = AuthorizationServer::start().await;
    let mcp = start_default(&authorization).await;
    let alice = authorization.sign(Algorithm::RS256, &authorization.claims(&mcp.resource, "alice", ""));
    let alice_again = authorization.sign(Algorithm::ES256, &authorization.claims(&mcp.resource, "alice", ""));
    let mallory = authorization.sign(Algorithm::RS256, &authorization.claims(&mcp.resource, "mallory", ""));
    let reply = legacy_post(&mcp, &alice, None, initialize_body()).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let session = reply.header("mcp-session-id").expect("a session id").to_owned();
    // Another principal with the id: as if the session did not exist.
    let stolen = legacy_post(&mcp, &mallory, Some(&session), legacy_call("count")).await;
    assert_eq!(stolen.status, 404, "{}", stolen.body);
    let delete = mcp
        .http
        .delete(mcp.url("/mcp"))
        .header("authorization", format!("Bearer {mallory}"))
        .header("mcp-session-id", &session);
    assert_eq!(read(delete.send().await.unwrap()).await.status, 404);
    assert_eq!(mcp.calls(), 0);
    // The same principal with another token (a refresh) keeps its session.
    let reply = legacy_post(&mcp, &alice_again, Some(&session), legacy_call("whoami")).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let text = reply
        .body
        .lines()
        .find_map(|l| l.strip_prefix("data:"))
        .map(|d| serde_json::from_str::<Value>(d.trim()).unwrap())
        .unwrap_or_else(|| reply.json());
    let who: Value = serde_json::from_str(text["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(who["subject"], "alice");

    // HTTP+SSE (2024-11-05): the stream needs a token, and its session is its principal's.
    let unauthenticated = read(mcp.http.get(mcp.url("/sse")).send().await.unwrap()).await;
    assert_unauthorized(&unauthenticated, &mcp, None, "GET /sse");
    let mut stream = mcp
        .http
        .get(mcp.url("/sse"))
        .header("authorization", format!("Bearer {alice}"))
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    let first = String::from_utf8(stream.chunk().await.unwrap().unwrap().to_vec()).unwrap();
    let endpoint =
        first.lines().find_map(|l| l.strip_prefix("data: ")).expect("the endpoint event").to_owned();
    let post = |token: &str| {
        mcp.http
            .post(mcp.url(&endpoint))
            .header("authorization", format!("Bearer {token}"))
            .header("content-type", "application/json")
            .body(initialize_body())
    };
    assert_eq!(read(post(&mallory).send().await.unwrap()).await.status, 404);
    let reply = read(mcp.http.post(mcp.url(&endpoint)).body(initialize_body()).send().await.unwrap()).await;
    assert_unauthorized(&reply, &mcp, None, "POST /messages");
    assert_eq!(read(post(&alice_again).send().await.unwrap()).await.status, 202);
}

#[tokio::test]
async fn requests_in_flight_are_limited_per_principal() {
    let authorization = AuthorizationServer::start().await;
    let mcp = start_mcp(&authorization, |b| b, |c| c.max_in_flight_per_principal = 2).await;
    let mcp = Arc::new(mcp);
    let alice = authorization.sign(Algorithm::RS256, &authorization.claims(&mcp.resource, "alice", ""));
    let bob = authorization.sign(Algorithm::RS256, &authorization.claims(&mcp.resource, "bob", ""));
    let slow: Vec<_> = (0..2)
        .map(|_| {
            let (mcp, alice) = (mcp.clone(), alice.clone());
            tokio::spawn(async move { call(&mcp, "/mcp", "slow", &bearer(&alice)).await.status })
        })
        .collect();
    for _ in 0..500 {
        if mcp.gate.entered.load(Ordering::SeqCst) == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(mcp.gate.entered.load(Ordering::SeqCst), 2, "both slow calls are running");
    let third = call(&mcp, "/mcp", "count", &bearer(&alice)).await;
    assert_eq!(third.status, 503);
    assert!(third.header("retry-after").is_some());
    assert_eq!(call(&mcp, "/mcp", "count", &bearer(&bob)).await.status, 200, "bob has his own share");
    mcp.gate.open.store(true, Ordering::SeqCst);
    for task in slow {
        assert_eq!(task.await.unwrap(), 200);
    }
    assert_eq!(call(&mcp, "/mcp", "count", &bearer(&alice)).await.status, 200);
}
