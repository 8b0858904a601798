//! The rules of the skills extension (`io.modelcontextprotocol/skills`, SEP-2640) that a
//! server and a client share: a `SKILL.md`'s frontmatter ([`frontmatter`]), a file's digest
//! ([`digest`]), and what a host checks before it uses what it read ([`verify_file`],
//! [`verify_manifest`]). No IO; the wire types are [`mcp_types::extensions::skills`].

mod frontmatter;

use mcp_types::JsonObject;
use mcp_types::extensions::skills::{SkillEntry, SkillFile, SkillResources};
use sha2::{Digest, Sha256};

pub use frontmatter::{FrontmatterError, parse as frontmatter};

/// `sha256:` and the 64 lowercase hex digits of the SHA-256 of `bytes`.
pub fn digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in hash {
        out.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        out.push(char::from(b"0123456789abcdef"[usize::from(b & 0xf)]));
    }
    out
}

/// Why content read for a skill may not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// The skill's entry does not list this file (an unlisted file is a change to the skill).
    #[error("{0} is not one of the skill's files")]
    Unlisted(String),
    /// The content is not as long as the entry says.
    #[error("{uri} has {actual} bytes, the skill's entry says {listed}")]
    Size {
        /// The file.
        uri: String,
        /// What the entry lists.
        listed: u64,
        /// What was read.
        actual: u64,
    },
    /// The content's digest is not the entry's.
    #[error("{uri} does not match its digest (the skill changed since it was listed?)")]
    Digest {
        /// The file.
        uri: String,
    },
    /// The `SKILL.md` has no usable frontmatter.
    #[error("{uri}: {error}")]
    Frontmatter {
        /// The `SKILL.md`.
        uri: String,
        /// Why.
        error: FrontmatterError,
    },
    /// The `SKILL.md`'s frontmatter differs from the entry's (field by field).
    #[error("{uri}: its frontmatter differs from the skill's entry in {fields:?}")]
    FrontmatterDiffers {
        /// The `SKILL.md`.
        uri: String,
        /// The fields that differ.
        fields: Vec<String>,
    },
}

/// Checks `bytes`, read at `uri`, against `file` (as listed): size first, then digest.
fn check(file: &SkillFile, uri: &str, bytes: &[u8]) -> Result<(), VerifyError> {
    let actual = bytes.len() as u64;
    if actual != file.size {
        return Err(VerifyError::Size { uri: uri.to_owned(), listed: file.size, actual });
    }
    if digest(bytes) != file.digest {
        return Err(VerifyError::Digest { uri: uri.to_owned() });
    }
    Ok(())
}

/// Checks a file of `entry`'s skill, read at `uri`, against the entry: it must be listed, and
/// have the listed size and digest. A skill whose entry lists no files (`"dynamic"`) cannot
/// be verified: its content is accepted as it is.
pub fn verify_file(entry: &SkillEntry, uri: &str, bytes: &[u8]) -> Result<(), VerifyError> {
    match &entry.resources {
        SkillResources::Dynamic => Ok(()),
        SkillResources::Files(_) => {
            let file = entry.file(uri).ok_or_else(|| VerifyError::Unlisted(uri.to_owned()))?;
            check(file, uri, bytes)
        }
    }
}

/// Checks a skill's `SKILL.md`, as read, against its entry: the file itself
/// ([`verify_file`]), then its frontmatter, which must equal the entry's field by field.
/// Returns the frontmatter.
pub fn verify_manifest(entry: &SkillEntry, text: &str) -> Result<JsonObject, VerifyError> {
    verify_file(entry, &entry.uri, text.as_bytes())?;
    let parsed =
        frontmatter(text).map_err(|error| VerifyError::Frontmatter { uri: entry.uri.clone(), error })?;
    let mut fields: Vec<String> = parsed
        .iter()
        .filter(|(k, v)| entry.frontmatter.get(*k) != Some(*v))
        .map(|(k, _)| k.clone())
        .chain(entry.frontmatter.keys().filter(|k| !parsed.contains_key(*k)).cloned())
        .collect();
    fields.sort();
    if fields.is_empty() {
        Ok(parsed)
    } else {
        Err(VerifyError::FrontmatterDiffers { uri: entry.uri.clone(), fields })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const MANIFEST: &str = "---\nname: pdf\ndescription: PDFs\n---\nBody.\n";

    fn entry(manifest: &str) -> SkillEntry {
        serde_json::from_value(json!({
            "uri": "skill://pdf/SKILL.md",
            "frontmatter": {"name": "pdf", "description": "PDFs"},
            "resources": [
                {"uri": "skill://pdf/SKILL.md", "digest": digest(manifest.as_bytes()), "size": manifest.len()},
                {"uri": "skill://pdf/a.md", "digest": digest(b"aaa"), "size": 3}
            ]
        }))
        .unwrap()
    }

    #[test]
    fn digests_are_sha256_hex() {
        assert_eq!(digest(b""), "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    }

    #[test]
    fn what_is_read_is_checked_against_the_entry() {
        let e = entry(MANIFEST);
        assert_eq!(verify_manifest(&e, MANIFEST).unwrap()["name"], "pdf");
        assert!(verify_file(&e, "skill://pdf/a.md", b"aaa").is_ok());
        assert!(matches!(verify_file(&e, "skill://pdf/a.md", b"aab"), Err(VerifyError::Digest { .. })));
        assert!(matches!(
            verify_file(&e, "skill://pdf/a.md", b"aaaa"),
            Err(VerifyError::Size { listed: 3, actual: 4, .. })
        ));
        assert!(matches!(verify_file(&e, "skill://pdf/b.md", b""), Err(VerifyError::Unlisted(_))));
        // A SKILL.md whose bytes match but whose frontmatter differs from the entry's.
        let other = "---\nname: pdf\ndescription: Other\n---\nBody.\n";
        let mut e = entry(other);
        assert_eq!(
            verify_manifest(&e, other),
            Err(VerifyError::FrontmatterDiffers {
                uri: "skill://pdf/SKILL.md".into(),
                fields: vec!["description".into()]
            })
        );
        e.resources = SkillResources::Dynamic;
        assert!(verify_file(&e, "skill://pdf/anything", b"x").is_ok(), "nothing to verify against");
    }
}
