//! Protocol revisions and what each one allows on the wire.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A published MCP revision.
///
/// The wire carries versions as plain strings (a peer may name one this crate has never heard
/// of); this type is what a known string parses into, and it answers the questions the rest of
/// the stack asks about a revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// 2024-11-05: the first revision; HTTP+SSE transport, no batches.
    V2024_11_05,
    /// 2025-03-26: Streamable HTTP, JSON-RPC batches, audio content, tool annotations.
    V2025_03_26,
    /// 2025-06-18: batches removed; structured tool output, elicitation, resource links.
    V2025_06_18,
    /// 2025-11-25: the last legacy revision; icons, URL elicitation, sampling tools, tasks.
    V2025_11_25,
    /// 2026-07-28: the first modern (stateless) revision.
    V2026_07_28,
}

/// Whether a revision establishes a session with `initialize` or carries everything per request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Era {
    /// `initialize` handshake, sessions, server→client requests (2025-11-25 and earlier).
    Legacy,
    /// Per-request `_meta`, `server/discover`, MRTR (2026-07-28 and later).
    Modern,
}

/// A ten-byte revision string as two loads (the first eight bytes, the last two): what
/// [`ProtocolVersion::parse`] compares.
#[inline]
fn key_of(b: &[u8]) -> (u64, u16) {
    let head = u64::from_le_bytes(b[..8].try_into().unwrap_or([0; 8]));
    let tail = u16::from_le_bytes(b[8..10].try_into().unwrap_or([0; 2]));
    (head, tail)
}

impl ProtocolVersion {
    /// Every known revision, oldest first.
    pub const ALL: [ProtocolVersion; 5] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];

    /// The newest revision.
    pub const LATEST: ProtocolVersion = ProtocolVersion::V2026_07_28;

    /// The newest legacy (handshake) revision.
    pub const LATEST_LEGACY: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// The version string as it appears on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// Parses a wire string; `None` for a version this crate does not know.
    ///
    /// Every revision's string is ten bytes: one is recognised by its length and two loads
    /// compared against constants, without comparing it to each revision's text in turn (this
    /// runs several times a request).
    pub fn parse(s: &str) -> Option<Self> {
        let b = s.as_bytes();
        if b.len() != 10 {
            return None;
        }
        let key = key_of(b);
        Self::ALL.into_iter().find(|v| key_of(v.as_str().as_bytes()) == key)
    }

    /// The era of this revision.
    pub const fn era(self) -> Era {
        match self {
            ProtocolVersion::V2026_07_28 => Era::Modern,
            _ => Era::Legacy,
        }
    }

    /// True for modern (stateless) revisions.
    pub const fn is_modern(self) -> bool {
        matches!(self.era(), Era::Modern)
    }

    /// JSON-RPC batches (arrays of messages) are allowed only in 2025-03-26.
    pub const fn allows_batches(self) -> bool {
        matches!(self, ProtocolVersion::V2025_03_26)
    }

    /// Results carry `resultType` (and cacheable ones `ttlMs`/`cacheScope`) from 2026-07-28.
    pub const fn has_result_type(self) -> bool {
        self.is_modern()
    }

    /// The `initialize` handshake exists only in legacy revisions.
    pub const fn has_initialize(self) -> bool {
        !self.is_modern()
    }

    /// Servers may send JSON-RPC requests to clients (sampling, elicitation, roots) only in
    /// legacy revisions; modern ones use MRTR `input_required` results instead.
    pub const fn allows_server_requests(self) -> bool {
        !self.is_modern()
    }

    /// `resources/read` of an unknown URI: `-32002` before 2026-07-28, `-32602` after.
    pub const fn resource_not_found_code(self) -> i64 {
        if self.is_modern() { -32602 } else { -32002 }
    }

    /// The Streamable HTTP transport (one endpoint, `Mcp-Session-Id`) exists from 2025-03-26;
    /// 2024-11-05 uses the HTTP+SSE transport.
    pub const fn has_streamable_http(self) -> bool {
        !matches!(self, ProtocolVersion::V2024_11_05)
    }

    /// The `MCP-Protocol-Version` HTTP header is required from 2025-06-18 on.
    pub const fn requires_version_header(self) -> bool {
        matches!(
            self,
            ProtocolVersion::V2025_06_18 | ProtocolVersion::V2025_11_25 | ProtocolVersion::V2026_07_28
        )
    }

    /// Audio content and tool annotations appear in 2025-03-26.
    pub const fn has_audio_content(self) -> bool {
        !matches!(self, ProtocolVersion::V2024_11_05)
    }

    /// `structuredContent`, `outputSchema`, resource links, elicitation and `title` fields
    /// appear in 2025-06-18.
    pub const fn has_structured_content(self) -> bool {
        matches!(
            self,
            ProtocolVersion::V2025_06_18 | ProtocolVersion::V2025_11_25 | ProtocolVersion::V2026_07_28
        )
    }

    /// Elicitation (`elicitation/create`) appears in 2025-06-18.
    pub const fn has_elicitation(self) -> bool {
        self.has_structured_content()
    }

    /// Icons, URL-mode elicitation, sampling with tools and the experimental tasks appear in
    /// 2025-11-25 (tasks moved to an extension in 2026-07-28).
    pub const fn has_icons(self) -> bool {
        matches!(self, ProtocolVersion::V2025_11_25 | ProtocolVersion::V2026_07_28)
    }

    /// How an error answering an unreadable request names the missing id: revisions from
    /// 2025-11-25 on let an error response omit `id` (and their schemas forbid `null`); older
    /// ones require an `id`, so JSON-RPC 2.0's `"id": null` is the only possible answer.
    pub const fn omits_unknown_error_id(self) -> bool {
        matches!(self, ProtocolVersion::V2025_11_25 | ProtocolVersion::V2026_07_28)
    }

    /// The experimental `tasks/*` methods of 2025-11-25.
    pub const fn has_legacy_tasks(self) -> bool {
        matches!(self, ProtocolVersion::V2025_11_25)
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of parsing an unknown version string.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown MCP protocol version {0:?}")]
pub struct UnknownVersion(pub String);

impl FromStr for ProtocolVersion {
    type Err = UnknownVersion;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s).ok_or_else(|| UnknownVersion(s.to_owned()))
    }
}

