//! The legacy (handshake-era) shapes, serialized by the project's types, validate against the
//! schema of each revision that has them; and what a revision forbids is refused.

use mcp_testkit as support;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use mcp_types::*;

/// Decodes `value` as `T` (every member recognized), re-encodes it, and validates the output
/// against `def` in each of `revisions`.
fn check<T: DeserializeOwned + Serialize>(value: Value, def: &str, revisions: &[&str]) -> T {
    mcp_types::__private::take_unknown_members();
    let typed: T = serde_json::from_value(value.clone()).unwrap_or_else(|e| panic!("{def}: {e}\n{value}"));
    assert_eq!(
        mcp_types::__private::take_unknown_members(),
        Vec::<String>::new(),
        "{def}: unmodelled members"
    );
    let mut back = serde_json::to_value(&typed).unwrap();
    // Typed messages always carry `params` (`{}` when there is nothing in it), which every
    // revision allows; the input may have omitted it.
    if value.get("params").is_none() && back.get("params") == Some(&json!({})) {
        back.as_object_mut().unwrap().remove("params");
        support::assert_valid(revisions[0], def, &serde_json::to_value(&typed).unwrap());
    }
    assert!(support::json_eq(&back, &value), "{def} round trip:\n{value}\n{back}");
    for rev in revisions {
        support::assert_valid(rev, def, &back);
    }
    typed
}

const ALL_LEGACY: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

