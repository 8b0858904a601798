use std::collections::BTreeMap;

use proptest::prelude::*;

use super::{TemplateError, TemplateErrorKind, UriTemplate};

fn tpl(s: &str) -> UriTemplate {
    UriTemplate::parse(s).unwrap_or_else(|e| panic!("{s:?} should parse: {e}"))
}

fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

/// The string-valued variables of RFC 6570 §1.2 and §3.2 (`undef` is simply absent; the
/// list and map variables `count`, `dom`, `list`, `keys` and `empty_keys` are not
/// representable with string values, so the examples that use them are skipped).
fn rfc_vars() -> BTreeMap<String, String> {
    vars(&[
        ("var", "value"),
        ("hello", "Hello World!"),
        ("half", "50%"),
        ("who", "fred"),
        ("dub", "me/too"),
        ("base", "http://example.com/home/"),
        ("path", "/foo/bar"),
        ("v", "6"),
        ("x", "1024"),
        ("y", "768"),
        ("empty", ""),
    ])
}

/// RFC 6570 examples: §1.2 (levels 1–4) then §3.2.2–§3.2.9, in order, minus the list and
/// map examples. Duplicates between §1.2 and §3.2 are listed once.
const RFC_EXAMPLES: &[(&str, &str)] = &[
    // §1.2 level 1
    ("{var}", "value"),
    ("{hello}", "Hello%20World%21"),
    // level 2
    ("{+var}", "value"),
    ("{+hello}", "Hello%20World!"),
    ("{+path}/here", "/foo/bar/here"),
    ("here?ref={+path}", "here?ref=/foo/bar"),
    ("X{#var}", "X#value"),
    ("X{#hello}", "X#Hello%20World!"),
    // level 3
    ("map?{x,y}", "map?1024,768"),
    ("{x,hello,y}", "1024,Hello%20World%21,768"),
    ("{+x,hello,y}", "1024,Hello%20World!,768"),
    ("{+path,x}/here", "/foo/bar,1024/here"),
    ("{#x,hello,y}", "#1024,Hello%20World!,768"),
    ("{#path,x}/here", "#/foo/bar,1024/here"),
    ("X{.var}", "X.value"),
    ("X{.x,y}", "X.1024.768"),
    ("{/var}", "/value"),
    ("{/var,x}/here", "/value/1024/here"),
    ("{;x,y}", ";x=1024;y=768"),
    ("{;x,y,empty}", ";x=1024;y=768;empty"),
    ("{?x,y}", "?x=1024&y=768"),
    ("{?x,y,empty}", "?x=1024&y=768&empty="),
    ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
    ("{&x,y,empty}", "&x=1024&y=768&empty="),
    // level 4
    ("{var:3}", "val"),
    ("{var:30}", "value"),
    ("{+path:6}/here", "/foo/b/here"),
    ("{#path:6}/here", "#/foo/b/here"),
    ("X{.var:3}", "X.val"),
    ("{/var:1,var}", "/v/value"),
    ("{;hello:5}", ";hello=Hello"),
    ("{?var:3}", "?var=val"),
    ("{&var:3}", "&var=val"),
    // §3.2.2 simple string expansion
    ("{half}", "50%25"),
    ("O{empty}X", "OX"),
    ("O{undef}X", "OX"),
    ("?{x,empty}", "?1024,"),
    ("?{x,undef}", "?1024"),
    ("?{undef,y}", "?768"),
    // §3.2.3 reserved expansion
    ("{+half}", "50%25"),
    ("{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"),
    ("{+base}index", "http://example.com/home/index"),
    ("O{+empty}X", "OX"),
    ("O{+undef}X", "OX"),
    ("up{+path}{var}/here", "up/foo/barvalue/here"),
    // §3.2.4 fragment expansion
    ("{#half}", "#50%25"),
    ("foo{#empty}", "foo#"),
    ("foo{#undef}", "foo"),
    // §3.2.5 label expansion
    ("{.who}", ".fred"),
    ("{.who,who}", ".fred.fred"),
    ("{.half,who}", ".50%25.fred"),
    ("X{.empty}", "X."),
    ("X{.undef}", "X"),
    // §3.2.6 path segment expansion
    ("{/who}", "/fred"),
    ("{/who,who}", "/fred/fred"),
    ("{/half,who}", "/50%25/fred"),
    ("{/who,dub}", "/fred/me%2Ftoo"),
    ("{/var,empty}", "/value/"),
    ("{/var,undef}", "/value"),
    // §3.2.7 path-style parameter expansion
    ("{;who}", ";who=fred"),
    ("{;half}", ";half=50%25"),
    ("{;empty}", ";empty"),
    ("{;v,empty,who}", ";v=6;empty;who=fred"),
    ("{;v,bar,who}", ";v=6;who=fred"),
    ("{;x,y,undef}", ";x=1024;y=768"),
    // §3.2.8 form-style query expansion
    ("{?who}", "?who=fred"),
    ("{?half}", "?half=50%25"),
    ("{?x,y,undef}", "?x=1024&y=768"),
    // §3.2.9 form-style query continuation
    ("{&who}", "&who=fred"),
    ("{&half}", "&half=50%25"),
];

