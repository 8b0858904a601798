//! Private keys and compact JWS signing.

use std::fmt;

use ring::rand::SystemRandom;
use ring::signature::{
    self, EcdsaKeyPair, EcdsaSigningAlgorithm, Ed25519KeyPair, KeyPair as _, RsaKeyPair,
    RsaPublicKeyComponents,
};
use rustls_pki_types::PrivateKeyDer;
use rustls_pki_types::pem::PemObject as _;
use serde_json::{Map, Value};

use super::{Algorithm, JoseError, Jwk};
use crate::util::b64_encode;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Curve {
    P256,
    P384,
}

impl Curve {
    fn signing(self) -> &'static EcdsaSigningAlgorithm {
        match self {
            Curve::P256 => &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            Curve::P384 => &signature::ECDSA_P384_SHA384_FIXED_SIGNING,
        }
    }

    fn algorithm(self) -> Algorithm {
        match self {
            Curve::P256 => Algorithm::ES256,
            Curve::P384 => Algorithm::ES384,
        }
    }

    /// DER of the PKCS#8 `AlgorithmIdentifier` contents: id-ecPublicKey and the named curve.
    fn pkcs8_algorithm_identifier(self) -> &'static [u8] {
        match self {
            // 1.2.840.10045.2.1, 1.2.840.10045.3.1.7 (prime256v1)
            Curve::P256 => &[
                0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce,
                0x3d, 0x03, 0x01, 0x07,
            ],
            // 1.2.840.10045.2.1, 1.3.132.0.34 (secp384r1)
            Curve::P384 => &[
                0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x05, 0x2b, 0x81, 0x04, 0x00,
                0x22,
            ],
        }
    }
}

enum Pair {
    Ec(EcdsaKeyPair, Curve),
    Rsa(RsaKeyPair),
    Ed25519(Ed25519KeyPair),
}

/// A private key that signs compact JWS: ECDSA P-256/P-384, RSA (PKCS#1 v1.5 or PSS) or
/// Ed25519.
///
/// `Debug` shows the algorithm and key id only.
pub struct SigningKey {
    pair: Pair,
    alg: Algorithm,
    kid: Option<String>,
    rng: SystemRandom,
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKey").field("alg", &self.alg).field("kid", &self.kid).finish_non_exhaustive()
    }
}

const BAD_PEM: JoseError = JoseError::InvalidKey("no usable private key in the PEM text");
const ALG_MISMATCH: JoseError = JoseError::InvalidKey("the algorithm does not fit the key");

impl SigningKey {
    /// Reads a PEM private key: PKCS#8 (`PRIVATE KEY`) holding an EC P-256/P-384, RSA or Ed25519
    /// key, SEC1 (`EC PRIVATE KEY`) or PKCS#1 (`RSA PRIVATE KEY`).
    ///
    /// `alg` defaults from the key: `ES256`, `ES384`, `RS256` or `EdDSA`. When given, it must fit
    /// the key (any `RS*`/`PS*` for RSA keys). RSA keys must have 2048 to 8192 bits.
    pub fn from_pem(pem: &str, alg: Option<Algorithm>) -> Result<Self, JoseError> {
        let der = PrivateKeyDer::from_pem_slice(pem.as_bytes()).map_err(|_| BAD_PEM)?;
        let rng = SystemRandom::new();
        let pair = match &der {
            PrivateKeyDer::Pkcs8(key) => pair_from_pkcs8(key.secret_pkcs8_der(), alg, &rng)?,
            PrivateKeyDer::Pkcs1(key) => Pair::Rsa(
                RsaKeyPair::from_der(key.secret_pkcs1_der())
                    .map_err(|_| JoseError::InvalidKey("unusable PKCS#1 RSA key"))?,
            ),
            PrivateKeyDer::Sec1(key) => pair_from_sec1(key.secret_sec1_der(), &rng)?,
            _ => return Err(BAD_PEM),
        };
        let default_alg = match &pair {
            Pair::Ec(_, curve) => curve.algorithm(),
            Pair::Rsa(_) => Algorithm::RS256,
            Pair::Ed25519(_) => Algorithm::EdDSA,
        };
        let alg = alg.unwrap_or(default_alg);
        if alg.key_type() != default_alg.key_type() || alg.curve() != default_alg.curve() {
            return Err(ALG_MISMATCH);
        }
        Ok(SigningKey { pair, alg, kid: None, rng })
    }

