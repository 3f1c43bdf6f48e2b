//! `ConfigError`: every way finding, reading or validating the config can fail, printed as
//! `file:line:col: message` (or `file: cannot read: …`).
//!
//! Separate from `load.rs` so that everything touching the config file (loading, path
//! resolution, the trust write-back) reports through one type with one format.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use super::spans::Position;

/// What kind of problem a [`ConfigError`] is; the message says the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConfigErrorKind {
    /// The file could not be read.
    Read,
    /// No config file was given and none was found in the usual places.
    NotFound,
    /// The text is not valid YAML.
    Syntax,
    /// Valid YAML, but not the schema: unknown key, wrong type, bad enum value, missing field.
    Schema,
    /// A value of the right type that is not acceptable (bad name, bad duration, missing
    /// `command`/`url` for the transport).
    Invalid,
    /// Two servers share a name.
    DuplicateName,
    /// `${VAR}` names an unset variable, or the `${…}` is malformed.
    Expansion,
}

/// Where a [`ConfigError`] points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorPlace {
    /// A line and column in a file.
    At { file: PathBuf, position: Position },
    /// A whole file.
    File(PathBuf),
    /// No single file (nothing was found).
    Nowhere,
}

impl fmt::Display for ErrorPlace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorPlace::At { file, position } => write!(
                f,
                "{}:{}:{}: ",
                file.display(),
                position.line,
                position.column
            ),
            ErrorPlace::File(file) => write!(f, "{}: ", file.display()),
            ErrorPlace::Nowhere => Ok(()),
        }
    }
}

/// At most this many errors of one file are kept and shown; the rest are counted.
pub const MAX_ERRORS: usize = 20;

/// A configuration error. `Display` is `FILE:LINE:COL: message` (1-based line and column) for
/// everything located in the file, `FILE: cannot read: …` for I/O errors, and the bare message
/// when no file was found.
///
/// Loading reports every mistake it finds, not only the first: the first (in file order) is
/// this error and the others ride along ([`all`](Self::all), [`report`](Self::report)).
#[derive(Debug, thiserror::Error)]
#[error("{place}{message}")]
pub struct ConfigError {
    kind: ConfigErrorKind,
    place: ErrorPlace,
    message: String,
    #[source]
    source: Option<io::Error>,
    /// The other errors found in the same file, in file order.
    others: Vec<ConfigError>,
    /// How many more were found beyond [`MAX_ERRORS`].
    beyond: usize,
}

impl ConfigError {
    /// An error at `position` in `file`.
    pub fn at(
        kind: ConfigErrorKind,
        file: &Path,
        position: Position,
        message: impl Into<String>,
    ) -> Self {
        ConfigError {
            kind,
            place: ErrorPlace::At {
                file: file.to_path_buf(),
                position,
            },
            message: message.into(),
            source: None,
            others: Vec::new(),
            beyond: 0,
        }
    }

    /// Several errors as one: sorted by place, the first leads and the others ride along (at
    /// most [`MAX_ERRORS`] in all). `None` when there are none.
    pub fn many(mut errors: Vec<ConfigError>) -> Option<ConfigError> {
        errors.sort_by_key(|e| e.position().map(|p| (p.line, p.column)));
        let mut all = errors.into_iter().flat_map(ConfigError::into_all);
        let mut first = all.next()?;
        first.others = all.by_ref().take(MAX_ERRORS - 1).collect();
        first.beyond = all.count();
        Some(first)
    }

    fn into_all(mut self) -> Vec<ConfigError> {
        let mut out = std::mem::take(&mut self.others);
        out.insert(0, self);
        out
    }

    /// This error and every other one found in the same file, in file order.
    pub fn all(&self) -> impl Iterator<Item = &ConfigError> {
        std::iter::once(self).chain(self.others.iter())
    }

    /// How many errors were found in all (shown or not).
    pub fn count(&self) -> usize {
        1 + self.others.len() + self.beyond
    }

