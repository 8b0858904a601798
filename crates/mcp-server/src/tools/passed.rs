//! A tool's result passed on as the JSON another server sent it (a gateway's, from the server it
//! forwarded the call to): its members are kept as their text, so `content` — most of a result,
//! and all of a large one — is copied on, never decoded into blocks and encoded again. Only what
//! the server must read or rewrite is read: `isError` (the observation's tool errors),
//! `structuredContent` (checked against the tool's `outputSchema`, when it has one), `_meta` (the
//! other server's identity is not this one's) and `resultType` (the caller's revision decides it).

use std::sync::Arc;

use mcp_types::{CallToolResult, Implementation, JsonObject, RawJson, ResultMeta};
use serde::de::{Error as _, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

/// What a tool's handler answers with: a result built by the handler, or one passed on as it came.
pub enum ToolOutput {
    /// A result built here.
    Built(CallToolResult),
    /// Another server's result, as its JSON.
    Passed(PassedResult),
}

impl From<CallToolResult> for ToolOutput {
    fn from(result: CallToolResult) -> Self {
        ToolOutput::Built(result)
    }
}

impl From<PassedResult> for ToolOutput {
    fn from(result: PassedResult) -> Self {
        ToolOutput::Passed(result)
    }
}

impl ToolOutput {
    /// Whether the result reports a failure of the tool (`isError: true`).
    pub fn is_error(&self) -> bool {
        match self {
            ToolOutput::Built(result) => result.is_error(),
            ToolOutput::Passed(result) => result.is_error,
        }
    }

    /// The result as a JSON object (what a task keeps of it).
    pub(crate) fn into_object(self) -> Result<JsonObject, serde_json::Error> {
        let value = match self {
            ToolOutput::Built(result) => serde_json::to_value(&result)?,
            ToolOutput::Passed(result) => return result.to_object(),
        };
        match value {
            serde_json::Value::Object(object) => Ok(object),
            _ => Err(serde_json::Error::custom("a tool result is not a JSON object")),
        }
    }
}

/// A `tools/call` result kept as the JSON text of each of its members. Made by
/// [`PassedResult::from_json`], which checks what every result must be: an object without
/// duplicate members, with `content` an array, `isError` a boolean and `_meta` an object (or
/// `null`, for either); the blocks themselves are the other server's, passed on as they are.
pub struct PassedResult {
    members: Vec<(String, Box<RawValue>)>,
    is_error: bool,
}

impl std::fmt::Debug for PassedResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PassedResult")
            .field("members", &self.members.iter().map(|(name, _)| name.as_str()).collect::<Vec<_>>())
            .field("is_error", &self.is_error)
            .finish()
    }
}

impl PassedResult {
    /// Reads a result's members from its JSON text; an error says what is wrong with it.
    pub fn from_json(json: &str) -> Result<Self, serde_json::Error> {
        let mut deserializer = serde_json::Deserializer::from_str(json);
        let members = deserializer.deserialize_map(Members)?;
        deserializer.end()?;
        let get = |name: &str| members.iter().find(|(n, _)| n == name).map(|(_, raw)| raw.get());
        match get("content") {
            Some(content) if content.starts_with('[') => {}
            Some(_) => return Err(serde_json::Error::custom("`content` is not an array")),
            None => return Err(serde_json::Error::custom("missing field `content`")),
        }
        let is_error = match get("isError") {
            Some(raw) => serde_json::from_str::<Option<bool>>(raw)
                .map_err(|e| serde_json::Error::custom(format!("`isError`: {e}")))?
                .unwrap_or(false),
            None => false,
        };
        if let Some(raw) = get("_meta") {
            serde_json::from_str::<Option<ResultMeta>>(raw)
                .map_err(|e| serde_json::Error::custom(format!("`_meta`: {e}")))?;
        }
        Ok(PassedResult { members, is_error })
    }

    /// Whether the result reports a failure of the tool (`isError: true`).
    pub fn is_error(&self) -> bool {
        self.is_error
    }

    fn member(&self, name: &str) -> Option<&RawValue> {
        self.members.iter().find(|(n, _)| n == name).map(|(_, raw)| &**raw)
    }

    /// `structuredContent`, decoded (to be checked against an `outputSchema`); `None` when absent
    /// or `null`.
    pub(crate) fn structured_content(&self) -> Result<Option<serde_json::Value>, serde_json::Error> {
        match self.member("structuredContent") {
            Some(raw) => serde_json::from_str::<Option<serde_json::Value>>(raw.get()),
            None => Ok(None),
        }
    }

    /// The result as a JSON object.
    pub(crate) fn to_object(&self) -> Result<JsonObject, serde_json::Error> {
        self.members.iter().map(|(name, raw)| Ok((name.clone(), serde_json::from_str(raw.get())?))).collect()
    }

    /// The result as this server answers it: every member as it came, except `resultType` (set
    /// to `complete` for a modern caller, left out for a legacy one) and `_meta`, whose other
    /// server's identity is replaced by this server's for a modern caller and dropped for a
    /// legacy one (its other members kept).
    pub(crate) fn finish(
        &self,
        modern: bool,
        info: &Arc<Implementation>,
    ) -> Result<RawJson, serde_json::Error> {
        let mut meta = match self.member("_meta") {
            Some(raw) => serde_json::from_str::<Option<ResultMeta>>(raw.get())?,
            None => None,
        };
        if let Some(meta) = &mut meta {
            meta.server_info = None;
        }
        if modern {
            meta.get_or_insert_with(ResultMeta::default).server_info = Some(info.clone());
        }
        let meta =
            meta.filter(|m| m.server_info.is_some() || m.subscription_id.is_some() || !m.extra.is_empty());
        serde_json::value::to_raw_value(&Finished { passed: self, meta: meta.as_ref(), modern })
    }
}

