//! RFC 6570 URI templates, for MCP resource templates.
//!
//! A [`UriTemplate`] is parsed from the `uriTemplate` of a resource template (levels 1–4:
//! literals, `{var}`, the operators `+ # . / ; ? &`, several variables per expression, the
//! explode `*` and prefix `:N` modifiers). It can be [expanded](UriTemplate::expand) with
//! string values and, for `resources/read`, [matched](UriTemplate::matches) against a
//! concrete URI to recover the variables.
//!
//! # Matching rules
//!
//! Matching is the practical inverse of expansion; values are percent-decoded (a `+` stays a
//! `+`), and an invalid escape or a value that does not decode to UTF-8 means no match.
//!
//! * `{var}` matches one or more characters other than `/`, `?` and `#` (one path segment).
//! * `{+var}` matches one or more characters other than `#`, so it may span `/` (and `?`).
//! * `{#var}` matches `#` followed by anything.
//! * `{.var}` matches `.label`, `{/var}` matches `/segment`; a label may contain `.`, a
//!   segment may not contain `/`, and neither contains `?` or `#`.
//! * With several variables (`{x,y}`, `{/x,y}`, …) the span is split on the operator's
//!   separator and the pieces are assigned in order; missing trailing pieces leave the last
//!   variables absent, more pieces than variables is no match.
//! * `{?x,y}`, `{&x}` and `{;x}` match `name=value` parameters whose names are the
//!   expression's variables, in any order, each optional (an absent one is missing from the
//!   result); `name` alone or `name=` is the empty string. An unknown or repeated name is
//!   not matched by the expression.
//! * Expressions with an operator character (all but `{var}` and `{+var}`) are optional:
//!   when none of their variables is present they match the empty string.
//! * `:N` limits a value to `N` characters; `*` has no effect on string values. A variable
//!   used twice must match consistently (`{/var:1,var}` matches `/v/value`).
//!
//! Literals anchor the spans. When the split is ambiguous (two adjacent expressions, or a
//! literal that also occurs inside a value) the rule is *lazy, left to right*: each
//! expression takes the shortest span that still lets the rest of the template match, so
//! `{a}{b}` on `xyz` gives `a = "x"`, `b = "yz"`, and `{a}-{b}` on `x-y-z` gives `a = "x"`.
//! The matcher is deterministic and never explores a (template part, URI position) pair
//! twice, so there is no exponential backtracking, and a failed single-variable expression
//! rules out every later start in the run it scanned, which keeps matching linear in the URI
//! length for `{var}`, `{+var}`, `{#var}`, `{.var}` and `{/var}`. Multi-variable, prefixed
//! and parameter expressions rescan from each start they are tried at, which is quadratic
//! only for adversarial URIs. Literals are compared as written (non-ASCII literal characters
//! in percent-encoded form); the URI is not normalized.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// Why a string is not a valid URI template.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("invalid URI template at byte {at}: {kind}")]
#[non_exhaustive]
pub struct TemplateError {
    /// What is wrong.
    pub kind: TemplateErrorKind,
    /// Byte offset of the problem in the template.
    pub at: usize,
}

/// What is wrong with a URI template.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TemplateErrorKind {
    /// A `{` without its `}` (reported at the `{`).
    #[error("`{{` has no matching `}}`")]
    UnclosedExpression,
    /// A `}` outside an expression.
    #[error("unmatched `}}`")]
    UnmatchedClose,
    /// A `{` inside an expression.
    #[error("nested `{{`")]
    NestedBrace,
    /// `{}`.
    #[error("empty expression")]
    EmptyExpression,
    /// An empty variable name, as in `{+}` or `{a,}`.
    #[error("empty variable name")]
    EmptyVariable,
    /// A character not allowed in a variable name or modifier.
    #[error("invalid character {0:?} in expression")]
    InvalidVariableChar(char),
    /// A character not allowed in a literal: space, `"`, `'`, `<`, `>`, `\`, `^`, `` ` ``,
    /// `|` or a control character.
    #[error("invalid character {0:?} in literal")]
    InvalidLiteralChar(char),
    /// A `%` not followed by two hex digits.
    #[error("`%` not followed by two hex digits")]
    InvalidPercentEncoding,
    /// One of the operators RFC 6570 reserves for future use: `= , ! @ |`.
    #[error("reserved operator {0:?}")]
    ReservedOperator(char),
    /// A prefix modifier other than `:1` … `:9999` (reported at the `:`).
    #[error("invalid prefix modifier, expected `:1` to `:9999`")]
    InvalidPrefix,
}

