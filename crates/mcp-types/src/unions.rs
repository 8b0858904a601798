//! The typed unions of the schema: every request and notification a client or server sends
//! (`ClientRequest`, `ServerRequest`, `ClientNotification`, `ServerNotification`), decoded from
//! an envelope [`Request`]/[`Notification`] by method name.
//!
//! Decoding is total at this level too: a method this crate does not know becomes `Other`,
//! keeping its raw params, so a router can answer `-32601` — or an extension can serve it.
//! A known method with malformed params is the `-32602` error to answer with.

use crate::envelope::{Notification, RawJson, Request};
use crate::error::ErrorObject;
use crate::method::{NotificationMethod, RequestMethod};
use crate::methods::*;

macro_rules! union {
    (
        $(#[$m:meta])*
        $name:ident ($raw:ident) { $( $(#[$vm:meta])* $variant:ident($method:ident) ),* $(,)? }
    ) => {
        $(#[$m])*
        // Unboxed: a decoded request is matched and consumed at once; boxing would cost an
        // allocation per message on the dispatch path.
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug, Clone, PartialEq)]
        pub enum $name {
            $( $(#[$vm])* $variant(<$method as $raw>::Params), )*
            /// A method this crate does not know: its name and raw params.
            Other {
                /// The method name.
                method: String,
                /// The raw params, when present.
                params: Option<String>,
            },
        }

        impl $name {
            /// Decodes typed params by method name. A known method with malformed params gives
            /// the `-32602` error to answer with; an unknown method gives `Other`.
            pub fn from_parts(method: &str, params: Option<&RawJson>) -> Result<Self, ErrorObject> {
                let text = params.map_or("{}", |p| p.get());
                let invalid = |e: serde_json::Error| {
                    ErrorObject::invalid_params(format!("Invalid params for {method}: {e}"))
                };
                Ok(match method {
                    $( <$method as $raw>::METHOD => {
                        $name::$variant(serde_json::from_str(text).map_err(invalid)?)
                    } )*
                    _ => $name::Other { method: method.to_owned(), params: params.map(|p| p.get().to_owned()) },
                })
            }

            /// The method name.
            pub fn method(&self) -> &str {
                match self {
                    $( $name::$variant(_) => <$method as $raw>::METHOD, )*
                    $name::Other { method, .. } => method,
                }
            }
        }
    };
}

union! {
    /// A request from client to server, any revision (`ClientRequest`).
    ClientRequest (RequestMethod) {
        /// `initialize` (legacy).
        Initialize(Initialize),
        /// `ping` (legacy).
        Ping(Ping),
        /// `server/discover` (modern).
        Discover(Discover),
        /// `tools/list`.
        ListTools(ListTools),
        /// `tools/call`.
        CallTool(CallTool),
        /// `resources/list`.
        ListResources(ListResources),
        /// `resources/templates/list`.
        ListResourceTemplates(ListResourceTemplates),
        /// `resources/read`.
        ReadResource(ReadResource),
        /// `resources/subscribe` (legacy).
        Subscribe(Subscribe),
        /// `resources/unsubscribe` (legacy).
        Unsubscribe(Unsubscribe),
        /// `prompts/list`.
        ListPrompts(ListPrompts),
        /// `prompts/get`.
        GetPrompt(GetPrompt),
        /// `completion/complete`.
        Complete(Complete),
        /// `logging/setLevel` (legacy).
        SetLevel(SetLevel),
        /// `subscriptions/listen` (modern).
        SubscriptionsListen(SubscriptionsListen),
        /// `tasks/get` (2025-11-25).
        GetTask(GetTask),
        /// `tasks/result` (2025-11-25).
        GetTaskPayload(GetTaskPayload),
        /// `tasks/cancel` (2025-11-25).
        CancelTask(CancelTask),
        /// `tasks/list` (2025-11-25).
        ListTasks(ListTasks),
    }
}

union! {
    /// A request from server to client: legacy revisions only (`ServerRequest`); 2026-07-28
    /// carries these inside `InputRequiredResult`.
    ServerRequest (RequestMethod) {
        /// `ping`.
        Ping(Ping),
        /// `sampling/createMessage`.
        CreateMessage(CreateMessage),
        /// `elicitation/create`.
        Elicit(Elicit),
        /// `roots/list`.
        ListRoots(ListRoots),
        /// `tasks/get` (2025-11-25).
        GetTask(GetTask),
        /// `tasks/result` (2025-11-25).
        GetTaskPayload(GetTaskPayload),
        /// `tasks/cancel` (2025-11-25).
        CancelTask(CancelTask),
        /// `tasks/list` (2025-11-25).
        ListTasks(ListTasks),
    }
}

union! {
    /// A notification from client to server, any revision (`ClientNotification`).
    ClientNotification (NotificationMethod) {
        /// `notifications/cancelled`.
        Cancelled(Cancelled),
        /// `notifications/initialized` (legacy).
        Initialized(Initialized),
        /// `notifications/progress` (legacy: progress of a server→client request).
        Progress(Progress),
        /// `notifications/roots/list_changed` (legacy).
        RootsListChanged(RootsListChanged),
        /// `notifications/tasks/status` (2025-11-25).
        TaskStatus(TaskStatusChanged),
    }
}

union! {
    /// A notification from server to client, any revision (`ServerNotification`).
    ServerNotification (NotificationMethod) {
        /// `notifications/cancelled`.
        Cancelled(Cancelled),
        /// `notifications/progress`.
        Progress(Progress),
        /// `notifications/message`.
        LoggingMessage(LoggingMessage),
        /// `notifications/resources/list_changed`.
        ResourceListChanged(ResourceListChanged),
        /// `notifications/resources/updated`.
        ResourceUpdated(ResourceUpdated),
        /// `notifications/prompts/list_changed`.
        PromptListChanged(PromptListChanged),
        /// `notifications/tools/list_changed`.
        ToolListChanged(ToolListChanged),
        /// `notifications/subscriptions/acknowledged` (modern).
        SubscriptionsAcknowledged(SubscriptionsAcknowledged),
        /// `notifications/elicitation/complete` (2025-11-25).
        ElicitationComplete(ElicitationComplete),
        /// `notifications/tasks/status` (2025-11-25).
        TaskStatus(TaskStatusChanged),
    }
}

impl ClientRequest {
    /// Decodes an envelope request.
    pub fn from_request(request: &Request) -> Result<Self, ErrorObject> {
        Self::from_parts(&request.method, request.params.as_ref())
    }
}

impl ServerRequest {
    /// Decodes an envelope request.
    pub fn from_request(request: &Request) -> Result<Self, ErrorObject> {
        Self::from_parts(&request.method, request.params.as_ref())
    }
}

impl ClientNotification {
    /// Decodes an envelope notification.
    pub fn from_notification(notification: &Notification) -> Result<Self, ErrorObject> {
        Self::from_parts(&notification.method, notification.params.as_ref())
    }
}

impl ServerNotification {
    /// Decodes an envelope notification.
    pub fn from_notification(notification: &Notification) -> Result<Self, ErrorObject> {
        Self::from_parts(&notification.method, notification.params.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::{DecodeOptions, Message, decode_message};

    fn request(text: &str) -> Request {
        match decode_message(text.as_bytes(), DecodeOptions::default()).unwrap() {
            Message::Request(r) => r,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn known_methods_decode_typed_and_unknown_are_other() {
        let r = ClientRequest::from_request(&request(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#,
        ))
        .unwrap();
        let ClientRequest::CallTool(params) = &r else { panic!("{r:?}") };
        assert_eq!(params.name, "echo");
        assert_eq!(r.method(), "tools/call");

        let r = ClientRequest::from_request(&request(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#))
            .unwrap();
        assert!(matches!(r, ClientRequest::ListTools(_)));

        let r = ClientRequest::from_request(&request(
            r#"{"jsonrpc":"2.0","id":3,"method":"x/y","params":{"a":1}}"#,
        ))
        .unwrap();
        assert_eq!(r, ClientRequest::Other { method: "x/y".into(), params: Some(r#"{"a":1}"#.into()) });
    }

    #[test]
    fn malformed_params_of_a_known_method_are_invalid_params() {
        let e = ClientRequest::from_request(&request(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#,
        ))
        .unwrap_err();
        assert_eq!(e.code, -32602);
        assert!(e.message.contains("name"), "{}", e.message);
        let e = ClientRequest::from_request(&request(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}"#,
        ))
        .unwrap_err();
        assert!(e.message.contains("duplicate field `name`"), "{}", e.message);
    }

    #[test]
    fn notifications_decode_by_method() {
        let n = Notification::typed::<Cancelled>(&crate::CancelledNotificationParams {
            request_id: Some(crate::RequestId::Number(4)),
            ..Default::default()
        })
        .unwrap();
        let ClientNotification::Cancelled(p) = ClientNotification::from_notification(&n).unwrap() else {
            panic!()
        };
        assert_eq!(p.request_id, Some(crate::RequestId::Number(4)));
        let n = Notification { method: "notifications/tools/list_changed".into(), params: None };
        assert!(matches!(
            ServerNotification::from_notification(&n).unwrap(),
            ServerNotification::ToolListChanged(_)
        ));
    }
}
