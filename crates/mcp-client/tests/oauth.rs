//! The OAuth client (`mcp_client::auth`) against a real authorization server and a protected
//! MCP endpoint (tests/oauth/support.rs), both on 127.0.0.1: discovery order, the resource and
//! issuer checks, PKCE, every token endpoint authentication method, scopes and step-up, the
//! retry limit, refresh, migration to another authorization server, DPoP, and where tokens
//! travel; and the transports' hook itself (`HttpAuth`) with an implementation of the test's
//! own.

#[path = "oauth/support.rs"]
mod support;

mod capture;

use std::sync::{Arc, Mutex};

use base64::Engine as _;
use capture::Captured;
use mcp_auth::jose::SigningKey;
use mcp_client::auth::{AuthError, DpopPolicy, Grant, OAuthClient, PreRegistered};
use mcp_client::reqwest::header::{AUTHORIZATION, HeaderMap};
use mcp_client::transport::http::{HttpAuth, HttpConfig, Refusal, StreamableHttpTransport};
use mcp_client::transport::{
    BoxFuture, Inbound, Outgoing, OutgoingKind, RequestHeaders, Transport, TransportError,
};
use mcp_client::{Client, ClientError, Outcome};
use serde_json::{Value, json};
use support::*;

const PRM_PATH: &str = "/.well-known/oauth-protected-resource/mcp";
const PRM_ROOT: &str = "/.well-known/oauth-protected-resource";
const AS_WELL_KNOWN: &str = "/.well-known/oauth-authorization-server";
const OIDC_WELL_KNOWN: &str = "/.well-known/openid-configuration";

/// The HTTP status of a call that failed at the transport.
fn http_status(error: &ClientError) -> Option<u16> {
    match error {
        ClientError::Transport { error: TransportError::Http { status, .. }, .. } => Some(*status),
        _ => None,
    }
}

fn assert_refused(error: &ClientError, status: u16) {
    assert_eq!(http_status(error), Some(status), "{error:?}");
    assert_eq!(error.outcome(), Outcome::NotExecuted, "{error:?}");
}

async fn list(client: &Client) -> Result<usize, ClientError> {
    client.list_all_tools().await.map(|tools| tools.len())
}

#[tokio::test]
async fn the_whole_flow_with_dynamic_registration() {
    let world = World::new().await;
    let client = world.connect(oauth().build().unwrap()).await;
    assert_eq!(list(&client).await.unwrap(), 2);
    client.call_tool("echo", json!({})).await.unwrap();

    let order: Vec<(String, String, String)> = world
        .requests()
        .iter()
        .map(|s| (s.server.to_owned(), s.method.to_string(), s.path.clone()))
        .collect();
    let expected = [
        ("rs", "POST", "/mcp"),
        ("rs", "GET", PRM_PATH),
        ("as1", "GET", AS_WELL_KNOWN),
        ("as1", "POST", "/register"),
        ("as1", "GET", "/authorize"),
        ("as1", "POST", "/token"),
        ("rs", "POST", "/mcp"),
        ("rs", "POST", "/mcp"),
    ];
    let expected: Vec<(String, String, String)> =
        expected.iter().map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string())).collect();
    assert_eq!(order, expected);

    let registration: Value = serde_json::from_str(&world.at("as1", "/register")[0].body).unwrap();
    assert_eq!(registration["application_type"], "native");
    assert_eq!(registration["token_endpoint_auth_method"], "none");
    assert_eq!(registration["redirect_uris"], json!([REDIRECT_URI]));
    assert_eq!(registration["grant_types"], json!(["authorization_code", "refresh_token"]));
    assert_eq!(registration["client_name"], "oauth-test");

    let mcp = world.at("rs", "/mcp");
    assert!(mcp[0].header("authorization").is_none(), "the first request has no token");
    let token = world.tokens.lock().unwrap().keys().next().cloned().unwrap();
    for seen in &mcp[1..] {
        assert_eq!(seen.header("authorization"), Some(format!("Bearer {token}").as_str()));
    }
}

