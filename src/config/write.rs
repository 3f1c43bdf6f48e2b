//! Writing the config file back: open it for editing (refusing a file that changed since it was
//! loaded), edit it through [`YamlDoc`] (comments, order and layout of the rest kept byte for
//! byte), and save it atomically (temp file + rename), refusing again if someone else wrote it
//! meanwhile, and refusing a result that no longer loads as a config when the original did.
//!
//! Separate from loading because it is the only code that writes the operator's file. The
//! console's trust toggle, `trust`, `enable`/`disable` and `import` all go through here.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_yaml::Value;

use super::edit::{Change, EditError, YamlDoc};
use super::AnnotationTrust;

/// The list every server entry is in.
pub const SERVERS: &str = "mcp.servers";

/// Why the config file could not be changed. Nothing was written after any of these.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("{path}: cannot read: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{path}: changed on disk since it was loaded; nothing was written (load it again and retry)"
    )]
    Changed { path: PathBuf },
    #[error("{path}: no server named {server} in the file")]
    NoSuchServer { path: PathBuf, server: String },
    #[error("{path}: there is no policy.rules[{index}] in the file")]
    NoSuchRule { path: PathBuf, index: usize },
    #[error("{path}: {source}")]
    Edit {
        path: PathBuf,
        #[source]
        source: EditError,
    },
    #[error("{path}: the edited file would not load ({why}); nothing was written")]
    Invalid { path: PathBuf, why: String },
    #[error("{path}: cannot write: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The name the console's trust write-back has always used.
pub type TrustWriteError = WriteError;

