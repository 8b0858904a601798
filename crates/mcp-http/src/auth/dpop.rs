//! DPoP (RFC 9449) on the resource server: the proof must be one `DPoP` header, signed with an
//! allowed algorithm by the key the token is bound to (`cnf.jkt`), for this request's method
//! and URL, carry the token's hash (`ath`), be recent, never replayed (a bounded cache of proof
//! ids), and — when nonces are on — carry a nonce this server issued recently.

use std::collections::{HashSet, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine as _;
use http::HeaderMap;
use mcp_auth::dpop::{ProofCheck, verify_proof};
use mcp_types::JsonValue;

use super::config::DpopConfig;
use super::{Denial, MAX_TOKEN};

/// Proof ids seen recently, forgotten once a proof with them could no longer be accepted.
#[derive(Default)]
struct ReplayCache {
    seen: HashSet<String>,
    order: VecDeque<(Instant, String)>,
}

/// Server nonces: the current one and the one before it are accepted.
struct Nonces {
    current: String,
    previous: Option<String>,
    rotated: Instant,
}

pub(crate) struct DpopState {
    pub(crate) config: DpopConfig,
    replay: Mutex<ReplayCache>,
    nonces: Option<Mutex<Nonces>>,
}

fn random_nonce() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the operating system's random number generator failed");
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

impl DpopState {
    pub(crate) fn new(config: DpopConfig) -> Self {
        let nonces = config
            .nonce
            .then(|| Mutex::new(Nonces { current: random_nonce(), previous: None, rotated: Instant::now() }));
        DpopState { config, replay: Mutex::default(), nonces }
    }

    /// The nonce to hand out now (rotated every `max_age`), when nonces are on.
    pub(crate) fn current_nonce(&self) -> Option<String> {
        let mut nonces = self.nonces.as_ref()?.lock().unwrap_or_else(|e| e.into_inner());
        if nonces.rotated.elapsed() >= self.config.max_age {
            let next = random_nonce();
            nonces.previous = Some(std::mem::replace(&mut nonces.current, next));
            nonces.rotated = Instant::now();
        }
        Some(nonces.current.clone())
    }

    fn nonce_accepted(&self, nonce: &str) -> bool {
        let _ = self.current_nonce(); // rotate if due
        let Some(nonces) = &self.nonces else { return true };
        let nonces = nonces.lock().unwrap_or_else(|e| e.into_inner());
        nonces.current == nonce || nonces.previous.as_deref() == Some(nonce)
    }

    /// Checks the request's proof for `token`, bound to `jkt`.
    pub(crate) fn check(
        &self,
        headers: &HeaderMap,
        method: &str,
        htu: &str,
        token: &str,
        jkt: &str,
    ) -> Result<(), Denial> {
        let mut values = headers.get_all("dpop").iter();
        let Some(proof) = values.next() else {
            return Err(Denial::InvalidProof("a DPoP proof is required with a DPoP-bound token".into()));
        };
        if values.next().is_some() {
            return Err(Denial::InvalidProof("more than one DPoP header".into()));
        }
        if proof.len() > MAX_TOKEN {
            return Err(Denial::InvalidProof("the DPoP proof is too large".into()));
        }
        let proof = proof.to_str().map_err(|_| Denial::InvalidProof("the DPoP proof is not ASCII".into()))?;
        let check = ProofCheck::new(method, htu)
            .with_access_token(Some(token))
            .with_expected_jkt(Some(jkt))
            .with_max_age(self.config.max_age)
            .with_allowed(&self.config.algorithms);
        let info = verify_proof(proof, &check).map_err(|e| Denial::InvalidProof(e.to_string()))?;
        if self.nonces.is_some() {
            // The proof is verified: its claims are authentic.
            let nonce = mcp_auth::jose::decode_unverified(proof)
                .ok()
                .and_then(|(_, claims)| claims.get("nonce").and_then(JsonValue::as_str).map(str::to_owned));
            if !nonce.is_some_and(|n| self.nonce_accepted(&n)) {
                return Err(Denial::UseNonce);
            }
        }
        self.remember(&format!("{}:{}", info.jkt, info.jti))
    }

    /// Records a proof id; a second use is a replay.
    fn remember(&self, id: &str) -> Result<(), Denial> {
        let now = Instant::now();
        // A proof is acceptable for `max_age` either side of its `iat`.
        let lifetime = self.config.max_age * 2 + Duration::from_secs(1);
        let mut cache = self.replay.lock().unwrap_or_else(|e| e.into_inner());
        while cache.order.front().is_some_and(|(at, _)| now.duration_since(*at) > lifetime) {
            if let Some((_, old)) = cache.order.pop_front() {
                cache.seen.remove(&old);
            }
        }
        if cache.seen.contains(id) {
            return Err(Denial::InvalidProof("the DPoP proof was already used".into()));
        }
        if cache.seen.len() >= self.config.replay_capacity {
            return Err(Denial::Busy);
        }
        cache.seen.insert(id.to_owned());
        cache.order.push_back((now, id.to_owned()));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replays_are_refused_and_the_cache_is_bounded() {
        let state = DpopState::new(DpopConfig { replay_capacity: 2, ..DpopConfig::default() });
        assert!(state.remember("k:1").is_ok());
        assert!(matches!(state.remember("k:1"), Err(Denial::InvalidProof(_))));
        assert!(state.remember("k:2").is_ok());
        assert!(matches!(state.remember("k:3"), Err(Denial::Busy)));
    }

    #[test]
    fn nonces_rotate_and_the_previous_one_stays_valid() {
        let state =
            DpopState::new(DpopConfig { nonce: true, max_age: Duration::ZERO, ..DpopConfig::default() });
        let first = state.current_nonce().unwrap();
        let second = state.current_nonce().unwrap();
        assert_ne!(first, second);
        assert!(state.nonce_accepted(&second) || state.nonce_accepted(&first));
        assert!(!state.nonce_accepted("made-up"));
        let off = DpopState::new(DpopConfig::default());
        assert!(off.current_nonce().is_none());
    }
}
