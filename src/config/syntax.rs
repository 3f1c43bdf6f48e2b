//! YAML syntax errors, located where the mistake is: a flow collection left open (`args: [a,
//! b` with no `]`) is reported on the line of its bracket, since the parser only notices lines
//! later, where nothing is wrong.

use std::path::Path;

use super::error::{ConfigError, ConfigErrorKind};
use super::spans::{Position, SyntaxError};

/// A YAML syntax error, located. A flow collection left open (`args: [a, b` and no `]`) is
/// reported where it opens: the parser only notices on a later line, where nothing is wrong.
pub(super) fn syntax_error(path: &Path, text: &str, e: SyntaxError) -> ConfigError {
    let end = e.position.offset.min(text.len());
    if let Some((at, bracket)) = unclosed_flow(&text[..end]) {
        let opened = line_and_column(text, at);
        if opened.line < e.position.line {
            let close = if bracket == '[' { ']' } else { '}' };
            return ConfigError::at(
                ConfigErrorKind::Syntax,
                path,
                opened,
                format!(
                    "invalid YAML: this `{bracket}` is never closed with `{close}` (the parser gave up on line {}: {})",
                    e.position.line, e.message
                ),
            );
        }
    }
    ConfigError::at(
        ConfigErrorKind::Syntax,
        path,
        e.position,
        format!("invalid YAML: {}", e.message),
    )
}

/// The innermost `[` or `{` opening a flow collection in `text` that is still open at its end,
/// with its byte offset. Brackets inside quotes, comments and plain scalars do not count.
pub(super) fn unclosed_flow(text: &str) -> Option<(usize, char)> {
    let mut open: Vec<(usize, char)> = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    // Whether the next non-blank character starts a node (a bracket or quote there is syntax).
    let mut node_start = true;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'\n' => node_start = true,
            b' ' | b'\t' | b'\r' => {}
            b'#' if i == 0 || matches!(bytes[i - 1], b' ' | b'\t' | b'\n') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'[' | b'{' if node_start || !open.is_empty() => {
                open.push((i, char::from(c)));
                node_start = true;
            }
            b']' | b'}' if !open.is_empty() => {
                open.pop();
                node_start = false;
            }
            b',' if !open.is_empty() => node_start = true,
            b'"' | b'\'' if node_start => {
                // Skip the quoted scalar (`\"` escapes in double quotes, `''` in single).
                i += 1;
                while i < bytes.len() {
                    if c == b'"' && bytes[i] == b'\\' {
                        i += 2;
                        continue;
                    }
                    if bytes[i] == c {
                        if c == b'\'' && bytes.get(i + 1) == Some(&b'\'') {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
                node_start = false;
            }
            b':' | b'-' | b'?'
                if bytes
                    .get(i + 1)
                    .is_none_or(|n| matches!(n, b' ' | b'\t' | b'\n' | b'\r')) =>
            {
                node_start = true;
            }
            _ => node_start = false,
        }
        i += 1;
    }
    open.pop()
}

/// The line and column of byte `offset` in `text`.
fn line_and_column(text: &str, offset: usize) -> Position {
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    Position {
        line,
        column: text[line_start..offset].chars().count() + 1,
        offset,
    }
}