    /// Every error, one `file:line:col: message` line each, then how many more were not shown.
    pub fn report(&self) -> String {
        let mut lines: Vec<String> = self.all().map(ToString::to_string).collect();
        if self.beyond > 0 {
            lines.push(format!(
                "… and {} more (only the first {MAX_ERRORS} are shown)",
                self.beyond
            ));
        }
        lines.join("\n")
    }

    /// `file` could not be read.
    pub fn read(file: &Path, source: io::Error) -> Self {
        ConfigError {
            kind: ConfigErrorKind::Read,
            place: ErrorPlace::File(file.to_path_buf()),
            message: format!("cannot read: {source}"),
            source: Some(source),
            others: Vec::new(),
            beyond: 0,
        }
    }

    /// No config file was found; `looked_at` lists every place tried, in order; the message
    /// says where to start from.
    pub fn not_found(looked_at: &[String]) -> Self {
        ConfigError {
            kind: ConfigErrorKind::NotFound,
            place: ErrorPlace::Nowhere,
            message: format!(
                "no config file found (looked at, in this order: {}). Start from the example: \
                 --config config.example.yaml in the repository (built-in demo servers and \
                 model, offline), or copy it to ./aimon.yaml; or write one from the servers \
                 of Claude, VS Code or Codex: aimon-console import FILE --write --config \
                 aimon.yaml",
                looked_at.join(", ")
            ),
            source: None,
            others: Vec::new(),
            beyond: 0,
        }
    }

    pub fn kind(&self) -> ConfigErrorKind {
        self.kind
    }

    pub fn place(&self) -> &ErrorPlace {
        &self.place
    }

    /// The file the error is about, if any.
    pub fn file(&self) -> Option<&Path> {
        match &self.place {
            ErrorPlace::At { file, .. } | ErrorPlace::File(file) => Some(file),
            ErrorPlace::Nowhere => None,
        }
    }

    /// The position in the file, if the error has one.
    pub fn position(&self) -> Option<Position> {
        match &self.place {
            ErrorPlace::At { position, .. } => Some(*position),
            ErrorPlace::File(_) | ErrorPlace::Nowhere => None,
        }
    }

    /// The message without the place.
    pub fn message(&self) -> &str {
        &self.message
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_formats() {
        let pos = Position {
            line: 3,
            column: 7,
            offset: 20,
        };
        let e = ConfigError::at(ConfigErrorKind::Invalid, Path::new("c.yaml"), pos, "bad");
        assert_eq!(e.to_string(), "c.yaml:3:7: bad");
        assert_eq!(e.position(), Some(pos));

        let io = io::Error::new(io::ErrorKind::NotFound, "gone");
        let e = ConfigError::read(Path::new("c.yaml"), io);
        assert_eq!(e.to_string(), "c.yaml: cannot read: gone");
        assert!(std::error::Error::source(&e).is_some());

        let e = ConfigError::not_found(&["a".into(), "b".into()]);
        let text = e.to_string();
        assert!(
            text.starts_with("no config file found (looked at, in this order: a, b). "),
            "{text}"
        );
        assert!(
            text.contains("config.example.yaml") && text.contains("aimon-console import"),
            "{text}"
        );
        assert_eq!(e.file(), None);
    }

    #[test]
    fn many_errors_sort_and_cap() {
        let at = |line| Position {
            line,
            column: 1,
            offset: 0,
        };
        let errors: Vec<ConfigError> = (1..=25)
            .rev()
            .map(|line| {
                ConfigError::at(
                    ConfigErrorKind::Invalid,
                    Path::new("c.yaml"),
                    at(line),
                    format!("e{line}"),
                )
            })
            .collect();
        let e = ConfigError::many(errors).expect("some");
        assert_eq!(e.to_string(), "c.yaml:1:1: e1");
        assert_eq!(e.count(), 25);
        assert_eq!(e.all().count(), MAX_ERRORS);
        let report = e.report();
        assert!(
            report.starts_with("c.yaml:1:1: e1\nc.yaml:2:1: e2\n"),
            "{report}"
        );
        assert!(report.ends_with("c.yaml:20:1: e20\n… and 5 more (only the first 20 are shown)"));
        assert!(ConfigError::many(Vec::new()).is_none());
    }
}
