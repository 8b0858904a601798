//! Wire types of the Model Context Protocol, every revision from 2024-11-05 to 2026-07-28, and
//! the JSON-RPC envelope.
//!
//! What this crate does:
//!
//! * defines every type that crosses the wire, as plain data with serde impls that keep unknown
//!   members (`_meta` keys, extension fields) and reject duplicate ones;
//! * ties each method's name, params and result together ([`RequestMethod`],
//!   [`NotificationMethod`], the types in [`methods`]);
//! * decodes any bytes into a [`Message`] or the exact JSON-RPC error to answer with
//!   ([`decode`]), and encodes messages;
//! * holds SEP-2243's header rules ([`headers`]): which tool arguments are mirrored into
//!   `Mcp-Param-*` headers, how values are written there and read back;
//! * knows each [`ProtocolVersion`], its [`Era`] and what it allows.
//!
//! What it does not do: IO, async, framing, sessions, dispatch. It depends on serde,
//! serde_json and thiserror only.
//!
//! `Display` texts of errors are for humans and are not a stable API; match on codes and kinds.

#![warn(missing_docs)]

#[doc(hidden)]
pub mod __private {
    pub use crate::private::{MapKey, note_unknown_member, take_unknown_members};
}

mod macros;
mod private;
mod strict;

pub mod capabilities;
pub mod common;
pub mod completion;
pub mod content;
pub mod discover;
pub mod elicitation;
pub mod envelope;
pub mod error;
pub mod extensions;
pub mod headers;
pub mod id;
pub mod json;
pub mod legacy;
pub mod logging;
pub mod meta;
pub mod method;
pub mod mrtr;
pub mod notifications;
pub mod pagination;
pub mod prompts;
pub mod resources;
pub mod result;
pub mod roots;
pub mod sampling;
mod scan;
pub mod subscriptions;
pub mod tasks;
pub mod time;
pub mod tools;
pub mod trace;
pub mod unions;
pub mod version;

pub use capabilities::*;
pub use common::*;
pub use completion::*;
pub use content::*;
pub use discover::*;
pub use elicitation::*;
pub use envelope::{
    DecodeError, DecodeErrorKind, DecodeOptions, Incoming, Message, Notification, RawJson, Request, Response,
    ResponseId, decode, decode_message,
};
pub use error::*;
pub use id::{IdError, ProgressToken, RequestId};
pub use json::{JsonArray, JsonObject, JsonValue, MetaObject};
pub use legacy::*;
pub use logging::*;
pub use meta::{NotificationMeta, RequestMeta, ResultMeta};
pub use method::{
    InlineRequest, JsonRpcErrorResponse, JsonRpcNotification, JsonRpcRequest, JsonRpcResponse,
    NotificationMethod, RequestMethod,
};
pub use mrtr::*;
pub use notifications::*;
pub use pagination::*;
pub use prompts::*;
pub use resources::*;
pub use result::{CacheHint, CacheScope, CacheableResult, EmptyResult, ResultType};
pub use roots::*;
pub use sampling::*;
pub use subscriptions::*;
pub use tasks::*;
pub use tools::*;
pub use unions::{ClientNotification, ClientRequest, ServerNotification, ServerRequest};
pub use version::{Era, ProtocolVersion};

/// The zero-sized method types, one per request and notification method, each tying its
/// wire name to its params and result types.
pub mod methods {
    pub use crate::completion::Complete;
    pub use crate::discover::Discover;
    pub use crate::elicitation::{Elicit, ElicitationComplete};
    pub use crate::legacy::{Initialize, Initialized, Ping, SetLevel, Subscribe, Unsubscribe};
    pub use crate::logging::LoggingMessage;
    pub use crate::notifications::{Cancelled, Progress};
    pub use crate::prompts::{GetPrompt, ListPrompts, PromptListChanged};
    pub use crate::resources::{
        ListResourceTemplates, ListResources, ReadResource, ResourceListChanged, ResourceUpdated,
    };
    pub use crate::roots::{ListRoots, RootsListChanged};
    pub use crate::sampling::CreateMessage;
    pub use crate::subscriptions::{SubscriptionsAcknowledged, SubscriptionsListen};
    pub use crate::tasks::{CancelTask, GetTask, GetTaskPayload, ListTasks, TaskStatusChanged};
    pub use crate::tools::{CallTool, ListTools, ToolListChanged};
}
