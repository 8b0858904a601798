//! `WWW-Authenticate` values: parsing (RFC 9110 §11.6.1, §11.2) and building `Bearer`
//! (RFC 6750 §3, RFC 9728 §5.1) and `DPoP` (RFC 9449 §7.1) challenges.

use std::fmt;

use crate::jose::Algorithm;

/// One challenge of a `WWW-Authenticate` value.
///
/// A challenge in the `token68` form (`Negotiate abc==`) is kept as a single parameter with an
/// empty name ([`Challenge::token68`]); real parameter names are never empty.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Challenge {
    /// The auth scheme as sent (`Bearer`, `DPoP`, ...). Compare it case-insensitively
    /// ([`Challenge::is`]).
    pub scheme: String,
    /// The parameters in order, names as sent, values unquoted and unescaped.
    pub params: Vec<(String, String)>,
}

impl Challenge {
    /// A challenge without parameters.
    pub fn new(scheme: impl Into<String>) -> Self {
        Challenge { scheme: scheme.into(), params: Vec::new() }
    }

    /// The same challenge with one more parameter.
    pub fn with_param(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.params.push((name.into(), value.into()));
        self
    }

    /// Whether the scheme is `scheme`, ignoring ASCII case.
    pub fn is(&self, scheme: &str) -> bool {
        self.scheme.eq_ignore_ascii_case(scheme)
    }

    /// The value of the first parameter named `name`, ignoring ASCII case in names.
    pub fn param(&self, name: &str) -> Option<&str> {
        if name.is_empty() {
            return None;
        }
        self.params.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The `token68` of a challenge in that form.
    pub fn token68(&self) -> Option<&str> {
        self.params.iter().find(|(n, _)| n.is_empty()).map(|(_, v)| v.as_str())
    }
}

/// The challenge as a `WWW-Authenticate` element: every parameter value quoted, `"` and `\`
/// escaped, control characters replaced by spaces.
impl fmt::Display for Challenge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.scheme)?;
        let mut first = true;
        for (name, value) in &self.params {
            f.write_str(if first { " " } else { ", " })?;
            first = false;
            if name.is_empty() {
                f.write_str(value)?;
                continue;
            }
            write!(f, "{name}=\"")?;
            for c in value.chars() {
                match c {
                    '"' | '\\' => write!(f, "\\{c}")?,
                    c if c.is_control() => f.write_str(" ")?,
                    c => write!(f, "{c}")?,
                }
            }
            f.write_str("\"")?;
        }
        Ok(())
    }
}

/// Parses a `WWW-Authenticate` value into its challenges, in order.
///
/// Handles several challenges in one value, parameters separated by commas (also inside quoted
/// strings), quoted strings with `\` escapes, optional whitespace around `=`, empty list
/// elements, and the `token68` form. Parsing stops at the first syntax error, keeping what was
/// read before it. When a response has several `WWW-Authenticate` fields, parse each (or their
/// values joined with `", "`).
pub fn parse_www_authenticate(value: &str) -> Vec<Challenge> {
    let mut p = Parser { s: value.as_bytes(), pos: 0 };
    let mut out = Vec::new();
    loop {
        p.skip_list_separators();
        if p.at_end() {
            break;
        }
        let Some(scheme) = p.token() else { break };
        let mut challenge = Challenge::new(scheme);
        let spaced = p.skip_ws();
        if p.at_end() || p.peek() == Some(b',') {
            out.push(challenge);
            continue;
        }
        if !spaced {
            // `scheme` glued to something that is not a list separator: a syntax error.
            break;
        }
        if !p.looks_like_param() {
            match p.token68() {
                Some(t) => {
                    challenge.params.push((String::new(), t));
                    out.push(challenge);
                    continue;
                }
                None => {
                    out.push(challenge);
                    break;
                }
            }
        }
        let mut ok = true;
        loop {
            match p.param() {
                Some(param) => challenge.params.push(param),
                None => {
                    ok = false;
                    break;
                }
            }
            p.skip_ws();
            if p.at_end() {
                break;
            }
            if p.peek() != Some(b',') {
                ok = false;
                break;
            }
            p.skip_list_separators();
            if !p.looks_like_param() {
                break;
            }
        }
        out.push(challenge);
        if !ok {
            break;
        }
    }
    out
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
}

fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn is_token68_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~+/".contains(&b)
}

