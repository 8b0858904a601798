//! Capturing what the client logs, for tests that check what it says (and never says).
#![allow(dead_code)] // each test file uses its own part

use std::io::Write;
use std::sync::{Arc, Mutex};

/// Everything a fmt subscriber wrote, as text.
#[derive(Clone, Default)]
pub(crate) struct Captured(Arc<Mutex<Vec<u8>>>);

impl Captured {
    /// What was written so far.
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }

    /// A subscriber writing every event `filter` (an `EnvFilter` directive) lets through into
    /// this buffer, without colours.
    pub(crate) fn subscriber(&self, filter: &str) -> impl tracing::Subscriber + Send + Sync + 'static {
        let sink = self.clone();
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_ansi(false)
            .with_writer(move || sink.clone())
            .finish()
    }

    /// Installs [`Captured::subscriber`] for this thread until the guard drops.
    pub(crate) fn install(&self, filter: &str) -> tracing::subscriber::DefaultGuard {
        tracing::subscriber::set_default(self.subscriber(filter))
    }
}

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
