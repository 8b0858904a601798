//! JOSE: JSON Web Keys (RFC 7517), thumbprints (RFC 7638), compact JWS (RFC 7515) with the
//! algorithms of RFC 7518 and RFC 8037, and JWT claims validation (RFC 7519).
//!
//! Security rules this module keeps, whatever the caller passes:
//!
//! * there is no `none` algorithm and no HMAC algorithm: a token whose `alg` is `none`, `HS256`
//!   or anything unknown is refused before any key is looked at;
//! * the token's `alg` must be in the caller's `allowed` list **and** fit the key (`kty`, `crv`
//!   and the key's own `alg`, if any), so an RSA key never verifies an `ES256` token and a public
//!   key is never used as an HMAC secret;
//! * keys are never taken from the token (`jwk`, `jku`, `x5u`, `x5c` headers are ignored by
//!   [`verify`]); the only exception is the DPoP proof, checked in [`crate::dpop`];
//! * tokens longer than [`MAX_TOKEN_LEN`] are refused before any parsing, a `crit` header is
//!   refused (no extension is understood), and duplicate JSON members are refused.

mod claims;
mod jwk;
mod signing;
mod token;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_claims;

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub use claims::{ClaimsError, Validation, validate_claims};
pub use jwk::{Jwk, JwkSet};
pub use signing::SigningKey;
pub use token::{MAX_TOKEN_LEN, Verified, decode_unverified, verify};
pub(crate) use token::{checked_alg, decode_object, split};

/// A JSON object: a JOSE header or a JWT claims set.
pub type JsonObject = serde_json::Map<String, serde_json::Value>;

/// A JWS signature algorithm this crate signs and verifies with.
///
/// There is deliberately no `none` and no HMAC (`HS*`) member: parsing those names fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Algorithm {
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    RS256,
    /// RSASSA-PKCS1-v1_5 with SHA-384.
    RS384,
    /// RSASSA-PKCS1-v1_5 with SHA-512.
    RS512,
    /// RSASSA-PSS with SHA-256 and MGF1 with SHA-256.
    PS256,
    /// RSASSA-PSS with SHA-384 and MGF1 with SHA-384.
    PS384,
    /// RSASSA-PSS with SHA-512 and MGF1 with SHA-512.
    PS512,
    /// ECDSA on P-256 with SHA-256.
    ES256,
    /// ECDSA on P-384 with SHA-384.
    ES384,
    /// EdDSA; only the Ed25519 curve is supported.
    EdDSA,
}

impl Algorithm {
    /// Every supported algorithm.
    pub const ALL: [Algorithm; 9] = [
        Algorithm::RS256,
        Algorithm::RS384,
        Algorithm::RS512,
        Algorithm::PS256,
        Algorithm::PS384,
        Algorithm::PS512,
        Algorithm::ES256,
        Algorithm::ES384,
        Algorithm::EdDSA,
    ];

    /// The JOSE name (`"RS256"`, `"EdDSA"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Algorithm::RS256 => "RS256",
            Algorithm::RS384 => "RS384",
            Algorithm::RS512 => "RS512",
            Algorithm::PS256 => "PS256",
            Algorithm::PS384 => "PS384",
            Algorithm::PS512 => "PS512",
            Algorithm::ES256 => "ES256",
            Algorithm::ES384 => "ES384",
            Algorithm::EdDSA => "EdDSA",
        }
    }

    /// The JWK `kty` of keys for this algorithm: `"RSA"`, `"EC"` or `"OKP"`.
    pub fn key_type(self) -> &'static str {
        match self {
            Algorithm::RS256
            | Algorithm::RS384
            | Algorithm::RS512
            | Algorithm::PS256
            | Algorithm::PS384
            | Algorithm::PS512 => "RSA",
            Algorithm::ES256 | Algorithm::ES384 => "EC",
            Algorithm::EdDSA => "OKP",
        }
    }

    /// The JWK `crv` of keys for this algorithm, if keys of its type have one.
    pub fn curve(self) -> Option<&'static str> {
        match self {
            Algorithm::ES256 => Some("P-256"),
            Algorithm::ES384 => Some("P-384"),
            Algorithm::EdDSA => Some("Ed25519"),
            _ => None,
        }
    }
}

impl fmt::Display for Algorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Algorithm {
    type Err = JoseError;

    /// Exact, case-sensitive JOSE names. `none`, `HS*` and anything else unknown fail with
    /// [`JoseError::UnsupportedAlgorithm`].
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Algorithm::ALL.into_iter().find(|a| a.as_str() == s).ok_or(JoseError::UnsupportedAlgorithm)
    }
}

impl Serialize for Algorithm {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Algorithm {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        name.parse().map_err(|_| serde::de::Error::custom("unsupported JOSE algorithm"))
    }
}

/// Why a JOSE operation failed. The texts never contain a token, a signature or key material.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JoseError {
    /// The token is longer than [`MAX_TOKEN_LEN`]; nothing of it was parsed.
    #[error("token longer than {MAX_TOKEN_LEN} bytes")]
    TooLarge,
    /// The token is not a well-formed compact JWS (the reason is a fixed text).
    #[error("malformed token: {0}")]
    Malformed(&'static str),
    /// `alg` is `none`, an HMAC algorithm, or unknown. Such tokens are always refused.
    #[error("unsupported or forbidden algorithm")]
    UnsupportedAlgorithm,
    /// `alg` is supported but not in the caller's allowed list.
    #[error("algorithm {0} is not allowed here")]
    AlgorithmNotAllowed(Algorithm),
    /// No key has the token's `kid`, or (without a `kid`) no key is of the algorithm's type.
    #[error("no key matches the token")]
    UnknownKey,
    /// The key chosen by `kid` does not fit the token's algorithm (type, curve, `alg`, `use`).
    #[error("the key does not fit the token's algorithm")]
    KeyMismatch,
    /// No candidate key verified the signature.
    #[error("invalid signature")]
    InvalidSignature,
    /// The header has a `crit` member (or `b64: false`); no JWS extension is understood.
    #[error("unsupported critical header parameter")]
    UnsupportedCritical,
    /// A key could not be read or used (the reason is a fixed text).
    #[error("invalid key: {0}")]
    InvalidKey(&'static str),
    /// An argument is unusable (the reason is a fixed text).
    #[error("invalid argument: {0}")]
    InvalidArgument(&'static str),
    /// The operating system's random number generator failed.
    #[error("random number generator failed")]
    Random,
    /// The signing primitive failed.
    #[error("signing failed")]
    Signing,
}
