//! Resources: static resources by URI, and templates (RFC 6570) whose matched variables are
//! handed to the handler.

use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine as _;
use mcp_types::{
    BlobResourceContents, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
    TextResourceContents,
};

use crate::call::Call;
use crate::extract::{FromCall, Rejection};
use crate::handler::{BoxFuture, Handler};
use crate::tools::RegistrationError;
use crate::uri_template::UriTemplate;

pub(crate) type ErasedRead =
    Arc<dyn Fn(Call) -> BoxFuture<Result<Vec<ResourceContents>, ReadFailure>> + Send + Sync>;

#[derive(Debug, Clone)]
pub(crate) enum ReadFailure {
    NotFound,
    Rejected(Rejection),
    Failed(String),
}

#[derive(Clone)]
pub(crate) struct StaticEntry {
    pub(crate) def: Resource,
    pub(crate) run: ErasedRead,
}

#[derive(Clone)]
pub(crate) struct TemplateEntry {
    pub(crate) def: ResourceTemplate,
    pub(crate) template: UriTemplate,
    pub(crate) run: ErasedRead,
}

/// The resource table: static resources in registration order, then templates in order
/// (the first template that matches a URI serves it).
#[derive(Clone, Default)]
pub struct Resources {
    pub(crate) statics: Vec<StaticEntry>,
    pub(crate) index: crate::hash::NameMap<usize>,
    pub(crate) templates: Vec<TemplateEntry>,
    pub(crate) errors: Vec<RegistrationError>,
    /// How many apps' resources it holds (MCP Apps).
    apps: usize,
}

impl std::fmt::Debug for Resources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resources")
            .field("statics", &self.statics.iter().map(|e| &e.def.uri).collect::<Vec<_>>())
            .field("templates", &self.templates.iter().map(|e| &e.def.uri_template).collect::<Vec<_>>())
            .finish()
    }
}

/// The URI being read.
#[derive(Debug, Clone)]
pub struct Uri(pub String);

impl FromCall for Uri {
    fn from_call(call: &Call) -> Result<Self, Rejection> {
        Ok(Uri(call.uri.clone().unwrap_or_default()))
    }
}

/// The variables a resource template matched.
#[derive(Debug, Clone)]
pub struct UriVars(pub BTreeMap<String, String>);

impl UriVars {
    /// One variable's value.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }
}

impl FromCall for UriVars {
    fn from_call(call: &Call) -> Result<Self, Rejection> {
        Ok(UriVars(call.uri_variables.clone()))
    }
}

/// Binary resource content, sent base64-encoded as a `blob`.
#[derive(Debug, Clone)]
pub struct Blob(pub Vec<u8>);

/// A read failure.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ResourceError {
    /// No resource at this URI (answered as resource-not-found, with `data.uri`).
    NotFound,
    /// Reading failed (`-32603`).
    Failed(String),
}

impl<E: std::error::Error> From<E> for ResourceError {
    fn from(e: E) -> Self {
        ResourceError::Failed(e.to_string())
    }
}

/// Converts a resource handler's return value into contents. Plain text and bytes take the
/// URI being read and the MIME type the resource declared.
pub trait IntoContents: Send + 'static {
    /// The contents, or the failure.
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ResourceError>;
}

impl IntoContents for String {
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        let mut text = TextResourceContents::new(uri, self);
        text.mime_type = mime_type.map(str::to_owned);
        Ok(vec![ResourceContents::Text(text)])
    }
}

impl IntoContents for &'static str {
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        self.to_owned().into_contents(uri, mime_type)
    }
}

impl IntoContents for Blob {
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        let data = base64::engine::general_purpose::STANDARD.encode(self.0);
        let mut blob = BlobResourceContents::new(uri, data);
        blob.mime_type = mime_type.map(str::to_owned);
        Ok(vec![ResourceContents::Blob(blob)])
    }
}

impl IntoContents for ResourceContents {
    fn into_contents(self, _: &str, _: Option<&str>) -> Result<Vec<ResourceContents>, ResourceError> {
        Ok(vec![self])
    }
}

impl IntoContents for Vec<ResourceContents> {
    fn into_contents(self, _: &str, _: Option<&str>) -> Result<Vec<ResourceContents>, ResourceError> {
        Ok(self)
    }
}

impl IntoContents for ReadResourceResult {
    fn into_contents(self, _: &str, _: Option<&str>) -> Result<Vec<ResourceContents>, ResourceError> {
        Ok(self.contents)
    }
}

impl<T: IntoContents, E: Into<ResourceError> + Send + 'static> IntoContents for Result<T, E> {
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&str>,
    ) -> Result<Vec<ResourceContents>, ResourceError> {
        self.map_err(Into::into).and_then(|t| t.into_contents(uri, mime_type))
    }
}

fn erase_dyn<F, Fut>(handler: F) -> ErasedRead
where
    F: Fn(Call) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Vec<ResourceContents>, Rejection>> + Send + 'static,
{
    Arc::new(move |call: Call| {
        let fut = handler(call);
        Box::pin(async move { fut.await.map_err(ReadFailure::Rejected) })
    })
}

fn erase<H, A, R>(handler: H, mime_type: Option<String>) -> ErasedRead
where
    H: Handler<A, R>,
    R: IntoContents,
{
    Arc::new(move |call: Call| {
        let uri = call.uri.clone().unwrap_or_default();
        let mime = mime_type.clone();
        let fut = handler.call(call);
        Box::pin(async move {
            match fut.await {
                Ok(r) => r.into_contents(&uri, mime.as_deref()).map_err(|e| match e {
                    ResourceError::NotFound => ReadFailure::NotFound,
                    ResourceError::Failed(m) => ReadFailure::Failed(m),
                }),
                Err(rejection) => Err(ReadFailure::Rejected(rejection)),
            }
        })
    })
}

