//! A `SKILL.md`'s YAML frontmatter, rendered as JSON (verbatim: every field the author wrote).

use mcp_types::{JsonObject, JsonValue};
use yaml_rust2::{Yaml, YamlLoader};

/// Why a `SKILL.md` has no usable frontmatter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrontmatterError {
    /// The file does not begin with a `---` line and a closing `---` line.
    #[error("it does not begin with YAML frontmatter between two --- lines")]
    Missing,
    /// The block is not YAML, or not a mapping.
    #[error("its frontmatter is not a YAML mapping: {0}")]
    Invalid(String),
    /// `name` or `description` is missing or not a non-empty string.
    #[error("its frontmatter has no {0} (a non-empty string)")]
    Required(&'static str),
}

/// The frontmatter block of `text`: what lies between a first line `---` and the next line
/// that is `---` (a byte-order mark and trailing spaces after the dashes are allowed).
fn block(text: &str) -> Option<&str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text.strip_prefix("---")?;
    let rest = rest.trim_start_matches([' ', '\t']);
    let rest = rest.strip_prefix("\r\n").or_else(|| rest.strip_prefix('\n'))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']).trim_end_matches([' ', '\t']);
        if bare == "---" {
            return Some(&rest[..offset]);
        }
        offset += line.len();
    }
    None
}

/// The frontmatter of a `SKILL.md` as a JSON object (every field, verbatim), with `name` and
/// `description` checked.
pub fn parse(text: &str) -> Result<JsonObject, FrontmatterError> {
    let yaml = block(text).ok_or(FrontmatterError::Missing)?;
    let mut documents =
        YamlLoader::load_from_str(yaml).map_err(|e| FrontmatterError::Invalid(e.to_string()))?;
    let document = if documents.is_empty() { Yaml::Null } else { documents.swap_remove(0) };
    let JsonValue::Object(object) = to_json(document) else {
        return Err(FrontmatterError::Invalid("it is not a mapping".into()));
    };
    for field in ["name", "description"] {
        if object.get(field).and_then(JsonValue::as_str).is_none_or(str::is_empty) {
            return Err(FrontmatterError::Required(field));
        }
    }
    Ok(object)
}

fn to_json(yaml: Yaml) -> JsonValue {
    match yaml {
        Yaml::Real(text) => text
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or(JsonValue::String(text), JsonValue::Number),
        Yaml::Integer(n) => JsonValue::from(n),
        Yaml::String(s) => JsonValue::String(s),
        Yaml::Boolean(b) => JsonValue::Bool(b),
        Yaml::Array(items) => JsonValue::Array(items.into_iter().map(to_json).collect()),
        Yaml::Hash(hash) => JsonValue::Object(
            hash.into_iter()
                .map(|(key, value)| {
                    let key = match to_json(key) {
                        JsonValue::String(s) => s,
                        other => other.to_string(),
                    };
                    (key, to_json(value))
                })
                .collect(),
        ),
        Yaml::Null | Yaml::BadValue | Yaml::Alias(_) => JsonValue::Null,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_frontmatter_is_rendered_verbatim() {
        let text = "---\nname: pdf-processing\ndescription: \"Extract: fill, assemble\"\nlicense: Apache-2.0\n\
                    metadata:\n  version: 2.1\n  tags: [a, b]\n  count: 3\n  draft: false\n---\n# Body\n";
        assert_eq!(
            JsonValue::Object(parse(text).unwrap()),
            json!({"name": "pdf-processing", "description": "Extract: fill, assemble", "license": "Apache-2.0",
                   "metadata": {"version": 2.1, "tags": ["a", "b"], "count": 3, "draft": false}})
        );
        let crlf = "\u{feff}---  \r\nname: x\r\ndescription: y\r\n---\r\nbody";
        assert_eq!(JsonValue::Object(parse(crlf).unwrap()), json!({"name": "x", "description": "y"}));
    }

    #[test]
    fn what_is_refused() {
        assert_eq!(parse("# no frontmatter"), Err(FrontmatterError::Missing));
        assert_eq!(parse("---\nname: x\ndescription: y\n"), Err(FrontmatterError::Missing), "unclosed");
        assert_eq!(parse("---\nname: x\n---\n"), Err(FrontmatterError::Required("description")));
        assert_eq!(parse("---\nname: ''\ndescription: d\n---\n"), Err(FrontmatterError::Required("name")));
        assert!(matches!(parse("---\n- a list\n---\n"), Err(FrontmatterError::Invalid(_))));
        assert!(matches!(parse("---\nname: [unclosed\n---\n"), Err(FrontmatterError::Invalid(_))));
    }
}
