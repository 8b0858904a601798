//! Argument completion: `completion/complete`.

use std::collections::BTreeMap;

use serde::de::Deserializer;
use serde::{Deserialize, Serialize, Serializer};

use crate::json::JsonObject;
use crate::meta::{RequestMeta, ResultMeta};
use crate::method::{JsonRpcRequest, JsonRpcResponse};
use crate::prompts::PromptReference;
use crate::result::ResultType;
use crate::strict;
use crate::wire_struct;

/// The most values a completion may carry (the schema's `maxItems`).
pub const MAX_COMPLETION_VALUES: usize = 100;

wire_struct! {
    /// Identifies a resource template, for completion (`ResourceTemplateReference`,
    /// `"type": "ref/resource"`; named `ResourceReference` before 2025-06-18).
    #[derive(Default)]
    pub struct ResourceTemplateReference [tag "type" = "ref/resource"] {
        /// The URI or URI template.
        req uri: String = "uri",
    }
}

impl ResourceTemplateReference {
    /// A reference to the template `uri`.
    pub fn new(uri: impl Into<String>) -> Self {
        ResourceTemplateReference { uri: uri.into(), ..Default::default() }
    }
}

/// The name of [`ResourceTemplateReference`] in 2024-11-05 and 2025-03-26.
pub type ResourceReference = ResourceTemplateReference;

/// What is being completed (`CompleteRequestParams.ref`), dispatched by `"type"`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CompletionReference {
    /// `"ref/prompt"`: an argument of a prompt.
    Prompt(PromptReference),
    /// `"ref/resource"`: a variable of a resource template.
    ResourceTemplate(ResourceTemplateReference),
    /// A reference kind this revision does not define, kept verbatim.
    Unknown(JsonObject),
}

impl CompletionReference {
    /// The `"type"` of this reference.
    pub fn kind(&self) -> &str {
        match self {
            CompletionReference::Prompt(_) => "ref/prompt",
            CompletionReference::ResourceTemplate(_) => "ref/resource",
            CompletionReference::Unknown(o) => {
                o.get("type").and_then(serde_json::Value::as_str).unwrap_or("")
            }
        }
    }
}

impl From<PromptReference> for CompletionReference {
    fn from(value: PromptReference) -> Self {
        CompletionReference::Prompt(value)
    }
}

impl From<ResourceTemplateReference> for CompletionReference {
    fn from(value: ResourceTemplateReference) -> Self {
        CompletionReference::ResourceTemplate(value)
    }
}

impl Serialize for CompletionReference {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            CompletionReference::Prompt(r) => r.serialize(serializer),
            CompletionReference::ResourceTemplate(r) => r.serialize(serializer),
            CompletionReference::Unknown(o) => o.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for CompletionReference {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let object = strict::object(deserializer)?;
        let kind = strict::tag(&object, "type")?;
        Ok(match kind.as_str() {
            "ref/prompt" => CompletionReference::Prompt(strict::from_object(object)?),
            "ref/resource" => CompletionReference::ResourceTemplate(strict::from_object(object)?),
            _ => CompletionReference::Unknown(object),
        })
    }
}

wire_struct! {
    /// The argument being completed (`CompleteRequestParams.argument`).
    #[derive(Default)]
    pub struct CompletionArgument {
        /// The argument's name.
        req name: String = "name",
        /// What the user typed so far.
        req value: String = "value",
    }
}

wire_struct! {
    /// Context of a completion (`CompleteRequestParams.context`, 2025-06-18 and later).
    #[derive(Default)]
    pub struct CompletionContext {
        /// Arguments already resolved, by name.
        opt arguments: BTreeMap<String, String> = "arguments",
    }
}

wire_struct! {
    /// Params of `completion/complete` (`CompleteRequestParams`).
    pub struct CompleteRequestParams {
        /// What is being completed (wire name `ref`).
        req reference: CompletionReference = "ref",
        /// The argument being completed.
        req argument: CompletionArgument = "argument",
        /// Previously resolved arguments (2025-06-18 and later).
        opt context: CompletionContext = "context",
        /// Request metadata (required on 2026-07-28).
        opt meta: RequestMeta = "_meta",
    }
}

impl CompleteRequestParams {
    /// Params completing argument `name` (typed so far: `value`) of `reference`.
    pub fn new(
        reference: impl Into<CompletionReference>,
        name: impl Into<String>,
        value: impl Into<String>,
    ) -> Self {
        CompleteRequestParams {
            reference: reference.into(),
            argument: CompletionArgument { name: name.into(), value: value.into(), extra: JsonObject::new() },
            context: None,
            meta: None,
            extra: JsonObject::new(),
        }
    }
}

wire_struct! {
    /// The completions (`CompleteResult.completion`).
    #[derive(Default)]
    pub struct Completion {
        /// The values, at most [`MAX_COMPLETION_VALUES`].
        req values: Vec<String> = "values",
        /// Total number of matches, which may exceed the values sent.
        opt total: u64 = "total",
        /// More matches exist than were sent.
        opt has_more: bool = "hasMore",
    }
}

