//! PLACEHOLDER — replaced by the roots module owner.
#![allow(missing_docs)]
pub type ListRootsParams = crate::JsonObject;
pub type ListRootsResult = crate::JsonObject;
crate::request_method!(ListRoots = "roots/list", ListRootsParams => ListRootsResult);
