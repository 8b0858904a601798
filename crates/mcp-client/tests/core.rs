//! The client core against a scripted server (tests/support): era detection, the version retry,
//! MRTR, cancellation, timeouts, progress, legacy server requests, header mirroring, caching,
//! output validation, retries and transport failures. Every assertion is on what the client did
//! on the wire or returned.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_client::transport::{Inbound, OutgoingKind, TransportError, TransportKind};
use mcp_client::{ClientBuilder, ClientError, Handlers, Outcome, RequestOptions};
use mcp_types::{ElicitAction, ElicitRequestParams, ElicitResult, Era, ProtocolVersion};
use serde_json::{Value, json};
use support::{Fake, Reply, discover_result, error, initialize_result, result, text_result};

fn builder() -> ClientBuilder {
    ClientBuilder::new("test-client", "1.0.0").probe_timeout(Duration::from_millis(300))
}

fn accept_all() -> Handlers {
    Handlers::default().on_elicit(false, |p: ElicitRequestParams| async move {
        let mut r = ElicitResult::new(ElicitAction::Accept);
        let name = match &p {
            ElicitRequestParams::Form(f) => f.message.clone(),
            _ => String::new(),
        };
        r.content = serde_json::from_value(json!({"confirmed": true, "asked": name})).ok();
        Ok(r)
    })
}

/// A modern server: discover, tools/list with two tools, tools/call echoing its arguments.
fn modern_script() -> support::Script {
    Box::new(|s| match s.method() {
        Some("server/discover") => result(s.id(), discover_result()),
        Some("tools/list") => result(
            s.id(),
            json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "tools": [
                {"name": "echo", "inputSchema": {"type": "object", "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"},
                    "n": {"type": "integer", "x-mcp-header": "N"},
                    "text": {"type": "string"}}}},
                {"name": "bad", "inputSchema": {"type": "object", "properties": {
                    "o": {"type": "object", "x-mcp-header": "O"}}}},
                {"name": "typed", "inputSchema": {"type": "object"},
                 "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}
            ]}),
        ),
        Some("tools/call") => {
            let args = s.params()["arguments"].clone();
            match s.params()["name"].as_str() {
                Some("typed") => result(s.id(), json!({"content": [], "structuredContent": args})),
                _ => result(s.id(), text_result(&args.to_string())),
            }
        }
        Some(_) if s.body.get("id").is_some() => error(s.id(), -32601, "Method not found", None),
        _ => Reply::Nothing,
    })
}

#[tokio::test]
async fn stdio_probe_finds_a_modern_server_and_every_request_carries_meta() {
    let (fake, rx) = Fake::new(TransportKind::Stdio, modern_script());
    let client = builder().connect_transport(fake.clone(), rx, "fake").await.unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    assert_eq!(client.era(), Era::Modern);
    assert_eq!(client.server_info().unwrap().name, "fake");
    assert_eq!(client.instructions().as_deref(), Some("be nice"));
    client.list_all_tools().await.unwrap();
    for s in fake.sent() {
        let meta = &s.params()["_meta"];
        assert_eq!(meta["io.modelcontextprotocol/protocolVersion"], "2026-07-28", "{:?}", s.body);
        assert!(meta["io.modelcontextprotocol/clientCapabilities"].is_object());
        assert_eq!(meta["io.modelcontextprotocol/clientInfo"]["name"], "test-client");
        assert_eq!(s.version, Some(ProtocolVersion::V2026_07_28));
    }
    assert!(fake.sent_with_method("initialize").is_empty());
}

