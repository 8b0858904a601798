//! Fuzzes `WWW-Authenticate` (`mcp_auth::challenge`): parsing never panics and gives tokens
//! for schemes and names, a `token68` alone in its challenge; what was parsed, built again and
//! joined with `", "`, parses to the same (control characters turned to spaces); and challenges
//! built from any token schemes and names and any values parse back to themselves.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_auth::challenge::{Challenge, parse_www_authenticate};

fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

fn token(s: &str) -> String {
    s.chars().filter(|&c| is_tchar(c)).collect()
}

/// What `Display` keeps of a challenge: every value but its control characters.
fn shown(challenges: &[Challenge]) -> Vec<Challenge> {
    let keep = |v: &str| v.chars().map(|c| if c.is_control() { ' ' } else { c }).collect::<String>();
    challenges
        .iter()
        .map(|c| Challenge {
            scheme: c.scheme.clone(),
            params: c
                .params
                .iter()
                .map(|(n, v)| (n.clone(), if n.is_empty() { v.clone() } else { keep(v) }))
                .collect(),
        })
        .collect()
}

fn build(challenges: &[Challenge]) -> String {
    challenges.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}

/// Challenges to build: a scheme and its parameters, made tokens by dropping other characters.
type Built = Vec<(String, Vec<(String, String)>)>;

fuzz_target!(|input: (&str, Built)| {
    let (header, built) = input;

    let parsed = parse_www_authenticate(header);
    for c in &parsed {
        assert!(!c.scheme.is_empty() && c.scheme.chars().all(is_tchar), "{c:?}");
        assert!(c.params.iter().all(|(n, _)| n.chars().all(is_tchar)), "{c:?}");
        assert!(c.params.len() == 1 || c.params.iter().all(|(n, _)| !n.is_empty()), "{c:?}");
    }
    assert_eq!(parse_www_authenticate(&build(&parsed)), shown(&parsed), "{header:?}");

    let challenges: Vec<Challenge> = built
        .into_iter()
        .map(|(scheme, params)| Challenge {
            scheme: token(&scheme),
            params: params.into_iter().map(|(n, v)| (token(&n), v)).filter(|(n, _)| !n.is_empty()).collect(),
        })
        .filter(|c| !c.scheme.is_empty())
        .collect();
    let value = build(&challenges);
    assert!(!value.contains(['\r', '\n']));
    assert_eq!(parse_www_authenticate(&value), shown(&challenges), "{value:?}");
});
