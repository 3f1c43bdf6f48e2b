//! Paths through the parsed value (`mcp.servers[2].name`): reading what is there, and making
//! the value an edit is expected to read back as (set a key, push an item, create parents).

use serde_yaml::Value;

use super::EditError;
use crate::config::spans::{child_path, index_path};

/// One step of a path: `key` or `[index]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

/// `mcp.servers[2].name` → `mcp`, `servers`, `[2]`, `name`. Keys are taken verbatim.
pub(super) fn segments(path: &str) -> Vec<Seg<'_>> {
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

pub(super) fn join(segs: &[Seg<'_>]) -> String {
    segs.iter().fold(String::new(), |path, seg| match seg {
        Seg::Key(k) => child_path(&path, k),
        Seg::Index(i) => index_path(&path, *i),
    })
}

pub(super) fn key_matches(key: &Value, name: &str) -> bool {
    match key {
        Value::String(s) => s == name,
        Value::Number(n) => n.to_string() == name,
        Value::Bool(b) => b.to_string() == name,
        Value::Null | Value::Sequence(_) | Value::Mapping(_) | Value::Tagged(_) => false,
    }
}

pub(super) fn get<'v>(value: &'v Value, segs: &[Seg<'_>]) -> Option<&'v Value> {
    segs.iter().try_fold(value, |v, seg| match (seg, v) {
        (Seg::Key(k), Value::Mapping(map)) => map
            .iter()
            .find(|(key, _)| key_matches(key, k))
            .map(|(_, v)| v),
        (Seg::Index(i), Value::Sequence(items)) => items.get(*i),
        _ => None,
    })
}

pub(super) fn get_mut<'v>(value: &'v mut Value, segs: &[Seg<'_>]) -> Option<&'v mut Value> {
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

pub(super) fn is_scalar(value: &Value) -> bool {
    match value {
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => true,
        Value::Sequence(_) | Value::Mapping(_) => false,
        Value::Tagged(tagged) => is_scalar(&tagged.value),
    }
}

/// The keys of `missing` (path segments still to create under an existing mapping); an index
/// among them cannot be created.
pub(super) fn keys_of<'s>(missing: &[Seg<'s>], path: &str) -> Result<Vec<&'s str>, EditError> {
    missing
        .iter()
        .map(|seg| match seg {
            Seg::Key(k) => Ok(*k),
            Seg::Index(_) => Err(EditError::Missing(path.to_string())),
        })
        .collect()
}

/// `value` with `key` of the mapping at `map` set (the mapping and parents created).
pub(super) fn set_in(value: &mut Value, map: &[Seg<'_>], key: &str, new: Value) {
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
pub(super) fn push_in(value: &mut Value, list: &[Seg<'_>], item: Value) {
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
pub(super) fn ensure_mapping<'v>(value: &'v mut Value, segs: &[Seg<'_>]) -> &'v mut Value {
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