impl Parser<'_> {
    fn at_end(&self) -> bool {
        self.pos >= self.s.len()
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn peek_at(&self, pos: usize) -> Option<u8> {
        self.s.get(pos).copied()
    }

    /// Skips spaces and tabs; whether any were skipped.
    fn skip_ws(&mut self) -> bool {
        let start = self.pos;
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
        self.pos > start
    }

    /// Skips whitespace and commas (empty list elements are allowed, RFC 9110 §5.6.1).
    fn skip_list_separators(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b',')) {
            self.pos += 1;
        }
    }

    fn token_end(&self, from: usize) -> usize {
        let mut end = from;
        while self.peek_at(end).is_some_and(is_tchar) {
            end += 1;
        }
        end
    }

    fn token(&mut self) -> Option<String> {
        let end = self.token_end(self.pos);
        if end == self.pos {
            return None;
        }
        let token = String::from_utf8_lossy(&self.s[self.pos..end]).into_owned();
        self.pos = end;
        Some(token)
    }

    /// Whether the input here reads `token BWS "=" BWS (token / quoted-string)`.
    fn looks_like_param(&self) -> bool {
        let mut i = self.token_end(self.pos);
        if i == self.pos {
            return false;
        }
        while matches!(self.peek_at(i), Some(b' ' | b'\t')) {
            i += 1;
        }
        if self.peek_at(i) != Some(b'=') {
            return false;
        }
        i += 1;
        while matches!(self.peek_at(i), Some(b' ' | b'\t')) {
            i += 1;
        }
        self.peek_at(i).is_some_and(|b| b == b'"' || is_tchar(b))
    }

    /// `token68`, which must be followed by the end or a comma.
    fn token68(&mut self) -> Option<String> {
        let start = self.pos;
        let mut end = start;
        while self.peek_at(end).is_some_and(is_token68_char) {
            end += 1;
        }
        if end == start {
            return None;
        }
        while self.peek_at(end) == Some(b'=') {
            end += 1;
        }
        let value = String::from_utf8_lossy(&self.s[start..end]).into_owned();
        self.pos = end;
        self.skip_ws();
        if self.at_end() || self.peek() == Some(b',') { Some(value) } else { None }
    }

    fn param(&mut self) -> Option<(String, String)> {
        let name = self.token()?;
        self.skip_ws();
        if self.peek() != Some(b'=') {
            return None;
        }
        self.pos += 1;
        self.skip_ws();
        let value = if self.peek() == Some(b'"') { self.quoted_string()? } else { self.token()? };
        Some((name, value))
    }

    fn quoted_string(&mut self) -> Option<String> {
        self.pos += 1; // opening quote
        let mut value = Vec::new();
        loop {
            match self.peek()? {
                b'"' => {
                    self.pos += 1;
                    return Some(String::from_utf8_lossy(&value).into_owned());
                }
                b'\\' => {
                    let escaped = self.peek_at(self.pos + 1)?;
                    value.push(escaped);
                    self.pos += 2;
                }
                b => {
                    value.push(b);
                    self.pos += 1;
                }
            }
        }
    }
}

fn push_common(
    mut challenge: Challenge,
    resource_metadata: Option<&str>,
    scope: Option<&str>,
    error: Option<&str>,
    error_description: Option<&str>,
) -> Challenge {
    let named = [
        ("error", error),
        ("error_description", error_description),
        ("scope", scope),
        ("resource_metadata", resource_metadata),
    ];
    for (name, value) in named {
        if let Some(value) = value {
            challenge = challenge.with_param(name, value);
        }
    }
    challenge
}

/// A `Bearer` challenge (RFC 6750 §3) with the given parameters, in the order `error`,
/// `error_description`, `scope`, `resource_metadata` (RFC 9728 §5.1); absent ones are left out.
///
/// ```
/// # use mcp_auth::challenge::bearer_challenge;
/// let v = bearer_challenge(Some("https://mcp.example.com/.well-known/oauth-protected-resource"),
///     Some("files:read"), None, None);
/// assert_eq!(v, r#"Bearer scope="files:read", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource""#);
/// ```
pub fn bearer_challenge(
    resource_metadata: Option<&str>,
    scope: Option<&str>,
    error: Option<&str>,
    error_description: Option<&str>,
) -> String {
    push_common(Challenge::new("Bearer"), resource_metadata, scope, error, error_description).to_string()
}

/// A `DPoP` challenge (RFC 9449 §7.1): `algs` (space-separated, when not empty) and then the
/// same parameters as [`bearer_challenge`].
pub fn dpop_challenge(
    algs: &[Algorithm],
    resource_metadata: Option<&str>,
    scope: Option<&str>,
    error: Option<&str>,
    error_description: Option<&str>,
) -> String {
    let mut challenge = Challenge::new("DPoP");
    if !algs.is_empty() {
        let names: Vec<&str> = algs.iter().map(|a| a.as_str()).collect();
        challenge = challenge.with_param("algs", names.join(" "));
    }
    push_common(challenge, resource_metadata, scope, error, error_description).to_string()
}

#[cfg(test)]
mod tests;
