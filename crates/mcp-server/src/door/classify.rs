//! Classification: a decoded request read once into what every later step needs — its era,
//! its method, its `_meta`, and for the methods the server knows, the typed params decoded
//! straight from the raw text. The router, the HTTP header checks and the scope check all
//! read this one value; nothing probes the body again on the way to a handler.

use std::borrow::Cow;

use mcp_types::extensions::skills::{self, GetSkillParams, ReadDirectoryParams};
use mcp_types::extensions::tasks::{self, UpdateTaskParams};
use mcp_types::methods::{
    CallTool, Complete, Discover, GetPrompt, Initialize, ListPrompts, ListResourceTemplates, ListResources,
    ListTools, Ping, ReadResource, SetLevel, Subscribe, SubscriptionsListen, Unsubscribe,
};
use mcp_types::{
    CallToolRequestParams, CompleteRequestParams, ErrorObject, GetPromptRequestParams,
    InitializeRequestParams, JsonObject, JsonValue, PaginatedRequestParams, RawJson,
    ReadResourceRequestParams, Request, RequestId, RequestMeta, RequestMethod, RequestParams,
    SetLevelRequestParams, SubscribeRequestParams, SubscriptionsListenRequestParams, TaskIdParams,
    UnsubscribeRequestParams,
};
use serde::Deserialize;
use serde::de::DeserializeOwned;

/// The typed params of a method the server knows, decoded once.
#[derive(Debug)]
// Typed params are moved, never copied by value in a loop: boxing them would add an
// allocation to every request to save a memcpy of a kilobyte or so.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Params {
    Discover,
    Ping,
    Initialize(InitializeRequestParams),
    SetLevel(SetLevelRequestParams),
    Subscribe(SubscribeRequestParams),
    Unsubscribe(UnsubscribeRequestParams),
    ListTools(PaginatedRequestParams),
    CallTool(CallToolRequestParams),
    ListResources(PaginatedRequestParams),
    ListTemplates(PaginatedRequestParams),
    ReadResource(ReadResourceRequestParams),
    ListPrompts(PaginatedRequestParams),
    GetPrompt(GetPromptRequestParams),
    Complete(CompleteRequestParams),
    Listen(SubscriptionsListenRequestParams),
    GetTask(TaskIdParams),
    UpdateTask(UpdateTaskParams),
    CancelTask(TaskIdParams),
    ListSkills(PaginatedRequestParams),
    GetSkill(GetSkillParams),
    ReadDirectory(ReadDirectoryParams),
    /// A method the server does not know: only its `_meta` was read.
    Other,
    /// A known method whose params do not decode: the `-32602` to answer once the checks
    /// before it (DECISIONS.md order: `_meta`, headers, version, method) have passed. The raw
    /// text stays for the HTTP header checks, which compare what the body says even then.
    Invalid(ErrorObject, Option<RawJson>),
    /// Not even `_meta` could be read (or the params are no object): no era can be told, and
    /// the router refuses it first with this `-32602`. Transports treat it as a legacy
    /// request until then, so their own checks keep their order.
    Unreadable(ErrorObject, Option<RawJson>),
}

/// The members of each typed params type that carry the request's `_meta`.
trait TakeMeta {
    fn take_meta(&mut self) -> Option<RequestMeta>;
}

macro_rules! take_meta {
    ($($ty:ty),*) => {$(
        impl TakeMeta for $ty {
            fn take_meta(&mut self) -> Option<RequestMeta> {
                self.meta.take()
            }
        }
    )*};
}

take_meta!(
    RequestParams,
    InitializeRequestParams,
    SetLevelRequestParams,
    SubscribeRequestParams,
    UnsubscribeRequestParams,
    PaginatedRequestParams,
    CallToolRequestParams,
    ReadResourceRequestParams,
    GetPromptRequestParams,
    CompleteRequestParams,
    SubscriptionsListenRequestParams,
    TaskIdParams,
    UpdateTaskParams,
    GetSkillParams,
    ReadDirectoryParams
);

/// Only `_meta` of the params: what is read of an unknown method, or of a known one whose
/// params did not decode (so its era is still known and the checks keep their order).
#[derive(Deserialize)]
struct MetaProbe {
    #[serde(rename = "_meta")]
    meta: Option<RequestMeta>,
}