/// What [`PassedResult::finish`] writes.
struct Finished<'a> {
    passed: &'a PassedResult,
    meta: Option<&'a ResultMeta>,
    modern: bool,
}

impl Serialize for Finished<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for (name, raw) in &self.passed.members {
            // `null` reads as absent for the optional members, and is written as absent.
            let absent = raw.get() == "null" && matches!(name.as_str(), "isError" | "structuredContent");
            if !absent && name != "resultType" && name != "_meta" {
                map.serialize_entry(name, raw)?;
            }
        }
        if let Some(meta) = self.meta {
            map.serialize_entry("_meta", meta)?;
        }
        if self.modern {
            map.serialize_entry("resultType", &mcp_types::ResultType::Complete)?;
        }
        map.end()
    }
}

/// Reads an object's members as their text, refusing a name that comes twice.
struct Members;

impl<'de> Visitor<'de> for Members {
    type Value = Vec<(String, Box<RawValue>)>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a tool result (a JSON object)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut members: Vec<(String, Box<RawValue>)> = Vec::with_capacity(map.size_hint().unwrap_or(4));
        while let Some(name) = map.next_key::<String>()? {
            let value: Box<RawValue> = map.next_value()?;
            if members.iter().any(|(n, _)| *n == name) {
                return Err(A::Error::custom(format!("duplicate member `{name}`")));
            }
            members.push((name, value));
        }
        Ok(members)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn info() -> Arc<Implementation> {
        Arc::new(Implementation::new("gateway", "1.0.0"))
    }

    fn finished(json: &Value, modern: bool) -> Value {
        let passed = PassedResult::from_json(&json.to_string()).unwrap();
        serde_json::from_str(passed.finish(modern, &info()).unwrap().get()).unwrap()
    }

    /// What the built path makes of the same result: decoded, its identity dropped, finished.
    fn built(json: &Value, modern: bool) -> Value {
        let mut result: CallToolResult = serde_json::from_value(json.clone()).unwrap();
        if let Some(meta) = &mut result.meta {
            meta.server_info = None;
        }
        result.result_type = None;
        if modern {
            result.result_type = Some(mcp_types::ResultType::Complete);
            result.meta.get_or_insert_with(ResultMeta::default).server_info = Some(info());
        } else if result.meta.as_ref().is_some_and(|m| m.subscription_id.is_none() && m.extra.is_empty()) {
            result.meta = None;
        }
        serde_json::to_value(&result).unwrap()
    }

    #[test]
    fn a_passed_result_is_answered_as_the_built_one_would_be() {
        let results = [
            json!({"content": [{"type": "text", "text": "hi \"there\"\n"}]}),
            json!({"content": [], "isError": true, "resultType": "complete"}),
            json!({"content": [{"type": "text", "text": "x"}], "structuredContent": {"a": [1, 2.5, null]},
                   "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "up", "version": "2"}, "k": 1},
                   "resultType": "complete", "future": {"x": true}}),
            json!({"content": [], "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "up", "version": "2"}}}),
            json!({"content": [], "isError": null, "_meta": null}),
        ];
        for result in &results {
            for modern in [true, false] {
                assert_eq!(finished(result, modern), built(result, modern), "{result} (modern: {modern})");
            }
        }
    }

    #[test]
    fn content_is_passed_on_byte_for_byte() {
        let text = r#"{"content":[{"type":"text","text":"caf\u00e9 \ud83d\ude00"}],"isError":false}"#;
        let passed = PassedResult::from_json(text).unwrap();
        assert!(!passed.is_error());
        let out = passed.finish(true, &info()).unwrap();
        assert!(
            out.get().starts_with(
                r#"{"content":[{"type":"text","text":"caf\u00e9 \ud83d\ude00"}],"isError":false,"#
            )
        );
        assert!(out.get().ends_with(r#""resultType":"complete"}"#), "{}", out.get());
        let legacy = passed.finish(false, &info()).unwrap();
        assert_eq!(
            legacy.get(),
            r#"{"content":[{"type":"text","text":"caf\u00e9 \ud83d\ude00"}],"isError":false}"#
        );
    }

    #[test]
    fn what_is_not_a_tool_result_is_refused_with_its_reason() {
        for (text, reason) in [
            ("[1]", "a tool result"),
            ("{}", "missing field `content`"),
            (r#"{"content": {}}"#, "not an array"),
            (r#"{"content": [], "content": []}"#, "duplicate member `content`"),
            (r#"{"content": [], "isError": "yes"}"#, "`isError`"),
            (r#"{"content": [], "_meta": 3}"#, "`_meta`"),
            (r#"{"content": []"#, "EOF"),
            (r#"{"content": []} x"#, "trailing"),
        ] {
            let error = PassedResult::from_json(text).unwrap_err().to_string();
            assert!(error.contains(reason), "{text}: {error}");
        }
    }

    #[test]
    fn a_result_reads_as_the_same_object_it_came_as() {
        let json =
            json!({"content": [{"type": "text", "text": "x"}], "isError": true, "structuredContent": [1]});
        let passed = PassedResult::from_json(&json.to_string()).unwrap();
        assert!(passed.is_error());
        assert_eq!(passed.structured_content().unwrap(), Some(json!([1])));
        assert_eq!(Value::Object(ToolOutput::from(passed).into_object().unwrap()), json);
    }
}
