//! Files a process trusts — a gateway's configuration, its `envFile`s and `${file:PATH}`
//! secrets, a session key, an OTLP exporter's client key, stored tokens — are refused when every
//! user may write them: whoever can write them chooses which programs run and where the
//! credentials go. One its group may write (the norm where each user has a group of their own),
//! or that holds a secret others may read, is read with a warning. The one home of this rule:
//! the gateway, the exporters and the command line all read through it.

use std::path::Path;

/// Why other users' access to a file matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Holds {
    /// What to run and where to connect (the configuration): refused when others may write.
    Settings,
    /// A secret (a token, a key): refused when others may write, a warning when they may read.
    Secret,
}

/// Reads `path` as text, checking its permissions first (Unix; elsewhere it is only read).
/// The error says what is wrong and how to fix it.
pub fn read_trusted(path: &Path, holds: Holds) -> Result<String, String> {
    check(path, holds)?;
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// The permission check of [`read_trusted`], alone.
pub fn check(path: &Path, holds: Holds) -> Result<(), String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let Ok(metadata) = std::fs::metadata(path) else {
            // Missing or unreadable: reading it says so.
            return Ok(());
        };
        let mode = metadata.permissions().mode() & 0o777;
        if mode & 0o002 != 0 {
            return Err(format!(
                "{} is writable by other users (mode {mode:03o}): they could change what it says; run `chmod go-w {}`",
                path.display(),
                path.display()
            ));
        }
        if mode & 0o020 != 0 {
            // Group-writable files are the norm where every user has a group of their own
            // (umask 002): a warning, not a refusal.
            tracing::warn!(
                "{} is writable by its group (mode {mode:03o}): if others are in that group, run `chmod g-w {}`",
                path.display(),
                path.display()
            );
        }
        if holds == Holds::Secret && mode & 0o044 != 0 {
            tracing::warn!(
                "{} holds a secret and other users may read it (mode {mode:03o}): run `chmod 600 {}`",
                path.display(),
                path.display()
            );
        }
    }
    #[cfg(not(unix))]
    let _ = (path, holds);
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn writable_by_others_is_refused_readable_is_not() {
        let dir = std::env::temp_dir().join(format!("mcp-server-trust-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("secret");
        std::fs::write(&file, "s3cret\n").unwrap();
        let set = |mode| std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
        for mode in [0o600, 0o640, 0o644, 0o660, 0o664] {
            set(mode);
            assert_eq!(read_trusted(&file, Holds::Secret).as_deref(), Ok("s3cret\n"), "{mode:o}");
        }
        for mode in [0o602, 0o646, 0o666] {
            set(mode);
            let error = read_trusted(&file, Holds::Settings).unwrap_err();
            assert!(error.contains("writable by other users") && error.contains("chmod go-w"), "{error}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
