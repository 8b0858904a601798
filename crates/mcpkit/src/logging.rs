//! Diagnostics on stderr, never on stdout (stdout carries results, or MCP itself on
//! `serve --stdio`).
//!
//! Client commands print nothing but their one-line error unless asked: `-v` shows the wire
//! trace (`mcp_client::wire`) in a compact form — `-> {json}`, `<- {json}`,
//! `HTTP POST <url> -> 200 OK (...)` — and `-vv` adds the client's debug logs and the lines a
//! stdio server writes to its stderr. `RUST_LOG` adds its own directives either way.

use std::fmt;
use std::io::IsTerminal;

use mcp_client::transport::stdio::{STDERR_END_TARGET, STDERR_TARGET};
use mcp_client::{IGNORED_TARGET, WIRE_TARGET};
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::FmtContext;
use tracing_subscriber::fmt::format::{self, FormatEvent, FormatFields, Writer};
use tracing_subscriber::registry::LookupSpan;

/// The directives `-v` (1), `-vv` (2) and `-vvv` (3 and more) add for client commands.
fn client_directives(verbose: u8) -> &'static [&'static str] {
    match verbose {
        0 => &["mcp_client::ignored=warn"],
        1 => &["mcp_client::wire=trace", "mcp_client::ignored=warn"],
        2 => &["mcp_client=debug", "mcp_client::wire=trace", "mcp_client::server_stderr=info"],
        _ => &["mcp_client=trace", "mcp_types=trace"],
    }
}

/// `RUST_LOG`'s directives, when it is set and valid.
fn from_env() -> Option<EnvFilter> {
    EnvFilter::try_from_default_env().ok()
}

/// Sets up diagnostics for a client command (`info`, `list`, `call`, ...): nothing without `-v`
/// or `RUST_LOG`, so that a failure prints exactly one line.
pub(crate) fn init_client(verbose: u8) {
    use tracing_subscriber::Layer;
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let directives = client_directives(verbose);
    let filter = match from_env() {
        Some(filter) => Some(filter),
        None if directives.is_empty() => None,
        None => Some(EnvFilter::new("off")),
    };
    // -vv prints them as they come (`client_directives`); RUST_LOG alone may not.
    let shown = verbose >= 2;
    let printed = filter.map(|filter| {
        let filter = directives.iter().fold(filter, |filter, directive| match directive.parse() {
            Ok(directive) => filter.add_directive(directive),
            Err(_) => filter,
        });
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(std::io::stderr().is_terminal())
            .event_format(CliFormat { inner: format::Format::default() })
            .with_filter(filter)
    });
    // A stdio server's stderr is kept (its last lines) whatever the verbosity: when it exits
    // while connecting, they say why.
    let tail = tail::StderrTail::new(shown).with_filter(
        tracing_subscriber::filter::Targets::new()
            .with_target(STDERR_TARGET, tracing::Level::INFO)
            .with_target(STDERR_END_TARGET, tracing::Level::DEBUG),
    );
    let _ = tracing_subscriber::registry().with(printed).with(tail).try_init();
}

/// How `serve` and `gateway` write their diagnostics.
#[derive(clap::Args, Debug, Clone, Default)]
pub(crate) struct ServerLogArgs {
    /// The format of the log lines on stderr: `text`, or `json` (one object per line).
    #[arg(long, value_name = "FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub(crate) log_format: LogFormat,
    /// Log one line per request: time, id, method, tool or prompt name, era, revision, the
    /// caller's subject, outcome (success, tool_error, jsonrpc_error, http_refused,
    /// cancelled), JSON-RPC code or HTTP status, duration. Never arguments, results, tokens or
    /// Mcp-Param-* values.
    #[arg(long)]
    pub(crate) request_log: bool,
    /// For debugging: the request log also shows each tool call's and prompt's arguments,
    /// every value the tool's input schema marks secret (`writeOnly: true`, `format:
    /// "password"`) replaced by "[redacted]". Implies --request-log.
    #[arg(long)]
    pub(crate) request_log_arguments: bool,
}

impl ServerLogArgs {
    /// Whether requests are logged.
    pub(crate) fn requests(&self) -> bool {
        self.request_log || self.request_log_arguments
    }
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum LogFormat {
    #[default]
    Text,
    Json,
}

/// Sets up diagnostics for `serve` and `gateway`: warnings by default, `-v` info, `-vv` debug,
/// `-vvv` trace; `RUST_LOG` instead when set. The request log (`--request-log`) is added to
/// either.
pub(crate) fn init_server(verbose: u8, log: &ServerLogArgs) {
    let level = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let mut filter = from_env().unwrap_or_else(|| EnvFilter::new(level));
    // The audit log (refusals by policy) is always written.
    if let Ok(directive) = format!("{}=info", mcp_server::policy::AUDIT_TARGET).parse() {
        filter = filter.add_directive(directive);
    }
    if log.requests() {
        let directive = format!("{}=info", mcp_server::observe::REQUEST_LOG_TARGET);
        if let Ok(directive) = directive.parse() {
            filter = filter.add_directive(directive);
        }
    }
    let builder = tracing_subscriber::fmt().with_writer(std::io::stderr).with_env_filter(filter);
    let _ = match log.log_format {
        LogFormat::Text => builder.with_ansi(std::io::stderr().is_terminal()).try_init(),
        LogFormat::Json => builder.json().flatten_event(true).with_current_span(false).try_init(),
    };
}

/// The wire trace as bare lines, a stdio server's stderr as `[stderr] <line>`, anything else in
/// tracing-subscriber's usual form.
pub(crate) mod tail;

struct CliFormat {
    inner: format::Format,
}

impl<S, N> FormatEvent<S, N> for CliFormat
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let prefix = match event.metadata().target() {
            WIRE_TARGET => "",
            STDERR_TARGET => "[stderr] ",
            IGNORED_TARGET => "mcpkit: warning: ",
            _ => return self.inner.format_event(ctx, writer, event),
        };
        let mut message = Message(String::new());
        event.record(&mut message);
        // The bytes a server sent (a line that is not JSON, its stderr) may hold escape sequences.
        writeln!(writer, "{prefix}{}", crate::terminal::line(&message.0))
    }
}

/// An event's `message` field, and nothing else.
struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if field.name() == "message" {
            use std::fmt::Write;
            let _ = write!(self.0, "{value:?}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the subscriber writes, kept.
    #[derive(Clone, Default)]
    struct Capture(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl std::io::Write for Capture {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn trace_lines_cannot_drive_the_terminal() {
        let capture = Capture::default();
        let writer = capture.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_env_filter(EnvFilter::new("trace"))
            .event_format(CliFormat { inner: format::Format::default() })
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            // A line that is not JSON is traced as the server sent it.
            tracing::trace!(target: WIRE_TARGET, "<- {}", "not json \x1b]52;c;aGk=\x07\x1b[2J");
            tracing::info!(target: STDERR_TARGET, "{}", "red\x1b[31m\rover");
        });
        let text = String::from_utf8(capture.0.lock().unwrap().clone()).unwrap();
        assert_eq!(
            text,
            "<- not json \\u{1b}]52;c;aGk=\\u{7}\\u{1b}[2J\n[stderr] red\\u{1b}[31m\\u{d}over\n"
        );
    }

    #[test]
    fn every_directive_parses() {
        for verbose in 0..4 {
            for directive in client_directives(verbose) {
                assert!(directive.parse::<tracing_subscriber::filter::Directive>().is_ok(), "{directive}");
            }
        }
    }
}
