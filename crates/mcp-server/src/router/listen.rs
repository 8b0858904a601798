//! Change notifications: `subscriptions/listen` streams (modern) and the notifications a
//! legacy session receives (`*/list_changed`, `resources/updated` for subscribed URIs).

use std::sync::Arc;

use mcp_types::extensions::tasks::{TaskChanged, TaskResult};
use mcp_types::methods::{
    PromptListChanged, ResourceListChanged, ResourceUpdated, SubscriptionsAcknowledged, ToolListChanged,
};
use mcp_types::{
    ErrorObject, Message, Notification, NotificationMeta, NotificationMethod, NotificationParams, RequestId,
    ResourceUpdatedNotificationParams, ResultMeta, SubscriptionFilter,
    SubscriptionsAcknowledgedNotificationParams, SubscriptionsListenRequestParams, SubscriptionsListenResult,
};
use serde::Serialize;
use tokio::sync::broadcast::error::RecvError;

use super::{Ctx, Routed};
use crate::connection::Connection;
use crate::context::Change;
use crate::server::Server;
use crate::session::SessionHandle;
use crate::task_relay as relay;

/// How many relayed tasks (another server's, `TaskRelay`) one stream watches at most.
const MAX_RELAYED_WATCHES: usize = 64;

fn encode<M: NotificationMethod>(params: &M::Params) -> Option<Vec<u8>>
where
    M::Params: Serialize,
{
    Notification::typed::<M>(params).ok().map(|n| Message::Notification(n).to_vec())
}

fn tagged(subscription: &RequestId) -> Option<NotificationMeta> {
    Some(NotificationMeta { subscription_id: Some(subscription.clone()), extra: Default::default() })
}

/// The notification for one change, as a subscription with this filter receives it, or
/// `None` when the filter does not ask for it.
fn notification_for(
    change: &Change,
    filter: &SubscriptionFilter,
    meta: Option<NotificationMeta>,
) -> Option<Vec<u8>> {
    let list = |meta| NotificationParams { meta, extra: Default::default() };
    match change {
        Change::Tools if filter.tools_list_changed == Some(true) => encode::<ToolListChanged>(&list(meta)),
        Change::Prompts if filter.prompts_list_changed == Some(true) => {
            encode::<PromptListChanged>(&list(meta))
        }
        Change::Resources if filter.resources_list_changed == Some(true) => {
            encode::<ResourceListChanged>(&list(meta))
        }
        Change::ResourceUpdated(uri)
            if filter.resource_subscriptions.as_ref().is_some_and(|s| s.contains(uri)) =>
        {
            encode::<ResourceUpdated>(&ResourceUpdatedNotificationParams {
                uri: uri.clone(),
                meta,
                extra: Default::default(),
            })
        }
        _ => None,
    }
}

impl Server {
    /// What of a requested filter this server honours: only notification types it can emit.
    fn honoured(&self, requested: &SubscriptionFilter) -> SubscriptionFilter {
        let inner = &self.inner;
        let keep = |asked: Option<bool>, served: bool| (asked == Some(true) && served).then_some(true);
        SubscriptionFilter {
            tools_list_changed: keep(requested.tools_list_changed, inner.serves_tools()),
            prompts_list_changed: keep(requested.prompts_list_changed, inner.serves_prompts()),
            resources_list_changed: keep(requested.resources_list_changed, inner.serves_resources()),
            resource_subscriptions: requested
                .resource_subscriptions
                .clone()
                .filter(|_| inner.serves_resources()),
            task_ids: requested.task_ids.clone().filter(|ids| !ids.is_empty() && inner.serves_tasks()),
            extra: Default::default(),
        }
    }

