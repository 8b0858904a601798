//! Elicitation at the prompt: a form asked field by field, or a URL shown for the user to
//! open themselves.
//!
//! A form: the server's message, then one question per field (title, description, default,
//! whether it is required, what to type); a wrong answer is explained and asked again. At any
//! question `:decline` declines and `:cancel` cancels (so does the end of input); `:skip`
//! leaves an optional field out, and a leading `::` stands for a literal `:`. At the end the
//! answers are shown for review: send, edit (ask again, previous answers as defaults), decline
//! or cancel.

use mcp_types::{
    ElicitAction, ElicitRequestFormParams, ElicitRequestParams, ElicitRequestURLParams, ElicitResult,
};

use super::console::{Io, indented, line, one_line, printable};
use super::form::{self, Answers, Field, Kind};

/// Asks the user what the server wants to know; `server` names the server.
pub(crate) fn dialogue(
    io: &mut dyn Io,
    server: &str,
    params: &ElicitRequestParams,
) -> Result<ElicitResult, String> {
    match params {
        ElicitRequestParams::Form(p) => form_dialogue(io, server, p),
        ElicitRequestParams::Url(p) => Ok(url_dialogue(io, server, p)),
        // `Other`, or a mode a later mcp-types adds (the enum is non-exhaustive).
        _ => Err(format!("unsupported elicitation mode {:?}", params.mode())),
    }
}

/// What the user typed at a question.
enum Reply {
    Text(String),
    Skip,
    Decline,
    Cancel,
}

fn reply(io: &mut dyn Io, prompt: &str) -> Reply {
    match io.ask(prompt) {
        None => Reply::Cancel,
        Some(text) => match text.trim() {
            ":decline" => Reply::Decline,
            ":cancel" => Reply::Cancel,
            ":skip" => Reply::Skip,
            t if t.starts_with("::") => Reply::Text(t[1..].to_owned()),
            _ => Reply::Text(text),
        },
    }
}

fn form_dialogue(io: &mut dyn Io, server: &str, p: &ElicitRequestFormParams) -> Result<ElicitResult, String> {
    let (fields, skipped) = form::fields(&p.requested_schema)?;
    line(io, &format!("\n{} asks:", one_line(server)));
    io.say(&indented(&p.message, "  "));
    if !skipped.is_empty() {
        line(io, &format!("  (mcpkit cannot ask for {}; they are left out)", skipped.join(", ")));
    }
    line(io, &form_help(&fields));
    let mut answers: Answers =
        fields.iter().filter_map(|f| Some((f.name.clone(), f.default.clone()?))).collect();
    loop {
        for field in &fields {
            match ask_field(io, field, answers.get(&field.name).cloned()) {
                Step::Value(Some(v)) => {
                    answers.insert(field.name.clone(), v);
                }
                Step::Value(None) => {
                    answers.remove(&field.name);
                }
                Step::Stop(action) => return Ok(ElicitResult::new(action)),
            }
        }
        line(io, "  Your answer:");
        if fields.is_empty() {
            line(io, "    (no fields)");
        }
        for field in &fields {
            let shown = answers.get(&field.name).map_or_else(|| "(left out)".to_owned(), |v| field.show(v));
            line(io, &format!("    {}: {}", one_line(field.label()), one_line(&shown)));
        }
        loop {
            match io
                .ask("  Send it? [Y]es, [e]dit, [d]ecline, [c]ancel: ")
                .map(|a| a.trim().to_ascii_lowercase())
            {
                None => return Ok(ElicitResult::new(ElicitAction::Cancel)),
                Some(a) if matches!(a.as_str(), "" | "y" | "yes") => {
                    return Ok(ElicitResult::accept(answers));
                }
                Some(a) if matches!(a.as_str(), "e" | "edit") => break,
                Some(a) if matches!(a.as_str(), "d" | "decline" | ":decline" | "n" | "no") => {
                    return Ok(ElicitResult::new(ElicitAction::Decline));
                }
                Some(a) if matches!(a.as_str(), "c" | "cancel" | ":cancel") => {
                    return Ok(ElicitResult::new(ElicitAction::Cancel));
                }
                Some(_) => line(io, "  ! answer y, e, d or c"),
            }
        }
    }
}

