//! Writing one server's `annotation_trust` back into the config file: in place, so comments,
//! order and layout of everything else are kept; atomically (temp file + rename); and only if
//! the file is still the one that was loaded.
//!
//! Separate from loading because it is the only code that writes the operator's file.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::spans::{child_path, index_path, Spans};
use super::AnnotationTrust;

/// Why the trust could not be written.
#[derive(Debug, thiserror::Error)]
pub enum TrustWriteError {
    #[error("{path}: cannot read: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{path}: changed on disk since it was loaded; nothing was written (restart to reload it)"
    )]
    Changed { path: PathBuf },
    #[error("{path}: no server named {server} in the file")]
    NoSuchServer { path: PathBuf, server: String },
    #[error("{path}: server {server} is written in flow style ({{ … }}); set annotation_trust there by hand")]
    FlowStyle { path: PathBuf, server: String },
    #[error("{path}: the edited file would not be valid ({why}); nothing was written")]
    Invalid { path: PathBuf, why: String },
    #[error("{path}: cannot write: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// FNV-1a over the text: cheap, stable, enough to notice an edit.
pub fn digest(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Sets `annotation_trust` of `server` in the file at `path` and returns the new digest.
/// Refuses when the file's digest is no longer `expected_digest`.
pub fn set_server_trust(
    path: &Path,
    expected_digest: u64,
    server: &str,
    trust: AnnotationTrust,
) -> Result<u64, TrustWriteError> {
    // Write through a symlink to the real file, so the link stays a link.
    let real = std::fs::canonicalize(path).map_err(|source| TrustWriteError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let text = std::fs::read_to_string(&real).map_err(|source| TrustWriteError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    if digest(&text) != expected_digest {
        return Err(TrustWriteError::Changed {
            path: path.to_path_buf(),
        });
    }
    let edited = edit_trust(&text, server, trust).map_err(|e| e.at(path, server))?;
    write_atomically(&real, &edited).map_err(|source| TrustWriteError::Write {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(digest(&edited))
}

/// Why an in-memory edit failed (before the path is known).
#[derive(Debug, PartialEq)]
pub(crate) enum EditError {
    NoSuchServer,
    FlowStyle,
    Invalid(String),
}

impl EditError {
    fn at(self, path: &Path, server: &str) -> TrustWriteError {
        let path = path.to_path_buf();
        match self {
            EditError::NoSuchServer => TrustWriteError::NoSuchServer {
                path,
                server: server.to_string(),
            },
            EditError::FlowStyle => TrustWriteError::FlowStyle {
                path,
                server: server.to_string(),
            },
            EditError::Invalid(why) => TrustWriteError::Invalid { path, why },
        }
    }
}

/// The text with `server`'s `annotation_trust` set: the value replaced where the key exists,
/// else a line added right under the server's `name`, at its indentation.
pub(crate) fn edit_trust(
    text: &str,
    server: &str,
    trust: AnnotationTrust,
) -> Result<String, EditError> {
    let spans = Spans::parse(text).map_err(|e| EditError::Invalid(e.message))?;
    let entry = (0..)
        .map(|i| index_path("mcp.servers", i))
        .take_while(|p| spans.get(p).is_some())
        .find(|p| {
            spans
                .get(&child_path(p, "name"))
                .and_then(|n| text.get(n.start.offset..n.end.offset))
                .is_some_and(|raw| unquote(raw) == server)
        })
        .ok_or(EditError::NoSuchServer)?;
    let entry_span = spans.get(&entry).ok_or(EditError::NoSuchServer)?;
    if text[entry_span.start.offset..].starts_with('{') {
        return Err(EditError::FlowStyle);
    }
    let word = trust.as_str();
    let edited = match spans.get(&child_path(&entry, "annotation_trust")) {
        Some(value) => format!(
            "{}{word}{}",
            &text[..value.start.offset],
            &text[value.end.offset..]
        ),
        None => {
            let name = spans
                .get(&child_path(&entry, "name"))
                .ok_or(EditError::NoSuchServer)?;
            let key = name.key.ok_or(EditError::NoSuchServer)?;
            let indent = " ".repeat(key.column.saturating_sub(1));
            let line_end = text[name.end.offset..]
                .find('\n')
                .map_or(text.len(), |i| name.end.offset + i);
            format!(
                "{}\n{indent}annotation_trust: {word}{}",
                &text[..line_end],
                &text[line_end..]
            )
        }
    };
    // The result must parse and hold the new value where we meant to put it.
    let check = Spans::parse(&edited).map_err(|e| EditError::Invalid(e.message))?;
    let written = check
        .get(&child_path(&entry, "annotation_trust"))
        .and_then(|v| edited.get(v.start.offset..v.end.offset))
        .map(unquote);
    if written.as_deref() != Some(word) {
        return Err(EditError::Invalid(
            "the new annotation_trust did not land in the server's entry".into(),
        ));
    }
    Ok(edited)
}

fn unquote(raw: &str) -> String {
    let t = raw.trim();
    let bytes = t.as_bytes();
    if t.len() >= 2
        && ((bytes[0] == b'"' && bytes[t.len() - 1] == b'"')
            || (bytes[0] == b'\'' && bytes[t.len() - 1] == b'\''))
    {
        t[1..t.len() - 1].to_string()
    } else {
        t.to_string()
    }
}

/// Temp file in the same folder, flushed and synced, permissions copied, renamed over `path`.
fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "config".into());
    let tmp = dir.join(format!(".{name}.aimon-{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = std::fs::File::create(&tmp)?;
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

    #[test]
    fn adds_the_key_under_the_name_and_keeps_comments() {
        let out = edit_trust(TEXT, "alpha", AnnotationTrust::Trust).unwrap();
        assert_eq!(
            out,
            TEXT.replace(
                "    - name: alpha   # trailing comment\n",
                "    - name: alpha   # trailing comment\n      annotation_trust: trust\n"
            )
        );
    }

    #[test]
    fn replaces_an_existing_value_in_place() {
        let out = edit_trust(TEXT, "beta", AnnotationTrust::Trust).unwrap();
        assert_eq!(
            out,
            TEXT.replace(
                "annotation_trust: ignore  # keep me",
                "annotation_trust: trust  # keep me"
            )
        );
    }

    #[test]
    fn last_line_without_newline() {
        let text = "mcp:\n  servers:\n    - command: a\n      name: z";
        let out = edit_trust(text, "z", AnnotationTrust::Trust).unwrap();
        assert_eq!(
            out,
            "mcp:\n  servers:\n    - command: a\n      name: z\n      annotation_trust: trust"
        );
    }

    #[test]
    fn refuses_unknown_and_flow_style() {
        assert_eq!(
            edit_trust(TEXT, "gamma", AnnotationTrust::Trust),
            Err(EditError::NoSuchServer)
        );
        let flow = "mcp:\n  servers:\n    - {name: f, command: x}\n";
        assert_eq!(
            edit_trust(flow, "f", AnnotationTrust::Trust),
            Err(EditError::FlowStyle)
        );
    }

    #[test]
    fn writes_atomically_and_refuses_a_changed_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("aimon.yaml");
        std::fs::write(&path, TEXT).unwrap();
        let d = digest(TEXT);
        let new = set_server_trust(&path, d, "alpha", AnnotationTrust::Trust).unwrap();
        let written = std::fs::read_to_string(&path).unwrap();
        assert_eq!(digest(&written), new);
        assert!(written.contains("# the first server"));
        // A second write with the old digest is refused: the file changed since.
        let err = set_server_trust(&path, d, "alpha", AnnotationTrust::Ignore).unwrap_err();
        assert!(matches!(err, TrustWriteError::Changed { .. }), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), written);
        // No temp files left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
