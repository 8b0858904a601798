//! Items the macros need; not part of the public API.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, Visitor};

/// A map key or short string that borrows from the input when it can.
#[derive(Debug)]
pub struct MapKey<'de>(Cow<'de, str>);

impl MapKey<'_> {
    /// The key as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for MapKey<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = MapKey<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(MapKey(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(MapKey(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
                Ok(MapKey(Cow::Owned(v)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

thread_local! {
    static UNKNOWN_MEMBERS: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Records that a decoder kept a member it does not model in `extra`. Tests use this to prove
/// that every member of the specification's examples is recognized, not merely carried; the
/// cost is paid only on the rare path of an unknown member.
pub fn note_unknown_member(name: &str) {
    UNKNOWN_MEMBERS.with(|m| {
        let mut m = m.borrow_mut();
        // Bounded so that a peer sending many unknown members cannot grow it without limit.
        if m.len() < 64 {
            m.push(name.to_owned());
        }
    });
}

/// Takes the unknown members recorded on this thread since the last call.
pub fn take_unknown_members() -> Vec<String> {
    UNKNOWN_MEMBERS.with(|m| std::mem::take(&mut *m.borrow_mut()))
}
