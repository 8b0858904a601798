//! The cases of SEP-2243's header rules that the client and the server both run: mcp-types
//! checks the functions against them, mcp-client's tests check the headers its calls carry,
//! and mcp-http's tests check that its header check accepts what the client sends and refuses
//! what contradicts the body. Not part of the API.
//!
//! Schemas and arguments are JSON text so the table can be a constant.

/// A tool's schema, a call's arguments, and the `Mcp-Param-*` headers the call carries (name
/// as declared, value as sent), sorted by name.
#[derive(Debug, Clone, Copy)]
pub struct Mirror {
    /// What the row shows.
    pub what: &'static str,
    /// The tool's `inputSchema`.
    pub schema: &'static str,
    /// The call's `arguments`.
    pub arguments: &'static str,
    /// `(Name, value)` of every `Mcp-Param-{Name}` header, sorted by name.
    pub headers: &'static [(&'static str, &'static str)],
}

/// Headers that contradict the arguments: the server refuses the call (`-32020`).
#[derive(Debug, Clone, Copy)]
pub struct Refusal {
    /// What the row shows.
    pub what: &'static str,
    /// The tool's `inputSchema`.
    pub schema: &'static str,
    /// The call's `arguments`.
    pub arguments: &'static str,
    /// The `Mcp-Param-{Name}` headers sent (name as declared).
    pub headers: &'static [(&'static str, &'static str)],
}

/// A header value and what it decodes to (`None`: it does not decode).
#[derive(Debug, Clone, Copy)]
pub struct Decoding {
    /// The header value as received (after trimming).
    pub raw: &'static str,
    /// The string it carries.
    pub decoded: Option<&'static str>,
}

const REGION: &str = r#"{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}"#;
const COUNT: &str = r#"{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"}}}"#;
const FLAG: &str =
    r#"{"type":"object","properties":{"flag":{"type":["boolean","null"],"x-mcp-header":"Flag"}}}"#;
const NESTED: &str = r#"{"type":"object","properties":{
    "q":{"type":"string"},
    "outer":{"type":"object","properties":{"inner":{"type":"string","x-mcp-header":"Inner"}}}}}"#;
const DEEP: &str = r#"{"type":"object","properties":{
    "region":{"type":"string","x-mcp-header":"Region"},
    "a":{"type":"object","properties":{
        "n":{"type":"integer","x-mcp-header":"Depth-1"},
        "b":{"type":"object","properties":{"on":{"type":"boolean","x-mcp-header":"Depth.2"}}}}}}}"#;

