//! The fields of an elicitation form (`requestedSchema`) and what a typed answer means for each:
//! parsing, validation, defaults. No IO here; `elicit.rs` asks the questions.

use std::collections::BTreeMap;

use mcp_types::{
    ElicitValue, ElicitationSchema, NumberKind, NumberSchema, PrimitiveSchemaDefinition, StringFormat,
    TitledEnumOption,
};

/// One choice of an enum field.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Choice {
    /// What is submitted.
    pub(crate) value: String,
    /// What is shown, when the schema gives a label.
    pub(crate) label: Option<String>,
}

impl Choice {
    fn plain(value: &str) -> Choice {
        Choice { value: value.to_owned(), label: None }
    }

    fn titled(option: &TitledEnumOption) -> Choice {
        Choice { value: option.value.clone(), label: Some(option.title.clone()) }
    }

    /// The label, else the value.
    pub(crate) fn shown(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.value)
    }
}

/// What kind of answer a field takes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind {
    /// Free text, maybe of a format (`email`, `uri`, `date`, `date-time`).
    Text { min_length: Option<u64>, max_length: Option<u64>, format: Option<String> },
    /// A number; `integer` for whole numbers only.
    Number { integer: bool, minimum: Option<f64>, maximum: Option<f64> },
    /// Yes or no.
    Boolean,
    /// One of the choices.
    Single(Vec<Choice>),
    /// Any of the choices.
    Multi { choices: Vec<Choice>, min_items: Option<u64>, max_items: Option<u64> },
}

/// One field of the form.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Field {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) required: bool,
    pub(crate) default: Option<ElicitValue>,
    pub(crate) kind: Kind,
}

/// The fields of a form, by name (mcp-types keeps properties sorted), and the names of optional fields whose schema
/// mcpkit does not know (they are left out of the answer). A required field of an unknown kind
/// cannot be answered: that is an error naming it.
pub(crate) fn fields(schema: &ElicitationSchema) -> Result<(Vec<Field>, Vec<String>), String> {
    let required = schema.required.clone().unwrap_or_default();
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for (name, def) in &schema.properties {
        let is_required = required.contains(name);
        match field(name, def, is_required) {
            Some(f) => out.push(f),
            None if is_required => {
                return Err(format!("the required field {name:?} has a schema mcpkit cannot ask for"));
            }
            None => skipped.push(name.clone()),
        }
    }
    Ok((out, skipped))
}

fn json_number(n: &serde_json::Number) -> ElicitValue {
    match n.as_i64() {
        Some(i) => ElicitValue::Integer(i),
        None => ElicitValue::Number(n.as_f64().unwrap_or(0.0)),
    }
}

fn field(name: &str, def: &PrimitiveSchemaDefinition, required: bool) -> Option<Field> {
    use PrimitiveSchemaDefinition as P;
    let (title, description, default, kind) = match def {
        P::String(s) => (
            &s.title,
            &s.description,
            s.default.clone().map(ElicitValue::String),
            Kind::Text {
                min_length: s.min_length,
                max_length: s.max_length,
                format: s.format.as_ref().map(|f| f.as_str().to_owned()),
            },
        ),
        P::Number(NumberSchema { kind, title, description, minimum, maximum, default, .. }) => (
            title,
            description,
            default.as_ref().map(json_number),
            Kind::Number {
                integer: *kind == NumberKind::Integer,
                minimum: minimum.as_ref().and_then(serde_json::Number::as_f64),
                maximum: maximum.as_ref().and_then(serde_json::Number::as_f64),
            },
        ),
        P::Boolean(s) => (&s.title, &s.description, s.default.map(ElicitValue::Bool), Kind::Boolean),
        P::UntitledSingleSelectEnum(s) => (
            &s.title,
            &s.description,
            s.default.clone().map(ElicitValue::String),
            Kind::Single(s.values.iter().map(|v| Choice::plain(v)).collect()),
        ),
        P::TitledSingleSelectEnum(s) => (
            &s.title,
            &s.description,
            s.default.clone().map(ElicitValue::String),
            Kind::Single(s.one_of.iter().map(Choice::titled).collect()),
        ),
        P::LegacyTitledEnum(s) => {
            let names = s.enum_names.clone().unwrap_or_default();
            let choices = s
                .values
                .iter()
                .enumerate()
                .map(|(i, v)| Choice { value: v.clone(), label: names.get(i).cloned() })
                .collect();
            (&s.title, &s.description, s.default.clone().map(ElicitValue::String), Kind::Single(choices))
        }
        P::UntitledMultiSelectEnum(s) => (
            &s.title,
            &s.description,
            s.default.clone().map(ElicitValue::StringArray),
            Kind::Multi {
                choices: s.items.values.iter().map(|v| Choice::plain(v)).collect(),
                min_items: s.min_items,
                max_items: s.max_items,
            },
        ),
        P::TitledMultiSelectEnum(s) => (
            &s.title,
            &s.description,
            s.default.clone().map(ElicitValue::StringArray),
            Kind::Multi {
                choices: s.items.any_of.iter().map(Choice::titled).collect(),
                min_items: s.min_items,
                max_items: s.max_items,
            },
        ),
        // `Unknown`, or a kind a later mcp-types adds (the enum is non-exhaustive).
        _ => return None,
    };
    Some(Field {
        name: name.to_owned(),
        title: title.clone(),
        description: description.clone(),
        required,
        default,
        kind,
    })
}