#[test]
fn rfc_6570_expansion_examples() {
    let values = rfc_vars();
    for (template, expected) in RFC_EXAMPLES {
        assert_eq!(tpl(template).expand(&values), *expected, "expanding {template}");
    }
    assert_eq!(RFC_EXAMPLES.len(), 70);
}

#[test]
fn expansion_encoding_details() {
    let values = vars(&[("s", "é/ü?"), ("p", "a%2Fb%zz"), ("t", "x*y")]);
    // UTF-8, uppercase hex.
    assert_eq!(tpl("{s}").expand(&values), "%C3%A9%2F%C3%BC%3F");
    assert_eq!(tpl("{+s}").expand(&values), "%C3%A9/%C3%BC?");
    // `+` keeps valid escapes, encodes a bare `%`.
    assert_eq!(tpl("{+p}").expand(&values), "a%2Fb%25zz");
    assert_eq!(tpl("{p}").expand(&values), "a%252Fb%25zz");
    // Explode is a no-op on strings; non-ASCII literals are encoded.
    assert_eq!(tpl("{/t*}{?t*}").expand(&values), "/x%2Ay?t=x%2Ay");
    assert_eq!(tpl("café/{t}").expand(&values), "caf%C3%A9/x%2Ay");
}

#[test]
fn api_accessors() {
    let t: UriTemplate = "https://api.example.com/{v}/search{?q,lang}{&v}".parse().expect("parses");
    assert_eq!(t.as_str(), "https://api.example.com/{v}/search{?q,lang}{&v}");
    assert_eq!(t.to_string(), t.as_str());
    assert_eq!(t.variable_names().collect::<Vec<_>>(), ["v", "q", "lang"]);
    assert_eq!(tpl("no/vars").variable_names().count(), 0);
    assert_eq!(tpl("{/var:1,var}{?var}").variable_names().collect::<Vec<_>>(), ["var"]);
    assert_eq!(t, tpl("https://api.example.com/{v}/search{?q,lang}{&v}"));
    assert_ne!(t, tpl("https://api.example.com/{v}/search{?lang,q}{&v}"));
}

#[test]
fn simple_variable_is_one_segment() {
    let t = tpl("test://template/{id}/data");
    assert_eq!(t.matches("test://template/123/data"), Some(vars(&[("id", "123")])));
    assert_eq!(t.matches("test://template/1/2/data"), None);
    assert_eq!(t.matches("test://template//data"), None);
    assert_eq!(t.matches("test://template/a?b/data"), None);
    assert_eq!(t.matches("test://template/a#b/data"), None);
    assert_eq!(t.matches("test://template/123/data/"), None);
    assert_eq!(t.matches("test://template/123"), None);
    // Literal mismatches.
    assert_eq!(t.matches("test://templates/123/data"), None);
    assert_eq!(t.matches("test://template/123/date"), None);
    assert_eq!(t.matches("TEST://template/123/data"), None);
    assert_eq!(t.matches(""), None);
    // Other characters are fine, including the separator of multi-variable expressions.
    assert_eq!(t.matches("test://template/a,b;c=d@e/data"), Some(vars(&[("id", "a,b;c=d@e")])));
    assert_eq!(tpl("{a}").matches("héllo"), Some(vars(&[("a", "héllo")])));
}

