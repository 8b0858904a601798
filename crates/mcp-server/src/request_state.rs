//! The MRTR `requestState`: opaque to the client, integrity-protected for the server.
//!
//! Format: `base64url(payload) "." base64url(HMAC-SHA256(key, payload))`, where the payload is
//! JSON holding the method, a digest of the request's salient params (tool name and
//! arguments, prompt name and arguments, resource URI), a digest of the caller (the
//! authenticated principal's issuer, subject and client id, or none), an expiry, and the
//! answers the client gave in earlier rounds (the client only sends the current round's
//! answers on each retry). A state that fails verification, has expired, belongs to another
//! request or was issued to another caller is a JSON-RPC error, never a result
//! (docs/DECISIONS.md).

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use mcp_types::{InputResponse, JsonObject};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::principal::Principal;

type HmacSha256 = Hmac<Sha256>;

/// A server's key for protecting request state.
#[derive(Clone)]
pub struct StateKey([u8; 32]);

impl std::fmt::Debug for StateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateKey(..)")
    }
}

impl StateKey {
    /// A fresh random key (per process). Servers behind a load balancer share one key with
    /// [`StateKey::from_bytes`] so any instance can verify any instance's state.
    pub fn random() -> Self {
        let mut key = [0u8; 32];
        fill_random(&mut key);
        StateKey(key)
    }

    /// A key from bytes.
    pub fn from_bytes(key: [u8; 32]) -> Self {
        StateKey(key)
    }
}

fn fill_random(buf: &mut [u8]) {
    // The OS CSPRNG does not fail on supported platforms; if it ever did, refusing to run is
    // better than protecting state with a predictable key.
    getrandom::fill(buf).expect("the operating system's random number generator failed");
}

/// A short random hex string.
pub(crate) fn nonce() -> String {
    let mut bytes = [0u8; 8];
    fill_random(&mut bytes);
    hex(&bytes)
}

/// Lowercase hex of `bytes`, written into one string (no allocation per byte).
fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(char::from(DIGITS[usize::from(b >> 4)]));
        out.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    out
}

#[derive(Serialize, Deserialize)]
struct Payload {
    /// The method.
    m: String,
    /// Hex SHA-256 of the salient params.
    d: String,
    /// Hex SHA-256 of the caller's identity ([`caller`]).
    c: String,
    /// Expiry, seconds since the epoch.
    e: u64,
    /// Answers from earlier rounds.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    a: BTreeMap<String, InputResponse>,
    /// A nonce, so that two rounds never produce the same state.
    n: String,
    /// What a handler asked to carry to the retry (a gateway: its upstream's own state).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    k: Option<String>,
}

/// Why a request state was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StateError {
    /// Not produced by this server's key, or altered.
    #[error("requestState failed integrity verification")]
    Tampered,
    /// Older than its lifetime.
    #[error("requestState has expired")]
    Expired,
    /// Produced for a different request.
    #[error("requestState belongs to a different request")]
    Mismatch,
    /// Issued to another caller (another authenticated principal, or an anonymous one).
    #[error("requestState was issued to another caller")]
    OtherCaller,
}

/// The digest binding a state to its caller: the identity of the principal the transport
/// authenticated (issuer, subject, client id), or the anonymous caller. Its scopes and claims
/// are not part of it, so a refreshed token of the same principal keeps its states.
pub(crate) fn caller(principal: Option<&Principal>) -> String {
    let mut hasher = Sha256::new();
    match principal {
        None => hasher.update(b"anonymous"),
        Some(p) => {
            hasher.update(b"principal");
            for part in [&p.issuer, &p.subject, &p.client_id] {
                // A length prefix keeps (absent, "x") apart from ("", "x") and every split.
                match part {
                    None => hasher.update([0]),
                    Some(v) => {
                        hasher.update([1]);
                        hasher.update((v.len() as u64).to_be_bytes());
                        hasher.update(v.as_bytes());
                    }
                }
            }
        }
    }
    hex(&hasher.finalize())
}

/// The digest binding a state to a request: method plus its salient params. Computed only for
/// a request that may ask the client something (see `Call::bind_request_state`).
pub(crate) fn digest(method: &str, subject: &str, arguments: Option<&JsonObject>) -> String {
    #[cfg(test)]
    DIGESTS.with(|n| n.set(n.get() + 1));
    let mut hasher = Sha256::new();
    hasher.update(method.as_bytes());
    hasher.update([0]);
    hasher.update(subject.as_bytes());
    hasher.update([0]);
    if let Some(arguments) = arguments {
        // serde_json maps are sorted, so equal arguments serialize to equal bytes; they are
        // written straight into the hash, never into a string first.
        let written = serde_json::to_writer(HashWriter(&mut hasher), arguments);
        debug_assert!(written.is_ok(), "a JSON map always serializes");
    }
    hex(&hasher.finalize())
}

