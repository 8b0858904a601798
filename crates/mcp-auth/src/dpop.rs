//! DPoP (RFC 9449): proofs of possession of a key, bound to one HTTP request.
//!
//! A client builds a proof per request with [`proof`]; a resource server or authorization
//! server checks it with [`verify_proof`].
//!
//! **Replay detection is the caller's job**: [`verify_proof`] returns the proof's `jti`, and the
//! server must remember every `jti` it accepted (per key, for at least
//! [`ProofCheck::max_age`] plus [`MAX_FUTURE_SKEW`]) and refuse a second use. Server-provided
//! nonces ([`ProofCheck::nonce`]) bound the window further.

use std::time::{Duration, SystemTime};

use ring::digest;
use serde_json::{Map, Value};
use url::Url;

use crate::jose::{Algorithm, JoseError, Jwk, SigningKey, checked_alg, decode_object, split};
use crate::util::{b64_decode, b64_encode, random_bytes, unix_seconds};

/// The `typ` header of a DPoP proof.
pub const DPOP_TYP: &str = "dpop+jwt";

/// How far in the future a proof's `iat` may be (client clock ahead of the server's): 10 s.
pub const MAX_FUTURE_SKEW: Duration = Duration::from_secs(10);

/// The default [`ProofCheck::max_age`]: 60 s.
pub const DEFAULT_MAX_AGE: Duration = Duration::from_secs(60);

/// The algorithms [`ProofCheck::new`] accepts: asymmetric only, as RFC 9449 requires.
pub const DEFAULT_ALGORITHMS: &[Algorithm] =
    &[Algorithm::ES256, Algorithm::ES384, Algorithm::EdDSA, Algorithm::PS256, Algorithm::RS256];

/// `BASE64URL(SHA-256(access_token))`, the `ath` claim.
pub fn access_token_hash(access_token: &str) -> String {
    b64_encode(digest::digest(&digest::SHA256, access_token.as_bytes()).as_ref())
}

/// `htu` as compared: the absolute URL with lowercase scheme and host, default port dropped,
/// dot segments resolved, without credentials, query or fragment. `None` if it is not an
/// absolute URL with a host.
pub fn normalize_htu(htu: &str) -> Option<String> {
    let mut url = Url::parse(htu).ok()?;
    if url.cannot_be_a_base() || url.host().is_none() {
        return None;
    }
    url.set_query(None);
    url.set_fragment(None);
    url.set_username("").ok()?;
    url.set_password(None).ok()?;
    Some(url.into())
}

/// Builds a DPoP proof for one request, signed by `key`.
///
/// Header: `typ: dpop+jwt`, `alg` of the key, `jwk` = the public key (required members only).
/// Claims: `jti` (128 random bits), `htm`, `htu` (without query and fragment), `iat` (now),
/// `nonce` when given, and `ath` = `BASE64URL(SHA-256(access_token))` when an access token is
/// given (requests to a resource server).
pub fn proof(
    key: &SigningKey,
    htm: &str,
    htu: &str,
    nonce: Option<&str>,
    access_token: Option<&str>,
) -> Result<String, JoseError> {
    proof_at(key, htm, htu, nonce, access_token, SystemTime::now())
}

/// [`proof`] with an explicit `iat` time (for tests and simulations).
pub fn proof_at(
    key: &SigningKey,
    htm: &str,
    htu: &str,
    nonce: Option<&str>,
    access_token: Option<&str>,
    iat: SystemTime,
) -> Result<String, JoseError> {
    if htm.is_empty() || !htm.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(JoseError::InvalidArgument("htm is not an HTTP method"));
    }
    let htu = normalize_htu(htu).ok_or(JoseError::InvalidArgument("htu is not an absolute URL"))?;
    let jwk = serde_json::to_value(key.bare_public_jwk()).map_err(|_| JoseError::InvalidArgument("jwk"))?;
    let mut header = Map::new();
    header.insert("typ".into(), DPOP_TYP.into());
    header.insert("jwk".into(), jwk);
    let jti = b64_encode(&random_bytes(16).map_err(|_| JoseError::Random)?);
    let mut claims = Map::new();
    claims.insert("jti".into(), jti.into());
    claims.insert("htm".into(), htm.into());
    claims.insert("htu".into(), htu.into());
    claims.insert("iat".into(), (unix_seconds(Some(iat)).floor() as i64).into());
    if let Some(nonce) = nonce {
        claims.insert("nonce".into(), nonce.into());
    }
    if let Some(token) = access_token {
        claims.insert("ath".into(), access_token_hash(token).into());
    }
    key.sign_compact(&header, &claims, false)
}

