//! What a request carries of its trace, and who is told about it: the trace context each
//! request is sent with (its own, else the client's), the observer's watch of it, and the
//! `_meta` members written from them.

use serde_json::{Map, Value};

use super::{Inner, RequestOptions};

/// The method of a subscription stream (not observed: it has no duration of its own).
const SUBSCRIPTIONS_LISTEN: &str =
    <mcp_types::methods::SubscriptionsListen as mcp_types::RequestMethod>::METHOD;

/// The trace context a request is sent with (`Inner::encode`): written where the request
/// carries none, or over what it carries (`replace`: the observer's span is its parent).
pub(crate) struct Traced {
    pub(super) context: mcp_types::trace::TraceContext,
    pub(super) replace: bool,
}

impl Traced {
    /// Writes the context's members into a request's `_meta` members `extra`.
    pub(super) fn write(&self, extra: &mut Map<String, Value>) {
        if self.replace {
            // Under the observer's span: the request's own trace keys give way whole, so that
            // no state of another trace (or of a malformed one) goes along.
            for key in
                [mcp_types::trace::TRACEPARENT, mcp_types::trace::TRACESTATE, mcp_types::trace::BAGGAGE]
            {
                extra.remove(key);
            }
        }
        for (key, value) in self.context.entries() {
            extra.entry(key).or_insert_with(|| value.into());
        }
    }
}

/// The tool or prompt a request names, for its observer.
fn item_name<'a>(method: &str, params: &'a Map<String, Value>) -> Option<&'a str> {
    use mcp_types::RequestMethod;
    use mcp_types::methods::{CallTool, GetPrompt};
    (method == CallTool::METHOD || method == GetPrompt::METHOD)
        .then(|| params.get("name").and_then(Value::as_str))?
}

impl Inner {
    /// The trace context a request carries: its options' own (a `traceparent` in them), else
    /// its params' `_meta`'s, else the client's (`ClientBuilder::trace_context`).
    pub(super) fn request_context(
        &self,
        params: &Map<String, Value>,
        options: &RequestOptions,
    ) -> mcp_types::trace::TraceContext {
        use mcp_types::trace::{TRACEPARENT, TraceContext as Context};
        if options.meta.contains_key(TRACEPARENT) {
            return Context::from_meta(&options.meta);
        }
        if let Some(Value::Object(meta)) = params.get("_meta")
            && meta.contains_key(TRACEPARENT)
        {
            return Context::from_meta(meta);
        }
        match &self.config.trace_context {
            Some(current) => (current.0)(),
            None => Context::default(),
        }
    }

    /// The observer's watch of a request of `method` carrying `context`, when there is an
    /// observer. A stream that lasts as long as it is read (`subscriptions/listen`) is no
    /// operation with a duration: it is not observed.
    pub(super) fn watch(
        &self,
        method: &str,
        params: &Map<String, Value>,
        context: &mcp_types::trace::TraceContext,
    ) -> Option<Box<dyn crate::observe::RequestWatch>> {
        let observer = self.config.observer.as_ref().filter(|_| method != SUBSCRIPTIONS_LISTEN)?;
        observer.0.start(&crate::observe::StartedRequest::new(
            method,
            item_name(method, params),
            context,
            crate::observe::network_transport(self.engine.transport.kind()),
        ))
    }
}
