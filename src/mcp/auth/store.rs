//! The token store: one JSON file per server URL under `$XDG_STATE_HOME/aimon-console/oauth/`
//! (mode 0600 in a 0700 folder, written atomically), holding what a later start needs without
//! asking the operator again: the client registration, the authorization server's metadata,
//! rmcp's stored credentials (tokens, granted scopes, when they arrived) and a pending step-up.
//!
//! It is rmcp's `CredentialStore` for the refresh path, so a refreshed token lands in the same
//! file. Nothing here is ever logged or shown: the Debug impls redact every secret, and errors
//! name the file, never its content.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use async_trait::async_trait;
use rmcp::transport::auth::{
    AuthError, AuthorizationMetadata, CredentialRefreshGuard, CredentialStore, StoredCredentials,
};
use serde::{Deserialize, Serialize};

/// The folder of the token files: `$XDG_STATE_HOME/aimon-console/oauth` (`~/.local/state/…`).
pub fn store_dir() -> PathBuf {
    dirs::state_dir()
        .or_else(dirs::data_local_dir)
        .unwrap_or_else(std::env::temp_dir)
        .join("aimon-console")
        .join("oauth")
}

/// Why the token store could not be read or written. Names the file, never what is in it.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot read the token file {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the token file {} is not a token file aimon-console wrote (delete it with `aimon-console logout`)", path.display())]
    Corrupt { path: PathBuf },
    #[error("cannot write the token file {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl From<StoreError> for AuthError {
    fn from(e: StoreError) -> Self {
        AuthError::CredentialStoreError(e.to_string())
    }
}

/// How this client is known to the authorization server.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientRecord {
    pub client_id: String,
    /// The secret a dynamic registration gave (a configured secret stays in the config).
    #[serde(default)]
    pub client_secret: Option<String>,
    /// The redirect URI it was registered (or last used) with.
    #[serde(default)]
    pub redirect_uri: Option<String>,
    /// How it authenticates at the token endpoint: `none`, `client_secret_basic` or
    /// `client_secret_post`.
    pub auth_method: String,
    pub source: ClientSource,
}

/// Where a client ID came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientSource {
    /// `oauth.client_id` in the config.
    Configured,
    /// A client ID metadata document URL (`oauth.client_metadata_url`).
    MetadataDocument,
    /// Dynamic client registration (RFC 7591).
    Registered,
}

impl std::fmt::Debug for ClientRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientRecord")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &crate::config::redact::RedactedSecret(self.client_secret.as_deref()),
            )
            .field("redirect_uri", &self.redirect_uri)
            .field("auth_method", &self.auth_method)
            .field("source", &self.source)
            .finish()
    }
}

/// A 403 `insufficient_scope` that asks for a new login with more scope: what it asked for, on
/// which request, and how many logins have answered it so far (the retry limit).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepUp {
    /// The scope the server's challenge named (space-separated).
    pub scope: String,
    /// The JSON-RPC method that was refused; a later success of it ends the step-up.
    pub method: String,
    /// The `WWW-Authenticate` header of the refusal (discovery starts from it).
    pub challenge: String,
    /// Refusals in a row for this scope.
    pub refusals: u32,
}

/// Everything stored for one server URL.
#[derive(Default, Serialize, Deserialize)]
pub struct TokenRecord {
    /// The server URL this file is for.
    pub url: String,
    #[serde(default)]
    pub client: Option<ClientRecord>,
    /// The authorization server's metadata, as discovered at the last login.
    #[serde(default)]
    pub metadata: Option<AuthorizationMetadata>,
    /// The tokens (rmcp's record: token response, granted scopes, when it arrived, issuer).
    #[serde(default)]
    pub credentials: Option<StoredCredentials>,
    #[serde(default)]
    pub step_up: Option<StepUp>,
    /// The private key DPoP-bound tokens of this server are bound to (PKCS#8, base64url), when
    /// its authorization server offers DPoP (`mcp/auth/dpop.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_key: Option<String>,
}

