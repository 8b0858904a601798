//! Signing, verification, keys and thumbprints.

use ring::hmac;
use serde_json::{Map, Value, json};

use super::*;
use crate::util::b64_encode;

const RSA: &str = include_str!("../../tests/fixtures/rsa2048.pem");
const RSA_PKCS1: &str = include_str!("../../tests/fixtures/rsa2048-pkcs1.pem");
const P256: &str = include_str!("../../tests/fixtures/ec-p256.pem");
const P256_SEC1: &str = include_str!("../../tests/fixtures/ec-p256-sec1.pem");
const P384: &str = include_str!("../../tests/fixtures/ec-p384.pem");
const P384_SEC1: &str = include_str!("../../tests/fixtures/ec-p384-sec1.pem");
const ED25519: &str = include_str!("../../tests/fixtures/ed25519.pem");
const OPENSSL_TOKENS: &str = include_str!("../../tests/fixtures/openssl-tokens.json");

pub(crate) fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => panic!("not an object"),
    }
}

fn key(pem: &str, alg: Option<Algorithm>, kid: &str) -> SigningKey {
    SigningKey::from_pem(pem, alg).unwrap().with_kid(kid)
}

fn set(keys: &[&SigningKey]) -> JwkSet {
    JwkSet::new(keys.iter().map(|k| k.public_jwk()).collect())
}

fn claims() -> Map<String, Value> {
    obj(
        json!({"iss": "https://as.example", "sub": "u1", "aud": "https://mcp.example/mcp", "exp": 4102444800u64}),
    )
}

/// A compact JWS with an arbitrary header and payload, validly signed by `key`.
fn raw_token(key: &SigningKey, header: &str, payload: &str) -> String {
    let input = format!("{}.{}", b64_encode(header.as_bytes()), b64_encode(payload.as_bytes()));
    let sig = key.sign_bytes(input.as_bytes()).unwrap();
    format!("{input}.{}", b64_encode(&sig))
}

#[test]
fn sign_verify_round_trips_for_every_key_and_algorithm() {
    let cases: Vec<(&str, SigningKey, Algorithm)> = vec![
        ("ES256 pkcs8", key(P256, None, "k"), Algorithm::ES256),
        ("ES256 sec1", key(P256_SEC1, None, "k"), Algorithm::ES256),
        ("ES384 pkcs8", key(P384, None, "k"), Algorithm::ES384),
        ("ES384 sec1", key(P384_SEC1, Some(Algorithm::ES384), "k"), Algorithm::ES384),
        ("RS256 pkcs8", key(RSA, None, "k"), Algorithm::RS256),
        ("RS256 pkcs1", key(RSA_PKCS1, None, "k"), Algorithm::RS256),
        ("RS384", key(RSA, Some(Algorithm::RS384), "k"), Algorithm::RS384),
        ("RS512", key(RSA, Some(Algorithm::RS512), "k"), Algorithm::RS512),
        ("PS256", key(RSA, Some(Algorithm::PS256), "k"), Algorithm::PS256),
        ("PS384", key(RSA_PKCS1, Some(Algorithm::PS384), "k"), Algorithm::PS384),
        ("PS512", key(RSA, Some(Algorithm::PS512), "k"), Algorithm::PS512),
        ("EdDSA", key(ED25519, None, "k"), Algorithm::EdDSA),
        ("generated ES256", SigningKey::generate_es256().unwrap().with_kid("k"), Algorithm::ES256),
        ("generated EdDSA", SigningKey::generate_ed25519().unwrap().with_kid("k"), Algorithm::EdDSA),
    ];
    for (name, key, alg) in cases {
        assert_eq!(key.algorithm(), alg, "{name}");
        let header = obj(json!({"typ": "at+jwt", "alg": "none", "kid": "ignored"}));
        let token = key.sign_jwt(&header, &claims()).unwrap();
        let verified =
            verify(&token, &set(&[&key]), &Algorithm::ALL).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(verified.claims, claims(), "{name}");
        assert_eq!(verified.header["alg"], alg.as_str(), "{name}");
        assert_eq!(verified.header["typ"], "at+jwt", "{name}");
        assert_eq!(verified.header["kid"], "k", "{name}");
        assert_eq!(verified.kid.as_deref(), Some("k"), "{name}");
        // Only this algorithm allowed: still fine. Another one only: refused.
        assert!(verify(&token, &set(&[&key]), &[alg]).is_ok(), "{name}");
        let other = if alg == Algorithm::ES256 { Algorithm::ES384 } else { Algorithm::ES256 };
        assert_eq!(
            verify(&token, &set(&[&key]), &[other]),
            Err(JoseError::AlgorithmNotAllowed(alg)),
            "{name}"
        );
        let (h, c) = decode_unverified(&token).unwrap();
        assert_eq!((h, c), (verified.header, verified.claims), "{name}");
    }
}

