//! Rendering results: the exact JSON, or readable text on a terminal.
//!
//! Everything a client command prints on stdout goes through [`write`], which reports a failed
//! write as a [`WriteError`] instead of panicking like `println!`. The reader going away
//! (`mcpkit ... | head`: a broken pipe) is not a failure — the command stops quietly with status
//! 0, as `grep` or `rg` do; any other error (a full disk, `> /dev/full`) is the one-line error
//! `mcpkit: cannot write the output: ...` and status 2.
//!
//! Readable text is made safe for the terminal ([`crate::terminal`]); JSON is written byte for
//! byte as the server sent it.

use std::io::{self, Write};

use serde_json::Value;

use crate::terminal;

/// Writing to stdout failed.
#[derive(Debug)]
pub(crate) struct WriteError(pub(crate) io::Error);

impl WriteError {
    /// The reader of stdout went away (a closed pipe): nothing is wrong, nobody is listening.
    pub(crate) fn reader_gone(&self) -> bool {
        self.0.kind() == io::ErrorKind::BrokenPipe
    }
}

impl std::fmt::Display for WriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot write the output: {}", self.0)
    }
}

impl std::error::Error for WriteError {}

/// Writes `text` to stdout and flushes it.
pub(crate) fn write(text: &str) -> Result<(), WriteError> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes()).and_then(|()| out.flush()).map_err(WriteError)
}

/// The exit status of a command whose only failure can be writing its output: 0 when it was
/// written or its reader went away; else 2, with the one-line error on stderr.
pub(crate) fn exit_status(written: Result<(), WriteError>) -> std::process::ExitCode {
    match written {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) if e.reader_gone() => std::process::ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(io::stderr().lock(), "mcpkit: {e}");
            std::process::ExitCode::from(2)
        }
    }
}

/// `text` and a newline, unless it is empty or ends with one.
pub(crate) fn write_text(text: &str) -> Result<(), WriteError> {
    let text = terminal::text(text);
    if text.is_empty() || text.ends_with('\n') { write(&text) } else { write(&format!("{text}\n")) }
}

/// Prints `value` as one JSON document, or through `text` when `json` is false.
pub(crate) fn print(json: bool, value: &Value, text: fn(&Value) -> String) -> Result<(), WriteError> {
    if json { write(&format!("{value}\n")) } else { write_text(&text(value)) }
}

/// Prints a result as the server sent it: its exact JSON text with `json`, else readable text.
pub(crate) fn print_raw(
    json: bool,
    raw: &mcp_types::RawJson,
    text: fn(&Value) -> String,
) -> anyhow::Result<()> {
    if json {
        write(&format!("{}\n", raw.get()))?;
    } else {
        print(false, &serde_json::from_str(raw.get())?, text)?;
    }
    Ok(())
}

/// Prints one event of `listen`: a JSON line, or a readable line made by `text`.
pub(crate) fn event(json: bool, value: &Value, text: fn(&Value) -> String) -> Result<(), WriteError> {
    if json {
        return write(&format!("{value}\n"));
    }
    write(&format!("{}\n", terminal::line(&text(value))))
}

fn str_of<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

/// Aligned two-column rows.
fn table(rows: &[(String, String)]) -> String {
    // Each cell on one line, whatever the server put in it.
    let rows: Vec<(String, String)> =
        rows.iter().map(|(a, b)| (terminal::line(a).into_owned(), terminal::line(b).into_owned())).collect();
    let width = rows.iter().map(|(a, _)| a.chars().count()).max().unwrap_or(0);
    let mut out = String::new();
    for (a, b) in &rows {
        if b.is_empty() {
            out.push_str(a);
        } else {
            out.push_str(&format!("{a:<width$}  {b}"));
        }
        out.push('\n');
    }
    out
}

/// `[title — ]description`, first line only.
fn describe(item: &Value) -> String {
    let description = str_of(item, "description").and_then(|d| d.lines().next()).unwrap_or("");
    match str_of(item, "title") {
        Some(title) if !description.is_empty() => format!("{title} — {description}"),
        Some(title) => title.to_owned(),
        None => description.to_owned(),
    }
}

