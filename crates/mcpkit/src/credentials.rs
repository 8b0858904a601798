//! Where `mcpkit` keeps OAuth credentials between runs: one JSON file per authorization server
//! (its client registration, and the tokens it issued, per protected resource) in
//! `$MCPKIT_CREDENTIALS_DIR`, else `$XDG_CONFIG_HOME/mcpkit/credentials`, else
//! `~/.config/mcpkit/credentials`.
//!
//! The directory is created with mode 0700 and every file with mode 0600; files are replaced
//! atomically (a temporary file in the same directory, then a rename), so a crash never leaves
//! half a file. A file that does not parse is reported by name and never overwritten.
//!
//! DPoP-bound tokens are not written: their key lives only in the memory of the process that
//! obtained them, so another process could not use them. They are kept for this process only.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::bail;
use mcp_client::auth::{AuthError, ClientRegistration, CredentialStore, StoredTokens};
use mcp_client::transport::BoxFuture;
use serde::{Deserialize, Serialize};

/// The contents of one issuer's file.
#[derive(Serialize, Deserialize, Default)]
struct IssuerFile {
    /// The issuer, exactly (the file name is only derived from it).
    issuer: String,
    /// The Dynamic Client Registration at this authorization server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client: Option<ClientRegistration>,
    /// Tokens issued by it, keyed by the protected resource they are for.
    #[serde(default)]
    tokens: BTreeMap<String, StoredTokens>,
}

/// A [`CredentialStore`] of files, one per authorization server.
pub(crate) struct FileStore {
    dir: PathBuf,
    /// Serializes the read-modify-write cycles of this process.
    write: Mutex<()>,
    /// DPoP-bound tokens, for this process only.
    session: Mutex<HashMap<String, StoredTokens>>,
    /// Stored tokens are not handed out (a fresh login); they are still replaced and removed.
    ignore_stored_tokens: bool,
    /// The latest failure (the OAuth client only logs store failures).
    last_error: Mutex<Option<String>>,
}

impl FileStore {
    /// The store in the user's config directory (see the module documentation).
    pub(crate) fn open_default() -> anyhow::Result<Self> {
        Ok(Self::at(default_dir()?))
    }

    /// The store in `dir` (created when first written).
    pub(crate) fn at(dir: PathBuf) -> Self {
        FileStore {
            dir,
            write: Mutex::new(()),
            session: Mutex::new(HashMap::new()),
            ignore_stored_tokens: false,
            last_error: Mutex::new(None),
        }
    }

    /// Makes [`CredentialStore::tokens`] find nothing on disk, so that a new authorization
    /// runs; what it obtains replaces the stored tokens.
    pub(crate) fn ignoring_stored_tokens(mut self) -> Self {
        self.ignore_stored_tokens = true;
        self
    }