#[tokio::test]
async fn pkce_state_redirect_and_resource_are_exact() {
    let world = World::new().await;
    {
        // Metadata only at the root, naming the server's base URL (no path, no trailing slash).
        let mut rs = world.rs.setup();
        rs.prm_in_header = false;
        rs.prm_path = PRM_ROOT.into();
        rs.resource = Some(world.rs.base());
    }
    let client = world.connect(oauth().build().unwrap()).await;
    list(&client).await.unwrap();

    let authorize = world.at("as1", "/authorize")[0].params();
    let token = world.at("as1", "/token")[0].form();
    assert_eq!(authorize["code_challenge_method"], "S256");
    assert!(mcp_auth::pkce::is_valid_verifier(&token["code_verifier"]));
    assert_eq!(mcp_auth::pkce::s256(&token["code_verifier"]), authorize["code_challenge"]);
    assert!(authorize["state"].len() >= 43, "state has at least 256 bits");
    assert_eq!(authorize["response_type"], "code");
    assert_eq!(authorize["redirect_uri"], REDIRECT_URI);
    assert_eq!(token["redirect_uri"], REDIRECT_URI);
    assert_eq!(token["grant_type"], "authorization_code");
    // `resource` byte for byte as the metadata names it, in both requests.
    assert_eq!(authorize["resource"], world.rs.base());
    assert_eq!(token["resource"], world.rs.base());
    assert!(!authorize.contains_key("scope"), "no scope anywhere: none requested");
    // No challenge URL: the path-based well-known URL first, then the root.
    let gets: Vec<String> = world
        .requests()
        .iter()
        .filter(|s| s.server == "rs" && s.method == "GET")
        .map(|s| s.path.clone())
        .collect();
    assert_eq!(gets, [PRM_PATH, PRM_ROOT]);
}

#[tokio::test]
async fn the_challenges_metadata_url_comes_first() {
    let world = World::new().await;
    world.rs.setup().prm_path = "/custom/metadata/location.json".into();
    let client = world.connect(oauth().build().unwrap()).await;
    list(&client).await.unwrap();
    let gets: Vec<String> = world
        .requests()
        .iter()
        .filter(|s| s.server == "rs" && s.method == "GET")
        .map(|s| s.path.clone())
        .collect();
    assert_eq!(gets, ["/custom/metadata/location.json"]);
}

#[tokio::test]
async fn path_based_metadata_spares_the_root() {
    let world = World::new().await;
    world.rs.setup().prm_in_header = false;
    let client = world.connect(oauth().build().unwrap()).await;
    list(&client).await.unwrap();
    let gets: Vec<String> = world
        .requests()
        .iter()
        .filter(|s| s.server == "rs" && s.method == "GET")
        .map(|s| s.path.clone())
        .collect();
    assert_eq!(gets, [PRM_PATH]);
}

#[tokio::test]
async fn a_path_issuers_metadata_is_looked_up_in_order_never_at_the_root() {
    let world = World::new().await;
    {
        let mut auth = world.auth.setup();
        auth.issuer_path = "/tenant1".into();
        auth.serve_at = Some(vec!["/tenant1/.well-known/openid-configuration".into()]);
    }
    world.rs.setup().authorization_servers = vec![world.auth.issuer()];
    let client = world.connect(oauth().build().unwrap()).await;
    list(&client).await.unwrap();
    let paths = world.paths("as1");
    assert_eq!(
        paths[..3],
        [
            "/.well-known/oauth-authorization-server/tenant1",
            "/.well-known/openid-configuration/tenant1",
            "/tenant1/.well-known/openid-configuration",
        ]
    );
    assert_eq!(paths[3..], ["/tenant1/register", "/tenant1/authorize", "/tenant1/token"]);
    assert!(!paths.iter().any(|p| p == AS_WELL_KNOWN || p == OIDC_WELL_KNOWN), "{paths:?}");
}

#[tokio::test]
async fn a_root_issuer_falls_back_to_openid_configuration() {
    let world = World::new().await;
    world.auth.setup().serve_at = Some(vec![OIDC_WELL_KNOWN.into()]);
    let client = world.connect(oauth().build().unwrap()).await;
    list(&client).await.unwrap();
    assert_eq!(world.paths("as1")[..2], [AS_WELL_KNOWN, OIDC_WELL_KNOWN]);
}

#[tokio::test]
async fn metadata_naming_another_issuer_is_never_used() {
    let world = World::new().await;
    world.auth.setup().metadata_issuer = Some("https://attacker.example.com".into());
    let client = world.connect(oauth().build().unwrap()).await;
    let error = list(&client).await.unwrap_err();
    assert_refused(&error, 401);
    // Both well-known URLs tried; no endpoint of the poisoned document used.
    assert_eq!(world.paths("as1"), [AS_WELL_KNOWN, OIDC_WELL_KNOWN]);
}

#[tokio::test]
async fn a_resource_mismatch_stops_before_the_authorization_server() {
    let world = World::new().await;
    world.rs.setup().resource = Some("https://evil.example.com/mcp".into());
    let client = world.connect(oauth().build().unwrap()).await;
    let error = list(&client).await.unwrap_err();
    assert_refused(&error, 401);
    assert!(world.paths("as1").is_empty(), "nothing was asked of the authorization server");
    assert_eq!(world.paths("rs"), ["/mcp", PRM_PATH]);
}