/// The longest signature `list tools` shows (`describe` shows the whole schema).
const SIGNATURE_WIDTH: usize = 72;

/// A tool's signature from its input schema, `name(required: type, [optional: type])` — the
/// required arguments first, in the order `required` lists them.
pub(crate) fn signature(tool: &Value) -> String {
    let name = str_of(tool, "name").unwrap_or("?");
    let schema = tool.get("inputSchema");
    let required: Vec<&str> = schema
        .and_then(|s| s.get("required"))
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut parameters = Vec::new();
    if let Some(properties) = schema.and_then(|s| s.get("properties")).and_then(Value::as_object) {
        for key in &required {
            if let Some(property) = properties.get(*key) {
                parameters.push(format!("{key}: {}", type_of(property)));
            }
        }
        for (key, property) in properties {
            if !required.contains(&key.as_str()) {
                parameters.push(format!("[{key}: {}]", type_of(property)));
            }
        }
    }
    let mut text = format!("{name}(");
    for (i, parameter) in parameters.iter().enumerate() {
        let separator = if i == 0 { "" } else { ", " };
        if text.chars().count() + separator.len() + parameter.chars().count() + 1 > SIGNATURE_WIDTH {
            text.push_str(separator);
            text.push('…');
            break;
        }
        text.push_str(separator);
        text.push_str(parameter);
    }
    text.push(')');
    text
}

/// A property's type as a signature shows it: `string`, `number[]`, `"a"|"b"`, `string|null`.
fn type_of(schema: &Value) -> String {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let mut shown: Vec<String> = values.iter().take(4).map(Value::to_string).collect();
        if values.len() > 4 {
            shown.push("…".to_owned());
        }
        return shown.join("|");
    }
    match schema.get("type") {
        Some(Value::String(t)) if t == "array" => {
            schema.get("items").map_or_else(|| "array".to_owned(), |items| format!("{}[]", type_of(items)))
        }
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).collect::<Vec<_>>().join("|"),
        _ => match schema.get("anyOf").or_else(|| schema.get("oneOf")).and_then(Value::as_array) {
            Some(choices) => choices.iter().map(type_of).collect::<Vec<_>>().join("|"),
            None if schema.get("$ref").is_some() => "object".to_owned(),
            None => "any".to_owned(),
        },
    }
}

/// What a tool's annotations, output schema, app and task support say, for `list tools`:
/// `read-only`, `destructive`, `idempotent`, `structured output`, `app` (it links to an app),
/// `app only` (only its app may call it), `task` (it may become one), `task only`.
fn tool_notes(tool: &Value) -> Vec<&'static str> {
    let annotations = tool.get("annotations");
    let hint = |name: &str| annotations.and_then(|a| a.get(name)).and_then(Value::as_bool);
    let mut notes = Vec::new();
    if hint("readOnlyHint") == Some(true) {
        notes.push("read-only");
    } else if hint("destructiveHint") == Some(true) {
        notes.push("destructive");
    }
    if hint("idempotentHint") == Some(true) {
        notes.push("idempotent");
    }
    if tool.get("outputSchema").is_some() {
        notes.push("structured output");
    }
    let ui = tool.get("_meta").and_then(|m| m.get("ui"));
    let app = ui.and_then(|u| u.get("resourceUri")).is_some()
        || tool.get("_meta").and_then(|m| m.get("ui/resourceUri")).is_some();
    let visibility = ui.and_then(|u| u.get("visibility")).and_then(Value::as_array);
    if visibility.is_some_and(|v| !v.iter().any(|x| x == "model")) {
        notes.push("app only");
    } else if app {
        notes.push("app");
    }
    match tool.get("execution").and_then(|e| e.get("taskSupport")).and_then(Value::as_str) {
        Some("optional") => notes.push("task"),
        Some("required") => notes.push("task only"),
        _ => {}
    }
    notes
}

