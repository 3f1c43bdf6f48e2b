//! The splices each edit is made of: replacing a scalar, adding an entry to a mapping (and
//! the keys above it that are missing), filling an empty list or value, appending after a
//! list's last item, removing one item; and rendering the new entries in the file's own
//! indentation. Each returns a [`Change`]; `mod.rs` checks it before it is kept.

use serde_yaml::Value;

use super::place::{line_end, line_start};
use super::{kind, Change, EditError, Leaf, YamlDoc};
use crate::config::emit;
use crate::config::spans::{child_path, index_path};

impl YamlDoc {
    /// Replaces the scalar at `path` (a mapping entry) with `value`.
    pub(super) fn replace_scalar(&self, path: &str, value: &Value) -> Result<Change, EditError> {
        let span = self.span(path)?;
        let parent = path.rfind('.').map_or("", |i| &path[..i]);
        let flow = self.is_flow(parent);
        let text = emit::scalar(value, flow).unwrap_or_default();
        if span.start.offset == span.end.offset {
            // An empty value (`key:`): the scalar goes right after the colon.
            let key = span
                .key
                .ok_or_else(|| EditError::Missing(path.to_string()))?;
            let colon = self
                .colon_after(key.offset)
                .ok_or_else(|| EditError::Unsupported {
                    path: path.to_string(),
                    why: "no `:` after the key".to_string(),
                })?;
            return Ok(self.change(colon + 1, colon + 1, format!(" {text}")));
        }
        Ok(self.change(span.start.offset, span.end.offset, text))
    }

    /// Adds `keys[0]: …` to the mapping (or empty value) at `map`; the later keys nest. In a
    /// block mapping it goes after its last entry, or after the entry `after` if there is one.
    pub(super) fn add_entry(
        &self,
        map: &str,
        keys: &[&str],
        leaf: Leaf<'_>,
        after: Option<&str>,
    ) -> Result<Change, EditError> {
        let step = self.step();
        let value = self
            .get(map)
            .ok_or_else(|| EditError::Missing(map.to_string()))?;
        let span = self.spans.get(map).copied();
        match (value, span) {
            // An empty document: the entry goes at the end of the text.
            (Value::Null, _) if map.is_empty() => {
                let at = self.text.len();
                Ok(self.change(
                    at,
                    at,
                    format!("{}{}", self.lead(at), block_entry(keys, &leaf, 0, step)),
                ))
            }
            (Value::Null, Some(_)) => {
                // An empty value under a key: the new entries go on the lines below it.
                let (at, end, rest, indent) = self.below_key(map)?;
                Ok(self.change(
                    at,
                    end,
                    format!("{rest}{}", block_entry(keys, &leaf, indent, step)),
                ))
            }
            (Value::Mapping(entries), Some(span)) if self.is_flow(map) => {
                let close = span.end.offset.saturating_sub(1);
                if self.text.as_bytes().get(close) != Some(&b'}') {
                    return Err(EditError::Unsupported {
                        path: map.to_string(),
                        why: "cannot find the closing `}`".to_string(),
                    });
                }
                let entry = flow_entry(keys, &leaf);
                if entries.is_empty() {
                    Ok(self.change(close, close, entry))
                } else {
                    let at = self.text[..close].trim_end().len();
                    Ok(self.change(at, at, format!(", {entry}")))
                }
            }
            (Value::Mapping(_), Some(_)) => {
                let indent = self
                    .child_key_indent(map)
                    .ok_or_else(|| EditError::Unsupported {
                        path: map.to_string(),
                        why: "cannot tell the indentation of its keys".to_string(),
                    })?;
                let anchor = after
                    .map(|k| child_path(map, k))
                    .filter(|p| self.spans.get(p).is_some_and(|n| n.key.is_some()));
                let at = self.after_content(anchor.as_deref().unwrap_or(map));
                Ok(self.change(
                    at,
                    at,
                    format!(
                        "{}{}",
                        self.lead(at),
                        block_entry(keys, &leaf, indent, step)
                    ),
                ))
            }
            (other, _) => Err(EditError::WrongKind {
                path: map.to_string(),
                expected: "a mapping",
                found: kind(other),
            }),
        }
    }

