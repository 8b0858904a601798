//! PLACEHOLDER — replaced by the sampling module owner.
#![allow(missing_docs)]
pub type CreateMessageRequestParams = crate::JsonObject;
pub type CreateMessageResult = crate::JsonObject;
crate::request_method!(CreateMessage = "sampling/createMessage", CreateMessageRequestParams => CreateMessageResult);