/// `describe TOOL`: the signature, the description, the annotations and the schemas.
pub(crate) fn tool(tool: &Value) -> String {
    let mut out = signature(tool);
    out.push('\n');
    if let Some(title) = str_of(tool, "title") {
        out.push_str(&format!("  {title}\n"));
    }
    for line in str_of(tool, "description").unwrap_or("").lines() {
        out.push_str(&format!("  {line}\n"));
    }
    let notes = tool_notes(tool);
    if !notes.is_empty() {
        out.push_str(&format!("  ({})\n", notes.join(", ")));
    }
    if let Some(uri) =
        tool.get("_meta").and_then(|m| m.get("ui")).and_then(|u| u.get("resourceUri")).and_then(Value::as_str)
    {
        out.push_str(&format!(
            "app: {} (mcpkit app {} shows it)\n",
            crate::terminal::line(uri),
            str_of(tool, "name").unwrap_or("TOOL")
        ));
    }
    if let Some(annotations) =
        tool.get("annotations").filter(|a| a.as_object().is_some_and(|o| !o.is_empty()))
    {
        out.push_str(&format!("annotations: {annotations}\n"));
    }
    out.push_str(&format!("input schema:\n{}\n", pretty(tool.get("inputSchema").unwrap_or(&Value::Null))));
    if let Some(output) = tool.get("outputSchema") {
        out.push_str(&format!("output schema:\n{}\n", pretty(output)));
    }
    out
}

/// `list tools|resources|templates|prompts`.
pub(crate) fn list(value: &Value) -> String {
    if let Some(tools) = value.get("tools").and_then(Value::as_array) {
        // Each tool's signature, then what it does and what its annotations say.
        let rows: Vec<(String, String)> = tools
            .iter()
            .map(|tool| {
                let notes = tool_notes(tool);
                let mut text = describe(tool);
                if !notes.is_empty() {
                    let notes = notes.join(", ");
                    text = if text.is_empty() { format!("({notes})") } else { format!("{text} ({notes})") };
                }
                (signature(tool), text)
            })
            .collect();
        return if rows.is_empty() { "(none)\n".to_owned() } else { table(&rows) };
    }
    if let Some(skills) = value.get("skills").and_then(Value::as_array) {
        // Each skill's URI, then its description and how many files it has.
        let rows: Vec<(String, String)> = skills
            .iter()
            .map(|skill| {
                let description =
                    skill.get("frontmatter").and_then(|f| str_of(f, "description")).unwrap_or("");
                let files = match skill.get("resources") {
                    Some(Value::Array(files)) => {
                        format!("{} file{}", files.len(), if files.len() == 1 { "" } else { "s" })
                    }
                    _ => "dynamic".to_owned(),
                };
                let text = crate::terminal::line(description).into_owned();
                (str_of(skill, "uri").unwrap_or("?").to_owned(), format!("{text} ({files})"))
            })
            .collect();
        return if rows.is_empty() { "(none)\n".to_owned() } else { table(&rows) };
    }
    let (items, key) = if let Some(items) = value.get("tools") {
        (items, "name")
    } else if let Some(items) = value.get("resources") {
        (items, "uri")
    } else if let Some(items) = value.get("resourceTemplates") {
        (items, "uriTemplate")
    } else {
        (value.get("prompts").unwrap_or(&Value::Null), "name")
    };
    let rows: Vec<(String, String)> = items
        .as_array()
        .map(|a| a.as_slice())
        .unwrap_or_default()
        .iter()
        .map(|item| {
            let mut text = describe(item);
            if key != "name"
                && let Some(name) = str_of(item, "name")
            {
                text = if text.is_empty() { name.to_owned() } else { format!("{name}: {text}") };
            }
            (str_of(item, key).unwrap_or("?").to_owned(), text)
        })
        .collect();
    if rows.is_empty() { "(none)\n".to_owned() } else { table(&rows) }
}

