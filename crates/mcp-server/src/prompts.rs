//! Prompts: templates of messages, with declared arguments.
//!
//! The arguments are declared once — by the handler's `Args<T>` type (each property a string
//! argument, required unless optional) or explicitly in the [`Prompt`] definition — and a
//! `prompts/get` missing a required one is refused with `-32602` before the handler runs.

use std::sync::Arc;

use mcp_types::{GetPromptResult, JsonObject, JsonValue, Prompt, PromptArgument, PromptMessage};

use crate::call::Call;
use crate::extract::Rejection;
use crate::handler::{BoxFuture, Handler};
use crate::tools::{RegistrationError, check_name};

pub(crate) type ErasedPrompt =
    Arc<dyn Fn(Call) -> BoxFuture<Result<GetPromptResult, PromptFailure>> + Send + Sync>;

/// Why a prompt could not be produced.
#[derive(Debug, Clone)]
pub(crate) enum PromptFailure {
    Rejected(Rejection),
    Failed(String),
}

pub(crate) struct PromptEntry {
    pub(crate) def: Prompt,
    pub(crate) run: ErasedPrompt,
}

/// The prompt table, in registration order.
#[derive(Clone, Default)]
pub struct Prompts {
    /// Shared: `prompts/get` holds its entry across the handler's run without cloning it.
    pub(crate) entries: Vec<Arc<PromptEntry>>,
    pub(crate) index: crate::hash::NameMap<usize>,
    pub(crate) errors: Vec<RegistrationError>,
}

impl std::fmt::Debug for Prompts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.entries.iter().map(|e| &e.def.name)).finish()
    }
}

/// A prompt handler failed.
#[derive(Debug, Clone)]
pub struct PromptError(pub String);

impl<E: std::error::Error> From<E> for PromptError {
    fn from(e: E) -> Self {
        PromptError(e.to_string())
    }
}

/// Converts a prompt handler's return value into a `GetPromptResult`.
pub trait IntoPromptResult: Send + 'static {
    /// The result, or the failure to report (`-32603`).
    fn into_prompt_result(self) -> Result<GetPromptResult, PromptError>;
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_result(self) -> Result<GetPromptResult, PromptError> {
        Ok(self)
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<GetPromptResult, PromptError> {
        Ok(GetPromptResult::new(self))
    }
}

impl IntoPromptResult for PromptMessage {
    fn into_prompt_result(self) -> Result<GetPromptResult, PromptError> {
        Ok(GetPromptResult::new(vec![self]))
    }
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> Result<GetPromptResult, PromptError> {
        Ok(GetPromptResult::new(vec![PromptMessage::user(self)]))
    }
}

impl IntoPromptResult for &'static str {
    fn into_prompt_result(self) -> Result<GetPromptResult, PromptError> {
        self.to_owned().into_prompt_result()
    }
}

impl<T: IntoPromptResult, E: Into<PromptError> + Send + 'static> IntoPromptResult for Result<T, E> {
    fn into_prompt_result(self) -> Result<GetPromptResult, PromptError> {
        self.map_err(Into::into).and_then(IntoPromptResult::into_prompt_result)
    }
}

impl Prompts {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// The number of prompts.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Adds a prompt; its arguments come from the handler's `Args<T>` type.
    pub fn add<H, A, R>(self, name: &str, description: &str, handler: H) -> Self
    where
        H: Handler<A, R>,
        R: IntoPromptResult,
    {
        let mut def = Prompt::new(name);
        def.description = Some(description.to_owned());
        self.add_prompt(def, handler)
    }

    /// Adds a prompt with a full definition. Arguments declared in `def` are kept; otherwise
    /// they are derived from the handler's `Args<T>` type.
    pub fn add_prompt<H, A, R>(self, mut def: Prompt, handler: H) -> Self
    where
        H: Handler<A, R>,
        R: IntoPromptResult,
    {
        if def.arguments.is_none() {
            def.arguments = H::input_schema().map(|s| arguments_from_schema(&s)).filter(|a| !a.is_empty());
        }
        let run: ErasedPrompt = Arc::new(move |call: Call| {
            let fut = handler.call(call);
            Box::pin(async move {
                match fut.await {
                    Ok(r) => r.into_prompt_result().map_err(|e| PromptFailure::Failed(e.0)),
                    Err(rejection) => Err(PromptFailure::Rejected(rejection)),
                }
            })
        });
        self.insert(def, run)
    }

    /// Adds a prompt defined at run time (a gateway's, say): the definition is used as given and
    /// the closure receives the whole [`Call`] (the arguments, as strings, via
    /// [`Call::arguments`]). [`Rejection::Protocol`] fails the request with that error.
    pub fn add_dyn<F, Fut>(self, def: Prompt, handler: F) -> Self
    where
        F: Fn(Call) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<GetPromptResult, Rejection>> + Send + 'static,
    {
        let run: ErasedPrompt = Arc::new(move |call: Call| {
            let fut = handler(call);
            Box::pin(async move { fut.await.map_err(PromptFailure::Rejected) })
        });
        self.insert(def, run)
    }

    fn insert(mut self, def: Prompt, run: ErasedPrompt) -> Self {
        if let Err(e) = check_name("prompt", &def.name) {
            self.errors.push(e);
            return self;
        }
        if self.index.contains_key(&def.name) {
            self.errors.push(RegistrationError::Duplicate { kind: "prompt", name: def.name });
            return self;
        }
        self.index.insert(def.name.clone(), self.entries.len());
        self.entries.push(Arc::new(PromptEntry { def, run }));
        self
    }

    /// Takes the registration problems found so far; see
    /// [`Tools::take_errors`](crate::Tools::take_errors).
    pub fn take_errors(&mut self) -> Vec<RegistrationError> {
        std::mem::take(&mut self.errors)
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Arc<PromptEntry>> {
        self.index.get(name).map(|&i| &self.entries[i])
    }
}

/// Each property of an object schema becomes a prompt argument (required when listed in
/// `required`), with the property's description.
fn arguments_from_schema(schema: &JsonObject) -> Vec<PromptArgument> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(JsonValue::as_array)
        .map(|r| r.iter().filter_map(JsonValue::as_str).collect())
        .unwrap_or_default();
    let Some(JsonValue::Object(properties)) = schema.get("properties") else { return Vec::new() };
    properties
        .iter()
        .map(|(name, property)| PromptArgument {
            name: name.clone(),
            title: property.get("title").and_then(JsonValue::as_str).map(str::to_owned),
            description: property.get("description").and_then(JsonValue::as_str).map(str::to_owned),
            required: Some(required.contains(&name.as_str())),
            extra: Default::default(),
        })
        .collect()
}
