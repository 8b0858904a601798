use serde_json::json;

use serde::de::DeserializeOwned;

use super::*;
use crate::RequestMethod;

fn round_trip<T: Serialize + DeserializeOwned>(value: JsonValue) -> T {
    let decoded: T = serde_json::from_value(value.clone()).unwrap();
    assert_eq!(serde_json::to_value(&decoded).unwrap(), value);
    decoded
}

#[test]
fn example_form_params_round_trip() {
    let params: ElicitRequestParams = round_trip(json!({
        "mode": "form",
        "message": "Please provide your contact information",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "Your full name"},
                "email": {"type": "string", "format": "email", "description": "Your email address"},
                "age": {"type": "number", "minimum": 18, "description": "Your age"}
            },
            "required": ["name", "email"]
        }
    }));
    let ElicitRequestParams::Form(form) = params else { panic!("not form") };
    assert_eq!(form.mode, Some(ElicitMode::Form));
    let props = &form.requested_schema.properties;
    let PrimitiveSchemaDefinition::String(email) = &props["email"] else { panic!() };
    assert_eq!(email.format, Some(StringFormat::Email));
    let PrimitiveSchemaDefinition::Number(age) = &props["age"] else { panic!() };
    assert_eq!(age.kind, NumberKind::Number);
    assert_eq!(age.minimum.as_ref().and_then(|n| n.as_u64()), Some(18));
}

#[test]
fn form_without_mode_is_form_and_stays_without_mode() {
    // 2025-06-18 shape: no mode, no $schema.
    let params: ElicitRequestParams = round_trip(json!({
        "message": "Please provide your GitHub username",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    }));
    let ElicitRequestParams::Form(form) = &params else { panic!("not form") };
    assert_eq!(form.mode, None);
    assert_eq!(params.mode(), "form");
    assert_eq!(params.message(), Some("Please provide your GitHub username"));
}

#[test]
fn legacy_form_with_meta_task_and_schema_dialect() {
    let params: ElicitRequestParams = round_trip(json!({
        "mode": "form",
        "message": "m",
        "requestedSchema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {}
        },
        "_meta": {"progressToken": "p1"},
        "task": {"ttl": 30000}
    }));
    let ElicitRequestParams::Form(form) = params else { panic!() };
    assert_eq!(form.task.unwrap().ttl, Some(30000));
    assert!(form.meta.unwrap().progress_token.is_some());
    assert_eq!(form.requested_schema.schema.as_deref(), Some("https://json-schema.org/draft/2020-12/schema"));
}

#[test]
fn url_params_both_revisions() {
    let modern: ElicitRequestParams = round_trip(json!({
        "mode": "url",
        "url": "https://mcp.example.com/ui/set_api_key",
        "message": "Please provide your API key to continue."
    }));
    let ElicitRequestParams::Url(url) = modern else { panic!("not url") };
    assert_eq!(url.elicitation_id, None);
    let legacy: ElicitRequestParams = round_trip(json!({
        "mode": "url", "url": "https://x.example/a", "message": "m", "elicitationId": "e-1"
    }));
    let ElicitRequestParams::Url(url) = legacy else { panic!("not url") };
    assert_eq!(url.elicitation_id.as_deref(), Some("e-1"));
    // URL mode without url is an error, not a fallback.
    assert!(serde_json::from_value::<ElicitRequestParams>(json!({"mode": "url", "message": "m"})).is_err());
}

#[test]
fn unknown_mode_kept_and_bad_mode_rejected() {
    let params: ElicitRequestParams = round_trip(json!({"mode": "voice", "message": "say it"}));
    assert!(matches!(params, ElicitRequestParams::Other(_)));
    assert_eq!(params.mode(), "voice");
    assert!(serde_json::from_value::<ElicitRequestParams>(json!({"mode": 1, "message": "m"})).is_err());
    let err = serde_json::from_value::<ElicitRequestParams>(json!({"message": "m"})).unwrap_err();
    assert!(err.to_string().contains("requestedSchema"), "{err}");
}