#[tokio::test]
async fn a_calls_meta_is_the_clients_own_whether_made_once_or_per_call() {
    // A call without `_meta` entries of its own sends the client's `_meta` made once per
    // version; one with entries builds it per call: both carry the same client members.
    let (fake, rx) = Fake::new(TransportKind::Stdio, modern_script());
    let client = builder().connect_transport(fake.clone(), rx, "fake").await.unwrap();
    let params = mcp_types::CallToolRequestParams::new("echo");
    client.call_tool("echo", json!({"a": 1})).await.unwrap();
    client.call_tool("echo", json!({"a": 2})).await.unwrap();
    client.call_tool_with(&params, &RequestOptions::new().meta("x", json!(7))).await.unwrap();
    let metas: Vec<Value> =
        fake.sent_with_method("tools/call").iter().map(|s| s.params()["_meta"].clone()).collect();
    assert_eq!(metas.len(), 3);
    assert_eq!(metas[0], metas[1]);
    let mut own = metas[2].clone();
    assert_eq!(own.as_object_mut().unwrap().remove("x"), Some(json!(7)));
    assert_eq!(metas[0], own, "the same client members either way");
    assert_eq!(metas[0]["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
    assert_eq!(metas[0]["io.modelcontextprotocol/clientInfo"]["name"], "test-client");
    assert!(metas[0]["io.modelcontextprotocol/clientCapabilities"].is_object());
}

fn legacy_script(answer_probe: bool) -> support::Script {
    Box::new(move |s| match s.method() {
        Some("server/discover") if answer_probe => error(s.id(), -32601, "Method not found", None),
        Some("server/discover") => Reply::Nothing,
        Some("initialize") => result(s.id(), initialize_result("2025-06-18")),
        Some("tools/list") => {
            result(s.id(), json!({"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}))
        }
        Some("tools/call") => result(s.id(), json!({"content": [{"type": "text", "text": "legacy"}]})),
        Some("ping") => result(s.id(), json!({})),
        _ => Reply::Nothing,
    })
}

#[tokio::test]
async fn stdio_probe_falls_back_to_initialize_on_any_other_error() {
    let (fake, rx) = Fake::new(TransportKind::Stdio, legacy_script(true));
    let client = builder().connect_transport(fake.clone(), rx, "fake").await.unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_06_18);
    assert_eq!(client.server_info().unwrap().name, "fake-legacy");
    let init = fake.sent_with_method("initialize").pop().unwrap();
    assert_eq!(init.params()["protocolVersion"], "2025-11-25");
    assert_eq!(init.version, None, "initialize carries no MCP-Protocol-Version");
    let initialized = fake.sent_with_method("notifications/initialized").pop().unwrap();
    assert_eq!(initialized.version, Some(ProtocolVersion::V2025_06_18));
    assert_eq!(*fake.sessions.lock().unwrap(), vec![ProtocolVersion::V2025_06_18]);
    // Legacy requests carry no modern _meta and no resultType is needed.
    let r = client.call_tool("t", json!({})).await.unwrap();
    assert_eq!(r.content.len(), 1);
    let call = fake.sent_with_method("tools/call").pop().unwrap();
    assert!(call.params().get("_meta").is_none());
    client.ping().await.unwrap();
}

#[tokio::test]
async fn stdio_probe_falls_back_to_initialize_when_unanswered() {
    let (fake, rx) = Fake::new(TransportKind::Stdio, legacy_script(false));
    let client = builder().connect_transport(fake.clone(), rx, "fake").await.unwrap();
    assert_eq!(client.era(), Era::Legacy);
    // The probe was not cancelled with a notification (nothing before initialize but the probe).
    assert!(fake.sent_with_method("notifications/cancelled").is_empty());
}

#[tokio::test]
async fn unsupported_version_error_is_retried_with_a_supported_version() {
    let first = Arc::new(AtomicUsize::new(0));
    let seen = first.clone();
    let (fake, rx) = Fake::new(
        TransportKind::StreamableHttp,
        Box::new(move |s| {
            if s.method() == Some("server/discover") && seen.fetch_add(1, Ordering::SeqCst) == 0 {
                return error(
                    s.id(),
                    -32022,
                    "Unsupported protocol version",
                    Some(json!({"supported": ["2026-07-28"], "requested": "2026-07-28"})),
                );
            }
            match s.method() {
                Some("server/discover") => result(s.id(), discover_result()),
                _ => Reply::Nothing,
            }
        }),
    );
    let client = builder().connect_transport(fake.clone(), rx, "fake").await.unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2026_07_28);
    let probes = fake.sent_with_method("server/discover");
    assert_eq!(probes.len(), 2, "retried once");
    assert_ne!(probes[0].id(), probes[1].id());
}

#[tokio::test]
async fn a_server_supporting_only_legacy_versions_gets_initialize_with_one_of_them() {
    let (fake, rx) = Fake::new(
        TransportKind::Stdio,
        Box::new(|s| match s.method() {
            Some("server/discover") => error(
                s.id(),
                -32022,
                "Unsupported protocol version",
                Some(json!({"supported": ["2025-03-26"], "requested": "2026-07-28"})),
            ),
            Some("initialize") => {
                result(s.id(), initialize_result(s.params()["protocolVersion"].as_str().unwrap()))
            }
            _ => Reply::Nothing,
        }),
    );
    let client = builder().connect_transport(fake.clone(), rx, "fake").await.unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_03_26);
}

#[tokio::test]
async fn no_common_version_is_an_error_that_says_what_the_server_supports() {
    let (fake, rx) = Fake::new(
        TransportKind::Stdio,
        Box::new(|s| {
            error(
                s.id(),
                -32022,
                "Unsupported",
                Some(json!({"supported": ["1999-01-01"], "requested": "2026-07-28"})),
            )
        }),
    );
    let e = builder().connect_transport(fake, rx, "fake").await.unwrap_err();
    match e {
        ClientError::NoCommonVersion { supported } => assert_eq!(supported, vec!["1999-01-01"]),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn mrtr_fulfils_input_requests_and_echoes_request_state_byte_exact() {
    let state = r#"{"nonce":"a\u00e9b","n":1.50}"#;
    let (fake, rx) = Fake::new(
        TransportKind::StreamableHttp,
        Box::new(move |s| match s.method() {
            Some("server/discover") => result(s.id(), discover_result()),
            Some("tools/call") => match s.params()["name"].as_str() {
                Some("ask") if s.params().get("inputResponses").is_none() => result(
                    s.id(),
                    json!({"resultType": "input_required", "requestState": state, "inputRequests": {
                        "confirm": {"method": "elicitation/create", "params": {"message": "Sure?",
                            "requestedSchema": {"type": "object", "properties": {"confirmed": {"type": "boolean"}}}}}}}),
                ),
                Some("ask") => result(s.id(), text_result("done")),
                Some("plain") => {
                    result(s.id(), json!({"content": [{"type": "text", "text": "no resultType"}]}))
                }
                _ => Reply::Nothing,
            },
            Some("tools/list") => result(s.id(), json!({"tools": []})),
            _ => Reply::Nothing,
        }),
    );
    let client = builder()
        .handlers(accept_all())
        .discover_on_connect(true)
        .connect_transport(fake.clone(), rx, "fake")
        .await
        .unwrap();
    let r = client.call_tool("ask", json!({})).await.unwrap();
    assert_eq!(r.content.len(), 1);
    let calls = fake.sent_with_method("tools/call");
    assert_eq!(calls.len(), 2);
    assert_ne!(calls[0].id(), calls[1].id(), "the retry has a new id");
    assert_eq!(calls[1].params()["requestState"], state);
    assert_eq!(calls[1].params()["inputResponses"]["confirm"]["action"], "accept");
    assert_eq!(calls[1].params()["inputResponses"]["confirm"]["content"]["asked"], "Sure?");
    // The client declared elicitation because a handler is set.
    assert!(
        calls[0].params()["_meta"]["io.modelcontextprotocol/clientCapabilities"]["elicitation"].is_object()
    );
    // A later unrelated call carries neither field; a result without resultType is complete.
    client.call_tool("plain", json!({})).await.unwrap();
    let last = fake.sent_with_method("tools/call").pop().unwrap();
    assert!(last.params().get("inputResponses").is_none());
    assert!(last.params().get("requestState").is_none());
    assert_eq!(fake.sent_with_method("tools/call").len(), 3, "no retry of a complete result");
}

#[tokio::test]
async fn mrtr_without_request_state_retries_without_it_and_rounds_are_bounded() {
    let (fake, rx) = Fake::new(
        TransportKind::Stdio,
        Box::new(|s| match s.method() {
            Some("server/discover") => result(s.id(), discover_result()),
            Some("tools/call") => result(
                s.id(),
                json!({"resultType": "input_required", "inputRequests": {"r": {"method": "roots/list"}}}),
            ),
            _ => Reply::Nothing,
        }),
    );
    let handlers = Handlers::default().on_roots(false, || async {
        Ok(serde_json::from_value(json!({"roots": [{"uri": "file:///tmp"}]})).unwrap())
    });
    let client = builder()
        .handlers(handlers)
        .max_input_rounds(3)
        .connect_transport(fake.clone(), rx, "fake")
        .await
        .unwrap();
    let e = client.call_tool("loop", json!({})).await.unwrap_err();
    assert!(matches!(e, ClientError::InputRequired(_)), "{e:?}");
    let calls = fake.sent_with_method("tools/call");
    assert_eq!(calls.len(), 4, "first try and three rounds");
    for c in &calls[1..] {
        assert!(c.params().get("requestState").is_none());
        assert_eq!(c.params()["inputResponses"]["r"]["roots"][0]["uri"], "file:///tmp");
    }
}

#[tokio::test]
async fn input_the_client_cannot_give_fails_without_retrying() {
    let (fake, rx) = Fake::new(
        TransportKind::Stdio,
        Box::new(|s| match s.method() {
            Some("server/discover") => result(s.id(), discover_result()),
            Some("tools/call") => result(
                s.id(),
                json!({"resultType": "input_required", "inputRequests": {"s": {"method": "sampling/createMessage",
                    "params": {"messages": [], "maxTokens": 10}}}}),
            ),
            _ => Reply::Nothing,
        }),
    );
    let client = builder().connect_transport(fake.clone(), rx, "fake").await.unwrap();
    let e = client.call_tool("x", json!({})).await.unwrap_err();
    assert!(matches!(e, ClientError::InputRequired(_)));
    assert_eq!(e.outcome(), Outcome::NotExecuted);
    assert_eq!(fake.sent_with_method("tools/call").len(), 1);
}

#[tokio::test]
async fn http_headers_are_mirrored_and_invalid_tools_dropped() {
    let (fake, rx) = Fake::new(TransportKind::StreamableHttp, modern_script());
    let client = builder().connect_transport(fake.clone(), rx, "fake").await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["echo", "typed"], "the tool with an x-mcp-header on an object is dropped");
    client.call_tool("echo", json!({"region": "eu west", "n": 7, "text": "hi"})).await.unwrap();
    let call = fake.sent_with_method("tools/call").pop().unwrap();
    match call.kind {
        OutgoingKind::Request { headers, method, .. } => {
            assert_eq!(method, "tools/call");
            assert_eq!(headers.name.as_deref(), Some("echo"));
            let mut params = headers.params.clone();
            params.sort();
            assert_eq!(params, vec![("N".to_string(), "7".to_string()), ("Region".into(), "eu west".into())]);
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_call_before_any_listing_learns_the_mirrors_first_on_http() {
    let (fake, rx) = Fake::new(TransportKind::StreamableHttp, modern_script());
    let client = builder().connect_transport(fake.clone(), rx, "fake").await.unwrap();
    client.call_tool("echo", json!({"region": "x"})).await.unwrap();
    assert_eq!(fake.sent_with_method("tools/list").len(), 1);
    let call = fake.sent_with_method("tools/call").pop().unwrap();
    let OutgoingKind::Request { headers, .. } = call.kind else { panic!() };
    assert_eq!(headers.params, vec![("Region".to_string(), "x".to_string())]);
}

#[tokio::test]
async fn structured_content_is_checked_against_the_output_schema() {
    let (fake, rx) = Fake::new(TransportKind::Stdio, modern_script());
    let client = builder().connect_transport(fake.clone(), rx, "fake").await.unwrap();
    client.list_all_tools().await.unwrap();
    client.call_tool("typed", json!({"n": 3})).await.unwrap();
    let e = client.call_tool("typed", json!({"n": "three"})).await.unwrap_err();
    assert!(matches!(e, ClientError::InvalidStructuredContent { .. }), "{e:?}");
}

#[tokio::test]
async fn dropping_a_call_cancels_it_by_notification_on_stdio_and_by_stream_on_http() {
    for kind in [TransportKind::Stdio, TransportKind::StreamableHttp] {
        let (fake, rx) = Fake::new(
            kind,
            Box::new(|s| match s.method() {
                Some("server/discover") => result(s.id(), discover_result()),
                Some("tools/list") => result(s.id(), json!({"tools": []})),
                _ => Reply::Nothing,
            }),
        );
        let client = builder().connect_transport(fake.clone(), rx, "fake").await.unwrap();
        let params = mcp_types::CallToolRequestParams::new("slow");
        let options = RequestOptions::new().timeout(Duration::from_millis(100));
        let e = client.call_tool_with(&params, &options).await.unwrap_err();
        assert!(matches!(e, ClientError::Timeout(_)));
        assert_eq!(e.outcome(), Outcome::Unknown);
        let sent = fake.wait_for("tools/call").await;
        let id: mcp_types::RequestId = serde_json::from_value(sent.id()).unwrap();
        assert!(fake.abandoned.lock().unwrap().contains(&id));
        tokio::time::sleep(Duration::from_millis(50)).await;
        let cancels = fake.sent_with_method("notifications/cancelled");
        match kind {
            TransportKind::Stdio => {
                assert_eq!(cancels.len(), 1);
                assert_eq!(cancels[0].params()["requestId"], sent.id());
            }
            _ => assert!(cancels.is_empty(), "modern HTTP cancels by closing the stream"),
        }
        // A late answer to the cancelled request is ignored, and the client keeps working.
        fake.push(json!({"jsonrpc": "2.0", "id": sent.id(), "result": text_result("late")}));
    }
}

// On a paused clock: the timeouts and the progress race on time alone, which a loaded
// machine must not decide.
#[tokio::test(start_paused = true)]
async fn progress_is_reported_and_can_keep_a_call_alive() {
    let (fake, rx) = Fake::new(
        TransportKind::Stdio,
        Box::new(|s| match s.method() {
            Some("server/discover") => result(s.id(), discover_result()),
            _ => Reply::Nothing,
        }),
    );
    let client = builder().connect_transport(fake.clone(), rx, "fake").await.unwrap();
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    let options = RequestOptions::new()
        .timeout(Duration::from_millis(300))
        .reset_timeout_on_progress(true)
        .on_progress(move |p| seen2.lock().unwrap().push(p.progress));
    let params = mcp_types::CallToolRequestParams::new("long");
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool_with(&params, &options).await }
    });
    let sent = fake.wait_for("tools/call").await;
    let token = sent.params()["_meta"]["progressToken"].clone();
    assert!(!token.is_null(), "a progressToken was sent");
    for i in 1..=4 {
        tokio::time::sleep(Duration::from_millis(150)).await;
        fake.push(json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": token, "progress": i, "total": 4}}));
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    fake.push(json!({"jsonrpc": "2.0", "id": sent.id(), "result": text_result("ok")}));
    let r = call.await.unwrap().unwrap();
    assert_eq!(r.content.len(), 1);
    assert_eq!(*seen.lock().unwrap(), vec![1.0, 2.0, 3.0, 4.0]);
}

#[tokio::test]
async fn legacy_server_requests_are_answered_by_the_same_handlers() {
    let (fake, rx) = Fake::new(TransportKind::StreamableHttp, legacy_script(true));
    let client = builder()
        .handlers(accept_all())
        .pin_version(ProtocolVersion::V2025_11_25)
        .connect_transport(fake.clone(), rx, "fake")
        .await
        .unwrap();
    assert_eq!(client.era(), Era::Legacy);
    fake.push(json!({"jsonrpc": "2.0", "id": "s1", "method": "elicitation/create",
        "params": {"message": "Name?", "requestedSchema": {"type": "object", "properties": {}}}}));
    fake.push(json!({"jsonrpc": "2.0", "id": "s2", "method": "ping"}));
    fake.push(json!({"jsonrpc": "2.0", "id": "s3", "method": "sampling/createMessage",
        "params": {"messages": [], "maxTokens": 5}}));
    for _ in 0..200 {
        if fake.sent().iter().filter(|s| matches!(s.kind, OutgoingKind::Response)).count() == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let responses: Vec<_> =
        fake.sent().into_iter().filter(|s| matches!(s.kind, OutgoingKind::Response)).collect();
    assert_eq!(responses.len(), 3);
    let by_id = |id: &str| responses.iter().find(|r| r.body["id"] == id).unwrap().body.clone();
    assert_eq!(by_id("s1")["result"]["action"], "accept");
    assert_eq!(by_id("s1")["result"]["content"]["asked"], "Name?");
    assert_eq!(by_id("s2")["result"], json!({}));
    assert_eq!(by_id("s3")["error"]["code"], -32601, "no sampling handler");
    assert!(responses.iter().all(|r| r.version == Some(ProtocolVersion::V2025_06_18)));
}

#[tokio::test]
async fn a_crash_fails_pending_calls_at_once_with_an_unknown_outcome() {
    let (fake, rx) = Fake::new(
        TransportKind::Stdio,
        Box::new(|s| match s.method() {
            Some("server/discover") => result(s.id(), discover_result()),
            _ => Reply::Nothing,
        }),
    );
    let client = builder().connect_transport(fake.clone(), rx, "fake").await.unwrap();
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("slow", json!({})).await }
    });
    fake.wait_for("tools/call").await;
    fake.push_event(Inbound::Closed(TransportError::Exited("signal 9".into())));
    let e = tokio::time::timeout(Duration::from_secs(5), call).await.expect("prompt").unwrap().unwrap_err();
    assert_eq!(e.outcome(), Outcome::Unknown, "{e:?}");
    // Later calls fail at once, never executed.
    let e = tokio::time::timeout(Duration::from_secs(5), client.call_tool("x", json!({})))
        .await
        .expect("prompt")
        .unwrap_err();
    assert_eq!(e.outcome(), Outcome::NotExecuted, "{e:?}");
}

#[tokio::test]
async fn a_restarted_server_gets_a_new_handshake_before_the_next_call() {
    let (fake, rx) = Fake::new(TransportKind::Stdio, legacy_script(true));
    let client = builder().connect_transport(fake.clone(), rx, "fake").await.unwrap();
    assert_eq!(fake.sent_with_method("initialize").len(), 1);
    fake.push_event(Inbound::Restarted { error: TransportError::Exited("exit 1".into()) });
    tokio::time::sleep(Duration::from_millis(50)).await;
    client.call_tool("t", json!({})).await.unwrap();
    assert_eq!(fake.sent_with_method("initialize").len(), 2);
}

#[tokio::test]
async fn an_expired_legacy_session_is_initialized_again_and_the_call_retried() {
    let expired = Arc::new(AtomicUsize::new(0));
    let count = expired.clone();
    let (fake, rx) = Fake::new(
        TransportKind::StreamableHttp,
        Box::new(move |s| match s.method() {
            Some("tools/list") if count.fetch_add(1, Ordering::SeqCst) == 0 => {
                Reply::Fail(TransportError::Http {
                    status: 404,
                    content_type: None,
                    www_authenticate: None,
                    authorization: None,
                    body: Default::default(),
                })
            }
            Some("initialize") => result(s.id(), initialize_result("2025-11-25")),
            Some("tools/list") => result(s.id(), json!({"tools": []})),
            _ => Reply::Nothing,
        }),
    );
    let client = builder()
        .pin_version(ProtocolVersion::V2025_11_25)
        .connect_transport(fake.clone(), rx, "fake")
        .await
        .unwrap();
    client.list_all_tools().await.unwrap();
    assert_eq!(*fake.resets.lock().unwrap(), 1);
    assert_eq!(fake.sent_with_method("initialize").len(), 2);
    assert_eq!(fake.sent_with_method("tools/list").len(), 2);
}

#[tokio::test]
async fn http_probe_answered_400_without_modern_error_means_legacy() {
    let (fake, rx) = Fake::new(
        TransportKind::StreamableHttp,
        Box::new(|s| {
            match s.method() {
            Some("server/discover") => Reply::Fail(TransportError::Http {
                status: 400,
                content_type: Some("application/json".into()),
                www_authenticate: None,
                authorization: None,
                body: bytes::Bytes::from_static(
                    br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}"#,
                ),
            }),
            Some("initialize") => result(s.id(), initialize_result("2025-11-25")),
            _ => Reply::Nothing,
        }
        }),
    );
    let client = builder().connect_transport(fake.clone(), rx, "fake").await.unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_11_25);
}

#[tokio::test]
async fn http_probe_answered_400_with_unsupported_version_retries_instead_of_falling_back() {
    let n = Arc::new(AtomicUsize::new(0));
    let count = n.clone();
    let (fake, rx) = Fake::new(
        TransportKind::StreamableHttp,
        Box::new(move |s| {
            match s.method() {
            Some("server/discover") if count.fetch_add(1, Ordering::SeqCst) == 0 => Reply::Fail(TransportError::Http {
                status: 400,
                content_type: Some("application/json".into()),
                www_authenticate: None,
                authorization: None,
                body: bytes::Bytes::from(
                    json!({"jsonrpc": "2.0", "id": s.id(), "error": {"code": -32022, "message": "Unsupported",
                        "data": {"supported": ["2026-07-28"], "requested": "2026-07-28"}}})
                    .to_string(),
                ),
            }),
            Some("server/discover") => result(s.id(), discover_result()),
            _ => Reply::Nothing,
        }
        }),
    );
    let client = builder().connect_transport(fake.clone(), rx, "fake").await.unwrap();
    assert_eq!(client.era(), Era::Modern);
    assert!(fake.sent_with_method("initialize").is_empty());
}

#[tokio::test]
async fn cacheable_results_are_reused_until_their_ttl_or_a_change() {
    let (fake, rx) = Fake::new(
        TransportKind::Stdio,
        Box::new(|s| match s.method() {
            Some("server/discover") => result(s.id(), discover_result()),
            Some("prompts/list") => result(
                s.id(),
                json!({"resultType": "complete", "ttlMs": 60000, "cacheScope": "public", "prompts": [{"name": "p"}]}),
            ),
            _ => Reply::Nothing,
        }),
    );
    let client = builder().connect_transport(fake.clone(), rx, "fake").await.unwrap();
    client.list_prompts(None).await.unwrap();
    client.list_prompts(None).await.unwrap();
    assert_eq!(fake.sent_with_method("prompts/list").len(), 1, "second list served from cache");
    fake.push(json!({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"}));
    tokio::time::sleep(Duration::from_millis(50)).await;
    client.list_prompts(None).await.unwrap();
    assert_eq!(fake.sent_with_method("prompts/list").len(), 2, "a change drops the cached page");
}

#[tokio::test]
async fn only_read_only_or_idempotent_tools_are_retried_after_an_unknown_outcome() {
    let (fake, rx) = Fake::new(
        TransportKind::Stdio,
        Box::new(|s| match s.method() {
            Some("server/discover") => result(s.id(), discover_result()),
            Some("tools/list") => result(
                s.id(),
                json!({"resultType": "complete", "ttlMs": 0, "cacheScope": "private", "tools": [
                    {"name": "get", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}},
                    {"name": "post", "inputSchema": {"type": "object"}}]}),
            ),
            Some("tools/call") => Reply::Fail(TransportError::Lost("connection reset".into())),
            _ => Reply::Nothing,
        }),
    );
    let client = builder().connect_transport(fake.clone(), rx, "fake").await.unwrap();
    client.list_all_tools().await.unwrap();
    let e = client.call_tool("post", json!({})).await.unwrap_err();
    assert_eq!(e.outcome(), Outcome::Unknown);
    assert_eq!(fake.sent_with_method("tools/call").len(), 1, "not retried");
    client.call_tool("get", json!({})).await.unwrap_err();
    let calls = fake.sent_with_method("tools/call");
    assert_eq!(calls.len(), 3, "the read-only tool was retried once");
    assert_ne!(calls[1].id(), calls[2].id(), "with a new id");
}

#[tokio::test]
async fn modern_listen_yields_the_acknowledgement_then_tagged_notifications() {
    let (fake, rx) = Fake::new(
        TransportKind::Stdio,
        Box::new(|s| match s.method() {
            Some("server/discover") => result(s.id(), discover_result()),
            Some("subscriptions/listen") => {
                let id = s.id();
                let tag = json!({"io.modelcontextprotocol/subscriptionId": id});
                Reply::Messages(vec![
                    json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                        "params": {"notifications": {"toolsListChanged": true}, "_meta": tag}}),
                    json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {"_meta": tag}}),
                    json!({"jsonrpc": "2.0", "id": id, "result": {"resultType": "complete", "_meta": tag}}),
                ])
            }
            _ => Reply::Nothing,
        }),
    );
    let client = builder().connect_transport(fake.clone(), rx, "fake").await.unwrap();
    let filter = mcp_types::SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() };
    let mut sub = client.listen(filter).await.unwrap();
    match sub.next().await.unwrap() {
        mcp_client::SubscriptionEvent::Acknowledged(f) => assert_eq!(f.tools_list_changed, Some(true)),
        other => panic!("{other:?}"),
    }
    match sub.next().await.unwrap() {
        mcp_client::SubscriptionEvent::Notification(mcp_types::ServerNotification::ToolListChanged(_)) => {}
        other => panic!("{other:?}"),
    }
    assert!(matches!(sub.next().await.unwrap(), mcp_client::SubscriptionEvent::Ended(Ok(()))));
}