#[tokio::test]
async fn iss_is_required_when_advertised_and_compared_exactly() {
    enum Expect {
        Token,
        NoToken,
    }
    /// The `iss` of the response, given the real issuer.
    type IssFor = fn(&str) -> Iss;
    let cases: Vec<(Option<bool>, IssFor, Expect)> = vec![
        (Some(true), |_| Iss::Correct, Expect::Token),
        (None, |_| Iss::Correct, Expect::Token),
        (None, |_| Iss::Omit, Expect::Token),
        (Some(false), |_| Iss::Omit, Expect::Token),
        (Some(true), |_| Iss::Omit, Expect::NoToken),
        (Some(true), |_| Iss::Value("https://evil.example.com".into()), Expect::NoToken),
        (None, |_| Iss::Value("https://evil.example.com".into()), Expect::NoToken),
        (Some(true), |issuer| Iss::Value(format!("{issuer}/")), Expect::NoToken),
        (Some(true), |issuer| Iss::Value(issuer.replace("http://", "HTTP://")), Expect::NoToken),
    ];
    for (index, (advertised, iss, expect)) in cases.into_iter().enumerate() {
        let world = World::new().await;
        {
            let issuer = world.auth.issuer();
            let mut auth = world.auth.setup();
            auth.iss_supported = advertised;
            auth.iss = iss(&issuer);
        }
        let client = world.connect(oauth().build().unwrap()).await;
        let result = list(&client).await;
        assert_eq!(world.at("as1", "/authorize").len(), 1, "case {index}");
        match expect {
            Expect::Token => {
                result.unwrap_or_else(|e| panic!("case {index}: {e}"));
                assert_eq!(world.at("as1", "/token").len(), 1, "case {index}");
            }
            Expect::NoToken => {
                assert_refused(&result.unwrap_err(), 401);
                assert!(
                    world.at("as1", "/token").is_empty(),
                    "case {index}: the code went to the token endpoint"
                );
            }
        }
    }
}

#[tokio::test]
async fn an_authorization_server_without_pkce_is_refused() {
    let world = World::new().await;
    world.auth.setup().pkce = false;
    let client = world.connect(oauth().build().unwrap()).await;
    assert_refused(&list(&client).await.unwrap_err(), 401);
    assert!(world.at("as1", "/authorize").is_empty());
}

#[tokio::test]
async fn each_token_endpoint_auth_method_of_a_dynamic_registration() {
    for method in ["client_secret_basic", "client_secret_post", "none"] {
        let world = World::new().await;
        world.auth.setup().auth_methods = Some(vec![method.into()]);
        let client = world.connect(oauth().build().unwrap()).await;
        list(&client).await.unwrap_or_else(|e| panic!("{method}: {e}"));
        let registration: Value = serde_json::from_str(&world.at("as1", "/register")[0].body).unwrap();
        assert_eq!(registration["token_endpoint_auth_method"], method);
        let token = &world.at("as1", "/token")[0];
        let form = token.form();
        let basic = token.header("authorization");
        match method {
            "client_secret_basic" => {
                assert!(basic.is_some_and(|b| b.starts_with("Basic ")), "{method}");
                assert!(!form.contains_key("client_secret"), "{method}");
            }
            "client_secret_post" => {
                assert!(basic.is_none(), "{method}");
                assert!(form["client_secret"].ends_with("-secret"), "{method}");
                assert!(form.contains_key("client_id"), "{method}");
            }
            _ => {
                assert!(basic.is_none(), "{method}");
                assert!(!form.contains_key("client_secret"), "{method}");
                assert!(form["client_id"].starts_with("as1-client-"), "{method}");
            }
        }
    }
}