fn err<T>(kind: TemplateErrorKind, at: usize) -> Result<T, TemplateError> {
    Err(TemplateError { kind, at })
}

/// A parsed RFC 6570 URI template. See the [module documentation](self) for how matching
/// works.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UriTemplate {
    source: String,
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Part {
    /// A literal in its expanded form (non-ASCII characters percent-encoded).
    Literal(String),
    Expr(Op, Vec<VarSpec>),
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct VarSpec {
    name: String,
    prefix: Option<usize>,
    /// Has no effect on string values.
    explode: bool,
}

/// An expression's operator character, `0` for a simple `{var}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Op(u8);

impl Op {
    const SIMPLE: Op = Op(0);

    /// What starts a non-empty expansion (RFC 6570 appendix A, `first`).
    fn first(self) -> Option<u8> {
        (!matches!(self.0, 0 | b'+')).then_some(self.0)
    }

    fn sep(self) -> u8 {
        match self.0 {
            b'.' | b'/' | b';' => self.0,
            b'?' | b'&' => b'&',
            _ => b',',
        }
    }

    fn named(self) -> bool {
        matches!(self.0, b';' | b'?' | b'&')
    }

    fn allow_reserved(self) -> bool {
        matches!(self.0, b'+' | b'#')
    }

    /// Whether a raw URI byte may appear in a value matched by this operator.
    fn value_byte(self, b: u8) -> bool {
        match self.0 {
            b'+' => b != b'#',
            b'#' => true,
            b';' => !matches!(b, b'/' | b'?' | b'#' | b';'),
            b'?' | b'&' => !matches!(b, b'#' | b'&'),
            _ => !matches!(b, b'/' | b'?' | b'#'),
        }
    }
}

impl UriTemplate {
    /// Parses a template, rejecting anything that is not RFC 6570 (level 4) syntax.
    pub fn parse(template: &str) -> Result<UriTemplate, TemplateError> {
        let mut parts = Vec::new();
        let mut literal = String::new();
        let mut i = 0;
        while let Some(c) = template[i..].chars().next() {
            match c {
                '{' => {
                    if !literal.is_empty() {
                        parts.push(Part::Literal(std::mem::take(&mut literal)));
                    }
                    let next = template[i + 1..].find(['{', '}']).map(|j| i + 1 + j);
                    match next {
                        Some(j) if template.as_bytes()[j] == b'}' => {
                            parts.push(parse_expression(template, i, j)?);
                            i = j + 1;
                        }
                        Some(j) => return err(TemplateErrorKind::NestedBrace, j),
                        None => return err(TemplateErrorKind::UnclosedExpression, i),
                    }
                    continue;
                }
                '}' => return err(TemplateErrorKind::UnmatchedClose, i),
                '%' => {
                    match template.get(i..i + 3).filter(|t| hex_pair(t.as_bytes(), 1).is_some()) {
                        Some(triplet) => literal.push_str(triplet),
                        None => return err(TemplateErrorKind::InvalidPercentEncoding, i),
                    }
                    i += 3;
                    continue;
                }
                c if is_literal_ascii(c) => literal.push(c),
                c if c.is_ascii() || c.is_control() => {
                    return err(TemplateErrorKind::InvalidLiteralChar(c), i);
                }
                c => push_encoded(&mut literal, c),
            }
            i += c.len_utf8();
        }
        if !literal.is_empty() {
            parts.push(Part::Literal(literal));
        }
        Ok(UriTemplate { source: template.to_owned(), parts })
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The names of the template's variables, each once, in order of first appearance.
    pub fn variable_names(&self) -> impl Iterator<Item = &str> + '_ {
        let all = || {
            self.parts.iter().flat_map(|part| if let Part::Expr(_, vars) = part { &vars[..] } else { &[] })
        };
        all()
            .enumerate()
            .filter(move |&(i, v)| all().position(|w| w.name == v.name) == Some(i))
            .map(|(_, v)| &*v.name)
    }

    /// Expands the template (RFC 6570 §3.2) with string values; variables missing from
    /// `vars` are undefined and skipped. Values are percent-encoded as uppercase-hex UTF-8:
    /// only unreserved characters are kept, except that `{+var}` and `{#var}` also keep
    /// reserved characters and existing `%XX` escapes.
    pub fn expand(&self, vars: &BTreeMap<String, String>) -> String {
        let mut out = String::with_capacity(self.source.len());
        for part in &self.parts {
            let (op, specs) = match part {
                Part::Literal(literal) => {
                    out.push_str(literal);
                    continue;
                }
                Part::Expr(op, vars) => (*op, vars),
            };
            let mut before = op.first();
            for spec in specs {
                let Some(value) = vars.get(&spec.name) else { continue };
                out.extend(before.map(char::from));
                before = Some(op.sep());
                let value = truncate(value, spec.prefix);
                if op.named() {
                    out.push_str(&spec.name);
                    if value.is_empty() && op.0 == b';' {
                        continue;
                    }
                    out.push('=');
                }
                encode_value(&mut out, value, op.allow_reserved());
            }
        }
        out
    }

    /// Matches a concrete URI against the template and returns the percent-decoded values
    /// of the variables it contains, or `None` if it does not match. See the
    /// [module documentation](self) for the rules.
    pub fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        let failed = vec![BTreeMap::new(); self.parts.len()];
        let mut matcher = Matcher { parts: &self.parts, uri, failed, spans: Vec::new() };
        if !matcher.run(0, 0) {
            return None;
        }
        let exprs = self.parts.iter().filter_map(|part| match part {
            Part::Expr(op, vars) => Some((*op, vars)),
            Part::Literal(_) => None,
        });
        let mut captures = Vec::new();
        for ((op, vars), &(start, end)) in exprs.zip(&matcher.spans) {
            capture(op, vars, &uri[start..end], &mut captures)?;
        }
        merge(captures)
    }
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl FromStr for UriTemplate {
    type Err = TemplateError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        UriTemplate::parse(s)
    }
}

