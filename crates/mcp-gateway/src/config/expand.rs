//! Variable expansion in an upstream's strings, and `envFile` reading.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{ConfigError, Location};

/// One of VS Code's `inputs`: a value `${input:ID}` stands for, that VS Code asks its user for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Input {
    /// Its `id`.
    pub id: String,
    /// Its `description`: what to ask.
    pub description: Option<String>,
    /// `"password": true`: the answer is a secret, not to be echoed.
    pub password: bool,
    /// Its `default`.
    pub default: Option<String>,
    /// A `pickString` input's `options`: the answers to choose from.
    pub options: Vec<String>,
}

/// Asks a person for an input's value: `Ok(None)` when nobody can be asked (no terminal),
/// `Err` when the person gave up or the question failed.
pub type Ask<'a> = &'a dyn Fn(&Input) -> Result<Option<String>, String>;

/// Expands `${...}` references for one file.
pub(crate) struct Expander<'a> {
    file: &'a str,
    env: &'a dyn Fn(&str) -> Option<String>,
    /// VS Code `inputs`, by id.
    inputs: &'a BTreeMap<String, Input>,
    /// Who answers `${input:ID}`, when someone can ([`Expander::asking`]).
    ask: Option<Ask<'a>>,
    /// The answers given so far: each input is asked once.
    answered: RefCell<BTreeMap<String, String>>,
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
        inputs: &'a BTreeMap<String, Input>,
        base_dir: Option<&Path>,
    ) -> Self {
        let workspace = base_dir.map(|dir| match (dir.file_name(), dir.parent()) {
            (Some(name), Some(parent)) if name == ".vscode" || name == ".cursor" => {
                if parent.as_os_str().is_empty() { PathBuf::from(".") } else { parent.to_owned() }
            }
            _ => dir.to_owned(),
        });
        Expander {
            file,
            env,
            inputs,
            ask: None,
            answered: RefCell::new(BTreeMap::new()),
            workspace,
            base: base_dir.map(Path::to_path_buf),
        }
    }

    /// `${input:ID}` as a client run by a person resolves it: `$MCPKIT_INPUT_ID` when set, else
    /// `ask`'s answer (once per input), else the input's `default`. Without this (the
    /// gateway, which nobody sits in front of), the `default` comes first, then the variable.
    pub(crate) fn asking(mut self, ask: Ask<'a>) -> Self {
        self.ask = Some(ask);
        self
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

    /// The value of `${input:ID}`.
    fn input(
        &self,
        id: &str,
        at: impl Fn() -> Location,
        invalid: impl Fn(String) -> ConfigError,
    ) -> Result<String, ConfigError> {
        let declared = self.inputs.get(id);
        let default = declared.and_then(|input| input.default.clone());
        let env_var = input_env_var(id);
        let unresolved =
            || ConfigError::UnresolvedInput { at: at(), id: id.to_owned(), env_var: env_var.clone() };
        let Some(ask) = self.ask else {
            return default.or_else(|| (self.env)(&env_var)).ok_or_else(unresolved);
        };
        if let Some(value) = (self.env)(&env_var) {
            return Ok(value);
        }
        if let Some(value) = self.answered.borrow().get(id) {
            return Ok(value.clone());
        }
        let undeclared;
        let input = match declared {
            Some(input) => input,
            None => {
                undeclared = Input { id: id.to_owned(), ..Input::default() };
                &undeclared
            }
        };
        let answer = match ask(input) {
            Ok(Some(answer)) => answer,
            Ok(None) => return default.ok_or_else(unresolved),
            Err(why) => return Err(invalid(format!("input `{id}`: {why}"))),
        };
        self.answered.borrow_mut().insert(id.to_owned(), answer.clone());
        Ok(answer)
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
            return self.input(id, at, invalid);
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