#[test]
fn duplicate_members_rejected_through_dispatch() {
    let err = serde_json::from_str::<ElicitRequestParams>(
        r#"{"mode":"url","mode":"form","message":"m","url":"u","requestedSchema":{"type":"object","properties":{}}}"#,
    )
    .unwrap_err();
    assert!(err.to_string().contains("duplicate field `mode`"), "{err}");
    let err =
        serde_json::from_str::<PrimitiveSchemaDefinition>(r#"{"type":"string","enum":["a"],"enum":["b"]}"#)
            .unwrap_err();
    assert!(err.to_string().contains("duplicate field `enum`"), "{err}");
}

#[test]
fn primitive_schemas_dispatch_by_shape() {
    let cases = [
        (
            json!({"type": "string", "title": "Display Name", "description": "Description text", "minLength": 3,
                "maxLength": 50, "format": "email", "default": "user@example.com"}),
            "String",
        ),
        (json!({"type": "integer", "minimum": 0, "maximum": 100, "default": 50}), "Number"),
        (json!({"type": "number", "minimum": 0.5, "default": 1.0}), "Number"),
        (json!({"type": "boolean", "title": "Display Name", "default": false}), "Boolean"),
        (json!({"type": "string", "enum": ["Red", "Green", "Blue"], "default": "Red"}), "UntitledSingle"),
        (
            json!({"type": "string", "oneOf": [{"const": "#FF0000", "title": "Red"}], "default": "#FF0000"}),
            "TitledSingle",
        ),
        (
            json!({"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string", "enum": ["Red", "Green"]},
                "default": ["Red"]}),
            "UntitledMulti",
        ),
        (
            json!({"type": "array", "items": {"anyOf": [{"const": "#FF0000", "title": "Red"}]}, "default": ["#FF0000"]}),
            "TitledMulti",
        ),
        (json!({"type": "string", "enum": ["a", "b"], "enumNames": ["A", "B"]}), "Legacy"),
        (json!({"type": "object", "properties": {}}), "Unknown"),
        (json!({"type": "array", "items": {"type": "number"}}), "Unknown"),
    ];
    for (value, expected) in cases {
        let def: PrimitiveSchemaDefinition = round_trip(value.clone());
        let got = match def {
            PrimitiveSchemaDefinition::String(_) => "String",
            PrimitiveSchemaDefinition::Number(_) => "Number",
            PrimitiveSchemaDefinition::Boolean(_) => "Boolean",
            PrimitiveSchemaDefinition::UntitledSingleSelectEnum(_) => "UntitledSingle",
            PrimitiveSchemaDefinition::TitledSingleSelectEnum(_) => "TitledSingle",
            PrimitiveSchemaDefinition::UntitledMultiSelectEnum(_) => "UntitledMulti",
            PrimitiveSchemaDefinition::TitledMultiSelectEnum(_) => "TitledMulti",
            PrimitiveSchemaDefinition::LegacyTitledEnum(_) => "Legacy",
            PrimitiveSchemaDefinition::Unknown(_) => "Unknown",
        };
        assert_eq!(got, expected, "{value}");
    }
    let err = serde_json::from_value::<PrimitiveSchemaDefinition>(json!({"title": "x"})).unwrap_err();
    assert!(err.to_string().contains("missing field `type`"), "{err}");
    // A known shape with a badly typed member is an error.
    assert!(
        serde_json::from_value::<PrimitiveSchemaDefinition>(json!({"type": "string", "minLength": "3"}))
            .is_err()
    );
}

#[test]
fn enum_schema_families() {
    let titled = json!({"type": "string", "oneOf": [{"const": "a", "title": "A"}]});
    let multi = json!({"type": "array", "items": {"type": "string", "enum": ["a"]}});
    let e: EnumSchema = round_trip(titled.clone());
    assert!(matches!(e, EnumSchema::TitledSingleSelect(_)));
    let s: SingleSelectEnumSchema = round_trip(titled);
    let SingleSelectEnumSchema::Titled(t) = s else { panic!() };
    assert_eq!(t.one_of[0].value, "a");
    let m: MultiSelectEnumSchema = round_trip(multi.clone());
    assert!(matches!(m, MultiSelectEnumSchema::Untitled(_)));
    assert!(serde_json::from_value::<SingleSelectEnumSchema>(multi).is_err());
    assert!(serde_json::from_value::<EnumSchema>(json!({"type": "string"})).is_err());
}

