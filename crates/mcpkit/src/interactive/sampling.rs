//! Sampling at the prompt. mcpkit has no model: the person at the keyboard is the model. The
//! request (system prompt, messages, token limit) is shown and the typed reply — lines up to
//! an empty line or the end of input — becomes the assistant's message. `:decline` (or an end
//! of input before any text) refuses, which the server receives as the spec's "user rejected
//! sampling request" error (code -1).

use mcp_types::{
    CreateMessageRequestParams, CreateMessageResult, ErrorObject, Role, SamplingContent,
    SamplingContentBlock, StopReason,
};

use super::console::{Io, indented, line, one_line};

/// The error a client answers when the user rejects a sampling request (spec: code `-1`).
pub(crate) fn declined() -> ErrorObject {
    ErrorObject::new(-1, "the user declined the sampling request")
}

fn block(b: &SamplingContentBlock) -> String {
    match b {
        SamplingContentBlock::Text(t) => t.text.clone(),
        SamplingContentBlock::Image(i) => format!("[image, {}]", i.mime_type),
        SamplingContentBlock::Audio(a) => format!("[audio, {}]", a.mime_type),
        SamplingContentBlock::ToolUse(t) => format!("[tool use: {}]", t.name),
        SamplingContentBlock::ToolResult(_) => "[tool result]".to_owned(),
        SamplingContentBlock::Unknown(o) => {
            format!("[{} content]", o.get("type").and_then(|t| t.as_str()).unwrap_or("unknown"))
        }
        // A kind a later mcp-types adds (the enum is non-exhaustive).
        _ => "[other content]".to_owned(),
    }
}

/// Shows the request and reads the human's reply.
pub(crate) fn dialogue(
    io: &mut dyn Io,
    server: &str,
    p: &CreateMessageRequestParams,
) -> Result<CreateMessageResult, ErrorObject> {
    line(io, &format!("\n{} asks for a model's reply (sampling) — you are the model:", one_line(server)));
    if let Some(system) = &p.system_prompt {
        line(io, "  system:");
        io.say(&indented(system, "    "));
    }
    for m in &p.messages {
        let role = if m.role == Role::Assistant { "assistant" } else { "user" };
        line(io, &format!("  {role}:"));
        for b in m.content.blocks() {
            io.say(&indented(&block(b), "    "));
        }
    }
    line(io, &format!("  (at most {} tokens)", p.max_tokens));
    line(io, "  Type the reply; an empty line ends it. :decline refuses.");
    let mut reply: Vec<String> = Vec::new();
    loop {
        match io.ask("  > ") {
            None if reply.is_empty() => return Err(declined()),
            None => break,
            Some(text) if text.trim() == ":decline" => return Err(declined()),
            Some(text) if text.trim().is_empty() && reply.is_empty() => {
                line(io, "  ! the reply is empty: type it, or :decline");
            }
            Some(text) if text.trim().is_empty() => break,
            Some(text) => reply.push(text),
        }
    }
    let mut result = CreateMessageResult::new("human", SamplingContent::text(reply.join("\n")));
    result.stop_reason = Some(StopReason::EndTurn);
    Ok(result)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::console::Script;
    use super::*;

    fn request() -> CreateMessageRequestParams {
        serde_json::from_value(json!({
            "systemPrompt": "Be brief.",
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "Write a haiku about rust."}},
                {"role": "user", "content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}]}
            ],
            "maxTokens": 200
        }))
        .unwrap()
    }

    #[test]
    fn the_typed_lines_become_the_assistant_message() {
        let mut s = Script::new(&["", "old pond", "a frog jumps in", "", "ignored"]);
        let result = dialogue(&mut s, "demo", &request()).unwrap();
        assert_eq!(
            serde_json::to_value(&result).unwrap(),
            json!({"role": "assistant", "content": {"type": "text", "text": "old pond\na frog jumps in"},
                   "model": "human", "stopReason": "endTurn"})
        );
        assert!(s.shown.contains("system:\n    Be brief.\n"), "{}", s.shown);
        assert!(s.shown.contains("user:\n    Write a haiku about rust.\n"), "{}", s.shown);
        assert!(s.shown.contains("[image, image/png]"), "{}", s.shown);
        assert!(s.shown.contains("(at most 200 tokens)"), "{}", s.shown);
        assert!(s.shown.contains("! the reply is empty"), "{}", s.shown);
        assert_eq!(s.answers.len(), 1, "reading stops at the empty line");
    }

    #[test]
    fn decline_or_nothing_typed_is_a_rejection() {
        for answers in [&[":decline"][..], &[][..], &["line", " :decline "][..]] {
            let err = dialogue(&mut Script::new(answers), "demo", &request()).unwrap_err();
            assert_eq!((err.code, err.message.as_str()), (-1, "the user declined the sampling request"));
        }
        let ended = dialogue(&mut Script::new(&["one line"]), "demo", &request()).unwrap();
        assert_eq!(ended.content.blocks()[0].as_text(), Some("one line"), "end of input ends the reply");
    }
}
