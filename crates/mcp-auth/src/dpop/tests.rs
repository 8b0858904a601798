use std::time::{Duration, UNIX_EPOCH};

use serde_json::json;

use super::*;
use crate::jose::{Jwk, decode_unverified};

const NOW: u64 = 1_700_000_000;
const HTU: &str = "https://mcp.example.com/mcp";

fn at(secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(secs)
}

fn check<'a>() -> ProofCheck<'a> {
    ProofCheck { now: Some(at(NOW)), ..ProofCheck::new("POST", HTU) }
}

fn object(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap()
}

fn jwk_value(key: &SigningKey) -> Value {
    serde_json::to_value(key.bare_public_jwk()).unwrap()
}

fn good_claims() -> Value {
    json!({"jti": "id-1", "htm": "POST", "htu": HTU, "iat": NOW})
}

/// A proof with this header (typ and jwk unless overridden) and these claims, signed by `key`.
fn craft(key: &SigningKey, header: Value, claims: Value) -> String {
    let mut h = object(json!({"typ": "dpop+jwt", "alg": key.algorithm().as_str(), "jwk": jwk_value(key)}));
    for (k, v) in object(header) {
        if v.is_null() {
            h.remove(&k);
        } else {
            h.insert(k, v);
        }
    }
    let input = format!(
        "{}.{}",
        crate::util::b64_encode(Value::Object(h).to_string().as_bytes()),
        crate::util::b64_encode(claims.to_string().as_bytes())
    );
    let signature = key.sign_bytes(input.as_bytes()).unwrap();
    format!("{input}.{}", crate::util::b64_encode(&signature))
}

fn claims_with(changes: Value) -> Value {
    let mut c = object(good_claims());
    for (k, v) in object(changes) {
        if v.is_null() {
            c.remove(&k);
        } else {
            c.insert(k, v);
        }
    }
    Value::Object(c)
}

#[test]
fn proof_round_trip_for_each_key_type() {
    let rsa = SigningKey::from_pem(include_str!("../../tests/fixtures/rsa2048.pem"), Some(Algorithm::PS256))
        .unwrap();
    let keys = [
        SigningKey::generate_es256().unwrap().with_kid("not-in-proofs"),
        SigningKey::generate_ed25519().unwrap(),
        SigningKey::from_pem(include_str!("../../tests/fixtures/ec-p384.pem"), None).unwrap(),
        rsa,
    ];
    for key in &keys {
        let proof =
            proof_at(key, "POST", "https://MCP.example.com:443/mcp?q=1#frag", None, None, at(NOW)).unwrap();
        let (header, claims) = decode_unverified(&proof).unwrap();
        assert_eq!(header["typ"], "dpop+jwt");
        assert_eq!(header["alg"], key.algorithm().as_str());
        assert!(!header.contains_key("kid"));
        let jwk: Jwk = serde_json::from_value(header["jwk"].clone()).unwrap();
        assert!(jwk.is_public() && jwk.kid.is_none() && jwk.alg.is_none());
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], HTU);
        assert_eq!(claims["iat"], NOW);
        assert!(!claims.contains_key("nonce") && !claims.contains_key("ath"));
        let jti = claims["jti"].as_str().unwrap();
        assert!(jti.len() >= 22);

        let info = verify_proof(&proof, &check()).unwrap_or_else(|e| panic!("{}: {e}", key.algorithm()));
        assert_eq!(info.jkt, key.thumbprint());
        assert_eq!(info.jti, jti);
    }
}

#[test]
fn proof_with_nonce_token_and_binding() {
    let key = SigningKey::generate_es256().unwrap();
    let proof = proof_at(&key, "GET", HTU, Some("n-1"), Some("access-token-1"), at(NOW)).unwrap();
    let (_, claims) = decode_unverified(&proof).unwrap();
    assert_eq!(claims["nonce"], "n-1");
    assert_eq!(claims["ath"], access_token_hash("access-token-1"));
    let jkt = key.thumbprint();
    let c = ProofCheck {
        htm: "GET",
        htu: "https://mcp.example.com/mcp?session=2",
        access_token: Some("access-token-1"),
        expected_jkt: Some(&jkt),
        nonce: Some("n-1"),
        max_age: Duration::from_secs(30),
        now: Some(at(NOW + 30)),
        allowed: &[Algorithm::ES256],
    };
    assert_eq!(verify_proof(&proof, &c).unwrap().jkt, jkt);
    // Two proofs never share a jti.
    let again = proof_at(&key, "GET", HTU, Some("n-1"), Some("access-token-1"), at(NOW)).unwrap();
    assert_ne!(verify_proof(&again, &c).unwrap().jti, verify_proof(&proof, &c).unwrap().jti);
    // Current time by default.
    let fresh = super::proof(&key, "GET", HTU, None, None).unwrap();
    assert!(verify_proof(&fresh, &ProofCheck::new("GET", HTU)).is_ok());
}

#[test]
fn ath_is_the_rfc9449_hash() {
    // RFC 9449 §7.1 example: the access token and its ath.
    assert_eq!(
        access_token_hash("Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"),
        "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo"
    );
}