#[test]
fn schema_builder_serializes_as_expected() {
    let schema = ElicitationSchema::new()
        .with_property("name", StringSchema { title: Some("Name".into()), ..Default::default() }, true)
        .with_property(
            "color",
            TitledSingleSelectEnumSchema {
                one_of: vec![TitledEnumOption::new("r", "Red")],
                ..Default::default()
            },
            false,
        );
    let value = serde_json::to_value(ElicitRequestFormParams::new("hi", schema)).unwrap();
    assert_eq!(
        value,
        json!({
            "message": "hi",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "title": "Name"},
                    "color": {"type": "string", "oneOf": [{"const": "r", "title": "Red"}]}
                },
                "required": ["name"]
            }
        })
    );
    assert!(serde_json::from_value::<ElicitationSchema>(json!({"type": "array", "properties": {}})).is_err());
}

#[test]
fn elicit_result_values() {
    let result: ElicitResult = round_trip(json!({
        "action": "accept",
        "content": {"name": "Monalisa Octocat", "age": 30, "score": 4.5, "ok": true, "colors": ["Red", "Blue"],
                    "big": 30.0}
    }));
    let content = result.content.as_ref().unwrap();
    assert_eq!(content["name"].as_str(), Some("Monalisa Octocat"));
    assert_eq!(content["age"], ElicitValue::Integer(30));
    assert_eq!(content["score"].as_f64(), Some(4.5));
    assert_eq!(content["big"], ElicitValue::Number(30.0));
    assert_eq!(content["ok"].as_bool(), Some(true));
    assert_eq!(content["colors"].as_strings().unwrap().len(), 2);

    let declined: ElicitResult = round_trip(json!({"action": "decline", "_meta": {"x": 1}}));
    assert_eq!(declined.action, ElicitAction::Decline);
    let other: ElicitResult = round_trip(json!({"action": "snooze"}));
    assert_eq!(other.action, ElicitAction::Other("snooze".into()));
    assert!(serde_json::from_value::<ElicitResult>(json!({"content": {}})).is_err());
    assert!(
        serde_json::from_value::<ElicitResult>(json!({"action": "accept", "content": {"a": {"b": 1}}}))
            .is_err()
    );
    assert!(
        serde_json::from_value::<ElicitResult>(json!({"action": "accept", "content": {"a": [1]}})).is_err()
    );
}

#[test]
fn request_shapes_of_both_eras() {
    assert_eq!(Elicit::METHOD, "elicitation/create");
    let inline: ElicitRequest = round_trip(json!({
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": "Please provide your GitHub username",
            "requestedSchema": {
                "type": "object",
                "properties": {"name": {"type": "string", "title": "GitHub Username", "description": "Your GitHub username"}},
                "required": ["name"]
            }
        }
    }));
    assert!(matches!(inline.params, Some(ElicitRequestParams::Form(_))));
    let legacy: LegacyElicitRequest = round_trip(json!({
        "jsonrpc": "2.0", "id": 7, "method": "elicitation/create",
        "params": {"mode": "url", "url": "https://a.example", "message": "m", "elicitationId": "e"}
    }));
    assert!(matches!(legacy.params, ElicitRequestParams::Url(_)));
}

#[test]
fn completion_notification_and_error_data() {
    let note: ElicitationCompleteNotification = round_trip(json!({
        "jsonrpc": "2.0", "method": "notifications/elicitation/complete", "params": {"elicitationId": "e-1"}
    }));
    assert_eq!(note.params.elicitation_id, "e-1");

    let mut url = ElicitRequestURLParams::new("Authorize", "https://auth.example/x");
    url.elicitation_id = Some("e-2".into());
    let error = UrlElicitationRequiredData::new(vec![url]).into_error("Authorization required");
    let wire = serde_json::to_value(&error).unwrap();
    assert_eq!(
        wire,
        json!({"code": -32042, "message": "Authorization required", "data": {"elicitations": [
            {"mode": "url", "message": "Authorize", "url": "https://auth.example/x", "elicitationId": "e-2"}
        ]}})
    );
    let data: UrlElicitationRequiredData = error.data_as().unwrap();
    assert_eq!(data.elicitations[0].elicitation_id.as_deref(), Some("e-2"));
}
