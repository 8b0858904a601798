//! Progress of a running request on stderr, fed by the server's progress notifications.
//!
//! On a terminal: one line redrawn in place (`\r`) — a bar when the total is known, else a
//! spinner and the count — followed by the server's message, and erased when the request ends.
//! When stderr is not a terminal, nothing unless `--progress` asks for plain lines
//! (`progress 2/5 3 s left`) that logs and tests can read.
//!
//! Interactive prompts share stderr: [`pause`] erases the line and holds updates back until
//! the prompt is over, so a bar never lands in the middle of a question. Other lines on stderr
//! (the server's log messages) go through [`print_line`], above the bar.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use mcp_client::RequestOptions;
use mcp_types::ProgressNotificationParams;

/// How progress is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Style {
    /// Not at all.
    Off,
    /// One line redrawn in place (a terminal).
    Bar,
    /// One plain line per notification.
    Lines,
}

impl Style {
    /// A bar on a terminal; plain lines elsewhere when `--progress` asks for them.
    pub(crate) fn detect(progress_flag: bool) -> Style {
        if std::io::stderr().is_terminal() {
            Style::Bar
        } else if progress_flag {
            Style::Lines
        } else {
            Style::Off
        }
    }
}

/// What is on stderr, shared by every tracker and prompt of the process.
#[derive(Default)]
struct Screen {
    /// A bar line is drawn (and must be erased before anything else is written).
    drawn: bool,
    /// Prompts in progress; while non-zero nothing is drawn.
    paused: usize,
    /// The latest bar, redrawn when a prompt ends.
    bar: Option<String>,
    /// Plain lines held back during a prompt.
    held: Vec<String>,
}

static SCREEN: Mutex<Screen> = Mutex::new(Screen { drawn: false, paused: 0, bar: None, held: Vec::new() });

fn screen() -> MutexGuard<'static, Screen> {
    SCREEN.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

const ERASE: &str = "\r\x1b[2K";
/// Autowrap off, then on again: a bar line wider than the terminal (whose width `$COLUMNS` only
/// estimates) is cut at the right margin instead of wrapping onto a row that `\r` and
/// [`ERASE`] would leave behind.
const NO_WRAP: &str = "\x1b[?7l";
const WRAP: &str = "\x1b[?7h";

fn write_stderr(text: &str) {
    if text.is_empty() {
        return;
    }
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    let _ = err.flush();
}

/// Each method updates the state and returns what to write to stderr for it.
impl Screen {
    fn draw_bar(&mut self, line: String) -> String {
        let out = if self.paused == 0 {
            self.drawn = true;
            format!("{ERASE}{NO_WRAP}{line}{WRAP}")
        } else {
            String::new()
        };
        self.bar = Some(line);
        out
    }

    fn print_line(&mut self, line: String) -> String {
        if self.paused == 0 {
            format!("{line}\n")
        } else {
            self.held.push(line);
            String::new()
        }
    }

    /// A line printed above the bar: the bar is erased, the line written, and the bar drawn
    /// again below it.
    fn print_above(&mut self, line: String) -> String {
        if self.paused > 0 {
            self.held.push(line);
            return String::new();
        }
        let mut out = self.erase();
        out.push_str(&line);
        out.push('\n');
        if let Some(bar) = self.bar.clone() {
            out.push_str(&self.draw_bar(bar));
        }
        out
    }

    fn erase(&mut self) -> String {
        if self.drawn {
            self.drawn = false;
            ERASE.to_owned()
        } else {
            String::new()
        }
    }

    /// A prompt is over: the lines held back, then the bar again.
    fn resume(&mut self) -> String {
        self.paused = self.paused.saturating_sub(1);
        if self.paused > 0 {
            return String::new();
        }
        let mut out: String = std::mem::take(&mut self.held).into_iter().map(|l| format!("{l}\n")).collect();
        if let Some(bar) = self.bar.clone() {
            out.push_str(&self.draw_bar(bar));
        }
        out
    }
}

/// Prints `line` on stderr without garbling a progress bar being drawn (it goes above the bar),
/// or after the prompt being shown.
pub(crate) fn print_line(line: String) {
    let mut s = screen();
    let out = s.print_above(line);
    write_stderr(&out);
}

