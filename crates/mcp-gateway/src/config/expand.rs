//! Variable expansion in an upstream's strings, and `envFile` reading.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{ConfigError, Location};

/// Expands `${...}` references for one file.
pub(crate) struct Expander<'a> {
    file: &'a str,
    env: &'a dyn Fn(&str) -> Option<String>,
    /// VS Code `inputs`: id → default.
    inputs: &'a BTreeMap<String, Option<String>>,
    /// `${workspaceFolder}`, when the configuration has a directory.
    workspace: Option<PathBuf>,
    /// The configuration's directory (`${file:PATH}` relative to it).
    base: Option<PathBuf>,
}

/// The environment variable that provides `${input:ID}` when the input has no default:
/// `MCPKIT_INPUT_` and the id upper-cased, every character other than an ASCII letter or digit
/// replaced by `_`.
pub fn input_env_var(id: &str) -> String {
    let mut name = String::from("MCPKIT_INPUT_");
    name.extend(id.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' }));
    name
}

impl<'a> Expander<'a> {
    pub(crate) fn new(
        file: &'a str,
        env: &'a dyn Fn(&str) -> Option<String>,
        inputs: &'a BTreeMap<String, Option<String>>,
        base_dir: Option<&Path>,
    ) -> Self {
        let workspace = base_dir.map(|dir| match (dir.file_name(), dir.parent()) {
            (Some(name), Some(parent)) if name == ".vscode" => {
                if parent.as_os_str().is_empty() {
                    PathBuf::from(".")
                } else {
                    parent.to_owned()
                }
            }
            _ => dir.to_owned(),
        });
        Expander { file, env, inputs, workspace, base: base_dir.map(Path::to_path_buf) }
    }

    /// Expands `text`, the value of `field` of `upstream`.
    pub(crate) fn expand(&self, text: &str, upstream: &str, field: &str) -> Result<String, ConfigError> {
        let at = || Location {
            file: self.file.to_owned(),
            upstream: Some(upstream.to_owned()),
            field: Some(field.to_owned()),
        };
        let invalid = |message: String| ConfigError::Invalid { at: at(), message };
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(i) = rest.find('$') {
            out.push_str(&rest[..i]);
            let after = &rest[i + 1..];
            if let Some(tail) = after.strip_prefix('$') {
                out.push('$');
                rest = tail;
            } else if let Some(body) = after.strip_prefix('{') {
                let Some(end) = body.find('}') else {
                    return Err(invalid(format!(
                        "unterminated `${{` in {text:?} (write `$$` for a literal `$`)"
                    )));
                };
                out.push_str(&self.resolve(&body[..end], at, invalid)?);
                rest = &body[end + 1..];
            } else {
                // A `$` not followed by `{` or `$` is literal.
                out.push('$');
                rest = after;
            }
        }
        out.push_str(rest);
        Ok(out)
    }

    /// The value of one `${reference}`.
    fn resolve(
        &self,
        reference: &str,
        at: impl Fn() -> Location,
        invalid: impl Fn(String) -> ConfigError,
    ) -> Result<String, ConfigError> {
        if let Some(id) = reference.strip_prefix("input:") {
            if id.is_empty() {
                return Err(invalid("`${input:}` names no input".to_owned()));
            }
            if let Some(Some(default)) = self.inputs.get(id) {
                return Ok(default.clone());
            }
            let env_var = input_env_var(id);
            return (self.env)(&env_var).ok_or_else(|| ConfigError::UnresolvedInput {
                at: at(),
                id: id.to_owned(),
                env_var,
            });
        }
        if let Some(path) = reference.strip_prefix("file:") {
            // A secret kept in a file (a mounted secret, say): its contents, without the
            // trailing newline. Relative to the configuration's directory.
            let path = Path::new(path);
            let path = match (&self.base, path.is_relative()) {
                (Some(base), true) => base.join(path),
                _ => path.to_path_buf(),
            };
            return super::trust::read_trusted(&path, super::trust::Holds::Secret)
                .map(|text| text.trim_end_matches(['\n', '\r']).to_owned())
                .map_err(|e| invalid(format!("`${{file:{}}}` cannot be read: {e}", path.display())));
        }
        if reference == "workspaceFolder" {
            return match &self.workspace {
                Some(dir) => Ok(dir.to_string_lossy().into_owned()),
                None => Err(invalid(
                    "`${workspaceFolder}` needs the configuration's directory (load it from a file)"
                        .to_owned(),
                )),
            };
        }
        let reference = reference.strip_prefix("env:").unwrap_or(reference);
        let (name, default) = match reference.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (reference, None),
        };
        if name.is_empty() || name.contains(|c: char| c == '$' || c == '{' || c.is_whitespace()) {
            return Err(invalid(format!("`${{{reference}}}` is not a valid variable reference")));
        }
        match ((self.env)(name), default) {
            (Some(value), Some(default)) if value.is_empty() => Ok(default.to_owned()),
            (Some(value), _) => Ok(value),
            (None, Some(default)) => Ok(default.to_owned()),
            (None, None) => Err(ConfigError::UnsetVariable { at: at(), name: name.to_owned() }),
        }
    }
}

/// Reads `KEY=VALUE` lines: blank lines and `#` comments are skipped, an `export ` before the key
/// is allowed, and one pair of matching quotes around the value is removed.
pub(crate) fn read_env_file(path: &Path, at: Location) -> Result<Vec<(String, String)>, ConfigError> {
    let error = |message: String| ConfigError::EnvFile { at: at.clone(), path: path.to_owned(), message };
    let text = super::trust::read_trusted(path, super::trust::Holds::Secret).map_err(error)?;
    parse_env_file(&text).map_err(error)
}

/// The pairs of an env file's text, in order.
pub(crate) fn parse_env_file(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut pairs = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((key, value)) = line.split_once('=') else {
            return Err(format!("line {}: expected KEY=VALUE", n + 1));
        };
        let key = key.trim();
        if key.is_empty() {
            return Err(format!("line {}: the key is empty", n + 1));
        }
        let value = value.trim();
        let value = ['"', '\'']
            .iter()
            .find_map(|q| value.strip_prefix(*q).and_then(|v| v.strip_suffix(*q)))
            .unwrap_or(value);
        pairs.push((key.to_owned(), value.to_owned()));
    }
    Ok(pairs)
}
