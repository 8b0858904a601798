//! Sealed legacy session ids: the session's state (its negotiated revision, the client's
//! capabilities and identity, the principal it is bound to, its expiry) encrypted and
//! authenticated (ChaCha20-Poly1305) under a key from the configuration, so that any server
//! holding the same key — a replica behind a plain load balancer — can take the session up
//! without a shared store.
//!
//! What is not in the id stays with the process that had it: the log level and resource
//! subscriptions the client set (a replica starts without), the streams it can resume (another
//! replica answers `Last-Event-ID` with 404), and a `DELETE` (another replica accepts the id
//! until it expires).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use mcp_types::{ClientCapabilities, Implementation, ProtocolVersion};
use ring::aead::{self, Aad, LessSafeKey, Nonce, UnboundKey};
use serde::{Deserialize, Serialize};

/// The longest sealed id (its base64 text) issued; a session whose state would not fit gets a
/// plain (local) id instead.
pub(crate) const MAX_SEALED_ID: usize = 4096;

/// The key that seals legacy session ids ([`HttpConfig::session_key`](crate::HttpConfig)):
/// 32 bytes, the same for every replica that must serve another's sessions.
#[derive(Clone)]
pub struct SessionKey(std::sync::Arc<LessSafeKey>, [u8; 32]);

impl std::fmt::Debug for SessionKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionKey(..)")
    }
}

impl SessionKey {
    /// A key from its 32 bytes.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        let key = UnboundKey::new(&aead::CHACHA20_POLY1305, &bytes).expect("a 32-byte ChaCha20-Poly1305 key");
        // A second key for what the server behind the endpoint protects (its MRTR request
        // states, the tasks a gateway passes on): derived, never the sealing key itself.
        let derived = ring::hmac::sign(
            &ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &bytes),
            b"mcpkit request-state key v1",
        );
        let mut state = [0u8; 32];
        state.copy_from_slice(derived.as_ref());
        SessionKey(std::sync::Arc::new(LessSafeKey::new(key)), state)
    }

    /// A key derived from this one for the server behind the endpoint
    /// (`ServerBuilder::request_state_key`): replicas sharing the session key then accept
    /// each other's request states and relayed task ids too.
    pub fn derived_state_key(&self) -> [u8; 32] {
        self.1
    }

    /// A key from text: 64 hexadecimal digits, or 43 characters of unpadded base64url (either
    /// standing for 32 bytes).
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let bytes: Vec<u8> = if text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
            (0..32).map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).unwrap_or(0)).collect()
        } else {
            URL_SAFE_NO_PAD
                .decode(text.trim_end_matches('='))
                .map_err(|_| "a session key is 64 hex digits or 32 bytes of base64url".to_owned())?
        };
        let bytes: [u8; 32] =
            bytes.try_into().map_err(|b: Vec<u8>| format!("a session key is 32 bytes, not {}", b.len()))?;
        Ok(SessionKey::from_bytes(bytes))
    }
}

/// What a sealed id carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct SealedSession {
    /// The negotiated revision.
    #[serde(rename = "v")]
    pub(crate) version: String,
    /// The client's capabilities.
    #[serde(rename = "c")]
    pub(crate) capabilities: ClientCapabilities,
    /// The client's identity.
    #[serde(rename = "i")]
    pub(crate) client_info: Implementation,
    /// The binding key of the principal that created it (authorization on).
    #[serde(rename = "o", default, skip_serializing_if = "Option::is_none")]
    pub(crate) owner: Option<String>,
    /// Expiry, seconds since the epoch.
    #[serde(rename = "e")]
    pub(crate) expires: u64,
}

impl SealedSession {
    pub(crate) fn new(
        version: ProtocolVersion,
        capabilities: ClientCapabilities,
        client_info: Implementation,
        owner: Option<String>,
        lifetime: Duration,
    ) -> Self {
        SealedSession {
            version: version.as_str().to_owned(),
            capabilities,
            client_info,
            owner,
            expires: now().saturating_add(lifetime.as_secs()),
        }
    }

