//! `--save DIR`: the images, audio and blobs of a result written to files, since a terminal
//! shows them only as `[image image/png, 1234 bytes]`. `read` saves every content (text too);
//! `call` and `prompt` save their binary blocks. Names come from the resource's URI or the
//! block's kind and MIME type, made safe (never outside DIR, never over an existing file).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use base64::Engine;
use serde_json::Value;

/// One thing to write: a name hint, its MIME type and its bytes.
struct Item {
    stem: String,
    mime: String,
    bytes: Vec<u8>,
}

/// Which result `--save` is given.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    /// `tools/call`: its `content` blocks.
    Call,
    /// `prompts/get`: the content of its `messages`.
    Prompt,
    /// `resources/read`: its `contents`, text included.
    Read,
}

/// Writes what `result` holds into `dir` (created if missing); one line on stderr per file.
pub(crate) fn save(dir: &Path, kind: Kind, result: &Value) -> anyhow::Result<Vec<PathBuf>> {
    let items = items(kind, result)?;
    if items.is_empty() {
        eprintln!("note: nothing to save: the result has no image, audio or blob");
        return Ok(Vec::new());
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut saved = Vec::new();
    for item in items {
        let path = write_new(dir, &item.stem, extension(&item.mime), &item.bytes)?;
        eprintln!("saved {} ({}, {} bytes)", path.display(), item.mime, item.bytes.len());
        saved.push(path);
    }
    Ok(saved)
}

/// Writes an app's HTML into `dir` (created if missing), named after its URI, never over an
/// existing file; one line on stderr.
pub(crate) fn save_app(dir: &Path, uri: &str, html: &str) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let stem = file_name(uri).unwrap_or_else(|| "app".to_owned());
    let path = write_new(dir, &stem, "html", html.as_bytes())?;
    eprintln!("saved {} ({uri}, {} bytes)", path.display(), html.len());
    Ok(path)
}

fn items(kind: Kind, result: &Value) -> anyhow::Result<Vec<Item>> {
    let mut items = Vec::new();
    match kind {
        Kind::Read => {
            for (i, contents) in array(result.get("contents")).iter().enumerate() {
                items.extend(resource(contents, i, true)?);
            }
        }
        Kind::Call => {
            for (i, block) in array(result.get("content")).iter().enumerate() {
                items.extend(binary(block, i)?);
            }
        }
        Kind::Prompt => {
            for (i, message) in array(result.get("messages")).iter().enumerate() {
                if let Some(block) = message.get("content") {
                    items.extend(binary(block, i)?);
                }
            }
        }
    }
    Ok(items)
}

fn array(value: Option<&Value>) -> &[Value] {
    value.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default()
}

fn str_of<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// A content block's bytes, when it is an image, audio, or an embedded resource with a blob.
fn binary(block: &Value, index: usize) -> anyhow::Result<Option<Item>> {
    match str_of(block, "type") {
        Some(kind @ ("image" | "audio")) => {
            let mime = str_of(block, "mimeType").unwrap_or("application/octet-stream");
            let bytes = decode(str_of(block, "data").unwrap_or_default(), kind)?;
            Ok(Some(Item { stem: format!("{kind}-{}", index + 1), mime: mime.to_owned(), bytes }))
        }
        Some("resource") => match block.get("resource") {
            Some(contents) => resource(contents, index, false),
            None => Ok(None),
        },
        _ => Ok(None),
    }
}

/// A resource's contents: its blob, or (with `text`) its text.
fn resource(contents: &Value, index: usize, text: bool) -> anyhow::Result<Option<Item>> {
    let uri = str_of(contents, "uri").unwrap_or_default();
    let stem = file_name(uri).unwrap_or_else(|| format!("resource-{}", index + 1));
    let (bytes, default_mime) = if let Some(blob) = str_of(contents, "blob") {
        (decode(blob, "blob")?, "application/octet-stream")
    } else if let (true, Some(body)) = (text, str_of(contents, "text")) {
        (body.as_bytes().to_vec(), "text/plain")
    } else {
        return Ok(None);
    };
    let mime = str_of(contents, "mimeType").unwrap_or(default_mime).to_owned();
    Ok(Some(Item { stem, mime, bytes }))
}

fn decode(data: &str, what: &str) -> anyhow::Result<Vec<u8>> {
    base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .with_context(|| format!("the server's {what} is not valid base64"))
}