#[tokio::test]
async fn pinned_modern_version_never_probes_with_initialize_and_errors_are_typed() {
    let (fake, rx) = Fake::new(
        TransportKind::StreamableHttp,
        Box::new(|s| match s.method() {
            Some("server/discover") => result(s.id(), discover_result()),
            Some("resources/read") => {
                error(s.id(), -32602, "Resource not found", Some(json!({"uri": s.params()["uri"].clone()})))
            }
            _ => Reply::Nothing,
        }),
    );
    let client = builder()
        .pin_version(ProtocolVersion::V2026_07_28)
        .connect_transport(fake.clone(), rx, "fake")
        .await
        .unwrap();
    let e = client.read_resource("file:///nope").await.unwrap_err();
    assert_eq!(e.error_object().unwrap().code, -32602);
    assert_eq!(e.outcome(), Outcome::Answered);
    let read = fake.sent_with_method("resources/read").pop().unwrap();
    let OutgoingKind::Request { headers, .. } = read.kind else { panic!() };
    assert_eq!(headers.name.as_deref(), Some("file:///nope"));
    let _: Value = read.body;
}

#[tokio::test]
async fn a_remembered_era_skips_the_probe_next_time() {
    let cache = mcp_client::EraCache::new();
    let (fake, rx) = Fake::new(TransportKind::Stdio, legacy_script(true));
    builder().era_cache(cache.clone()).connect_transport(fake.clone(), rx, "same-server").await.unwrap();
    assert_eq!(fake.sent_with_method("server/discover").len(), 1);
    let detected = cache.get("same-server").unwrap();
    assert_eq!(detected.version, ProtocolVersion::V2025_06_18);
    assert_eq!(detected.transport, TransportKind::Stdio);

    let (fake, rx) = Fake::new(TransportKind::Stdio, legacy_script(true));
    let client =
        builder().era_cache(cache.clone()).connect_transport(fake.clone(), rx, "same-server").await.unwrap();
    assert_eq!(client.era(), Era::Legacy);
    assert!(fake.sent_with_method("server/discover").is_empty(), "no probe the second time");
    let init = fake.sent_with_method("initialize").pop().unwrap();
    assert_eq!(init.params()["protocolVersion"], "2025-06-18");
}

