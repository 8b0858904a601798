//! What a soak client expects back, and the tally of what it got.
//!
//! Every call echoes a text that names its client and its sequence number, so an answer that
//! reaches the wrong caller, or the right caller under the wrong id, is seen at once.

use std::fmt;

use serde_json::Value;

/// The text of call `seq` of client `client`, padded with `x` to `len` bytes.
pub(crate) fn token(client: usize, seq: u64, len: usize) -> String {
    let mut text = format!("c{client}s{seq}");
    let pad = len.saturating_sub(text.len());
    text.extend(std::iter::repeat_n('x', pad));
    text
}

/// `_meta` of a 2026-07-28 request.
pub(crate) const MODERN_META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"#;

/// A `tools/call echo` request with `id` (already JSON) echoing `text`.
pub(crate) fn call(id: &str, text: &str, modern: bool) -> String {
    let meta = if modern { MODERN_META } else { "" };
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{{meta}"name":"echo","arguments":{{"text":"{text}"}}}}}}"#
    )
}

/// A `notifications/cancelled` for `id` (already JSON).
pub(crate) fn cancel(id: &str, modern: bool) -> String {
    let meta = if modern { MODERN_META } else { "" };
    format!(r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{{meta}"requestId":{id}}}}}"#)
}

/// What one message turned out to be for the call that expected `text` under `id`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The echo of `text`, under `id`.
    Good,
    /// A JSON-RPC error under `id`, with its code.
    Error(i64),
    /// A result under `id` that is not the echo of `text`: another call's answer.
    CrossWired(String),
    /// Not an answer to `id` at all.
    Other,
}

/// Judges `message` against the call expected under `id` (compared as JSON) with `text`.
pub(crate) fn judge(message: &Value, id: &Value, text: &str) -> Verdict {
    if message.get("id") != Some(id) {
        return Verdict::Other;
    }
    if let Some(error) = message.get("error") {
        return Verdict::Error(error.get("code").and_then(Value::as_i64).unwrap_or(0));
    }
    match message.pointer("/result/content/0/text").and_then(Value::as_str) {
        Some(got) if got == text => Verdict::Good,
        Some(got) => Verdict::CrossWired(got.chars().take(40).collect()),
        None => Verdict::CrossWired(message.to_string().chars().take(80).collect()),
    }
}

/// The `data:` payloads of an SSE body that are JSON (the priming event has none).
pub(crate) fn sse_messages(body: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut data = String::new();
    for line in body.lines().chain(std::iter::once("")) {
        if let Some(rest) = line.strip_prefix("data:") {
            data.push_str(rest.strip_prefix(' ').unwrap_or(rest));
        } else if line.is_empty() && !data.is_empty() {
            if let Ok(value) = serde_json::from_str(&data) {
                out.push(value);
            }
            data.clear();
        }
    }
    out
}

/// What one leg (or one client of it) saw.
#[derive(Debug, Default, Clone)]
pub(crate) struct Tally {
    /// Calls answered with their own echo.
    pub(crate) good: u64,
    /// Answers that carried another call's text (must stay 0).
    pub(crate) cross_wired: u64,
    /// Calls never answered although not cancelled (must stay 0).
    pub(crate) lost: u64,
    /// Calls answered with an unexpected JSON-RPC error or HTTP status (must stay 0).
    pub(crate) failed: u64,
    /// Deliberate duplicate ids refused with `-32600` while the first was in flight.
    pub(crate) duplicates_refused: u64,
    /// Deliberate duplicates that reached the server after the first call had finished, and so
    /// were run as calls of their own (correctly answered).
    pub(crate) duplicates_run: u64,
    /// Cancelled calls, and how many of them were answered anyway (correctly).
    pub(crate) cancelled: u64,
    pub(crate) cancelled_answered: u64,
    /// `503` answers (retried once after 5 ms; a second `503` counts as failed).
    pub(crate) busy: u64,
    /// Connections (or pipes) dropped in the middle of an answer, and reconnections.
    pub(crate) disconnects: u64,
    /// The first few problems, for the report.
    pub(crate) problems: Vec<String>,
}

impl Tally {
    pub(crate) fn problem(&mut self, what: String) {
        if self.problems.len() < 5 {
            self.problems.push(what);
        }
    }

    pub(crate) fn add(&mut self, other: &Tally) {
        self.good += other.good;
        self.cross_wired += other.cross_wired;
        self.lost += other.lost;
        self.failed += other.failed;
        self.duplicates_refused += other.duplicates_refused;
        self.duplicates_run += other.duplicates_run;
        self.cancelled += other.cancelled;
        self.cancelled_answered += other.cancelled_answered;
        self.disconnects += other.disconnects;
        self.busy += other.busy;
        for p in &other.problems {
            self.problem(p.clone());
        }
    }

    /// Nothing cross-wired, lost or failed.
    pub(crate) fn clean(&self) -> bool {
        self.cross_wired == 0 && self.lost == 0 && self.failed == 0
    }
}

impl fmt::Display for Tally {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "good {} · cross-wired {} · lost {} · failed {} · duplicates refused {} (run {}) · cancelled {} ({} answered) · disconnects {} · 503s {}",
            self.good,
            self.cross_wired,
            self.lost,
            self.failed,
            self.duplicates_refused,
            self.duplicates_run,
            self.cancelled,
            self.cancelled_answered,
            self.disconnects,
            self.busy
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_are_judged_by_id_and_text() {
        let text = token(3, 17, 20);
        assert_eq!(text, "c3s17xxxxxxxxxxxxxxx");
        let good =
            json!({"jsonrpc": "2.0", "id": 5, "result": {"content": [{"type": "text", "text": text}]}});
        assert_eq!(judge(&good, &json!(5), &text), Verdict::Good);
        assert_eq!(judge(&good, &json!(6), &text), Verdict::Other);
        assert!(matches!(judge(&good, &json!(5), "c3s18"), Verdict::CrossWired(_)));
        let error = json!({"jsonrpc": "2.0", "id": 5, "error": {"code": -32600, "message": "dup"}});
        assert_eq!(judge(&error, &json!(5), &text), Verdict::Error(-32600));
    }

    #[test]
    fn sse_bodies_yield_their_json_events() {
        let body = "id: a.0\nretry: 1000\ndata: \n\nevent: message\ndata: {\"id\":1}\n\ndata: {\"id\":2}\n";
        assert_eq!(sse_messages(body), vec![json!({"id": 1}), json!({"id": 2})]);
    }
}
