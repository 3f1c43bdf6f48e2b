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

/// A configuration error. `Display` is `FILE:LINE:COL: message` (1-based line and column) for
/// everything located in the file, `FILE: cannot read: …` for I/O errors, and the bare message
/// when no file was found.
#[derive(Debug, thiserror::Error)]
#[error("{place}{message}")]
pub struct ConfigError {
    kind: ConfigErrorKind,
    place: ErrorPlace,
    message: String,
    #[source]
    source: Option<io::Error>,
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
        }
    }

    /// `file` could not be read.
    pub fn read(file: &Path, source: io::Error) -> Self {
        ConfigError {
            kind: ConfigErrorKind::Read,
            place: ErrorPlace::File(file.to_path_buf()),
            message: format!("cannot read: {source}"),
            source: Some(source),
        }
    }

    /// No config file was found; `looked_at` lists every place tried, in order.
    pub fn not_found(looked_at: &[String]) -> Self {
        ConfigError {
            kind: ConfigErrorKind::NotFound,
            place: ErrorPlace::Nowhere,
            message: format!(
                "no config file found (looked at: {}); pass --config or set AIMON_CONFIG",
                looked_at.join(", ")
            ),
            source: None,
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
        assert_eq!(
            e.to_string(),
            "no config file found (looked at: a, b); pass --config or set AIMON_CONFIG"
        );
        assert_eq!(e.file(), None);
    }
}
