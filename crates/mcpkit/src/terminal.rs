//! Text from a server made safe to show to a person: the one sanitizer of everything mcpkit
//! renders for humans (results in text mode, the `mcpkit:` error line, the `-v` trace, the
//! interactive prompts).
//!
//! A server controls the names, descriptions and contents it sends. Shown raw, a control
//! character could drive the terminal: an escape sequence clears the screen, changes the
//! window title, rewrites what was printed, or (OSC 52) writes the clipboard. Every control
//! character — C0 (U+0000–U+001F), DEL (U+007F) and C1 (U+0080–U+009F, which some terminals
//! honour as escape sequences on their own) — is therefore shown as a visible escape, `\u{1b}`,
//! except the newline and the tab in multi-line text. JSON output is never passed through
//! here: it stays byte for byte what the server sent.

use std::borrow::Cow;
use std::fmt::Write;

/// Multi-line text: control characters escaped, newlines and tabs kept.
pub(crate) fn text(s: &str) -> Cow<'_, str> {
    clean(s, |c| c == '\n' || c == '\t')
}

/// Text that must stay on one line: newlines and carriage returns escaped too.
pub(crate) fn line(s: &str) -> Cow<'_, str> {
    clean(s, |c| c == '\t')
}

fn clean(s: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && !keep(c);
    if !s.chars().any(unsafe_char) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if unsafe_char(c) {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_become_visible() {
        let osc52 = "copy\x1b]52;c;ZWNobyBoaQ==\x07 done";
        assert_eq!(text(osc52), "copy\\u{1b}]52;c;ZWNobyBoaQ==\\u{7} done");
        assert_eq!(text("a\x1b[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(text("del\x7f c1\u{9b}31m nul\0"), "del\\u{7f} c1\\u{9b}31m nul\\u{0}");
        assert_eq!(text("back\rspace\x08"), "back\\u{d}space\\u{8}");
    }

    #[test]
    fn newlines_and_tabs_stay_where_lines_may_break() {
        assert_eq!(text("one\n\ttwo\n"), "one\n\ttwo\n");
        assert_eq!(line("one\n\ttwo\r\n"), "one\\u{a}\ttwo\\u{d}\\u{a}");
    }

    #[test]
    fn plain_text_is_not_copied() {
        assert!(matches!(text("héllo — ✓ 日本"), Cow::Borrowed("héllo — ✓ 日本")));
        assert!(matches!(line("plain"), Cow::Borrowed("plain")));
    }
}