impl Field {
    /// The title, else the name.
    pub(crate) fn label(&self) -> &str {
        self.title.as_deref().unwrap_or(&self.name)
    }

    /// What to type, for the prompt: `integer, 1 to 10`, `y/n`, `email, at most 50 characters`.
    pub(crate) fn hint(&self) -> String {
        match &self.kind {
            Kind::Text { min_length, max_length, format } => {
                let mut hint = format.clone().unwrap_or_else(|| "text".to_owned());
                match (min_length, max_length) {
                    (Some(a), Some(b)) => hint.push_str(&format!(", {a} to {b} characters")),
                    (Some(a), None) => hint.push_str(&format!(", at least {a} characters")),
                    (None, Some(b)) => hint.push_str(&format!(", at most {b} characters")),
                    (None, None) => {}
                }
                hint
            }
            Kind::Number { integer, minimum, maximum } => {
                let mut hint = if *integer { "integer" } else { "number" }.to_owned();
                let n = crate::progress::number;
                match (minimum, maximum) {
                    (Some(a), Some(b)) => hint.push_str(&format!(", {} to {}", n(*a), n(*b))),
                    (Some(a), None) => hint.push_str(&format!(", at least {}", n(*a))),
                    (None, Some(b)) => hint.push_str(&format!(", at most {}", n(*b))),
                    (None, None) => {}
                }
                hint
            }
            Kind::Boolean => "y/n".to_owned(),
            Kind::Single(choices) => format!("a number 1-{}", choices.len()),
            Kind::Multi { choices, min_items, max_items } => {
                let mut hint = format!("numbers 1-{} separated by commas", choices.len());
                match (min_items, max_items) {
                    (Some(a), Some(b)) => hint.push_str(&format!(", {a} to {b} of them")),
                    (Some(a), None) => hint.push_str(&format!(", at least {a}")),
                    (None, Some(b)) => hint.push_str(&format!(", at most {b}")),
                    (None, None) => {}
                }
                hint
            }
        }
    }

    /// A value as the prompt shows it (choices by label).
    pub(crate) fn show(&self, value: &ElicitValue) -> String {
        let label = |v: &str| -> String {
            match &self.kind {
                Kind::Single(c) | Kind::Multi { choices: c, .. } => {
                    c.iter().find(|c| c.value == v).map_or(v, Choice::shown).to_owned()
                }
                _ => v.to_owned(),
            }
        };
        match value {
            ElicitValue::String(s) => label(s),
            ElicitValue::Integer(i) => i.to_string(),
            ElicitValue::Number(n) => crate::progress::number(*n),
            ElicitValue::Bool(b) => if *b { "yes" } else { "no" }.to_owned(),
            ElicitValue::StringArray(v) => v.iter().map(|s| label(s)).collect::<Vec<_>>().join(", "),
        }
    }

