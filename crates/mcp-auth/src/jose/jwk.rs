//! JSON Web Keys (RFC 7517), JWK sets, RFC 7638 thumbprints, and signature verification with a
//! JWK.

use std::collections::BTreeMap;
use std::fmt;

use ring::digest;
use ring::signature::{self, RsaPublicKeyComponents, UnparsedPublicKey};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use super::{Algorithm, JoseError};
use crate::util::{b64_decode, b64_encode};

/// JWK members that carry private or secret key material (RFC 7518 §6.2.2, §6.3.2, §6.4;
/// RFC 8037 §2). Only ever found in [`Jwk::extra`].
const PRIVATE_MEMBERS: [&str; 8] = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

/// A JSON Web Key (RFC 7517).
///
/// Every member is kept as a plain string so that a key of an unknown type or algorithm still
/// parses (and is then simply never used). Members not named here, including any private
/// members, land in [`extra`](Self::extra). `Debug` redacts private members.
#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Jwk {
    /// Key type: `"RSA"`, `"EC"`, `"OKP"`, ...
    pub kty: String,
    /// Key id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kid: Option<String>,
    /// The algorithm the key is meant for. When present, a token must use exactly this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alg: Option<String>,
    /// Public key use (`"sig"` or `"enc"`). When present, it must be `"sig"` to verify.
    #[serde(default, rename = "use", skip_serializing_if = "Option::is_none")]
    pub use_: Option<String>,
    /// Curve (`"P-256"`, `"P-384"`, `"Ed25519"`) for `EC` and `OKP` keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crv: Option<String>,
    /// x coordinate (EC) or public key (OKP), base64url.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x: Option<String>,
    /// y coordinate (EC), base64url.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub y: Option<String>,
    /// RSA modulus, base64url.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n: Option<String>,
    /// RSA public exponent, base64url.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub e: Option<String>,
    /// Every other member (`key_ops`, `x5c`, private members, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl fmt::Debug for Jwk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let extra: BTreeMap<&str, &dyn fmt::Debug> = self
            .extra
            .iter()
            .map(|(k, v)| {
                let shown: &dyn fmt::Debug =
                    if PRIVATE_MEMBERS.contains(&k.as_str()) { &"<redacted>" } else { v };
                (k.as_str(), shown)
            })
            .collect();
        f.debug_struct("Jwk")
            .field("kty", &self.kty)
            .field("kid", &self.kid)
            .field("alg", &self.alg)
            .field("use", &self.use_)
            .field("crv", &self.crv)
            .field("x", &self.x)
            .field("y", &self.y)
            .field("n", &self.n)
            .field("e", &self.e)
            .field("extra", &extra)
            .finish()
    }
}

impl Jwk {
    /// The RFC 7638 thumbprint: base64url of the SHA-256 of the key's required members,
    /// lexicographically ordered, in JSON without whitespace.
    ///
    /// Supported for `RSA` (`e`, `kty`, `n`), `EC` (`crv`, `kty`, `x`, `y`), `OKP` (`crv`, `kty`,
    /// `x`) and `oct` (`k`, `kty`) keys.
    pub fn thumbprint(&self) -> Result<String, JoseError> {
        const MISSING: JoseError = JoseError::InvalidKey("a member required for the thumbprint is missing");
        let mut members: BTreeMap<&str, &str> = BTreeMap::new();
        members.insert("kty", &self.kty);
        match self.kty.as_str() {
            "RSA" => {
                members.insert("n", self.n.as_deref().ok_or(MISSING)?);
                members.insert("e", self.e.as_deref().ok_or(MISSING)?);
            }
            "EC" => {
                members.insert("crv", self.crv.as_deref().ok_or(MISSING)?);
                members.insert("x", self.x.as_deref().ok_or(MISSING)?);
                members.insert("y", self.y.as_deref().ok_or(MISSING)?);
            }
            "OKP" => {
                members.insert("crv", self.crv.as_deref().ok_or(MISSING)?);
                members.insert("x", self.x.as_deref().ok_or(MISSING)?);
            }
            "oct" => {
                members.insert("k", self.extra.get("k").and_then(Value::as_str).ok_or(MISSING)?);
            }
            _ => return Err(JoseError::InvalidKey("unsupported key type")),
        }
        let canonical = serde_json::to_string(&members).map_err(|_| MISSING)?;
        Ok(b64_encode(digest::digest(&digest::SHA256, canonical.as_bytes()).as_ref()))
    }

    /// True when the key carries no private or secret member (`d`, `p`, `q`, `dp`, `dq`, `qi`,
    /// `oth`, `k`).
    pub fn is_public(&self) -> bool {
        !PRIVATE_MEMBERS.iter().any(|m| self.extra.contains_key(*m))
    }

    /// A copy without private or secret members.
    pub fn to_public(&self) -> Jwk {
        let mut jwk = self.clone();
        for m in PRIVATE_MEMBERS {
            jwk.extra.remove(m);
        }
        jwk
    }