#[test]
fn pkcs8_and_legacy_pem_forms_are_the_same_keys() {
    for (a, b) in [(P256, P256_SEC1), (P384, P384_SEC1), (RSA, RSA_PKCS1)] {
        let a = SigningKey::from_pem(a, None).unwrap();
        let b = SigningKey::from_pem(b, None).unwrap();
        assert_eq!(a.public_jwk(), b.public_jwk());
        assert_eq!(a.thumbprint(), b.thumbprint());
    }
    // Sections that are not private keys (as `openssl ecparam -genkey` writes) are skipped.
    let with_params =
        format!("-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n{P256_SEC1}");
    let k = SigningKey::from_pem(&with_params, None).unwrap();
    assert_eq!(k.public_jwk(), SigningKey::from_pem(P256, None).unwrap().public_jwk());
}

#[test]
fn tokens_signed_by_openssl_verify() {
    let tokens: Value = serde_json::from_str(OPENSSL_TOKENS).unwrap();
    let pems = [("rsa2048.pem", RSA), ("ec-p256.pem", P256), ("ec-p384.pem", P384), ("ed25519.pem", ED25519)];
    for (alg, entry) in tokens.as_object().unwrap() {
        let alg: Algorithm = alg.parse().unwrap();
        let pem = pems.iter().find(|(n, _)| *n == entry["key"]).unwrap().1;
        let token = entry["token"].as_str().unwrap();
        let kid = format!("openssl-{}", alg.as_str().to_ascii_lowercase());
        let signer = SigningKey::from_pem(pem, Some(alg)).unwrap().with_kid(kid.clone());
        let verified = verify(token, &set(&[&signer]), &[alg]).unwrap_or_else(|e| panic!("{alg}: {e}"));
        assert_eq!(verified.claims["sub"], "user-1");
        assert_eq!(verified.kid.as_deref(), Some(kid.as_str()));
    }
}

#[test]
fn public_jwk_has_alg_kid_and_only_public_members() {
    let k = key(P256, None, "key-1");
    let jwk = k.public_jwk();
    assert_eq!(jwk.kty, "EC");
    assert_eq!(jwk.crv.as_deref(), Some("P-256"));
    assert_eq!(jwk.alg.as_deref(), Some("ES256"));
    assert_eq!(jwk.kid.as_deref(), Some("key-1"));
    assert_eq!(jwk.x.as_ref().map(String::len), Some(43));
    assert_eq!(jwk.y.as_ref().map(String::len), Some(43));
    assert!(jwk.is_public() && jwk.extra.is_empty());
    let rsa = SigningKey::from_pem(RSA, None).unwrap().public_jwk();
    assert_eq!((rsa.kty.as_str(), rsa.e.as_deref(), rsa.kid.as_deref()), ("RSA", Some("AQAB"), None));
    assert_eq!(rsa.n.as_ref().map(String::len), Some(342));
    let ed = SigningKey::from_pem(ED25519, None).unwrap().public_jwk();
    assert_eq!(
        (ed.kty.as_str(), ed.crv.as_deref(), ed.alg.as_deref()),
        ("OKP", Some("Ed25519"), Some("EdDSA"))
    );
    let p384 = SigningKey::from_pem(P384, None).unwrap().public_jwk();
    assert_eq!(p384.x.as_ref().map(String::len), Some(64));
    // Debug shows no key material.
    let debug = format!("{k:?}");
    assert!(debug.contains("ES256") && debug.contains("key-1") && !debug.contains(jwk.x.as_deref().unwrap()));
}