    /// What `input` means for this field: a value, `None` for "leave it out", or why the input
    /// is not acceptable. Empty input takes `current` (the default, or the previous answer when
    /// editing); without one an optional field is left out and a required one must be typed.
    pub(crate) fn parse(
        &self,
        input: &str,
        current: Option<&ElicitValue>,
    ) -> Result<Option<ElicitValue>, String> {
        let input = input.trim();
        if input.is_empty() {
            if let Some(v) = current {
                return Ok(Some(v.clone()));
            }
            if !self.required {
                return Ok(None);
            }
            return match &self.kind {
                Kind::Multi { min_items, .. } if min_items.unwrap_or(0) == 0 => {
                    Ok(Some(ElicitValue::StringArray(Vec::new())))
                }
                _ => Err("a value is required".to_owned()),
            };
        }
        self.parse_value(input).map(Some)
    }

    fn parse_value(&self, input: &str) -> Result<ElicitValue, String> {
        match &self.kind {
            Kind::Text { min_length, max_length, format } => {
                let len = input.chars().count() as u64;
                if let Some(min) = min_length
                    && len < *min
                {
                    return Err(format!("must be at least {min} characters"));
                }
                if let Some(max) = max_length
                    && len > *max
                {
                    return Err(format!("must be at most {max} characters"));
                }
                if let Some(format) = format {
                    check_format(format, input)?;
                }
                Ok(ElicitValue::String(input.to_owned()))
            }
            Kind::Number { integer, minimum, maximum } => {
                let value = if let Ok(i) = input.parse::<i64>() {
                    ElicitValue::Integer(i)
                } else if *integer {
                    return Err("expected a whole number".to_owned());
                } else {
                    match input.parse::<f64>() {
                        Ok(n) if n.is_finite() => ElicitValue::Number(n),
                        _ => return Err("expected a number".to_owned()),
                    }
                };
                let n = value.as_f64().unwrap_or_default();
                if let Some(min) = minimum
                    && n < *min
                {
                    return Err(format!("must be at least {}", crate::progress::number(*min)));
                }
                if let Some(max) = maximum
                    && n > *max
                {
                    return Err(format!("must be at most {}", crate::progress::number(*max)));
                }
                Ok(value)
            }
            Kind::Boolean => match input.to_ascii_lowercase().as_str() {
                "y" | "yes" | "true" | "1" => Ok(ElicitValue::Bool(true)),
                "n" | "no" | "false" | "0" => Ok(ElicitValue::Bool(false)),
                _ => Err("answer y or n".to_owned()),
            },
            Kind::Single(choices) => pick(choices, input).map(|c| ElicitValue::String(c.value.clone())),
            Kind::Multi { choices, min_items, max_items } => {
                let parts: Vec<&str> = if input.contains(',') {
                    input.split(',').map(str::trim).filter(|p| !p.is_empty()).collect()
                } else if input.split_whitespace().all(|p| p.parse::<usize>().is_ok()) {
                    input.split_whitespace().collect()
                } else {
                    vec![input]
                };
                let mut picked: Vec<String> = Vec::new();
                for part in parts {
                    let value = pick(choices, part)?.value.clone();
                    if !picked.contains(&value) {
                        picked.push(value);
                    }
                }
                let n = picked.len() as u64;
                if let Some(min) = min_items
                    && n < *min
                {
                    return Err(format!("choose at least {min}"));
                }
                if let Some(max) = max_items
                    && n > *max
                {
                    return Err(format!("choose at most {max}"));
                }
                Ok(ElicitValue::StringArray(picked))
            }
        }
    }
}

/// A choice by its number (1-based), its value, or its label (ignoring case).
fn pick<'a>(choices: &'a [Choice], input: &str) -> Result<&'a Choice, String> {
    if let Ok(n) = input.parse::<usize>()
        && (1..=choices.len()).contains(&n)
    {
        return Ok(&choices[n - 1]);
    }
    choices
        .iter()
        .find(|c| c.value == input)
        .or_else(|| choices.iter().find(|c| c.shown().eq_ignore_ascii_case(input)))
        .ok_or_else(|| format!("{input:?} is not one of the choices (type 1-{})", choices.len()))
}

