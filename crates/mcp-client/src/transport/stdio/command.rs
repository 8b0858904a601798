//! What to start: the server's command line, its environment and the transport's policies.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::transport::ShutdownTimeouts;

/// What of the client's environment a child inherits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Inherited {
    /// [`StdioCommand::MINIMAL_ENV`] (and the locale).
    Minimal,
    /// Everything.
    All,
    /// Nothing.
    Nothing,
}

/// How to start an MCP server as a child process, and how the transport treats it.
///
/// Built like [`std::process::Command`]:
///
/// ```no_run
/// # use std::time::Duration;
/// # use mcp_client::transport::stdio::{RestartPolicy, StdioCommand};
/// let cmd = StdioCommand::new("npx")
///     .args(["-y", "@modelcontextprotocol/server-everything"])
///     .env("LOG_LEVEL", "debug")
///     .current_dir("/tmp")
///     .restart(RestartPolicy::default());
/// ```
///
/// The child gets piped stdin, stdout and stderr, and a **minimal environment**: the variables
/// a program needs to run ([`StdioCommand::MINIMAL_ENV`]: `PATH`, `HOME`, `USER`, `LOGNAME`,
/// `SHELL`, `TERM`, `TMPDIR`, the locale; their equivalents on Windows) taken from the client's,
/// plus those given with [`env`](Self::env) — never the client's tokens and secrets.
/// [`inherit_env`](Self::inherit_env) passes the client's whole environment;
/// [`env_clear`](Self::env_clear) passes nothing but the given variables.
#[derive(Debug, Clone)]
pub struct StdioCommand {
    program: OsString,
    args: Vec<OsString>,
    envs: Vec<(OsString, OsString)>,
    inherited: Inherited,
    current_dir: Option<PathBuf>,
    max_line: usize,
    shutdown: ShutdownTimeouts,
    restart: Option<RestartPolicy>,
    process_group: bool,
    name: Option<String>,
}