#[tokio::test]
async fn pre_registered_credentials_are_used_form_encoded_and_only_with_their_issuer() {
    let (id, secret) = ("id:with space", "s%cret:/");
    let world = World::new().await;
    {
        let mut auth = world.auth.setup();
        auth.registration = false;
        auth.auth_methods = Some(vec!["client_secret_basic".into()]);
        auth.clients.insert(
            id.into(),
            AsClient { secret: Some(secret.into()), method: "client_secret_basic".into(), jwk: None },
        );
    }
    let credentials = PreRegistered::new(id).secret(secret).issuer(world.auth.issuer());
    let client = world.connect(oauth().pre_registered(credentials).build().unwrap()).await;
    list(&client).await.unwrap();
    let basic = world.at("as1", "/token")[0].header("authorization").unwrap().to_owned();
    let decoded =
        base64::engine::general_purpose::STANDARD.decode(basic.strip_prefix("Basic ").unwrap()).unwrap();
    assert_eq!(String::from_utf8(decoded).unwrap(), "id%3Awith+space:s%25cret%3A%2F");
    assert!(world.at("as1", "/register").is_empty());

    // Bound to another issuer: never presented here; the client registers instead.
    let world = World::new().await;
    let credentials =
        PreRegistered::new("elsewhere-id").secret("elsewhere-secret").issuer("https://other.example");
    let client = world.connect(oauth().pre_registered(credentials).build().unwrap()).await;
    list(&client).await.unwrap();
    assert_eq!(world.at("as1", "/register").len(), 1);
    for seen in world.requests() {
        let all = format!("{:?} {:?} {}", seen.query, seen.headers, seen.body);
        assert!(!all.contains("elsewhere"), "{all}");
    }
}

#[tokio::test]
async fn a_client_id_metadata_document_url_replaces_registration_when_supported() {
    let url = "https://client.example/oauth/metadata.json";
    let world = World::new().await;
    world.auth.setup().cimd = true;
    let client = world.connect(oauth().client_metadata_url(url).unwrap().build().unwrap()).await;
    list(&client).await.unwrap();
    assert!(world.at("as1", "/register").is_empty());
    assert_eq!(world.at("as1", "/authorize")[0].params()["client_id"], url);
    assert_eq!(world.at("as1", "/token")[0].form()["client_id"], url);

    // Not supported: dynamic registration.
    let world = World::new().await;
    let client = world.connect(oauth().client_metadata_url(url).unwrap().build().unwrap()).await;
    list(&client).await.unwrap();
    assert_eq!(world.at("as1", "/register").len(), 1);
}

#[tokio::test]
async fn client_credentials_with_private_key_jwt() {
    let key = SigningKey::generate_es256().unwrap();
    let jwk = key.public_jwk();
    let world = World::new().await;
    world.rs.setup().challenge_scope = Some("mcp:read".into());
    {
        let mut auth = world.auth.setup();
        auth.registration = false;
        auth.auth_methods = Some(vec!["private_key_jwt".into()]);
        auth.clients.insert(
            "machine".into(),
            AsClient { secret: None, method: "private_key_jwt".into(), jwk: Some(jwk) },
        );
    }
    let oauth = OAuthClient::builder()
        .grant(Grant::ClientCredentials)
        .pre_registered(PreRegistered::new("machine").private_key(key))
        .dpop(DpopPolicy::Never)
        .build()
        .unwrap();
    let client = world.connect(oauth).await;
    list(&client).await.unwrap();
    assert!(world.at("as1", "/authorize").is_empty());
    let form = world.at("as1", "/token")[0].form();
    assert_eq!(form["grant_type"], "client_credentials");
    assert_eq!(form["scope"], "mcp:read");
    assert_eq!(form["resource"], world.mcp_url());
    assert_eq!(form["client_assertion_type"], "urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
}

#[tokio::test]
async fn a_jwt_bearer_assertion_is_the_grant() {
    let world = World::new().await;
    {
        let mut auth = world.auth.setup();
        auth.registration = false;
        auth.clients.insert("workload".into(), AsClient { secret: None, method: "none".into(), jwk: None });
        auth.jwt_assertion = Some("header.payload.sig".into());
    }
    let oauth = OAuthClient::builder()
        .grant(Grant::JwtBearer(Arc::new(mcp_client::auth::StaticAssertion::new("header.payload.sig"))))
        .pre_registered(PreRegistered::new("workload"))
        .dpop(DpopPolicy::Never)
        .build()
        .unwrap();
    let client = world.connect(oauth).await;
    list(&client).await.unwrap();
    let form = world.at("as1", "/token")[0].form();
    assert_eq!(form["grant_type"], "urn:ietf:params:oauth:grant-type:jwt-bearer");
    assert_eq!(form["assertion"], "header.payload.sig");
    assert_eq!(form["client_id"], "workload");
    assert_eq!(form["resource"], world.mcp_url());
}

#[tokio::test]
async fn step_up_requests_the_union_of_scopes() {
    let world = World::new().await;
    {
        let mut rs = world.rs.setup();
        rs.challenge_scope = Some("mcp:read".into());
        rs.needs.insert("tools/list".into(), "mcp:read".into());
        rs.needs.insert("tools/call".into(), "mcp:write".into());
    }
    let oauth = Arc::new(oauth().build().unwrap());
    let client = world.try_connect(oauth.clone()).await.unwrap();
    list(&client).await.unwrap();
    client.call_tool("write", json!({})).await.unwrap();
    let scopes: Vec<String> =
        world.at("as1", "/authorize").iter().map(|s| s.params()["scope"].clone()).collect();
    assert_eq!(scopes, ["mcp:read", "mcp:read mcp:write"]);
    assert_eq!(oauth.granted_scope().as_deref(), Some("mcp:read mcp:write"));
    // The refused call went out again, unchanged but for its token.
    let calls: Vec<Seen> = world
        .at("rs", "/mcp")
        .into_iter()
        .filter(|s| s.rpc_method().as_deref() == Some("tools/call"))
        .collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].body, calls[1].body);
    assert_ne!(calls[0].header("authorization"), calls[1].header("authorization"));
}

