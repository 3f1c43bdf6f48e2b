//! The value pass's shared machinery: where a node is (`file:line:col` of its value or key),
//! the errors found so far, `${VAR}` expansion, durations, string maps and headers. Every
//! section's checks (`load.rs`'s servers, `agent_load.rs`, `hooks.rs`, `rules.rs`,
//! `rewake.rs`, `oauth.rs`) report through it, so that each goes on after a mistake and all of
//! them come out at once, in the same words.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use super::duration::parse_duration;
use super::error::{ConfigError, ConfigErrorKind};
use super::expand::{expand, ExpandError};
use super::spans::{child_path, Position, Spans};
use super::values::DurationText;

/// Where the value at `node` starts; falls back to its parents, then to 1:1.
pub(super) fn position_of(spans: &Spans, node: &str) -> Position {
    let mut path = node;
    loop {
        if let Some(position) = spans.value(path) {
            return position;
        }
        match path.rfind(['.', '[']) {
            Some(cut) => path = &path[..cut],
            None => {
                return spans.value("").unwrap_or(Position {
                    line: 1,
                    column: 1,
                    offset: 0,
                })
            }
        }
    }
}

/// What the checks after deserialization need: the file, its location index and the
/// variables; and the errors found so far (every check goes on after a failure of another).
pub(super) struct Context<'a> {
    path: &'a Path,
    pub(super) spans: &'a Spans,
    env: &'a dyn Fn(&str) -> Option<String>,
    errors: RefCell<Vec<ConfigError>>,
}

impl<'a> Context<'a> {
    pub(super) fn new(
        path: &'a Path,
        spans: &'a Spans,
        env: &'a dyn Fn(&str) -> Option<String>,
    ) -> Self {
        Context {
            path,
            spans,
            env,
            errors: RefCell::new(Vec::new()),
        }
    }

    /// Every error reported, in the order reported.
    pub(super) fn into_errors(self) -> Vec<ConfigError> {
        self.errors.into_inner()
    }

    /// Where the value at `node` starts; falls back to its parents, then to 1:1.
    pub(super) fn value_at(&self, node: &str) -> Position {
        position_of(self.spans, node)
    }

    pub(super) fn error(&self, kind: ConfigErrorKind, node: &str, message: String) -> ConfigError {
        ConfigError::at(kind, self.path, self.value_at(node), message)
    }

    /// An error at `position`.
    pub(super) fn at(&self, kind: ConfigErrorKind, at: Position, message: String) -> ConfigError {
        ConfigError::at(kind, self.path, at, message)
    }

    /// Records an error; loading goes on to find the others.
    pub(super) fn report(&self, error: ConfigError) {
        self.errors.borrow_mut().push(error);
    }

    /// The value, or `None` with its error recorded.
    pub(super) fn keep<T>(&self, result: Result<T, ConfigError>) -> Option<T> {
        result.map_err(|e| self.report(e)).ok()
    }

    pub(super) fn error_count(&self) -> usize {
        self.errors.borrow().len()
    }

    /// `file:line:col` of `position`, to name another place in a message.
    pub(super) fn place(&self, position: Position) -> String {
        format!(
            "{}:{}:{}",
            self.path.display(),
            position.line,
            position.column
        )
    }

    /// Expand `${VAR}`s in the string value at `node`.
    pub(super) fn expand(&self, node: &str, value: &str) -> Result<String, ConfigError> {
        expand(value, self.env).map_err(|e: ExpandError| {
            self.error(ConfigErrorKind::Expansion, node, format!("{e} (in {node})"))
        })
    }

    /// The duration at `node`, its `${VAR}`s expanded first.
    pub(super) fn duration(&self, node: &str, raw: &DurationText) -> Result<Duration, ConfigError> {
        let text = self.expand(node, &raw.0)?;
        parse_duration(&text)
            .map_err(|e| self.error(ConfigErrorKind::Invalid, node, format!("{node}: {e}")))
    }

    /// A `headers:` mapping, its values expanded; a name or value HTTP refuses is reported (an
    /// error names the header, never its value: it may be a secret).
    pub(super) fn headers(
        &self,
        node: &str,
        raw: BTreeMap<String, String>,
    ) -> BTreeMap<String, String> {
        let headers = self.map(node, raw);
        for (name, value) in &headers {
            let node = child_path(node, name);
            if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
                self.report(self.at(
                    ConfigErrorKind::Invalid,
                    self.key_at(&node),
                    format!("invalid header name {name:?}"),
                ));
            } else if http::HeaderValue::from_str(value).is_err() {
                self.report(self.error(
                    ConfigErrorKind::Invalid,
                    &node,
                    format!("the value of header {name} is not a valid header value (control characters or non-ASCII)"),
                ));
            }
        }
        headers
    }

    /// Where the key of `node` is (its value when it has no key: a list item, the root).
    pub(super) fn key_at(&self, node: &str) -> Position {
        self.spans.key(node).unwrap_or_else(|| self.value_at(node))
    }

    /// An invalid-value error pointing at the key of `node` (its value if the key has no place).
    pub(super) fn key_error(&self, node: &str, message: String) -> ConfigError {
        self.at(ConfigErrorKind::Invalid, self.key_at(node), message)
    }

    /// Expand the values (not the keys) of a string map; a value that cannot be expanded is
    /// left out, its error recorded.
    pub(super) fn map(
        &self,
        node: &str,
        raw: BTreeMap<String, String>,
    ) -> BTreeMap<String, String> {
        raw.into_iter()
            .filter_map(|(k, v)| {
                let value = self.keep(self.expand(&child_path(node, &k), &v))?;
                Some((k, value))
            })
            .collect()
    }
}