#[test]
fn reserved_and_fragment_span_slashes() {
    let t = tpl("file:///{+path}");
    assert_eq!(t.matches("file:///a/b/c.txt"), Some(vars(&[("path", "a/b/c.txt")])));
    assert_eq!(t.matches("file:///"), None);
    assert_eq!(t.matches("file:///a#b"), None);
    let t = tpl("{+base}/data{#frag}");
    assert_eq!(t.matches("x/data/y/data#top/1"), Some(vars(&[("base", "x/data/y"), ("frag", "top/1")])));
    assert_eq!(t.matches("x/data"), Some(vars(&[("base", "x")])));
    assert_eq!(t.matches("x/data#"), Some(vars(&[("base", "x"), ("frag", "")])));
    // `+` may contain `?`, but a following query expression gets the query.
    assert_eq!(tpl("file:///{+path}").matches("file:///a?b"), Some(vars(&[("path", "a?b")])));
    let t = tpl("file:///{+path}{?rev}");
    assert_eq!(t.matches("file:///a/b?rev=2"), Some(vars(&[("path", "a/b"), ("rev", "2")])));
}

#[test]
fn query_parameters_any_order_all_optional() {
    let t = tpl("https://api.example.com/search{?q,lang}");
    let both = Some(vars(&[("q", "rust"), ("lang", "en")]));
    assert_eq!(t.matches("https://api.example.com/search?q=rust&lang=en"), both);
    assert_eq!(t.matches("https://api.example.com/search?lang=en&q=rust"), both);
    assert_eq!(t.matches("https://api.example.com/search?lang=en"), Some(vars(&[("lang", "en")])));
    assert_eq!(t.matches("https://api.example.com/search"), Some(BTreeMap::new()));
    assert_eq!(t.matches("https://api.example.com/search?q=&lang"), Some(vars(&[("q", ""), ("lang", "")])));
    // Unknown, repeated or empty parameters are not matched.
    assert_eq!(t.matches("https://api.example.com/search?q=a&page=2"), None);
    assert_eq!(t.matches("https://api.example.com/search?q=a&q=b"), None);
    assert_eq!(t.matches("https://api.example.com/search?"), None);
    assert_eq!(t.matches("https://api.example.com/search?q=a&"), None);
    // Values may contain `=` and `?`, and are decoded.
    assert_eq!(t.matches("https://api.example.com/search?q=a=b?c%26d"), Some(vars(&[("q", "a=b?c&d")])));
    // Continuation after a fixed parameter, then a fragment.
    let t = tpl("/list?fixed=yes{&page,size}{#section}");
    assert_eq!(
        t.matches("/list?fixed=yes&size=10&page=3#s2"),
        Some(vars(&[("page", "3"), ("size", "10"), ("section", "s2")]))
    );
    assert_eq!(t.matches("/list?fixed=yes"), Some(BTreeMap::new()));
    assert_eq!(t.matches("/list?fixed=no&page=3"), None);
    // `{?x}{&y}`: each expression takes its own parameters.
    let t = tpl("/s{?x}{&y}");
    assert_eq!(t.matches("/s?x=1&y=2"), Some(vars(&[("x", "1"), ("y", "2")])));
    assert_eq!(t.matches("/s?y=2&x=1"), None);
}

#[test]
fn path_label_and_path_style_expressions() {
    let t = tpl("/files{/dir,name}{.ext}");
    assert_eq!(t.matches("/files/docs/a.txt"), Some(vars(&[("dir", "docs"), ("name", "a"), ("ext", "txt")])));
    assert_eq!(t.matches("/files/docs"), Some(vars(&[("dir", "docs")])));
    assert_eq!(t.matches("/files"), Some(BTreeMap::new()));
    assert_eq!(t.matches("/files/a/b/c"), None);
    // Lazy rule: the earlier expression takes the shortest span.
    assert_eq!(tpl("{name}{.ext}").matches("a.tar.gz"), Some(vars(&[("name", "a"), ("ext", "tar.gz")])));
    assert_eq!(tpl("{a}{b}").matches("xyz"), Some(vars(&[("a", "x"), ("b", "yz")])));
    assert_eq!(tpl("{a}-{b}").matches("x-y-z"), Some(vars(&[("a", "x"), ("b", "y-z")])));
    // Path-style parameters, in any order.
    let t = tpl("/map{;x,y,empty}/tiles");
    let all = Some(vars(&[("x", "1024"), ("y", "768"), ("empty", "")]));
    assert_eq!(t.matches("/map;x=1024;y=768;empty/tiles"), all);
    assert_eq!(t.matches("/map;empty;y=768;x=1024/tiles"), all);
    assert_eq!(t.matches("/map;y=768/tiles"), Some(vars(&[("y", "768")])));
    assert_eq!(t.matches("/map;z=1/tiles"), None);
    // Several simple variables split on commas.
    let t = tpl("/point/{x,y}");
    assert_eq!(t.matches("/point/3,4"), Some(vars(&[("x", "3"), ("y", "4")])));
    assert_eq!(t.matches("/point/3"), Some(vars(&[("x", "3")])));
    assert_eq!(t.matches("/point/,4"), Some(vars(&[("x", ""), ("y", "4")])));
    assert_eq!(t.matches("/point/3,4,5"), None);
}

