//! Argument completion (`completion/complete`) for prompt arguments and resource-template
//! variables.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::Arc;

use mcp_types::{Completion, CompletionReference, ErrorObject};

use crate::handler::BoxFuture;

/// What is being completed.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CompletionRequest {
    /// The argument (or template variable) name.
    pub argument: String,
    /// What the user typed so far.
    pub value: String,
    /// Arguments already resolved (2025-06-18 and later).
    pub context: BTreeMap<String, String>,
}

pub(crate) type ErasedCompletion = Arc<dyn Fn(CompletionRequest) -> BoxFuture<Vec<String>> + Send + Sync>;

pub(crate) type ErasedFallback = Arc<
    dyn Fn(CompletionReference, CompletionRequest) -> BoxFuture<Result<Completion, ErrorObject>>
        + Send
        + Sync,
>;

/// Completion handlers, keyed by prompt name or URI template and argument name.
#[derive(Clone, Default)]
pub struct Completions {
    pub(crate) prompts: HashMap<(String, String), ErasedCompletion>,
    pub(crate) templates: HashMap<(String, String), ErasedCompletion>,
    pub(crate) fallback: Option<ErasedFallback>,
}

impl std::fmt::Debug for Completions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Completions")
            .field("prompts", &self.prompts.keys().collect::<Vec<_>>())
            .field("templates", &self.templates.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Completions {
    /// No completion handlers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether no handler is set (then the server does not declare `completions`).
    pub fn is_empty(&self) -> bool {
        self.prompts.is_empty() && self.templates.is_empty() && self.fallback.is_none()
    }

    /// Completes argument `argument` of prompt `prompt`.
    pub fn prompt_argument<F, Fut>(mut self, prompt: &str, argument: &str, handler: F) -> Self
    where
        F: Fn(CompletionRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<String>> + Send + 'static,
    {
        self.prompts.insert((prompt.into(), argument.into()), Arc::new(move |r| Box::pin(handler(r))));
        self
    }

    /// Completes variable `variable` of the resource template `uri_template`.
    pub fn template_variable<F, Fut>(mut self, uri_template: &str, variable: &str, handler: F) -> Self
    where
        F: Fn(CompletionRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Vec<String>> + Send + 'static,
    {
        self.templates
            .insert((uri_template.into(), variable.into()), Arc::new(move |r| Box::pin(handler(r))));
        self
    }

    /// Completes whatever no handler above is registered for — prompts and templates known only
    /// at run time (a gateway passes the request to the server that owns them). The
    /// [`Completion`] is answered as given (values, `total`, `hasMore`); an error fails the
    /// request with that JSON-RPC error.
    pub fn fallback<F, Fut>(mut self, handler: F) -> Self
    where
        F: Fn(CompletionReference, CompletionRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Completion, ErrorObject>> + Send + 'static,
    {
        self.fallback = Some(Arc::new(move |reference, request| Box::pin(handler(reference, request))));
        self
    }

    /// Completes from a fixed list: the values starting with what was typed.
    pub fn from_list(
        values: &[&str],
    ) -> impl Fn(CompletionRequest) -> BoxFuture<Vec<String>> + Send + Sync + 'static {
        let values: Vec<String> = values.iter().map(|v| (*v).to_owned()).collect();
        move |request: CompletionRequest| {
            let matches = values.iter().filter(|v| v.starts_with(&request.value)).cloned().collect();
            Box::pin(async move { matches })
        }
    }
}
