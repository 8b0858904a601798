//! PLACEHOLDER — replaced by the elicitation module owner.
#![allow(missing_docs)]
pub type ElicitRequestParams = crate::JsonObject;
pub type ElicitResult = crate::JsonObject;
crate::request_method!(Elicit = "elicitation/create", ElicitRequestParams => ElicitResult);