/// The last segment of `uri`'s path, made a safe file name: ASCII letters, digits, `.`, `-`
/// and `_` only, no leading dot; `None` when nothing is left.
fn file_name(uri: &str) -> Option<String> {
    let path = uri.split(['?', '#']).next().unwrap_or_default();
    let last = path.rsplit('/').find(|s| !s.is_empty())?;
    let last = if last.contains("://") || last.ends_with(':') { return None } else { last };
    let safe: String = last
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') { c } else { '_' })
        .collect();
    let safe = safe.trim_start_matches('.');
    (!safe.is_empty() && safe.chars().any(|c| c.is_ascii_alphanumeric())).then(|| safe.to_owned())
}

/// The file extension for a MIME type (none when the stem should keep its own).
fn extension(mime: &str) -> &'static str {
    match mime.split(';').next().unwrap_or_default().trim() {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "audio/wav" | "audio/x-wav" | "audio/wave" => "wav",
        "audio/mpeg" => "mp3",
        "audio/ogg" => "ogg",
        "application/pdf" => "pdf",
        "application/json" => "json",
        "text/plain" => "txt",
        "text/markdown" => "md",
        "text/html" => "html",
        _ => "bin",
    }
}

/// Writes `bytes` to a file of `dir` that did not exist: `stem` (with `.ext` unless it has an
/// extension already), else `stem-2`, `stem-3`, ...
fn write_new(dir: &Path, stem: &str, ext: &str, bytes: &[u8]) -> anyhow::Result<PathBuf> {
    let has_extension = Path::new(stem).extension().is_some();
    let name = |n: usize| {
        let base = if n == 1 { stem.to_owned() } else { format!("{stem}-{n}") };
        match (has_extension, n) {
            (true, 1) => base,
            (true, _) => {
                let p = Path::new(stem);
                let (s, e) = (p.file_stem().unwrap_or_default(), p.extension().unwrap_or_default());
                format!("{}-{n}.{}", s.to_string_lossy(), e.to_string_lossy())
            }
            (false, _) => format!("{base}.{ext}"),
        }
    };
    for n in 1..=1000 {
        let path = dir.join(name(n));
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(mut file) => {
                file.write_all(bytes).with_context(|| format!("cannot write {}", path.display()))?;
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot create {}", path.display())),
        }
    }
    bail!("{}: too many files named {stem}", dir.display())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn names_stay_inside_the_directory() {
        assert_eq!(file_name("file:///tmp/report.pdf").as_deref(), Some("report.pdf"));
        assert_eq!(file_name("demo://x/../../etc/passwd").as_deref(), Some("passwd"));
        assert_eq!(file_name("demo://notes/a b?c=1").as_deref(), Some("a_b"));
        assert_eq!(file_name("demo://x/..").as_deref(), None);
        assert_eq!(file_name("demo://x/.hidden").as_deref(), Some("hidden"));
        assert_eq!(file_name("urn:x:"), None);
        assert_eq!(file_name(""), None);
    }

    #[test]
    fn binary_blocks_and_contents_are_saved_without_overwriting() {
        let dir = std::env::temp_dir().join(format!("mcpkit-save-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let call = json!({"content": [
            {"type": "text", "text": "not saved"},
            {"type": "image", "data": "iVBORw==", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "demo://r/data.bin", "blob": "AAE=", "mimeType": "application/x"}},
            {"type": "resource", "resource": {"uri": "demo://r/t", "text": "embedded text is shown, not saved"}}
        ]});
        let saved = save(&dir, Kind::Call, &call).unwrap();
        let names: Vec<_> =
            saved.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["image-2.png", "data.bin"]);
        assert_eq!(std::fs::read(&saved[0]).unwrap(), [0x89, b'P', b'N', b'G']);
        assert_eq!(std::fs::read(&saved[1]).unwrap(), [0, 1]);
        // Again: new names, the first files untouched.
        let again = save(&dir, Kind::Call, &call).unwrap();
        let names: Vec<_> =
            again.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["image-2-2.png", "data-2.bin"]);
        let read =
            json!({"contents": [{"uri": "demo://readme", "text": "hello", "mimeType": "text/markdown"}]});
        let saved = save(&dir, Kind::Read, &read).unwrap();
        assert_eq!(saved[0].file_name().unwrap(), "readme.md");
        assert_eq!(std::fs::read_to_string(&saved[0]).unwrap(), "hello");
        let bad = json!({"content": [{"type": "audio", "data": "not base64!", "mimeType": "audio/wav"}]});
        assert!(format!("{:#}", save(&dir, Kind::Call, &bad).unwrap_err()).contains("not valid base64"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