#[test]
fn proof_building_refuses_bad_arguments() {
    let key = SigningKey::generate_es256().unwrap();
    for (htm, htu) in
        [("", HTU), ("PO ST", HTU), ("POST", "/mcp"), ("POST", "not a url"), ("POST", "mailto:a@b")]
    {
        assert!(
            matches!(proof(&key, htm, htu, None, None), Err(JoseError::InvalidArgument(_))),
            "{htm} {htu}"
        );
    }
}

#[test]
fn rejection_table() {
    let key = SigningKey::generate_es256().unwrap();
    let other = SigningKey::generate_es256().unwrap();
    let rsa = SigningKey::from_pem(include_str!("../../tests/fixtures/rsa2048.pem"), None).unwrap();
    let mut private_jwk = object(jwk_value(&key));
    private_jwk.insert("d".into(), "AAAA".into());
    let good = craft(&key, json!({}), good_claims());
    let mut parts: Vec<String> = good.split('.').map(str::to_owned).collect();
    parts[1] = crate::util::b64_encode(
        br#"{"jti":"x","htm":"GET","htu":"https://mcp.example.com/mcp","iat":1700000000}"#,
    );
    let tampered = parts.join(".");
    let none = format!(
        "{}.{}.",
        crate::util::b64_encode(
            serde_json::to_string(&json!({"typ": "dpop+jwt", "alg": "none", "jwk": jwk_value(&key)}))
                .unwrap()
                .as_bytes()
        ),
        crate::util::b64_encode(good_claims().to_string().as_bytes())
    );

    let cases: Vec<(&str, String, DpopError)> = vec![
        ("wrong typ", craft(&key, json!({"typ": "JWT"}), good_claims()), DpopError::WrongType),
        ("at+jwt typ", craft(&key, json!({"typ": "at+jwt"}), good_claims()), DpopError::WrongType),
        ("no typ", craft(&key, json!({"typ": null}), good_claims()), DpopError::WrongType),
        ("alg none", none, DpopError::Jose(JoseError::UnsupportedAlgorithm)),
        (
            "alg HS256",
            craft(&key, json!({"alg": "HS256"}), good_claims()),
            DpopError::Jose(JoseError::UnsupportedAlgorithm),
        ),
        ("no jwk", craft(&key, json!({"jwk": null}), good_claims()), DpopError::MissingJwk),
        ("jwk a string", craft(&key, json!({"jwk": "abc"}), good_claims()), DpopError::InvalidJwk),
        ("jwk without kty", craft(&key, json!({"jwk": {"x": "a"}}), good_claims()), DpopError::InvalidJwk),
        ("private jwk", craft(&key, json!({"jwk": private_jwk}), good_claims()), DpopError::PrivateKeyInJwk),
        (
            "jwk of another key",
            craft(&key, json!({"jwk": jwk_value(&other)}), good_claims()),
            DpopError::Jose(JoseError::InvalidSignature),
        ),
        (
            "RSA jwk for an ES256 proof",
            craft(&key, json!({"jwk": jwk_value(&rsa)}), good_claims()),
            DpopError::Jose(JoseError::KeyMismatch),
        ),
        ("tampered payload", tampered, DpopError::Jose(JoseError::InvalidSignature)),
        (
            "crit",
            craft(&key, json!({"crit": ["x"]}), good_claims()),
            DpopError::Jose(JoseError::UnsupportedCritical),
        ),
        ("oversized", format!("{good}{}", "A".repeat(MAX_TOKEN)), DpopError::Jose(JoseError::TooLarge)),
        ("no jti", craft(&key, json!({}), claims_with(json!({"jti": null}))), DpopError::MissingClaim("jti")),
        (
            "empty jti",
            craft(&key, json!({}), claims_with(json!({"jti": ""}))),
            DpopError::MalformedClaim("jti"),
        ),
        (
            "jti a number",
            craft(&key, json!({}), claims_with(json!({"jti": 5}))),
            DpopError::MalformedClaim("jti"),
        ),
        ("no htm", craft(&key, json!({}), claims_with(json!({"htm": null}))), DpopError::MissingClaim("htm")),
        ("other htm", craft(&key, json!({}), claims_with(json!({"htm": "GET"}))), DpopError::MethodMismatch),
        (
            "lowercase htm",
            craft(&key, json!({}), claims_with(json!({"htm": "post"}))),
            DpopError::MethodMismatch,
        ),
        ("no htu", craft(&key, json!({}), claims_with(json!({"htu": null}))), DpopError::MissingClaim("htu")),
        (
            "relative htu",
            craft(&key, json!({}), claims_with(json!({"htu": "/mcp"}))),
            DpopError::MalformedClaim("htu"),
        ),
        (
            "other path",
            craft(&key, json!({}), claims_with(json!({"htu": "https://mcp.example.com/other"}))),
            DpopError::UrlMismatch,
        ),
        (
            "other host",
            craft(&key, json!({}), claims_with(json!({"htu": "https://evil.example.com/mcp"}))),
            DpopError::UrlMismatch,
        ),
        (
            "http instead of https",
            craft(&key, json!({}), claims_with(json!({"htu": "http://mcp.example.com/mcp"}))),
            DpopError::UrlMismatch,
        ),
        (
            "other port",
            craft(&key, json!({}), claims_with(json!({"htu": "https://mcp.example.com:8443/mcp"}))),
            DpopError::UrlMismatch,
        ),
        (
            "trailing slash",
            craft(&key, json!({}), claims_with(json!({"htu": "https://mcp.example.com/mcp/"}))),
            DpopError::UrlMismatch,
        ),
        ("no iat", craft(&key, json!({}), claims_with(json!({"iat": null}))), DpopError::MissingClaim("iat")),
        (
            "iat a string",
            craft(&key, json!({}), claims_with(json!({"iat": "now"}))),
            DpopError::MalformedClaim("iat"),
        ),
        ("stale", craft(&key, json!({}), claims_with(json!({"iat": NOW - 61}))), DpopError::Stale),
        ("future", craft(&key, json!({}), claims_with(json!({"iat": NOW + 11}))), DpopError::IssuedInFuture),
    ];
    for (name, proof, expected) in cases {
        assert_eq!(verify_proof(&proof, &check()), Err(expected), "{name}");
    }

    // Edges that pass: exactly max_age old, exactly the skew ahead, case-insensitive typ,
    // scheme/host case and default port, query and fragment ignored.
    for (name, claims, typ) in [
        ("max_age edge", claims_with(json!({"iat": NOW - 60})), "dpop+jwt"),
        ("skew edge", claims_with(json!({"iat": NOW + 10})), "dpop+jwt"),
        ("typ case", good_claims(), "DPoP+JWT"),
        ("htu normalized", claims_with(json!({"htu": "HTTPS://Mcp.Example.COM:443/mcp?x=1#y"})), "dpop+jwt"),
    ] {
        let proof = craft(&key, json!({"typ": typ}), claims);
        assert!(verify_proof(&proof, &check()).is_ok(), "{name}");
    }

    // Algorithm not allowed.
    let c = ProofCheck { allowed: &[Algorithm::RS256], ..check() };
    assert_eq!(
        verify_proof(&good, &c),
        Err(DpopError::Jose(JoseError::AlgorithmNotAllowed(Algorithm::ES256)))
    );
    // A malformed expected URL never matches.
    let c = ProofCheck { htu: "not a url", ..check() };
    assert_eq!(verify_proof(&good, &c), Err(DpopError::UrlMismatch));
}

