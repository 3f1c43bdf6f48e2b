//! Finding places in the text: where a node's content ends, the indentation of a mapping's
//! keys and of the file, a list item's dash, a key's colon, line starts and ends.

use serde_yaml::Value;

use super::YamlDoc;
use crate::config::spans::child_path;

/// Indentation added per level when the file gives no example of its own.
const DEFAULT_STEP: usize = 2;

impl YamlDoc {
    /// The end of the last thing written for the node at `path` (its last scalar or flow
    /// collection, trailing blank lines not counted).
    pub(super) fn item_end(&self, path: &str) -> usize {
        let mut end = 0;
        let mut start = usize::MAX;
        for (p, node) in self.spans.iter() {
            if p != path && !is_below(p, path) {
                continue;
            }
            start = start.min(node.start.offset);
            // A block collection's end is where the next node starts: only leaves and flow
            // collections end where their text does.
            if !self.is_flow(p) && self.spans.iter().any(|(q, _)| is_below(q, p)) {
                continue;
            }
            end = end.max(node.end.offset);
        }
        let start = start.min(end);
        start + self.text[start..end].trim_end().len()
    }

    /// Just past the line holding the end of `path`'s content: where the next line starts.
    pub(super) fn after_content(&self, path: &str) -> usize {
        line_end(&self.text, self.item_end(path))
    }

    /// The indentation (in characters) of the keys of the block mapping at `map`.
    pub(super) fn child_key_indent(&self, map: &str) -> Option<usize> {
        let Some(Value::Mapping(entries)) = self.get(map) else {
            return None;
        };
        entries.keys().find_map(|k| {
            let name = match k {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                Value::Null | Value::Sequence(_) | Value::Mapping(_) | Value::Tagged(_) => {
                    return None
                }
            };
            self.spans
                .get(&child_path(map, &name))
                .and_then(|n| n.key)
                .map(|key| self.column_of(key.offset))
        })
    }

    /// The file's own indentation step: how much deeper the keys of its first nested block
    /// mapping are than their parent's key; 2 when it has none.
    pub(super) fn step(&self) -> usize {
        for (path, node) in self.spans.iter() {
            let (Some(key), false) = (node.key, self.is_flow(path)) else {
                continue;
            };
            if let Some(child) = self.child_key_indent(path) {
                let parent = self.column_of(key.offset);
                if child > parent {
                    return child - parent;
                }
            }
        }
        DEFAULT_STEP
    }

    /// 0-based column (in characters) of a byte offset.
    pub(super) fn column_of(&self, offset: usize) -> usize {
        self.text[line_start(&self.text, offset)..offset]
            .chars()
            .count()
    }

    /// The `-` of the block list item whose value starts at `offset`: right before it (spaces
    /// or line breaks between), or first on the line of a block scalar's `|`, a tag or an anchor
    /// that stands between.
    pub(super) fn dash_before(&self, offset: usize) -> Option<usize> {
        let before = self.text[..offset].trim_end_matches([' ', '\n', '\r']);
        if before.ends_with('-') {
            return Some(before.len() - 1);
        }
        let start = line_start(&self.text, before.len());
        let line = &self.text[start..before.len()];
        let indent = line.len() - line.trim_start_matches(' ').len();
        line[indent..].starts_with("- ").then_some(start + indent)
    }

    /// The `:` that ends the key starting at `offset`.
    pub(super) fn colon_after(&self, offset: usize) -> Option<usize> {
        let rest = &self.text[offset..];
        let skip = match rest.as_bytes().first() {
            Some(q @ (b'"' | b'\'')) => {
                let close = rest[1..].find(char::from(*q))?;
                close + 2
            }
            _ => 0,
        };
        rest[skip..].find(':').map(|i| offset + skip + i)
    }
}

/// Whether path `p` is strictly below `path`.
pub(super) fn is_below(p: &str, path: &str) -> bool {
    if path.is_empty() {
        return !p.is_empty();
    }
    p.strip_prefix(path)
        .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
}

/// Byte offset where the line holding `offset` starts.
pub(super) fn line_start(text: &str, offset: usize) -> usize {
    text[..offset].rfind('\n').map_or(0, |i| i + 1)
}

/// Byte offset just past the `\n` ending the line holding `offset` (the text's end if none).
pub(super) fn line_end(text: &str, offset: usize) -> usize {
    text[offset..]
        .find('\n')
        .map_or(text.len(), |i| offset + i + 1)
}