/// The decoded size of base64 data.
fn base64_len(data: &str) -> usize {
    let data = data.trim_end_matches('=');
    data.len() * 3 / 4
}

fn resource_contents(contents: &Value) -> String {
    let uri = str_of(contents, "uri").unwrap_or("?");
    let mime = str_of(contents, "mimeType").unwrap_or("application/octet-stream");
    if let Some(text) = str_of(contents, "text") {
        format!("{uri}\n{text}")
    } else if let Some(blob) = str_of(contents, "blob") {
        format!("{uri}\n[blob {mime}, {} bytes]", base64_len(blob))
    } else {
        format!("{uri}\n{}", pretty(contents))
    }
}

/// One content block.
fn block(block: &Value) -> String {
    let mime = str_of(block, "mimeType").unwrap_or("?");
    let size = || str_of(block, "data").map(base64_len).unwrap_or(0);
    match str_of(block, "type") {
        Some("text") => str_of(block, "text").unwrap_or("").to_owned(),
        Some("image") => format!("[image {mime}, {} bytes]", size()),
        Some("audio") => format!("[audio {mime}, {} bytes]", size()),
        Some("resource_link") => {
            let uri = str_of(block, "uri").unwrap_or("?");
            match str_of(block, "name") {
                Some(name) => format!("[resource link {uri} ({name})]"),
                None => format!("[resource link {uri}]"),
            }
        }
        Some("resource") => resource_contents(block.get("resource").unwrap_or(&Value::Null)),
        _ => pretty(block),
    }
}

fn blocks(content: Option<&Value>) -> Vec<String> {
    content.and_then(Value::as_array).map(|a| a.iter().map(block).collect()).unwrap_or_default()
}

/// `call`: the content blocks, then the structured content.
pub(crate) fn call(value: &Value) -> String {
    call_text(value, false)
}

/// `call --structured`: the structured result alone (pretty-printed) when there is one.
pub(crate) fn call_structured(value: &Value) -> String {
    call_text(value, true)
}

/// `call`: the content, each block summarised. The structured result is shown in place of a
/// text block that is its JSON serialization (pretty-printed), and on its own only when no
/// block is text, or asked for (`structured`) — a typed tool's text is its answer (`7`), and
/// the object it is wrapped in (`{"result": 7}`) would say it twice.
fn call_text(value: &Value, structured_only: bool) -> String {
    let mut parts = Vec::new();
    if value.get("isError") == Some(&Value::Bool(true)) {
        parts.push("(the tool reported an error)".to_owned());
    }
    let structured = value.get("structuredContent");
    if let (true, Some(structured)) = (structured_only, structured) {
        parts.push(pretty(structured));
        return parts.join("\n");
    }
    let content = value.get("content").and_then(Value::as_array).map(|a| a.as_slice()).unwrap_or_default();
    let mut shown = false;
    for b in content {
        let duplicate = structured.is_some_and(|s| {
            str_of(b, "text").and_then(|t| serde_json::from_str::<Value>(t).ok()).as_ref() == Some(s)
        });
        match structured {
            Some(structured) if duplicate => {
                if !shown {
                    parts.push(pretty(structured));
                    shown = true;
                }
            }
            _ => parts.push(block(b)),
        }
    }
    let any_text = content.iter().any(|b| str_of(b, "type") == Some("text"));
    if let (false, false, Some(structured)) = (any_text, shown, structured) {
        parts.push(pretty(structured));
    }
    parts.join("\n")
}

/// `read`: each contents' URI and text.
pub(crate) fn read(value: &Value) -> String {
    let contents = value.get("contents").and_then(Value::as_array).map(|a| a.as_slice()).unwrap_or_default();
    contents.iter().map(resource_contents).collect::<Vec<_>>().join("\n\n")
}

