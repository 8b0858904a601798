//! A tool's result passed on as the JSON another server sent it (a gateway's, from the server it
//! forwarded the call to): its members are kept as their text, so `content` — most of a result,
//! and all of a large one — is copied on, never decoded into blocks and encoded again. Only what
//! the server must read or rewrite is read: `isError` (the observation's tool errors),
//! `structuredContent` (checked against the tool's `outputSchema`, when it has one), `_meta` (the
//! other server's identity is not this one's) and `resultType` (the caller's revision decides it).

use std::sync::Arc;

use mcp_types::{CallToolResult, Implementation, JsonObject, RawJson};
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
    /// Every member but `_meta` and `resultType`, which the answer writes itself.
    members: Vec<(String, Box<RawValue>)>,
    /// The members of `_meta` but the other server's identity.
    meta: Vec<(String, Box<RawValue>)>,
    is_error: bool,
}

/// The member of a result's `_meta` that names the server that answered.
const SERVER_INFO: &str = mcp_types::meta::key::SERVER_INFO;

impl std::fmt::Debug for PassedResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names =
            |members: &[(String, Box<RawValue>)]| members.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
        f.debug_struct("PassedResult")
            .field("members", &names(&self.members))
            .field("meta", &names(&self.meta))
            .field("is_error", &self.is_error)
            .finish()
    }
}

impl PassedResult {
    /// Reads a result's members from its JSON text; an error says what is wrong with it.
    pub fn from_json(json: &str) -> Result<Self, serde_json::Error> {
        let mut deserializer = serde_json::Deserializer::from_str(json);
        let passed = deserializer.deserialize_map(Result_)?;
        deserializer.end()?;
        Ok(passed)
    }

    /// Whether the result reports a failure of the tool (`isError: true`).
    pub fn is_error(&self) -> bool {
        self.is_error
    }

    /// `structuredContent`, decoded (to be checked against an `outputSchema`); `None` when absent
    /// or `null`.
    pub(crate) fn structured_content(&self) -> Result<Option<serde_json::Value>, serde_json::Error> {
        match self.members.iter().find(|(n, _)| n == "structuredContent") {
            Some((_, raw)) => serde_json::from_str::<Option<serde_json::Value>>(raw.get()),
            None => Ok(None),
        }
    }

    /// The result as a JSON object (`_meta` without the other server's identity, no
    /// `resultType`).
    pub(crate) fn to_object(&self) -> Result<JsonObject, serde_json::Error> {
        let object = |members: &[(String, Box<RawValue>)]| -> Result<JsonObject, serde_json::Error> {
            members.iter().map(|(name, raw)| Ok((name.clone(), serde_json::from_str(raw.get())?))).collect()
        };
        let mut result = object(&self.members)?;
        if !self.meta.is_empty() {
            result.insert("_meta".into(), serde_json::Value::Object(object(&self.meta)?));
        }
        Ok(result)
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
        serde_json::value::to_raw_value(&Finished { passed: self, info: modern.then_some(&**info) })
    }
}

/// What [`PassedResult::finish`] writes: `info` is this server's identity for a modern caller.
struct Finished<'a> {
    passed: &'a PassedResult,
    info: Option<&'a Implementation>,
}

impl Serialize for Finished<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for (name, raw) in &self.passed.members {
            // `null` reads as absent for the optional members, and is written as absent.
            let absent = raw.get() == "null" && matches!(name.as_str(), "isError" | "structuredContent");
            if !absent {
                map.serialize_entry(name, raw)?;
            }
        }
        if self.info.is_some() || !self.passed.meta.is_empty() {
            map.serialize_entry("_meta", &Meta { info: self.info, members: &self.passed.meta })?;
        }
        if self.info.is_some() {
            map.serialize_entry("resultType", &mcp_types::ResultType::Complete)?;
        }
        map.end()
    }
}