    /// A fresh ECDSA P-256 key (`ES256`), e.g. for DPoP.
    pub fn generate_es256() -> Result<Self, JoseError> {
        let rng = SystemRandom::new();
        let pkcs8 =
            EcdsaKeyPair::generate_pkcs8(Curve::P256.signing(), &rng).map_err(|_| JoseError::Random)?;
        let pair = EcdsaKeyPair::from_pkcs8(Curve::P256.signing(), pkcs8.as_ref(), &rng)
            .map_err(|_| JoseError::InvalidKey("generated key rejected"))?;
        Ok(SigningKey { pair: Pair::Ec(pair, Curve::P256), alg: Algorithm::ES256, kid: None, rng })
    }

    /// A fresh Ed25519 key (`EdDSA`).
    pub fn generate_ed25519() -> Result<Self, JoseError> {
        let rng = SystemRandom::new();
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&rng).map_err(|_| JoseError::Random)?;
        let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref())
            .map_err(|_| JoseError::InvalidKey("generated key rejected"))?;
        Ok(SigningKey { pair: Pair::Ed25519(pair), alg: Algorithm::EdDSA, kid: None, rng })
    }

    /// The same key with a key id, put in `kid` of [`public_jwk`](Self::public_jwk) and of every
    /// JWS header this key signs.
    pub fn with_kid(mut self, kid: impl Into<String>) -> Self {
        self.kid = Some(kid.into());
        self
    }

    /// The algorithm this key signs with.
    pub fn algorithm(&self) -> Algorithm {
        self.alg
    }

    /// The key id, if one was set.
    pub fn kid(&self) -> Option<&str> {
        self.kid.as_deref()
    }

    /// The public key as a JWK, with `alg`, and `kid` if one was set.
    pub fn public_jwk(&self) -> Jwk {
        let mut jwk = self.bare_public_jwk();
        jwk.alg = Some(self.alg.as_str().to_owned());
        jwk.kid = self.kid.clone();
        jwk
    }

    /// The RFC 7638 thumbprint of the public key (the DPoP `jkt`).
    pub fn thumbprint(&self) -> String {
        // The bare public JWK always has every required member.
        self.bare_public_jwk().thumbprint().unwrap_or_default()
    }

    /// The public key with only the members RFC 7638 requires (no `alg`, no `kid`).
    pub(crate) fn bare_public_jwk(&self) -> Jwk {
        match &self.pair {
            Pair::Ec(pair, curve) => {
                let point = pair.public_key().as_ref();
                let size = (point.len() - 1) / 2;
                Jwk {
                    kty: "EC".into(),
                    crv: Some(if *curve == Curve::P256 { "P-256" } else { "P-384" }.into()),
                    x: Some(b64_encode(&point[1..1 + size])),
                    y: Some(b64_encode(&point[1 + size..])),
                    ..Jwk::default()
                }
            }
            Pair::Rsa(pair) => {
                let parts = RsaPublicKeyComponents::<Vec<u8>>::from(pair.public());
                Jwk {
                    kty: "RSA".into(),
                    n: Some(b64_encode(&parts.n)),
                    e: Some(b64_encode(&parts.e)),
                    ..Jwk::default()
                }
            }
            Pair::Ed25519(pair) => Jwk {
                kty: "OKP".into(),
                crv: Some("Ed25519".into()),
                x: Some(b64_encode(pair.public_key().as_ref())),
                ..Jwk::default()
            },
        }
    }

    /// Signs `claims` as a compact JWS. The header is `header` with `alg` set to this key's
    /// algorithm and `kid` set to this key's id (when it has one); every other member of
    /// `header` (`typ`, `jwk`, ...) is kept as given.
    pub fn sign_jwt(
        &self,
        header: &Map<String, Value>,
        claims: &Map<String, Value>,
    ) -> Result<String, JoseError> {
        self.sign_compact(header, claims, true)
    }

    pub(crate) fn sign_compact(
        &self,
        header: &Map<String, Value>,
        claims: &Map<String, Value>,
        with_kid: bool,
    ) -> Result<String, JoseError> {
        let mut header = header.clone();
        header.insert("alg".into(), Value::String(self.alg.as_str().into()));
        if let (true, Some(kid)) = (with_kid, &self.kid) {
            header.insert("kid".into(), Value::String(kid.clone()));
        }
        let header = serde_json::to_vec(&header).map_err(|_| JoseError::InvalidArgument("header"))?;
        let claims = serde_json::to_vec(claims).map_err(|_| JoseError::InvalidArgument("claims"))?;
        let mut token = b64_encode(&header);
        token.push('.');
        token.push_str(&b64_encode(&claims));
        let signature = self.sign_bytes(token.as_bytes())?;
        token.push('.');
        token.push_str(&b64_encode(&signature));
        Ok(token)
    }

    pub(crate) fn sign_bytes(&self, message: &[u8]) -> Result<Vec<u8>, JoseError> {
        match &self.pair {
            Pair::Ec(pair, _) => {
                Ok(pair.sign(&self.rng, message).map_err(|_| JoseError::Signing)?.as_ref().to_vec())
            }
            Pair::Ed25519(pair) => Ok(pair.sign(message).as_ref().to_vec()),
            Pair::Rsa(pair) => {
                let padding: &dyn signature::RsaEncoding = match self.alg {
                    Algorithm::RS256 => &signature::RSA_PKCS1_SHA256,
                    Algorithm::RS384 => &signature::RSA_PKCS1_SHA384,
                    Algorithm::RS512 => &signature::RSA_PKCS1_SHA512,
                    Algorithm::PS256 => &signature::RSA_PSS_SHA256,
                    Algorithm::PS384 => &signature::RSA_PSS_SHA384,
                    Algorithm::PS512 => &signature::RSA_PSS_SHA512,
                    _ => return Err(JoseError::Signing),
                };
                let mut out = vec![0u8; pair.public().modulus_len()];
                pair.sign(padding, &self.rng, message, &mut out).map_err(|_| JoseError::Signing)?;
                Ok(out)
            }
        }
    }
}

