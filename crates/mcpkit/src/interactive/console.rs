//! The one prompt channel of the process: questions go to stderr, answers come from stdin.
//!
//! A dedicated thread owns stdin and runs one dialogue at a time, so concurrent server requests
//! never interleave their questions, and lines typed (or piped) ahead stay buffered in its
//! reader for the next question. The thread is not a tokio blocking task: a read that never
//! returns cannot hold up the runtime's shutdown; it simply ends with the process.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::mpsc;

/// What a dialogue talks through.
pub(crate) trait Io {
    /// Shows `text` (no newline added).
    fn say(&mut self, text: &str);
    /// Shows `prompt` and reads one line, without its line ending; `None` at end of input.
    fn ask(&mut self, prompt: &str) -> Option<String>;
}

/// Shows a line.
pub(crate) fn line(io: &mut dyn Io, text: &str) {
    io.say(text);
    io.say("\n");
}

/// The process's stdin and stderr.
struct Stdio {
    input: Box<dyn BufRead + Send>,
    /// Write each answer after its prompt (stdin is not a terminal, so nothing echoed it).
    echo: bool,
    eof: bool,
}

impl Io for Stdio {
    fn say(&mut self, text: &str) {
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(text.as_bytes());
        let _ = err.flush();
    }

    fn ask(&mut self, prompt: &str) -> Option<String> {
        self.say(prompt);
        if self.eof {
            self.say("\n");
            return None;
        }
        let mut buf = Vec::new();
        let read = self.input.read_until(b'\n', &mut buf);
        if matches!(read, Ok(0) | Err(_)) {
            self.eof = true;
            self.say("\n");
            return None;
        }
        while buf.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
            buf.pop();
        }
        let answer = String::from_utf8_lossy(&buf).into_owned();
        if self.echo {
            self.say(&format!("{}\n", printable(&answer)));
        }
        Some(answer)
    }
}

type Job = Box<dyn FnOnce(&mut dyn Io) + Send>;

/// A handle on the prompt thread.
#[derive(Clone)]
pub(crate) struct Console {
    jobs: mpsc::Sender<Job>,
}

impl Console {
    /// Starts the prompt thread on stdin/stderr. It reads nothing until a dialogue runs.
    pub(crate) fn start() -> std::io::Result<Console> {
        Console::with(Stdio {
            input: Box::new(std::io::BufReader::new(std::io::stdin())),
            echo: !std::io::stdin().is_terminal(),
            eof: false,
        })
    }

    /// Starts the prompt thread on `io`.
    fn with(mut io: impl Io + Send + 'static) -> std::io::Result<Console> {
        let (jobs, queue) = mpsc::channel::<Job>();
        std::thread::Builder::new().name("mcpkit-prompt".into()).spawn(move || {
            while let Ok(job) = queue.recv() {
                job(&mut io);
            }
        })?;
        Ok(Console { jobs })
    }

    /// Runs `dialogue` when the dialogues before it are over, with progress held off stderr.
    /// `None` when the prompt thread is gone.
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        dialogue: impl FnOnce(&mut dyn Io) -> T + Send + 'static,
    ) -> Option<T> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move |io| {
            if tx.is_closed() {
                // The request was given up (cancelled, timed out) while queued: don't ask.
                return;
            }
            let _pause = crate::progress::pause();
            let _ = tx.send(dialogue(io));
        });
        self.jobs.send(job).ok()?;
        rx.await.ok()
    }
}

/// Text from the server made safe for a terminal ([`crate::terminal::text`]): control
/// characters (escape sequences that could move the cursor or rewrite the screen) are shown
/// escaped; newlines and tabs are kept.
pub(crate) fn printable(text: &str) -> String {
    crate::terminal::text(text).into_owned()
}

/// [`printable`] on one line: newlines become spaces too.
pub(crate) fn one_line(text: &str) -> String {
    printable(text).replace('\n', " ")
}

/// Indents each line of `text` by `indent` (after making it printable).
pub(crate) fn indented(text: &str, indent: &str) -> String {
    printable(text).lines().map(|l| format!("{indent}{l}\n")).collect()
}

/// Scripted answers for unit tests of dialogues: what was shown is kept in `shown`.
#[cfg(test)]
pub(crate) struct Script {
    pub(crate) answers: std::collections::VecDeque<String>,
    pub(crate) shown: String,
}

#[cfg(test)]
impl Script {
    pub(crate) fn new(answers: &[&str]) -> Script {
        Script { answers: answers.iter().map(|s| (*s).to_owned()).collect(), shown: String::new() }
    }
}

#[cfg(test)]
impl Io for Script {
    fn say(&mut self, text: &str) {
        self.shown.push_str(text);
    }

    fn ask(&mut self, prompt: &str) -> Option<String> {
        self.shown.push_str(prompt);
        let answer = self.answers.pop_front();
        self.shown.push_str(answer.as_deref().unwrap_or("<EOF>"));
        self.shown.push('\n');
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn dialogues_take_turns_and_keep_lines_typed_ahead() {
        let console = Console::with(Script::new(&["a1", "a2", "b1", "b2", "c1"])).unwrap();
        let dialogue = |name: &'static str| {
            let console = console.clone();
            tokio::spawn(async move {
                console
                    .run(move |io| {
                        let first = io.ask(&format!("{name}? "));
                        // Let the other dialogues try to get in between.
                        std::thread::yield_now();
                        let second = io.ask(&format!("{name} again? "));
                        (first, second)
                    })
                    .await
                    .unwrap()
            })
        };
        let (x, y) = (dialogue("x"), dialogue("y"));
        let (x, y) = (x.await.unwrap(), y.await.unwrap());
        let mut pairs = [x, y];
        pairs.sort();
        assert_eq!(
            pairs,
            [(Some("a1".to_owned()), Some("a2".to_owned())), (Some("b1".to_owned()), Some("b2".to_owned()))],
            "each dialogue got two consecutive lines"
        );
        let third = console.run(|io| (io.ask("z? "), io.ask("z again? "))).await.unwrap();
        assert_eq!(third, (Some("c1".to_owned()), None), "the line typed ahead waited for the next question");
    }

    #[test]
    fn server_text_cannot_drive_the_terminal() {
        assert_eq!(printable("a\x1b[2Jb\tc\nd\u{9b}e"), "a\\u{1b}[2Jb\tc\nd\\u{9b}e");
        assert_eq!(one_line("two\nlines"), "two lines");
        assert_eq!(indented("x\ny", "  "), "  x\n  y\n");
    }
}
