//! `mcpkit listen`: change notifications as they arrive. What is asked for is checked against
//! what the server announces first: a list it never says changes, or a resource it cannot
//! subscribe to, is an error (status 4) rather than a wait that nothing ends. On a terminal
//! each notification is a line of text; in JSON, a line of JSON.

use anyhow::anyhow;
use mcp_client::{Client, ClientError, SubscriptionEvent};
use mcp_types::{LoggingLevel, ServerCapabilities, ServerNotification, SubscriptionFilter};
use serde_json::{Map, Value, json};

use crate::status::{Status, tag};
use crate::{output, server_log};

/// What `listen`'s options ask for.
pub(crate) struct Asked<'a> {
    pub(crate) tools: bool,
    pub(crate) prompts: bool,
    pub(crate) resources: bool,
    pub(crate) resource: &'a [String],
}

/// What the server announces it sends.
struct Offered {
    tools: bool,
    prompts: bool,
    resources: bool,
    subscribe: bool,
}

impl Offered {
    fn of(caps: &ServerCapabilities) -> Offered {
        let yes = |flag: Option<bool>| flag == Some(true);
        Offered {
            tools: caps.tools.as_ref().is_some_and(|t| yes(t.list_changed)),
            prompts: caps.prompts.as_ref().is_some_and(|p| yes(p.list_changed)),
            resources: caps.resources.as_ref().is_some_and(|r| yes(r.list_changed)),
            subscribe: caps.resources.as_ref().is_some_and(|r| yes(r.subscribe)),
        }
    }
}

/// The subscription to ask for: what was asked, or without a choice every list the server says
/// changes; an error when the server announces none of it.
fn filter(asked: &Asked<'_>, offered: &Offered) -> anyhow::Result<SubscriptionFilter> {
    let mut missing = Vec::new();
    for (wanted, offers, what) in [
        (asked.tools, offered.tools, "tool list changes (tools.listChanged)"),
        (asked.prompts, offered.prompts, "prompt list changes (prompts.listChanged)"),
        (asked.resources, offered.resources, "resource list changes (resources.listChanged)"),
        (!asked.resource.is_empty(), offered.subscribe, "resource updates (resources.subscribe)"),
    ] {
        if wanted && !offers {
            missing.push(what);
        }
    }
    if !missing.is_empty() {
        let message =
            format!("the server does not announce {}: nothing of it would arrive", missing.join(" or "));
        return Err(tag(Status::Protocol, anyhow!(message)));
    }
    let all = !(asked.tools || asked.prompts || asked.resources);
    let filter = SubscriptionFilter {
        tools_list_changed: (asked.tools || (all && offered.tools)).then_some(true),
        prompts_list_changed: (asked.prompts || (all && offered.prompts)).then_some(true),
        resources_list_changed: (asked.resources || (all && offered.resources)).then_some(true),
        resource_subscriptions: (!asked.resource.is_empty()).then(|| asked.resource.to_vec()),
        ..Default::default()
    };
    if filter == SubscriptionFilter::default() {
        let message = "the server announces no change notifications (no listChanged for tools, prompts or \
                       resources, no resources.subscribe): nothing to listen for";
        return Err(tag(Status::Protocol, anyhow!(message)));
    }
    Ok(filter)
}

/// Listens until the subscription ends; `log` is the level of the server's log messages shown.
pub(crate) async fn run(
    client: &Client,
    asked: Asked<'_>,
    json: bool,
    log: Option<LoggingLevel>,
) -> anyhow::Result<()> {
    let filter = filter(&asked, &Offered::of(&client.server_capabilities()))?;
    let mut subscription = client.listen(filter.clone()).await?;
    while let Some(event) = subscription.next().await {
        let value = match event {
            // Log messages go to stderr. A legacy subscription's come from
            // `client.notifications()`, which `server_log::with_logs` shows already; a modern
            // one's are tagged with the subscription and reach it alone.
            SubscriptionEvent::Notification(ServerNotification::LoggingMessage(_))
                if !client.protocol_version().is_modern() =>
            {
                continue;
            }
            SubscriptionEvent::Notification(n @ ServerNotification::LoggingMessage(_)) => {
                if let Some(min) = log {
                    server_log::show(&n, min);
                }
                continue;
            }
            SubscriptionEvent::Acknowledged(granted) => {
                if granted == SubscriptionFilter::default() {
                    let message = "the server acknowledged none of the notifications asked for";
                    return Err(tag(Status::Protocol, anyhow!(message)));
                }
                if json {
                    json!({ "acknowledged": granted })
                } else {
                    eprintln!("{}", listening(&granted, &filter, "Ctrl-C to stop"));
                    continue;
                }
            }
            SubscriptionEvent::Notification(n) => notification_json(&n)?,
            SubscriptionEvent::Ended(Ok(())) => break,
            SubscriptionEvent::Ended(Err(e)) => return Err(ended(e)),
            // An event kind a later mcp-client adds (non-exhaustive): not shown.
            _ => continue,
        };
        output::event(json, &value, text)?;
    }
    Ok(())
}

/// A subscription that ended in error; `-32601`: the server has no `subscriptions/listen`.
fn ended(error: ClientError) -> anyhow::Error {
    let missing = error.error_object().is_some_and(|e| e.code == mcp_types::error::code::METHOD_NOT_FOUND);
    if missing {
        let message =
            "the server does not support subscriptions/listen, though it announces change notifications";
        return anyhow::Error::new(error).context(message);
    }
    error.into()
}