/// Parses the expression between the braces at `open` and `close`.
fn parse_expression(template: &str, open: usize, close: usize) -> Result<Part, TemplateError> {
    let mut at = open + 1;
    let op = match template.as_bytes()[at] {
        b'}' => return err(TemplateErrorKind::EmptyExpression, open),
        c @ (b'=' | b',' | b'!' | b'@' | b'|') => {
            return err(TemplateErrorKind::ReservedOperator(c.into()), at);
        }
        c @ (b'+' | b'#' | b'.' | b'/' | b';' | b'?' | b'&') => {
            at += 1;
            Op(c)
        }
        _ => Op::SIMPLE,
    };
    let mut vars = Vec::new();
    for spec in template[at..close].split(',') {
        vars.push(parse_varspec(spec, at)?);
        at += spec.len() + 1;
    }
    Ok(Part::Expr(op, vars))
}

/// Parses `varname [ ":" max-length | "*" ]`, found at offset `at`.
fn parse_varspec(spec: &str, at: usize) -> Result<VarSpec, TemplateError> {
    let name_end = spec.find([':', '*']).unwrap_or(spec.len());
    let (name, modifier) = spec.split_at(name_end);
    let bytes = name.as_bytes();
    if bytes.is_empty() {
        return err(TemplateErrorKind::EmptyVariable, at);
    }
    let bad = |i: usize| {
        err(TemplateErrorKind::InvalidVariableChar(spec[i..].chars().next().unwrap_or('?')), at + i)
    };
    let (mut i, mut after_dot) = (0, true);
    while let Some(&b) = bytes.get(i) {
        match b {
            b'%' if hex_pair(bytes, i + 1).is_none() => {
                return err(TemplateErrorKind::InvalidPercentEncoding, at + i);
            }
            b'%' => i += 3,
            b'.' if after_dot => return bad(i),
            b'.' => i += 1,
            b if b.is_ascii_alphanumeric() || b == b'_' => i += 1,
            _ => return bad(i),
        }
        after_dot = b == b'.';
        if after_dot && i == bytes.len() {
            return bad(i - 1);
        }
    }
    let name = name.to_owned();
    match modifier.strip_prefix(':') {
        _ if modifier.is_empty() => Ok(VarSpec { name, prefix: None, explode: false }),
        _ if modifier == "*" => Ok(VarSpec { name, prefix: None, explode: true }),
        Some(digits)
            if (1..=4).contains(&digits.len())
                && !digits.starts_with('0')
                && digits.bytes().all(|b| b.is_ascii_digit()) =>
        {
            let n = digits.bytes().fold(0, |n, b| n * 10 + usize::from(b - b'0'));
            Ok(VarSpec { name, prefix: Some(n), explode: false })
        }
        Some(_) => err(TemplateErrorKind::InvalidPrefix, at + name_end),
        None => bad(name_end + 1),
    }
}

/// RFC 6570 `literals`, ASCII part (`%`, `{` and `}` are handled separately).
fn is_literal_ascii(c: char) -> bool {
    matches!(c as u32, 0x21 | 0x23..=0x24 | 0x26 | 0x28..=0x3B | 0x3D | 0x3F..=0x5B | 0x5D | 0x5F | 0x61..=0x7A | 0x7E)
}