/// FNV-1a over the text: cheap, stable, enough to notice an edit.
pub fn digest(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A config file opened for editing. Edits change the text in memory; [`save`](Self::save)
/// writes it.
#[derive(Debug)]
pub struct ConfigFile {
    /// As given (for messages).
    path: PathBuf,
    /// Where the bytes are (a symlink is written through, so the link stays a link).
    real: PathBuf,
    /// The digest of the text as read; `None` when the file did not exist.
    read_digest: Option<u64>,
    original: String,
    doc: YamlDoc,
}

impl ConfigFile {
    /// Opens the file at `path` for editing, refusing when its digest is no longer `expected`
    /// (the file changed since it was loaded).
    pub fn open(path: &Path, expected: u64) -> Result<ConfigFile, WriteError> {
        let file = ConfigFile::read(path, false)?;
        if file.read_digest != Some(expected) {
            return Err(WriteError::Changed {
                path: path.to_path_buf(),
            });
        }
        Ok(file)
    }

    /// Opens the file at `path` as it is now, or an empty one that [`save`](Self::save)
    /// creates (for `import --write` into a config that does not exist yet).
    pub fn open_or_new(path: &Path) -> Result<ConfigFile, WriteError> {
        ConfigFile::read(path, true)
    }

    fn read(path: &Path, may_be_missing: bool) -> Result<ConfigFile, WriteError> {
        let read_error = |source| WriteError::Read {
            path: path.to_path_buf(),
            source,
        };
        let (real, text, read_digest) = match std::fs::canonicalize(path) {
            Ok(real) => {
                let text = std::fs::read_to_string(&real).map_err(read_error)?;
                let d = digest(&text);
                (real, text, Some(d))
            }
            Err(e) if may_be_missing && e.kind() == std::io::ErrorKind::NotFound => {
                (path.to_path_buf(), String::new(), None)
            }
            Err(e) => return Err(read_error(e)),
        };
        let doc = YamlDoc::parse(text.clone()).map_err(|source| WriteError::Edit {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(ConfigFile {
            path: path.to_path_buf(),
            real,
            read_digest,
            original: text,
            doc,
        })
    }

    /// The path as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the file existed when it was opened.
    pub fn exists(&self) -> bool {
        self.read_digest.is_some()
    }

    /// The text as edited so far.
    pub fn doc(&self) -> &YamlDoc {
        &self.doc
    }

    /// Whether any edit changed the text.
    pub fn is_changed(&self) -> bool {
        self.doc.text() != self.original
    }

    fn edit_error(&self, source: EditError) -> WriteError {
        WriteError::Edit {
            path: self.path.clone(),
            source,
        }
    }

    /// Sets `key` of the mapping at `map` (see [`YamlDoc::set`]).
    pub fn set(&mut self, map: &str, key: &str, value: &Value) -> Result<Change, WriteError> {
        self.doc
            .set(map, key, value)
            .map_err(|e| self.edit_error(e))
    }

    /// Appends `item` to the list at `list`, creating it if missing (see [`YamlDoc::append`]).
    pub fn append(
        &mut self,
        list: &str,
        item: &Value,
        comments: &[String],
    ) -> Result<Change, WriteError> {
        self.doc
            .append(list, item, comments)
            .map_err(|e| self.edit_error(e))
    }

    /// Removes the items of the list at `list` for which `pred` holds; how many went (see
    /// [`YamlDoc::remove`]).
    pub fn remove(
        &mut self,
        list: &str,
        pred: &dyn Fn(&Value) -> bool,
    ) -> Result<usize, WriteError> {
        self.doc.remove(list, pred).map_err(|e| self.edit_error(e))
    }

    /// The path of the entry of server `name` (`mcp.servers[2]`).
    pub fn server(&self, name: &str) -> Result<String, WriteError> {
        self.doc
            .find_item(SERVERS, &|v| {
                v.get("name").and_then(Value::as_str) == Some(name)
            })
            .map(|i| format!("{SERVERS}[{i}]"))
            .ok_or_else(|| WriteError::NoSuchServer {
                path: self.path.clone(),
                server: name.to_string(),
            })
    }

    /// Sets `key` of server `name` to `value`; a new key goes right under the server's `name`.
    /// False when it already had that value (nothing changed).
    pub fn set_server(&mut self, name: &str, key: &str, value: &Value) -> Result<bool, WriteError> {
        let entry = self.server(name)?;
        if self.doc.get(&format!("{entry}.{key}")) == Some(value) {
            return Ok(false);
        }
        self.doc
            .set_after(&entry, key, value, Some("name"))
            .map_err(|e| self.edit_error(e))?;
        Ok(true)
    }

    /// Writes the edited text and returns its digest. Nothing is written when nothing changed;
    /// the file is refused when it changed on disk since it was opened, or when the edit made
    /// a loadable config unloadable.
    pub fn save(self) -> Result<u64, WriteError> {
        let text = self.doc.text();
        if !self.is_changed() && self.exists() {
            return Ok(digest(text));
        }
        if let (Ok(()), Err(e)) = (loads(&self.path, &self.original), loads(&self.path, text)) {
            return Err(WriteError::Invalid {
                path: self.path.clone(),
                why: e,
            });
        }
        let now = match std::fs::read_to_string(&self.real) {
            Ok(now) => Some(digest(&now)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(source) => {
                return Err(WriteError::Read {
                    path: self.path.clone(),
                    source,
                })
            }
        };
        if now != self.read_digest {
            return Err(WriteError::Changed {
                path: self.path.clone(),
            });
        }
        write_atomically(&self.real, text).map_err(|source| WriteError::Write {
            path: self.path.clone(),
            source,
        })?;
        Ok(digest(text))
    }
}

/// Whether `text` loads as a config. Variables that are not set stand in as a placeholder: the
/// check is about the file's structure, not this shell's environment.
fn loads(path: &Path, text: &str) -> Result<(), String> {
    let env = |name: &str| {
        std::env::var(name)
            .ok()
            .or_else(|| Some(format!("placeholder-{}", name.to_ascii_lowercase())))
    };
    super::load_str(path, text, &env)
        .map(|_| ())
        .map_err(|e| e.report())
}

/// Sets `annotation_trust` of `server` in the file at `path` and returns the new digest.
/// Refuses when the file's digest is no longer `expected_digest`.
pub fn set_server_trust(
    path: &Path,
    expected_digest: u64,
    server: &str,
    trust: AnnotationTrust,
) -> Result<u64, WriteError> {
    let mut file = ConfigFile::open(path, expected_digest)?;
    file.set_server(server, "annotation_trust", &Value::from(trust.as_str()))?;
    file.save()
}

/// Sets `enabled` of `server` in the file at `path`; `None` when it already was so (nothing
/// written), else the new digest. Refuses when the file's digest is no longer `expected_digest`.
pub fn set_server_enabled(
    path: &Path,
    expected_digest: u64,
    server: &str,
    enabled: bool,
) -> Result<Option<u64>, WriteError> {
    let mut file = ConfigFile::open(path, expected_digest)?;
    let entry = file.server(server)?;
    // A missing `enabled` means enabled.
    let now = file
        .doc()
        .get(&format!("{entry}.enabled"))
        .and_then(Value::as_bool)
        .unwrap_or(true);
    if now == enabled {
        return Ok(None);
    }
    file.set_server(server, "enabled", &Value::Bool(enabled))?;
    file.save().map(Some)
}

/// Writes `text` to `path` as [`write_atomically`] does (a new file owner-only), making its
/// folder first, owner-only too (0700), when it is not there: for what this program keeps for
/// itself under the state folder (pinned definitions, the gateway's token).
pub fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    write_atomically(path, text)
}

/// Temp file in the same folder, flushed and synced, permissions copied, renamed over `path`. A
/// file made new is readable by its owner only (0600): a config can hold secrets.
fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "config".into());
    let tmp = dir.join(format!(".{name}.aimon-{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        if let Ok(meta) = std::fs::metadata(path) {
            std::fs::set_permissions(&tmp, meta.permissions())?;
        }
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "\
# top comment
mcp:
  servers:
    # the first server
    - name: alpha   # trailing comment
      command: a
    - name: \"beta\"
      command: b
      annotation_trust: ignore  # keep me
policy: {approval: never}
";

    /// A config written new is its owner's only; one written over keeps the mode it had.
    #[test]
    fn a_new_file_is_the_owners_only_and_an_old_one_keeps_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let dir = tempfile::tempdir().unwrap();
        let new = dir.path().join("new.yaml");
        write_atomically(&new, TEXT).unwrap();
        assert_eq!(mode(&new), 0o600);
        let (_dir, old) = file_with(TEXT);
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomically(&old, TEXT).unwrap();
        assert_eq!(mode(&old), 0o640);
    }

    fn file_with(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("aimon.yaml");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    #[test]
    fn trust_goes_under_the_name_or_replaces_in_place() {
        let (_dir, path) = file_with(TEXT);
        let d = set_server_trust(&path, digest(TEXT), "alpha", AnnotationTrust::Trust).unwrap();
        let written = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            written,
            TEXT.replace(
                "    - name: alpha   # trailing comment\n",
                "    - name: alpha   # trailing comment\n      annotation_trust: trust\n"
            )
        );
        assert_eq!(digest(&written), d);
        set_server_trust(&path, d, "beta", AnnotationTrust::Trust).unwrap();
        let written = std::fs::read_to_string(&path).unwrap();
        assert!(
            written.contains("annotation_trust: trust  # keep me"),
            "{written}"
        );
    }

    #[test]
    fn refuses_a_changed_file_and_unknown_servers() {
        let (dir, path) = file_with(TEXT);
        let d = digest(TEXT);
        let new = set_server_trust(&path, d, "alpha", AnnotationTrust::Trust).unwrap();
        let written = std::fs::read_to_string(&path).unwrap();
        // A second write with the old digest is refused: the file changed since.
        let err = set_server_trust(&path, d, "alpha", AnnotationTrust::Ignore).unwrap_err();
        assert!(matches!(err, WriteError::Changed { .. }), "{err}");
        let err = set_server_trust(&path, new, "gamma", AnnotationTrust::Trust).unwrap_err();
        assert!(matches!(err, WriteError::NoSuchServer { .. }), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), written);
        // No temp files left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_write_racing_the_edit_is_refused() {
        let (_dir, path) = file_with(TEXT);
        let mut file = ConfigFile::open(&path, digest(TEXT)).unwrap();
        file.set_server("alpha", "enabled", &Value::Bool(false))
            .unwrap();
        std::fs::write(&path, format!("{TEXT}# someone else\n")).unwrap();
        assert!(matches!(file.save(), Err(WriteError::Changed { .. })));
        assert!(std::fs::read_to_string(&path)
            .unwrap()
            .ends_with("# someone else\n"));
    }

    #[test]
    fn enable_and_disable() {
        let (_dir, path) = file_with(TEXT);
        assert_eq!(
            set_server_enabled(&path, digest(TEXT), "alpha", true).unwrap(),
            None,
            "no `enabled` key means enabled"
        );
        let d = set_server_enabled(&path, digest(TEXT), "alpha", false)
            .unwrap()
            .expect("written");
        let written = std::fs::read_to_string(&path).unwrap();
        assert!(
            written.contains("- name: alpha   # trailing comment\n      enabled: false\n"),
            "{written}"
        );
        let d = set_server_enabled(&path, d, "alpha", true)
            .unwrap()
            .unwrap();
        let written = std::fs::read_to_string(&path).unwrap();
        assert_eq!(digest(&written), d);
        assert!(written.contains("      enabled: true\n"), "{written}");
    }

    #[test]
    fn an_edit_that_breaks_the_config_is_not_written() {
        let (_dir, path) = file_with(TEXT);
        let mut file = ConfigFile::open(&path, digest(TEXT)).unwrap();
        // A second server named alpha: valid YAML, not a valid config.
        file.append(
            SERVERS,
            &serde_yaml::from_str("{name: alpha, command: x}").unwrap(),
            &[],
        )
        .unwrap();
        let err = file.save().unwrap_err();
        assert!(matches!(err, WriteError::Invalid { .. }), "{err}");
        assert!(err.to_string().contains("duplicate server name"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), TEXT);
    }

    #[test]
    fn a_missing_file_is_created() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.yaml");
        let mut file = ConfigFile::open_or_new(&path).unwrap();
        assert!(!file.exists());
        file.append(
            SERVERS,
            &serde_yaml::from_str("{name: a, command: x}").unwrap(),
            &[],
        )
        .unwrap();
        file.save().unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "mcp:\n  servers:\n    - name: a\n      command: x\n"
        );
    }

    #[test]
    fn writes_through_a_symlink() {
        let (dir, path) = file_with(TEXT);
        let link = dir.path().join("link.yaml");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        set_server_trust(&link, digest(TEXT), "alpha", AnnotationTrust::Trust).unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert!(std::fs::read_to_string(&path)
            .unwrap()
            .contains("annotation_trust: trust"));
    }
}
