//! Claims validation.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use super::tests::obj;
use super::*;

const NOW: u64 = 1_700_000_000;

fn validation() -> Validation {
    Validation {
        now: Some(UNIX_EPOCH + Duration::from_secs(NOW)),
        ..Validation::new("https://as.example", "https://mcp.example/mcp")
    }
}

fn base() -> serde_json::Map<String, Value> {
    obj(json!({
        "iss": "https://as.example",
        "aud": "https://mcp.example/mcp",
        "exp": NOW + 600,
        "iat": NOW - 10,
        "nbf": NOW - 10,
    }))
}

fn with(changes: Value) -> serde_json::Map<String, Value> {
    let mut c = base();
    for (k, v) in obj(changes) {
        if v.is_null() {
            c.remove(&k);
        } else {
            c.insert(k, v);
        }
    }
    c
}

#[test]
fn claims_table() {
    let n = NOW as f64;
    let cases: Vec<(&str, JsonObject, Result<(), ClaimsError>)> = vec![
        ("valid", base(), Ok(())),
        // Issuer: exact string.
        ("wrong iss", with(json!({"iss": "https://evil.example"})), Err(ClaimsError::WrongIssuer)),
        ("iss trailing slash", with(json!({"iss": "https://as.example/"})), Err(ClaimsError::WrongIssuer)),
        ("iss case", with(json!({"iss": "https://AS.example"})), Err(ClaimsError::WrongIssuer)),
        ("no iss", with(json!({"iss": null})), Err(ClaimsError::Missing("iss"))),
        ("iss not a string", with(json!({"iss": 1})), Err(ClaimsError::Malformed)),
        // Audience: string or array.
        ("wrong aud", with(json!({"aud": "https://other.example/mcp"})), Err(ClaimsError::WrongAudience)),
        ("aud array with ours", with(json!({"aud": ["https://x", "https://mcp.example/mcp"]})), Ok(())),
        (
            "aud array without ours",
            with(json!({"aud": ["https://x", "https://y"]})),
            Err(ClaimsError::WrongAudience),
        ),
        ("aud empty array", with(json!({"aud": []})), Err(ClaimsError::WrongAudience)),
        (
            "aud array with a number",
            with(json!({"aud": ["https://mcp.example/mcp", 1]})),
            Err(ClaimsError::Malformed),
        ),
        ("aud object", with(json!({"aud": {"a": 1}})), Err(ClaimsError::Malformed)),
        ("aud prefix only", with(json!({"aud": "https://mcp.example"})), Err(ClaimsError::WrongAudience)),
        ("no aud", with(json!({"aud": null})), Err(ClaimsError::Missing("aud"))),
        // exp with leeway 60: expired once now >= exp + 60.
        ("expired long ago", with(json!({"exp": NOW - 3600})), Err(ClaimsError::Expired)),
        ("exp exactly at the leeway edge", with(json!({"exp": NOW - 60})), Err(ClaimsError::Expired)),
        ("exp just inside the leeway", with(json!({"exp": NOW - 59})), Ok(())),
        ("exp fractional inside", with(json!({"exp": n - 59.5})), Ok(())),
        ("exp fractional outside", with(json!({"exp": n - 60.5})), Err(ClaimsError::Expired)),
        ("no exp", with(json!({"exp": null})), Err(ClaimsError::Missing("exp"))),
        ("exp a string", with(json!({"exp": "1700000600"})), Err(ClaimsError::Malformed)),
        // nbf: not yet valid while now + 60 < nbf.
        ("nbf far future", with(json!({"nbf": NOW + 3600})), Err(ClaimsError::NotYetValid)),
        ("nbf at the leeway edge", with(json!({"nbf": NOW + 60})), Ok(())),
        ("nbf just beyond the leeway", with(json!({"nbf": NOW + 61})), Err(ClaimsError::NotYetValid)),
        ("nbf a bool", with(json!({"nbf": true})), Err(ClaimsError::Malformed)),
        ("no nbf", with(json!({"nbf": null})), Ok(())),
        // iat: refused beyond now + 60.
        ("iat in the future beyond leeway", with(json!({"iat": NOW + 61})), Err(ClaimsError::IssuedInFuture)),
        ("iat at the leeway edge", with(json!({"iat": NOW + 60})), Ok(())),
        ("iat long ago", with(json!({"iat": 0})), Ok(())),
        ("no iat", with(json!({"iat": null})), Ok(())),
    ];
    for (name, claims, expected) in cases {
        assert_eq!(validate_claims(&claims, &validation()), expected, "{name}");
    }
}

