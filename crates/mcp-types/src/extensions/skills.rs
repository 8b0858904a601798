//! The skills extension (`io.modelcontextprotocol/skills`, SEP-2640): Agent Skills served as
//! resources. Each file of a skill directory is a resource (conventionally
//! `skill://<skill-path>/<file-path>`); `skills/list` enumerates a server's skills and
//! `skills/get` returns one by the URI of its `SKILL.md`, each entry carrying the skill's
//! frontmatter and the digest and size of every file; `resources/directory/read` (optional,
//! `directoryRead`) lists a directory's direct children.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::json::{JsonObject, JsonValue};
use crate::meta::{RequestMeta, ResultMeta};
use crate::pagination::{Cursor, PaginatedRequestParams};
use crate::resources::Resource;
use crate::result::{CacheScope, ResultType};
use crate::wire_struct;

/// The extension's identifier, the key under `capabilities.extensions`.
pub const ID: &str = "io.modelcontextprotocol/skills";

/// The `mimeType` of a directory resource (`resources/directory/read`).
pub const DIRECTORY_MIME_TYPE: &str = "inode/directory";

/// The `mimeType` of a `SKILL.md`.
pub const SKILL_MD_MIME_TYPE: &str = "text/markdown";

/// The file every skill has at its root.
pub const SKILL_MD: &str = "SKILL.md";

/// The most files a server should serve in one skill, `SKILL.md` included.
pub const MAX_FILES: usize = 512;

/// The most bytes a server should serve in one skill, all files together (16 MiB).
pub const MAX_BYTES: u64 = 16 * 1024 * 1024;

wire_struct! {
    /// The extension's settings (`capabilities.extensions["io.modelcontextprotocol/skills"]`).
    #[derive(Default)]
    pub struct SkillsCapability {
        /// The server implements `resources/directory/read`.
        opt directory_read: bool = "directoryRead",
    }
}

wire_struct! {
    /// One file of a skill as an entry lists it.
    pub struct SkillFile {
        /// The file's resource URI.
        req uri: String = "uri",
        /// `sha256:` and the 64 lowercase hex digits of the SHA-256 of its raw bytes.
        req digest: String = "digest",
        /// Its length in bytes (the bytes the digest covers).
        req size: u64 = "size",
    }
}

/// The files of a skill: every one, with its digest and size, or `"dynamic"` for a skill whose
/// content is generated and cannot be digested beforehand.
#[derive(Debug, Clone, PartialEq)]
pub enum SkillResources {
    /// Every file of the skill, `SKILL.md` included, each once.
    Files(Vec<SkillFile>),
    /// Generated content: no manifest.
    Dynamic,
}

impl Serialize for SkillResources {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            SkillResources::Files(files) => files.serialize(serializer),
            SkillResources::Dynamic => serializer.serialize_str("dynamic"),
        }
    }
}

impl<'de> Deserialize<'de> for SkillResources {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match JsonValue::deserialize(deserializer)? {
            JsonValue::String(s) if s == "dynamic" => Ok(SkillResources::Dynamic),
            value @ JsonValue::Array(_) => {
                Vec::<SkillFile>::deserialize(value).map(SkillResources::Files).map_err(D::Error::custom)
            }
            other => Err(D::Error::custom(format_args!(
                "resources must be an array of files or \"dynamic\", not {other}"
            ))),
        }
    }
}

wire_struct! {
    /// One skill (a `skills/list` entry, the `skill` of `skills/get`).
    pub struct SkillEntry {
        /// The resource URI of its `SKILL.md`.
        req uri: String = "uri",
        /// Its `SKILL.md` frontmatter, verbatim, as JSON (`name` and `description` at least).
        req frontmatter: JsonObject = "frontmatter",
        /// Its files.
        req resources: SkillResources = "resources",
    }
}

impl SkillEntry {
    /// `frontmatter.name`, when it is a string.
    pub fn name(&self) -> Option<&str> {
        self.frontmatter.get("name").and_then(JsonValue::as_str)
    }

    /// `frontmatter.description`, when it is a string.
    pub fn description(&self) -> Option<&str> {
        self.frontmatter.get("description").and_then(JsonValue::as_str)
    }

    /// The listed file at `uri`, when the entry lists its files.
    pub fn file(&self, uri: &str) -> Option<&SkillFile> {
        match &self.resources {
            SkillResources::Files(files) => files.iter().find(|f| f.uri == uri),
            SkillResources::Dynamic => None,
        }
    }
}

wire_struct! {
    /// The answer to `skills/list`.
    #[derive(Default)]
    pub struct ListSkillsResult {
        /// The skills of this page (a skill is never split across pages).
        req skills: Vec<SkillEntry> = "skills",
        /// Cursor of the next page.
        opt next_cursor: Cursor = "nextCursor",
        /// The kind of result (2026-07-28).
        opt result_type: ResultType = "resultType",
        /// Freshness lifetime in milliseconds (2026-07-28).
        opt ttl_ms: u64 = "ttlMs",
        /// Who may cache it (2026-07-28).
        opt cache_scope: CacheScope = "cacheScope",
        /// Result metadata.
        opt meta: ResultMeta = "_meta",
    }
}