    /// `subscriptions/listen`: acknowledges, then streams matching notifications until the
    /// client cancels (no response) or the server shuts down (a completion result).
    pub(super) async fn listen(&self, ctx: &Ctx<'_>, params: SubscriptionsListenRequestParams) -> Routed {
        let asks_tasks = params.notifications.task_ids.as_ref().is_some_and(|ids| !ids.is_empty());
        if asks_tasks && !mcp_types::extensions::tasks::declared(&ctx.capabilities) {
            return Err(super::Failure::bad_request(ErrorObject::missing_client_capability(
                mcp_types::extensions::tasks::required(),
            )));
        }
        let filter = self.honoured(&params.notifications);
        // Only the caller's own tasks are followed; another's are as unknown as missing ones.
        let owner = crate::request_state::caller(ctx.principal.as_deref());
        let mut task_changes = filter.task_ids.is_some().then(|| self.inner.tasks.changes());
        // Tasks another server runs are watched through the relay, each until it ends or
        // this stream does (the watches are aborted with the set).
        let (relayed_changes, mut relayed) = tokio::sync::mpsc::channel::<(String, TaskResult)>(16);
        let mut watches = tokio::task::JoinSet::new();
        if let (Some(ids), Some(relay)) = (&filter.task_ids, self.inner.task_relay.load_full()) {
            for id in ids.iter().filter(|id| relay::is_relayed(id)).take(MAX_RELAYED_WATCHES) {
                let Some(task) = relay::open(&self.inner.key, &owner, id) else { continue };
                let asks =
                    crate::call::AskState::new("subscriptions/listen", id.clone(), Default::default(), None);
                let call = ctx.call(Arc::new(asks), None, None);
                let (changes, mut received) = tokio::sync::mpsc::channel::<TaskResult>(4);
                let watching = relay.watch(call, task, changes);
                let (id, out) = (id.clone(), relayed_changes.clone());
                watches.spawn(async move {
                    let passing = async {
                        while let Some(task) = received.recv().await {
                            if out.send((id.clone(), task)).await.is_err() {
                                return;
                            }
                        }
                    };
                    tokio::join!(watching, passing);
                });
            }
        }
        drop(relayed_changes);
        let _open = self.observer().map(|observer| Open::subscription(observer.clone()));
        // Followed until this stream ends, however it ends.
        let _following =
            crate::interest::Following::new(&self.inner.interest, filter.resource_subscriptions.as_ref());
        // Subscribe before acknowledging, so no change between the two is lost.
        let mut changes = self.inner.context.changes.subscribe();
        let sink = &ctx.sink;
        let ack = SubscriptionsAcknowledgedNotificationParams {
            notifications: filter.clone(),
            meta: tagged(&ctx.id),
            extra: Default::default(),
        };
        let Some(ack) = encode::<SubscriptionsAcknowledged>(&ack) else { return Ok(None) };
        if !sink.send(ack).await {
            return Ok(None);
        }
        let closing = ctx.connection.closing();
        let ending = ctx.connection.listening_ends();
        loop {
            let change = tokio::select! {
                change = changes.recv() => change,
                Some(task) = next_task(&mut task_changes) => {
                    let wanted = filter.task_ids.as_ref().is_some_and(|ids| ids.contains(&task.task.task_id));
                    if wanted && task.owner == owner {
                        let mut params = task.task.to_notification();
                        params.meta = tagged(&ctx.id);
                        if let Some(n) = encode::<TaskChanged>(&params) {
                            if !sink.send(n).await {
                                return Ok(None);
                            }
                        }
                    }
                    continue;
                }
                Some((id, mut task)) = relayed.recv() => {
                    task.task_id = id;
                    let mut params = task.to_notification();
                    params.meta = tagged(&ctx.id);
                    if let Some(n) = encode::<TaskChanged>(&params) {
                        if !sink.send(n).await {
                            return Ok(None);
                        }
                    }
                    continue;
                }
                _ = self.inner.shutdown.cancelled() => break,
                _ = ending.cancelled() => break,
                _ = ctx.cancel.cancelled() => return Ok(None),
                _ = closing.cancelled() => return Ok(None),
            };
            let notifications: Vec<Vec<u8>> = match change {
                Ok(change) => notification_for(&change, &filter, tagged(&ctx.id)).into_iter().collect(),
                // Changes were missed: announce every list this subscription follows.
                Err(RecvError::Lagged(_)) => [Change::Tools, Change::Prompts, Change::Resources]
                    .iter()
                    .filter_map(|c| notification_for(c, &filter, tagged(&ctx.id)))
                    .collect(),
                Err(RecvError::Closed) => break,
            };
            for n in notifications {
                if !sink.send(n).await {
                    return Ok(None);
                }
            }
        }
        let meta = ResultMeta { subscription_id: Some(ctx.id.clone()), ..Default::default() };
        ctx.finish(SubscriptionsListenResult { meta: Some(meta), ..Default::default() })
    }
}