fn is_unreserved(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~')
}

fn is_reserved(c: char) -> bool {
    ":/?#[]@!$&'()*+,;=".contains(c)
}

/// Appends `value`, percent-encoding what the operator does not allow through.
fn encode_value(out: &mut String, value: &str, allow_reserved: bool) {
    for (i, c) in value.char_indices() {
        let pct = c == '%' && hex_pair(value.as_bytes(), i + 1).is_some();
        if is_unreserved(c) || (allow_reserved && (is_reserved(c) || pct)) {
            out.push(c);
        } else {
            push_encoded(out, c);
        }
    }
}

/// Appends the UTF-8 bytes of `c` as `%XX` triplets (uppercase hex).
fn push_encoded(out: &mut String, c: char) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut buf = [0; 4];
    for &b in c.encode_utf8(&mut buf).as_bytes() {
        out.extend(['%', char::from(HEX[usize::from(b >> 4)]), char::from(HEX[usize::from(b & 15)])]);
    }
}

/// The byte encoded by the two hex digits at `bytes[i..i + 2]`, if they are hex digits.
fn hex_pair(bytes: &[u8], i: usize) -> Option<u8> {
    let digit = |b: &u8| char::from(*b).to_digit(16);
    let (hi, lo) = (digit(bytes.get(i)?)?, digit(bytes.get(i + 1)?)?);
    u8::try_from(hi * 16 + lo).ok()
}

/// The byte a URI encodes at `p` and how many bytes encode it (3 for `%XX`); `None` at the
/// end or on an invalid escape.
fn token(bytes: &[u8], p: usize) -> Option<(u8, usize)> {
    match *bytes.get(p)? {
        b'%' => Some((hex_pair(bytes, p + 1)?, 3)),
        b => Some((b, 1)),
    }
}

/// Percent-decodes `s`; `None` on an invalid escape or if the result is not UTF-8.
fn decode(s: &str) -> Option<String> {
    let (mut out, mut p) = (Vec::with_capacity(s.len()), 0);
    while p < s.len() {
        let (b, len) = token(s.as_bytes(), p)?;
        out.push(b);
        p += len;
    }
    String::from_utf8(out).ok()
}

/// The first `prefix` characters of `s` (all of it without a prefix modifier).
fn truncate(s: &str, prefix: Option<usize>) -> &str {
    match prefix.and_then(|n| s.char_indices().nth(n)) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// Lazy, memoized matcher: `run(i, pos)` says whether `parts[i..]` matches `uri[pos..]`,
/// recording the span of each expression on success.
///
/// Failures are remembered per part as disjoint ranges of start positions, so no
/// `(part, position)` pair is explored twice. For a single-variable expression without a
/// prefix modifier a failure covers the whole run its scan went through: a later start in
/// that run has a subset of the same candidate ends. Together this keeps matching linear in
/// the URI length, except for repeated scans of multi-variable, prefixed or `?;&`
/// expressions, which are bounded by their (segment or parameter) structure.
struct Matcher<'a> {
    parts: &'a [Part],
    uri: &'a str,
    failed: Vec<BTreeMap<usize, usize>>,
    spans: Vec<(usize, usize)>,
}

impl Matcher<'_> {
    fn run(&mut self, i: usize, pos: usize) -> bool {
        let (parts, bytes) = (self.parts, self.uri.as_bytes());
        let Some(part) = parts.get(i) else { return pos == bytes.len() };
        if self.failed[i].range(..=pos).next_back().is_some_and(|(_, &end)| pos <= end) {
            return false;
        }
        let mut failed_upto = pos;
        let matched = match part {
            Part::Literal(literal) => {
                bytes[pos..].starts_with(literal.as_bytes()) && self.run(i + 1, pos + literal.len())
            }
            Part::Expr(op, vars) => {
                let next = match parts.get(i + 1) {
                    Some(Part::Literal(literal)) => Some(literal.as_bytes()),
                    _ => None,
                };
                let last = i + 1 == parts.len();
                let (ends, reach) = candidate_ends(*op, vars, self.uri, pos);
                if let [var] = &vars[..]
                    && var.prefix.is_none()
                    && !op.named()
                {
                    failed_upto = reach.saturating_sub(1).max(pos);
                }
                ends.into_iter().any(|end| {
                    let fits = if last {
                        end == bytes.len()
                    } else {
                        next.is_none_or(|l| bytes[end..].starts_with(l))
                    };
                    self.spans.push((pos, end));
                    let rest = fits && self.run(i + 1, end);
                    if !rest {
                        self.spans.pop();
                    }
                    rest
                })
            }
        };
        if !matched {
            self.failed[i].insert(pos, failed_upto);
        }
        matched
    }
}