impl Completion {
    /// Completions from all matches: keeps the first [`MAX_COMPLETION_VALUES`] and sets
    /// `total` and `hasMore` accordingly.
    pub fn from_matches(mut matches: Vec<String>) -> Self {
        let total = matches.len();
        matches.truncate(MAX_COMPLETION_VALUES);
        Completion {
            values: matches,
            total: Some(total as u64),
            has_more: Some(total > MAX_COMPLETION_VALUES),
            extra: JsonObject::new(),
        }
    }
}

wire_struct! {
    /// The result of `completion/complete` (`CompleteResult`).
    #[derive(Default)]
    pub struct CompleteResult {
        /// The completions.
        req completion: Completion = "completion",
        /// The kind of result (required on 2026-07-28, absent before).
        opt result_type: ResultType = "resultType",
        /// Result metadata.
        opt meta: ResultMeta = "_meta",
    }
}

crate::request_method!(
    /// `completion/complete`: suggest values for a prompt argument or template variable.
    Complete = "completion/complete", CompleteRequestParams => CompleteResult
);

/// A full `completion/complete` request.
pub type CompleteRequest = JsonRpcRequest<Complete>;
/// A full `completion/complete` response.
pub type CompleteResultResponse = JsonRpcResponse<CompleteResult>;

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::DeserializeOwned;
    use serde_json::{Value, json};

    fn round_trip<T: Serialize + DeserializeOwned>(text: &str) -> T {
        let value: T = serde_json::from_str(text).unwrap();
        let back = serde_json::to_value(&value).unwrap();
        assert_eq!(back, serde_json::from_str::<Value>(text).unwrap(), "round trip of {text}");
        value
    }

    #[test]
    fn complete_request_round_trips() {
        let req: CompleteRequest = round_trip(
            r#"{"jsonrpc":"2.0","id":"completion-example","method":"completion/complete","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}},"ref":{"type":"ref/prompt","name":"code_review"},"argument":{"name":"framework","value":"fla"},"context":{"arguments":{"language":"python"}}}}"#,
        );
        assert_eq!(req.params.reference, CompletionReference::Prompt(PromptReference::new("code_review")));
        assert_eq!(req.params.argument.value, "fla");
        let context = req.params.context.unwrap().arguments.unwrap();
        assert_eq!(context.get("language").map(String::as_str), Some("python"));
    }

    #[test]
    fn reference_dispatch() {
        let r: CompletionReference = round_trip(r#"{"type":"ref/resource","uri":"file:///{path}"}"#);
        assert_eq!(r, ResourceTemplateReference::new("file:///{path}").into());
        assert_eq!(r.kind(), "ref/resource");
        let r: CompletionReference = round_trip(r#"{"type":"ref/tool","name":"t"}"#);
        assert!(matches!(r, CompletionReference::Unknown(_)));
        assert_eq!(r.kind(), "ref/tool");
        let err = serde_json::from_str::<CompletionReference>(r#"{"name":"t"}"#).unwrap_err();
        assert!(err.to_string().contains("missing field `type`"), "{err}");
        assert!(serde_json::from_str::<CompletionReference>(r#"{"type":"ref/prompt"}"#).is_err());
        assert!(
            serde_json::from_str::<CompletionReference>(r#"{"type":"ref/prompt","name":"a","name":"b"}"#)
                .is_err()
        );
    }

    #[test]
    fn params_require_ref_and_argument() {
        let err = serde_json::from_str::<CompleteRequestParams>(r#"{"argument":{"name":"a","value":""}}"#)
            .unwrap_err();
        assert!(err.to_string().contains("missing field `ref`"), "{err}");
        let err =
            serde_json::from_str::<CompleteRequestParams>(r#"{"ref":{"type":"ref/prompt","name":"p"}}"#)
                .unwrap_err();
        assert!(err.to_string().contains("missing field `argument`"), "{err}");
        assert_eq!(
            serde_json::to_value(CompleteRequestParams::new(PromptReference::new("p"), "lang", "py"))
                .unwrap(),
            json!({"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"lang","value":"py"}})
        );
    }

    #[test]
    fn complete_result() {
        let r: CompleteResult = round_trip(
            r#"{"resultType":"complete","completion":{"values":["python","pytorch","pyside"],"total":10,"hasMore":true}}"#,
        );
        assert_eq!(r.completion.total, Some(10));
        assert_eq!(r.completion.has_more, Some(true));
        let legacy: CompleteResult = round_trip(r#"{"completion":{"values":[]}}"#);
        assert_eq!(legacy.completion.total, None);
        let resp: CompleteResultResponse = round_trip(
            r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","completion":{"values":["flask"],"total":1,"hasMore":false}}}"#,
        );
        assert_eq!(resp.result.completion.values, vec!["flask".to_string()]);
    }

    #[test]
    fn completion_from_matches_caps_values() {
        let c = Completion::from_matches((0..150).map(|i| i.to_string()).collect());
        assert_eq!(c.values.len(), MAX_COMPLETION_VALUES);
        assert_eq!(c.total, Some(150));
        assert_eq!(c.has_more, Some(true));
        let c = Completion::from_matches(vec!["a".into()]);
        assert_eq!((c.values.len(), c.total, c.has_more), (1, Some(1), Some(false)));
    }
}
