//! JWT claims validation (RFC 7519 §4.1).

use std::time::{Duration, SystemTime};

use serde_json::{Map, Value};

use crate::util::unix_seconds;

/// What [`validate_claims`] checks.
///
/// `Default` checks nothing about issuer and audience (both lists empty), requires `exp`, and
/// allows 60 s of clock skew. A resource server must fill in `issuers` and `audiences`.
///
/// `#[non_exhaustive]` (as is [`ProofCheck`](crate::dpop::ProofCheck)): built with
/// [`Validation::new`] or `Default` and the `with_*` setters.
///
/// ```
/// use mcp_auth::jose::{Validation, validate_claims};
///
/// let v = Validation::new("https://as.example", "https://rs.example").with_require_exp(false);
/// let claims = serde_json::json!({"iss": "https://as.example", "aud": "https://rs.example"});
/// assert!(validate_claims(claims.as_object().unwrap(), &v).is_ok());
/// assert!(validate_claims(claims.as_object().unwrap(), &v.with_require_exp(true)).is_err());
/// ```
///
/// ```compile_fail
/// let v = mcp_auth::jose::Validation { require_exp: false, ..Default::default() };
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Validation {
    /// Accepted `iss` values, compared as exact strings. Empty: `iss` is not checked.
    pub issuers: Vec<String>,
    /// Accepted audiences; `aud` (a string or an array of strings) must contain one of them,
    /// compared as exact strings. Empty: `aud` is not checked.
    pub audiences: Vec<String>,
    /// Clock skew allowed on `exp`, `nbf` and `iat`. Values over [`Validation::MAX_LEEWAY`] are
    /// treated as that maximum.
    pub leeway: Duration,
    /// Whether a token without `exp` is refused.
    pub require_exp: bool,
    /// The time to validate at; `None` is the current time.
    pub now: Option<SystemTime>,
}

impl Validation {
    /// Sets [`issuers`](Self::issuers).
    #[must_use]
    pub fn with_issuers(mut self, issuers: Vec<String>) -> Self {
        self.issuers = issuers;
        self
    }

    /// Sets [`audiences`](Self::audiences).
    #[must_use]
    pub fn with_audiences(mut self, audiences: Vec<String>) -> Self {
        self.audiences = audiences;
        self
    }

    /// Sets [`leeway`](Self::leeway).
    #[must_use]
    pub fn with_leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// Sets [`require_exp`](Self::require_exp).
    #[must_use]
    pub fn with_require_exp(mut self, require_exp: bool) -> Self {
        self.require_exp = require_exp;
        self
    }

    /// Sets [`now`](Self::now).
    #[must_use]
    pub fn with_now(mut self, now: Option<SystemTime>) -> Self {
        self.now = now;
        self
    }
}

impl Validation {
    /// The largest leeway honoured: 5 minutes.
    pub const MAX_LEEWAY: Duration = Duration::from_secs(300);
    /// The default leeway: 60 seconds.
    pub const DEFAULT_LEEWAY: Duration = Duration::from_secs(60);

    /// Checks for tokens of one issuer meant for one audience, with the defaults otherwise.
    pub fn new(issuer: impl Into<String>, audience: impl Into<String>) -> Self {
        Validation { issuers: vec![issuer.into()], audiences: vec![audience.into()], ..Validation::default() }
    }
}

impl Default for Validation {
    fn default() -> Self {
        Validation {
            issuers: Vec::new(),
            audiences: Vec::new(),
            leeway: Validation::DEFAULT_LEEWAY,
            require_exp: true,
            now: None,
        }
    }
}

/// Why claims were refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ClaimsError {
    /// `iss` is none of the accepted issuers.
    #[error("token issued by an unexpected issuer")]
    WrongIssuer,
    /// `aud` contains none of the accepted audiences.
    #[error("token not meant for this audience")]
    WrongAudience,
    /// `exp` has passed (beyond the leeway).
    #[error("token expired")]
    Expired,
    /// `nbf` is in the future (beyond the leeway).
    #[error("token not yet valid")]
    NotYetValid,
    /// `iat` is in the future (beyond the leeway).
    #[error("token issued in the future")]
    IssuedInFuture,
    /// A required claim is absent (its name).
    #[error("required claim {0} is missing")]
    Missing(&'static str),
    /// A registered claim has the wrong JSON type (`exp` not a number, `aud` not a string or
    /// array of strings, ...).
    #[error("a registered claim has the wrong type")]
    Malformed,
}

/// Validates the registered claims of a verified token:
///
/// * `iss` must be present and equal (exact string) to one of `v.issuers`, when that is not empty;
/// * `aud` must be present and be, or contain, one of `v.audiences`, when that is not empty;
/// * `exp` must be present when `v.require_exp`; the token is expired once `now >= exp + leeway`;
/// * `nbf`, when present: refused while `now + leeway < nbf`;
/// * `iat`, when present: refused when `iat > now + leeway`.
///
/// Times are NumericDate values (JSON numbers, fractions allowed). Checks run in the order
/// issuer, audience, `exp`, `nbf`, `iat`; the first failure is returned.
pub fn validate_claims(claims: &Map<String, Value>, v: &Validation) -> Result<(), ClaimsError> {
    if !v.issuers.is_empty() {
        let iss = match claims.get("iss") {
            None => return Err(ClaimsError::Missing("iss")),
            Some(Value::String(iss)) => iss,
            Some(_) => return Err(ClaimsError::Malformed),
        };
        if !v.issuers.iter().any(|i| i == iss) {
            return Err(ClaimsError::WrongIssuer);
        }
    }
    if !v.audiences.is_empty() {
        let matches = |aud: &str| v.audiences.iter().any(|a| a == aud);
        let ok = match claims.get("aud") {
            None => return Err(ClaimsError::Missing("aud")),
            Some(Value::String(aud)) => matches(aud),
            Some(Value::Array(items)) => {
                let mut found = false;
                for item in items {
                    let Value::String(aud) = item else { return Err(ClaimsError::Malformed) };
                    found |= matches(aud);
                }
                found
            }
            Some(_) => return Err(ClaimsError::Malformed),
        };
        if !ok {
            return Err(ClaimsError::WrongAudience);
        }
    }
    let now = unix_seconds(v.now);
    let leeway = v.leeway.min(Validation::MAX_LEEWAY).as_secs_f64();
    match numeric_date(claims, "exp")? {
        Some(exp) if now >= exp + leeway => return Err(ClaimsError::Expired),
        None if v.require_exp => return Err(ClaimsError::Missing("exp")),
        _ => {}
    }
    if numeric_date(claims, "nbf")?.is_some_and(|nbf| now + leeway < nbf) {
        return Err(ClaimsError::NotYetValid);
    }
    if numeric_date(claims, "iat")?.is_some_and(|iat| iat > now + leeway) {
        return Err(ClaimsError::IssuedInFuture);
    }
    Ok(())
}

fn numeric_date(claims: &Map<String, Value>, name: &'static str) -> Result<Option<f64>, ClaimsError> {
    match claims.get(name) {
        None => Ok(None),
        Some(Value::Number(n)) => {
            n.as_f64().filter(|t| t.is_finite()).map(Some).ok_or(ClaimsError::Malformed)
        }
        Some(_) => Err(ClaimsError::Malformed),
    }
}
