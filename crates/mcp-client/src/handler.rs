//! What the client answers when a server asks it for something: elicitation, sampling, roots.
//! The same handlers serve both eras — MRTR `input_required` results (2026-07-28) and legacy
//! server→client requests — so application code is written once.

use std::sync::Arc;

use mcp_types::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ElicitationCapability, ErrorObject, JsonObject, ListRootsResult, RootsCapability, SamplingCapability,
};

use crate::transport::BoxFuture;

type Handler<P, R> = Arc<dyn Fn(P) -> BoxFuture<'static, Result<R, ErrorObject>> + Send + Sync>;

/// An opaque value a request carries ([`RequestOptions::tag`](crate::RequestOptions::tag)) to
/// the handlers of the server's requests about it.
pub type Tag = Arc<dyn std::any::Any + Send + Sync>;

tokio::task_local! {
    pub(crate) static REQUEST_TAG: Option<Tag>;
}

/// In a handler: the tag of the client's request this server request is about — known when
/// the server sent it on that request's own response stream (legacy Streamable HTTP), and
/// that request was given a tag. `None` otherwise (stdio, HTTP+SSE, a session's GET stream,
/// MRTR, where the handler runs in the call's own task and task-locals of the caller work).
pub fn request_tag() -> Option<Tag> {
    REQUEST_TAG.try_with(Clone::clone).ok().flatten()
}

/// The application's answers to server requests. Built with [`Handlers::default`] and the
/// `on_*` methods; the client declares exactly the capabilities whose handler is set.
#[derive(Clone, Default)]
pub struct Handlers {
    elicit: Option<Handler<ElicitRequestParams, ElicitResult>>,
    url_elicitation: bool,
    sample: Option<Handler<CreateMessageRequestParams, CreateMessageResult>>,
    roots: Option<Handler<(), ListRootsResult>>,
    roots_list_changed: bool,
}

impl std::fmt::Debug for Handlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handlers")
            .field("elicit", &self.elicit.is_some())
            .field("url_elicitation", &self.url_elicitation)
            .field("sample", &self.sample.is_some())
            .field("roots", &self.roots.is_some())
            .finish()
    }
}

impl Handlers {
    /// Answers `elicitation/create` (form mode; also URL mode when `url_mode` is true).
    pub fn on_elicit<F, Fut>(mut self, url_mode: bool, handler: F) -> Self
    where
        F: Fn(ElicitRequestParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ElicitResult, ErrorObject>> + Send + 'static,
    {
        self.elicit = Some(Arc::new(move |p| Box::pin(handler(p))));
        self.url_elicitation = url_mode;
        self
    }

    /// Answers `sampling/createMessage`.
    pub fn on_sample<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(CreateMessageRequestParams) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CreateMessageResult, ErrorObject>> + Send + 'static,
    {
        self.sample = Some(Arc::new(move |p| Box::pin(handler(p))));
        self
    }

    /// Answers `roots/list`; `list_changed` declares that the client will send
    /// `notifications/roots/list_changed` (legacy sessions).
    pub fn on_roots<F, Fut>(mut self, list_changed: bool, handler: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ListRootsResult, ErrorObject>> + Send + 'static,
    {
        self.roots = Some(Arc::new(move |()| Box::pin(handler())));
        self.roots_list_changed = list_changed;
        self
    }

    /// The capabilities these handlers give the client.
    pub fn capabilities(&self) -> ClientCapabilities {
        let mut caps = ClientCapabilities::default();
        if self.elicit.is_some() {
            let mut e = ElicitationCapability { form: Some(JsonObject::new()), ..Default::default() };
            if self.url_elicitation {
                e.url = Some(JsonObject::new());
            }
            caps.elicitation = Some(e);
        }
        if self.sample.is_some() {
            caps.sampling = Some(SamplingCapability::default());
        }
        if self.roots.is_some() {
            let mut r = RootsCapability::default();
            if self.roots_list_changed {
                r.list_changed = Some(true);
            }
            caps.roots = Some(r);
        }
        caps
    }

    pub(crate) async fn elicit(&self, params: ElicitRequestParams) -> Result<ElicitResult, ErrorObject> {
        match &self.elicit {
            Some(h) if self.url_elicitation || !matches!(params, ElicitRequestParams::Url(_)) => {
                h(params).await
            }
            _ => Err(ErrorObject::invalid_params("this client does not support this elicitation mode")),
        }
    }

    pub(crate) async fn sample(
        &self,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, ErrorObject> {
        match &self.sample {
            Some(h) => h(params).await,
            None => Err(ErrorObject::method_not_found("sampling/createMessage")),
        }
    }

    pub(crate) async fn roots(&self) -> Result<ListRootsResult, ErrorObject> {
        match &self.roots {
            Some(h) => h(()).await,
            None => Err(ErrorObject::method_not_found("roots/list")),
        }
    }
}