#[test]
fn explicit_nulls_are_malformed() {
    let mut c = base();
    c.insert("exp".into(), Value::Null);
    assert_eq!(validate_claims(&c, &validation()), Err(ClaimsError::Malformed));
}

#[test]
fn options() {
    // Empty issuer and audience lists check neither.
    let open = Validation { issuers: vec![], audiences: vec![], ..validation() };
    assert_eq!(validate_claims(&with(json!({"iss": null, "aud": null})), &open), Ok(()));
    assert_eq!(validate_claims(&with(json!({"iss": 5, "aud": 5})), &open), Ok(()));
    // Several accepted issuers and audiences.
    let many = Validation {
        issuers: vec!["https://a".into(), "https://as.example".into()],
        audiences: vec!["https://x".into(), "https://mcp.example/mcp".into()],
        ..validation()
    };
    assert_eq!(validate_claims(&base(), &many), Ok(()));
    // exp optional.
    let lax = Validation { require_exp: false, ..validation() };
    assert_eq!(validate_claims(&with(json!({"exp": null})), &lax), Ok(()));
    assert_eq!(validate_claims(&with(json!({"exp": NOW - 3600})), &lax), Err(ClaimsError::Expired));
    // Zero leeway.
    let strict = Validation { leeway: Duration::ZERO, ..validation() };
    assert_eq!(validate_claims(&with(json!({"exp": NOW})), &strict), Err(ClaimsError::Expired));
    assert_eq!(validate_claims(&with(json!({"exp": NOW + 1})), &strict), Ok(()));
    assert_eq!(validate_claims(&with(json!({"nbf": NOW + 1})), &strict), Err(ClaimsError::NotYetValid));
    assert_eq!(validate_claims(&with(json!({"nbf": NOW})), &strict), Ok(()));
    // Leeway is capped at five minutes.
    let huge = Validation { leeway: Duration::from_secs(86_400), ..validation() };
    assert_eq!(validate_claims(&with(json!({"exp": NOW - 299})), &huge), Ok(()));
    assert_eq!(validate_claims(&with(json!({"exp": NOW - 300})), &huge), Err(ClaimsError::Expired));
    assert_eq!(validate_claims(&with(json!({"exp": NOW - 3600})), &huge), Err(ClaimsError::Expired));
    assert_eq!(validate_claims(&with(json!({"iat": NOW + 301})), &huge), Err(ClaimsError::IssuedInFuture));
    // Defaults.
    let d = Validation::default();
    assert_eq!((d.leeway, d.require_exp, d.now), (Duration::from_secs(60), true, None));
    assert!(d.issuers.is_empty() && d.audiences.is_empty());
}

#[test]
fn current_time_is_used_by_default() {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
    let v = Validation { now: None, ..validation() };
    assert_eq!(validate_claims(&with(json!({"exp": now + 600, "iat": now, "nbf": now})), &v), Ok(()));
    assert_eq!(validate_claims(&with(json!({"exp": now - 600})), &v), Err(ClaimsError::Expired));
}

#[test]
fn verified_then_validated() {
    let key =
        SigningKey::from_pem(include_str!("../../tests/fixtures/ec-p256.pem"), None).unwrap().with_kid("k");
    let token = key.sign_jwt(&serde_json::Map::new(), &base()).unwrap();
    let verified = verify(&token, &JwkSet::new(vec![key.public_jwk()]), &[Algorithm::ES256]).unwrap();
    assert_eq!(validate_claims(&verified.claims, &validation()), Ok(()));
    let other_audience = Validation { audiences: vec!["https://other".into()], ..validation() };
    assert_eq!(validate_claims(&verified.claims, &other_audience), Err(ClaimsError::WrongAudience));
}
