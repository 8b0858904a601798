//! Requests in flight per principal (docs/DECISIONS.md: 16; excess → `503` with `Retry-After`), so
//! one token holder cannot take the whole process's share.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::gate::{Gate, Permit};

/// Principals tracked before idle ones are forgotten.
const FORGET_ABOVE: usize = 4096;

pub(crate) struct PrincipalLimits {
    per_principal: usize,
    map: Mutex<HashMap<String, Arc<Gate>>>,
}

impl PrincipalLimits {
    pub(crate) fn new(per_principal: usize) -> Self {
        PrincipalLimits { per_principal: per_principal.max(1), map: Mutex::default() }
    }

    /// A slot for one more request of `key`, or `None` when it has its limit in flight. Taken
    /// under the map's lock, so that a principal's gate is never forgotten while a slot is
    /// being taken from it.
    pub(crate) fn try_acquire(&self, key: &str) -> Option<Permit> {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(gate) = map.get(key) {
            return gate.try_one();
        }
        if map.len() >= FORGET_ABOVE {
            // Forget principals with nothing in flight (their gates are full again).
            map.retain(|_, gate| gate.free() < self.per_principal);
        }
        let gate = Gate::new(self.per_principal);
        let permit = gate.try_one();
        map.insert(key.to_owned(), gate);
        permit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_principal_has_its_own_share() {
        let limits = PrincipalLimits::new(2);
        let a1 = limits.try_acquire("a").unwrap();
        let _a2 = limits.try_acquire("a").unwrap();
        assert!(limits.try_acquire("a").is_none());
        assert!(limits.try_acquire("b").is_some());
        drop(a1);
        assert!(limits.try_acquire("a").is_some());
    }
}