    pub(crate) fn version(&self) -> Option<ProtocolVersion> {
        ProtocolVersion::parse(&self.version).filter(|v| !v.is_modern())
    }
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// Seals `session`: base64url(nonce ‖ ciphertext ‖ tag). `None` when it would be longer than
/// [`MAX_SEALED_ID`].
pub(crate) fn seal(key: &SessionKey, session: &SealedSession) -> Option<String> {
    let mut data = serde_json::to_vec(session).ok()?;
    let mut nonce = [0u8; 12];
    getrandom::fill(&mut nonce).ok()?;
    key.0.seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), Aad::empty(), &mut data).ok()?;
    let mut bytes = Vec::with_capacity(12 + data.len());
    bytes.extend_from_slice(&nonce);
    bytes.extend_from_slice(&data);
    let id = URL_SAFE_NO_PAD.encode(bytes);
    (id.len() <= MAX_SEALED_ID).then_some(id)
}

/// Opens a sealed id: `None` when it was not sealed by `key`, was altered, or has expired.
pub(crate) fn open(key: &SessionKey, id: &str) -> Option<SealedSession> {
    if id.len() > MAX_SEALED_ID {
        return None;
    }
    let mut bytes = URL_SAFE_NO_PAD.decode(id).ok()?;
    if bytes.len() < 12 + aead::CHACHA20_POLY1305.tag_len() {
        return None;
    }
    let nonce: [u8; 12] = bytes[..12].try_into().ok()?;
    let plain =
        key.0.open_in_place(Nonce::assume_unique_for_key(nonce), Aad::empty(), &mut bytes[12..]).ok()?;
    let session: SealedSession = serde_json::from_slice(plain).ok()?;
    (session.expires >= now()).then_some(session)
}

/// What the benchmark measures (`benches/sealed.rs`): sealing the state of a session whose
/// client declared `capabilities`, then opening the id. Not an API.
#[doc(hidden)]
pub fn bench_seal_and_open(key: &SessionKey, capabilities: &ClientCapabilities) -> bool {
    let session = SealedSession::new(
        ProtocolVersion::V2025_11_25,
        capabilities.clone(),
        Implementation::new("claude-ai", "0.1.0"),
        Some("https://issuer.example/ user-1234".to_owned()),
        Duration::from_secs(86_400),
    );
    seal(key, &session).and_then(|id| open(key, &id)).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(lifetime: Duration) -> SealedSession {
        SealedSession::new(
            ProtocolVersion::V2025_11_25,
            ClientCapabilities::default(),
            Implementation::new("client", "1.0"),
            Some("alice".into()),
            lifetime,
        )
    }

    #[test]
    fn a_sealed_id_opens_with_its_key_only() {
        let key = SessionKey::from_bytes([7; 32]);
        let s = session(Duration::from_secs(60));
        let id = seal(&key, &s).unwrap();
        assert_eq!(open(&key, &id), Some(s.clone()));
        assert_eq!(open(&SessionKey::from_bytes([8; 32]), &id), None, "another key");
        // Two seals of the same state differ (a fresh nonce each).
        assert_ne!(seal(&key, &s).unwrap(), id);
        // Any altered byte is refused.
        let mut bytes = URL_SAFE_NO_PAD.decode(&id).unwrap();
        for i in [0, 12, bytes.len() - 1] {
            bytes[i] ^= 1;
            assert_eq!(open(&key, &URL_SAFE_NO_PAD.encode(&bytes)), None, "byte {i} altered");
            bytes[i] ^= 1;
        }
        assert_eq!(open(&key, "not base64!"), None);
        assert_eq!(open(&key, "AAAA"), None);
    }

    #[test]
    fn an_expired_id_is_refused() {
        let key = SessionKey::from_bytes([7; 32]);
        let mut s = session(Duration::ZERO);
        s.expires = now() - 1;
        let id = seal(&key, &s).unwrap();
        assert_eq!(open(&key, &id), None);
    }

    #[test]
    fn keys_parse_from_hex_and_base64url() {
        let hex = "00".repeat(31) + "ff";
        let a = SessionKey::parse(&hex).unwrap();
        let b = SessionKey::parse(
            &URL_SAFE_NO_PAD.encode([0u8; 31].iter().chain(&[0xff]).copied().collect::<Vec<_>>()),
        )
        .unwrap();
        let id = seal(&a, &session(Duration::from_secs(60))).unwrap();
        assert!(open(&b, &id).is_some(), "the same key from either form");
        assert!(SessionKey::parse("abc").is_err());
        assert!(SessionKey::parse(&"00".repeat(31)).is_err());
    }

    #[test]
    fn a_state_too_large_for_an_id_is_not_sealed() {
        let key = SessionKey::from_bytes([7; 32]);
        let mut s = session(Duration::from_secs(60));
        s.client_info = Implementation::new("x".repeat(MAX_SEALED_ID), "1");
        assert_eq!(seal(&key, &s), None);
    }
}
