use super::*;

fn c(scheme: &str, params: &[(&str, &str)]) -> Challenge {
    Challenge {
        scheme: scheme.into(),
        params: params.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect(),
    }
}

#[test]
fn parse_table() {
    let cases: Vec<(&str, Vec<Challenge>)> = vec![
        ("", vec![]),
        ("   ,  , ", vec![]),
        ("Bearer", vec![c("Bearer", &[])]),
        ("Bearer   ", vec![c("Bearer", &[])]),
        (r#"Bearer realm="example""#, vec![c("Bearer", &[("realm", "example")])]),
        (
            r#"Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read""#,
            vec![c(
                "Bearer",
                &[
                    ("resource_metadata", "https://mcp.example.com/.well-known/oauth-protected-resource"),
                    ("scope", "files:read"),
                ],
            )],
        ),
        // Quoted commas and spaces stay inside the value.
        (
            r#"Bearer error="invalid_token", error_description="expired, renew it", scope="a b""#,
            vec![c(
                "Bearer",
                &[("error", "invalid_token"), ("error_description", "expired, renew it"), ("scope", "a b")],
            )],
        ),
        // Escapes.
        (
            r#"Bearer realm="say \"hi\" \\ bye", x="\a""#,
            vec![c("Bearer", &[("realm", r#"say "hi" \ bye"#), ("x", "a")])],
        ),
        // Bare token values, whitespace around '=', tabs, empty list elements.
        (
            "Bearer realm = example ,\t, error=invalid_token",
            vec![c("Bearer", &[("realm", "example"), ("error", "invalid_token")])],
        ),
        // Multiple challenges.
        (
            r#"Basic realm="simple", Bearer realm="x", scope="a", DPoP algs="ES256 PS256""#,
            vec![
                c("Basic", &[("realm", "simple")]),
                c("Bearer", &[("realm", "x"), ("scope", "a")]),
                c("DPoP", &[("algs", "ES256 PS256")]),
            ],
        ),
        ("Bearer, DPoP", vec![c("Bearer", &[]), c("DPoP", &[])]),
        (r#"Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple""#, {
            vec![
                c("Newauth", &[("realm", "apps"), ("type", "1"), ("title", r#"Login to "apps""#)]),
                c("Basic", &[("realm", "simple")]),
            ]
        }),
        // token68.
        ("Negotiate abc+/def==", vec![c("Negotiate", &[("", "abc+/def==")])]),
        ("Negotiate abc=, Bearer", vec![c("Negotiate", &[("", "abc=")]), c("Bearer", &[])]),
        ("Basic dXNlcjpwYXNz", vec![c("Basic", &[("", "dXNlcjpwYXNz")])]),
        // Empty quoted value; UTF-8 inside quotes.
        (r#"Bearer realm="", x="é""#, vec![c("Bearer", &[("realm", ""), ("x", "é")])]),
        // Syntax errors stop parsing, keeping what came before.
        (r#"Bearer realm="unterminated"#, vec![c("Bearer", &[])]),
        (
            r#"Bearer a="1", Basic realm="x" junk"#,
            vec![c("Bearer", &[("a", "1")]), c("Basic", &[("realm", "x")])],
        ),
        ("Bearer=", vec![]),
        ("=Bearer", vec![]),
    ];
    for (input, expected) in cases {
        assert_eq!(parse_www_authenticate(input), expected, "{input:?}");
    }
}

#[test]
fn param_lookup_is_case_insensitive() {
    let parsed = parse_www_authenticate(r#"bearer Resource_Metadata="u", SCOPE="s""#);
    assert_eq!(parsed.len(), 1);
    assert!(parsed[0].is("Bearer"));
    assert!(!parsed[0].is("DPoP"));
    assert_eq!(parsed[0].param("resource_metadata"), Some("u"));
    assert_eq!(parsed[0].param("scope"), Some("s"));
    assert_eq!(parsed[0].param("error"), None);
    assert_eq!(parsed[0].param(""), None);
    assert_eq!(parsed[0].token68(), None);
    let t = parse_www_authenticate("Negotiate a==");
    assert_eq!(t[0].token68(), Some("a=="));
    assert_eq!(t[0].param(""), None);
}

#[test]
fn bearer_challenge_builds_and_round_trips() {
    assert_eq!(bearer_challenge(None, None, None, None), "Bearer");
    let v = bearer_challenge(
        Some("https://mcp.example.com/.well-known/oauth-protected-resource"),
        Some("files:write"),
        Some("insufficient_scope"),
        Some(r#"needs "files:write" \ now"#),
    );
    assert_eq!(
        v,
        r#"Bearer error="insufficient_scope", error_description="needs \"files:write\" \\ now", scope="files:write", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource""#
    );
    let parsed = parse_www_authenticate(&v);
    assert_eq!(parsed.len(), 1);
    assert_eq!(parsed[0].param("error_description"), Some(r#"needs "files:write" \ now"#));
    assert_eq!(parsed[0].param("scope"), Some("files:write"));
}

#[test]
fn built_challenges_never_carry_line_breaks() {
    let v = bearer_challenge(None, None, Some("invalid_token"), Some("a\r\nSet-Cookie: x=1"));
    assert!(!v.contains('\r') && !v.contains('\n'));
    assert_eq!(v, r#"Bearer error="invalid_token", error_description="a  Set-Cookie: x=1""#);
}

#[test]
fn dpop_challenge_lists_algorithms() {
    let v =
        dpop_challenge(&[Algorithm::ES256, Algorithm::PS256], None, None, Some("invalid_dpop_proof"), None);
    assert_eq!(v, r#"DPoP algs="ES256 PS256", error="invalid_dpop_proof""#);
    assert_eq!(dpop_challenge(&[], None, None, None, None), "DPoP");
    let parsed = parse_www_authenticate(&format!("{}, {}", v, bearer_challenge(None, Some("a"), None, None)));
    assert_eq!(parsed.len(), 2);
    assert_eq!(parsed[0].param("algs"), Some("ES256 PS256"));
    assert_eq!(parsed[1].param("scope"), Some("a"));
}