fn check_format(format: &str, input: &str) -> Result<(), String> {
    let ok = match format {
        f if f == StringFormat::Email.as_str() => is_email(input),
        f if f == StringFormat::Uri.as_str() => is_uri(input),
        f if f == StringFormat::Date.as_str() => is_date(input),
        f if f == StringFormat::DateTime.as_str() => is_date_time(input),
        _ => true,
    };
    if ok {
        return Ok(());
    }
    Err(match format {
        "email" => "expected an email address like name@example.com".to_owned(),
        "uri" => "expected a URI with a scheme, like https://example.com".to_owned(),
        "date" => "expected a date YYYY-MM-DD".to_owned(),
        _ => "expected a date and time like 2025-01-31T09:30:00Z".to_owned(),
    })
}

/// `local@domain`: one `@`, both sides non-empty, no spaces, a domain of non-empty labels.
fn is_email(s: &str) -> bool {
    let Some((local, domain)) = s.split_once('@') else { return false };
    !local.is_empty()
        && !domain.is_empty()
        && !domain.contains('@')
        && !s.chars().any(char::is_whitespace)
        && domain.split('.').all(|label| !label.is_empty())
}

/// `scheme:rest` with an RFC 3986 scheme and no spaces.
fn is_uri(s: &str) -> bool {
    let Some((scheme, rest)) = s.split_once(':') else { return false };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        && !rest.is_empty()
        && !s.chars().any(|c| c.is_whitespace() || c.is_control())
}

fn digits(s: &str, n: usize) -> Option<u32> {
    (s.len() == n && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok()).flatten()
}