#[tokio::test]
async fn scope_upgrades_stop_after_three_authorization_attempts() {
    let world = World::new().await;
    {
        let mut rs = world.rs.setup();
        rs.challenge_scope = Some("mcp:admin".into());
        rs.always_forbid = Some("mcp:admin".into());
    }
    let client = world.connect(oauth().build().unwrap()).await;
    let error = list(&client).await.unwrap_err();
    assert_refused(&error, 403);
    assert_eq!(world.at("as1", "/authorize").len(), 3);
    assert_eq!(world.at("rs", "/mcp").len(), 4, "the first request and three retries");
}

#[tokio::test]
async fn offline_access_only_when_the_authorization_server_lists_it() {
    for (listed, expected) in [(true, "mcp:read offline_access"), (false, "mcp:read")] {
        let world = World::new().await;
        world.rs.setup().scopes_supported = Some(vec!["mcp:read".into()]);
        let mut supported = vec!["mcp:read".to_owned()];
        if listed {
            supported.push("offline_access".into());
        }
        world.auth.setup().scopes_supported = Some(supported);
        let client = world.connect(oauth().build().unwrap()).await;
        list(&client).await.unwrap();
        assert_eq!(world.at("as1", "/authorize")[0].params()["scope"], expected);
    }
}

#[tokio::test]
async fn an_expiring_token_is_refreshed_before_it_is_sent() {
    let world = World::new().await;
    {
        let mut auth = world.auth.setup();
        auth.refresh_tokens = true;
        // Renewed after half its lifetime (2 s), being shorter than the margin.
        auth.expires_in = 4;
    }
    let client = world.connect(oauth().build().unwrap()).await;
    list(&client).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
    list(&client).await.unwrap();
    let tokens = world.at("as1", "/token");
    let grants: Vec<String> = tokens.iter().map(|s| s.form()["grant_type"].clone()).collect();
    assert_eq!(grants, ["authorization_code", "refresh_token"]);
    assert_eq!(tokens[1].form()["resource"], world.mcp_url());
    assert_eq!(world.at("as1", "/authorize").len(), 1);
    let mcp = world.at("rs", "/mcp");
    assert_eq!(mcp.len(), 3, "no refusal: the renewed token went out directly");
    assert_ne!(mcp[1].header("authorization"), mcp[2].header("authorization"));
}

#[tokio::test]
async fn a_rejected_token_is_refreshed() {
    let world = World::new().await;
    world.auth.setup().refresh_tokens = true;
    let client = world.connect(oauth().build().unwrap()).await;
    list(&client).await.unwrap();
    world.tokens.lock().unwrap().clear();
    list(&client).await.unwrap();
    let grants: Vec<String> =
        world.at("as1", "/token").iter().map(|s| s.form()["grant_type"].clone()).collect();
    assert_eq!(grants, ["authorization_code", "refresh_token"]);
    assert_eq!(world.at("as1", "/authorize").len(), 1);
}

#[tokio::test]
async fn a_new_authorization_server_means_a_new_registration() {
    let mut world = World::new().await;
    let as2 = world.add_as("as2").await;
    let oauth = Arc::new(oauth().build().unwrap());
    let client = world.try_connect(oauth.clone()).await.unwrap();
    list(&client).await.unwrap();
    let as1_client = world.at("as1", "/token")[0].form()["client_id"].clone();

    world.rs.setup().authorization_servers = vec![as2.issuer()];
    world.tokens.lock().unwrap().clear();
    list(&client).await.unwrap();

    assert_eq!(oauth.issuer(), Some(as2.issuer()));
    assert_eq!(world.at("as2", "/register").len(), 1);
    for seen in world.requests().iter().filter(|s| s.server == "as2") {
        let all = format!("{} {:?} {:?} {}", seen.path, seen.query, seen.headers, seen.body);
        assert!(!all.contains(&as1_client), "AS1's client id presented to AS2: {all}");
    }
    // The metadata was read again after the refusal.
    assert_eq!(world.at("rs", PRM_PATH).len(), 2);
}