    /// A line break to put before text inserted at `at`, when `at` is the end of a text whose
    /// last line has none.
    pub(super) fn lead(&self, at: usize) -> &'static str {
        if at == self.text.len() && !self.text.is_empty() && !self.text.ends_with('\n') {
            "\n"
        } else {
            ""
        }
    }

    /// For an empty value (`key:`, `key: ~`, `key: []`) under a key: the splice that removes
    /// the empty value (keeping the rest of the key's line) and ends where new lines go, with
    /// that rest, and the indentation of the lines to add.
    pub(super) fn below_key(&self, path: &str) -> Result<(usize, usize, String, usize), EditError> {
        let span = self.span(path)?;
        let key = span.key.ok_or_else(|| EditError::Unsupported {
            path: path.to_string(),
            why: "it is not under a key".to_string(),
        })?;
        let indent = self.column_of(key.offset) + self.step();
        if span.start.offset == span.end.offset {
            let at = line_end(&self.text, key.offset);
            return Ok((at, at, self.lead(at).to_string(), indent));
        }
        // `key: ~  # c` → `key:  # c` and the new lines below.
        let start = self.text[..span.start.offset].trim_end_matches(' ').len();
        let end = line_end(&self.text, span.end.offset);
        let mut rest = self.text[span.end.offset..end].to_string();
        if !rest.ends_with('\n') {
            rest.push('\n');
        }
        Ok((start, end, rest, indent))
    }

    /// Puts the first item into an empty list (`[]`) or an empty value.
    pub(super) fn fill_empty(
        &self,
        path: &str,
        item: &Value,
        comments: &[String],
    ) -> Result<Change, EditError> {
        let span = self.span(path)?;
        if self.is_flow(path) && span.key.is_none() {
            // `[]` as a list item or the root: stay in flow style.
            let close = span.end.offset.saturating_sub(1);
            return Ok(self.change(close, close, emit::flow(item)));
        }
        let (at, end, rest, indent) = self.below_key(path)?;
        let step = self.step();
        Ok(self.change(
            at,
            end,
            format!(
                "{rest}{}",
                emit::sequence_item(item, indent, 2, step, comments)
            ),
        ))
    }

    /// Appends after item `len - 1` of a non-empty list.
    pub(super) fn append_to_list(
        &self,
        list: &str,
        len: usize,
        item: &Value,
        comments: &[String],
    ) -> Result<Change, EditError> {
        let span = self.span(list)?;
        let last = index_path(list, len - 1);
        if self.is_flow(list) {
            let close = span.end.offset.saturating_sub(1);
            if self.text.as_bytes().get(close) != Some(&b']') {
                return Err(EditError::Unsupported {
                    path: list.to_string(),
                    why: "cannot find the closing `]`".to_string(),
                });
            }
            let at = self.text[..close].trim_end().len();
            return Ok(self.change(at, at, format!(", {}", emit::flow(item))));
        }
        let item_span = self.span(&last)?;
        let dash =
            self.dash_before(item_span.start.offset)
                .ok_or_else(|| EditError::Unsupported {
                    path: last.clone(),
                    why: "its `-` is not where a block list item's is".to_string(),
                })?;
        let dash_col = self.column_of(dash);
        let gap = if self.text[dash..item_span.start.offset].contains('\n') {
            2
        } else {
            self.column_of(item_span.start.offset) - dash_col
        };
        let at = self.after_content(&last);
        // Items written `- {…}` get one more written so.
        let text = if self.is_flow(&last) {
            emit::flow_sequence_item(item, dash_col, gap, comments)
        } else {
            emit::sequence_item(item, dash_col, gap, self.step(), comments)
        };
        Ok(self.change(at, at, format!("{}{text}", self.lead(at))))
    }

    /// The splice removing item `i` of the list at `list`.
    pub(super) fn remove_item(&self, list: &str, i: usize) -> Result<Change, EditError> {
        let span = self.span(list)?;
        let path = index_path(list, i);
        let item = self.span(&path)?;
        let len = match self.get(list) {
            Some(Value::Sequence(items)) => items.len(),
            _ => 0,
        };
        if self.is_flow(list) {
            let (start, end) = if i + 1 < len {
                let next = self.span(&index_path(list, i + 1))?;
                (item.start.offset, next.start.offset)
            } else if i > 0 {
                let prev = self.item_end(&index_path(list, i - 1));
                (prev, item.end.offset)
            } else {
                (item.start.offset, item.end.offset)
            };
            return Ok(self.change(start, end, String::new()));
        }
        let dash = self
            .dash_before(item.start.offset)
            .ok_or_else(|| EditError::Unsupported {
                path: path.clone(),
                why: "its `-` is not where a block list item's is".to_string(),
            })?;
        let start = line_start(&self.text, dash);
        if !self.text[start..dash].chars().all(|c| c == ' ') {
            return Err(EditError::Unsupported {
                path,
                why: "its `-` is not the first thing on its line".to_string(),
            });
        }
        let end = self.after_content(&path);
        match (len, span.key) {
            // The last item: the list becomes `[]` on its key's line.
            (1, Some(key)) => {
                let colon = self
                    .colon_after(key.offset)
                    .ok_or_else(|| EditError::Unsupported {
                        path: list.to_string(),
                        why: "no `:` after the key".to_string(),
                    })?;
                let kept = &self.text[colon + 1..start];
                Ok(self.change(colon + 1, end, format!(" []{kept}")))
            }
            _ => Ok(self.change(start, end, String::new())),
        }
    }
}

/// `keys[0]:` … nested, as block lines at `indent`, ending in the leaf.
pub(super) fn block_entry(keys: &[&str], leaf: &Leaf<'_>, indent: usize, step: usize) -> String {
    let mut out = String::new();
    let mut pad = indent;
    for (i, key) in keys.iter().enumerate() {
        let key = emit::string(key, false);
        let last = i + 1 == keys.len();
        match (last, leaf) {
            (true, Leaf::Scalar(value)) => out.push_str(&format!(
                "{}{key}: {}\n",
                " ".repeat(pad),
                emit::scalar(value, false).unwrap_or_default()
            )),
            (true, Leaf::Item(item, comments)) => {
                out.push_str(&format!("{}{key}:\n", " ".repeat(pad)));
                out.push_str(&emit::sequence_item(item, pad + step, 2, step, comments));
            }
            (false, _) => out.push_str(&format!("{}{key}:\n", " ".repeat(pad))),
        }
        pad += step;
    }
    out
}

/// `keys[0]: {keys[1]: … leaf}` on one line, for a flow mapping.
pub(super) fn flow_entry(keys: &[&str], leaf: &Leaf<'_>) -> String {
    let inner = match leaf {
        Leaf::Scalar(value) => emit::scalar(value, true).unwrap_or_default(),
        Leaf::Item(item, _) => format!("[{}]", emit::flow(item)),
    };
    keys.iter().rev().enumerate().fold(inner, |acc, (i, key)| {
        let key = emit::string(key, true);
        if i == 0 {
            format!("{key}: {acc}")
        } else {
            format!("{key}: {{{acc}}}")
        }
    })
}