/// `YYYY-MM-DD`, a day that exists.
fn is_date(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    let [y, m, d] = parts[..] else { return false };
    let (Some(y), Some(m), Some(d)) = (digits(y, 4), digits(m, 2), digits(d, 2)) else { return false };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

/// RFC 3339 `date-time`: `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`.
fn is_date_time(s: &str) -> bool {
    let Some(t) = s.find(['T', 't']) else { return false };
    let (date, time) = (&s[..t], &s[t + 1..]);
    if !is_date(date) {
        return false;
    }
    let (clock, offset) = if let Some(rest) = time.strip_suffix(['Z', 'z']) {
        (rest, None)
    } else if let Some(i) = time.rfind(['+', '-']) {
        (&time[..i], Some(&time[i + 1..]))
    } else {
        return false;
    };
    if let Some(offset) = offset {
        let Some((h, m)) = offset.split_once(':') else { return false };
        if !matches!((digits(h, 2), digits(m, 2)), (Some(h), Some(m)) if h < 24 && m < 60) {
            return false;
        }
    }
    let (hms, frac) = match clock.split_once('.') {
        Some((hms, frac)) => (hms, Some(frac)),
        None => (clock, None),
    };
    if frac.is_some_and(|f| f.is_empty() || !f.bytes().all(|b| b.is_ascii_digit())) {
        return false;
    }
    let parts: Vec<&str> = hms.split(':').collect();
    let [h, m, sec] = parts[..] else { return false };
    matches!(
        (digits(h, 2), digits(m, 2), digits(sec, 2)),
        (Some(h), Some(m), Some(sec)) if h < 24 && m < 60 && sec <= 60
    )
}

/// The submitted content: the answers by field name.
pub(crate) type Answers = BTreeMap<String, ElicitValue>;

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn form(schema: serde_json::Value) -> Vec<Field> {
        let schema: ElicitationSchema = serde_json::from_value(schema).unwrap();
        fields(&schema).unwrap().0
    }

    fn one(property: serde_json::Value, required: bool) -> Field {
        let req = if required { json!(["f"]) } else { json!([]) };
        form(json!({"type": "object", "properties": {"f": property}, "required": req})).remove(0)
    }

    fn ok(field: &Field, input: &str) -> serde_json::Value {
        serde_json::to_value(field.parse(input, field.default.as_ref()).unwrap()).unwrap()
    }

    fn err(field: &Field, input: &str) -> String {
        field.parse(input, field.default.as_ref()).unwrap_err()
    }

    #[test]
    fn strings_check_length_and_formats() {
        let f = one(json!({"type": "string", "minLength": 2, "maxLength": 4}), true);
        assert_eq!(ok(&f, " Ada "), json!("Ada"));
        assert_eq!(err(&f, "A"), "must be at least 2 characters");
        assert_eq!(err(&f, "Adaline"), "must be at most 4 characters");
        assert_eq!(err(&f, ""), "a value is required");
        assert_eq!(ok(&f, "éèà"), json!("éèà"), "lengths count characters, not bytes");

        let email = one(json!({"type": "string", "format": "email"}), true);
        assert_eq!(ok(&email, "ada@example.com"), json!("ada@example.com"));
        for bad in ["ada", "@example.com", "ada@", "a b@example.com", "ada@exa..com", "a@b@c"] {
            assert!(email.parse(bad, None).is_err(), "{bad} accepted");
        }
        let uri = one(json!({"type": "string", "format": "uri"}), true);
        assert_eq!(ok(&uri, "https://example.com/x"), json!("https://example.com/x"));
        assert_eq!(ok(&uri, "urn:isbn:0451450523"), json!("urn:isbn:0451450523"));
        for bad in ["example.com", "1http://x", "http:", "https://a b"] {
            assert!(uri.parse(bad, None).is_err(), "{bad} accepted");
        }
        let date = one(json!({"type": "string", "format": "date"}), true);
        assert_eq!(ok(&date, "2024-02-29"), json!("2024-02-29"));
        for bad in ["2023-02-29", "2024-13-01", "2024-1-01", "24-01-01", "2024-04-31", "tomorrow"] {
            assert!(date.parse(bad, None).is_err(), "{bad} accepted");
        }
        let dt = one(json!({"type": "string", "format": "date-time"}), true);
        for good in ["2025-01-31T09:30:00Z", "2025-01-31t09:30:00.123+02:00", "2016-12-31T23:59:60-05:30"] {
            assert_eq!(ok(&dt, good), json!(good));
        }
        for bad in [
            "2025-01-31",
            "2025-01-31T09:30Z",
            "2025-01-31T24:00:00Z",
            "2025-01-31T09:30:00",
            "2025-01-31T09:30:00.Z",
        ] {
            assert!(dt.parse(bad, None).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn numbers_respect_kind_and_bounds() {
        let age = one(json!({"type": "integer", "minimum": 18, "maximum": 130}), true);
        assert_eq!(ok(&age, "42"), json!(42));
        assert_eq!(err(&age, "42.5"), "expected a whole number");
        assert_eq!(err(&age, "17"), "must be at least 18");
        assert_eq!(err(&age, "131"), "must be at most 130");
        assert_eq!(err(&age, "old"), "expected a whole number");

        let ratio = one(json!({"type": "number", "minimum": 0, "maximum": 1.5, "default": 1}), false);
        assert_eq!(ok(&ratio, "0.25"), json!(0.25));
        assert_eq!(ok(&ratio, "1"), json!(1), "a whole number stays an integer on the wire");
        assert_eq!(ok(&ratio, ""), json!(1), "empty takes the default");
        assert_eq!(err(&ratio, "NaN"), "expected a number");
        assert_eq!(err(&ratio, "inf"), "expected a number");
        assert_eq!(err(&ratio, "2"), "must be at most 1.5");
    }

    #[test]
    fn booleans_take_yes_and_no() {
        let f = one(json!({"type": "boolean", "default": false}), true);
        assert_eq!(ok(&f, "Y"), json!(true));
        assert_eq!(ok(&f, "yes"), json!(true));
        assert_eq!(ok(&f, "no"), json!(false));
        assert_eq!(ok(&f, ""), json!(false));
        assert_eq!(err(&f, "maybe"), "answer y or n");
        let optional = one(json!({"type": "boolean"}), false);
        assert_eq!(optional.parse("", None), Ok(None), "an optional field without default is left out");
    }

    #[test]
    fn single_select_by_number_value_or_label() {
        let plain = one(json!({"type": "string", "enum": ["Red", "Green", "Blue"]}), true);
        assert_eq!(ok(&plain, "2"), json!("Green"));
        assert_eq!(ok(&plain, "Blue"), json!("Blue"));
        assert_eq!(ok(&plain, "red"), json!("Red"));
        assert!(err(&plain, "4").contains("not one of the choices"));
        assert!(err(&plain, "Purple").contains("not one of the choices"));

        let titled = one(
            json!({"type": "string", "oneOf": [{"const": "#f00", "title": "Red"}, {"const": "#0f0", "title": "Green"}], "default": "#0f0"}),
            true,
        );
        assert_eq!(ok(&titled, "1"), json!("#f00"));
        assert_eq!(ok(&titled, "green"), json!("#0f0"));
        assert_eq!(ok(&titled, ""), json!("#0f0"));
        assert_eq!(titled.show(titled.default.as_ref().unwrap()), "Green");

        let legacy =
            one(json!({"type": "string", "enum": ["s", "m"], "enumNames": ["Small", "Medium"]}), true);
        assert_eq!(
            legacy.kind,
            Kind::Single(vec![
                Choice { value: "s".into(), label: Some("Small".into()) },
                Choice { value: "m".into(), label: Some("Medium".into()) },
            ])
        );
        assert_eq!(ok(&legacy, "medium"), json!("m"));
    }

    #[test]
    fn multi_select_checks_counts() {
        let f = one(
            json!({"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string", "enum": ["a", "b", "c"]}}),
            true,
        );
        assert_eq!(ok(&f, "1, 3"), json!(["a", "c"]));
        assert_eq!(ok(&f, "3 1"), json!(["c", "a"]));
        assert_eq!(ok(&f, "b,b"), json!(["b"]));
        assert_eq!(err(&f, "1,2,3"), "choose at most 2");
        assert_eq!(err(&f, ""), "a value is required");
        assert!(err(&f, "1,x").contains("not one of the choices"));

        let titled = one(
            json!({"type": "array", "items": {"anyOf": [{"const": "x", "title": "Ex"}, {"const": "y", "title": "Why"}]}, "default": ["y"]}),
            false,
        );
        assert_eq!(ok(&titled, "ex, why"), json!(["x", "y"]));
        assert_eq!(ok(&titled, ""), json!(["y"]));
        let none_needed = one(json!({"type": "array", "items": {"type": "string", "enum": ["a"]}}), true);
        assert_eq!(ok(&none_needed, ""), json!([]), "a required multi-select without minItems may be empty");
    }

    #[test]
    fn unknown_schemas_are_skipped_unless_required() {
        let schema: ElicitationSchema = serde_json::from_value(json!({
            "type": "object",
            "properties": {"name": {"type": "string"}, "blob": {"type": "object"}},
            "required": ["name"]
        }))
        .unwrap();
        let (fs, skipped) = fields(&schema).unwrap();
        assert_eq!(fs.len(), 1);
        assert_eq!(skipped, vec!["blob".to_owned()]);
        let schema: ElicitationSchema = serde_json::from_value(json!({
            "type": "object", "properties": {"blob": {"type": "object"}}, "required": ["blob"]
        }))
        .unwrap();
        assert!(fields(&schema).unwrap_err().contains("\"blob\""));
    }

    #[test]
    fn hints_describe_what_to_type() {
        assert_eq!(
            one(json!({"type": "integer", "minimum": 1, "maximum": 10}), true).hint(),
            "integer, 1 to 10"
        );
        assert_eq!(
            one(json!({"type": "string", "format": "email", "maxLength": 50}), true).hint(),
            "email, at most 50 characters"
        );
        assert_eq!(one(json!({"type": "boolean"}), true).hint(), "y/n");
        assert_eq!(one(json!({"type": "string", "enum": ["a", "b"]}), true).hint(), "a number 1-2");
    }
}
