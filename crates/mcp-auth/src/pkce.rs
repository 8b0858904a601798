//! PKCE (RFC 7636) with the `S256` method, and OAuth `state` values.
//!
//! MCP clients must use `S256` and must refuse an authorization server whose metadata lacks
//! `code_challenge_methods_supported` (see
//! [`AuthorizationServerMetadata::supports_pkce_s256`](crate::metadata::AuthorizationServerMetadata::supports_pkce_s256)).

use ring::digest;

use crate::util::{b64_encode, constant_time_eq, random_bytes};

/// A code verifier and its `S256` code challenge.
///
/// `Debug` does not show the verifier.
#[derive(Clone, PartialEq, Eq)]
pub struct Pkce {
    /// The code verifier, sent with the token request. Keep it secret until then.
    pub verifier: String,
    /// `BASE64URL(SHA256(verifier))`, sent with the authorization request.
    pub challenge: String,
}

impl std::fmt::Debug for Pkce {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pkce").field("verifier", &"<redacted>").field("challenge", &self.challenge).finish()
    }
}

impl Pkce {
    /// The method name for the authorization request's `code_challenge_method`.
    pub const METHOD: &'static str = "S256";

    /// A fresh pair: the verifier is 43 characters (256 bits from the operating system's CSPRNG,
    /// base64url), all in the unreserved set of RFC 7636 §4.1.
    ///
    /// # Panics
    ///
    /// If the operating system's random number generator fails; there is no safe fallback. Use
    /// [`Pkce::try_new`] to handle that instead.
    #[allow(clippy::new_without_default)] // a random value is not a default
    pub fn new() -> Self {
        Self::try_new().expect("the operating system's random number generator failed")
    }

    /// Like [`Pkce::new`], reporting a random number generator failure instead of panicking.
    pub fn try_new() -> Result<Self, getrandom::Error> {
        let verifier = b64_encode(&random_bytes(32)?);
        Ok(Self::from_verifier(verifier))
    }

    /// The pair for a known verifier (no check that it is well-formed: see
    /// [`is_valid_verifier`]).
    pub fn from_verifier(verifier: impl Into<String>) -> Self {
        let verifier = verifier.into();
        let challenge = s256(&verifier);
        Pkce { verifier, challenge }
    }
}

/// The `S256` challenge of `verifier`: `BASE64URL(SHA256(ASCII(verifier)))`.
pub fn s256(verifier: &str) -> String {
    b64_encode(digest::digest(&digest::SHA256, verifier.as_bytes()).as_ref())
}

/// Whether `verifier` is 43 to 128 characters of `[A-Za-z0-9-._~]` (RFC 7636 §4.1).
pub fn is_valid_verifier(verifier: &str) -> bool {
    (43..=128).contains(&verifier.len())
        && verifier.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// Whether `verifier` is well-formed and its `S256` challenge is `challenge` (the authorization
/// server's check).
pub fn verify_s256(verifier: &str, challenge: &str) -> bool {
    is_valid_verifier(verifier) && constant_time_eq(s256(verifier).as_bytes(), challenge.as_bytes())
}

/// A fresh OAuth `state` value: 256 bits from the operating system's CSPRNG, base64url (43
/// URL-safe characters).
///
/// # Panics
///
/// If the operating system's random number generator fails.
pub fn random_state() -> String {
    let bytes = random_bytes(32).expect("the operating system's random number generator failed");
    b64_encode(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc7636_appendix_b_vector() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        assert_eq!(s256(verifier), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
        let pair = Pkce::from_verifier(verifier);
        assert_eq!(pair.challenge, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
        assert!(verify_s256(verifier, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"));
        assert!(!verify_s256(verifier, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cN"));
    }

    #[test]
    fn fresh_pairs_are_well_formed_and_distinct() {
        let a = Pkce::new();
        let b = Pkce::new();
        assert_ne!(a.verifier, b.verifier);
        for p in [&a, &b] {
            assert!(is_valid_verifier(&p.verifier), "{}", p.verifier.len());
            assert_eq!(p.challenge, s256(&p.verifier));
            assert!(verify_s256(&p.verifier, &p.challenge));
        }
        assert!(!format!("{a:?}").contains(&a.verifier));
    }

    #[test]
    fn verifier_syntax() {
        assert!(!is_valid_verifier(&"a".repeat(42)));
        assert!(is_valid_verifier(&"a".repeat(43)));
        assert!(is_valid_verifier(&"a".repeat(128)));
        assert!(!is_valid_verifier(&"a".repeat(129)));
        assert!(is_valid_verifier(&format!("{}-._~", "Z9".repeat(20))));
        assert!(!is_valid_verifier(&format!("{}+", "a".repeat(43))));
        assert!(!is_valid_verifier(&format!("{}=", "a".repeat(43))));
    }

    #[test]
    fn states_are_url_safe_and_distinct() {
        let a = random_state();
        let b = random_state();
        assert_ne!(a, b);
        assert!(a.len() >= 22);
        assert!(a.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'));
    }
}
