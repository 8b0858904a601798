//! Property tests of `WWW-Authenticate` parsing and building: the stable-toolchain counterpart
//! of `fuzz/fuzz_targets/www_authenticate.rs`.
//!
//! * `parse_www_authenticate` never panics, and what it returns is well formed: schemes and
//!   parameter names are tokens, and a `token68` stands alone in its challenge.
//! * Building is the inverse of parsing: any challenges (token schemes and names, any values)
//!   built with `Display` and joined with `", "` parse back to themselves, control characters
//!   turned to spaces; `bearer_challenge` and `dpop_challenge` parse back to their arguments.
//! * Parsing is stable: what was parsed, built again, parses to the same challenges.

use mcp_auth::challenge::{Challenge, bearer_challenge, dpop_challenge, parse_www_authenticate};
use mcp_auth::jose::Algorithm;
use proptest::prelude::*;

const TOKEN: &str = "[A-Za-z0-9!#$%&'*+.^_`|~-]{1,10}";

fn is_token(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// What `Display` promises to keep of a value: everything but control characters.
fn shown(value: &str) -> String {
    value.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}

fn shown_all(challenges: &[Challenge]) -> Vec<Challenge> {
    challenges
        .iter()
        .map(|c| Challenge {
            scheme: c.scheme.clone(),
            params: c
                .params
                .iter()
                .map(|(n, v)| (n.clone(), if n.is_empty() { v.clone() } else { shown(v) }))
                .collect(),
        })
        .collect()
}

fn build(challenges: &[Challenge]) -> String {
    challenges.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}

/// Values with the characters quoting must handle.
fn value() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        prop::sample::select(vec!["\"", "\\", ",", " ", "\t", "=", "\r\n", "\u{1}", "\u{85}", "é", "a b"])
            .prop_map(str::to_owned),
        any::<String>(),
    ];
    prop::collection::vec(piece, 0..6).prop_map(|p| p.concat())
}

fn challenge() -> impl Strategy<Value = Challenge> {
    prop_oneof![
        4 => (TOKEN, prop::collection::vec((TOKEN, value()), 0..4))
            .prop_map(|(scheme, params)| Challenge { scheme, params }),
        1 => (TOKEN, "[A-Za-z0-9._~+/-]{1,12}={0,2}")
            .prop_map(|(scheme, t)| Challenge::new(scheme).with_param("", t)),
    ]
}

/// Header values near the grammar: its punctuation and words, and arbitrary text.
fn header() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        prop::sample::select(vec![
            "Bearer", "DPoP", "Basic", " ", ", ", ",", "=", "\"", "\\", "realm", "scope=", "=\"x\"", "abc==",
            "\t",
        ])
        .prop_map(str::to_owned),
        "[ -~]{0,6}",
        any::<String>(),
    ];
    prop::collection::vec(piece, 0..16).prop_map(|p| p.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn parsing_never_panics_and_gives_well_formed_challenges(input in header()) {
        for c in parse_www_authenticate(&input) {
            prop_assert!(is_token(&c.scheme), "{c:?}");
            let token68 = c.params.iter().filter(|(n, _)| n.is_empty()).count();
            prop_assert!(token68 == 0 || c.params.len() == 1, "a token68 stands alone: {c:?}");
            prop_assert!(c.params.iter().all(|(n, _)| n.is_empty() || is_token(n)), "{c:?}");
        }
    }

    #[test]
    fn built_challenges_parse_back(challenges in prop::collection::vec(challenge(), 1..4)) {
        let built = build(&challenges);
        prop_assert!(!built.contains(['\r', '\n']));
        prop_assert_eq!(parse_www_authenticate(&built), shown_all(&challenges), "{}", built);
    }

    #[test]
    fn parsed_challenges_rebuild_to_the_same(input in header()) {
        let parsed = parse_www_authenticate(&input);
        prop_assert_eq!(parse_www_authenticate(&build(&parsed)), shown_all(&parsed));
    }

    #[test]
    fn bearer_and_dpop_challenges_parse_back(
        metadata in prop::option::of(value()),
        scope in prop::option::of(value()),
        error in prop::option::of(value()),
        description in prop::option::of(value()),
        algs in prop::collection::vec(prop::sample::select(vec![Algorithm::ES256, Algorithm::PS256, Algorithm::RS256, Algorithm::EdDSA]), 0..3),
    ) {
        let bearer = bearer_challenge(metadata.as_deref(), scope.as_deref(), error.as_deref(), description.as_deref());
        let dpop = dpop_challenge(&algs, metadata.as_deref(), scope.as_deref(), error.as_deref(), description.as_deref());
        let parsed = parse_www_authenticate(&format!("{bearer}, {dpop}"));
        prop_assert_eq!(parsed.len(), 2, "{} / {}", bearer, dpop);
        prop_assert!(parsed[0].is("Bearer") && parsed[1].is("DPoP"));
        for c in &parsed {
            prop_assert_eq!(c.param("resource_metadata").map(str::to_owned), metadata.as_deref().map(shown));
            prop_assert_eq!(c.param("scope").map(str::to_owned), scope.as_deref().map(shown));
            prop_assert_eq!(c.param("error").map(str::to_owned), error.as_deref().map(shown));
            prop_assert_eq!(c.param("error_description").map(str::to_owned), description.as_deref().map(shown));
        }
        let names: Vec<&str> = algs.iter().map(|a| a.as_str()).collect();
        let listed = (!algs.is_empty()).then(|| names.join(" "));
        prop_assert_eq!(parsed[1].param("algs"), listed.as_deref());
    }
}