    /// The latest failure to read or write the files, if any.
    pub(crate) fn last_error(&self) -> Option<String> {
        self.last_error.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// `result`, its error remembered as [`FileStore::last_error`].
    fn noted<T>(&self, result: anyhow::Result<T>) -> Result<T, AuthError> {
        result.map_err(|e| {
            let message = format!("{e:#}");
            *self.last_error.lock().unwrap_or_else(|e| e.into_inner()) = Some(message.clone());
            AuthError::Store(message)
        })
    }

    /// The directory of the files.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of `issuer`: a readable prefix of it (letters, digits, `-`, `.` but not first,
    /// everything else `_`) and a hash of all of it, so that no issuer can name a path outside the directory
    /// and distinct issuers get distinct files.
    fn path_of(&self, issuer: &str) -> PathBuf {
        let readable: String = issuer
            .chars()
            .take(64)
            .enumerate()
            .map(|(i, c)| if c.is_ascii_alphanumeric() || c == '-' || (c == '.' && i > 0) { c } else { '_' })
            .collect();
        self.dir.join(format!("{readable}-{:016x}.json", fnv1a(issuer.as_bytes())))
    }

    /// The file of `issuer`, if it exists.
    fn load(&self, issuer: &str) -> anyhow::Result<Option<IssuerFile>> {
        let path = self.path_of(issuer);
        let Some(file) = read_file(&path)? else { return Ok(None) };
        if file.issuer != issuer {
            bail!("credentials file {} is for issuer {:?}, not {issuer:?}", path.display(), file.issuer);
        }
        Ok(Some(file))
    }

    /// Every readable issuer file, and the first error met among the others.
    fn load_all(&self) -> (Vec<(PathBuf, IssuerFile)>, Option<anyhow::Error>) {
        let entries = match fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (Vec::new(), None),
            Err(e) => {
                let error =
                    anyhow::anyhow!("cannot read the credentials directory {}: {e}", self.dir.display());
                return (Vec::new(), Some(error));
            }
        };
        let mut files = Vec::new();
        let mut first_error = None;
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.extension().is_some_and(|x| x == "json")
                    && p.file_name().is_some_and(|n| !n.to_string_lossy().starts_with('.'))
            })
            .collect();
        paths.sort();
        for path in paths {
            match read_file(&path) {
                Ok(Some(file)) => files.push((path, file)),
                Ok(None) => {}
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        (files, first_error)
    }

    /// Writes `file` atomically, or removes it when it holds nothing.
    fn store(&self, file: &IssuerFile) -> anyhow::Result<()> {
        let path = self.path_of(&file.issuer);
        if file.client.is_none() && file.tokens.is_empty() {
            return match fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    bail!("cannot remove {}: {e}", path.display())
                }
                _ => Ok(()),
            };
        }
        create_private_dir(&self.dir)?;
        let text = serde_json::to_string_pretty(file)?;
        write_atomically(&path, text.as_bytes())
    }

    fn lock_write(&self) -> std::sync::MutexGuard<'_, ()> {
        self.write.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lock_session(&self) -> std::sync::MutexGuard<'_, HashMap<String, StoredTokens>> {
        self.session.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn find_tokens(&self, resource: &str) -> anyhow::Result<Option<StoredTokens>> {
        if let Some(tokens) = self.lock_session().get(resource) {
            return Ok(Some(tokens.clone()));
        }
        if self.ignore_stored_tokens {
            return Ok(None);
        }
        let (files, error) = self.load_all();
        if let Some(tokens) = files.into_iter().find_map(|(_, mut f)| f.tokens.remove(resource)) {
            return Ok(Some(tokens));
        }
        match error {
            Some(e) => Err(e),
            None => Ok(None),
        }
    }

    fn put_tokens(&self, resource: &str, tokens: StoredTokens) -> anyhow::Result<()> {
        let _guard = self.lock_write();
        self.lock_session().remove(resource);
        let dpop = tokens.token_type.eq_ignore_ascii_case("dpop");
        // Replacing: the resource's earlier tokens go, whichever file holds them.
        self.remove_everywhere(resource, if dpop { None } else { Some(&tokens.issuer) })?;
        if dpop {
            self.lock_session().insert(resource.to_owned(), tokens);
            return Ok(());
        }
        let mut file = self
            .load(&tokens.issuer)?
            .unwrap_or_else(|| IssuerFile { issuer: tokens.issuer.clone(), ..IssuerFile::default() });
        file.tokens.insert(resource.to_owned(), tokens);
        self.store(&file)
    }

    /// Removes the tokens of `resource` from every file but `except`'s; whether any were found.
    fn remove_everywhere(&self, resource: &str, except: Option<&str>) -> anyhow::Result<bool> {
        let (files, error) = self.load_all();
        if let Some(e) = error {
            return Err(e);
        }
        let mut removed = false;
        for (_, mut file) in files {
            if Some(file.issuer.as_str()) != except && file.tokens.remove(resource).is_some() {
                self.store(&file)?;
                removed = true;
            }
        }
        Ok(removed)
    }

    /// Forgets the tokens of `resource` (stored and in memory); whether there were any.
    pub(crate) fn remove_resource(&self, resource: &str) -> anyhow::Result<bool> {
        let _guard = self.lock_write();
        let in_memory = self.lock_session().remove(resource).is_some();
        Ok(self.remove_everywhere(resource, None)? || in_memory)
    }

    /// Whether tokens for `resource` are written to disk (not only kept in memory).
    pub(crate) fn is_persisted(&self, resource: &str) -> bool {
        let (files, _) = self.load_all();
        files.iter().any(|(_, f)| f.tokens.contains_key(resource))
    }

    fn put_client(&self, issuer: &str, registration: ClientRegistration) -> anyhow::Result<()> {
        let _guard = self.lock_write();
        let mut file = self
            .load(issuer)?
            .unwrap_or_else(|| IssuerFile { issuer: issuer.to_owned(), ..IssuerFile::default() });
        file.client = Some(registration);
        self.store(&file)
    }

    fn drop_issuer(&self, issuer: &str) -> anyhow::Result<()> {
        let _guard = self.lock_write();
        self.lock_session().retain(|_, t| t.issuer != issuer);
        let path = self.path_of(issuer);
        match fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                bail!("cannot remove {}: {e}", path.display())
            }
            _ => Ok(()),
        }
    }
}