#[test]
fn percent_decoding() {
    let t = tpl("test://template/{id}/data");
    assert_eq!(t.matches("test://template/a%20b/data"), Some(vars(&[("id", "a b")])));
    assert_eq!(t.matches("test://template/%C3%A9%2f/data"), Some(vars(&[("id", "é/")])));
    assert_eq!(t.matches("test://template/a+b/data"), Some(vars(&[("id", "a+b")])));
    assert_eq!(t.matches("test://template/a%2/data"), None);
    assert_eq!(t.matches("test://template/a%zz/data"), None);
    assert_eq!(t.matches("test://template/%/data"), None);
    assert_eq!(t.matches("test://template/%FF/data"), None, "not UTF-8");
    assert_eq!(tpl("{+p}").matches("a%2"), None);
    assert_eq!(tpl("/q{?a}").matches("/q?a=%4"), None);
}

#[test]
fn prefix_modifier() {
    let t = tpl("/users/{name:3}/profile");
    assert_eq!(t.matches("/users/joh/profile"), Some(vars(&[("name", "joh")])));
    assert_eq!(t.matches("/users/jo/profile"), Some(vars(&[("name", "jo")])));
    assert_eq!(t.matches("/users/john/profile"), None);
    // Characters, not bytes or escapes.
    assert_eq!(t.matches("/users/%C3%A9t%C3%A9/profile"), Some(vars(&[("name", "été")])));
    assert_eq!(t.matches("/users/ééé/profile"), Some(vars(&[("name", "ééé")])));
    assert_eq!(tpl("{?q:2}").matches("?q=abc"), None);
    // A variable used with and without a prefix must agree.
    let t = tpl("{/var:1,var}");
    assert_eq!(t.matches("/v/value"), Some(vars(&[("var", "value")])));
    assert_eq!(t.matches("/x/value"), None);
    assert_eq!(tpl("{a}/{a}").matches("x/y"), None);
    assert_eq!(tpl("{a}/{a}").matches("x/x"), Some(vars(&[("a", "x")])));
}

#[test]
fn no_catastrophic_backtracking() {
    // Adjacent and literal-separated expressions over long inputs that never match; a
    // quadratic matcher would take minutes here.
    let long = "x/".repeat(20_000);
    assert_eq!(tpl("{+a}{+b}{+c}{+d}{+e}{+f}/end").matches(&long), None);
    assert_eq!(tpl("{+a}/{+b}/{+c}").matches(&format!("{long}#")), None);
    assert_eq!(tpl("{a}{b}{c}{d}{e}{f}{g}{h}!").matches(&"y".repeat(40_000)), None);
    assert_eq!(tpl("{#a}{#b}{#c}!").matches(&"#".repeat(40_000)), None);
    assert_eq!(tpl("{.a}{.b}{.c}!").matches(&".".repeat(40_000)), None);
    // And a long match still finds the right split.
    let found = tpl("{+a}/{b}").matches(&format!("{long}z")).expect("matches");
    assert_eq!((found["a"].len(), found["b"].as_str()), (39_999, "z"));
}