/// What a received proof must match.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ProofCheck<'a> {
    /// The request's method (compared exactly, so use the method as sent: `POST`).
    pub htm: &'a str,
    /// The request's absolute URL (query and fragment ignored; scheme and host
    /// case-insensitive; default port ignored).
    pub htu: &'a str,
    /// The access token presented with the request; when given, `ath` must be its hash.
    pub access_token: Option<&'a str>,
    /// The key thumbprint the access token is bound to (`cnf.jkt`); when given, the proof's key
    /// must have it.
    pub expected_jkt: Option<&'a str>,
    /// The nonce the server last issued; when given, the proof must carry it.
    pub nonce: Option<&'a str>,
    /// How old `iat` may be.
    pub max_age: Duration,
    /// The time to check at; `None` is the current time.
    pub now: Option<SystemTime>,
    /// Accepted signature algorithms.
    pub allowed: &'a [Algorithm],
}

impl<'a> ProofCheck<'a> {
    /// Sets [`htm`](Self::htm).
    #[must_use]
    pub fn with_htm(mut self, htm: &'a str) -> Self {
        self.htm = htm;
        self
    }

    /// Sets [`htu`](Self::htu).
    #[must_use]
    pub fn with_htu(mut self, htu: &'a str) -> Self {
        self.htu = htu;
        self
    }

    /// Sets [`access_token`](Self::access_token).
    #[must_use]
    pub fn with_access_token(mut self, access_token: Option<&'a str>) -> Self {
        self.access_token = access_token;
        self
    }

    /// Sets [`expected_jkt`](Self::expected_jkt).
    #[must_use]
    pub fn with_expected_jkt(mut self, expected_jkt: Option<&'a str>) -> Self {
        self.expected_jkt = expected_jkt;
        self
    }

    /// Sets [`nonce`](Self::nonce).
    #[must_use]
    pub fn with_nonce(mut self, nonce: Option<&'a str>) -> Self {
        self.nonce = nonce;
        self
    }

    /// Sets [`max_age`](Self::max_age).
    #[must_use]
    pub fn with_max_age(mut self, max_age: Duration) -> Self {
        self.max_age = max_age;
        self
    }

    /// Sets [`now`](Self::now).
    #[must_use]
    pub fn with_now(mut self, now: Option<SystemTime>) -> Self {
        self.now = now;
        self
    }

    /// Sets [`allowed`](Self::allowed).
    #[must_use]
    pub fn with_allowed(mut self, allowed: &'a [Algorithm]) -> Self {
        self.allowed = allowed;
        self
    }
}

impl<'a> ProofCheck<'a> {
    /// A check for a request with this method and URL; no token, key binding or nonce,
    /// [`DEFAULT_MAX_AGE`], the current time, [`DEFAULT_ALGORITHMS`].
    pub fn new(htm: &'a str, htu: &'a str) -> Self {
        ProofCheck {
            htm,
            htu,
            access_token: None,
            expected_jkt: None,
            nonce: None,
            max_age: DEFAULT_MAX_AGE,
            now: None,
            allowed: DEFAULT_ALGORITHMS,
        }
    }
}

/// What an accepted proof tells.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProofInfo {
    /// RFC 7638 thumbprint of the proof's key (compare with the token's `cnf.jkt`, or bind a new
    /// token to it).
    pub jkt: String,
    /// The proof's unique id, for the caller's replay cache.
    pub jti: String,
}

