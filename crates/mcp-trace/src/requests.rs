//! A `CLIENT` span for each request a client sends: [`Tracing`] as mcp-client's
//! [`RequestObserver`]. The span continues the trace the request carries (its own context, or
//! the client's), is sent as the request's `traceparent` — so the server's span is its child —
//! and is recorded when the request is over, with the attributes a server's span has, on the
//! client's side: the gateway's hop to an upstream shows as its own span between the gateway's
//! `SERVER` span and the upstream's.

use std::time::{Instant, SystemTime};

use mcp_client::observe::{FinishedRequest, RequestObserver, RequestOutcome, RequestWatch, StartedRequest};
use mcp_server::observe::{SpanIds, method_label};
use mcp_types::trace::TraceParent;

use crate::Tracing;
use crate::export::{Failure, Id, Item, Kind, Request, Span, What};

impl RequestObserver for Tracing {
    fn start(&self, request: &StartedRequest<'_>) -> Option<Box<dyn RequestWatch>> {
        let ids = SpanIds::continuing_context(request.context, self.ratio);
        let method = method_label(request.method);
        let item = request.name.map(|name| {
            let kind = match method {
                "tools/call" => Item::Tool,
                "prompts/get" => Item::Prompt,
                _ => Item::Other,
            };
            (kind, name.to_owned())
        });
        Some(Box::new(Watch {
            tracing: self.clone(),
            ids,
            method,
            item,
            transport: request.transport,
            started: Instant::now(),
        }))
    }
}

/// One request's span in the making.
struct Watch {
    tracing: Tracing,
    ids: SpanIds,
    method: &'static str,
    item: Option<(Item, String)>,
    transport: &'static str,
    started: Instant,
}

impl RequestWatch for Watch {
    /// The request's own span, sampled or not: an unsampled one still carries its decision on.
    fn traceparent(&self) -> Option<TraceParent> {
        Some(self.ids.traceparent())
    }

    fn finish(self: Box<Self>, finished: &FinishedRequest<'_>) {
        if !self.ids.sampled {
            return;
        }
        let duration = self.started.elapsed();
        let end = crate::export::unix_nanos(SystemTime::now());
        let failure = match finished.outcome {
            RequestOutcome::Success => None,
            RequestOutcome::ToolError => Some(Failure::Tool),
            RequestOutcome::Error { code } => Some(Failure::Code(code)),
            RequestOutcome::Http { status } => Some(Failure::Http(status)),
            RequestOutcome::Timeout => Some(Failure::Other("timeout")),
            RequestOutcome::Cancelled => Some(Failure::Cancelled),
            _ => Some(Failure::Other("transport_error")),
        };
        let ids = &self.ids;
        self.tracing.record(&Span {
            trace_id: &ids.trace_id,
            span_id: &ids.span_id,
            parent: ids.parent.as_ref(),
            trace_state: ids.tracestate.as_deref(),
            kind: Kind::Client,
            end,
            duration,
            what: What::Request(Request {
                method: self.method,
                transport: self.transport,
                id: Id::of(finished.id),
                item: self.item.as_ref().map(|(kind, name)| (*kind, name.as_str())),
                version: None,
                session: None,
                failure,
            }),
        });
    }
}
