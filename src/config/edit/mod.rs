//! In-place edits of a YAML text that keep every byte outside the edit: set a scalar in a
//! mapping, append an item to a list (creating the list and its parents when missing), remove
//! the items of a list that match a predicate. Comments, order, quoting and layout of the rest of
//! the file are untouched, because the text is never re-serialized: each edit is one splice at
//! a place found through the [`Spans`] index.
//!
//! Every edit is checked before it is kept: the new text must parse, and must read back as the
//! old document with exactly that change made. An edit that would come out otherwise (an
//! anchor shared with another place, a layout this editor does not handle) is refused and the
//! text stays as it was. Reading and writing the file is `write.rs`'s job.
//!
//! Here: the public edits and the check every splice passes. `splice.rs` builds the splices,
//! `place.rs` finds places in the text, `value.rs` walks paths through the parsed value.

mod place;
mod splice;
mod value;

use serde_yaml::Value;

use super::spans::{child_path, NodeSpan, Spans};
use place::is_below;
use value::{get, get_mut, is_scalar, join, keys_of, push_in, segments, set_in, Seg};

pub use value::kind;

/// Why an edit was not made. The text is unchanged after any of these.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditError {
    #[error("the file is not valid YAML ({0})")]
    Syntax(String),
    #[error("{0} is not in the file")]
    Missing(String),
    #[error("{path} is {found}, not {expected}")]
    WrongKind {
        path: String,
        expected: &'static str,
        found: &'static str,
    },
    #[error("{path} is written in a way this editor does not change ({why}); edit it by hand")]
    Unsupported { path: String, why: String },
    #[error("the edit of {path} would not come out as meant ({why}); nothing was changed")]
    Failed { path: String, why: String },
}

/// One splice: `removed` (the bytes at `offset`) replaced by `inserted`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub offset: usize,
    pub removed: String,
    pub inserted: String,
}

/// A YAML text being edited, with its location index and its parsed value.
#[derive(Debug, Clone)]
pub struct YamlDoc {
    text: String,
    spans: Spans,
    value: Value,
}

/// What goes at the end of a chain of new keys.
pub(super) enum Leaf<'a> {
    Scalar(&'a Value),
    Item(&'a Value, &'a [String]),
}