#[test]
fn from_pem_refuses_bad_input_and_unfit_algorithms() {
    let cases: Vec<(&str, &str, Option<Algorithm>)> = vec![
        ("empty", "", None),
        ("garbage", "not a key", None),
        (
            "public key",
            "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n-----END PUBLIC KEY-----\n",
            None,
        ),
        ("truncated", &P256[..P256.len() / 2], None),
        ("P-256 as RS256", P256, Some(Algorithm::RS256)),
        ("P-256 as ES384", P256, Some(Algorithm::ES384)),
        ("P-384 as ES256", P384, Some(Algorithm::ES256)),
        ("sec1 P-256 as ES384", P256_SEC1, Some(Algorithm::ES384)),
        ("RSA as ES256", RSA, Some(Algorithm::ES256)),
        ("PKCS#1 RSA as EdDSA", RSA_PKCS1, Some(Algorithm::EdDSA)),
        ("Ed25519 as ES256", ED25519, Some(Algorithm::ES256)),
    ];
    for (name, pem, alg) in cases {
        match SigningKey::from_pem(pem, alg) {
            Err(JoseError::InvalidKey(_)) => {}
            other => panic!("{name}: {other:?}"),
        }
    }
}

#[test]
fn rfc7638_thumbprint_vectors() {
    // RFC 7638 §3.1.
    let rsa: Jwk = serde_json::from_value(json!({
        "kty": "RSA",
        "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
        "e": "AQAB",
        "alg": "RS256",
        "kid": "2011-04-29"
    }))
    .unwrap();
    assert_eq!(rsa.thumbprint().unwrap(), "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs");
    // RFC 8037 Appendix A.3.
    let okp: Jwk = serde_json::from_value(json!({
        "kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"
    }))
    .unwrap();
    assert_eq!(okp.thumbprint().unwrap(), "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k");
    // Optional members never change the thumbprint; missing required ones are an error.
    let k = key(P256, None, "a");
    assert_eq!(k.public_jwk().thumbprint().unwrap(), k.thumbprint());
    let mut partial = k.public_jwk();
    partial.y = None;
    assert!(matches!(partial.thumbprint(), Err(JoseError::InvalidKey(_))));
    assert!(matches!(
        Jwk { kty: "XYZ".into(), ..Jwk::default() }.thumbprint(),
        Err(JoseError::InvalidKey(_))
    ));
}