#[tokio::test]
async fn concurrent_refusals_share_one_authorization() {
    let world = World::new().await;
    let client = world.connect(oauth().build().unwrap()).await;
    let (a, b) = tokio::join!(list(&client), client.call_tool("echo", json!({})));
    a.unwrap();
    b.unwrap();
    assert_eq!(world.at("as1", "/authorize").len(), 1);
    assert_eq!(world.at("as1", "/token").len(), 1);
}

#[tokio::test]
async fn dpop_binds_the_token_and_follows_both_nonces() {
    let world = World::new().await;
    {
        let mut auth = world.auth.setup();
        auth.dpop_algs = Some(vec!["ES256".into()]);
        auth.dpop_nonce = Some("as-nonce".into());
    }
    world.rs.setup().dpop_nonce = Some("rs-nonce".into());
    let client = world.connect(oauth().dpop(DpopPolicy::WhenSupported).build().unwrap()).await;
    list(&client).await.unwrap();
    list(&client).await.unwrap();

    let tokens = world.at("as1", "/token");
    assert_eq!(tokens.len(), 2, "retried once with the authorization server's nonce");
    assert!(tokens.iter().all(|t| t.header("dpop").is_some()));
    let mcp = world.at("rs", "/mcp");
    // Unauthenticated, nonce challenge, then accepted twice.
    assert_eq!(mcp.len(), 4);
    let proofs: Vec<&str> = mcp[1..].iter().map(|s| s.header("dpop").unwrap()).collect();
    assert!(mcp[1..].iter().all(|s| s.header("authorization").unwrap().starts_with("DPoP ")));
    assert_ne!(proofs[1], proofs[2], "a fresh proof per request");
}

#[tokio::test]
async fn tokens_travel_only_in_the_authorization_header_and_are_never_logged() {
    let captured = Captured::default();
    let subscriber = captured.subscriber("trace");
    // Global (the only test here that installs one): the flows run on tasks, and other tests
    // running at the same time log into the same capture, which they must not leak into either.
    tracing::subscriber::set_global_default(subscriber).expect("the only global subscriber");

    let world = World::new().await;
    {
        let mut auth = world.auth.setup();
        auth.refresh_tokens = true;
        auth.auth_methods = Some(vec!["client_secret_post".into()]);
    }
    let client = world.connect(oauth().build().unwrap()).await;
    list(&client).await.unwrap();
    world.tokens.lock().unwrap().clear();
    list(&client).await.unwrap();

    // Every secret the servers issued ends in "-secret": access and refresh tokens, the
    // client secret.
    for seen in world.requests() {
        assert!(!seen.path.contains("secret"), "{}", seen.path);
        assert!(!seen.query.as_deref().unwrap_or("").contains("secret"), "{:?}", seen.query);
        for (name, value) in &seen.headers {
            if name != "authorization" {
                assert!(!value.to_str().unwrap_or("").contains("secret"), "{name}");
            }
        }
        if seen.server == "rs" {
            assert!(!seen.body.contains("secret"), "an MCP body carries a credential");
        }
    }
    let logs = captured.text();
    assert!(logs.contains("token obtained"), "the capture works: {logs}");
    assert!(!logs.contains("-secret"), "a credential was logged");
}

// ---- The transport hook, with an `HttpAuth` of the test's own --------------------------------

/// A refusal as the hook saw it: status, challenge, the `Authorization` it had given.
type SeenRefusal = (u16, Option<String>, Option<String>);
/// A request as the guarded endpoint saw it: method, `Authorization`, body.
type Guarded = Arc<Mutex<Vec<(String, Option<String>, String)>>>;

/// Presents `Bearer <token>`; on a refusal, switches to `good` when `cures`.
struct Switching {
    token: Mutex<String>,
    cures: bool,
    authorized: Mutex<Vec<String>>,
    refusals: Mutex<Vec<SeenRefusal>>,
}

impl Switching {
    fn new(cures: bool) -> Arc<Self> {
        Arc::new(Switching {
            token: Mutex::new("stale".into()),
            cures,
            authorized: Mutex::default(),
            refusals: Mutex::default(),
        })
    }
}