/// `prompt`: the description, then each message with its role.
pub(crate) fn prompt(value: &Value) -> String {
    let mut parts = Vec::new();
    if let Some(description) = str_of(value, "description") {
        parts.push(description.to_owned());
    }
    for message in value.get("messages").and_then(Value::as_array).map(|a| a.as_slice()).unwrap_or_default() {
        let role = str_of(message, "role").unwrap_or("?");
        let content = message.get("content").unwrap_or(&Value::Null);
        let text = match content {
            Value::Array(_) => blocks(Some(content)).join("\n"),
            other => block(other),
        };
        parts.push(format!("[{role}]\n{text}"));
    }
    parts.join("\n\n")
}

/// `complete`: one value a line, or `(no completions)`.
pub(crate) fn complete(value: &Value) -> String {
    let completion = value.get("completion").unwrap_or(&Value::Null);
    let values = completion.get("values").and_then(Value::as_array).map(|a| a.as_slice()).unwrap_or_default();
    let mut out: String = values.iter().map(|v| format!("{}\n", v.as_str().unwrap_or("?"))).collect();
    if completion.get("hasMore") == Some(&Value::Bool(true)) {
        match completion.get("total").and_then(Value::as_u64) {
            Some(total) => out.push_str(&format!("(more: {total} in all)\n")),
            None => out.push_str("(more)\n"),
        }
    }
    if out.is_empty() { "(no completions)\n".to_owned() } else { out }
}