#[tokio::test]
async fn raw_results_are_the_servers_bytes() {
    // Member order, a number's spelling and unknown members, as a server might write them.
    const CALL: &str = r#"{"z":1,"content":[{"text":"hi","type":"text"}],"n":1.50,"x-vendor":{"b":1,"a":2}}"#;
    const READ: &str = r#"{"contents":[{"uri":"a://b","text":"t"}],"resultType":"complete","_meta":{}}"#;
    let script: support::Script = Box::new(|s| match s.method() {
        Some("server/discover") => result(s.id(), discover_result()),
        Some("tools/call") => Reply::Raw(format!(r#"{{"jsonrpc":"2.0","id":{},"result":{CALL}}}"#, s.id())),
        Some("resources/read") => {
            Reply::Raw(format!(r#"{{"result":{READ},"id":{},"jsonrpc":"2.0"}}"#, s.id()))
        }
        _ => Reply::Nothing,
    });
    let (fake, rx) = Fake::new(TransportKind::Stdio, script);
    let client = builder().connect_transport(fake, rx, "fake").await.unwrap();
    let params = mcp_types::CallToolRequestParams::new("echo");
    let (typed, raw) = client.call_tool_raw_with(&params, &RequestOptions::default()).await.unwrap();
    assert_eq!(raw.get(), CALL);
    assert_eq!(typed.content.len(), 1);
    let params = mcp_types::ReadResourceRequestParams::new("a://b");
    let (typed, raw) =
        client.request_raw::<mcp_types::ReadResource>(&params, &RequestOptions::default()).await.unwrap();
    assert_eq!(raw.get(), READ);
    assert_eq!(typed.contents.len(), 1);
}

/// Fails the test instead of hanging when a timeout under test does not fire.
async fn bounded<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(30), f).await.unwrap_or_else(|_| panic!("{what} hung"))
}

#[tokio::test]
async fn a_send_that_never_completes_times_out_and_is_cancelled() {
    for kind in [TransportKind::Stdio, TransportKind::StreamableHttp] {
        let (fake, rx) = Fake::new(
            kind,
            Box::new(|s| match s.method() {
                Some("server/discover") => result(s.id(), discover_result()),
                Some("tools/list") => result(s.id(), json!({"tools": []})),
                Some("tools/call") => Reply::Hang,
                _ => Reply::Nothing,
            }),
        );
        let client = builder()
            .request_timeout(Some(Duration::from_millis(200)))
            .connect_transport(fake.clone(), rx, "fake")
            .await
            .unwrap();
        let params = mcp_types::CallToolRequestParams::new("stuck");
        // The call's own timeout, then the client's default: both cover the send.
        for options in [RequestOptions::new().timeout(Duration::from_millis(150)), RequestOptions::new()] {
            let e = bounded("the call", client.call_tool_with(&params, &options)).await.unwrap_err();
            assert!(matches!(e, ClientError::Timeout(_)), "{e:?}");
            assert_eq!(e.outcome(), Outcome::Unknown, "the request may have arrived");
        }
        let calls = fake.sent_with_method("tools/call");
        assert_eq!(calls.len(), 2, "a timed-out call is not retried");
        for call in &calls {
            let id: mcp_types::RequestId = serde_json::from_value(call.id()).unwrap();
            assert!(fake.abandoned.lock().unwrap().contains(&id));
        }
        for _ in 0..500 {
            if kind != TransportKind::Stdio || fake.sent_with_method("notifications/cancelled").len() == 2 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let cancelled: Vec<Value> = fake
            .sent_with_method("notifications/cancelled")
            .iter()
            .map(|c| c.params()["requestId"].clone())
            .collect();
        match kind {
            TransportKind::Stdio => assert_eq!(cancelled, vec![calls[0].id(), calls[1].id()]),
            _ => assert!(cancelled.is_empty(), "modern HTTP cancels by dropping the exchange"),
        }
        // The client keeps working.
        bounded("tools/list", client.list_all_tools()).await.unwrap();
    }
}

#[tokio::test]
async fn a_probe_the_server_never_takes_in_fails_the_connection_within_the_probe_timeout() {
    let (fake, rx) = Fake::new(
        TransportKind::StreamableHttp,
        Box::new(|s| match s.method() {
            Some("server/discover") => Reply::Hang,
            _ => Reply::Nothing,
        }),
    );
    // The request timeout is far away: only the probe timeout can end this.
    let connecting = builder().request_timeout(Some(Duration::from_secs(3600))).connect_transport(
        fake.clone(),
        rx,
        "fake",
    );
    let e = bounded("connect", connecting).await.unwrap_err();
    assert!(matches!(e, ClientError::Timeout(t) if t == Duration::from_millis(300)), "{e:?}");
    assert!(fake.sent_with_method("initialize").is_empty(), "a server that took nothing in is not legacy");
}

/// On stdio a probe whose write has not finished when the probe timeout passes is no sign of a
/// dead server (the line is still written; a child slow to start reads it later): the client
/// falls back to `initialize` as after any unanswered probe.
#[tokio::test]
async fn a_stdio_probe_still_being_written_when_it_times_out_falls_back_to_initialize() {
    let (fake, rx) = Fake::new(
        TransportKind::Stdio,
        Box::new(|s| match s.method() {
            Some("server/discover") => Reply::Hang,
            Some("initialize") => result(s.id(), initialize_result("2025-11-25")),
            _ => Reply::Nothing,
        }),
    );
    let connecting = builder().request_timeout(Some(Duration::from_secs(3600))).connect_transport(
        fake.clone(),
        rx,
        "fake",
    );
    let client = bounded("connect", connecting).await.unwrap();
    assert_eq!(client.protocol_version(), ProtocolVersion::V2025_11_25);
    assert_eq!(fake.sent_with_method("initialize").len(), 1);
}

#[tokio::test]
async fn every_step_of_a_legacy_handshake_is_bounded_by_the_request_timeout() {
    for stuck in ["initialize", "notifications/initialized"] {
        let (fake, rx) = Fake::new(
            TransportKind::Stdio,
            Box::new(move |s| match s.method() {
                Some(m) if m == stuck => Reply::Hang,
                Some("server/discover") => error(s.id(), -32601, "Method not found", None),
                Some("initialize") => result(s.id(), initialize_result("2025-06-18")),
                _ => Reply::Nothing,
            }),
        );
        let connecting = builder().request_timeout(Some(Duration::from_millis(200))).connect_transport(
            fake.clone(),
            rx,
            "fake",
        );
        let e = bounded(stuck, connecting).await.unwrap_err();
        assert!(matches!(e, ClientError::Timeout(_)), "{stuck}: {e:?}");
        assert_eq!(fake.sent_with_method(stuck).len(), 1);
    }
}

/// A server that reports progress on every `tools/call` every 20 ms, forever.
fn endless_progress() -> (Arc<Fake>, mcp_client::transport::InboundReceiver, tokio::task::JoinHandle<()>) {
    let (fake, rx) = Fake::new(
        TransportKind::Stdio,
        Box::new(|s| match s.method() {
            Some("server/discover") => result(s.id(), discover_result()),
            _ => Reply::Nothing,
        }),
    );
    let pusher = tokio::spawn({
        let fake = fake.clone();
        async move {
            for i in 0u64.. {
                tokio::time::sleep(Duration::from_millis(20)).await;
                for call in fake.sent_with_method("tools/call") {
                    let token = call.params()["_meta"]["progressToken"].clone();
                    fake.push(json!({"jsonrpc": "2.0", "method": "notifications/progress",
                        "params": {"progressToken": token, "progress": i}}));
                }
            }
        }
    });
    (fake, rx, pusher)
}

// On a paused clock: the timeouts and the progress race on time alone, which a loaded
// machine must not decide.
#[tokio::test(start_paused = true)]
async fn progress_never_extends_a_call_past_its_maximum() {
    let max = Duration::from_millis(600);
    for per_call in [true, false] {
        let (fake, rx, pusher) = endless_progress();
        let mut b = builder();
        if !per_call {
            b = b.max_request_timeout(Some(max));
        }
        let client = b.connect_transport(fake.clone(), rx, "fake").await.unwrap();
        let reported = Arc::new(AtomicUsize::new(0));
        let counter = reported.clone();
        let mut options = RequestOptions::new()
            .timeout(Duration::from_millis(200))
            .reset_timeout_on_progress(true)
            .on_progress(move |_| {
                counter.fetch_add(1, Ordering::Relaxed);
            });
        if per_call {
            options = options.max_timeout(max);
        }
        let params = mcp_types::CallToolRequestParams::new("forever");
        let e = bounded("the call", client.call_tool_with(&params, &options)).await.unwrap_err();
        pusher.abort();
        assert!(matches!(e, ClientError::Timeout(t) if t == max), "the maximum ended it: {e:?}");
        assert!(reported.load(Ordering::Relaxed) > 0, "progress was reported");
        let call = fake.sent_with_method("tools/call").pop().unwrap();
        for _ in 0..500 {
            if !fake.sent_with_method("notifications/cancelled").is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let cancelled = fake.sent_with_method("notifications/cancelled");
        assert_eq!(cancelled[0].params()["requestId"], call.id());
    }
}

#[tokio::test]
async fn no_timeout_lifts_the_clients_maximum() {
    let (fake, rx) = Fake::new(
        TransportKind::Stdio,
        Box::new(|s| match s.method() {
            Some("server/discover") => result(s.id(), discover_result()),
            _ => Reply::Nothing,
        }),
    );
    let client = builder()
        .max_request_timeout(Some(Duration::from_millis(50)))
        .connect_transport(fake.clone(), rx, "fake")
        .await
        .unwrap();
    let call = tokio::spawn({
        let client = client.clone();
        async move {
            let params = mcp_types::CallToolRequestParams::new("slow");
            client.call_tool_with(&params, &RequestOptions::new().no_timeout()).await
        }
    });
    let sent = fake.wait_for("tools/call").await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    fake.push(json!({"jsonrpc": "2.0", "id": sent.id(), "result": text_result("late but fine")}));
    let r = bounded("the call", call).await.unwrap().unwrap();
    assert_eq!(r.content.len(), 1);
}

/// A legacy subscription, and any notification receiver, ends when the connection does:
/// nothing more can arrive, so nobody waits forever.
#[tokio::test]
async fn a_legacy_subscription_ends_when_the_connection_closes() {
    let (fake, rx) = Fake::new(
        TransportKind::Stdio,
        Box::new(|s| match s.method() {
            Some("initialize") => result(s.id(), initialize_result("2025-11-25")),
            _ => Reply::Nothing,
        }),
    );
    let client = builder()
        .pin_version(ProtocolVersion::V2025_11_25)
        .connect_transport(fake.clone(), rx, "fake")
        .await
        .unwrap();
    let mut notifications = client.notifications();
    let filter = mcp_types::SubscriptionFilter { tools_list_changed: Some(true), ..Default::default() };
    let mut sub = client.listen(filter).await.unwrap();
    assert!(matches!(sub.next().await.unwrap(), mcp_client::SubscriptionEvent::Acknowledged(_)));
    fake.push(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}));
    let event = sub.next().await.unwrap();
    assert!(
        matches!(
            event,
            mcp_client::SubscriptionEvent::Notification(mcp_types::ServerNotification::ToolListChanged(_))
        ),
        "{event:?}"
    );
    fake.push_event(Inbound::Closed(TransportError::Lost("server exited".into())));
    let ended =
        tokio::time::timeout(Duration::from_secs(10), sub.next()).await.expect("the subscription ended");
    assert!(matches!(ended, Some(mcp_client::SubscriptionEvent::Ended(Err(_)))), "{ended:?}");
    // Every receiver learns of the end, including one taken after it.
    assert!(notifications.recv().await.is_ok(), "the notification before the end");
    assert!(matches!(notifications.recv().await, Err(tokio::sync::broadcast::error::RecvError::Closed)));
    assert!(matches!(
        client.notifications().recv().await,
        Err(tokio::sync::broadcast::error::RecvError::Closed)
    ));
}
