//! The handlers of the gateway's server: each passes a downstream request on to the upstream
//! that owns the item, under the upstream's own name for it, and passes back the upstream's
//! answer — a result, a tool error (`isError`, untouched) or the upstream's JSON-RPC error
//! (its code and message) — with progress on the way and cancellation both ways.

use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_client::RequestOptions;
use mcp_server::{Call, Cancel, Peer, Progress, Rejection, Uri};
use mcp_types::{
    CallToolRequestParams, CallToolResult, ErrorObject, GetPromptRequestParams, GetPromptResult, JsonValue,
    ReadResourceRequestParams, ReadResourceResult, ResourceContents, ResultMeta,
};
use tokio::sync::mpsc;

use crate::bridge::{DOWNSTREAM, Downstream, Registration};
use crate::upstream::Upstream;

/// Progress notifications waiting to be passed on, per request; beyond this, progress is
/// dropped (the next one carries a higher value anyway).
const PROGRESS_QUEUE: usize = 16;

type Report = (f64, Option<f64>, Option<String>);

/// What a handler of the gateway's server returns.
pub(crate) type Handling<T> = std::pin::Pin<Box<dyn Future<Output = Result<T, Rejection>> + Send>>;

/// Runs `forwarding` for the downstream request `call`: as the caller of the upstream's
/// questions, with its progress passed back, ending when the downstream cancels.
async fn forward<T>(
    upstream: &Arc<Upstream>,
    call: &Call,
    forwarding: impl FnOnce(
        RequestOptions,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<T, ErrorObject>> + Send>>,
) -> Result<T, Rejection> {
    let cancel: Cancel = call.extract()?;
    let progress: Progress = call.extract()?;
    let peer: Peer = call.extract()?;
    let downstream = Downstream::new(peer);
    let _registration = Registration::new(upstream.clone(), downstream.clone());
    let mut options = RequestOptions::new();
    let (tx, mut rx) = mpsc::channel::<Report>(PROGRESS_QUEUE);
    if progress.is_requested() {
        options = options.reset_timeout_on_progress(true).on_progress(move |p| {
            let _ = tx.try_send((p.progress, p.total, p.message.clone()));
        });
    } else {
        drop(tx);
    }
    let running = DOWNSTREAM.scope(downstream.clone(), forwarding(options));
    tokio::pin!(running);
    let mut reporting = true;
    loop {
        tokio::select! {
            outcome = &mut running => return outcome.map_err(Rejection::Protocol),
            report = rx.recv(), if reporting => match report {
                Some((value, total, message)) => progress.report(value, total, message.as_deref()).await,
                None => reporting = false,
            },
            // A question put to the caller from another task: return to mcp-server, which sees
            // it and interrupts this request (modern callers) or waits for the answer.
            () = downstream.asked.notified() => {}
            // Dropping the forwarding cancels the upstream request (`notifications/cancelled`).
            () = cancel.cancelled() => {
                return Err(Rejection::Protocol(ErrorObject::internal("the request was cancelled")));
            }
        }
    }
}

/// Removes the upstream's identity from a result's `_meta`: the gateway's server puts its own
/// (modern callers) or none (legacy callers).
fn strip_identity(meta: &mut Option<ResultMeta>) {
    if let Some(m) = meta {
        m.server_info = None;
        if m.subscription_id.is_none() && m.extra.is_empty() {
            *meta = None;
        }
    }
}

/// `tools/call` of `original` on `upstream`.
pub(crate) fn tool(
    upstream: Arc<Upstream>,
    original: String,
) -> impl Fn(Call) -> Handling<CallToolResult> + Send + Sync + 'static {
    move |mut call: Call| {
        let upstream = upstream.clone();
        let name = original.clone();
        Box::pin(async move {
            let arguments = call.arguments();
            let mut params = CallToolRequestParams::new(name);
            params.arguments = Some(arguments);
            let up = upstream.clone();
            forward(&upstream, &call, move |options| {
                Box::pin(async move {
                    up.run(|client| async move { client.call_tool_with(&params, &options).await }).await
                })
            })
            .await
            .map(|mut result: CallToolResult| {
                strip_identity(&mut result.meta);
                result
            })
        })
    }
}

/// `prompts/get` of `original` on `upstream`.
pub(crate) fn prompt(
    upstream: Arc<Upstream>,
    original: String,
) -> impl Fn(Call) -> Handling<GetPromptResult> + Send + Sync + 'static {
    move |mut call: Call| {
        let upstream = upstream.clone();
        let name = original.clone();
        Box::pin(async move {
            let arguments: BTreeMap<String, String> = call
                .arguments()
                .into_iter()
                .map(|(k, v)| match v {
                    JsonValue::String(s) => (k, s),
                    other => (k, other.to_string()),
                })
                .collect();
            let mut params = GetPromptRequestParams::new(name);
            if !arguments.is_empty() {
                params.arguments = Some(arguments);
            }
            let up = upstream.clone();
            forward(&upstream, &call, move |options| {
                Box::pin(async move {
                    up.run(|client| async move { client.get_prompt_with(&params, &options).await }).await
                })
            })
            .await
            .map(|mut result: GetPromptResult| {
                strip_identity(&mut result.meta);
                result
            })
        })
    }
}

/// `resources/read` on `upstream`, of the URI the downstream asked for. With a `namespace`
/// (the gateway's reversible rename of a URI two upstreams both offer), the downstream URI is
/// `{namespace}+{upstream URI}`: the prefix is taken off on the way up and put back on the
/// contents' URIs on the way down.
pub(crate) fn read(
    upstream: Arc<Upstream>,
    namespace: Option<Arc<str>>,
) -> impl Fn(Call) -> Handling<Vec<ResourceContents>> + Send + Sync + 'static {
    move |call: Call| {
        let upstream = upstream.clone();
        let namespace = namespace.clone();
        Box::pin(async move {
            let Uri(uri) = call.extract()?;
            let upstream_uri = match &namespace {
                Some(ns) => {
                    uri.strip_prefix(&**ns).and_then(|rest| rest.strip_prefix('+')).unwrap_or(&uri).to_owned()
                }
                None => uri.clone(),
            };
            let params = ReadResourceRequestParams::new(upstream_uri);
            let up = upstream.clone();
            let result: ReadResourceResult = forward(&upstream, &call, move |options| {
                Box::pin(async move {
                    up.run(|client| async move { client.read_resource_with(&params, &options).await }).await
                })
            })
            .await?;
            let mut contents = result.contents;
            if let Some(ns) = &namespace {
                for item in &mut contents {
                    let uri = match item {
                        ResourceContents::Text(t) => &mut t.uri,
                        ResourceContents::Blob(b) => &mut b.uri,
                    };
                    *uri = namespaced(ns, uri);
                }
            }
            Ok(contents)
        })
    }
}

/// A URI under a namespace: `{namespace}+{uri}`.
pub(crate) fn namespaced(namespace: &str, uri: &str) -> String {
    format!("{namespace}+{uri}")
}