/// The line said on a terminal once the server acknowledged: what is listened for, and what
/// was asked but not granted.
pub(crate) fn listening(granted: &SubscriptionFilter, asked: &SubscriptionFilter, stop: &str) -> String {
    let yes = |flag: Option<bool>| flag == Some(true);
    let mut lists = Vec::new();
    let mut refused = Vec::new();
    for (asked, granted, name) in [
        (asked.tools_list_changed, granted.tools_list_changed, "tool"),
        (asked.prompts_list_changed, granted.prompts_list_changed, "prompt"),
        (asked.resources_list_changed, granted.resources_list_changed, "resource"),
    ] {
        match (yes(asked), yes(granted)) {
            (_, true) => lists.push(name),
            (true, false) => refused.push(format!("{name} list changes")),
            (false, false) => {}
        }
    }
    let mut parts = Vec::new();
    if !lists.is_empty() {
        parts.push(format!("{} list changes", join(&lists)));
    }
    let uris = granted.resource_subscriptions.clone().unwrap_or_default();
    if !uris.is_empty() {
        parts.push(format!("updates of {}", uris.join(", ")));
    }
    for uri in asked.resource_subscriptions.iter().flatten() {
        if !uris.contains(uri) {
            refused.push(format!("updates of {uri}"));
        }
    }
    let mut line = format!("listening for {} ({stop})", parts.join(" and "));
    if !refused.is_empty() {
        line.push_str(&format!("; the server will not send {}", refused.join(", ")));
    }
    line
}

/// `a`, `a and b`, `a, b and c`.
fn join(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// A notification as a line of text.
pub(crate) fn text(value: &Value) -> String {
    let method = value.get("method").and_then(Value::as_str).unwrap_or_default();
    let params = value.get("params").filter(|p| p.as_object().is_some_and(|p| !p.is_empty()));
    match method {
        "notifications/tools/list_changed" => "tools changed".to_owned(),
        "notifications/prompts/list_changed" => "prompts changed".to_owned(),
        "notifications/resources/list_changed" => "resources changed".to_owned(),
        "notifications/resources/updated" => {
            let uri = params.and_then(|p| p.get("uri")).and_then(Value::as_str).unwrap_or("?");
            format!("updated: {uri}")
        }
        _ => match params {
            Some(params) => format!("{method} {params}"),
            None => method.to_owned(),
        },
    }
}

/// A notification as `{"method": ..., "params": ...}`, the params as the server sent them.
pub(crate) fn notification_json(n: &ServerNotification) -> anyhow::Result<Value> {
    use serde_json::to_value;
    let params = match n {
        ServerNotification::Cancelled(p) => to_value(p)?,
        ServerNotification::Progress(p) => to_value(p)?,
        ServerNotification::LoggingMessage(p) => to_value(p)?,
        ServerNotification::ResourceListChanged(p) => to_value(p)?,
        ServerNotification::ResourceUpdated(p) => to_value(p)?,
        ServerNotification::PromptListChanged(p) => to_value(p)?,
        ServerNotification::ToolListChanged(p) => to_value(p)?,
        ServerNotification::SubscriptionsAcknowledged(p) => to_value(p)?,
        ServerNotification::ElicitationComplete(p) => to_value(p)?,
        ServerNotification::TaskStatus(p) => to_value(p)?,
        ServerNotification::Other { params, .. } => match params {
            Some(text) => serde_json::from_str(text)?,
            None => Value::Null,
        },
    };
    let mut out = Map::new();
    out.insert("method".into(), Value::String(n.method().to_owned()));
    if !params.is_null() {
        out.insert("params".into(), params);
    }
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    const NONE: Offered = Offered { tools: false, prompts: false, resources: false, subscribe: false };

    fn asked(tools: bool, resource: &[String]) -> Asked<'_> {
        Asked { tools, prompts: false, resources: false, resource }
    }

    #[test]
    fn only_what_the_server_announces_is_asked_for() {
        let tools_only = Offered { tools: true, ..NONE };
        let all = filter(&asked(false, &[]), &tools_only).unwrap();
        assert_eq!(all, SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() });
        let e = filter(&asked(false, &[]), &NONE).unwrap_err();
        assert!(format!("{e:#}").contains("nothing to listen for"), "{e:#}");
        assert_eq!(crate::status::of(&e), Status::Protocol);
        let uri = ["demo://x".to_owned()];
        let e = filter(&asked(true, &uri), &tools_only).unwrap_err();
        assert!(
            format!("{e:#}").contains("does not announce resource updates (resources.subscribe)"),
            "{e:#}"
        );
        let e = filter(&Asked { prompts: true, ..asked(true, &[]) }, &tools_only).unwrap_err();
        assert!(format!("{e:#}").contains("prompt list changes (prompts.listChanged)"), "{e:#}");
    }

    #[test]
    fn a_terminal_gets_sentences() {
        let asked = SubscriptionFilter {
            tools_list_changed: Some(true),
            prompts_list_changed: Some(true),
            resource_subscriptions: Some(vec!["a://1".into(), "a://2".into()]),
            ..Default::default()
        };
        let granted = SubscriptionFilter {
            tools_list_changed: Some(true),
            resource_subscriptions: Some(vec!["a://1".into()]),
            ..Default::default()
        };
        assert_eq!(
            listening(&granted, &asked, "Ctrl-C to stop"),
            "listening for tool list changes and updates of a://1 (Ctrl-C to stop); the server will not \
             send prompt list changes, updates of a://2"
        );
        assert_eq!(text(&json!({"method": "notifications/tools/list_changed"})), "tools changed");
        let updated = json!({"method": "notifications/resources/updated", "params": {"uri": "a://1"}});
        assert_eq!(text(&updated), "updated: a://1");
        assert_eq!(text(&json!({"method": "x/y", "params": {"k": 1}})), "x/y {\"k\":1}");
    }
}
