//! A fast hash for keys the server itself defines — tool and prompt names, metric label
//! sets — looked up on every request.
//!
//! A multiply-and-rotate over the key's bytes, a word at a time: a few instructions a word
//! where SipHash (std's default) spends about a hundred per key. It is not keyed, so it is not
//! proof against chosen collisions; it need not be for a table whose keys the server put
//! there: a caller who picks a name that collides only makes its own lookup compare against
//! the few entries that share the hash.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

/// A map keyed by names the server defines, hashed with [`NameHasher`].
pub type NameMap<V> = HashMap<String, V, BuildHasherDefault<NameHasher>>;

/// See [the module](self).
#[derive(Debug, Default, Clone, Copy)]
pub struct NameHasher(u64);

impl NameHasher {
    const K: u64 = 0x517c_c1b7_2722_0a95;

    fn mix(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(Self::K);
    }
}

impl std::hash::Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.mix(u64::from_le_bytes(chunk.try_into().unwrap_or_default()));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.mix(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.mix(u64::from(n));
    }

    fn write_u16(&mut self, n: u16) {
        self.mix(u64::from(n));
    }

    fn write_u32(&mut self, n: u32) {
        self.mix(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.mix(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.mix(n as u64);
    }

    fn write_i64(&mut self, n: i64) {
        self.mix(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use std::hash::{BuildHasher, BuildHasherDefault};

    use super::*;

    #[test]
    fn names_that_differ_hash_apart() {
        let build = BuildHasherDefault::<NameHasher>::default();
        let names = [
            "echo",
            "echo2",
            "ech",
            "",
            "a-much-longer-tool-name-of-many-words",
            "get_weather",
            "get_weathe",
        ];
        let hashes: std::collections::HashSet<u64> = names.iter().map(|n| build.hash_one(n)).collect();
        assert_eq!(hashes.len(), names.len());
        let mut map = NameMap::default();
        for (i, name) in names.iter().enumerate() {
            map.insert((*name).to_owned(), i);
        }
        for (i, name) in names.iter().enumerate() {
            assert_eq!(map.get(*name), Some(&i));
        }
        assert_eq!(map.get("missing"), None);
    }
}
