//! Server discovery (2026-07-28): `server/discover` returns the versions and capabilities of
//! the server without any handshake or session.

use crate::capabilities::ServerCapabilities;
use crate::meta::ResultMeta;
use crate::method::{JsonRpcRequest, JsonRpcResponse};
use crate::notifications::RequestParams;
use crate::result::{CacheScope, ResultType};
use crate::wire_struct;

wire_struct! {
    /// The result of `server/discover` (`DiscoverResult`). The server's identity, when it
    /// gives one, is in `_meta["io.modelcontextprotocol/serverInfo"]`.
    #[derive(Default)]
    pub struct DiscoverResult {
        /// Protocol versions the server supports.
        req supported_versions: Vec<String> = "supportedVersions",
        /// What the server offers.
        req capabilities: ServerCapabilities = "capabilities",
        /// How to use the server, for the model.
        opt instructions: String = "instructions",
        /// The kind of result (required).
        opt result_type: ResultType = "resultType",
        /// Freshness lifetime in milliseconds (required).
        opt ttl_ms: u64 = "ttlMs",
        /// Who may cache the result (required).
        opt cache_scope: CacheScope = "cacheScope",
        /// Result metadata.
        opt meta: ResultMeta = "_meta",
    }
}

crate::request_method!(
    /// `server/discover`: the server's supported versions and capabilities (2026-07-28).
    Discover = "server/discover", RequestParams => DiscoverResult
);

/// A full `server/discover` request.
pub type DiscoverRequest = JsonRpcRequest<Discover>;
/// A full `server/discover` response.
pub type DiscoverResultResponse = JsonRpcResponse<DiscoverResult>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::RequestId;
    use serde_json::{Value, json};

    #[test]
    fn discover_result_round_trips() {
        let text = r#"{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"resources":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"ExampleServer","version":"1.0.0"}},"instructions":"Prefer `get_weather`.","ttlMs":3600000,"cacheScope":"public"}"#;
        let r: DiscoverResult = serde_json::from_str(text).unwrap();
        assert_eq!(r.supported_versions, vec!["2026-07-28".to_string()]);
        assert!(r.capabilities.tools.is_some());
        assert!(r.capabilities.prompts.is_none());
        assert_eq!(r.meta.as_ref().unwrap().server_info.as_ref().unwrap().name, "ExampleServer");
        assert_eq!(r.ttl_ms, Some(3_600_000));
        assert_eq!(serde_json::to_value(&r).unwrap(), serde_json::from_str::<Value>(text).unwrap());
    }

    #[test]
    fn required_members() {
        let err = serde_json::from_str::<DiscoverResult>(r#"{"supportedVersions":[]}"#).unwrap_err();
        assert!(err.to_string().contains("missing field `capabilities`"), "{err}");
        let err = serde_json::from_str::<DiscoverResult>(r#"{"capabilities":{}}"#).unwrap_err();
        assert!(err.to_string().contains("missing field `supportedVersions`"), "{err}");
    }

    #[test]
    fn discover_request_and_response() {
        let req: DiscoverRequest = serde_json::from_str(
            r#"{"jsonrpc":"2.0","id":"discover-1","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
        )
        .unwrap();
        assert_eq!(req.id, RequestId::String("discover-1".into()));
        assert!(req.params.meta.unwrap().is_modern());
        let resp = DiscoverResultResponse {
            id: RequestId::Number(1),
            result: DiscoverResult { supported_versions: vec!["2026-07-28".into()], ..Default::default() },
        };
        assert_eq!(
            serde_json::to_value(&resp).unwrap(),
            json!({"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{}}})
        );
    }
}