#[test]
fn malformed_templates_are_rejected() {
    use TemplateErrorKind::*;
    let cases: &[(&str, TemplateErrorKind, usize)] = &[
        ("test://{id", UnclosedExpression, 7),
        ("{", UnclosedExpression, 0),
        ("a}b", UnmatchedClose, 1),
        ("{a}}", UnmatchedClose, 3),
        ("{a{b}}", NestedBrace, 2),
        ("{{a}}", NestedBrace, 1),
        ("x{}", EmptyExpression, 1),
        ("{+}", EmptyVariable, 2),
        ("{a,}", EmptyVariable, 3),
        ("{a,,b}", EmptyVariable, 3),
        ("{:3}", EmptyVariable, 1),
        ("{a-b}", InvalidVariableChar('-'), 2),
        ("{a b}", InvalidVariableChar(' '), 2),
        ("{ab.}", InvalidVariableChar('.'), 3),
        ("{a..b}", InvalidVariableChar('.'), 3),
        ("{?é}", InvalidVariableChar('é'), 2),
        ("{a*:3}", InvalidVariableChar(':'), 3),
        ("{a%2}", InvalidPercentEncoding, 2),
        ("a b", InvalidLiteralChar(' '), 1),
        ("a\"b", InvalidLiteralChar('"'), 1),
        ("x|y", InvalidLiteralChar('|'), 1),
        ("tab\there", InvalidLiteralChar('\t'), 3),
        ("50%", InvalidPercentEncoding, 2),
        ("%g0", InvalidPercentEncoding, 0),
        ("{=a}", ReservedOperator('='), 1),
        ("{!a}", ReservedOperator('!'), 1),
        ("{|a}", ReservedOperator('|'), 1),
        ("{a:0}", InvalidPrefix, 2),
        ("{a:}", InvalidPrefix, 2),
        ("{a:10000}", InvalidPrefix, 2),
        ("{a:01}", InvalidPrefix, 2),
        ("{a:3*}", InvalidPrefix, 2),
    ];
    for &(template, kind, at) in cases {
        assert_eq!(UriTemplate::parse(template), Err(TemplateError { kind, at }), "{template:?}");
    }
    let err = "file:///{path".parse::<UriTemplate>().expect_err("unclosed");
    assert_eq!(err.to_string(), "invalid URI template at byte 8: `{` has no matching `}`");
    let err = UriTemplate::parse("{a:0}").expect_err("bad prefix");
    assert_eq!(
        err.to_string(),
        "invalid URI template at byte 2: invalid prefix modifier, expected `:1` to `:9999`"
    );
    // Valid edge cases.
    for ok in ["", "plain", "%2F{a.b_c%20}", "{a:9999}", "{a*}", "{/a*,b:1}", "é{x}", "{?x}{&y}"] {
        assert!(UriTemplate::parse(ok).is_ok(), "{ok:?}");
    }
}

/// One `{var}` and the literal that follows it (empty only for a trailing expression).
fn segments() -> impl Strategy<Value = (String, Vec<(String, String)>)> {
    let literal = "[a-zA-Z0-9._~:/?#@!$&()*+,;=-]{1,5}";
    let value = "[a-zA-Z0-9._~-]{1,8}";
    let pair = (value, literal);
    ("[a-zA-Z0-9._~:/?#@!$&()*+,;=-]{0,5}", prop::collection::vec(pair, 1..6), any::<bool>()).prop_map(
        |(lead, mut pairs, trailing)| {
            if trailing && let Some(last) = pairs.last_mut() {
                last.1.clear();
            }
            (lead, pairs)
        },
    )
}

proptest! {
    #[test]
    fn matches_inverts_expand((lead, pairs) in segments()) {
        let mut template = lead.clone();
        let mut values = BTreeMap::new();
        let mut expected_uri = lead;
        for (i, (value, literal)) in pairs.into_iter().enumerate() {
            // The value must not contain the first character of the literal that follows.
            let value: String = match literal.chars().next() {
                Some(stop) => value.chars().map(|c| if c == stop { if c == 'a' { 'b' } else { 'a' } } else { c }).collect(),
                None => value,
            };
            template.push_str(&format!("{{v{i}}}{literal}"));
            expected_uri.push_str(&value);
            expected_uri.push_str(&literal);
            values.insert(format!("v{i}"), value);
        }
        let t = UriTemplate::parse(&template).expect("generated templates are valid");
        let uri = t.expand(&values);
        prop_assert_eq!(&uri, &expected_uri);
        prop_assert_eq!(t.matches(&uri), Some(values));
    }

    #[test]
    fn query_matches_invert_expand(q in proptest::option::of("[ -~é]{0,6}"), lang in proptest::option::of("[ -~]{0,6}")) {
        let t = tpl("/search{?q,lang}");
        let values: BTreeMap<String, String> =
            [("q", q), ("lang", lang)].into_iter().filter_map(|(k, v)| Some((k.to_owned(), v?))).collect();
        prop_assert_eq!(t.matches(&t.expand(&values)), Some(values));
    }

    #[test]
    fn arbitrary_input_never_panics(template in "[a-z{}/?#.;&+=,*:%0-9]{0,12}", uri in "[a-z/?#.;&=,%0-9]{0,16}") {
        if let Ok(t) = UriTemplate::parse(&template) {
            if let Some(found) = t.matches(&uri) {
                prop_assert!(found.keys().all(|k| t.variable_names().any(|n| n == k)));
            }
            let _ = t.expand(&BTreeMap::new());
        }
    }
}