impl Serialize for ProtocolVersion {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ProtocolVersion {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = crate::__private::MapKey::deserialize(deserializer)?;
        Self::parse(s.as_str()).ok_or_else(|| {
            serde::de::Error::custom(format_args!("unknown MCP protocol version {:?}", s.as_str()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_round_trips_every_revision() {
        for v in ProtocolVersion::ALL {
            assert_eq!(ProtocolVersion::parse(v.as_str()), Some(v));
        }
        assert_eq!(ProtocolVersion::parse("v999.0.0"), None);
        // Ten bytes, each revision's text with one byte changed (in the first eight or the last
        // two), or cut short or made longer: none of them.
        for v in ProtocolVersion::ALL {
            let text = v.as_str();
            for at in 0..text.len() {
                let mut other = text.as_bytes().to_vec();
                other[at] ^= 0x01;
                let other = String::from_utf8(other).unwrap();
                assert_eq!(ProtocolVersion::parse(&other), None, "{other}");
            }
            assert_eq!(ProtocolVersion::parse(&text[..9]), None);
            assert_eq!(ProtocolVersion::parse(&format!("{text}0")), None);
        }
    }

    #[test]
    fn eras_and_batches() {
        assert_eq!(ProtocolVersion::V2026_07_28.era(), Era::Modern);
        for v in &ProtocolVersion::ALL[..4] {
            assert_eq!(v.era(), Era::Legacy);
        }
        let batching: Vec<_> = ProtocolVersion::ALL.into_iter().filter(|v| v.allows_batches()).collect();
        assert_eq!(batching, [ProtocolVersion::V2025_03_26]);
        assert_eq!(ProtocolVersion::V2025_11_25.resource_not_found_code(), -32002);
        assert_eq!(ProtocolVersion::V2026_07_28.resource_not_found_code(), -32602);
    }
}
