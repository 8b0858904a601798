//! Ending a client command on SIGINT (Ctrl-C), SIGTERM or SIGHUP.
//!
//! A stdio server runs in a process group of its own (mcp-client's stdio transport), so the
//! terminal's Ctrl-C reaches mcpkit alone: mcpkit must stop the server itself. A client command
//! therefore catches these signals from before it starts the server. On the first one it gives
//! up what it was doing (the progress line is erased), closes the client — the server's stdin is
//! closed, then SIGTERM, then SIGKILL, each after a bounded wait — and exits, printing nothing,
//! with the status a shell gives a command killed by the signal: 128 + its number (130 for
//! SIGINT, 143 for SIGTERM, 129 for SIGHUP). A second signal cuts the wait for the server short:
//! the server is then killed as the runtime shuts down (the transport kills a child it still
//! owns when it is dropped). A signal while connecting drops the connection attempt, and with
//! it the child it started.

use std::process::ExitCode;

// The numbers POSIX systems give these signals (the same on Linux, macOS and the BSDs).
#[cfg_attr(not(unix), allow(dead_code))]
pub(crate) const SIGHUP: i32 = 1;
const SIGINT: i32 = 2;
#[cfg_attr(not(unix), allow(dead_code))]
const SIGTERM: i32 = 15;

/// The exit status of a command ended by signal number `signal`.
pub(crate) fn status(signal: i32) -> ExitCode {
    ExitCode::from(u8::try_from(128 + signal).unwrap_or(u8::MAX))
}

/// The signals that end a client command, caught from [`Signals::catch`] on.
#[cfg(unix)]
pub(crate) struct Signals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
    hangup: tokio::signal::unix::Signal,
}

#[cfg(unix)]
impl Signals {
    /// Catches SIGINT, SIGTERM and SIGHUP (must be called within the runtime).
    pub(crate) fn catch() -> std::io::Result<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Signals {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
            hangup: signal(SignalKind::hangup())?,
        })
    }

    /// Waits for the next signal; the exit status it calls for.
    pub(crate) async fn next(&mut self) -> ExitCode {
        status(self.next_number().await)
    }

    /// Waits for the next signal; its number.
    pub(crate) async fn next_number(&mut self) -> i32 {
        // `None` only when the runtime shuts down: then no signal comes any more.
        tokio::select! {
            Some(()) = self.interrupt.recv() => SIGINT,
            Some(()) = self.terminate.recv() => SIGTERM,
            Some(()) = self.hangup.recv() => SIGHUP,
            else => std::future::pending().await,
        }
    }
}

/// Ctrl-C, caught from [`Signals::catch`] on.
#[cfg(not(unix))]
pub(crate) struct Signals(());

#[cfg(not(unix))]
impl Signals {
    /// Catches Ctrl-C.
    pub(crate) fn catch() -> std::io::Result<Signals> {
        Ok(Signals(()))
    }

    /// Waits for the next Ctrl-C; the exit status it calls for (130, as for SIGINT).
    pub(crate) async fn next(&mut self) -> ExitCode {
        status(self.next_number().await)
    }

    /// Waits for the next Ctrl-C; the number of SIGINT.
    pub(crate) async fn next_number(&mut self) -> i32 {
        match tokio::signal::ctrl_c().await {
            Ok(()) => SIGINT,
            Err(_) => std::future::pending().await,
        }
    }
}

/// How an HTTP server (`serve --http`, `gateway --http`) stops on signals: the first future
/// completes on the first SIGINT or SIGTERM (and SIGHUP, unless `on_hangup` handles it — the
/// gateway reloads its configuration), after a line saying that requests in flight have `grace`
/// to finish; the second on a second signal, with its number: the caller then stops at once.
/// It returns rather than exiting the process, so that what the runtime's shutdown drops — a
/// gateway's upstream processes — is stopped with it.
pub(crate) fn graceful_stop<H, F>(
    mut signals: Signals,
    grace: std::time::Duration,
    mut on_hangup: Option<H>,
) -> (impl Future<Output = ()> + Send + 'static, impl Future<Output = i32> + Send + 'static)
where
    H: FnMut() -> F + Send + 'static,
    F: Future<Output = ()> + Send,
{
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let (now, at_once) = tokio::sync::oneshot::channel::<i32>();
    tokio::spawn(async move {
        loop {
            let number = signals.next_number().await;
            if number == SIGHUP
                && let Some(reload) = on_hangup.as_mut()
            {
                reload().await;
                continue;
            }
            break;
        }
        eprintln!(
            "shutting down: requests in flight have {} s to finish (signal again to stop now)",
            grace.as_secs()
        );
        let _ = stop.send(());
        let _ = now.send(signals.next_number().await);
    });
    let graceful = async move {
        let _ = stopped.await;
    };
    let at_once = async move {
        match at_once.await {
            Ok(number) => number,
            // The runtime shuts down: no second signal comes any more.
            Err(_) => std::future::pending().await,
        }
    };
    (graceful, at_once)
}

/// [`graceful_stop`] without a SIGHUP handler.
pub(crate) fn no_hangup() -> Option<fn() -> std::future::Ready<()>> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_are_the_shells() {
        assert_eq!(status(SIGINT), ExitCode::from(130));
        assert_eq!(status(SIGTERM), ExitCode::from(143));
        assert_eq!(status(SIGHUP), ExitCode::from(129));
    }
}