impl StdioCommand {
    /// A command running `program` (looked up in `PATH` when it has no `/`), with no
    /// arguments, the minimal environment, the [`mcp_stdio::DEFAULT_MAX_LINE`] line limit,
    /// default [`ShutdownTimeouts`], no restart policy, and its own process group.
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        StdioCommand {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            envs: Vec::new(),
            inherited: Inherited::Minimal,
            current_dir: None,
            max_line: mcp_stdio::DEFAULT_MAX_LINE,
            shutdown: ShutdownTimeouts::default(),
            restart: None,
            process_group: true,
            name: None,
        }
    }

    /// Adds one argument.
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Adds several arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args.extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Sets one environment variable of the child (added to, or overriding, the inherited
    /// environment). A later call for the same key wins.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.envs.push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// Sets several environment variables of the child.
    pub fn envs<I, K, V>(mut self, vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        self.envs.extend(vars.into_iter().map(|(k, v)| (k.as_ref().to_owned(), v.as_ref().to_owned())));
        self
    }

    /// When `true`, the child inherits nothing of the client's environment: it sees only the
    /// variables set with [`env`](Self::env) / [`envs`](Self::envs) (`PATH` included: give a
    /// full program path or a `PATH`). `false`: the minimal environment (the default).
    pub fn env_clear(mut self, clear: bool) -> Self {
        self.inherited = if clear { Inherited::Nothing } else { Inherited::Minimal };
        self
    }

    /// When `true`, the child inherits the client's whole environment (tokens and secrets
    /// included: only for a server trusted with them). `false`: the minimal environment (the
    /// default).
    pub fn inherit_env(mut self, inherit: bool) -> Self {
        self.inherited = if inherit { Inherited::All } else { Inherited::Minimal };
        self
    }

    /// The variables of the client's environment a child gets by default (besides every
    /// `LC_*` locale variable): what a program needs to run, nothing that authorizes.
    #[cfg(not(windows))]
    pub const MINIMAL_ENV: &'static [&'static str] =
        &["PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "TMPDIR", "LANG", "LANGUAGE", "TZ"];

    /// The variables of the client's environment a child gets by default: what a program needs
    /// to run, nothing that authorizes.
    #[cfg(windows)]
    pub const MINIMAL_ENV: &'static [&'static str] = &[
        "PATH",
        "PATHEXT",
        "SYSTEMROOT",
        "SYSTEMDRIVE",
        "WINDIR",
        "COMSPEC",
        "TEMP",
        "TMP",
        "USERNAME",
        "USERPROFILE",
        "HOMEDRIVE",
        "HOMEPATH",
        "APPDATA",
        "LOCALAPPDATA",
        "PROGRAMFILES",
        "PROCESSOR_ARCHITECTURE",
    ];

    /// Whether a variable of the client's environment is in the minimal environment.
    fn is_minimal(key: &OsStr) -> bool {
        let Some(key) = key.to_str() else { return false };
        if cfg!(windows) {
            Self::MINIMAL_ENV.iter().any(|k| k.eq_ignore_ascii_case(key))
        } else {
            Self::MINIMAL_ENV.contains(&key) || key.starts_with("LC_")
        }
    }

    /// The child's working directory (default: the client's).
    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.current_dir = Some(dir.as_ref().to_owned());
        self
    }

    /// The longest stdout line accepted, in bytes (default [`mcp_stdio::DEFAULT_MAX_LINE`],
    /// 4 MiB). A longer line is logged and skipped; reading goes on with the next line.
    pub fn max_line(mut self, max_line: usize) -> Self {
        self.max_line = max_line;
        self
    }

    /// The bounded waits of [`close`](crate::transport::Transport::close).
    pub fn shutdown_timeouts(mut self, timeouts: ShutdownTimeouts) -> Self {
        self.shutdown = timeouts;
        self
    }

    /// Restarts the server when it exits on its own (default: no restart; the transport
    /// closes with [`TransportError::Exited`](crate::transport::TransportError::Exited)).
    pub fn restart(mut self, policy: RestartPolicy) -> Self {
        self.restart = Some(policy);
        self
    }

    /// Whether the child is started in a process group of its own (default `true`).
    ///
    /// With its own group, every signal of the shutdown (SIGTERM, SIGKILL) goes to the whole
    /// group, so wrappers such as `npx`, `uvx` or `sh -c` leave no grandchildren behind, and
    /// whatever is left of the group when the child exits is killed. The child also stops
    /// receiving the terminal's Ctrl-C: the client decides when it ends. With `false`, the
    /// child stays in the client's group and signals go to the child alone.
    pub fn process_group(mut self, own_group: bool) -> Self {
        self.process_group = own_group;
        self
    }

    /// The name used in logs (default: the program and its arguments, see
    /// [`display`](Self::display)).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The name used in logs and errors: the one set with [`name`](Self::name), else the
    /// program followed by its arguments (lossily converted to UTF-8, at most 200 characters).
    pub fn display(&self) -> String {
        if let Some(name) = &self.name {
            return name.clone();
        }
        const MAX: usize = 200;
        let mut text = self.program.to_string_lossy().into_owned();
        for arg in &self.args {
            text.push(' ');
            text.push_str(&arg.to_string_lossy());
        }
        if text.chars().count() > MAX {
            text = text.chars().take(MAX).collect();
            text.push('…');
        }
        text
    }

    /// The program.
    pub fn get_program(&self) -> &OsStr {
        &self.program
    }

    /// The arguments.
    pub fn get_args(&self) -> impl ExactSizeIterator<Item = &OsStr> {
        self.args.iter().map(OsString::as_os_str)
    }

    /// The line limit.
    pub fn get_max_line(&self) -> usize {
        self.max_line
    }

    /// The shutdown timeouts.
    pub fn get_shutdown_timeouts(&self) -> ShutdownTimeouts {
        self.shutdown
    }

    /// The restart policy, if any.
    pub fn get_restart(&self) -> Option<&RestartPolicy> {
        self.restart.as_ref()
    }

    /// Whether the child gets a process group of its own.
    pub(crate) fn own_process_group(&self) -> bool {
        self.process_group
    }

    /// The tokio command to spawn, with piped stdio.
    pub(crate) fn to_tokio(&self) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(&self.program);
        cmd.args(&self.args);
        match self.inherited {
            Inherited::All => {}
            Inherited::Nothing => {
                cmd.env_clear();
            }
            Inherited::Minimal => {
                cmd.env_clear();
                cmd.envs(std::env::vars_os().filter(|(k, _)| Self::is_minimal(k)));
            }
        }
        cmd.envs(self.envs.iter().map(|(k, v)| (k, v)));
        if let Some(dir) = &self.current_dir {
            cmd.current_dir(dir);
        }
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        if self.process_group {
            cmd.process_group(0);
        }
        cmd
    }
}