/// Keeps progress off stderr while it lives (an interactive prompt is being shown).
pub(crate) struct Pause(());

/// Erases the progress line and holds updates back until the returned guard is dropped.
pub(crate) fn pause() -> Pause {
    let mut s = screen();
    s.paused += 1;
    let out = s.erase();
    write_stderr(&out);
    Pause(())
}

/// The command is being ended by a signal: erases the progress line, or ends the line of the
/// question being asked, so that what comes next (the shell's prompt) starts on a clean line.
/// Nothing is drawn any more.
pub(crate) fn interrupted() {
    let mut s = screen();
    s.bar = None;
    s.held.clear();
    if s.paused > 0 {
        write_stderr("\n");
    } else {
        let out = s.erase();
        write_stderr(&out);
    }
    s.paused += 1;
}

impl Drop for Pause {
    fn drop(&mut self) {
        let mut s = screen();
        let out = s.resume();
        write_stderr(&out);
    }
}

/// Shows the progress of one request until dropped.
pub(crate) struct Tracker {
    style: Style,
    active: Arc<AtomicBool>,
}

impl Tracker {
    /// A tracker drawing in this style.
    pub(crate) fn new(style: Style) -> Tracker {
        Tracker { style, active: Arc::new(AtomicBool::new(true)) }
    }

    /// Request options that ask for progress notifications and show them. With a hard `limit`
    /// (`--timeout`) the request fails when it has passed, whatever progress is reported;
    /// without one, each notification restarts the client's timeout, up to its maximum.
    pub(crate) fn options(&self, limit: Option<Duration>) -> RequestOptions {
        let style = self.style;
        let active = self.active.clone();
        let frame = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let options = match limit {
            // Nothing to restart: the limit counts from the start.
            Some(limit) => RequestOptions::default().timeout(limit).max_timeout(limit),
            None => RequestOptions::default().reset_timeout_on_progress(true),
        };
        let (task_style, task_active) = (style, self.active.clone());
        // Each poll of a task brings its state again: only a change is shown.
        let last = Mutex::new(String::new());
        let options = options.on_task(move |t| {
            if !task_active.load(Ordering::SeqCst) {
                return;
            }
            let line = crate::task::line(t);
            {
                let mut last = last.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                if *last == line {
                    return;
                }
                last.clone_from(&line);
            }
            let mut s = screen();
            let out = match task_style {
                Style::Off => return,
                Style::Bar if !t.status.is_terminal() => s.draw_bar(line),
                Style::Bar => return,
                Style::Lines => s.print_line(line),
            };
            write_stderr(&out);
        });
        options.on_progress(move |p| {
            if !active.load(Ordering::SeqCst) {
                return;
            }
            match style {
                Style::Off => {}
                Style::Bar => {
                    let n = frame.fetch_add(1, Ordering::Relaxed);
                    let mut s = screen();
                    let out = s.draw_bar(bar_line(p, n, terminal_width()));
                    write_stderr(&out);
                }
                Style::Lines => {
                    let mut s = screen();
                    let out = s.print_line(plain_line(p));
                    write_stderr(&out);
                }
            }
        })
    }
}

impl Drop for Tracker {
    fn drop(&mut self) {
        self.active.store(false, Ordering::SeqCst);
        if self.style == Style::Bar {
            let mut s = screen();
            s.bar = None;
            let out = s.erase();
            write_stderr(&out);
        }
    }
}

fn terminal_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse().ok())
        .filter(|&w: &usize| w >= 20)
        .unwrap_or(80)
}

/// A number as a person writes it: `2`, not `2.0`.
pub(crate) fn number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 { format!("{}", n as i64) } else { format!("{n}") }
}

/// The server's message on one line, without control characters (a server must not be able
/// to move the cursor or recolour the terminal).
fn message(p: &ProgressNotificationParams) -> Option<String> {
    let text: String = p.message.as_deref()?.chars().map(|c| if c.is_control() { ' ' } else { c }).collect();
    let text = text.trim().to_owned();
    (!text.is_empty()).then_some(text)
}