#[test]
fn nonce_ath_and_binding_rejections() {
    let key = SigningKey::generate_es256().unwrap();
    let plain = proof_at(&key, "POST", HTU, None, None, at(NOW)).unwrap();
    let with_nonce = proof_at(&key, "POST", HTU, Some("n-1"), Some("tok"), at(NOW)).unwrap();
    let odd_nonce = craft(&key, json!({}), claims_with(json!({"nonce": 7})));

    let needs_nonce = ProofCheck { nonce: Some("n-2"), ..check() };
    assert_eq!(verify_proof(&plain, &needs_nonce), Err(DpopError::MissingNonce));
    assert_eq!(verify_proof(&with_nonce, &needs_nonce), Err(DpopError::WrongNonce));
    assert_eq!(verify_proof(&odd_nonce, &needs_nonce), Err(DpopError::WrongNonce));
    assert!(DpopError::MissingNonce.is_nonce_error() && DpopError::WrongNonce.is_nonce_error());
    assert!(!DpopError::Stale.is_nonce_error());
    // A nonce the server did not ask for is ignored.
    assert!(verify_proof(&with_nonce, &check()).is_ok());

    let needs_token = ProofCheck { access_token: Some("tok"), ..check() };
    assert_eq!(verify_proof(&plain, &needs_token), Err(DpopError::MissingClaim("ath")));
    assert!(verify_proof(&with_nonce, &needs_token).is_ok());
    let other_token = ProofCheck { access_token: Some("tok2"), ..check() };
    assert_eq!(verify_proof(&with_nonce, &other_token), Err(DpopError::AthMismatch));
    let odd_ath = craft(&key, json!({}), claims_with(json!({"ath": 1})));
    assert_eq!(verify_proof(&odd_ath, &needs_token), Err(DpopError::MalformedClaim("ath")));

    let other = SigningKey::generate_es256().unwrap().thumbprint();
    let bound_elsewhere = ProofCheck { expected_jkt: Some(&other), ..check() };
    assert_eq!(verify_proof(&plain, &bound_elsewhere), Err(DpopError::JktMismatch));
    let jkt = key.thumbprint();
    let bound_here = ProofCheck { expected_jkt: Some(&jkt), ..check() };
    assert!(verify_proof(&plain, &bound_here).is_ok());
}

#[test]
fn error_texts_hold_no_material() {
    for e in [
        DpopError::Jose(JoseError::InvalidSignature),
        DpopError::MissingClaim("ath"),
        DpopError::AthMismatch,
        DpopError::JktMismatch,
    ] {
        let text = e.to_string();
        assert!(text.starts_with("DPoP") || text.starts_with("invalid DPoP"), "{text}");
    }
}

const MAX_TOKEN: usize = crate::jose::MAX_TOKEN_LEN;