impl YamlDoc {
    /// Parses `text` (only its first document is indexed; a text of several documents is
    /// refused by the value parser).
    pub fn parse(text: impl Into<String>) -> Result<YamlDoc, EditError> {
        let text = text.into();
        let spans = Spans::parse(&text).map_err(|e| {
            EditError::Syntax(format!(
                "line {}, column {}: {}",
                e.position.line, e.position.column, e.message
            ))
        })?;
        let value = if text.trim().is_empty() {
            Value::Null
        } else {
            serde_yaml::from_str::<Value>(&text).map_err(|e| EditError::Syntax(e.to_string()))?
        };
        Ok(YamlDoc { text, spans, value })
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    pub fn into_text(self) -> String {
        self.text
    }

    /// The whole document as parsed.
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// The value at `path` (`mcp.servers[0].name`), if there is one.
    pub fn get(&self, path: &str) -> Option<&Value> {
        get(&self.value, &segments(path))
    }

    /// The index of the first item of the list at `list` for which `pred` holds.
    pub fn find_item(&self, list: &str, pred: &dyn Fn(&Value) -> bool) -> Option<usize> {
        match self.get(list) {
            Some(Value::Sequence(items)) => items.iter().position(pred),
            _ => None,
        }
    }

    /// Sets `key` of the mapping at `map` to the scalar `value`: the old value is replaced in
    /// place, or the key is added after the mapping's last entry (the mapping and its parents
    /// are created when missing).
    pub fn set(&mut self, map: &str, key: &str, value: &Value) -> Result<Change, EditError> {
        self.set_after(map, key, value, None)
    }

    /// [`set`](Self::set), but a new key of a block mapping goes right after the entry `after`
    /// when the mapping has it (a server's `annotation_trust` under its `name`).
    pub fn set_after(
        &mut self,
        map: &str,
        key: &str,
        value: &Value,
        after: Option<&str>,
    ) -> Result<Change, EditError> {
        let target = child_path(map, key);
        if !is_scalar(value) {
            return Err(EditError::WrongKind {
                path: target,
                expected: "a scalar",
                found: kind(value),
            });
        }
        let mut expected = self.value.clone();
        let map_segs = segments(map);
        let change = match self.get(&target) {
            Some(existing) if !is_scalar(existing) => {
                return Err(EditError::WrongKind {
                    path: target,
                    expected: "a scalar",
                    found: kind(existing),
                })
            }
            Some(_) => self.replace_scalar(&target, value)?,
            None => {
                let (parent, missing) = self.existing_ancestor(&map_segs)?;
                let mut keys = keys_of(missing, map)?;
                keys.push(key);
                let after = after.filter(|_| keys.len() == 1);
                self.add_entry(&parent, &keys, Leaf::Scalar(value), after)?
            }
        };
        set_in(&mut expected, &map_segs, key, value.clone());
        self.apply(change, &expected, &target)
    }

    /// Appends `item` to the list at `list`, after its last item, with `comments` as comment
    /// lines above it. A missing list (and missing parents) is created; an empty `[]` or an
    /// empty value becomes a block list. In a non-empty flow list (`[a, b]`) the item is added
    /// in flow style and the comments are left out.
    pub fn append(
        &mut self,
        list: &str,
        item: &Value,
        comments: &[String],
    ) -> Result<Change, EditError> {
        let segs = segments(list);
        let mut expected = self.value.clone();
        let change = match self.get(list) {
            Some(Value::Sequence(items)) if !items.is_empty() => {
                self.append_to_list(list, items.len(), item, comments)?
            }
            Some(Value::Sequence(_)) | Some(Value::Null) => {
                self.fill_empty(list, item, comments)?
            }
            Some(other) => {
                return Err(EditError::WrongKind {
                    path: list.to_string(),
                    expected: "a list",
                    found: kind(other),
                })
            }
            None => {
                let (parent, missing) = self.existing_ancestor(&segs)?;
                let keys = keys_of(missing, list)?;
                self.add_entry(&parent, &keys, Leaf::Item(item, comments), None)?
            }
        };
        push_in(&mut expected, &segs, item.clone());
        self.apply(change, &expected, list)
    }

    /// Removes every item of the list at `list` for which `pred` holds and returns how many
    /// went. A list left empty is written `[]`. A missing list removes nothing.
    pub fn remove(
        &mut self,
        list: &str,
        pred: &dyn Fn(&Value) -> bool,
    ) -> Result<usize, EditError> {
        let items = match self.get(list) {
            None | Some(Value::Null) => return Ok(0),
            Some(Value::Sequence(items)) => items.clone(),
            Some(other) => {
                return Err(EditError::WrongKind {
                    path: list.to_string(),
                    expected: "a list",
                    found: kind(other),
                })
            }
        };
        let doomed: Vec<usize> = (0..items.len()).filter(|&i| pred(&items[i])).collect();
        // Last first: the places of the earlier items do not move.
        for &i in doomed.iter().rev() {
            let segs = segments(list);
            let mut expected = self.value.clone();
            if let Some(Value::Sequence(items)) = get_mut(&mut expected, &segs) {
                items.remove(i);
            }
            let change = self.remove_item(list, i)?;
            self.apply(change, &expected, list)?;
        }
        Ok(doomed.len())
    }
    // ---- checking and making one splice -----------------------------------------------

    /// Makes `change` if the result parses and reads back as `expected`.
    fn apply(&mut self, change: Change, expected: &Value, path: &str) -> Result<Change, EditError> {
        let end = change.offset + change.removed.len();
        let text = format!(
            "{}{}{}",
            &self.text[..change.offset],
            change.inserted,
            &self.text[end..]
        );
        let doc = YamlDoc::parse(text).map_err(|e| EditError::Failed {
            path: path.to_string(),
            why: e.to_string(),
        })?;
        if doc.value != *expected {
            return Err(EditError::Failed {
                path: path.to_string(),
                why: "the file would read back differently".to_string(),
            });
        }
        *self = doc;
        Ok(change)
    }

    fn change(&self, offset: usize, end: usize, mut inserted: String) -> Change {
        // A file whose last line has no line break keeps it that way.
        if offset == self.text.len() && !self.text.is_empty() && !self.text.ends_with('\n') {
            if let Some(trimmed) = inserted.strip_suffix('\n') {
                inserted = trimmed.to_string();
            }
        }
        let inserted = if self.text.contains("\r\n") {
            inserted.replace("\r\n", "\n").replace('\n', "\r\n")
        } else {
            inserted
        };
        Change {
            offset,
            removed: self.text[offset..end].to_string(),
            inserted,
        }
    }

    fn span(&self, path: &str) -> Result<NodeSpan, EditError> {
        self.spans
            .get(path)
            .copied()
            .ok_or_else(|| EditError::Missing(path.to_string()))
    }

    /// Whether the collection at `path` is written in flow style (`[…]`, `{…}`). A block
    /// collection starts where its first entry does (an indentless list whose first item is
    /// `{…}` starts with a brace too); a flow one starts at its bracket, before any entry.
    fn is_flow(&self, path: &str) -> bool {
        let Some(span) = self.spans.get(path) else {
            return false;
        };
        let at = span.start.offset;
        matches!(self.text.as_bytes().get(at), Some(b'[' | b'{'))
            && !self.spans.iter().any(|(q, node)| {
                is_below(q, path) && node.key.map_or(node.start.offset, |k| k.offset) == at
            })
    }

    /// The deepest mapping (or empty value) on `segs` that exists, and the segments below it.
    fn existing_ancestor<'s>(
        &self,
        segs: &'s [Seg<'s>],
    ) -> Result<(String, &'s [Seg<'s>]), EditError> {
        let mut depth = segs.len();
        loop {
            match get(&self.value, &segs[..depth]) {
                Some(Value::Mapping(_)) | Some(Value::Null) => {
                    return Ok((join(&segs[..depth]), &segs[depth..]))
                }
                Some(Value::Sequence(_)) if matches!(segs.get(depth), Some(Seg::Index(_))) => {
                    return Err(EditError::Missing(join(&segs[..=depth])))
                }
                Some(other) => {
                    return Err(EditError::WrongKind {
                        path: join(&segs[..depth]),
                        expected: "a mapping",
                        found: kind(other),
                    })
                }
                // The root always exists, so this stops.
                None => depth = depth.saturating_sub(1),
            }
        }
    }
}

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;