impl Resources {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// A static text resource.
    pub fn text(self, def: Resource, text: impl Into<String>) -> Self {
        let text: String = text.into();
        self.add(def, move || {
            let text = text.clone();
            async move { text }
        })
    }

    /// A static binary resource.
    pub fn blob(self, def: Resource, bytes: Vec<u8>) -> Self {
        self.add(def, move || {
            let bytes = bytes.clone();
            async move { Blob(bytes) }
        })
    }

    /// A resource served by a handler (extractors: [`Uri`], `State`, `Peer`, ...).
    pub fn add<H, A, R>(self, def: Resource, handler: H) -> Self
    where
        H: Handler<A, R>,
        R: IntoContents,
    {
        let run = erase(handler, def.mime_type.clone());
        self.insert_static(def, run)
    }

    /// A resource template; the handler reads the matched variables with [`UriVars`].
    pub fn template<H, A, R>(self, def: ResourceTemplate, handler: H) -> Self
    where
        H: Handler<A, R>,
        R: IntoContents,
    {
        let run = erase(handler, def.mime_type.clone());
        self.insert_template(def, run)
    }

    /// An app's HTML (MCP Apps, `io.modelcontextprotocol/ui`): a `ui://` resource of type
    /// `text/html;profile=mcp-app` whose metadata (CSP, permissions, border) is on its listing
    /// and on its contents. A tool links to it with [`Tool::with_ui`](mcp_types::Tool::with_ui);
    /// a server with an app declares the extension. A URI that is not `ui://` is refused when the
    /// server is built.
    pub fn app(
        mut self,
        mut def: Resource,
        html: impl Into<String>,
        ui: mcp_types::extensions::ui::ResourceUi,
    ) -> Self {
        use mcp_types::extensions::ui::{META_KEY, MIME_TYPE, SCHEME};
        if !def.uri.starts_with(SCHEME) {
            self.errors.push(RegistrationError::InvalidTemplate {
                template: def.uri,
                reason: format!("an app's resource must be a {SCHEME} URI"),
            });
            return self;
        }
        let meta: mcp_types::JsonObject =
            [(META_KEY.to_owned(), serde_json::to_value(&ui).unwrap_or_default())].into_iter().collect();
        def.mime_type = Some(MIME_TYPE.to_owned());
        def.meta.get_or_insert_with(Default::default).extend(meta.clone());
        let mut contents = mcp_types::TextResourceContents::new(&def.uri, html);
        contents.mime_type = Some(MIME_TYPE.to_owned());
        contents.meta = Some(meta);
        let contents = ResourceContents::Text(contents);
        self.apps += 1;
        self.add_dyn(def, move |_call| {
            let contents = contents.clone();
            async move { Ok(vec![contents]) }
        })
    }

    /// True when an app's resource is served ([`Resources::app`]).
    pub(crate) fn has_apps(&self) -> bool {
        self.apps > 0
    }

    /// A resource defined at run time (a gateway's, say): the closure receives the whole
    /// [`Call`] (the URI through the [`Uri`] extractor) and returns the contents;
    /// [`Rejection::Protocol`] fails the read with that error.
    pub fn add_dyn<F, Fut>(self, def: Resource, handler: F) -> Self
    where
        F: Fn(Call) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<Vec<ResourceContents>, Rejection>> + Send + 'static,
    {
        self.insert_static(def, erase_dyn(handler))
    }

    /// A resource template defined at run time; see [`Resources::add_dyn`].
    pub fn template_dyn<F, Fut>(self, def: ResourceTemplate, handler: F) -> Self
    where
        F: Fn(Call) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<Vec<ResourceContents>, Rejection>> + Send + 'static,
    {
        self.insert_template(def, erase_dyn(handler))
    }

    fn insert_static(mut self, def: Resource, run: ErasedRead) -> Self {
        if self.index.contains_key(&def.uri) {
            self.errors.push(RegistrationError::Duplicate { kind: "resource", name: def.uri });
            return self;
        }
        self.index.insert(def.uri.clone(), self.statics.len());
        self.statics.push(StaticEntry { def, run });
        self
    }

    fn insert_template(mut self, def: ResourceTemplate, run: ErasedRead) -> Self {
        let template = match UriTemplate::parse(&def.uri_template) {
            Ok(t) => t,
            Err(e) => {
                self.errors.push(RegistrationError::InvalidTemplate {
                    template: def.uri_template,
                    reason: e.to_string(),
                });
                return self;
            }
        };
        if self.templates.iter().any(|t| t.def.uri_template == def.uri_template) {
            self.errors
                .push(RegistrationError::Duplicate { kind: "resource template", name: def.uri_template });
            return self;
        }
        self.templates.push(TemplateEntry { def, template, run });
        self
    }

    /// Takes the registration problems found so far; see
    /// [`Tools::take_errors`](crate::Tools::take_errors).
    pub fn take_errors(&mut self) -> Vec<RegistrationError> {
        std::mem::take(&mut self.errors)
    }

    /// Finds what serves `uri`: a static resource, or the first matching template with the
    /// variables it matched.
    pub(crate) fn resolve(&self, uri: &str) -> Option<(ErasedRead, BTreeMap<String, String>)> {
        if let Some(&i) = self.index.get(uri) {
            return Some((self.statics[i].run.clone(), BTreeMap::new()));
        }
        self.templates.iter().find_map(|t| t.template.matches(uri).map(|vars| (t.run.clone(), vars)))
    }

    /// True when there is nothing to list or read.
    pub fn is_empty(&self) -> bool {
        self.statics.is_empty() && self.templates.is_empty()
    }
}
