//! The approval form: how a server (or a gateway) asks a person whether a tool may run, and how
//! a client recognises and answers that question — one shape for both sides.
//!
//! It is an ordinary form elicitation with one required boolean field, [`APPROVE_FIELD`]; the
//! message names the tool, where it runs and its arguments. A client that shows forms needs
//! nothing special; one that approves unattended (`mcpkit call --yes`) recognises it with
//! [`is_approval`] and answers [`approve`].

use std::collections::BTreeMap;

use super::{
    BooleanSchema, ElicitAction, ElicitRequestFormParams, ElicitResult, ElicitValue, ElicitationSchema,
};

/// The form's one field: `true` approves.
pub const APPROVE_FIELD: &str = "approve";

/// The title of that field, which tells an approval form from a form that merely has a field
/// named "approve".
pub const APPROVE_TITLE: &str = "Run this tool";

/// The approval form for `message` (which names the tool, its server and its arguments).
pub fn approval_form(message: impl Into<String>) -> ElicitRequestFormParams {
    let field = BooleanSchema {
        title: Some(APPROVE_TITLE.to_owned()),
        description: Some("Allow this one call to run. Declining is safe: nothing runs.".to_owned()),
        ..Default::default()
    };
    ElicitRequestFormParams::new(message, ElicitationSchema::new().with_property(APPROVE_FIELD, field, true))
}

/// Whether `form` is an approval form ([`approval_form`]).
pub fn is_approval(form: &ElicitRequestFormParams) -> bool {
    let schema = &form.requested_schema;
    schema.properties.len() == 1
        && matches!(
            schema.properties.get(APPROVE_FIELD),
            Some(super::PrimitiveSchemaDefinition::Boolean(b)) if b.title.as_deref() == Some(APPROVE_TITLE)
        )
}

/// The answer that approves.
pub fn approve() -> ElicitResult {
    let mut result = ElicitResult::new(ElicitAction::Accept);
    result.content = Some(BTreeMap::from([(APPROVE_FIELD.to_owned(), ElicitValue::Bool(true))]));
    result
}

/// Whether `answer` approves: accepted, with the field `true`.
pub fn approved(answer: &ElicitResult) -> bool {
    answer.action == ElicitAction::Accept
        && answer.content.as_ref().and_then(|c| c.get(APPROVE_FIELD)) == Some(&ElicitValue::Bool(true))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_form_is_recognised_and_answered() {
        let form = approval_form("Run delete_file on files?");
        assert!(is_approval(&form));
        assert!(approved(&approve()));
        assert!(!approved(&ElicitResult::new(ElicitAction::Decline)));
        let mut unchecked = approve();
        unchecked.content = Some(BTreeMap::from([(APPROVE_FIELD.to_owned(), ElicitValue::Bool(false))]));
        assert!(!approved(&unchecked));
        // A form that only happens to have a boolean "approve" is not an approval form.
        let other = ElicitRequestFormParams::new(
            "Approve the plan?",
            ElicitationSchema::new().with_property(APPROVE_FIELD, BooleanSchema::default(), true),
        );
        assert!(!is_approval(&other));
        let json = serde_json::to_value(&form).unwrap();
        assert_eq!(json["requestedSchema"]["properties"]["approve"]["type"], "boolean");
        assert_eq!(json["requestedSchema"]["required"], serde_json::json!(["approve"]));
    }
}
