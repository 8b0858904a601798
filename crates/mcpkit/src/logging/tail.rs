//! The last lines a stdio server wrote to its stderr, kept whatever the verbosity, for the
//! error that says it exited while connecting.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use mcp_client::transport::stdio::STDERR_END_TARGET;
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::Context;

/// How many of the last lines are kept.
const LINES: usize = 20;

struct Kept {
    lines: VecDeque<String>,
    /// The server's stderr ended: every line it wrote is here.
    ended: bool,
    /// The lines were printed as they came (-vv): not to be printed again.
    shown: bool,
}

static KEPT: Mutex<Kept> = Mutex::new(Kept { lines: VecDeque::new(), ended: false, shown: false });
static ENDED: Condvar = Condvar::new();

fn kept() -> std::sync::MutexGuard<'static, Kept> {
    KEPT.lock().unwrap_or_else(|e| e.into_inner())
}

/// The layer that keeps them (given only the stderr targets' events).
pub(crate) struct StderrTail;

impl StderrTail {
    /// `shown`: the lines are also printed as they come.
    pub(crate) fn new(shown: bool) -> StderrTail {
        kept().shown = shown;
        StderrTail
    }
}

impl<S: Subscriber> tracing_subscriber::Layer<S> for StderrTail {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let mut kept = kept();
        if event.metadata().target() == STDERR_END_TARGET {
            kept.ended = true;
            ENDED.notify_all();
            return;
        }
        let mut message = Message(String::new());
        event.record(&mut message);
        if kept.lines.len() == LINES {
            kept.lines.pop_front();
        }
        kept.lines.push_back(message.0);
    }
}

struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            use std::fmt::Write;
            let _ = write!(self.0, "{value:?}");
        }
    }
}

/// What to add to the error of a server that exited while connecting: its last stderr lines
/// (waiting up to `wait` for its stderr to end), or that it wrote none; `None` when they were
/// printed already.
pub(crate) fn describe(wait: Duration) -> Option<String> {
    let kept = kept();
    let (kept, _) = ENDED.wait_timeout_while(kept, wait, |k| !k.ended).unwrap_or_else(|e| e.into_inner());
    if kept.shown {
        return None;
    }
    if kept.lines.is_empty() {
        return Some("; it wrote nothing on its stderr".to_owned());
    }
    let lines: Vec<String> = kept.lines.iter().map(|l| format!("  {}", crate::terminal::line(l))).collect();
    Some(format!("; its stderr ended with:\n{}", lines.join("\n")))
}