/// A passed result's `_meta`: this server's identity, then the other server's members.
struct Meta<'a> {
    info: Option<&'a Implementation>,
    members: &'a [(String, Box<RawValue>)],
}

impl Serialize for Meta<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map =
            serializer.serialize_map(Some(self.members.len() + usize::from(self.info.is_some())))?;
        if let Some(info) = self.info {
            map.serialize_entry(SERVER_INFO, info)?;
        }
        for (name, raw) in self.members {
            map.serialize_entry(name, raw)?;
        }
        map.end()
    }
}

/// Reads a result: each member as its text, but `resultType` (skipped: the answer writes its
/// own) and `_meta` (read member by member, the other server's identity skipped), in one pass.
struct Result_;

impl<'de> Visitor<'de> for Result_ {
    type Value = PassedResult;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut members: Vec<(String, Box<RawValue>)> = Vec::with_capacity(4);
        let mut meta = None;
        let mut result_type = false;
        let mut is_error = false;
        while let Some(name) = map.next_key::<String>()? {
            let again = || A::Error::custom(format!("duplicate member `{name}`"));
            match name.as_str() {
                "_meta" => {
                    if meta.is_some() {
                        return Err(again());
                    }
                    let members = map
                        .next_value_seed(MetaSeed)
                        .map_err(|e| A::Error::custom(format!("`_meta`: {e}")))?;
                    meta = Some(members);
                    continue;
                }
                "resultType" => {
                    if std::mem::replace(&mut result_type, true) {
                        return Err(again());
                    }
                    map.next_value::<serde::de::IgnoredAny>()?;
                    continue;
                }
                _ => {}
            }
            let value: Box<RawValue> = map.next_value()?;
            if members.iter().any(|(n, _)| *n == name) {
                return Err(again());
            }
            match name.as_str() {
                "content" if !value.get().starts_with('[') => {
                    return Err(A::Error::custom("`content` is not an array"));
                }
                "isError" => match value.get() {
                    "true" => is_error = true,
                    "false" | "null" => {}
                    other => return Err(A::Error::custom(format!("`isError` is not a boolean: {other}"))),
                },
                _ => {}
            }
            members.push((name, value));
        }
        if !members.iter().any(|(n, _)| n == "content") {
            return Err(A::Error::custom("missing field `content`"));
        }
        Ok(PassedResult { members, meta: meta.unwrap_or_default(), is_error })
    }
}

/// Reads a result's `_meta` (an object, or `null` for none) as its members' text, but the other
/// server's identity.
struct MetaSeed;

impl<'de> serde::de::DeserializeSeed<'de> for MetaSeed {
    type Value = Vec<(String, Box<RawValue>)>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_option(self)
    }
}

impl<'de> Visitor<'de> for MetaSeed {
    type Value = Vec<(String, Box<RawValue>)>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(Vec::new())
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut members: Vec<(String, Box<RawValue>)> = Vec::new();
        let mut identity = false;
        while let Some(name) = map.next_key::<String>()? {
            let again = || A::Error::custom(format!("duplicate member `{name}`"));
            if name == SERVER_INFO {
                if std::mem::replace(&mut identity, true) {
                    return Err(again());
                }
                map.next_value::<serde::de::IgnoredAny>()?;
                continue;
            }
            let value: Box<RawValue> = map.next_value()?;
            if members.iter().any(|(n, _)| *n == name) {
                return Err(again());
            }
            members.push((name, value));
        }
        Ok(members)
    }
}

#[cfg(test)]
mod tests {
    use mcp_types::ResultMeta;
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
            ("[1]", "a JSON object"),
            ("{}", "missing field `content`"),
            (r#"{"content": {}}"#, "not an array"),
            (r#"{"content": [], "content": []}"#, "duplicate member `content`"),
            (r#"{"content": [], "isError": "yes"}"#, "`isError` is not a boolean"),
            (r#"{"content": [], "_meta": {"a": 1, "a": 2}}"#, "duplicate member `a`"),
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
