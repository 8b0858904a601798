//! Change notifications as a stream of typed events: `subscriptions/listen` on modern servers;
//! on legacy sessions the same events come from the session's notifications (and
//! `resources/subscribe` for the URIs asked for).

use std::sync::Arc;

use mcp_types::{ServerNotification, SubscriptionFilter, SubscriptionsAcknowledgedNotificationParams};
use serde_json::{Map, Value};
use tokio::sync::mpsc;

use super::{Client, RequestOptions, params_map};
use crate::error::ClientError;

/// One event of a [`Subscription`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum SubscriptionEvent {
    /// The server confirmed what it will send (modern); on legacy sessions, what the server's
    /// capabilities allow.
    Acknowledged(SubscriptionFilter),
    /// A change notification (list changed, resource updated, log message, ...).
    Notification(ServerNotification),
    /// The subscription ended: the server closed it (`Ok`) or the connection failed.
    Ended(Result<(), ClientError>),
}

/// A live subscription. Dropping it ends the subscription (the listen request is cancelled).
#[derive(Debug)]
pub struct Subscription {
    events: mpsc::Receiver<SubscriptionEvent>,
    task: tokio::task::JoinHandle<()>,
}

impl Subscription {
    /// The next event; `None` after [`SubscriptionEvent::Ended`].
    pub async fn next(&mut self) -> Option<SubscriptionEvent> {
        self.events.recv().await
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Client {
    /// Subscribes to change notifications.
    pub async fn listen(&self, filter: SubscriptionFilter) -> Result<Subscription, ClientError> {
        // At most `subscription_events` wait for the reader: past that, change notifications for
        // a reader that does not keep up are dropped and counted; the end always gets through.
        let (tx, events) = mpsc::channel(self.inner.config.queue_limits.subscription_events.max(1));
        if self.protocol_version().is_modern() {
            let mut params = Map::new();
            params.insert("notifications".into(), Value::Object(params_map(&filter)?));
            let inner = self.inner.clone();
            let task = tokio::spawn(async move {
                let options = RequestOptions::default();
                let forward = tx.clone();
                let inner2 = inner.clone();
                let mut dropped = 0u64;
                let on_tagged = move |n: mcp_types::Notification| {
                    let event = if n.method == "notifications/subscriptions/acknowledged" {
                        match n.params_as::<SubscriptionsAcknowledgedNotificationParams>() {
                            Ok(p) => SubscriptionEvent::Acknowledged(p.notifications),
                            Err(e) => {
                                tracing::warn!(target: "mcp_client", "malformed acknowledgement: {}", e.message);
                                return;
                            }
                        }
                    } else {
                        match ServerNotification::from_notification(&n) {
                            Ok(typed) => {
                                inner2.invalidate(&typed);
                                SubscriptionEvent::Notification(typed)
                            }
                            Err(e) => {
                                tracing::warn!(target: "mcp_client", "malformed {}: {}", n.method, e.message);
                                return;
                            }
                        }
                    };
                    match forward.try_send(event) {
                        Ok(()) if dropped > 0 => {
                            tracing::warn!(target: "mcp_client", "subscription reader too slow; {dropped} notifications lost");
                            dropped = 0;
                        }
                        Ok(()) => {}
                        Err(mpsc::error::TrySendError::Full(_)) => dropped += 1,
                        Err(mpsc::error::TrySendError::Closed(_)) => {}
                    }
                };
                let listen_options = options.no_timeout();
                let result = inner
                    .call_raw(
                        "subscriptions/listen",
                        &params,
                        &listen_options,
                        super::Mrtr::Fulfil,
                        on_tagged,
                    )
                    .await;
                let _ = tx.send(SubscriptionEvent::Ended(result.map(|_| ()))).await;
            });
            return Ok(Subscription { events, task });
        }
        // Legacy: the session's own notifications, filtered.
        let caps = self.server_capabilities();
        let mut granted = SubscriptionFilter::default();
        let list_changed = |c: Option<bool>| c == Some(true);
        if filter.tools_list_changed == Some(true)
            && caps.tools.as_ref().is_some_and(|t| list_changed(t.list_changed))
        {
            granted.tools_list_changed = Some(true);
        }
        if filter.prompts_list_changed == Some(true)
            && caps.prompts.as_ref().is_some_and(|t| list_changed(t.list_changed))
        {
            granted.prompts_list_changed = Some(true);
        }
        if filter.resources_list_changed == Some(true)
            && caps.resources.as_ref().is_some_and(|t| list_changed(t.list_changed))
        {
            granted.resources_list_changed = Some(true);
        }
        if let Some(uris) = &filter.resource_subscriptions
            && caps.resources.as_ref().is_some_and(|r| r.subscribe == Some(true))
        {
            for uri in uris {
                self.subscribe_resource(uri).await?;
            }
            granted.resource_subscriptions = Some(uris.clone());
        }
        let mut rx = self.notifications();
        let _ = tx.send(SubscriptionEvent::Acknowledged(granted.clone())).await;
        let client = Arc::downgrade(&self.inner);
        let task = tokio::spawn(async move {
            loop {
                match rx.recv().await {
                    Ok(n) => {
                        let wanted = match &n {
                            ServerNotification::ToolListChanged(_) => {
                                granted.tools_list_changed == Some(true)
                            }
                            ServerNotification::PromptListChanged(_) => {
                                granted.prompts_list_changed == Some(true)
                            }
                            ServerNotification::ResourceListChanged(_) => {
                                granted.resources_list_changed == Some(true)
                            }
                            ServerNotification::ResourceUpdated(p) => {
                                granted.resource_subscriptions.as_ref().is_some_and(|u| u.contains(&p.uri))
                            }
                            ServerNotification::LoggingMessage(_) => true,
                            _ => false,
                        };
                        // Waiting for a slow reader makes the session's broadcast lag, which
                        // drops and counts (below).
                        if wanted && tx.send(SubscriptionEvent::Notification(n)).await.is_err() {
                            return;
                        }
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                        tracing::warn!(target: "mcp_client", "subscription lagged; {n} notifications lost");
                    }
                    Err(_) => {
                        let closed = client.upgrade().and_then(|c| c.engine.closed_error());
                        let ended = match closed {
                            Some(e) => Err(ClientError::lost(e)),
                            None => Ok(()),
                        };
                        let _ = tx.send(SubscriptionEvent::Ended(ended)).await;
                        return;
                    }
                }
            }
        });
        Ok(Subscription { events, task })
    }
}
