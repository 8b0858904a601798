//! Skills (the skills extension, `io.modelcontextprotocol/skills`, SEP-2640): Agent Skills —
//! directories of files with a `SKILL.md` at their root — served as resources under
//! `skill://<skill-path>/<file-path>`, enumerated by `skills/list`, looked up by `skills/get`,
//! browsed with `resources/directory/read`.
//!
//! ```no_run
//! use mcp_server::{Server, Skills};
//!
//! // Every directory under ./skills that holds a SKILL.md, at its path below ./skills.
//! let server = Server::builder("docs", "1.0.0").skills(Skills::from_dir("./skills")).build()?;
//! # Ok::<(), mcp_server::BuildError>(())
//! ```
//!
//! Loading is safe by construction: a skill's files are read once, when the table is built,
//! by walking its directory — symbolic links are never followed, hidden entries (`.git`, ...)
//! are left out, and a skill over the extension's limits (512 files, 16 MiB) is refused. A
//! request then only looks URIs up in what was loaded: no path from a request ever reaches
//! the file system, so no `..`, symbolic link or percent-encoding can lead outside a skill.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mcp_types::extensions::skills::{
    self, DIRECTORY_MIME_TYPE, MAX_BYTES, MAX_FILES, SKILL_MD, SKILL_MD_MIME_TYPE, SkillEntry, SkillFile,
    SkillResources,
};
use mcp_types::{JsonObject, Resource};

use crate::call::Call;
use crate::extract::Rejection;
use crate::handler::BoxFuture;
use crate::resources::Resources;
use crate::tools::RegistrationError;

/// Skills another server serves (a gateway's upstreams'): listed as that server lists them, and
/// `skills/get` and `resources/directory/read` passed on to it
/// ([`Server::set_skill_source`](crate::Server::set_skill_source)). Their files are ordinary
/// resources of the server's table.
pub trait SkillSource: Send + Sync + 'static {
    /// The skills to list, as they are now.
    fn entries(&self) -> Arc<[SkillEntry]>;

    /// Whether `resources/directory/read` is served (`directoryRead`).
    fn directory_read(&self) -> bool;

    /// The entry of the skill whose `SKILL.md` is at `uri`; `None` when none of this source's.
    fn get(&self, call: Call, uri: String) -> BoxFuture<Option<Result<SkillEntry, Rejection>>>;

    /// The direct children of the directory at `uri`; `None` when no directory of this
    /// source's.
    fn read_directory(&self, call: Call, uri: String) -> BoxFuture<Option<Result<Vec<Resource>, Rejection>>>;
}

/// The URI scheme skills are served under.
pub const SCHEME: &str = "skill";

/// One skill: its entry (what `skills/list` and `skills/get` answer) and its `SKILL.md`'s
/// resource definition.
#[derive(Debug)]
pub(crate) struct Skill {
    pub(crate) entry: SkillEntry,
}

/// A file of a skill, until the server is built (then it moves into the resource table).
struct File {
    def: Resource,
    bytes: Vec<u8>,
}

/// The skills a server serves, in the order they were added.
#[derive(Default)]
pub struct Skills {
    pub(crate) skills: Vec<Arc<Skill>>,
    /// `SKILL.md` URI → index in `skills`.
    pub(crate) by_uri: HashMap<String, usize>,
    /// Directory URI → its direct children, by URI (files, and directories).
    pub(crate) directories: HashMap<String, Vec<Resource>>,
    files: Vec<File>,
    pub(crate) errors: Vec<RegistrationError>,
}

impl std::fmt::Debug for Skills {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Skills").field("skills", &self.by_uri.keys().collect::<Vec<_>>()).finish()
    }
}