#[test]
fn handshake_messages_validate_in_every_legacy_revision() {
    for rev in ALL_LEGACY {
        let req: InitializeRequest = check(
            json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
                "protocolVersion": rev,
                "capabilities": {"roots":{"listChanged":true},"sampling":{}},
                "clientInfo": {"name":"c","version":"1"}}}),
            "InitializeRequest",
            &[rev],
        );
        assert_eq!(req.params.protocol_version, *rev);
        let result: InitializeResult = check(
            json!({"protocolVersion": rev, "capabilities":{"tools":{"listChanged":true},"logging":{},"prompts":{},"resources":{"subscribe":true}},
                   "serverInfo":{"name":"s","version":"2"}, "instructions":"be nice"}),
            "InitializeResult",
            &[rev],
        );
        assert_eq!(result.server_info.name, "s");
        check::<InitializedNotification>(
            json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
            "InitializedNotification",
            &[rev],
        );
        check::<PingRequest>(json!({"jsonrpc":"2.0","id":"p","method":"ping"}), "PingRequest", &[rev]);
        check::<SetLevelRequest>(
            json!({"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}),
            "SetLevelRequest",
            &[rev],
        );
        check::<SubscribeRequest>(
            json!({"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"test://watched"}}),
            "SubscribeRequest",
            &[rev],
        );
        check::<UnsubscribeRequest>(
            json!({"jsonrpc":"2.0","id":4,"method":"resources/unsubscribe","params":{"uri":"test://watched"}}),
            "UnsubscribeRequest",
            &[rev],
        );
        check::<RootsListChangedNotification>(
            json!({"jsonrpc":"2.0","method":"notifications/roots/list_changed"}),
            "RootsListChangedNotification",
            &[rev],
        );
        check::<LegacyListRootsRequest>(
            json!({"jsonrpc":"2.0","id":5,"method":"roots/list"}),
            "ListRootsRequest",
            &[rev],
        );
        check::<LegacyCreateMessageRequest>(
            json!({"jsonrpc":"2.0","id":6,"method":"sampling/createMessage","params":{
                "messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"maxTokens":100}}),
            "CreateMessageRequest",
            &[rev],
        );
        check::<CreateMessageResult>(
            json!({"role":"assistant","content":{"type":"text","text":"Paris"},"model":"m","stopReason":"endTurn"}),
            "CreateMessageResult",
            &[rev],
        );
        // Results without resultType, as legacy clients expect.
        let listed = check::<ListToolsResult>(
            json!({"tools":[{"name":"echo","description":"Echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}]}),
            "ListToolsResult",
            &[rev],
        );
        assert!(listed.result_type.is_none());
        check::<CallToolResult>(
            json!({"content":[{"type":"text","text":"x"}],"isError":true}),
            "CallToolResult",
            &[rev],
        );
    }
}

#[test]
fn revision_specific_members_validate_where_they_exist() {
    // structuredContent / outputSchema / resource_link / elicitation: 2025-06-18 on.
    for rev in ["2025-06-18", "2025-11-25"] {
        check::<CallToolResult>(
            json!({"content":[{"type":"resource_link","uri":"file:///a","name":"a"}],"structuredContent":{"n":1}}),
            "CallToolResult",
            &[rev],
        );
        check::<LegacyElicitRequest>(
            json!({"jsonrpc":"2.0","id":7,"method":"elicitation/create","params":{"message":"Name?",
                "requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}),
            "ElicitRequest",
            &[rev],
        );
        check::<ElicitResult>(json!({"action":"accept","content":{"name":"Ada"}}), "ElicitResult", &[rev]);
    }
    // Audio and tool annotations: 2025-03-26 on.
    for rev in ["2025-03-26", "2025-06-18", "2025-11-25"] {
        check::<AudioContent>(
            json!({"type":"audio","data":"AAAA","mimeType":"audio/wav"}),
            "AudioContent",
            &[rev],
        );
        check::<Tool>(
            json!({"name":"t","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"idempotentHint":true}}),
            "Tool",
            &[rev],
        );
    }
    // 2025-11-25 only: URL elicitation, its completion notification, the -32042 error, tasks.
    let rev = "2025-11-25";
    check::<LegacyElicitRequest>(
        json!({"jsonrpc":"2.0","id":8,"method":"elicitation/create","params":{"mode":"url","message":"Sign in",
            "url":"https://example.com/auth","elicitationId":"e-1"}}),
        "ElicitRequest",
        &[rev],
    );
    check::<ElicitationCompleteNotification>(
        json!({"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":{"elicitationId":"e-1"}}),
        "ElicitationCompleteNotification",
        &[rev],
    );
    check::<UrlElicitationRequiredError>(
        json!({"jsonrpc":"2.0","id":9,"error":{"code":-32042,"message":"URL elicitation required",
            "data":{"elicitations":[{"mode":"url","message":"Sign in","url":"https://example.com/auth","elicitationId":"e-2"}]}}}),
        "URLElicitationRequiredError",
        &[rev],
    );
    check::<CallToolRequest>(
        json!({"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"slow","arguments":{},"task":{"ttl":60000}}}),
        "CallToolRequest",
        &[rev],
    );
    check::<CreateTaskResult>(
        json!({"task":{"taskId":"t1","status":"working","createdAt":"2025-11-25T00:00:00Z","lastUpdatedAt":"2025-11-25T00:00:00Z","ttl":null,"pollInterval":500}}),
        "CreateTaskResult",
        &[rev],
    );
    check::<GetTaskRequest>(
        json!({"jsonrpc":"2.0","id":11,"method":"tasks/get","params":{"taskId":"t1"}}),
        "GetTaskRequest",
        &[rev],
    );
    check::<TaskStatusNotification>(
        json!({"jsonrpc":"2.0","method":"notifications/tasks/status","params":{"taskId":"t1","status":"completed",
            "createdAt":"2025-11-25T00:00:00Z","lastUpdatedAt":"2025-11-25T00:01:00Z","ttl":60000}}),
        "TaskStatusNotification",
        &[rev],
    );
    check::<Tool>(
        json!({"name":"slow","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"},"icons":[{"src":"https://example.com/i.png","sizes":["48x48"]}]}),
        "Tool",
        &[rev],
    );
}

#[test]
fn legacy_error_codes_and_batches() {
    let not_found =
        ErrorObject::resource_not_found(ProtocolVersion::V2025_11_25.resource_not_found_code(), "test://x");
    let response = Response::error(RequestId::Number(1), not_found);
    let value: Value = serde_json::from_slice(&Message::Response(response).to_vec()).unwrap();
    assert_eq!(value["error"]["code"], -32002);
    assert_eq!(value["error"]["data"]["uri"], "test://x");
    support::assert_valid("2025-11-25", "JSONRPCErrorResponse", &value);

    // 2025-03-26 alone has batches: what its schema calls JSONRPCBatchRequest decodes here
    // element by element, and is refused under any other revision.
    let batch = json!([
        {"jsonrpc":"2.0","id":1,"method":"tools/list"},
        {"jsonrpc":"2.0","method":"notifications/initialized"}
    ]);
    support::assert_valid("2025-03-26", "JSONRPCBatchRequest", &batch);
    let bytes = serde_json::to_vec(&batch).unwrap();
    for v in ProtocolVersion::ALL {
        let options = DecodeOptions::new().with_allow_batch(v.allows_batches());
        match decode(&bytes, options) {
            Ok(Incoming::Batch(items)) => {
                assert_eq!(v, ProtocolVersion::V2025_03_26);
                assert!(items.iter().all(Result::is_ok));
            }
            Err(e) => {
                assert_ne!(v, ProtocolVersion::V2025_03_26);
                assert_eq!(e.kind, DecodeErrorKind::BatchNotAllowed);
            }
            Ok(Incoming::Single(_)) => panic!("a batch decoded as one message"),
        }
    }
}

#[test]
fn modern_errors_validate_with_their_data() {
    let cases = [
        (
            ErrorObject::unsupported_version(vec!["2026-07-28".into(), "2025-11-25".into()], "v999.0.0"),
            "UnsupportedProtocolVersionError",
        ),
        (
            ErrorObject::missing_client_capability(ClientCapabilities {
                sampling: Some(Default::default()),
                ..Default::default()
            }),
            "MissingRequiredClientCapabilityError",
        ),
        (ErrorObject::header_mismatch("Mcp-Name does not match params.name"), "HeaderMismatchError"),
    ];
    for (error, def) in cases {
        let response = JsonRpcErrorResponse { id: Some(RequestId::Number(3)), error };
        let value = serde_json::to_value(&response).unwrap();
        support::assert_valid("2026-07-28", def, &value);
    }
    let e = ErrorObject::unsupported_version(vec!["2026-07-28".into()], "x");
    let data: UnsupportedProtocolVersionData = e.data_as().unwrap();
    assert_eq!(data.requested, "x");
    let e = ErrorObject::missing_client_capability(ClientCapabilities {
        sampling: Some(Default::default()),
        ..Default::default()
    });
    assert_eq!(e.data.unwrap(), json!({"requiredCapabilities":{"sampling":{}}}));
}