/// What can be typed at the questions of this form: Enter for a default and `:skip` only when
/// a field has a default or is optional; `:decline` and `:cancel` always.
fn form_help(fields: &[Field]) -> String {
    let mut parts = Vec::new();
    if fields.iter().any(|f| f.default.is_some()) {
        parts.push("Enter keeps the [default]");
    }
    if fields.iter().any(|f| !f.required) {
        parts.push(":skip leaves an optional field out");
    }
    parts.push(":decline or :cancel at any prompt.");
    format!("  {}", parts.join("; "))
}

enum Step {
    Value(Option<mcp_types::ElicitValue>),
    Stop(ElicitAction),
}

/// Asks one field until the answer is acceptable.
fn ask_field(io: &mut dyn Io, field: &Field, current: Option<mcp_types::ElicitValue>) -> Step {
    let mut header = format!("\n  {}", one_line(field.label()));
    if field.required {
        header.push_str(" (required)");
    }
    if let Some(d) = &field.description {
        header.push_str(" — ");
        header.push_str(&one_line(d));
    }
    line(io, &header);
    if let Kind::Single(choices) | Kind::Multi { choices, .. } = &field.kind {
        for (i, c) in choices.iter().enumerate() {
            line(io, &format!("    {}) {}", i + 1, one_line(c.shown())));
        }
    }
    let mut prompt = format!("  {}", field.hint());
    if let Some(v) = &current {
        prompt.push_str(&format!(" [{}]", one_line(&field.show(v))));
    }
    prompt.push_str(": ");
    loop {
        let outcome = match reply(io, &prompt) {
            Reply::Decline => return Step::Stop(ElicitAction::Decline),
            Reply::Cancel => return Step::Stop(ElicitAction::Cancel),
            Reply::Skip if field.required => Err("this field is required".to_owned()),
            Reply::Skip => Ok(None),
            Reply::Text(text) => field.parse(&text, current.as_ref()),
        };
        match outcome {
            Ok(v) => return Step::Value(v),
            Err(why) => line(io, &format!("  ! {why}")),
        }
    }
}

/// The host of a URL (what the user should check before opening it).
fn host(url: &str) -> Option<&str> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if host_port.starts_with('[') {
        host_port.split_inclusive(']').next()?
    } else {
        host_port.split(':').next()?
    };
    (!host.is_empty()).then_some(host)
}