impl HttpAuth for Switching {
    fn authorize<'a>(
        &'a self,
        method: &'a reqwest::Method,
        _url: &'a reqwest::Url,
    ) -> BoxFuture<'a, Result<HeaderMap, AuthError>> {
        self.authorized.lock().unwrap().push(method.to_string());
        let value = format!("Bearer {}", self.token.lock().unwrap());
        Box::pin(async move {
            let mut headers = HeaderMap::new();
            headers.insert(AUTHORIZATION, value.parse().unwrap());
            Ok(headers)
        })
    }

    fn refused<'a>(&'a self, refusal: &'a Refusal) -> BoxFuture<'a, Result<bool, AuthError>> {
        let challenge = refusal.www_authenticate().next().map(|v| v.into_owned());
        let presented = refusal.presented.get(AUTHORIZATION).and_then(|v| v.to_str().ok()).map(str::to_owned);
        self.refusals.lock().unwrap().push((refusal.status, challenge, presented));
        if self.cures {
            *self.token.lock().unwrap() = "good".into();
        }
        Box::pin(async { Ok(true) })
    }
}

/// A legacy endpoint that wants `Bearer good` on every method (a `403` without a challenge for
/// the tool `forbidden`), and records `(method, Authorization, body)`.
async fn guarded_endpoint() -> (String, Guarded) {
    use axum::response::IntoResponse;
    let log = Guarded::default();
    let seen = log.clone();
    let handler = move |method: http::Method, headers: http::HeaderMap, body: axum::body::Bytes| {
        let seen = seen.clone();
        async move {
            let auth = headers.get("authorization").and_then(|v| v.to_str().ok()).map(str::to_owned);
            let body = String::from_utf8_lossy(&body).into_owned();
            seen.lock().unwrap().push((method.to_string(), auth.clone(), body.clone()));
            if auth.as_deref() != Some("Bearer good") {
                return (http::StatusCode::UNAUTHORIZED, [("www-authenticate", "Bearer realm=\"t\"")], "")
                    .into_response();
            }
            match method {
                http::Method::GET => {
                    ([("content-type", "text/event-stream")], ": nothing\n\n").into_response()
                }
                http::Method::DELETE => http::StatusCode::OK.into_response(),
                _ if body.contains("forbidden") => http::StatusCode::FORBIDDEN.into_response(),
                _ => {
                    let rpc: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
                    let answer = json!({"jsonrpc": "2.0", "id": rpc["id"], "result": {
                        "protocolVersion": "2025-11-25", "capabilities": {},
                        "serverInfo": {"name": "guarded", "version": "1"}}});
                    ([("content-type", "application/json"), ("mcp-session-id", "s1")], answer.to_string())
                        .into_response()
                }
            }
        }
    };
    let app = axum::Router::new().route("/mcp", axum::routing::any(handler));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, log)
}

fn outgoing(id: i64, method: &str, params: Value) -> Outgoing {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    Outgoing {
        body: body.to_string().into(),
        kind: OutgoingKind::Request {
            id: mcp_types::RequestId::Number(id),
            method: method.into(),
            headers: RequestHeaders::default(),
        },
        protocol_version: (method != "initialize").then_some(mcp_types::ProtocolVersion::V2025_11_25),
    }
}

#[tokio::test]
async fn every_request_asks_the_hook_and_a_cured_refusal_is_sent_again_unchanged() {
    let (url, log) = guarded_endpoint().await;
    let auth = Switching::new(true);
    let (tx, mut rx) = mcp_client::transport::inbound_channel();
    let transport = StreamableHttpTransport::new(HttpConfig::new(url).auth(auth.clone()), tx).unwrap();
    let init = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}});
    let clock = mcp_client::transport::Deadline::new();
    clock.scope(transport.send(outgoing(1, "initialize", init))).await.unwrap();
    assert!(matches!(rx.recv().await, Some(Inbound::Message(_))));
    transport.session_ready(mcp_types::ProtocolVersion::V2025_11_25).await;
    transport.close().await;

    let log = log.lock().unwrap().clone();
    let methods: Vec<(&str, Option<&str>)> = log.iter().map(|(m, a, _)| (m.as_str(), a.as_deref())).collect();
    assert_eq!(
        methods[..3],
        [("POST", Some("Bearer stale")), ("POST", Some("Bearer good")), ("GET", Some("Bearer good"))]
    );
    assert_eq!(methods.last(), Some(&("DELETE", Some("Bearer good"))));
    assert_eq!(log[0].2, log[1].2, "the same request went out again");
    let refusals = auth.refusals.lock().unwrap().clone();
    assert_eq!(refusals, [(401, Some("Bearer realm=\"t\"".into()), Some("Bearer stale".into()))]);
    let authorized = auth.authorized.lock().unwrap().clone();
    assert_eq!(authorized[..3], ["POST", "POST", "GET"]);
    assert_eq!(authorized.last().map(String::as_str), Some("DELETE"));
    // The request's clock stood still while the hook worked (its headers, the flow after the
    // refusal), and runs again.
    let (paused_now, paused) = clock.paused();
    assert!(!paused_now);
    assert!(paused > std::time::Duration::ZERO);
}