fn pair_from_pkcs8(der: &[u8], alg: Option<Algorithm>, rng: &SystemRandom) -> Result<Pair, JoseError> {
    let family = alg.map(Algorithm::key_type);
    let wants = |kty: &str| family.is_none_or(|f| f == kty);
    if wants("EC") {
        for curve in [Curve::P256, Curve::P384] {
            if let Ok(pair) = EcdsaKeyPair::from_pkcs8(curve.signing(), der, rng) {
                return Ok(Pair::Ec(pair, curve));
            }
        }
    }
    if wants("OKP") {
        if let Ok(pair) = Ed25519KeyPair::from_pkcs8_maybe_unchecked(der) {
            return Ok(Pair::Ed25519(pair));
        }
    }
    if wants("RSA") {
        if let Ok(pair) = RsaKeyPair::from_pkcs8(der) {
            return Ok(Pair::Rsa(pair));
        }
    }
    Err(if alg.is_some() { ALG_MISMATCH } else { JoseError::InvalidKey("unsupported PKCS#8 key") })
}

/// Reads a SEC1 `ECPrivateKey` by wrapping it in a PKCS#8 `PrivateKeyInfo` for each supported
/// curve in turn; `ring` checks the curve parameters and the embedded public key.
fn pair_from_sec1(sec1: &[u8], rng: &SystemRandom) -> Result<Pair, JoseError> {
    for curve in [Curve::P256, Curve::P384] {
        let mut algorithm_id = Vec::new();
        der_push(&mut algorithm_id, 0x30, curve.pkcs8_algorithm_identifier());
        let mut body = vec![0x02, 0x01, 0x00];
        body.extend_from_slice(&algorithm_id);
        der_push(&mut body, 0x04, sec1);
        let mut pkcs8 = Vec::new();
        der_push(&mut pkcs8, 0x30, &body);
        if let Ok(pair) = EcdsaKeyPair::from_pkcs8(curve.signing(), &pkcs8, rng) {
            return Ok(Pair::Ec(pair, curve));
        }
    }
    Err(JoseError::InvalidKey("unusable SEC1 EC key"))
}

/// Appends one DER TLV (definite length, up to 65535 bytes of content).
fn der_push(out: &mut Vec<u8>, tag: u8, content: &[u8]) {
    out.push(tag);
    let len = content.len();
    if len < 0x80 {
        out.push(len as u8);
    } else if len <= 0xff {
        out.extend_from_slice(&[0x81, len as u8]);
    } else {
        out.extend_from_slice(&[0x82, (len >> 8) as u8, len as u8]);
    }
    out.extend_from_slice(content);
}
