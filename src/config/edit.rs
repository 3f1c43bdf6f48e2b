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

use serde_yaml::Value;

use super::emit;
use super::spans::{child_path, index_path, NodeSpan, Spans};

/// Indentation added per level when the file gives no example of its own.
const DEFAULT_STEP: usize = 2;

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

/// One step of a path: `key` or `[index]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

/// `mcp.servers[2].name` → `mcp`, `servers`, `[2]`, `name`. Keys are taken verbatim.
fn segments(path: &str) -> Vec<Seg<'_>> {
    let mut out = Vec::new();
    if path.is_empty() {
        return out;
    }
    for part in path.split('.') {
        let (key, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !key.is_empty() {
            out.push(Seg::Key(key));
        }
        while let Some(inner) = rest.strip_prefix('[') {
            let Some(close) = inner.find(']') else { break };
            match inner[..close].parse() {
                Ok(i) => out.push(Seg::Index(i)),
                Err(_) => out.push(Seg::Key(&inner[..close])),
            }
            rest = &inner[close + 1..];
        }
    }
    out
}

fn join(segs: &[Seg<'_>]) -> String {
    segs.iter().fold(String::new(), |path, seg| match seg {
        Seg::Key(k) => child_path(&path, k),
        Seg::Index(i) => index_path(&path, *i),
    })
}

fn key_matches(key: &Value, name: &str) -> bool {
    match key {
        Value::String(s) => s == name,
        Value::Number(n) => n.to_string() == name,
        Value::Bool(b) => b.to_string() == name,
        Value::Null | Value::Sequence(_) | Value::Mapping(_) | Value::Tagged(_) => false,
    }
}

fn get<'v>(value: &'v Value, segs: &[Seg<'_>]) -> Option<&'v Value> {
    segs.iter().try_fold(value, |v, seg| match (seg, v) {
        (Seg::Key(k), Value::Mapping(map)) => map
            .iter()
            .find(|(key, _)| key_matches(key, k))
            .map(|(_, v)| v),
        (Seg::Index(i), Value::Sequence(items)) => items.get(*i),
        _ => None,
    })
}

fn get_mut<'v>(value: &'v mut Value, segs: &[Seg<'_>]) -> Option<&'v mut Value> {
    segs.iter().try_fold(value, |v, seg| match (seg, v) {
        (Seg::Key(k), Value::Mapping(map)) => map
            .iter_mut()
            .find(|(key, _)| key_matches(key, k))
            .map(|(_, v)| v),
        (Seg::Index(i), Value::Sequence(items)) => items.get_mut(*i),
        _ => None,
    })
}

/// What a value is, for messages.
pub fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "empty",
        Value::Bool(_) => "true/false",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a mapping",
        Value::Tagged(tagged) => kind(&tagged.value),
    }
}

fn is_scalar(value: &Value) -> bool {
    match value {
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => true,
        Value::Sequence(_) | Value::Mapping(_) => false,
        Value::Tagged(tagged) => is_scalar(&tagged.value),
    }
}

/// What goes at the end of a chain of new keys.
enum Leaf<'a> {
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

    // ---- the splices -------------------------------------------------------------------

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

    /// Replaces the scalar at `path` (a mapping entry) with `value`.
    fn replace_scalar(&self, path: &str, value: &Value) -> Result<Change, EditError> {
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

    /// Adds `keys[0]: …` to the mapping (or empty value) at `map`; the later keys nest. In a
    /// block mapping it goes after its last entry, or after the entry `after` if there is one.
    fn add_entry(
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
    fn lead(&self, at: usize) -> &'static str {
        if at == self.text.len() && !self.text.is_empty() && !self.text.ends_with('\n') {
            "\n"
        } else {
            ""
        }
    }

    /// For an empty value (`key:`, `key: ~`, `key: []`) under a key: the splice that removes
    /// the empty value (keeping the rest of the key's line) and ends where new lines go, with
    /// that rest, and the indentation of the lines to add.
    fn below_key(&self, path: &str) -> Result<(usize, usize, String, usize), EditError> {
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
    fn fill_empty(
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
    fn append_to_list(
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
        Ok(self.change(
            at,
            at,
            format!(
                "{}{}",
                self.lead(at),
                emit::sequence_item(item, dash_col, gap, self.step(), comments)
            ),
        ))
    }

    /// The splice removing item `i` of the list at `list`.
    fn remove_item(&self, list: &str, i: usize) -> Result<Change, EditError> {
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

    // ---- finding places ----------------------------------------------------------------

    /// The end of the last thing written for the node at `path` (its last scalar or flow
    /// collection, trailing blank lines not counted).
    fn item_end(&self, path: &str) -> usize {
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
    fn after_content(&self, path: &str) -> usize {
        line_end(&self.text, self.item_end(path))
    }

    /// The indentation (in characters) of the keys of the block mapping at `map`.
    fn child_key_indent(&self, map: &str) -> Option<usize> {
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
    fn step(&self) -> usize {
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
    fn column_of(&self, offset: usize) -> usize {
        self.text[line_start(&self.text, offset)..offset]
            .chars()
            .count()
    }

    /// The `-` of the block list item whose value starts at `offset`: right before it (spaces
    /// or line breaks between), or first on the line of a block scalar's `|`, a tag or an anchor
    /// that stands between.
    fn dash_before(&self, offset: usize) -> Option<usize> {
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
    fn colon_after(&self, offset: usize) -> Option<usize> {
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
fn is_below(p: &str, path: &str) -> bool {
    if path.is_empty() {
        return !p.is_empty();
    }
    p.strip_prefix(path)
        .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('['))
}

/// The keys of `missing` (path segments still to create under an existing mapping); an index
/// among them cannot be created.
fn keys_of<'s>(missing: &[Seg<'s>], path: &str) -> Result<Vec<&'s str>, EditError> {
    missing
        .iter()
        .map(|seg| match seg {
            Seg::Key(k) => Ok(*k),
            Seg::Index(_) => Err(EditError::Missing(path.to_string())),
        })
        .collect()
}

/// Byte offset where the line holding `offset` starts.
fn line_start(text: &str, offset: usize) -> usize {
    text[..offset].rfind('\n').map_or(0, |i| i + 1)
}

/// Byte offset just past the `\n` ending the line holding `offset` (the text's end if none).
fn line_end(text: &str, offset: usize) -> usize {
    text[offset..]
        .find('\n')
        .map_or(text.len(), |i| offset + i + 1)
}

/// `keys[0]:` … nested, as block lines at `indent`, ending in the leaf.
fn block_entry(keys: &[&str], leaf: &Leaf<'_>, indent: usize, step: usize) -> String {
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
fn flow_entry(keys: &[&str], leaf: &Leaf<'_>) -> String {
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

/// `value` with `key` of the mapping at `map` set (the mapping and parents created).
fn set_in(value: &mut Value, map: &[Seg<'_>], key: &str, new: Value) {
    let target = ensure_mapping(value, map);
    if let Value::Mapping(entries) = target {
        match entries.iter_mut().find(|(k, _)| key_matches(k, key)) {
            Some((_, v)) => *v = new,
            None => {
                entries.insert(Value::String(key.to_string()), new);
            }
        }
    }
}

/// `value` with `item` pushed onto the list at `list` (the list and parents created).
fn push_in(value: &mut Value, list: &[Seg<'_>], item: Value) {
    let Some((last, parents)) = list.split_last() else {
        if let Value::Sequence(items) = value {
            items.push(item);
        }
        return;
    };
    let parent = ensure_mapping(value, parents);
    match (last, parent) {
        (Seg::Key(k), Value::Mapping(entries)) => {
            match entries.iter_mut().find(|(key, _)| key_matches(key, k)) {
                Some((_, Value::Sequence(items))) => items.push(item),
                Some((_, v)) => *v = Value::Sequence(vec![item]),
                None => {
                    entries.insert(Value::String((*k).to_string()), Value::Sequence(vec![item]));
                }
            }
        }
        (Seg::Index(i), Value::Sequence(items)) => {
            if let Some(Value::Sequence(inner)) = items.get_mut(*i) {
                inner.push(item);
            }
        }
        _ => {}
    }
}

/// The mapping at `segs`, each missing or empty step made an empty mapping.
fn ensure_mapping<'v>(value: &'v mut Value, segs: &[Seg<'_>]) -> &'v mut Value {
    let mut current = value;
    for seg in segs {
        if matches!(current, Value::Null) {
            *current = Value::Mapping(serde_yaml::Mapping::new());
        }
        let fits = match (seg, &*current) {
            (Seg::Key(_), Value::Mapping(_)) => true,
            (Seg::Index(i), Value::Sequence(items)) => *i < items.len(),
            _ => false,
        };
        if !fits {
            return current;
        }
        current = match (seg, current) {
            (Seg::Key(k), Value::Mapping(entries)) => {
                let key = entries
                    .keys()
                    .find(|key| key_matches(key, k))
                    .cloned()
                    .unwrap_or_else(|| Value::String((*k).to_string()));
                entries.entry(key).or_insert(Value::Null)
            }
            (Seg::Index(i), Value::Sequence(items)) => &mut items[*i],
            (_, other) => other,
        };
    }
    if matches!(current, Value::Null) {
        *current = Value::Mapping(serde_yaml::Mapping::new());
    }
    current
}

#[cfg(test)]
#[path = "edit_tests.rs"]
mod tests;