/// Shows the URL (never opens it) and asks whether the user will go there.
fn url_dialogue(io: &mut dyn Io, server: &str, p: &ElicitRequestURLParams) -> ElicitResult {
    line(io, &format!("\n{} asks you to open a web page:", one_line(server)));
    io.say(&indented(&p.message, "  "));
    line(io, &format!("  URL:  {}", printable(&p.url).replace('\n', "")));
    match host(&p.url) {
        Some(h) => {
            line(io, &format!("  Host: {}", one_line(h)));
            if h.split('.').any(|label| label.to_ascii_lowercase().starts_with("xn--")) || !h.is_ascii() {
                line(io, "  ! the host name has international characters: check it is the site you expect");
            }
        }
        None => line(io, "  ! this URL has no host: be careful"),
    }
    line(io, "  mcpkit does not open it: copy it into your browser if you agree.");
    loop {
        match io
            .ask("  Go to this page? [y]es, [n]o (decline), [c]ancel: ")
            .map(|a| a.trim().to_ascii_lowercase())
        {
            None => return ElicitResult::new(ElicitAction::Cancel),
            Some(a) if matches!(a.as_str(), "y" | "yes") => return ElicitResult::new(ElicitAction::Accept),
            Some(a) if matches!(a.as_str(), "n" | "no" | "d" | "decline" | ":decline") => {
                return ElicitResult::new(ElicitAction::Decline);
            }
            Some(a) if matches!(a.as_str(), "c" | "cancel" | ":cancel") => {
                return ElicitResult::new(ElicitAction::Cancel);
            }
            Some(_) => line(io, "  ! answer y, n or c"),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::console::Script;
    use super::*;

    fn form(schema: serde_json::Value) -> ElicitRequestParams {
        serde_json::from_value(json!({"message": "Tell me\nabout you", "requestedSchema": schema})).unwrap()
    }

    fn run(params: &ElicitRequestParams, answers: &[&str]) -> (serde_json::Value, String) {
        let mut script = Script::new(answers);
        let result = dialogue(&mut script, "server \"demo\"", params).unwrap();
        (serde_json::to_value(result).unwrap(), script.shown)
    }

    fn contact() -> ElicitRequestParams {
        form(json!({
            "type": "object",
            "properties": {
                "age": {"type": "integer", "minimum": 18, "description": "Your age"},
                "name": {"type": "string", "title": "Full name", "default": "Ada"},
                "news": {"type": "boolean"}
            },
            "required": ["age", "name"]
        }))
    }

    #[test]
    fn a_form_is_asked_field_by_field_and_reasked_on_bad_input() {
        let (result, shown) = run(&contact(), &["x", "12", "30", "", "", "y"]);
        assert_eq!(result, json!({"action": "accept", "content": {"age": 30, "name": "Ada"}}));
        assert!(shown.contains("server \"demo\" asks:\n  Tell me\n  about you\n"), "{shown}");
        assert!(shown.contains("age (required) — Your age"), "{shown}");
        assert!(shown.contains("! expected a whole number"), "{shown}");
        assert!(shown.contains("! must be at least 18"), "{shown}");
        assert!(shown.contains("Full name (required)"), "{shown}");
        assert!(shown.contains("text [Ada]: "), "{shown}");
        assert!(shown.contains("news: (left out)"), "{shown}");
    }

    #[test]
    fn decline_cancel_and_end_of_input() {
        assert_eq!(run(&contact(), &[":decline"]).0, json!({"action": "decline"}));
        assert_eq!(run(&contact(), &["40", ":cancel"]).0, json!({"action": "cancel"}));
        assert_eq!(run(&contact(), &["40"]).0, json!({"action": "cancel"}), "end of input cancels");
        assert_eq!(run(&contact(), &["40", "", "n", "d"]).0, json!({"action": "decline"}));
        assert_eq!(run(&contact(), &["40", "", "n"]).0, json!({"action": "cancel"}));
    }

    #[test]
    fn skip_edit_and_literal_colons() {
        let (result, shown) = run(&contact(), &["40", "::x", ":skip", "e", "", "Bob", "yes", "y"]);
        assert_eq!(result, json!({"action": "accept", "content": {"age": 40, "name": "Bob", "news": true}}));
        assert!(shown.contains("integer, at least 18 [40]: "), "editing shows previous answers: {shown}");
        let (result, shown) = run(&contact(), &[":skip", "41", "", "", ""]);
        assert_eq!(result["content"]["age"], 41);
        assert!(shown.contains("! this field is required"), "{shown}");
        let (result, _) = run(&contact(), &["41", "::colon", "", ""]);
        assert_eq!(result["content"]["name"], ":colon");
    }

    #[test]
    fn the_help_line_mentions_only_what_applies() {
        let help = "  Enter keeps the [default]; :skip leaves an optional field out; :decline or :cancel at any prompt.\n";
        assert!(run(&contact(), &[]).1.contains(help));
        let name_only = form(json!({
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"]
        }));
        let (_, shown) = run(&name_only, &[]);
        assert!(shown.contains("about you\n  :decline or :cancel at any prompt.\n"), "{shown}");
        let optional = form(json!({"type": "object", "properties": {"name": {"type": "string"}}}));
        let (_, shown) = run(&optional, &[]);
        assert!(
            shown.contains("  :skip leaves an optional field out; :decline or :cancel at any prompt.\n"),
            "{shown}"
        );
        assert!(!shown.contains("Enter keeps"), "{shown}");
        let defaulted = form(json!({
            "type": "object",
            "properties": {"n": {"type": "integer", "default": 3}},
            "required": ["n"]
        }));
        let (_, shown) = run(&defaulted, &[]);
        assert!(
            shown.contains("  Enter keeps the [default]; :decline or :cancel at any prompt.\n"),
            "{shown}"
        );
    }

    #[test]
    fn url_mode_shows_the_url_and_asks_for_consent() {
        let p: ElicitRequestParams = serde_json::from_value(json!({
            "mode": "url", "message": "Connect your account", "url": "https://user@xn--e1afmkfd.example:8443/a?b",
            "elicitationId": "e1"
        }))
        .unwrap();
        let (result, shown) = run(&p, &["maybe", "y"]);
        assert_eq!(result, json!({"action": "accept"}));
        assert!(shown.contains("URL:  https://user@xn--e1afmkfd.example:8443/a?b"), "{shown}");
        assert!(shown.contains("Host: xn--e1afmkfd.example"), "{shown}");
        assert!(shown.contains("international characters"), "{shown}");
        assert_eq!(run(&p, &["n"]).0, json!({"action": "decline"}));
        assert_eq!(run(&p, &[]).0, json!({"action": "cancel"}));
        assert_eq!(host("http://[::1]:80/x"), Some("[::1]"));
        assert_eq!(host("mailto:x"), None);
    }
}
