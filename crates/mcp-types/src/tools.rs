//! PLACEHOLDER — replaced by the tools module owner.
#![allow(missing_docs)]
pub type Tool = crate::JsonObject;