/// `progress 2/5 message` (or `progress 2 message` without a total).
pub(crate) fn plain_line(p: &ProgressNotificationParams) -> String {
    let mut line = format!("progress {}", number(p.progress));
    if let Some(total) = p.total {
        line.push_str(&format!("/{}", number(total)));
    }
    if let Some(m) = message(p) {
        line.push(' ');
        line.push_str(&m);
    }
    line
}

const SPINNER: [char; 4] = ['|', '/', '-', '\\'];
const BAR_WIDTH: usize = 24;

/// `[#########---------------] 2/5  40% message` (or `| 3 message` without a total), cut to
/// fit `width` columns so that it never wraps.
pub(crate) fn bar_line(p: &ProgressNotificationParams, frame: usize, width: usize) -> String {
    let mut line = match p.total.filter(|t| *t > 0.0 && t.is_finite()) {
        Some(total) => {
            let ratio = (p.progress / total).clamp(0.0, 1.0);
            let filled = (ratio * BAR_WIDTH as f64).round() as usize;
            format!(
                "[{}{}] {}/{} {:>3.0}%",
                "#".repeat(filled),
                "-".repeat(BAR_WIDTH - filled),
                number(p.progress),
                number(total),
                ratio * 100.0
            )
        }
        None => format!("{} {}", SPINNER[frame % SPINNER.len()], number(p.progress)),
    };
    if let Some(m) = message(p) {
        line.push(' ');
        line.push_str(&m);
    }
    line.chars().take(width.saturating_sub(1)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(progress: f64, total: Option<f64>, message: Option<&str>) -> ProgressNotificationParams {
        let mut value = serde_json::json!({ "progressToken": 1, "progress": progress });
        if let Some(t) = total {
            value["total"] = t.into();
        }
        if let Some(m) = message {
            value["message"] = m.into();
        }
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn plain_lines_show_progress_total_and_message() {
        assert_eq!(plain_line(&params(2.0, Some(5.0), Some("3 s left"))), "progress 2/5 3 s left");
        assert_eq!(plain_line(&params(0.5, None, None)), "progress 0.5");
        assert_eq!(plain_line(&params(1.0, None, Some("a\x1b[31mb\n"))), "progress 1 a [31mb");
    }

    #[test]
    fn bar_fills_with_the_ratio_and_fits_the_width() {
        let line = bar_line(&params(1.0, Some(4.0), Some("going")), 0, 80);
        assert_eq!(line, format!("[{}{}] 1/4  25% going", "#".repeat(6), "-".repeat(18)));
        let full = bar_line(&params(9.0, Some(4.0), None), 0, 80);
        assert!(full.starts_with(&format!("[{}]", "#".repeat(24))), "{full}");
        assert!(full.ends_with("100%"), "{full}");
        let long = bar_line(&params(1.0, Some(2.0), Some(&"x".repeat(200))), 0, 40);
        assert_eq!(long.chars().count(), 39);
    }

    #[test]
    fn the_bar_is_drawn_with_autowrap_off() {
        let mut s = Screen::default();
        assert_eq!(s.draw_bar("[##--] 1/2".into()), "\r\x1b[2K\x1b[?7l[##--] 1/2\x1b[?7h");
        assert_eq!(s.erase(), "\r\x1b[2K");
        assert_eq!(s.erase(), "", "nothing drawn any more");
    }

    #[test]
    fn a_line_goes_above_the_bar_or_waits_for_the_prompt() {
        let mut s = Screen::default();
        assert_eq!(s.print_above("[info] a".into()), "[info] a\n");
        let _ = s.draw_bar("bar".into());
        assert_eq!(s.print_above("[info] b".into()), "\r\x1b[2K[info] b\n\r\x1b[2K\x1b[?7lbar\x1b[?7h");
        s.paused += 1;
        let _ = s.erase();
        assert_eq!(s.print_above("[info] c".into()), "");
        assert_eq!(s.resume(), "[info] c\n\r\x1b[2K\x1b[?7lbar\x1b[?7h");
    }

    #[test]
    fn without_total_a_spinner_turns() {
        assert_eq!(bar_line(&params(3.0, None, Some("m")), 0, 80), "| 3 m");
        assert_eq!(bar_line(&params(4.0, None, None), 1, 80), "/ 4");
    }
}
