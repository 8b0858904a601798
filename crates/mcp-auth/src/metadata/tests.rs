use super::*;

fn u(s: &str) -> Url {
    Url::parse(s).unwrap()
}

fn strings(urls: Vec<Url>) -> Vec<String> {
    urls.into_iter().map(String::from).collect()
}

#[test]
fn protected_resource_metadata_url_table() {
    let cases: &[(&str, &[&str])] = &[
        ("https://example.com", &["https://example.com/.well-known/oauth-protected-resource"]),
        ("https://example.com/", &["https://example.com/.well-known/oauth-protected-resource"]),
        (
            "https://example.com/mcp",
            &[
                "https://example.com/.well-known/oauth-protected-resource/mcp",
                "https://example.com/.well-known/oauth-protected-resource",
            ],
        ),
        (
            "https://example.com/public/mcp/",
            &[
                "https://example.com/.well-known/oauth-protected-resource/public/mcp",
                "https://example.com/.well-known/oauth-protected-resource",
            ],
        ),
        (
            "http://localhost:3000/mcp?tenant=a#frag",
            &[
                "http://localhost:3000/.well-known/oauth-protected-resource/mcp?tenant=a",
                "http://localhost:3000/.well-known/oauth-protected-resource",
            ],
        ),
        (
            "https://user:pw@EXAMPLE.com:443/mcp",
            &[
                "https://example.com/.well-known/oauth-protected-resource/mcp",
                "https://example.com/.well-known/oauth-protected-resource",
            ],
        ),
        (
            "https://example.com/?tenant=a",
            &[
                "https://example.com/.well-known/oauth-protected-resource?tenant=a",
                "https://example.com/.well-known/oauth-protected-resource",
            ],
        ),
        (
            "https://[::1]:8443/a%20b",
            &[
                "https://[::1]:8443/.well-known/oauth-protected-resource/a%20b",
                "https://[::1]:8443/.well-known/oauth-protected-resource",
            ],
        ),
    ];
    for (resource, expected) in cases {
        let expected: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
        assert_eq!(strings(protected_resource_metadata_urls(&u(resource))), expected, "{resource}");
    }
}

#[test]
fn authorization_server_metadata_url_table() {
    let cases: &[(&str, &[&str])] = &[
        (
            "https://auth.example.com",
            &[
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration",
            ],
        ),
        (
            "https://auth.example.com/",
            &[
                "https://auth.example.com/.well-known/oauth-authorization-server",
                "https://auth.example.com/.well-known/openid-configuration",
            ],
        ),
        (
            "https://auth.example.com/tenant1",
            &[
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ],
        ),
        (
            "https://auth.example.com/tenant1/",
            &[
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ],
        ),
        (
            "http://localhost:9000/realms/a/b",
            &[
                "http://localhost:9000/.well-known/oauth-authorization-server/realms/a/b",
                "http://localhost:9000/.well-known/openid-configuration/realms/a/b",
                "http://localhost:9000/realms/a/b/.well-known/openid-configuration",
            ],
        ),
    ];
    for (issuer, expected) in cases {
        let expected: Vec<String> = expected.iter().map(|s| s.to_string()).collect();
        assert_eq!(strings(authorization_server_metadata_urls(&u(issuer))), expected, "{issuer}");
    }
}

#[test]
fn path_issuers_never_probe_the_bare_root() {
    for issuer in ["https://as.example/tenant1", "https://as.example/a/b/", "http://127.0.0.1:1234/x"] {
        for url in authorization_server_metadata_urls(&u(issuer)) {
            assert_ne!(url.path(), AUTHORIZATION_SERVER_WELL_KNOWN, "{issuer} -> {url}");
            assert_ne!(url.path(), OPENID_CONFIGURATION_WELL_KNOWN, "{issuer} -> {url}");
        }
    }
}