impl std::fmt::Debug for TokenRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenRecord")
            .field("url", &self.url)
            .field("client", &self.client)
            .field(
                "credentials",
                &crate::config::redact::RedactedSecret(self.credentials.as_ref().map(|_| "tokens")),
            )
            .field("step_up", &self.step_up)
            .field(
                "dpop_key",
                &crate::config::redact::RedactedSecret(self.dpop_key.as_ref().map(|_| "key")),
            )
            .finish()
    }
}

/// The token file of one server URL.
#[derive(Debug, Clone)]
pub struct TokenStore {
    url: String,
    path: PathBuf,
}

impl TokenStore {
    /// The store of `url` under [`store_dir`].
    pub fn for_url(url: &str) -> TokenStore {
        TokenStore::in_dir(&store_dir(), url)
    }

    /// The store of `url` under `dir`.
    pub fn in_dir(dir: &Path, url: &str) -> TokenStore {
        let digest = ring::digest::digest(&ring::digest::SHA256, url.trim().as_bytes());
        let name: String = digest.as_ref()[..16]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        TokenStore {
            url: url.trim().to_string(),
            path: dir.join(format!("{name}.json")),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// The record, or an empty one when there is no file yet.
    pub fn read(&self) -> Result<TokenRecord, StoreError> {
        let text = match std::fs::read(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(TokenRecord {
                    url: self.url.clone(),
                    ..TokenRecord::default()
                })
            }
            Err(source) => {
                return Err(StoreError::Read {
                    path: self.path.clone(),
                    source,
                })
            }
        };
        let record: TokenRecord =
            serde_json::from_slice(&text).map_err(|_| StoreError::Corrupt {
                path: self.path.clone(),
            })?;
        if record.url != self.url {
            return Err(StoreError::Corrupt {
                path: self.path.clone(),
            });
        }
        Ok(record)
    }

    /// Writes `record` atomically (a temporary file, mode 0600, renamed over the old one).
    pub fn write(&self, record: &TokenRecord) -> Result<(), StoreError> {
        let failed = |source| StoreError::Write {
            path: self.path.clone(),
            source,
        };
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(failed)?;
        let text =
            serde_json::to_vec_pretty(record).map_err(|e| failed(std::io::Error::other(e)))?;
        let tmp = dir.join(format!(
            ".{}.{}.tmp",
            self.path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            std::process::id()
        ));
        let written = (|| {
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(&tmp)?;
            // A file left behind by an older umask keeps its mode: set it.
            file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
            file.write_all(&text)?;
            file.sync_all()?;
            std::fs::rename(&tmp, &self.path)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written.map_err(failed)
    }

    /// Reads, changes and writes the record.
    pub fn update(&self, change: impl FnOnce(&mut TokenRecord)) -> Result<(), StoreError> {
        let mut record = self.read()?;
        change(&mut record);
        self.write(&record)
    }

    /// Deletes the file; false when there was none.
    pub fn delete(&self) -> Result<bool, StoreError> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(source) => Err(StoreError::Write {
                path: self.path.clone(),
                source,
            }),
        }
    }

    /// An exclusive lock on this server's tokens across processes (a refresh and its save
    /// happen under it, so a console and a `login` never interleave them).
    async fn lock(&self) -> Result<std::fs::File, StoreError> {
        let path = self.path.with_extension("lock");
        let failed = |source| StoreError::Write {
            path: path.clone(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(failed)?;
        }
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&path)
            .map_err(failed)?;
        let locked = tokio::task::spawn_blocking(move || {
            use std::os::fd::AsRawFd;
            // SAFETY: flock on a file descriptor this closure owns; no memory is shared.
            let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
            if rc == 0 {
                Ok(file)
            } else {
                Err(std::io::Error::last_os_error())
            }
        })
        .await
        .map_err(|e| failed(std::io::Error::other(e)))?;
        locked.map_err(failed)
    }
}

#[async_trait]
impl CredentialStore for TokenStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        Ok(self.read()?.credentials)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        Ok(self.update(|record| record.credentials = Some(credentials))?)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        Ok(self.update(|record| record.credentials = None)?)
    }

    async fn on_refresh_token_rejected(
        &self,
        credentials: &StoredCredentials,
    ) -> Result<(), AuthError> {
        use oauth2::TokenResponse;
        let rejected = credentials
            .token_response
            .as_ref()
            .and_then(|t| t.refresh_token())
            .map(|t| t.secret().clone());
        // Only the tokens that were refused: a login may have replaced them meanwhile.
        Ok(self.update(|record| {
            let current = record
                .credentials
                .as_ref()
                .and_then(|c| c.token_response.as_ref())
                .and_then(|t| t.refresh_token())
                .map(|t| t.secret().clone());
            if current.is_some() && current == rejected {
                record.credentials = None;
            }
        })?)
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        Ok(Some(CredentialRefreshGuard::new(self.lock().await?)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn credentials(access: &str) -> StoredCredentials {
        let token: rmcp::transport::auth::OAuthTokenResponse = serde_json::from_value(
            serde_json::json!({"access_token": access, "token_type": "Bearer", "refresh_token": "r1"}),
        )
        .expect("token response");
        StoredCredentials::new("client".into(), Some(token), vec!["notes".into()], Some(1))
    }

    #[tokio::test]
    async fn files_are_private_keyed_by_url_and_survive_a_reload() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = TokenStore::in_dir(&dir.path().join("oauth"), "http://127.0.0.1:9/mcp");
        assert!(store.load().await.expect("load").is_none());
        store.save(credentials("acc-123")).await.expect("save");
        let mode = std::fs::metadata(store.path())
            .expect("file")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let dir_mode = std::fs::metadata(dir.path().join("oauth"))
            .expect("dir")
            .permissions()
            .mode();
        assert_eq!(dir_mode & 0o777, 0o700);
        let again = TokenStore::in_dir(&dir.path().join("oauth"), " http://127.0.0.1:9/mcp ");
        assert_eq!(again.path(), store.path());
        let loaded = again.load().await.expect("load").expect("stored");
        assert_eq!(loaded.client_id, "client");
        let other = TokenStore::in_dir(&dir.path().join("oauth"), "http://127.0.0.1:9/other");
        assert_ne!(other.path(), store.path());
        assert!(other.load().await.expect("load").is_none());
        // Debug shows no token.
        let shown = format!("{:?}", again.read().expect("read"));
        assert!(
            !shown.contains("acc-123") && !shown.contains("r1"),
            "{shown}"
        );
    }

    #[tokio::test]
    async fn a_rejected_refresh_token_is_dropped_unless_replaced() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = TokenStore::in_dir(dir.path(), "http://h/mcp");
        store.save(credentials("a")).await.expect("save");
        store
            .on_refresh_token_rejected(&credentials("a"))
            .await
            .expect("rejected");
        assert!(store.load().await.expect("load").is_none());
        store.save(credentials("b")).await.expect("save");
        let mut old = credentials("a");
        old.token_response = None;
        store.on_refresh_token_rejected(&old).await.expect("noop");
        assert!(store.load().await.expect("load").is_some());
    }

    #[test]
    fn a_foreign_or_broken_file_is_an_error_that_names_the_file_only() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = TokenStore::in_dir(dir.path(), "http://h/mcp");
        std::fs::write(store.path(), "{\"access_token\": \"secret-xyz\"").expect("write");
        let err = store.read().expect_err("corrupt").to_string();
        assert!(err.contains(&store.path().display().to_string()), "{err}");
        assert!(!err.contains("secret-xyz"), "{err}");
        assert!(store.delete().expect("delete"));
        assert!(!store.delete().expect("gone"));
    }

    #[tokio::test]
    async fn the_refresh_guard_is_exclusive() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = TokenStore::in_dir(dir.path(), "http://h/mcp");
        let guard = store.acquire_refresh_guard().await.expect("guard");
        let second = store.clone();
        let waiting = tokio::spawn(async move { second.acquire_refresh_guard().await.is_ok() });
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        assert!(
            !waiting.is_finished(),
            "a second guard while the first is held"
        );
        drop(guard);
        assert!(waiting.await.expect("join"));
    }
}
