//! Compact JWS: decoding and signature verification.

use serde_json::{Map, Value};

use super::{Algorithm, JoseError, JsonObject, Jwk, JwkSet};
use crate::util::{b64_decode, parse_strict_object};

/// The longest token (in bytes) that is looked at: 16 KiB. Longer ones are refused before any
/// parsing.
pub const MAX_TOKEN_LEN: usize = 16 * 1024;

/// A token whose signature checked out. Its claims are *not* validated yet: call
/// [`validate_claims`](super::validate_claims).
#[derive(Clone, Debug, PartialEq)]
pub struct Verified {
    /// The protected header.
    pub header: Map<String, Value>,
    /// The payload, a JSON object.
    pub claims: Map<String, Value>,
    /// The `kid` of the key that verified the signature (the token's `kid` when it has one).
    pub kid: Option<String>,
}

/// The three segments of a compact JWS, with the header decoded.
pub(crate) struct Parts<'a> {
    pub(crate) header: Map<String, Value>,
    /// `BASE64URL(header) '.' BASE64URL(payload)`, the JWS signing input.
    pub(crate) signing_input: &'a str,
    pub(crate) payload: &'a str,
    pub(crate) signature: &'a str,
}

pub(crate) fn split(token: &str) -> Result<Parts<'_>, JoseError> {
    if token.len() > MAX_TOKEN_LEN {
        return Err(JoseError::TooLarge);
    }
    let mut segments = token.split('.');
    let (Some(header), Some(payload), Some(signature), None) =
        (segments.next(), segments.next(), segments.next(), segments.next())
    else {
        return Err(JoseError::Malformed("not a compact JWS of three segments"));
    };
    let header = decode_object(header, "header")?;
    Ok(Parts { header, signing_input: &token[..token.len() - signature.len() - 1], payload, signature })
}

pub(crate) fn decode_object(segment: &str, what: &'static str) -> Result<Map<String, Value>, JoseError> {
    let bytes = b64_decode(segment).ok_or(JoseError::Malformed(match what {
        "header" => "header is not base64url",
        _ => "payload is not base64url",
    }))?;
    parse_strict_object(&bytes).ok_or(JoseError::Malformed(match what {
        "header" => "header is not a JSON object without duplicate members",
        _ => "payload is not a JSON object without duplicate members",
    }))
}

/// The header's `alg`, refusing `none`, HMAC and unknown names, and anything not `allowed`.
/// Also refuses headers with `crit` or `b64` other than `true` (RFC 7515 §4.1.11, RFC 7797).
pub(crate) fn checked_alg(
    header: &Map<String, Value>,
    allowed: &[Algorithm],
) -> Result<Algorithm, JoseError> {
    let alg = match header.get("alg") {
        Some(Value::String(name)) => name.parse::<Algorithm>()?,
        Some(_) => return Err(JoseError::Malformed("alg is not a string")),
        None => return Err(JoseError::Malformed("alg is missing")),
    };
    if !allowed.contains(&alg) {
        return Err(JoseError::AlgorithmNotAllowed(alg));
    }
    if header.contains_key("crit") {
        return Err(JoseError::UnsupportedCritical);
    }
    if header.get("b64").is_some_and(|b| b != &Value::Bool(true)) {
        return Err(JoseError::UnsupportedCritical);
    }
    Ok(alg)
}

/// Decodes a compact JWS without checking anything but its shape: `(header, claims)`.
///
/// **The result is untrusted**: use it for logging or for choosing which keys to verify with,
/// never for an authorization decision. Tokens over [`MAX_TOKEN_LEN`] are refused.
pub fn decode_unverified(token: &str) -> Result<(JsonObject, JsonObject), JoseError> {
    let parts = split(token)?;
    let claims = decode_object(parts.payload, "payload")?;
    Ok((parts.header, claims))
}

/// Verifies a compact JWS signed by one of `keys` with one of the `allowed` algorithms.
///
/// * Tokens over [`MAX_TOKEN_LEN`], not of three base64url segments, or with duplicate JSON
///   members are [`JoseError::TooLarge`] / [`JoseError::Malformed`].
/// * `alg` `none`, `HS*` or unknown is [`JoseError::UnsupportedAlgorithm`]; a supported `alg`
///   missing from `allowed` is [`JoseError::AlgorithmNotAllowed`]; `crit` is
///   [`JoseError::UnsupportedCritical`].
/// * With a `kid` in the header, only the keys with that `kid` are tried ([`JoseError::UnknownKey`]
///   if there is none, [`JoseError::KeyMismatch`] if none of them fits `alg`). Without a `kid`,
///   every key that fits `alg` is tried ([`JoseError::UnknownKey`] if none fits). A key fits when
///   its `kty`, `crv`, `alg`, `use` and `key_ops` allow the algorithm ([`Jwk::fits`]).
/// * Keys embedded in the token (`jwk`, `jku`, `x5u`, `x5c`) are ignored.
///
/// The claims are not validated: pass [`Verified::claims`] to
/// [`validate_claims`](super::validate_claims).
pub fn verify(token: &str, keys: &JwkSet, allowed: &[Algorithm]) -> Result<Verified, JoseError> {
    let parts = split(token)?;
    let alg = checked_alg(&parts.header, allowed)?;
    let kid = match parts.header.get("kid") {
        None => None,
        Some(Value::String(kid)) => Some(kid.as_str()),
        Some(_) => return Err(JoseError::Malformed("kid is not a string")),
    };
    let signature = b64_decode(parts.signature).ok_or(JoseError::Malformed("signature is not base64url"))?;
    if signature.is_empty() {
        return Err(JoseError::Malformed("signature is empty"));
    }
    let candidates: Vec<&Jwk> = match kid {
        Some(kid) => {
            let named: Vec<&Jwk> = keys.find(kid).collect();
            if named.is_empty() {
                return Err(JoseError::UnknownKey);
            }
            let fitting: Vec<&Jwk> = named.into_iter().filter(|k| k.fits(alg)).collect();
            if fitting.is_empty() {
                return Err(JoseError::KeyMismatch);
            }
            fitting
        }
        None => {
            let fitting: Vec<&Jwk> = keys.keys.iter().filter(|k| k.fits(alg)).collect();
            if fitting.is_empty() {
                return Err(JoseError::UnknownKey);
            }
            fitting
        }
    };
    // The failure is `InvalidSignature` unless every candidate key was itself unusable.
    let mut failure = None;
    for key in candidates {
        match key.verify_signature(alg, parts.signing_input.as_bytes(), &signature) {
            Ok(()) => {
                let claims = decode_object(parts.payload, "payload")?;
                let kid = key.kid.clone();
                return Ok(Verified { header: parts.header, claims, kid });
            }
            Err(e @ JoseError::InvalidKey(_)) => {
                failure.get_or_insert(e);
            }
            Err(_) => failure = Some(JoseError::InvalidSignature),
        }
    }
    Err(failure.unwrap_or(JoseError::InvalidSignature))
}