/// A request classified once: era, method, `_meta`, typed params.
///
/// Its parts are boxed: a request moves by value from the transport through the front door
/// into the router (a dozen moves between its decoding and its handler), and unboxed it is
/// 1.7 KB — the typed params and the `_meta` with the client's capabilities inline —
/// copied each time (measured: 21 KB of copies a request, against one allocation).
#[derive(Debug)]
pub struct Classified(Box<Parts>);

/// What a [`Classified`] holds. Public only as the target of its `Deref` (its module is
/// private and its fields are the crate's own): nothing outside names or reads it.
#[derive(Debug)]
pub struct Parts {
    pub(crate) id: RequestId,
    pub(crate) method: String,
    /// The request's `_meta` (empty when absent), taken out of the typed params.
    pub(crate) meta: RequestMeta,
    /// Whether the params had a `_meta` member at all.
    pub(crate) sent_meta: bool,
    pub(crate) params: Params,
    /// When the transport took it up, if it read the clock then ([`Classified::received_at`]).
    pub(crate) received: Option<std::time::Instant>,
}

fn typed<T: DeserializeOwned + TakeMeta>(
    request: &Request,
    wrap: impl FnOnce(T) -> Params,
) -> Result<(Params, Option<RequestMeta>), ErrorObject> {
    match request.params_as::<T>() {
        Ok(mut params) => {
            let meta = params.take_meta();
            Ok((wrap(params), meta))
        }
        // The typed decode failed: read `_meta` alone, so the era (and the order of the
        // checks before the params') stays what the body says. Only this failure path
        // parses twice.
        Err(error) => {
            let probe: MetaProbe = request.params_as()?;
            Ok((Params::Invalid(error, request.params.clone()), probe.meta))
        }
    }
}

fn meta_only(request: &Request, params: Params) -> Result<(Params, Option<RequestMeta>), ErrorObject> {
    let probe: MetaProbe = request.params_as()?;
    Ok((params, probe.meta))
}

impl Classified {
    /// Reads `request` once. Total: what cannot be read is kept as the error to answer.
    pub fn classify(request: Request) -> Classified {
        let decoded = match request.method.as_str() {
            Discover::METHOD => typed::<RequestParams>(&request, |_| Params::Discover),
            Ping::METHOD => typed::<RequestParams>(&request, |_| Params::Ping),
            Initialize::METHOD => typed(&request, Params::Initialize),
            SetLevel::METHOD => typed(&request, Params::SetLevel),
            Subscribe::METHOD => typed(&request, Params::Subscribe),
            Unsubscribe::METHOD => typed(&request, Params::Unsubscribe),
            ListTools::METHOD => typed(&request, Params::ListTools),
            CallTool::METHOD => typed(&request, Params::CallTool),
            ListResources::METHOD => typed(&request, Params::ListResources),
            ListResourceTemplates::METHOD => typed(&request, Params::ListTemplates),
            ReadResource::METHOD => typed(&request, Params::ReadResource),
            ListPrompts::METHOD => typed(&request, Params::ListPrompts),
            GetPrompt::METHOD => typed(&request, Params::GetPrompt),
            Complete::METHOD => typed(&request, Params::Complete),
            SubscriptionsListen::METHOD => typed(&request, Params::Listen),
            tasks::GetTask::METHOD => typed(&request, Params::GetTask),
            tasks::UpdateTask::METHOD => typed(&request, Params::UpdateTask),
            tasks::CancelTask::METHOD => typed(&request, Params::CancelTask),
            skills::ListSkills::METHOD => typed(&request, Params::ListSkills),
            skills::GetSkill::METHOD => typed(&request, Params::GetSkill),
            skills::ReadDirectory::METHOD => typed(&request, Params::ReadDirectory),
            _ => meta_only(&request, Params::Other),
        };
        let (params, meta) = match decoded {
            Ok(decoded) => decoded,
            Err(error) => (Params::Unreadable(error, request.params), None),
        };
        let sent_meta = meta.is_some();
        Classified(Box::new(Parts {
            id: request.id,
            method: request.method,
            meta: meta.unwrap_or_default(),
            sent_meta,
            params,
            received: None,
        }))
    }

    /// Tells the server when the transport took the request up, by a clock reading the
    /// transport made anyway (to time its own refusals): an observed request's duration then
    /// runs from there, and the server does not read the clock again to start it.
    pub fn received_at(&mut self, at: std::time::Instant) {
        self.0.received = Some(at);
    }