    /// Whether this key may verify a token signed with `alg`: the type and curve fit, the key's
    /// own `alg` (if any) is `alg`, its `use` (if any) is `sig`, and its `key_ops` (if any)
    /// include `verify`.
    pub fn fits(&self, alg: Algorithm) -> bool {
        self.kty == alg.key_type()
            && alg.curve().is_none_or(|crv| self.crv.as_deref() == Some(crv))
            && self.alg.as_deref().is_none_or(|a| a == alg.as_str())
            && self.use_.as_deref().is_none_or(|u| u == "sig")
            && self.extra.get("key_ops").is_none_or(|ops| {
                ops.as_array().is_some_and(|ops| ops.iter().any(|op| op.as_str() == Some("verify")))
            })
    }

    /// Verifies `signature` over `message` with this key under `alg`.
    pub(crate) fn verify_signature(
        &self,
        alg: Algorithm,
        message: &[u8],
        signature: &[u8],
    ) -> Result<(), JoseError> {
        if !self.fits(alg) {
            return Err(JoseError::KeyMismatch);
        }
        let member = |m: &Option<String>| -> Result<Vec<u8>, JoseError> {
            m.as_deref()
                .and_then(b64_decode)
                .ok_or(JoseError::InvalidKey("a public key member is missing or not base64url"))
        };
        let ok = match alg {
            Algorithm::ES256 | Algorithm::ES384 => {
                let (size, ring_alg) = if alg == Algorithm::ES256 {
                    (32, &signature::ECDSA_P256_SHA256_FIXED)
                } else {
                    (48, &signature::ECDSA_P384_SHA384_FIXED)
                };
                let (x, y) = (member(&self.x)?, member(&self.y)?);
                if x.len() != size || y.len() != size {
                    return Err(JoseError::InvalidKey("EC coordinate of the wrong length"));
                }
                let mut point = Vec::with_capacity(1 + 2 * size);
                point.push(4);
                point.extend_from_slice(&x);
                point.extend_from_slice(&y);
                UnparsedPublicKey::new(ring_alg, point).verify(message, signature).is_ok()
            }
            Algorithm::EdDSA => {
                let x = member(&self.x)?;
                if x.len() != signature::ED25519_PUBLIC_KEY_LEN {
                    return Err(JoseError::InvalidKey("Ed25519 key of the wrong length"));
                }
                UnparsedPublicKey::new(&signature::ED25519, x).verify(message, signature).is_ok()
            }
            Algorithm::RS256
            | Algorithm::RS384
            | Algorithm::RS512
            | Algorithm::PS256
            | Algorithm::PS384
            | Algorithm::PS512 => {
                let params = match alg {
                    Algorithm::RS256 => &signature::RSA_PKCS1_2048_8192_SHA256,
                    Algorithm::RS384 => &signature::RSA_PKCS1_2048_8192_SHA384,
                    Algorithm::RS512 => &signature::RSA_PKCS1_2048_8192_SHA512,
                    Algorithm::PS256 => &signature::RSA_PSS_2048_8192_SHA256,
                    Algorithm::PS384 => &signature::RSA_PSS_2048_8192_SHA384,
                    _ => &signature::RSA_PSS_2048_8192_SHA512,
                };
                let (n, e) = (member(&self.n)?, member(&self.e)?);
                let key = RsaPublicKeyComponents { n: strip_leading_zeros(&n), e: strip_leading_zeros(&e) };
                key.verify(params, message, signature).is_ok()
            }
        };
        if ok { Ok(()) } else { Err(JoseError::InvalidSignature) }
    }
}

fn strip_leading_zeros(bytes: &[u8]) -> &[u8] {
    let first = bytes.iter().position(|b| *b != 0).unwrap_or(bytes.len());
    &bytes[first..]
}

/// A JWK Set (RFC 7517 §5).
///
/// Deserializing skips keys that are not JSON objects with a string `kty` and string-valued
/// known members, as RFC 7517 §5 asks for keys that cannot be understood; the other keys stay
/// usable. Members of the set other than `keys` are ignored.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct JwkSet {
    /// The keys.
    pub keys: Vec<Jwk>,
}

impl JwkSet {
    /// A set of these keys.
    pub fn new(keys: Vec<Jwk>) -> Self {
        JwkSet { keys }
    }

    /// The keys whose `kid` is `kid`.
    pub fn find<'a>(&'a self, kid: &'a str) -> impl Iterator<Item = &'a Jwk> + 'a {
        self.keys.iter().filter(move |k| k.kid.as_deref() == Some(kid))
    }
}

impl<'de> Deserialize<'de> for JwkSet {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Raw {
            keys: Vec<Value>,
        }
        let raw = Raw::deserialize(deserializer)?;
        let keys = raw.keys.into_iter().filter_map(|v| serde_json::from_value::<Jwk>(v).ok()).collect();
        Ok(JwkSet { keys })
    }
}