/// Feeds serialized JSON into a hash as it is written.
struct HashWriter<'a>(&'a mut Sha256);

impl std::io::Write for HashWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
thread_local! {
    /// How many digests this thread computed: lets a test see that a call that cannot ask
    /// the client hashes nothing.
    pub(crate) static DIGESTS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

pub(crate) fn mac(key: &StateKey) -> HmacSha256 {
    // HMAC accepts keys of any length; a 32-byte key cannot be rejected.
    <HmacSha256 as KeyInit>::new_from_slice(&key.0).expect("HMAC takes any key length")
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// Seals a new state.
#[cfg(test)]
pub(crate) fn seal(
    key: &StateKey,
    method: &str,
    digest: String,
    caller: String,
    answers: BTreeMap<String, InputResponse>,
    ttl: Duration,
) -> String {
    seal_carrying(key, method, digest, caller, answers, None, ttl)
}

/// Seals a new state that also carries `carried` to the retry, under the same integrity
/// protection and bindings.
pub(crate) fn seal_carrying(
    key: &StateKey,
    method: &str,
    digest: String,
    caller: String,
    answers: BTreeMap<String, InputResponse>,
    carried: Option<String>,
    ttl: Duration,
) -> String {
    let payload = Payload {
        m: method.to_owned(),
        d: digest,
        c: caller,
        e: now() + ttl.as_secs(),
        a: answers,
        n: nonce(),
        k: carried,
    };
    // The payload holds only strings, numbers and already-valid JSON values.
    let json = serde_json::to_vec(&payload).unwrap_or_default();
    let mut m = mac(key);
    m.update(&json);
    let tag = m.finalize().into_bytes();
    format!("{}.{}", URL_SAFE_NO_PAD.encode(&json), URL_SAFE_NO_PAD.encode(tag))
}

/// Verifies a state and returns the answers it carries.
#[cfg(test)]
pub(crate) fn open(
    key: &StateKey,
    state: &str,
    method: &str,
    digest: &str,
    caller: &str,
) -> Result<BTreeMap<String, InputResponse>, StateError> {
    open_carrying(key, state, method, digest, caller).map(|(answers, _)| answers)
}

/// Verifies a state and returns the answers and the carried value it holds.
pub(crate) fn open_carrying(
    key: &StateKey,
    state: &str,
    method: &str,
    digest: &str,
    caller: &str,
) -> Result<(BTreeMap<String, InputResponse>, Option<String>), StateError> {
    let (body, tag) = state.split_once('.').ok_or(StateError::Tampered)?;
    let json = URL_SAFE_NO_PAD.decode(body).map_err(|_| StateError::Tampered)?;
    let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| StateError::Tampered)?;
    let mut m = mac(key);
    m.update(&json);
    m.verify_slice(&tag).map_err(|_| StateError::Tampered)?;
    let payload: Payload = serde_json::from_slice(&json).map_err(|_| StateError::Tampered)?;
    if payload.e < now() {
        return Err(StateError::Expired);
    }
    if payload.m != method || payload.d != digest {
        return Err(StateError::Mismatch);
    }
    if payload.c != caller {
        return Err(StateError::OtherCaller);
    }
    Ok((payload.a, payload.k))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn anon() -> String {
        caller(None)
    }

    fn answers() -> BTreeMap<String, InputResponse> {
        let mut a = BTreeMap::new();
        a.insert(
            "k".to_owned(),
            serde_json::from_str(r#"{"action":"accept","content":{"ok":true}}"#).unwrap(),
        );
        a
    }

    #[test]
    fn the_digest_hashes_the_compact_json_of_the_arguments() {
        // The arguments are streamed into the hash: the bytes must be exactly their compact
        // JSON text, as when the text was built first, or a state would not match its retry.
        let arguments = serde_json::json!({"b": [1, "two", null], "a": {"x": "é\n"}});
        let mut expected = Sha256::new();
        expected.update(b"tools/call\0t\0");
        expected.update(arguments.to_string().as_bytes());
        let expected: String = expected.finalize().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(digest("tools/call", "t", arguments.as_object()), expected);
        assert_ne!(digest("tools/call", "t", None), expected);
    }

    #[test]
    fn a_sealed_state_opens_with_its_answers() {
        let key = StateKey::random();
        let d = digest("tools/call", "t", serde_json::json!({"x": 1}).as_object());
        let state = seal(&key, "tools/call", d.clone(), anon(), answers(), Duration::from_secs(60));
        assert_eq!(open(&key, &state, "tools/call", &d, &anon()).unwrap(), answers());
    }

    #[test]
    fn tampering_another_key_expiry_and_mismatch_are_refused() {
        let key = StateKey::random();
        let d = digest("tools/call", "t", None);
        let state = seal(&key, "tools/call", d.clone(), anon(), answers(), Duration::from_secs(60));
        assert_eq!(
            open(&key, &format!("{state}-TAMPERED"), "tools/call", &d, &anon()),
            Err(StateError::Tampered)
        );
        assert_eq!(open(&key, "garbage", "tools/call", &d, &anon()), Err(StateError::Tampered));
        let (body, tag) = state.split_once('.').unwrap();
        let mut bytes = URL_SAFE_NO_PAD.decode(body).unwrap();
        bytes[3] ^= 1;
        assert_eq!(
            open(&key, &format!("{}.{tag}", URL_SAFE_NO_PAD.encode(bytes)), "tools/call", &d, &anon()),
            Err(StateError::Tampered)
        );
        assert_eq!(open(&StateKey::random(), &state, "tools/call", &d, &anon()), Err(StateError::Tampered));
        assert_eq!(open(&key, &state, "prompts/get", &d, &anon()), Err(StateError::Mismatch));
        assert_eq!(
            open(&key, &state, "tools/call", &digest("tools/call", "other", None), &anon()),
            Err(StateError::Mismatch)
        );
        let expired = seal(&key, "tools/call", d.clone(), anon(), answers(), Duration::ZERO);
        // Expiry has one-second resolution: wait until the state is strictly older.
        let payload: Payload =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(expired.split('.').next().unwrap()).unwrap())
                .unwrap();
        if payload.e >= now() {
            std::thread::sleep(Duration::from_millis(1100));
        }
        assert_eq!(open(&key, &expired, "tools/call", &d, &anon()), Err(StateError::Expired));
    }

    #[test]
    fn a_carried_value_travels_sealed() {
        let key = StateKey::random();
        let d = digest("tools/call", "t", None);
        let state = seal_carrying(
            &key,
            "tools/call",
            d.clone(),
            anon(),
            answers(),
            Some("up".into()),
            Duration::from_secs(60),
        );
        assert_eq!(
            open_carrying(&key, &state, "tools/call", &d, &anon()).unwrap(),
            (answers(), Some("up".into()))
        );
        let plain = seal(&key, "tools/call", d.clone(), anon(), answers(), Duration::from_secs(60));
        assert_eq!(open_carrying(&key, &plain, "tools/call", &d, &anon()).unwrap().1, None);
    }

    #[test]
    fn two_rounds_never_share_a_state() {
        let key = StateKey::random();
        let d = digest("tools/call", "t", None);
        let a = seal(&key, "tools/call", d.clone(), anon(), BTreeMap::new(), Duration::from_secs(60));
        let b = seal(&key, "tools/call", d, anon(), BTreeMap::new(), Duration::from_secs(60));
        assert_ne!(a, b);
    }

    #[test]
    fn a_state_is_bound_to_its_caller() {
        let key = StateKey::random();
        let d = digest("tools/call", "t", None);
        let alice = Principal::new(Some("https://as".into()), Some("alice".into()), Some("app".into()));
        let bob = Principal::new(Some("https://as".into()), Some("bob".into()), Some("app".into()));
        let state =
            seal(&key, "tools/call", d.clone(), caller(Some(&alice)), answers(), Duration::from_secs(60));
        assert_eq!(open(&key, &state, "tools/call", &d, &caller(Some(&alice))).unwrap(), answers());
        // A refreshed token of the same principal (other scopes, other claims) keeps the state.
        let refreshed = alice.clone().with_scopes(["more"]);
        assert!(open(&key, &state, "tools/call", &d, &caller(Some(&refreshed))).is_ok());
        assert_eq!(open(&key, &state, "tools/call", &d, &caller(Some(&bob))), Err(StateError::OtherCaller));
        assert_eq!(open(&key, &state, "tools/call", &d, &anon()), Err(StateError::OtherCaller));
        let other_issuer =
            Principal::new(Some("https://other".into()), Some("alice".into()), Some("app".into()));
        assert_eq!(
            open(&key, &state, "tools/call", &d, &caller(Some(&other_issuer))),
            Err(StateError::OtherCaller)
        );
        let anonymous = seal(&key, "tools/call", d.clone(), anon(), answers(), Duration::from_secs(60));
        assert_eq!(
            open(&key, &anonymous, "tools/call", &d, &caller(Some(&alice))),
            Err(StateError::OtherCaller)
        );
        // The parts cannot be shifted into one another.
        let shifted = Principal::new(Some("https://asalice".into()), None, Some("app".into()));
        assert_ne!(caller(Some(&alice)), caller(Some(&shifted)));
        assert_ne!(
            caller(Some(&Principal::new(None, Some(String::new()), None))),
            caller(Some(&Principal::new(None, None, None)))
        );
    }
}