/// Why a DPoP proof was refused. The texts never contain the proof, a token or key material.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DpopError {
    /// The proof is not a usable JWS (size, shape, algorithm, signature, ...).
    #[error("invalid DPoP proof: {0}")]
    Jose(#[from] JoseError),
    /// `typ` is not `dpop+jwt`.
    #[error("DPoP proof has the wrong typ")]
    WrongType,
    /// The header has no `jwk`.
    #[error("DPoP proof has no jwk header")]
    MissingJwk,
    /// The `jwk` header is not a JWK.
    #[error("DPoP proof jwk header is not a JWK")]
    InvalidJwk,
    /// The `jwk` header contains private key material.
    #[error("DPoP proof jwk header contains a private key")]
    PrivateKeyInJwk,
    /// A required claim is absent (its name).
    #[error("DPoP proof lacks the {0} claim")]
    MissingClaim(&'static str),
    /// A claim has the wrong type or form (its name).
    #[error("DPoP proof has a malformed {0} claim")]
    MalformedClaim(&'static str),
    /// `htm` is not the request's method.
    #[error("DPoP proof is for another HTTP method")]
    MethodMismatch,
    /// `htu` is not the request's URL.
    #[error("DPoP proof is for another URL")]
    UrlMismatch,
    /// `iat` is older than the allowed age.
    #[error("DPoP proof is too old")]
    Stale,
    /// `iat` is too far in the future.
    #[error("DPoP proof is issued in the future")]
    IssuedInFuture,
    /// A nonce is required and the proof has none (answer with `use_dpop_nonce`).
    #[error("DPoP proof lacks the required nonce")]
    MissingNonce,
    /// The proof's nonce is not the current one (answer with `use_dpop_nonce`).
    #[error("DPoP proof has a stale or wrong nonce")]
    WrongNonce,
    /// `ath` is not the hash of the presented access token.
    #[error("DPoP proof is bound to another access token")]
    AthMismatch,
    /// The proof's key is not the key the access token is bound to.
    #[error("DPoP proof key does not match the token binding")]
    JktMismatch,
}

impl DpopError {
    /// Whether the server should answer with a fresh nonce and `error="use_dpop_nonce"`.
    pub fn is_nonce_error(&self) -> bool {
        matches!(self, DpopError::MissingNonce | DpopError::WrongNonce)
    }
}

/// Checks a DPoP proof against the request it came with (RFC 9449 §4.3):
///
/// 1. one compact JWS of at most [`MAX_TOKEN_LEN`](crate::jose::MAX_TOKEN_LEN) bytes, `typ`
///    `dpop+jwt`, `alg` in `check.allowed` (never `none` or HMAC), no `crit`;
/// 2. a `jwk` header holding a public key only, which fits `alg` and verifies the signature;
/// 3. `jti` (a non-empty string), `htm` equal to `check.htm`, `htu` equal to `check.htu`
///    ignoring query and fragment ([`normalize_htu`]);
/// 4. `iat` at most `check.max_age` old and at most [`MAX_FUTURE_SKEW`] ahead;
/// 5. `nonce` equal to `check.nonce` when that is given;
/// 6. `ath` equal to the hash of `check.access_token` when that is given;
/// 7. the key's thumbprint equal to `check.expected_jkt` when that is given.
///
/// The returned `jti` must be checked against a replay cache by the caller; this function keeps
/// no state.
pub fn verify_proof(proof: &str, check: &ProofCheck<'_>) -> Result<ProofInfo, DpopError> {
    let parts = split(proof)?;
    match parts.header.get("typ") {
        Some(Value::String(typ)) if typ.eq_ignore_ascii_case(DPOP_TYP) => {}
        _ => return Err(DpopError::WrongType),
    }
    let alg = checked_alg(&parts.header, check.allowed)?;
    let jwk_value = parts.header.get("jwk").ok_or(DpopError::MissingJwk)?;
    if !jwk_value.is_object() {
        return Err(DpopError::InvalidJwk);
    }
    let jwk: Jwk = serde_json::from_value(jwk_value.clone()).map_err(|_| DpopError::InvalidJwk)?;
    if !jwk.is_public() {
        return Err(DpopError::PrivateKeyInJwk);
    }
    let signature = b64_decode(parts.signature).ok_or(JoseError::Malformed("signature is not base64url"))?;
    jwk.verify_signature(alg, parts.signing_input.as_bytes(), &signature)?;
    let claims = decode_object(parts.payload, "payload")?;

    let jti = string_claim(&claims, "jti")?;
    if jti.is_empty() {
        return Err(DpopError::MalformedClaim("jti"));
    }
    if string_claim(&claims, "htm")? != check.htm {
        return Err(DpopError::MethodMismatch);
    }
    let htu = normalize_htu(string_claim(&claims, "htu")?).ok_or(DpopError::MalformedClaim("htu"))?;
    let expected_htu = normalize_htu(check.htu).ok_or(DpopError::UrlMismatch)?;
    if htu != expected_htu {
        return Err(DpopError::UrlMismatch);
    }
    let iat = match claims.get("iat") {
        None => return Err(DpopError::MissingClaim("iat")),
        Some(Value::Number(n)) => {
            n.as_f64().filter(|t| t.is_finite()).ok_or(DpopError::MalformedClaim("iat"))?
        }
        Some(_) => return Err(DpopError::MalformedClaim("iat")),
    };
    let now = unix_seconds(check.now);
    if iat > now + MAX_FUTURE_SKEW.as_secs_f64() {
        return Err(DpopError::IssuedInFuture);
    }
    if now - iat > check.max_age.as_secs_f64() {
        return Err(DpopError::Stale);
    }
    if let Some(expected) = check.nonce {
        match claims.get("nonce") {
            None => return Err(DpopError::MissingNonce),
            Some(Value::String(nonce)) if nonce == expected => {}
            Some(_) => return Err(DpopError::WrongNonce),
        }
    }
    if let Some(token) = check.access_token {
        if string_claim(&claims, "ath")? != access_token_hash(token) {
            return Err(DpopError::AthMismatch);
        }
    }
    let jkt = jwk.thumbprint()?;
    if check.expected_jkt.is_some_and(|expected| expected != jkt) {
        return Err(DpopError::JktMismatch);
    }
    Ok(ProofInfo { jkt, jti: jti.to_owned() })
}

fn string_claim<'a>(claims: &'a Map<String, Value>, name: &'static str) -> Result<&'a str, DpopError> {
    match claims.get(name) {
        None => Err(DpopError::MissingClaim(name)),
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(DpopError::MalformedClaim(name)),
    }
}

#[cfg(test)]
mod tests;