#[test]
fn bad_token_table() {
    let ec = key(P256, None, "ec");
    let rsa = key(RSA, None, "rsa");
    let keys = set(&[&ec, &rsa]);
    let good = ec.sign_jwt(&Map::new(), &claims()).unwrap();
    let good_rsa = rsa.sign_jwt(&Map::new(), &claims()).unwrap();
    let (gh, gp, gs) = {
        let mut it = good.split('.');
        (it.next().unwrap().to_owned(), it.next().unwrap().to_owned(), it.next().unwrap().to_owned())
    };
    let payload = r#"{"sub":"u1"}"#;
    let b64 = |s: &str| b64_encode(s.as_bytes());

    // HS256 "signed" with the public key as the HMAC secret (the classic confusion attack).
    let hs_header = b64(r#"{"alg":"HS256","kid":"rsa"}"#);
    let hs_input = format!("{hs_header}.{}", b64(payload));
    let public_json = serde_json::to_vec(&rsa.public_jwk()).unwrap();
    let hs_sig = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, &public_json), hs_input.as_bytes());
    let hs_token = format!("{hs_input}.{}", b64_encode(hs_sig.as_ref()));
    let n_bytes = crate::util::b64_decode(rsa.public_jwk().n.as_deref().unwrap()).unwrap();
    let hs_sig2 = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, &n_bytes), hs_input.as_bytes());
    let hs_token2 = format!("{hs_input}.{}", b64_encode(hs_sig2.as_ref()));

    // An RSA signature presented as ES256 with the RSA key's kid, and vice versa.
    let es_with_rsa_kid = raw_token(&rsa, r#"{"alg":"ES256","kid":"rsa"}"#, payload);
    let rs_with_ec_kid = raw_token(&ec, r#"{"alg":"RS256","kid":"ec"}"#, payload);
    let es_no_kid_rsa_only = raw_token(&rsa, r#"{"alg":"ES256"}"#, payload);
    let es384_with_p256 = raw_token(&ec, r#"{"alg":"ES384","kid":"ec"}"#, payload);

    let tampered_payload = format!("{gh}.{}.{gs}", b64(r#"{"sub":"admin"}"#));
    let mut sig_bytes = crate::util::b64_decode(&gs).unwrap();
    sig_bytes[10] ^= 1;
    let tampered_sig = format!("{gh}.{gp}.{}", b64_encode(&sig_bytes));
    let rsa_sig = good_rsa.rsplit('.').next().unwrap();
    let foreign_sig = format!("{gh}.{gp}.{rsa_sig}");
    let oversized = format!("{gh}.{}.{gs}", "A".repeat(MAX_TOKEN_LEN));

    let cases: Vec<(&str, String, JoseError)> = vec![
        (
            "alg none",
            format!("{}.{}.", b64(r#"{"alg":"none"}"#), b64(payload)),
            JoseError::UnsupportedAlgorithm,
        ),
        (
            "alg None",
            format!("{}.{}.", b64(r#"{"alg":"None"}"#), b64(payload)),
            JoseError::UnsupportedAlgorithm,
        ),
        (
            "alg none with a signature",
            raw_token(&ec, r#"{"alg":"none","kid":"ec"}"#, payload),
            JoseError::UnsupportedAlgorithm,
        ),
        ("HS256 with the public JWK as secret", hs_token, JoseError::UnsupportedAlgorithm),
        ("HS256 with the modulus as secret", hs_token2, JoseError::UnsupportedAlgorithm),
        ("HS512", raw_token(&ec, r#"{"alg":"HS512"}"#, payload), JoseError::UnsupportedAlgorithm),
        ("lowercase es256", raw_token(&ec, r#"{"alg":"es256"}"#, payload), JoseError::UnsupportedAlgorithm),
        ("ES512", raw_token(&ec, r#"{"alg":"ES512"}"#, payload), JoseError::UnsupportedAlgorithm),
        ("unknown kid", raw_token(&ec, r#"{"alg":"ES256","kid":"nope"}"#, payload), JoseError::UnknownKey),
        ("ES256 with an RSA key's kid", es_with_rsa_kid, JoseError::KeyMismatch),
        ("RS256 with an EC key's kid", rs_with_ec_kid, JoseError::KeyMismatch),
        ("ES384 with a P-256 key's kid", es384_with_p256, JoseError::KeyMismatch),
        ("tampered payload", tampered_payload, JoseError::InvalidSignature),
        ("tampered signature", tampered_sig, JoseError::InvalidSignature),
        ("another key's signature", foreign_sig, JoseError::InvalidSignature),
        ("oversized", oversized, JoseError::TooLarge),
        ("one segment", gh.clone(), JoseError::Malformed("not a compact JWS of three segments")),
        ("two segments", format!("{gh}.{gp}"), JoseError::Malformed("not a compact JWS of three segments")),
        ("four segments", format!("{good}.x"), JoseError::Malformed("not a compact JWS of three segments")),
        ("JWE shape", format!("{gh}.a.b.c.d"), JoseError::Malformed("not a compact JWS of three segments")),
        ("empty", String::new(), JoseError::Malformed("not a compact JWS of three segments")),
        ("header not base64url", format!("{gh}+.{gp}.{gs}"), JoseError::Malformed("header is not base64url")),
        ("padded header", format!("{gh}=.{gp}.{gs}"), JoseError::Malformed("header is not base64url")),
        (
            "signature not base64url",
            format!("{gh}.{gp}.{gs}!"),
            JoseError::Malformed("signature is not base64url"),
        ),
        ("empty signature", format!("{gh}.{gp}."), JoseError::Malformed("signature is empty")),
        (
            "header not JSON",
            format!("{}.{gp}.{gs}", b64("alg")),
            JoseError::Malformed("header is not a JSON object without duplicate members"),
        ),
        (
            "header an array",
            format!("{}.{gp}.{gs}", b64(r#"["ES256"]"#)),
            JoseError::Malformed("header is not a JSON object without duplicate members"),
        ),
        (
            "duplicate alg",
            raw_token(&ec, r#"{"alg":"HS256","alg":"ES256"}"#, payload),
            JoseError::Malformed("header is not a JSON object without duplicate members"),
        ),
        ("no alg", raw_token(&ec, r#"{"kid":"ec"}"#, payload), JoseError::Malformed("alg is missing")),
        (
            "alg not a string",
            raw_token(&ec, r#"{"alg":7}"#, payload),
            JoseError::Malformed("alg is not a string"),
        ),
        (
            "kid not a string",
            raw_token(&ec, r#"{"alg":"ES256","kid":1}"#, payload),
            JoseError::Malformed("kid is not a string"),
        ),
        (
            "crit",
            raw_token(&ec, r#"{"alg":"ES256","crit":["exp"],"exp":1}"#, payload),
            JoseError::UnsupportedCritical,
        ),
        (
            "b64 false",
            raw_token(&ec, r#"{"alg":"ES256","b64":false}"#, payload),
            JoseError::UnsupportedCritical,
        ),
        (
            "payload not an object",
            raw_token(&ec, r#"{"alg":"ES256"}"#, "[1,2]"),
            JoseError::Malformed("payload is not a JSON object without duplicate members"),
        ),
        (
            "duplicate claims",
            raw_token(&ec, r#"{"alg":"ES256"}"#, r#"{"sub":"a","sub":"admin"}"#),
            JoseError::Malformed("payload is not a JSON object without duplicate members"),
        ),
    ];
    for (name, token, expected) in cases {
        assert_eq!(verify(&token, &keys, &Algorithm::ALL), Err(expected), "{name}");
    }
    // No kid and no key of the right type.
    assert_eq!(verify(&es_no_kid_rsa_only, &set(&[&rsa]), &Algorithm::ALL), Err(JoseError::UnknownKey));
    assert_eq!(verify(&good, &JwkSet::default(), &Algorithm::ALL), Err(JoseError::UnknownKey));
    // An empty allow list allows nothing.
    assert_eq!(verify(&good, &keys, &[]), Err(JoseError::AlgorithmNotAllowed(Algorithm::ES256)));
}

#[test]
fn size_bound_is_exact() {
    let ec = key(P256, None, "ec");
    let keys = set(&[&ec]);
    let mut pad = 0;
    loop {
        let mut c = claims();
        c.insert("pad".into(), "x".repeat(pad).into());
        let token = ec.sign_jwt(&Map::new(), &c).unwrap();
        if token.len() > MAX_TOKEN_LEN {
            assert_eq!(verify(&token, &keys, &Algorithm::ALL), Err(JoseError::TooLarge));
            assert_eq!(decode_unverified(&token), Err(JoseError::TooLarge));
            break;
        }
        assert!(verify(&token, &keys, &Algorithm::ALL).is_ok(), "{}", token.len());
        pad += if token.len() + 300 < MAX_TOKEN_LEN { 256 } else { 1 };
    }
}

#[test]
fn key_restrictions_are_honoured() {
    let rsa = key(RSA, Some(Algorithm::PS256), "rsa");
    let token = rsa.sign_jwt(&Map::new(), &claims()).unwrap();
    let mut jwk = rsa.public_jwk();
    assert!(verify(&token, &JwkSet::new(vec![jwk.clone()]), &Algorithm::ALL).is_ok());
    // The key says RS256: a PS256 token is refused even though the key type fits.
    jwk.alg = Some("RS256".into());
    assert_eq!(verify(&token, &JwkSet::new(vec![jwk.clone()]), &Algorithm::ALL), Err(JoseError::KeyMismatch));
    jwk.alg = None;
    jwk.use_ = Some("enc".into());
    assert_eq!(verify(&token, &JwkSet::new(vec![jwk.clone()]), &Algorithm::ALL), Err(JoseError::KeyMismatch));
    jwk.use_ = Some("sig".into());
    jwk.extra.insert("key_ops".into(), json!(["encrypt"]));
    assert_eq!(verify(&token, &JwkSet::new(vec![jwk.clone()]), &Algorithm::ALL), Err(JoseError::KeyMismatch));
    jwk.extra.insert("key_ops".into(), json!(["sign", "verify"]));
    assert!(verify(&token, &JwkSet::new(vec![jwk]), &Algorithm::ALL).is_ok());
}

#[test]
fn key_selection_without_kid_tries_every_fitting_key() {
    let signer = SigningKey::from_pem(P256, None).unwrap();
    let other = SigningKey::generate_es256().unwrap().with_kid("other");
    let rsa = key(RSA, None, "rsa");
    let token = signer.sign_jwt(&Map::new(), &claims()).unwrap();
    assert!(!decode_unverified(&token).unwrap().0.contains_key("kid"));
    let mut named = signer.public_jwk();
    named.kid = Some("right".into());
    let keys = JwkSet::new(vec![rsa.public_jwk(), other.public_jwk(), named]);
    let verified = verify(&token, &keys, &Algorithm::ALL).unwrap();
    assert_eq!(verified.kid.as_deref(), Some("right"));
    // Without the right key: the fitting keys all fail.
    let keys = JwkSet::new(vec![rsa.public_jwk(), other.public_jwk()]);
    assert_eq!(verify(&token, &keys, &Algorithm::ALL), Err(JoseError::InvalidSignature));
    // A kid names keys; with two keys of that kid, the fitting one is used.
    let signer = signer.with_kid("dup");
    let token = signer.sign_jwt(&Map::new(), &claims()).unwrap();
    let mut decoy = rsa.public_jwk();
    decoy.kid = Some("dup".into());
    let keys = JwkSet::new(vec![decoy, signer.public_jwk()]);
    assert_eq!(verify(&token, &keys, &Algorithm::ALL).unwrap().kid.as_deref(), Some("dup"));
}

#[test]
fn keys_embedded_in_the_token_are_ignored() {
    let attacker = SigningKey::generate_es256().unwrap();
    let trusted = key(P256, None, "trusted");
    let mut header = Map::new();
    header.insert("jwk".into(), serde_json::to_value(attacker.public_jwk()).unwrap());
    header.insert("jku".into(), "https://attacker.example/jwks".into());
    let token = attacker.sign_jwt(&header, &claims()).unwrap();
    assert_eq!(verify(&token, &set(&[&trusted]), &Algorithm::ALL), Err(JoseError::InvalidSignature));
}

#[test]
fn broken_keys_are_reported_as_such() {
    let ec = key(P256, None, "ec");
    let token = ec.sign_jwt(&Map::new(), &claims()).unwrap();
    let mut jwk = ec.public_jwk();
    jwk.x = Some("AQAB".into());
    assert!(matches!(
        verify(&token, &JwkSet::new(vec![jwk.clone()]), &Algorithm::ALL),
        Err(JoseError::InvalidKey(_))
    ));
    jwk.x = Some("not base64!".into());
    assert!(matches!(
        verify(&token, &JwkSet::new(vec![jwk]), &Algorithm::ALL),
        Err(JoseError::InvalidKey(_))
    ));
}

#[test]
fn jwk_set_skips_unusable_keys_and_jwk_debug_redacts() {
    let json = r#"{"keys":[
        {"kty":"EC","crv":"P-256","x":1},
        "not a key",
        {"kid":"no-kty"},
        {"kty":"RSA","kid":"r","n":"AQAB","e":"AQAB","x5c":["abc"]},
        {"kty":"oct","k":"c2VjcmV0"}
    ],"other":true}"#;
    let set: JwkSet = serde_json::from_str(json).unwrap();
    assert_eq!(set.keys.len(), 2);
    assert_eq!(set.keys[0].kid.as_deref(), Some("r"));
    assert_eq!(set.keys[0].extra["x5c"][0], "abc");
    assert_eq!(set.find("r").count(), 1);
    assert!(set.keys[0].is_public());
    assert!(!set.keys[1].is_public());
    assert!(set.keys[1].to_public().is_public());
    assert!(!Algorithm::ALL.iter().any(|a| set.keys[1].fits(*a)));
    let debug = format!("{:?}", set.keys[1]);
    assert!(!debug.contains("c2VjcmV0") && debug.contains("redacted"), "{debug}");
    let back = serde_json::to_value(&set.keys[0]).unwrap();
    assert_eq!(back, json!({"kty":"RSA","kid":"r","n":"AQAB","e":"AQAB","x5c":["abc"]}));
    assert!(serde_json::from_str::<JwkSet>(r#"{"nokeys":[]}"#).is_err());
}

#[test]
fn algorithm_names() {
    for alg in Algorithm::ALL {
        assert_eq!(alg.as_str().parse::<Algorithm>(), Ok(alg));
        assert_eq!(alg.to_string(), alg.as_str());
        let json = serde_json::to_string(&alg).unwrap();
        assert_eq!(json, format!("\"{}\"", alg.as_str()));
        assert_eq!(serde_json::from_str::<Algorithm>(&json).unwrap(), alg);
    }
    for bad in ["none", "None", "HS256", "HS384", "HS512", "es256", "ES512", "Ed25519", ""] {
        assert_eq!(bad.parse::<Algorithm>(), Err(JoseError::UnsupportedAlgorithm), "{bad}");
        assert!(serde_json::from_str::<Algorithm>(&format!("\"{bad}\"")).is_err());
    }
    assert_eq!(Algorithm::PS384.key_type(), "RSA");
    assert_eq!(Algorithm::ES384.curve(), Some("P-384"));
    assert_eq!(Algorithm::RS256.curve(), None);
}

#[test]
fn error_texts_never_contain_token_material() {
    let ec = key(P256, None, "ec");
    let token = ec.sign_jwt(&Map::new(), &claims()).unwrap();
    let mut broken = token.clone();
    broken.push('x');
    let errors = [
        verify(&broken, &set(&[&ec]), &Algorithm::ALL).unwrap_err(),
        verify(&token, &JwkSet::default(), &Algorithm::ALL).unwrap_err(),
        verify(&format!("{token}.x"), &set(&[&ec]), &Algorithm::ALL).unwrap_err(),
    ];
    for e in errors {
        let text = e.to_string();
        for segment in token.split('.') {
            assert!(!text.contains(segment), "{text}");
        }
    }
}