/// When and how often a crashed server is restarted.
///
/// After an unexpected exit the transport waits a backoff, starts the command again and pushes
/// [`Inbound::Restarted`](crate::transport::Inbound::Restarted); the core then runs a new
/// handshake. The backoff before the `n`-th consecutive restart is
/// `initial_backoff * 2^(n-1)`, capped at `max_backoff`. A start that fails (the program is
/// gone, ...) counts as a failure too and is retried after the next backoff.
///
/// Failures are counted while they are consecutive: a child that stayed up at least
/// [`RestartPolicy::STABLE_UPTIME`] (30 s) before exiting resets the count, so a server that
/// crashes once a day is restarted forever, while one that crashes at start-up is given up
/// after `max_restarts` attempts: the transport then pushes
/// [`Inbound::Closed`](crate::transport::Inbound::Closed) with the last exit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RestartPolicy {
    /// How many consecutive restarts are attempted before giving up (`0`: never restart).
    pub max_restarts: u32,
    /// The wait before the first restart.
    pub initial_backoff: Duration,
    /// The longest wait between two restarts.
    pub max_backoff: Duration,
}

impl RestartPolicy {
    /// Sets [`max_restarts`](Self::max_restarts).
    #[must_use]
    pub fn with_max_restarts(mut self, max_restarts: u32) -> Self {
        self.max_restarts = max_restarts;
        self
    }

    /// Sets [`initial_backoff`](Self::initial_backoff).
    #[must_use]
    pub fn with_initial_backoff(mut self, initial_backoff: Duration) -> Self {
        self.initial_backoff = initial_backoff;
        self
    }

    /// Sets [`max_backoff`](Self::max_backoff).
    #[must_use]
    pub fn with_max_backoff(mut self, max_backoff: Duration) -> Self {
        self.max_backoff = max_backoff;
        self
    }
}

impl RestartPolicy {
    /// How long a child must have run for its exit to reset the consecutive-failure count.
    pub const STABLE_UPTIME: Duration = Duration::from_secs(30);

    /// The wait before the `attempt`-th consecutive restart (1-based).
    pub fn backoff(&self, attempt: u32) -> Duration {
        let doublings = attempt.saturating_sub(1).min(31);
        self.initial_backoff.saturating_mul(1u32 << doublings).min(self.max_backoff)
    }
}

impl Default for RestartPolicy {
    /// 5 restarts, 100 ms backoff doubling up to 5 s.
    fn default() -> Self {
        RestartPolicy {
            max_restarts: 5,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_caps() {
        let p = RestartPolicy::default();
        assert_eq!(p.backoff(1), Duration::from_millis(100));
        assert_eq!(p.backoff(2), Duration::from_millis(200));
        assert_eq!(p.backoff(3), Duration::from_millis(400));
        assert_eq!(p.backoff(7), Duration::from_secs(5));
        assert_eq!(p.backoff(u32::MAX), Duration::from_secs(5));
        assert_eq!(p.backoff(0), Duration::from_millis(100));
    }

    #[test]
    fn display_lists_program_and_args() {
        let cmd = StdioCommand::new("sh").arg("-c").arg("cat");
        assert_eq!(cmd.display(), "sh -c cat");
        assert_eq!(cmd.clone().name("echo").display(), "echo");
        let long = StdioCommand::new("x").arg("y".repeat(500));
        assert_eq!(long.display().chars().count(), 201);
    }
}