impl Skills {
    /// No skills.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every skill under `root`: each directory that holds a `SKILL.md` (`root` itself
    /// included), at its path relative to `root` (`root` itself at its own name). A skill
    /// nested in another is served on its own too, and its files are also the enclosing
    /// skill's. Problems are reported when the server is built ([`Skills::take_errors`]).
    pub fn from_dir(root: impl AsRef<Path>) -> Self {
        let root = root.as_ref();
        let mut found = Vec::new();
        let mut skills = Skills::new();
        if let Err(e) = find_skills(root, &mut Vec::new(), &mut found) {
            skills.errors.push(invalid(&root.display().to_string(), e));
            return skills;
        }
        for (path, dir) in found {
            let skill_path = if path.is_empty() {
                root.canonicalize()
                    .ok()
                    .and_then(|p| p.file_name().and_then(|n| n.to_str()).map(str::to_owned))
                    .unwrap_or_default()
            } else {
                path.join("/")
            };
            skills = skills.dir(&skill_path, dir);
        }
        skills
    }

    /// The skill in directory `dir`, served at `skill_path` (`git-workflow`,
    /// `acme/billing/refunds`: its last segment is the skill's name).
    pub fn dir(mut self, skill_path: &str, dir: impl AsRef<Path>) -> Self {
        let mut files = Vec::new();
        let mut bytes = 0;
        match read_tree(dir.as_ref(), &mut Vec::new(), &mut files, &mut bytes) {
            Ok(()) => self.files(skill_path, files),
            Err(e) => {
                self.errors.push(invalid(skill_path, e));
                self
            }
        }
    }

    /// A skill from files in memory, `(path in the skill, content)`: `SKILL.md` among them.
    pub fn files(mut self, skill_path: &str, mut files: Vec<(String, Vec<u8>)>) -> Self {
        match self.build(skill_path, &mut files) {
            Ok(()) => {}
            Err(e) => self.errors.push(invalid(skill_path, e)),
        }
        self
    }

    fn build(&mut self, skill_path: &str, files: &mut [(String, Vec<u8>)]) -> Result<(), String> {
        let segments: Vec<&str> = skill_path.split('/').collect();
        if segments.iter().any(|s| s.is_empty() || *s == "." || *s == "..") {
            return Err("the skill path must be /-separated names (no empty, . or .. segment)".into());
        }
        let name = segments[segments.len() - 1];
        if !skills::valid_name(name) {
            return Err(format!(
                "{name:?} is no valid skill name (1-64 lowercase letters, digits and single inner hyphens)"
            ));
        }
        if files.len() > MAX_FILES {
            return Err(format!("it has {} files; a skill is served with at most {MAX_FILES}", files.len()));
        }
        let total: u64 = files.iter().map(|(_, b)| b.len() as u64).sum();
        if total > MAX_BYTES {
            return Err(format!("its files total {total} bytes; a skill is served with at most {MAX_BYTES}"));
        }
        files.sort_by(|a, b| a.0.cmp(&b.0));
        let Some((_, manifest)) = files.iter().find(|(path, _)| path == SKILL_MD) else {
            return Err("it has no SKILL.md at its root".into());
        };
        let text = std::str::from_utf8(manifest).map_err(|_| "its SKILL.md is not UTF-8 text".to_owned())?;
        let frontmatter = mcp_skills::frontmatter(text).map_err(|e| format!("its SKILL.md: {e}"))?;
        if frontmatter.get("name").and_then(|n| n.as_str()) != Some(name) {
            return Err(format!(
                "its SKILL.md names it {:?}, but its path ends in {name:?}",
                frontmatter["name"]
            ));
        }
        let base = format!("{SCHEME}://{}", segments.iter().map(|s| encode(s)).collect::<Vec<_>>().join("/"));
        let uri = format!("{base}/{SKILL_MD}");
        if self.by_uri.contains_key(&uri) {
            return Err("a skill is already served at this path".into());
        }
        let mut listed = Vec::with_capacity(files.len());
        for (path, bytes) in files.iter_mut() {
            let parts: Vec<&str> = path.split('/').collect();
            if parts.iter().any(|p| p.is_empty() || *p == "." || *p == "..") {
                return Err(format!("file {path:?} is not a plain path within the skill"));
            }
            let file_uri =
                format!("{base}/{}", parts.iter().map(|p| encode(p)).collect::<Vec<_>>().join("/"));
            let size = bytes.len() as u64;
            let digest = mcp_skills::digest(bytes);
            let mut def = Resource::new(&file_uri, parts[parts.len() - 1]);
            def.size = Some(size);
            if *path == SKILL_MD {
                def.name = name.to_owned();
                def.description = frontmatter.get("description").and_then(|d| d.as_str()).map(str::to_owned);
                def.mime_type = Some(SKILL_MD_MIME_TYPE.to_owned());
            } else {
                def.mime_type = Some(mime_type(path).to_owned());
            }
            self.index_directories(&segments, &parts, &def);
            listed.push(SkillFile { uri: file_uri, digest, size, extra: JsonObject::new() });
            self.files.push(File { def, bytes: std::mem::take(bytes) });
        }
        let entry = SkillEntry {
            uri: uri.clone(),
            frontmatter,
            resources: SkillResources::Files(listed),
            extra: JsonObject::new(),
        };
        self.by_uri.insert(uri, self.skills.len());
        self.skills.push(Arc::new(Skill { entry }));
        Ok(())
    }

