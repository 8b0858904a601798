//! PLACEHOLDER — replaced by the content module owner.
#![allow(missing_docs)]
pub type ContentBlock = crate::JsonObject;
pub type SamplingContent = crate::JsonValue;