wire_struct! {
    /// Params of `skills/get`.
    pub struct GetSkillParams {
        /// The URI of the skill's `SKILL.md`.
        req uri: String = "uri",
        /// Request metadata.
        opt meta: RequestMeta = "_meta",
    }
}

impl GetSkillParams {
    /// Params naming the skill whose `SKILL.md` is at `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        GetSkillParams { uri: uri.into(), meta: None, extra: JsonObject::new() }
    }
}

wire_struct! {
    /// The answer to `skills/get`.
    pub struct GetSkillResult {
        /// The skill.
        req skill: SkillEntry = "skill",
        /// The kind of result (2026-07-28).
        opt result_type: ResultType = "resultType",
        /// Freshness lifetime in milliseconds (2026-07-28).
        opt ttl_ms: u64 = "ttlMs",
        /// Who may cache it (2026-07-28).
        opt cache_scope: CacheScope = "cacheScope",
        /// Result metadata.
        opt meta: ResultMeta = "_meta",
    }
}

wire_struct! {
    /// Params of `resources/directory/read`.
    pub struct ReadDirectoryParams {
        /// The directory's URI (no trailing slash).
        req uri: String = "uri",
        /// Where to continue; absent for the first page.
        opt cursor: Cursor = "cursor",
        /// Request metadata.
        opt meta: RequestMeta = "_meta",
    }
}

impl ReadDirectoryParams {
    /// Params listing the directory at `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        ReadDirectoryParams { uri: uri.into(), cursor: None, meta: None, extra: JsonObject::new() }
    }
}

wire_struct! {
    /// The answer to `resources/directory/read`: the directory's direct children (files, and
    /// subdirectories with `mimeType: "inode/directory"`).
    #[derive(Default)]
    pub struct ReadDirectoryResult {
        /// The children of this page.
        req resources: Vec<Resource> = "resources",
        /// Cursor of the next page.
        opt next_cursor: Cursor = "nextCursor",
        /// The kind of result (2026-07-28).
        opt result_type: ResultType = "resultType",
        /// Result metadata.
        opt meta: ResultMeta = "_meta",
    }
}

crate::request_method!(
    /// `skills/list`: the skills a server serves, paginated.
    ListSkills = "skills/list", PaginatedRequestParams => ListSkillsResult
);
crate::request_method!(
    /// `skills/get`: one skill's entry, by the URI of its `SKILL.md`.
    GetSkill = "skills/get", GetSkillParams => GetSkillResult
);
crate::request_method!(
    /// `resources/directory/read`: a directory resource's direct children.
    ReadDirectory = "resources/directory/read", ReadDirectoryParams => ReadDirectoryResult
);

/// The skill name a `SKILL.md` URI ends in (`skill://acme/billing/refunds/SKILL.md` →
/// `refunds`), whatever its scheme; `None` for a URI that is not a skill path's `SKILL.md`.
pub fn skill_name(uri: &str) -> Option<&str> {
    let path = uri.split_once("://")?.1;
    let dir = path.strip_suffix(SKILL_MD)?.strip_suffix('/')?;
    dir.rsplit('/').next().filter(|name| !name.is_empty())
}

/// Whether `name` follows the Agent Skills naming rules: 1 to 64 characters, lowercase ASCII
/// letters, digits and hyphens, no hyphen at either end, no two in a row.
pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn entries_carry_files_or_dynamic() {
        let entry: SkillEntry = serde_json::from_value(json!({
            "uri": "skill://pdf-processing/SKILL.md",
            "frontmatter": {"name": "pdf-processing", "description": "PDFs", "metadata": {"v": "2"}},
            "resources": [{"uri": "skill://pdf-processing/SKILL.md", "digest": "sha256:00", "size": 12}]
        }))
        .unwrap();
        assert_eq!(entry.name(), Some("pdf-processing"));
        assert_eq!(entry.file("skill://pdf-processing/SKILL.md").unwrap().size, 12);
        let dynamic: SkillEntry = serde_json::from_value(json!({
            "uri": "skill://gen/SKILL.md", "frontmatter": {"name": "gen", "description": "d"},
            "resources": "dynamic"
        }))
        .unwrap();
        assert_eq!(dynamic.resources, SkillResources::Dynamic);
        assert_eq!(serde_json::to_value(&dynamic).unwrap()["resources"], "dynamic");
        let bad = serde_json::from_value::<SkillEntry>(json!({
            "uri": "u", "frontmatter": {}, "resources": "static"
        }));
        assert!(bad.unwrap_err().to_string().contains("dynamic"));
    }

    #[test]
    fn names_and_uris() {
        assert_eq!(skill_name("skill://acme/billing/refunds/SKILL.md"), Some("refunds"));
        assert_eq!(skill_name("skill://git-workflow/SKILL.md"), Some("git-workflow"));
        assert_eq!(skill_name("github://o/r/skills/x/SKILL.md"), Some("x"));
        assert_eq!(skill_name("skill://git-workflow/README.md"), None);
        assert_eq!(skill_name("skill:///SKILL.md"), None);
        assert!(valid_name("pdf-processing") && valid_name("a") && valid_name("x2"));
        for bad in ["", "-a", "a-", "a--b", "Upper", "with space", &"a".repeat(65)] {
            assert!(!valid_name(bad), "{bad:?}");
        }
    }
}