/// Every `end` such that `uri[start..end]` is a valid match of the expression, shortest
/// first, and where the scan stopped. Validity only shrinks as the span grows (apart from
/// not splitting an escape or a character), so one forward scan finds them all.
fn candidate_ends(op: Op, vars: &[VarSpec], uri: &str, start: usize) -> (Vec<usize>, usize) {
    let bytes = uri.as_bytes();
    let mut ends = Vec::new();
    let mut p = start;
    if let Some(first) = op.first() {
        ends.push(start); // the expression is absent
        if bytes.get(start) != Some(&first) {
            return (ends, start);
        }
        p += 1;
    }
    let sep = op.sep();
    // With one variable the separator is part of the value, except for `/`.
    let split = vars.len() > 1 || op.0 == b'/' || op.named();
    // Consumes the value byte (or escape) at `p`, counting characters for the prefix
    // modifier; `false` at the end, on an invalid escape or a byte the value cannot hold.
    let step = |p: &mut usize, chars: &mut usize| match token(bytes, *p) {
        Some((b, len)) if len == 3 || (op.value_byte(b) && !(split && b == sep)) => {
            *p += len;
            *chars += usize::from(b & 0xC0 != 0x80);
            true
        }
        _ => false,
    };
    if op.named() {
        let mut seen = vec![false; vars.len()];
        'params: loop {
            let name_start = p;
            while bytes.get(p).is_some_and(|&b| b != b'=' && b != sep && op.value_byte(b)) {
                p += 1;
            }
            let name = &bytes[name_start..p];
            let Some(i) = (0..vars.len()).find(|&i| !seen[i] && vars[i].name.as_bytes() == name) else {
                break;
            };
            seen[i] = true;
            if bytes.get(p) == Some(&b'=') {
                p += 1;
                let mut chars = 0;
                loop {
                    if uri.is_char_boundary(p) {
                        ends.push(p);
                    }
                    if bytes.get(p) == Some(&sep) {
                        p += 1;
                        continue 'params;
                    }
                    if !step(&mut p, &mut chars) || vars[i].prefix.is_some_and(|n| chars > n) {
                        break 'params;
                    }
                }
            }
            ends.push(p);
            if bytes.get(p) != Some(&sep) {
                break;
            }
            p += 1;
        }
    } else {
        let (mut item, mut chars) = (0, 0);
        loop {
            if p > start && uri.is_char_boundary(p) {
                ends.push(p);
            }
            if split && bytes.get(p) == Some(&sep) {
                item += 1;
                if item == vars.len() {
                    break;
                }
                chars = 0;
                p += 1;
            } else if !step(&mut p, &mut chars) || vars[item].prefix.is_some_and(|n| chars > n) {
                break;
            }
        }
    }
    (ends, p)
}

/// Extracts the values of one expression from its matched span.
fn capture<'t>(op: Op, vars: &'t [VarSpec], span: &str, out: &mut Vec<(&'t VarSpec, String)>) -> Option<()> {
    let body = match op.first() {
        Some(_) if span.is_empty() => return Some(()),
        Some(_) => &span[1..],
        None => span,
    };
    let sep = char::from(op.sep());
    if op.named() {
        let mut seen = vec![false; vars.len()];
        for param in body.split(sep) {
            let (name, value) = param.split_once('=').unwrap_or((param, ""));
            let i = (0..vars.len()).find(|&i| !seen[i] && vars[i].name == name)?;
            seen[i] = true;
            out.push((&vars[i], decode(value)?));
        }
    } else if let [var] = vars {
        out.push((var, decode(body)?));
    } else {
        for (var, piece) in vars.iter().zip(body.split(sep)) {
            out.push((var, decode(piece)?));
        }
    }
    Some(())
}

/// Builds the result, checking that a variable captured several times is consistent: the
/// capture without a prefix modifier (or with the longest one) is authoritative.
fn merge(mut captures: Vec<(&VarSpec, String)>) -> Option<BTreeMap<String, String>> {
    captures.sort_by_key(|(var, _)| std::cmp::Reverse(var.prefix.unwrap_or(usize::MAX)));
    let mut map = BTreeMap::new();
    for (var, value) in captures {
        match map.get(&var.name) {
            None => {
                map.insert(var.name.clone(), value);
            }
            Some(full) if truncate(full, var.prefix) == value => {}
            Some(_) => return None,
        }
    }
    Some(map)
}

#[cfg(test)]
mod tests;