/// What a call carries.
pub const MIRRORS: &[Mirror] = &[
    Mirror {
        what: "plain ASCII as is",
        schema: REGION,
        arguments: r#"{"region":"us-west1"}"#,
        headers: &[("Region", "us-west1")],
    },
    Mirror {
        what: "inner spaces as is",
        schema: REGION,
        arguments: r#"{"region":"us west"}"#,
        headers: &[("Region", "us west")],
    },
    Mirror {
        what: "the empty string as is",
        schema: REGION,
        arguments: r#"{"region":""}"#,
        headers: &[("Region", "")],
    },
    Mirror {
        what: "non-ASCII in Base64",
        schema: REGION,
        arguments: r#"{"region":"Hello, 世界"}"#,
        headers: &[("Region", "=?base64?SGVsbG8sIOS4lueVjA==?=")],
    },
    Mirror {
        what: "leading and trailing spaces in Base64",
        schema: REGION,
        arguments: r#"{"region":" padded "}"#,
        headers: &[("Region", "=?base64?IHBhZGRlZCA=?=")],
    },
    Mirror {
        what: "a newline in Base64",
        schema: REGION,
        arguments: r#"{"region":"line1\nline2"}"#,
        headers: &[("Region", "=?base64?bGluZTEKbGluZTI=?=")],
    },
    Mirror {
        what: "a tab in Base64",
        schema: REGION,
        arguments: r#"{"region":"a\tb"}"#,
        headers: &[("Region", "=?base64?YQli?=")],
    },
    Mirror {
        what: "a value that looks like the sentinel in Base64",
        schema: REGION,
        arguments: r#"{"region":"=?base64?literal?="}"#,
        headers: &[("Region", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=")],
    },
    Mirror { what: "an absent argument: no header", schema: REGION, arguments: r#"{}"#, headers: &[] },
    Mirror { what: "a null argument: no header", schema: FLAG, arguments: r#"{"flag":null}"#, headers: &[] },
    Mirror { what: "true", schema: FLAG, arguments: r#"{"flag":true}"#, headers: &[("Flag", "true")] },
    Mirror { what: "false", schema: FLAG, arguments: r#"{"flag":false}"#, headers: &[("Flag", "false")] },
    Mirror {
        what: "an integer in decimal",
        schema: COUNT,
        arguments: r#"{"n":42}"#,
        headers: &[("N", "42")],
    },
    Mirror { what: "a negative integer", schema: COUNT, arguments: r#"{"n":-7}"#, headers: &[("N", "-7")] },
    Mirror {
        what: "an integer written as a float",
        schema: COUNT,
        arguments: r#"{"n":3.0}"#,
        headers: &[("N", "3")],
    },
    Mirror {
        what: "the largest u64",
        schema: COUNT,
        arguments: r#"{"n":18446744073709551615}"#,
        headers: &[("N", "18446744073709551615")],
    },
    Mirror {
        what: "an integer past 2^53 as serde_json writes it",
        schema: COUNT,
        arguments: r#"{"n":1e20}"#,
        headers: &[("N", "1e+20")],
    },
    Mirror {
        what: "a nested property by its properties path",
        schema: NESTED,
        arguments: r#"{"q":"SELECT 1","outer":{"inner":"x y"}}"#,
        headers: &[("Inner", "x y")],
    },
    Mirror { what: "a nested property absent", schema: NESTED, arguments: r#"{"outer":{}}"#, headers: &[] },
    Mirror {
        what: "a nested property's parent absent",
        schema: NESTED,
        arguments: r#"{"q":"x"}"#,
        headers: &[],
    },
    Mirror {
        what: "a nested property's parent not an object",
        schema: NESTED,
        arguments: r#"{"outer":"inner"}"#,
        headers: &[],
    },
    Mirror {
        what: "three levels",
        schema: DEEP,
        arguments: r#"{"region":"eu","a":{"n":1,"b":{"on":true}}}"#,
        headers: &[("Depth-1", "1"), ("Depth.2", "true"), ("Region", "eu")],
    },
    Mirror {
        what: "nested values absent at the root",
        schema: DEEP,
        arguments: r#"{"a":{"b":{"on":false},"n":-1}}"#,
        headers: &[("Depth-1", "-1"), ("Depth.2", "false")],
    },
];

/// What the server refuses.
pub const REFUSALS: &[Refusal] = &[
    Refusal {
        what: "a contradicting value",
        schema: REGION,
        arguments: r#"{"region":"eu"}"#,
        headers: &[("Region", "us")],
    },
    Refusal {
        what: "values are case-sensitive",
        schema: REGION,
        arguments: r#"{"region":"eu"}"#,
        headers: &[("Region", "EU")],
    },
    Refusal { what: "a missing header", schema: REGION, arguments: r#"{"region":"eu"}"#, headers: &[] },
    Refusal {
        what: "a header without its argument",
        schema: REGION,
        arguments: r#"{}"#,
        headers: &[("Region", "eu")],
    },
    Refusal {
        what: "a header for a null argument",
        schema: FLAG,
        arguments: r#"{"flag":null}"#,
        headers: &[("Flag", "true")],
    },
    Refusal {
        what: "invalid Base64",
        schema: REGION,
        arguments: r#"{"region":"us east"}"#,
        headers: &[("Region", "=?base64?dXMgZWFzdA=?=")],
    },
    Refusal {
        what: "Base64 of the wrong value",
        schema: REGION,
        arguments: r#"{"region":"us east"}"#,
        headers: &[("Region", "=?base64?dXMgd2VzdA==?=")],
    },
    Refusal {
        what: "a boolean is lower case",
        schema: FLAG,
        arguments: r#"{"flag":true}"#,
        headers: &[("Flag", "True")],
    },
    Refusal { what: "a different integer", schema: COUNT, arguments: r#"{"n":42}"#, headers: &[("N", "43")] },
    Refusal {
        what: "a neighbouring integer past 2^53",
        schema: COUNT,
        arguments: r#"{"n":18446744073709551615}"#,
        headers: &[("N", "18446744073709551614")],
    },
    Refusal {
        what: "a nested value contradicted",
        schema: NESTED,
        arguments: r#"{"outer":{"inner":"x"}}"#,
        headers: &[("Inner", "y")],
    },
    Refusal {
        what: "a nested header missing",
        schema: NESTED,
        arguments: r#"{"outer":{"inner":"x"}}"#,
        headers: &[],
    },
    Refusal {
        what: "a nested header without its argument",
        schema: NESTED,
        arguments: r#"{"outer":{}}"#,
        headers: &[("Inner", "x")],
    },
    Refusal {
        what: "the deepest header missing",
        schema: DEEP,
        arguments: r#"{"region":"eu","a":{"n":1,"b":{"on":true}}}"#,
        headers: &[("Depth-1", "1"), ("Region", "eu")],
    },
];

/// How header values decode.
pub const DECODINGS: &[Decoding] = &[
    Decoding { raw: "us-west1", decoded: Some("us-west1") },
    Decoding { raw: "=?base64?SGVsbG8sIOS4lueVjA==?=", decoded: Some("Hello, 世界") },
    Decoding { raw: "=?base64?dXMgZWFzdA==?=", decoded: Some("us east") },
    Decoding { raw: "=?base64??=", decoded: Some("") },
    Decoding { raw: "=?base64?Zm9v", decoded: Some("=?base64?Zm9v") },
    Decoding { raw: "Zm9v?=", decoded: Some("Zm9v?=") },
    Decoding { raw: "=?base64?dXMgZWFzdA=?=", decoded: None },
    Decoding { raw: "=?base64?dXMgZWFzdA?=", decoded: None },
    Decoding { raw: "=?base64?Zm9=?=", decoded: None },
    Decoding { raw: "=?base64?Zm9v YmFy?=", decoded: None },
    Decoding { raw: "=?base64?Zm9v!?=", decoded: None },
    Decoding { raw: "=?base64?/w==?=", decoded: None },
];

/// Input schemas that make a tool invalid.
pub const INVALID: &[(&str, &str)] = &[
    ("an empty name", r#"{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}"#),
    ("a name with a space", r#"{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A B"}}}"#),
    ("a name with a colon", r#"{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A:B"}}}"#),
    ("a non-ASCII name", r#"{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Régión"}}}"#),
    (
        "a control character",
        r#"{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A\u0001"}}}"#,
    ),
    (
        "a name that is not a string",
        r#"{"type":"object","properties":{"a":{"type":"string","x-mcp-header":1}}}"#,
    ),
    ("an object", r#"{"type":"object","properties":{"a":{"type":"object","x-mcp-header":"A"}}}"#),
    ("an array", r#"{"type":"object","properties":{"a":{"type":"array","x-mcp-header":"A"}}}"#),
    ("null", r#"{"type":"object","properties":{"a":{"type":"null","x-mcp-header":"A"}}}"#),
    ("a number", r#"{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}"#),
    (
        "two primitive types",
        r#"{"type":"object","properties":{"a":{"type":["string","integer"],"x-mcp-header":"A"}}}"#,
    ),
    ("no type", r#"{"type":"object","properties":{"a":{"x-mcp-header":"A"}}}"#),
    (
        "a duplicate ignoring case",
        r#"{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"},"b":{"type":"string","x-mcp-header":"a"}}}"#,
    ),
    (
        "a nested duplicate",
        r#"{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"X"},"o":{"type":"object","properties":{"b":{"type":"string","x-mcp-header":"x"}}}}}"#,
    ),
    ("the root", r#"{"type":"object","x-mcp-header":"Root"}"#),
    (
        "under items",
        r#"{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}"#,
    ),
    (
        "under oneOf",
        r#"{"type":"object","oneOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}"#,
    ),
    (
        "under anyOf",
        r#"{"type":"object","anyOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}"#,
    ),
    (
        "under allOf",
        r#"{"type":"object","allOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}"#,
    ),
    ("under not", r#"{"type":"object","not":{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}}"#),
    (
        "under then",
        r#"{"type":"object","if":{},"then":{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}}"#,
    ),
    ("under $defs", r#"{"type":"object","$defs":{"d":{"type":"string","x-mcp-header":"A"}}}"#),
    (
        "under additionalProperties",
        r#"{"type":"object","additionalProperties":{"type":"string","x-mcp-header":"A"}}"#,
    ),
    (
        "under patternProperties",
        r#"{"type":"object","patternProperties":{"^a":{"type":"string","x-mcp-header":"A"}}}"#,
    ),
];

/// Input schemas with an `x-mcp-header` key that is no annotation: the tool is valid.
pub const NOT_ANNOTATIONS: &[(&str, &str)] = &[
    ("a property named x-mcp-header", r#"{"type":"object","properties":{"x-mcp-header":{"type":"string"}}}"#),
    (
        "a default value",
        r#"{"type":"object","properties":{"a":{"type":"object","default":{"x-mcp-header":"A"}}}}"#,
    ),
    ("a definition named x-mcp-header", r#"{"type":"object","$defs":{"x-mcp-header":{"type":"string"}}}"#),
];