    /// Records `file` (at `parts` within the skill at `segments`) in every directory above it,
    /// from the scheme's first segment down.
    fn index_directories(&mut self, segments: &[&str], parts: &[&str], file: &Resource) {
        let all: Vec<&str> = segments.iter().chain(parts.iter()).copied().collect();
        let mut dir = format!("{SCHEME}://{}", encode(all[0]));
        for (depth, part) in all.iter().enumerate().skip(1) {
            let child = if depth == all.len() - 1 {
                file.clone()
            } else {
                let uri = format!("{dir}/{}", encode(part));
                Resource::new(uri, *part).with_mime_type(DIRECTORY_MIME_TYPE)
            };
            let next = child.uri.clone();
            let children = self.directories.entry(dir).or_default();
            if !children.iter().any(|c| c.uri == child.uri) {
                let at = children.partition_point(|c| c.uri < child.uri);
                children.insert(at, child);
            }
            dir = next;
        }
    }

    /// The number of skills.
    pub fn len(&self) -> usize {
        self.skills.len()
    }

    /// True when there is no skill.
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    /// The skills' entries, as `skills/list` gives them.
    pub fn entries(&self) -> impl Iterator<Item = &SkillEntry> {
        self.skills.iter().map(|s| &s.entry)
    }

    /// Takes the problems found so far (a skill refused: its files unreadable, its
    /// `SKILL.md` without frontmatter, over the limits, ...): the skills concerned were left
    /// out, and the rest can be served. A server built with problems left refuses to build.
    pub fn take_errors(&mut self) -> Vec<RegistrationError> {
        std::mem::take(&mut self.errors)
    }

    /// Moves the skills' files into `resources` (each a static resource; a `SKILL.md` named and
    /// described by its frontmatter).
    pub(crate) fn serve_files(&mut self, mut resources: Resources) -> Resources {
        for File { def, bytes } in self.files.drain(..) {
            let text = def.mime_type.as_deref().is_some_and(is_text);
            resources = match (text, String::from_utf8(bytes)) {
                (true, Ok(text)) => resources.text(def, text),
                (_, Ok(text)) => resources.blob(def, text.into_bytes()),
                (_, Err(e)) => resources.blob(def, e.into_bytes()),
            };
        }
        resources
    }

    /// The skill whose `SKILL.md` is at `uri`.
    pub(crate) fn get(&self, uri: &str) -> Option<&Arc<Skill>> {
        self.by_uri.get(uri).map(|&i| &self.skills[i])
    }
}

fn invalid(path: &str, reason: impl Into<String>) -> RegistrationError {
    RegistrationError::InvalidSkill { path: path.to_owned(), reason: reason.into() }
}