    /// Its parts, by value (the router takes them apart once).
    pub(crate) fn into_parts(self) -> Parts {
        *self.0
    }

    /// The request id.
    pub fn id(&self) -> &RequestId {
        &self.id
    }

    /// The method name, as sent.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The request's `_meta` (empty when it sent none).
    pub fn meta(&self) -> &RequestMeta {
        &self.meta
    }

    /// Whether the params carried a `_meta` member at all (modern or not).
    pub fn has_meta(&self) -> bool {
        self.sent_meta
    }

    /// The `-32602` for params whose `_meta` (or whole) could not be read, if so: such a
    /// request has no era, and the router refuses it before anything else.
    pub fn unreadable(&self) -> Option<&ErrorObject> {
        match &self.params {
            Params::Unreadable(error, _) => Some(error),
            _ => None,
        }
    }

    /// True when `_meta` carries the members only 2026-07-28 defines: the request is served
    /// statelessly as a modern one, whatever session it arrived in.
    pub fn is_modern(&self) -> bool {
        self.meta.is_modern()
    }

    /// True for `initialize`, which opens a legacy session.
    pub fn is_initialize(&self) -> bool {
        self.method == Initialize::METHOD
    }

    /// True for `subscriptions/listen`, a long-lived stream.
    pub fn is_listen(&self) -> bool {
        self.method == SubscriptionsListen::METHOD
    }

    /// What the body names: the `name` of `tools/call` and `prompts/get`, the `uri` of
    /// `resources/read`, the `taskId` of `tasks/get`, `tasks/update` and `tasks/cancel` (what
    /// `Mcp-Name` mirrors), and the `arguments` of `tools/call` (what
    /// `Mcp-Param-*` mirror). `None` for other methods. Read from the typed params; only for
    /// params that did not decode is the raw text read loosely, as the body says it.
    pub fn named(&self) -> Option<Named<'_>> {
        match &self.params {
            Params::CallTool(p) => Some(Named {
                name: Some(Cow::Borrowed(p.name.as_str())),
                arguments: p.arguments.as_ref().map(Cow::Borrowed),
            }),
            Params::GetPrompt(p) => {
                Some(Named { name: Some(Cow::Borrowed(p.name.as_str())), arguments: None })
            }
            Params::ReadResource(p) => {
                Some(Named { name: Some(Cow::Borrowed(p.uri.as_str())), arguments: None })
            }
            Params::GetTask(p) | Params::CancelTask(p) => {
                Some(Named { name: Some(Cow::Borrowed(p.task_id.as_str())), arguments: None })
            }
            Params::UpdateTask(p) => {
                Some(Named { name: Some(Cow::Borrowed(p.task_id.as_str())), arguments: None })
            }
            Params::Invalid(_, raw) | Params::Unreadable(_, raw) => {
                let field = match self.method.as_str() {
                    CallTool::METHOD | GetPrompt::METHOD => "name",
                    ReadResource::METHOD => "uri",
                    tasks::GetTask::METHOD | tasks::UpdateTask::METHOD | tasks::CancelTask::METHOD => {
                        "taskId"
                    }
                    _ => return None,
                };
                let mut loose: JsonObject =
                    raw.as_ref().and_then(|p| serde_json::from_str(p.get()).ok()).unwrap_or_default();
                let name = match loose.remove(field) {
                    Some(JsonValue::String(s)) => Some(Cow::Owned(s)),
                    _ => None,
                };
                let arguments = match loose.remove("arguments") {
                    Some(JsonValue::Object(o)) if self.method == CallTool::METHOD => Some(Cow::Owned(o)),
                    _ => None,
                };
                Some(Named { name, arguments })
            }
            _ => None,
        }
    }
}

/// What a request's body names, for checks outside the router (HTTP headers, scopes).
#[derive(Debug)]
pub struct Named<'a> {
    /// The `name` (`tools/call`, `prompts/get`), `uri` (`resources/read`) or `taskId`
    /// (`tasks/get`, `tasks/update`, `tasks/cancel`), when it is a string.
    pub name: Option<Cow<'a, str>>,
    /// The `arguments` of `tools/call`, when an object.
    pub arguments: Option<Cow<'a, JsonObject>>,
}

impl std::ops::Deref for Classified {
    type Target = Parts;

    fn deref(&self) -> &Parts {
        &self.0
    }
}