/// `info`.
pub(crate) fn info(value: &Value) -> String {
    let server = value.get("serverInfo").unwrap_or(&Value::Null);
    let version = str_of(server, "version").map(str::trim).filter(|v| !v.is_empty());
    let name = match (str_of(server, "name"), version) {
        (Some(n), Some(v)) => format!("{n} {v}"),
        (Some(n), None) => n.to_owned(),
        _ => "(not given)".to_owned(),
    };
    let mut rows = vec![
        ("server".to_owned(), name),
        ("protocol".to_owned(), str_of(value, "protocolVersion").unwrap_or("?").to_owned()),
        ("era".to_owned(), str_of(value, "era").unwrap_or("?").to_owned()),
        ("transport".to_owned(), str_of(value, "transport").unwrap_or("?").to_owned()),
    ];
    if let Some(versions) = value.get("serverVersions").and_then(Value::as_array) {
        let list: Vec<&str> = versions.iter().filter_map(Value::as_str).collect();
        let mut supports = list.join(", ");
        if value.get("versionsProbed") == Some(&Value::Bool(false)) {
            supports.push_str(
                " (a legacy server names only the revision it agrees to; --probe tries the others)",
            );
        }
        rows.push(("supports".to_owned(), supports));
    }
    if let Some(caps) = value.get("capabilities").and_then(Value::as_object) {
        let names: Vec<&str> = caps.keys().map(String::as_str).collect();
        rows.push(("capabilities".to_owned(), names.join(", ")));
    }
    let mut out = table(&rows);
    if let Some(instructions) = str_of(value, "instructions") {
        out.push_str(&format!("\n{instructions}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn lists_are_aligned_tables() {
        let text = list(&json!({"tools": [
            {"name": "echo", "description": "Say it back"},
            {"name": "countdown", "title": "Countdown", "description": "Count\nsecond line"},
        ]}));
        assert_eq!(text, "echo()       Say it back\ncountdown()  Countdown — Count\n");
        assert_eq!(list(&json!({"prompts": []})), "(none)\n");
    }

    #[test]
    fn tools_are_listed_with_their_signatures_and_annotations() {
        let read = json!({
            "name": "read_text_file",
            "description": "Read a file",
            "inputSchema": {"type": "object", "required": ["path"], "properties": {
                "tail": {"type": "number"}, "head": {"type": "number"}, "path": {"type": "string"}}},
            "annotations": {"readOnlyHint": true},
        });
        assert_eq!(signature(&read), "read_text_file(path: string, [head: number], [tail: number])");
        let odd = json!({"name": "odd", "inputSchema": {"type": "object", "required": ["mode", "tags"], "properties": {
            "mode": {"enum": ["fast", "slow"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "when": {"type": ["integer", "null"]},
            "thing": {"$ref": "#/$defs/Thing"},
            "free": {},
        }}, "outputSchema": {"type": "object"}, "annotations": {"destructiveHint": true, "idempotentHint": true}});
        // Cut where it would pass the width, with an ellipsis: `describe` shows the rest.
        assert_eq!(signature(&odd), r#"odd(mode: "fast"|"slow", tags: string[], [free: any], …)"#);
        let properties = &odd["inputSchema"]["properties"];
        assert_eq!(type_of(&properties["note"]), "string|null");
        assert_eq!(type_of(&properties["when"]), "integer|null");
        assert_eq!(type_of(&properties["thing"]), "object");
        assert_eq!(type_of(&json!({"enum": [1, 2, 3, 4, 5]})), "1|2|3|4|…");
        let text = list(&json!({"tools": [read, odd]}));
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].ends_with("  Read a file (read-only)"), "{text}");
        assert!(lines[1].ends_with("(destructive, idempotent, structured output)"), "{text}");
        let described = tool(&odd);
        assert!(described.starts_with("odd(mode: "), "{described}");
        assert!(
            described.contains("\ninput schema:\n{") && described.contains("\noutput schema:\n{"),
            "{described}"
        );
        assert!(described.contains("\"when\""), "the whole schema: {described}");
    }

    #[test]
    fn an_empty_version_leaves_no_trailing_space() {
        let text =
            info(&json!({"serverInfo": {"name": "bare", "version": ""}, "protocolVersion": "2025-06-18"}));
        assert!(text.lines().next().is_some_and(|l| l.ends_with("bare")), "{text:?}");
    }

    #[test]
    fn a_typed_tools_answer_is_shown_once() {
        // What every Python SDK typed tool answers: the text, and the same value wrapped.
        let answer = json!({
            "content": [{"type": "text", "text": "7"}],
            "structuredContent": {"result": 7},
        });
        assert_eq!(call(&answer), "7");
        assert_eq!(call_structured(&answer), "{\n  \"result\": 7\n}");
        // No text: the structured result is the answer.
        let bare = json!({"content": [], "structuredContent": {"result": 7}});
        assert_eq!(call(&bare), "{\n  \"result\": 7\n}");
        let image = json!({
            "content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}],
            "structuredContent": {"ok": true},
        });
        assert_eq!(call(&image), "[image image/png, 3 bytes]\n{\n  \"ok\": true\n}");
        // Asked for and absent: the content as usual.
        assert_eq!(call_structured(&json!({"content": [{"type": "text", "text": "hi"}]})), "hi");
    }

    #[test]
    fn content_blocks_are_summarised() {
        let text = call(&json!({
            "content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                {"type": "audio", "data": "AAA=", "mimeType": "audio/wav"},
                {"type": "resource", "resource": {"uri": "demo://x", "text": "inside"}},
                {"type": "text", "text": "{\"sum\":3}"},
            ],
            "structuredContent": {"sum": 3},
        }));
        assert_eq!(
            text,
            "hello\n[image image/png, 3 bytes]\n[audio audio/wav, 2 bytes]\ndemo://x\ninside\n{\n  \"sum\": 3\n}"
        );
    }

    #[test]
    fn a_table_cell_stays_on_its_line() {
        let text = list(&json!({"tools": [
            {"name": "two\nlines\x1b[2J", "description": "ok\r\x1b]0;title\x07"},
            {"name": "b"},
        ]}));
        assert_eq!(text, "two\\u{a}lines\\u{1b}[2J()  ok\\u{d}\\u{1b}]0;title\\u{7}\nb()\n");
    }

    #[test]
    fn completions_one_a_line() {
        let text = complete(&json!({"completion": {"values": ["a", "b"], "hasMore": true, "total": 9}}));
        assert_eq!(text, "a\nb\n(more: 9 in all)\n");
        assert_eq!(complete(&json!({"completion": {"values": []}})), "(no completions)\n");
    }
}
