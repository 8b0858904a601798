//! The params of one request as they go on the wire, serialized once from borrowed parts: the
//! caller's params (built once per call, never copied), the MRTR members of a retry round, and
//! the typed `_meta`. The call path keeps no other copy of a request's arguments.

use mcp_types::{InputResponses, RequestId, RequestMeta};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// What an MRTR retry adds: the answers to the server's input requests, and its state echoed.
pub(crate) type InputAnswers = (InputResponses, Option<String>);

/// The members the wire params carry besides the caller's: they replace the caller's own.
const MRTR_MEMBERS: [&str; 2] = ["inputResponses", "requestState"];

/// The params of one request, borrowed.
pub(crate) struct WireParams<'a> {
    /// The caller's params; their `_meta` is merged into `meta` instead.
    pub(crate) params: &'a Map<String, Value>,
    pub(crate) input: Option<&'a InputAnswers>,
    pub(crate) meta: WireMeta<'a>,
}

/// The `_meta` of the wire params.
#[derive(Clone, Copy)]
pub(crate) enum WireMeta<'a> {
    /// No `_meta` at all (the cache key).
    None,
    /// This one (none when it is empty).
    Typed(&'a RequestMeta),
    /// This JSON text, serialized before: the client's own `_meta` of a modern request, the
    /// same for every call without options of its own (see `Inner::modern_meta`).
    Raw(&'a RawValue),
}

/// One request as it goes on the wire, serialized in one pass (no intermediate text of its
/// params to copy).
pub(crate) struct WireRequest<'a> {
    pub(crate) id: &'a RequestId,
    pub(crate) method: &'a str,
    pub(crate) params: WireParams<'a>,
}

impl Serialize for WireRequest<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // The members in the order `mcp_types::Request` writes them.
        let mut map = serializer.serialize_map(Some(4))?;
        map.serialize_entry("jsonrpc", "2.0")?;
        map.serialize_entry("id", self.id)?;
        map.serialize_entry("method", self.method)?;
        map.serialize_entry("params", &self.params)?;
        map.end()
    }
}

impl Serialize for WireParams<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in self.params {
            if key == "_meta" || (self.input.is_some() && MRTR_MEMBERS.contains(&key.as_str())) {
                continue;
            }
            map.serialize_entry(key, value)?;
        }
        if let Some((responses, state)) = self.input {
            map.serialize_entry("inputResponses", responses)?;
            if let Some(state) = state {
                map.serialize_entry("requestState", state)?;
            }
        }
        match self.meta {
            WireMeta::None => {}
            WireMeta::Typed(meta) if *meta == RequestMeta::default() => {}
            WireMeta::Typed(meta) => map.serialize_entry("_meta", meta)?,
            WireMeta::Raw(meta) => map.serialize_entry("_meta", meta)?,
        }
        map.end()
    }
}

/// The caller's `_meta` entries (from the params and from the options, the options' winning)
/// as a typed `_meta`: a member it models is read into its field, so that what the client sets
/// itself afterwards replaces it, as on the wire a key appears once.
pub(crate) fn caller_meta(params: &Map<String, Value>, extra: &Map<String, Value>) -> RequestMeta {
    let mut meta = RequestMeta::default();
    let from_params = params.get("_meta").and_then(Value::as_object);
    for (key, value) in from_params.into_iter().flatten().chain(extra) {
        let known = RequestMeta::KNOWN_MEMBERS.contains(&key.as_str());
        if !known {
            meta.extra.insert(key.clone(), value.clone());
            continue;
        }
        // A modelled member the caller set: typed when it has its type (anything else would
        // not be a valid request anyway, and is left out with a warning).
        let mut one = Map::new();
        one.insert(key.clone(), value.clone());
        match serde_json::from_value::<RequestMeta>(Value::Object(one)) {
            Ok(typed) => {
                meta.progress_token = typed.progress_token.or(meta.progress_token.take());
                meta.protocol_version = typed.protocol_version.or(meta.protocol_version.take());
                meta.client_info = typed.client_info.or(meta.client_info.take());
                meta.client_capabilities = typed.client_capabilities.or(meta.client_capabilities.take());
                meta.log_level = typed.log_level.or(meta.log_level.take());
            }
            Err(e) => tracing::warn!(target: "mcp_client", "_meta {key} left out: {e}"),
        }
    }
    meta
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn the_callers_meta_and_mrtr_members_are_replaced_not_repeated() {
        let params =
            map(json!({"name": "t", "inputResponses": {"old": 1}, "_meta": {"progressToken": 7, "x": 1}}));
        let mut meta = caller_meta(&params, &map(json!({"y": 2})));
        assert_eq!(meta.progress_token, Some(mcp_types::RequestId::Number(7)));
        meta.progress_token = Some(mcp_types::RequestId::Number(9));
        let input = (InputResponses::new(), Some("s".to_owned()));
        let wire = WireParams { params: &params, input: Some(&input), meta: WireMeta::Typed(&meta) };
        let text = serde_json::to_string(&wire).unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&text).unwrap(),
            json!({"name": "t", "inputResponses": {}, "requestState": "s",
                "_meta": {"progressToken": 9, "x": 1, "y": 2}})
        );
        assert_eq!(text.matches("inputResponses").count(), 1, "{text}");
        let key = WireParams { params: &params, input: None, meta: WireMeta::None };
        let key: Value = serde_json::from_str(&serde_json::to_string(&key).unwrap()).unwrap();
        assert_eq!(key, json!({"inputResponses": {"old": 1}, "name": "t"}), "no _meta in a cache key");
    }
}