#[test]
fn resource_matching_table() {
    let cases: &[(&str, &str, bool)] = &[
        // Exact.
        ("https://mcp.example.com/mcp", "https://mcp.example.com/mcp", true),
        ("http://localhost:3000/mcp", "http://localhost:3000/mcp", true),
        // Base URL without /mcp (conformance metadata-default var2).
        ("http://localhost:3000", "http://localhost:3000/mcp", true),
        ("http://localhost:3000/", "http://localhost:3000/mcp", true),
        ("https://example.com/api", "https://example.com/api/mcp", true),
        ("https://example.com/api/", "https://example.com/api/mcp", true),
        ("https://example.com/mcp/", "https://example.com/mcp", true),
        ("https://example.com/mcp", "https://example.com/mcp/", true),
        // Case-insensitive scheme and host, default ports.
        ("HTTPS://MCP.Example.COM/mcp", "https://mcp.example.com/mcp", true),
        ("https://mcp.example.com:443/mcp", "https://mcp.example.com/mcp", true),
        // Another origin (conformance auth/resource-mismatch).
        ("https://evil.example.com/mcp", "http://localhost:3000/mcp", false),
        ("https://evil.example.com/mcp", "https://mcp.example.com/mcp", false),
        ("http://mcp.example.com/mcp", "https://mcp.example.com/mcp", false),
        ("https://mcp.example.com:8443/mcp", "https://mcp.example.com/mcp", false),
        ("http://localhost:3001/mcp", "http://localhost:3000/mcp", false),
        ("https://sub.mcp.example.com/mcp", "https://mcp.example.com/mcp", false),
        // Path not a prefix, or a prefix not on a segment boundary, or case differs.
        ("https://example.com/other", "https://example.com/mcp", false),
        ("https://example.com/mc", "https://example.com/mcp", false),
        ("https://example.com/mcp/v2", "https://example.com/mcp", false),
        ("https://example.com/MCP", "https://example.com/mcp", false),
        // Unusable resource values.
        ("", "https://example.com/mcp", false),
        ("example.com/mcp", "https://example.com/mcp", false),
        ("/mcp", "https://example.com/mcp", false),
        ("https://example.com/mcp#x", "https://example.com/mcp", false),
        ("https://u:p@example.com/mcp", "https://example.com/mcp", false),
        // Queries.
        ("https://example.com/mcp?t=1", "https://example.com/mcp?t=1", true),
        ("https://example.com/mcp?t=1", "https://example.com/mcp?t=2", false),
        ("https://example.com/mcp?t=1", "https://example.com/mcp", false),
        ("https://example.com/mcp", "https://example.com/mcp?t=1", true),
    ];
    for (prm, server, expected) in cases {
        assert_eq!(resource_matches(prm, &u(server)), *expected, "{prm} vs {server}");
    }
}

#[test]
fn canonical_resource_table() {
    let cases = [
        ("https://mcp.example.com", "https://mcp.example.com"),
        ("https://mcp.example.com/", "https://mcp.example.com"),
        ("HTTPS://MCP.EXAMPLE.COM/mcp", "https://mcp.example.com/mcp"),
        ("https://mcp.example.com:8443", "https://mcp.example.com:8443"),
        ("https://mcp.example.com:443/mcp", "https://mcp.example.com/mcp"),
        ("https://mcp.example.com/server/mcp", "https://mcp.example.com/server/mcp"),
        ("https://mcp.example.com/mcp/", "https://mcp.example.com/mcp/"),
        ("https://mcp.example.com/MCP#fragment", "https://mcp.example.com/MCP"),
        ("https://u:p@mcp.example.com/mcp", "https://mcp.example.com/mcp"),
        ("http://localhost:3000/mcp?x=1", "http://localhost:3000/mcp?x=1"),
        ("https://mcp.example.com/?x=1", "https://mcp.example.com/?x=1"),
        ("https://[::1]:8080/mcp", "https://[::1]:8080/mcp"),
        ("https://mcp.example.com/a%2Fb", "https://mcp.example.com/a%2Fb"),
    ];
    for (input, expected) in cases {
        assert_eq!(canonical_resource(&u(input)), expected, "{input}");
    }
}