#[tokio::test]
async fn refusals_are_handed_over_at_most_three_times_per_request() {
    let (url, log) = guarded_endpoint().await;
    let auth = Switching::new(false);
    let (tx, _rx) = mcp_client::transport::inbound_channel();
    let transport = StreamableHttpTransport::new(HttpConfig::new(url).auth(auth.clone()), tx).unwrap();
    let error = transport.send(outgoing(1, "initialize", json!({}))).await.unwrap_err();
    assert!(matches!(error, TransportError::Http { status: 401, .. }), "{error:?}");
    assert_eq!(auth.refusals.lock().unwrap().len(), 3);
    assert_eq!(log.lock().unwrap().len(), 4);
}

#[tokio::test]
async fn a_403_without_an_insufficient_scope_challenge_is_not_the_hooks_business() {
    let (url, _log) = guarded_endpoint().await;
    let auth = Switching::new(true);
    *auth.token.lock().unwrap() = "good".into();
    let (tx, _rx) = mcp_client::transport::inbound_channel();
    let transport = StreamableHttpTransport::new(HttpConfig::new(url).auth(auth.clone()), tx).unwrap();
    let error = transport.send(outgoing(2, "tools/call", json!({"name": "forbidden"}))).await.unwrap_err();
    assert!(matches!(error, TransportError::Http { status: 403, .. }), "{error:?}");
    assert!(auth.refusals.lock().unwrap().is_empty());
}

/// Presents `Authorization` and an `X-Extra` of its own on the first attempt, only
/// `Authorization` on the next.
struct OverridingOnce {
    attempts: Mutex<u32>,
}

impl HttpAuth for OverridingOnce {
    fn authorize<'a>(
        &'a self,
        _method: &'a reqwest::Method,
        _url: &'a reqwest::Url,
    ) -> BoxFuture<'a, Result<HeaderMap, AuthError>> {
        let mut attempts = self.attempts.lock().unwrap();
        *attempts += 1;
        let mut headers = HeaderMap::new();
        if *attempts == 1 {
            headers.insert(AUTHORIZATION, "Bearer stale".parse().unwrap());
            headers.insert("x-extra", "from the first attempt".parse().unwrap());
        } else {
            headers.insert(AUTHORIZATION, "Bearer good".parse().unwrap());
        }
        Box::pin(async move { Ok(headers) })
    }

    fn refused<'a>(&'a self, _refusal: &'a Refusal) -> BoxFuture<'a, Result<bool, AuthError>> {
        Box::pin(async { Ok(true) })
    }
}

#[tokio::test]
async fn a_request_sent_again_carries_its_own_headers_and_only_the_new_authorization() {
    use axum::response::IntoResponse;
    type Seen = Arc<Mutex<Vec<(Option<String>, Option<String>)>>>;
    let seen = Seen::default();
    let log = seen.clone();
    let handler = move |headers: http::HeaderMap, body: axum::body::Bytes| {
        let log = log.clone();
        async move {
            let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
            log.lock().unwrap().push((get("authorization"), get("x-extra")));
            if get("authorization").as_deref() != Some("Bearer good") {
                return (http::StatusCode::UNAUTHORIZED, [("www-authenticate", "Bearer realm=\"t\"")], "")
                    .into_response();
            }
            let rpc: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let answer = json!({"jsonrpc": "2.0", "id": rpc["id"], "result": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "serverInfo": {"name": "guarded", "version": "1"}}});
            ([("content-type", "application/json")], answer.to_string()).into_response()
        }
    };
    let app = axum::Router::new().route("/mcp", axum::routing::post(handler));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });

    let auth = Arc::new(OverridingOnce { attempts: Mutex::new(0) });
    let config = HttpConfig::new(url)
        .header(http::HeaderName::from_static("x-extra"), http::HeaderValue::from_static("configured"))
        .auth(auth);
    let (tx, mut rx) = mcp_client::transport::inbound_channel();
    let transport = StreamableHttpTransport::new(config, tx).unwrap();
    transport.send(outgoing(1, "initialize", json!({}))).await.unwrap();
    assert!(matches!(rx.recv().await, Some(Inbound::Message(_))));
    transport.close().await;
    server.abort();

    let seen = seen.lock().unwrap().clone();
    assert_eq!(
        seen,
        [
            (Some("Bearer stale".into()), Some("from the first attempt".into())),
            (Some("Bearer good".into()), Some("configured".into())),
        ],
        "what the first attempt's authorization replaced is back, and its authorization gone"
    );
}
