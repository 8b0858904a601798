use std::sync::atomic::AtomicUsize;

use super::*;

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Self {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "mcpkit-credentials-test-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&dir);
        TempDir(dir)
    }

    /// The credentials directory (not yet created: the store creates it).
    fn store_dir(&self) -> PathBuf {
        self.0.join("credentials")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn tokens(issuer: &str, resource: &str, kind: &str) -> StoredTokens {
    StoredTokens {
        issuer: issuer.into(),
        resource: resource.into(),
        access_token: format!("access-for-{resource}"),
        token_type: kind.into(),
        refresh_token: Some("refresh".into()),
        expires_at: Some(4_000_000_000),
        requested_scope: Some("mcp:tools".into()),
        scope: None,
    }
}

fn registration(id: &str) -> ClientRegistration {
    ClientRegistration {
        client_id: id.into(),
        client_secret: Some("secret".into()),
        token_endpoint_auth_method: Some("client_secret_basic".into()),
        client_secret_expires_at: None,
    }
}

fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

#[tokio::test]
async fn round_trip_across_store_instances() {
    let temp = TempDir::new();
    let store = FileStore::at(temp.store_dir());
    assert!(store.tokens("https://mcp.example/mcp").await.unwrap().is_none(), "no directory yet");
    store.save_client("https://as.example", registration("c1")).await.unwrap();
    store.save_tokens("https://mcp.example/mcp", tokens("https://as.example", "r", "Bearer")).await.unwrap();

    let again = FileStore::at(temp.store_dir());
    assert_eq!(again.client("https://as.example").await.unwrap(), Some(registration("c1")));
    assert_eq!(
        again.tokens("https://mcp.example/mcp").await.unwrap(),
        Some(tokens("https://as.example", "r", "Bearer"))
    );
    assert!(again.client("https://other.example").await.unwrap().is_none());

    // A fresh login does not see the stored tokens, but its tokens replace them.
    let fresh = FileStore::at(temp.store_dir()).ignoring_stored_tokens();
    assert!(fresh.tokens("https://mcp.example/mcp").await.unwrap().is_none());
    assert_eq!(fresh.client("https://as.example").await.unwrap(), Some(registration("c1")));

    again.remove_tokens("https://mcp.example/mcp").await.unwrap();
    assert!(again.tokens("https://mcp.example/mcp").await.unwrap().is_none());
    assert_eq!(again.client("https://as.example").await.unwrap(), Some(registration("c1")), "kept");
    assert!(!again.remove_resource("https://mcp.example/mcp").unwrap(), "nothing left to remove");
}

#[cfg(unix)]
#[tokio::test]
async fn files_are_private_and_written_atomically() {
    use std::os::unix::fs::PermissionsExt;
    let temp = TempDir::new();
    // An existing, too open directory is made private.
    fs::create_dir_all(temp.store_dir()).unwrap();
    fs::set_permissions(temp.store_dir(), fs::Permissions::from_mode(0o755)).unwrap();
    let store = FileStore::at(temp.store_dir());
    store.save_tokens("https://mcp/a", tokens("https://as1", "a", "Bearer")).await.unwrap();
    store.save_tokens("https://mcp/b", tokens("https://as1", "b", "Bearer")).await.unwrap();
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&temp.store_dir()), 0o700);
    let files = json_files(&temp.store_dir());
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(mode(&files[0]), 0o600);
    // No temporary file is left behind.
    let names: Vec<_> = fs::read_dir(temp.store_dir()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[tokio::test]
async fn one_file_per_issuer_and_tokens_found_in_any() {
    let temp = TempDir::new();
    let store = FileStore::at(temp.store_dir());
    store.save_tokens("https://mcp/a", tokens("https://as1", "a", "Bearer")).await.unwrap();
    store.save_tokens("https://mcp/b", tokens("https://as2/tenant", "b", "Bearer")).await.unwrap();
    store.save_client("https://as2/tenant", registration("c2")).await.unwrap();
    assert_eq!(json_files(&temp.store_dir()).len(), 2);
    assert_eq!(store.tokens("https://mcp/a").await.unwrap().unwrap().issuer, "https://as1");
    assert_eq!(store.tokens("https://mcp/b").await.unwrap().unwrap().issuer, "https://as2/tenant");

    // New tokens from another issuer replace the resource's earlier ones.
    store.save_tokens("https://mcp/a", tokens("https://as2/tenant", "a", "Bearer")).await.unwrap();
    assert_eq!(store.tokens("https://mcp/a").await.unwrap().unwrap().issuer, "https://as2/tenant");
    assert_eq!(json_files(&temp.store_dir()).len(), 1, "as1's file held nothing else: removed");

    // forget_issuer drops its registration and every token it issued, and nothing else.
    store.save_tokens("https://mcp/c", tokens("https://as1", "c", "Bearer")).await.unwrap();
    store.forget_issuer("https://as2/tenant").await.unwrap();
    assert!(store.client("https://as2/tenant").await.unwrap().is_none());
    assert!(store.tokens("https://mcp/a").await.unwrap().is_none());
    assert!(store.tokens("https://mcp/b").await.unwrap().is_none());
    assert!(store.tokens("https://mcp/c").await.unwrap().is_some());
}

#[test]
fn file_names_never_leave_the_directory() {
    let store = FileStore::at(PathBuf::from("/creds"));
    for issuer in ["https://as.example", "../../etc/passwd", "/", "..", "https://a/b/../../c", "x\0y", ""] {
        let path = store.path_of(issuer);
        assert_eq!(path.parent(), Some(Path::new("/creds")), "{issuer:?} -> {path:?}");
        let name = path.file_name().unwrap().to_str().unwrap();
        assert!(name.ends_with(".json") && !name.starts_with('.'), "{name}");
        let components: Vec<_> = Path::new(name).components().collect();
        assert!(matches!(components[..], [std::path::Component::Normal(_)]), "{name}");
    }
    // Issuers that read the same still get different files.
    assert_ne!(store.path_of("https://as/a_b"), store.path_of("https://as/a/b"));
}

#[tokio::test]
async fn a_corrupt_file_is_an_error_naming_it_and_is_not_overwritten() {
    let temp = TempDir::new();
    let store = FileStore::at(temp.store_dir());
    store.save_client("https://as1", registration("c1")).await.unwrap();
    let path = json_files(&temp.store_dir()).remove(0);
    fs::write(&path, "{ not json").unwrap();

    let error = store.client("https://as1").await.unwrap_err().to_string();
    assert!(error.contains(&path.display().to_string()) && error.contains("corrupt"), "{error}");
    let error = store.tokens("https://mcp/a").await.unwrap_err().to_string();
    assert!(error.contains(&path.display().to_string()), "{error}");
    let error = store.save_tokens("https://mcp/a", tokens("https://as1", "a", "Bearer")).await.unwrap_err();
    assert!(error.to_string().contains("corrupt"), "{error}");
    assert_eq!(fs::read_to_string(&path).unwrap(), "{ not json", "left as it was");

    // Tokens in a sound file are still found.
    fs::remove_file(&path).unwrap();
    store.save_tokens("https://mcp/b", tokens("https://as2", "b", "Bearer")).await.unwrap();
    fs::write(store.path_of("https://as1"), "[]").unwrap();
    assert!(store.tokens("https://mcp/b").await.unwrap().is_some());
}

#[tokio::test]
async fn dpop_tokens_are_kept_in_memory_only() {
    let temp = TempDir::new();
    let store = FileStore::at(temp.store_dir());
    store.save_tokens("https://mcp/a", tokens("https://as1", "a", "Bearer")).await.unwrap();
    store.save_tokens("https://mcp/a", tokens("https://as1", "a", "DPoP")).await.unwrap();
    assert_eq!(store.tokens("https://mcp/a").await.unwrap().unwrap().token_type, "DPoP");
    assert!(!store.is_persisted("https://mcp/a"));
    let again = FileStore::at(temp.store_dir());
    assert!(again.tokens("https://mcp/a").await.unwrap().is_none(), "the bearer tokens were replaced");
    for path in json_files(&temp.store_dir()) {
        assert!(!fs::read_to_string(path).unwrap().contains("access-for"));
    }
}