#[test]
fn protected_resource_metadata_round_trips_with_unknown_members() {
    let json = r#"{
        "resource": "http://localhost:3000",
        "authorization_servers": ["http://localhost:9000/tenant1"],
        "scopes_supported": ["mcp:basic"],
        "bearer_methods_supported": ["header"],
        "resource_name": "Test",
        "dpop_signing_alg_values_supported": ["ES256"],
        "dpop_bound_access_tokens_required": false,
        "x_custom": {"a": 1}
    }"#;
    let prm: ProtectedResourceMetadata = serde_json::from_str(json).unwrap();
    assert_eq!(prm.resource, "http://localhost:3000");
    assert_eq!(
        prm.authorization_servers.as_deref(),
        Some(&["http://localhost:9000/tenant1".to_string()][..])
    );
    assert_eq!(prm.dpop_bound_access_tokens_required, Some(false));
    assert_eq!(prm.extra["x_custom"]["a"], 1);
    assert!(prm.jwks_uri.is_none());
    let back: Value = serde_json::to_value(&prm).unwrap();
    let original: Value = serde_json::from_str(json).unwrap();
    assert_eq!(back, original);
    // Only `resource` is required.
    assert!(serde_json::from_str::<ProtectedResourceMetadata>("{}").is_err());
    let minimal: ProtectedResourceMetadata = serde_json::from_str(r#"{"resource":"https://r"}"#).unwrap();
    assert_eq!(serde_json::to_string(&minimal).unwrap(), r#"{"resource":"https://r"}"#);
}

#[test]
fn authorization_server_metadata_reads_and_answers() {
    let json = r#"{
        "issuer": "https://as.example/tenant1",
        "authorization_endpoint": "https://as.example/tenant1/authorize",
        "token_endpoint": "https://as.example/tenant1/token",
        "registration_endpoint": "https://as.example/tenant1/register",
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["client_secret_post", "none"],
        "scopes_supported": ["mcp:basic", "offline_access"],
        "client_id_metadata_document_supported": true,
        "authorization_response_iss_parameter_supported": true,
        "userinfo_endpoint": "https://as.example/userinfo",
        "claims_supported": ["sub"]
    }"#;
    let m: AuthorizationServerMetadata = serde_json::from_str(json).unwrap();
    assert!(m.issuer_matches("https://as.example/tenant1"));
    assert!(!m.issuer_matches("https://as.example/tenant1/"));
    assert!(!m.issuer_matches("https://AS.example/tenant1"));
    assert!(m.supports_pkce_s256());
    assert!(m.supports_scope("offline_access"));
    assert!(!m.supports_scope("mcp:write"));
    assert!(m.supports_token_auth_method("none"));
    assert!(!m.supports_token_auth_method("client_secret_basic"));
    assert_eq!(m.client_id_metadata_document_supported, Some(true));
    assert_eq!(m.authorization_response_iss_parameter_supported, Some(true));
    assert_eq!(m.extra["claims_supported"][0], "sub");
    let back: Value = serde_json::to_value(&m).unwrap();
    assert_eq!(back, serde_json::from_str::<Value>(json).unwrap());

    let bare: AuthorizationServerMetadata = serde_json::from_str(r#"{"issuer":"https://as"}"#).unwrap();
    assert!(!bare.supports_pkce_s256());
    assert!(!bare.supports_scope("offline_access"));
    assert!(bare.supports_token_auth_method("client_secret_basic"));
    assert!(!bare.supports_token_auth_method("none"));
    let plain: AuthorizationServerMetadata =
        serde_json::from_str(r#"{"issuer":"https://as","code_challenge_methods_supported":["plain"]}"#)
            .unwrap();
    assert!(!plain.supports_pkce_s256());
}
