//! Cursor-based pagination of list methods (`tools/list`, `resources/list`, ...).
//!
//! A cursor is opaque: the client passes back the `nextCursor` of one page to get the next,
//! and never parses or fabricates one.

use crate::meta::{RequestMeta, ResultMeta};
use crate::result::ResultType;
use crate::wire_struct;

/// An opaque pagination position (`Cursor`).
pub type Cursor = String;

wire_struct! {
    /// Params of a paginated list request (`PaginatedRequestParams`).
    #[derive(Default)]
    pub struct PaginatedRequestParams {
        /// Where to continue; absent for the first page.
        opt cursor: Cursor = "cursor",
        /// Request metadata (required on 2026-07-28).
        opt meta: RequestMeta = "_meta",
    }
}

impl PaginatedRequestParams {
    /// Params asking for the page at `cursor`.
    pub fn with_cursor(cursor: impl Into<Cursor>) -> Self {
        PaginatedRequestParams { cursor: Some(cursor.into()), ..Default::default() }
    }
}

wire_struct! {
    /// The members every paginated result shares (`PaginatedResult`).
    #[derive(Default)]
    pub struct PaginatedResult {
        /// Cursor of the next page; absent on the last page.
        opt next_cursor: Cursor = "nextCursor",
        /// The kind of result (required on 2026-07-28, absent before).
        opt result_type: ResultType = "resultType",
        /// Result metadata.
        opt meta: ResultMeta = "_meta",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_round_trip_with_meta() {
        let text = r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}},"cursor":"eyJwYWdlIjogMn0="}"#;
        let params: PaginatedRequestParams = serde_json::from_str(text).unwrap();
        assert_eq!(params.cursor.as_deref(), Some("eyJwYWdlIjogMn0="));
        let meta = params.meta.as_ref().unwrap();
        assert_eq!(meta.protocol_version.as_deref(), Some("2026-07-28"));
        assert!(meta.is_modern());
        let back = serde_json::to_value(&params).unwrap();
        assert_eq!(back, serde_json::from_str::<serde_json::Value>(text).unwrap());
    }

    #[test]
    fn legacy_params_are_all_optional() {
        let params: PaginatedRequestParams = serde_json::from_str("{}").unwrap();
        assert_eq!(params, PaginatedRequestParams::default());
        assert_eq!(
            serde_json::to_string(&PaginatedRequestParams::with_cursor("c")).unwrap(),
            r#"{"cursor":"c"}"#
        );
    }

    #[test]
    fn result_reads_legacy_and_modern() {
        let legacy: PaginatedResult = serde_json::from_str(r#"{"nextCursor":"n"}"#).unwrap();
        assert_eq!(legacy.result_type, None);
        let modern: PaginatedResult = serde_json::from_str(r#"{"resultType":"complete"}"#).unwrap();
        assert_eq!(modern.result_type, Some(ResultType::Complete));
        assert_eq!(modern.next_cursor, None);
    }
}