/// The credentials directory: `$MCPKIT_CREDENTIALS_DIR`, else `$XDG_CONFIG_HOME/mcpkit/credentials`,
/// else `~/.config/mcpkit/credentials`.
pub(crate) fn default_dir() -> anyhow::Result<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = var("MCPKIT_CREDENTIALS_DIR") {
        return Ok(dir);
    }
    if let Some(dir) = var("XDG_CONFIG_HOME") {
        return Ok(dir.join("mcpkit").join("credentials"));
    }
    match var("HOME") {
        Some(home) => Ok(home.join(".config").join("mcpkit").join("credentials")),
        None => bail!("no place for credentials: set MCPKIT_CREDENTIALS_DIR"),
    }
}

/// 64-bit FNV-1a: a stable hash for file names (not a security measure).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, b| (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
}

fn read_file(path: &Path) -> anyhow::Result<Option<IssuerFile>> {
    // Tokens another user could have written are not used (nor one they could replace).
    if let Err(message) = mcp_gateway::config::trust::check(path, mcp_gateway::config::trust::Holds::Secret) {
        bail!("credentials file refused: {message}");
    }
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => bail!("cannot read credentials file {}: {e}", path.display()),
    };
    match serde_json::from_str(&text) {
        Ok(file) => Ok(Some(file)),
        Err(e) => bail!("credentials file {} is corrupt ({e}): fix or delete it", path.display()),
    }
}

fn create_private_dir(dir: &Path) -> anyhow::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        builder.mode(0o700);
        builder.create(dir).map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
        // An existing directory keeps its mode from `create`: make it private too.
        let mode = fs::metadata(dir)?.permissions().mode() & 0o777;
        if mode != 0o700 {
            fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
                .map_err(|e| anyhow::anyhow!("cannot make {} private: {e}", dir.display()))?;
        }
    }
    #[cfg(not(unix))]
    builder.create(dir).map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
    Ok(())
}

/// Writes `bytes` to a new private file next to `path`, then renames it over `path`.
fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let temp = path.with_file_name(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let result = (|| -> std::io::Result<()> {
        let mut file = options.open(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&temp, path)
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&temp);
        bail!("cannot write {}: {e}", path.display());
    }
    Ok(())
}

impl CredentialStore for FileStore {
    fn client<'a>(&'a self, issuer: &'a str) -> BoxFuture<'a, Result<Option<ClientRegistration>, AuthError>> {
        let found = self.noted(self.load(issuer).map(|f| f.and_then(|f| f.client)));
        Box::pin(std::future::ready(found))
    }

    fn save_client<'a>(
        &'a self,
        issuer: &'a str,
        registration: ClientRegistration,
    ) -> BoxFuture<'a, Result<(), AuthError>> {
        Box::pin(std::future::ready(self.noted(self.put_client(issuer, registration))))
    }

    fn tokens<'a>(&'a self, resource: &'a str) -> BoxFuture<'a, Result<Option<StoredTokens>, AuthError>> {
        Box::pin(std::future::ready(self.noted(self.find_tokens(resource))))
    }

    fn save_tokens<'a>(
        &'a self,
        resource: &'a str,
        tokens: StoredTokens,
    ) -> BoxFuture<'a, Result<(), AuthError>> {
        Box::pin(std::future::ready(self.noted(self.put_tokens(resource, tokens))))
    }

    fn remove_tokens<'a>(&'a self, resource: &'a str) -> BoxFuture<'a, Result<(), AuthError>> {
        Box::pin(std::future::ready(self.noted(self.remove_resource(resource).map(|_| ()))))
    }

    fn forget_issuer<'a>(&'a self, issuer: &'a str) -> BoxFuture<'a, Result<(), AuthError>> {
        Box::pin(std::future::ready(self.noted(self.drop_issuer(issuer))))
    }
}

#[cfg(test)]
#[path = "credentials_tests.rs"]
mod tests;