/// The directories under `dir` (itself included) that hold a `SKILL.md`, with their path
/// below the root. Symbolic links and hidden entries are not followed.
fn find_skills(
    dir: &Path,
    path: &mut Vec<String>,
    found: &mut Vec<(Vec<String>, PathBuf)>,
) -> Result<(), String> {
    let entries = list(dir)?;
    if entries.iter().any(|(name, kind, _)| name == SKILL_MD && kind.is_file()) {
        found.push((path.clone(), dir.to_owned()));
    }
    for (name, kind, full) in entries {
        if kind.is_dir() {
            path.push(name);
            find_skills(&full, path, found)?;
            path.pop();
        }
    }
    Ok(())
}

/// The entries of `dir` that a skill may contain, sorted by name: regular files and
/// directories with UTF-8 names not starting with `.`; symbolic links are skipped.
fn list(dir: &Path) -> Result<Vec<(String, std::fs::FileType, PathBuf)>, String> {
    let read = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut entries = Vec::new();
    for entry in read {
        let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
        // The entry's own type: a symbolic link is seen as one, never as what it points to.
        let kind = entry.file_type().map_err(|e| format!("{}: {e}", entry.path().display()))?;
        let Ok(name) = entry.file_name().into_string() else {
            tracing::warn!(path = %entry.path().display(), "skill file left out: its name is not UTF-8");
            continue;
        };
        if name.starts_with('.') {
            continue;
        }
        if kind.is_symlink() {
            tracing::warn!(path = %entry.path().display(), "skill file left out: symbolic links are not followed");
            continue;
        }
        if kind.is_file() || kind.is_dir() {
            entries.push((name, kind, entry.path()));
        }
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(entries)
}

/// Reads the files under `dir` into `files` (`path/within/the/skill`, bytes), within the
/// extension's limits.
fn read_tree(
    dir: &Path,
    path: &mut Vec<String>,
    files: &mut Vec<(String, Vec<u8>)>,
    bytes: &mut u64,
) -> Result<(), String> {
    for (name, kind, full) in list(dir)? {
        path.push(name);
        if kind.is_dir() {
            read_tree(&full, path, files, bytes)?;
        } else {
            if files.len() >= MAX_FILES {
                return Err(format!("it has more than {MAX_FILES} files"));
            }
            let size =
                std::fs::symlink_metadata(&full).map_err(|e| format!("{}: {e}", full.display()))?.len();
            *bytes += size;
            if *bytes > MAX_BYTES {
                return Err(format!("its files total more than {MAX_BYTES} bytes"));
            }
            let content = std::fs::read(&full).map_err(|e| format!("{}: {e}", full.display()))?;
            files.push((path.join("/"), content));
        }
        path.pop();
    }
    Ok(())
}

/// A path segment as a URI path segment: unreserved and sub-delimiter characters, `:` and
/// `@` as they are, anything else percent-encoded.
fn encode(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The MIME type of a skill file, by its extension.
fn mime_type(path: &str) -> &'static str {
    let extension = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    match extension.as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" => "text/plain",
        "py" => "text/x-python",
        "sh" => "text/x-shellscript",
        "js" | "mjs" => "text/javascript",
        "ts" => "text/x-typescript",
        "rs" => "text/x-rust",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "toml" => "application/toml",
        "html" | "htm" => "text/html",
        "css" => "text/css",
        "csv" => "text/csv",
        "xml" => "application/xml",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "pdf" => "application/pdf",
        _ => "application/octet-stream",
    }
}

/// Whether content of this MIME type is served as text (when it is UTF-8).
fn is_text(mime: &str) -> bool {
    mime.starts_with("text/")
        || matches!(
            mime,
            "application/json"
                | "application/yaml"
                | "application/toml"
                | "application/xml"
                | "image/svg+xml"
        )
}

#[cfg(test)]
mod tests;