/// The next task change a stream follows: `None` when it follows no task or missed some
/// (a client that missed a change still sees the task's state on `tasks/get`).
async fn next_task(
    changes: &mut Option<tokio::sync::broadcast::Receiver<Arc<crate::task::TaskChange>>>,
) -> Option<Arc<crate::task::TaskChange>> {
    let receiver = changes.as_mut()?;
    loop {
        match receiver.recv().await {
            Ok(change) => return Some(change),
            Err(RecvError::Lagged(_)) => continue,
            Err(RecvError::Closed) => {
                *changes = None;
                return None;
            }
        }
    }
}

/// Forwards changes to a legacy session for as long as its connection lives: list changes
/// for the features the server serves, resource updates for URIs the client subscribed to.
pub(crate) fn forward_to_session(server: Server, connection: Arc<Connection>, session: SessionHandle) {
    let mut changes = server.inner.context.changes.subscribe();
    let closing = connection.closing();
    let sink = connection.sink.clone();
    let everything = SubscriptionFilter {
        tools_list_changed: Some(server.inner.serves_tools()),
        prompts_list_changed: Some(server.inner.serves_prompts()),
        resources_list_changed: Some(server.inner.serves_resources()),
        resource_subscriptions: None,
        task_ids: None,
        extra: Default::default(),
    };
    // The session counts as open for the observer while this task runs: it ends with the
    // connection, or when a new `initialize` replaces the session.
    let open = server.observer().map(|observer| Open::session(observer.clone()));
    tokio::spawn(async move {
        let _open = open;
        loop {
            let change = tokio::select! {
                change = changes.recv() => change,
                _ = closing.cancelled() => return,
            };
            let change = match change {
                Ok(change) => change,
                Err(RecvError::Lagged(_)) => Change::Tools,
                Err(RecvError::Closed) => return,
            };
            // A session replaced by a new `initialize` stops receiving.
            if !connection.session().is_some_and(|current| Arc::ptr_eq(&current, &session)) {
                return;
            }
            let message = match &change {
                Change::ResourceUpdated(uri) if session.is_subscribed(uri) => {
                    encode::<ResourceUpdated>(&ResourceUpdatedNotificationParams {
                        uri: uri.clone(),
                        meta: None,
                        extra: Default::default(),
                    })
                }
                Change::ResourceUpdated(_) => None,
                other => notification_for(other, &everything, None),
            };
            if let Some(message) = message {
                if !sink.send(message).await {
                    return;
                }
            }
        }
    });
}

/// A session or a subscription the observer was told opened; it is told it ended when this is
/// dropped, however that happens.
struct Open {
    observer: Arc<dyn crate::observe::Observer>,
    subscription: bool,
}

impl Open {
    fn session(observer: Arc<dyn crate::observe::Observer>) -> Open {
        observer.session(true);
        Open { observer, subscription: false }
    }

    fn subscription(observer: Arc<dyn crate::observe::Observer>) -> Open {
        observer.subscription(true);
        Open { observer, subscription: true }
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        if self.subscription {
            self.observer.subscription(false);
        } else {
            self.observer.session(false);
        }
    }
}
