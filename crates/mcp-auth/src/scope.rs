//! OAuth scope strings (RFC 6749 §3.3): space-separated, case-sensitive scope tokens, treated as
//! sets.
//!
//! Step-up authorization in MCP re-authorizes with the **union** of the scopes granted so far
//! and the scopes of the new challenge ([`union`]).

/// The scope tokens of `scope`, in order, without duplicates. Runs of spaces (and other ASCII
/// whitespace, which is not valid in a scope token) separate tokens.
pub fn split(scope: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for token in scope.split_ascii_whitespace() {
        if !out.iter().any(|t| t == token) {
            out.push(token.to_owned());
        }
    }
    out
}

/// Joins scope tokens with single spaces.
pub fn join<S: AsRef<str>>(tokens: &[S]) -> String {
    tokens.iter().map(AsRef::as_ref).collect::<Vec<_>>().join(" ")
}

/// The tokens of `a`, then those of `b` not already in `a`, space-separated.
pub fn union(a: &str, b: &str) -> String {
    let mut tokens = split(a);
    for token in split(b) {
        if !tokens.contains(&token) {
            tokens.push(token);
        }
    }
    join(&tokens)
}

/// Whether every token in `required` is one of the tokens of `granted` (exact, case-sensitive
/// comparison; scope hierarchies are the caller's business).
pub fn contains_all(granted: &str, required: &[&str]) -> bool {
    let granted: Vec<&str> = granted.split_ascii_whitespace().collect();
    required.iter().all(|r| granted.contains(r))
}

/// The tokens of `required` that `granted` lacks, in order.
pub fn missing(granted: &str, required: &str) -> Vec<String> {
    let granted: Vec<&str> = granted.split_ascii_whitespace().collect();
    split(required).into_iter().filter(|r| !granted.contains(&r.as_str())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_table() {
        let cases: &[(&str, &[&str])] = &[
            ("", &[]),
            ("   ", &[]),
            ("a", &["a"]),
            ("a b", &["a", "b"]),
            ("  a   b  ", &["a", "b"]),
            ("b a b", &["b", "a"]),
            ("mcp:read\tmcp:write", &["mcp:read", "mcp:write"]),
            ("A a", &["A", "a"]),
        ];
        for (input, expected) in cases {
            assert_eq!(split(input), expected.to_vec(), "{input:?}");
        }
    }

    #[test]
    fn union_table() {
        let cases = [
            ("", "", ""),
            ("a", "", "a"),
            ("", "b", "b"),
            ("mcp:basic", "mcp:write", "mcp:basic mcp:write"),
            ("a b", "b c", "a b c"),
            ("c b a", "a d", "c b a d"),
            ("a  a", " a ", "a"),
            ("read", "READ", "read READ"),
        ];
        for (a, b, expected) in cases {
            assert_eq!(union(a, b), expected, "{a:?} ∪ {b:?}");
        }
    }

    #[test]
    fn contains_all_table() {
        assert!(contains_all("a b c", &["a", "c"]));
        assert!(contains_all("a b c", &[]));
        assert!(contains_all("", &[]));
        assert!(!contains_all("a b", &["c"]));
        assert!(!contains_all("", &["a"]));
        assert!(!contains_all("ab", &["a"]));
        assert!(!contains_all("A", &["a"]));
        assert_eq!(missing("a b", "b c d c"), vec!["c", "d"]);
        assert_eq!(join(&["x", "y"]), "x y");
    }
}
