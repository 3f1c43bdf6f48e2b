//! The JSON formats: Claude Desktop's and Claude Code's `mcpServers`, VS Code's `servers` (and
//! its `inputs`; also under `mcp` in a VS Code `settings.json`). VS Code writes JSON with
//! comments and trailing commas, so both are blanked out before parsing (places unchanged, so a
//! parse error still points at the right line).

use std::collections::BTreeMap;
use std::path::Path;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::vars::{workspace_folders, Vars};
use super::{Format, ImportError, Source};

/// `text` with `//` and `/* */` comments and trailing commas replaced by spaces.
pub(super) fn strip_jsonc(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for b in &mut out[from..to] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    };
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                let end = text[i..].find('\n').map_or(bytes.len(), |n| i + n);
                blank(&mut out, i, end);
                i = end;
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..]
                    .find("*/")
                    .map_or(bytes.len(), |n| i + 2 + n + 2);
                blank(&mut out, i, end);
                i = end;
                continue;
            }
            b',' => {
                // A comma followed (past blanks and comments) by `}` or `]` is trailing.
                let mut j = i + 1;
                loop {
                    match bytes.get(j) {
                        Some(b' ' | b'\t' | b'\r' | b'\n') => j += 1,
                        Some(b'/') if bytes.get(j + 1) == Some(&b'/') => {
                            j = text[j..].find('\n').map_or(bytes.len(), |n| j + n);
                        }
                        Some(b'/') if bytes.get(j + 1) == Some(&b'*') => {
                            j = text[j + 2..]
                                .find("*/")
                                .map_or(bytes.len(), |n| j + 2 + n + 2);
                        }
                        _ => break,
                    }
                }
                if matches!(bytes.get(j), Some(b'}' | b']')) {
                    out[i] = b' ';
                }
            }
            _ => {}
        }
        i += 1;
    }
    // Only ASCII bytes outside strings were replaced by spaces: still UTF-8.
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}

/// Whether the top-level object of `text` has `key`.
pub(super) fn has_key(text: &str, key: &str) -> bool {
    serde_json::from_str::<Value>(&strip_jsonc(text))
        .ok()
        .and_then(|v| v.get(key).map(|_| ()))
        .is_some()
}

/// A JSON object with its entries in the file's order (serde_json's own map sorts them, and
/// servers are imported in the order they are written).
struct Ordered(Vec<(String, Value)>);

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries;
        impl<'de> Visitor<'de> for Entries {
            type Value = Ordered;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object of name → server")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry::<String, Value>()? {
                    entries.push(entry);
                }
                Ok(Ordered(entries))
            }
        }
        deserializer.deserialize_map(Entries)
    }
}

/// The parts of the file this reads; everything else in it is ignored.
#[derive(Deserialize)]
struct Root {
    #[serde(rename = "mcpServers")]
    mcp_servers: Option<Ordered>,
    servers: Option<Ordered>,
    inputs: Option<Value>,
    /// VS Code's settings.json holds the same under `mcp`.
    mcp: Option<Box<Root>>,
}

/// The servers of a JSON file in `format`, and how its values treat `${…}`.
pub(super) fn read(
    path: &Path,
    text: &str,
    format: Format,
) -> Result<(Vec<Source>, Vars), ImportError> {
    let root: Root = serde_json::from_str(&strip_jsonc(text)).map_err(|e| ImportError::Parse {
        path: path.to_path_buf(),
        what: "JSON",
        message: e.to_string(),
    })?;
    let no_servers = |why: &str| ImportError::NoServers {
        path: path.to_path_buf(),
        why: why.to_string(),
    };
    let (servers, vars) = match format {
        Format::ClaudeDesktop | Format::ClaudeCode => {
            let servers = root
                .mcp_servers
                .ok_or_else(|| no_servers("no `mcpServers` object (Claude's format)"))?;
            let vars = if format == Format::ClaudeDesktop {
                Vars::Literal
            } else {
                Vars::ClaudeCode
            };
            (servers, vars)
        }
        Format::VsCode => {
            // `.vscode/mcp.json`, or `mcp` in a VS Code settings.json.
            let root = match (root.servers.is_some(), root.mcp) {
                (false, Some(inner)) => *inner,
                (_, _) => Root {
                    mcp_servers: None,
                    servers: root.servers,
                    inputs: root.inputs,
                    mcp: None,
                },
            };
            let servers = root
                .servers
                .ok_or_else(|| no_servers("no `servers` object (VS Code's format)"))?;
            let inputs = root
                .inputs
                .as_ref()
                .and_then(Value::as_array)
                .map(|list| {
                    list.iter()
                        .filter_map(|input| {
                            let id = input.get("id")?.as_str()?.to_string();
                            let description = input
                                .get("description")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_string();
                            Some((id, description))
                        })
                        .collect::<BTreeMap<_, _>>()
                })
                .unwrap_or_default();
            (servers, Vars::VsCode { inputs })
        }
        Format::Codex => return Err(no_servers("not a JSON format")),
    };
    let workspace = vars.base(path);
    let sources = servers
        .0
        .into_iter()
        .map(|(name, server)| {
            let mut source = match server.as_object() {
                Some(fields) => source(fields, format),
                None => Source {
                    kind: Some("(not an object)".to_string()),
                    ..Source::default()
                },
            };
            source.original = name;
            if format == Format::VsCode {
                let folders = |s: &mut String| *s = workspace_folders(s, workspace.as_deref());
                source.command.iter_mut().for_each(folders);
                source.args.iter_mut().for_each(folders);
                source.cwd.iter_mut().for_each(folders);
                source.url.iter_mut().for_each(folders);
                source.env.iter_mut().for_each(|(_, v)| folders(v));
                source.headers.iter_mut().for_each(|(_, v)| folders(v));
                source.notes.iter_mut().for_each(folders);
            }
            source
        })
        .collect();
    Ok((sources, vars))
}

/// A scalar as text (numbers and true/false as written); `None` for anything else.
fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

fn pairs(value: &Value, field: &str, notes: &mut Vec<String>) -> Vec<(String, String)> {
    let Some(map) = value.as_object() else {
        notes.push(format!("{field} is not an object: not carried"));
        return Vec::new();
    };
    map.iter()
        .filter_map(|(k, v)| match scalar(v) {
            Some(s) => Some((k.clone(), s)),
            None => {
                notes.push(format!("{field}.{k} is not a string: not carried"));
                None
            }
        })
        .collect()
}

fn source(fields: &Map<String, Value>, format: Format) -> Source {
    let mut s = Source::default();
    for (key, value) in fields {
        match key.as_str() {
            "type" | "transport" => s.kind = scalar(value),
            "command" => s.command = scalar(value),
            "args" => match value.as_array() {
                Some(args) => {
                    for (i, arg) in args.iter().enumerate() {
                        match scalar(arg) {
                            Some(a) => s.args.push(a),
                            None => s.notes.push(format!("args[{i}] is not a string: left out")),
                        }
                    }
                }
                None => s.notes.push("args is not a list: not carried".to_string()),
            },
            "env" => s.env = pairs(value, "env", &mut s.notes),
            "cwd" => s.cwd = scalar(value),
            "url" | "serverUrl" => s.url = scalar(value),
            "headers" => s.headers = pairs(value, "headers", &mut s.notes),
            "disabled" if value.as_bool() == Some(true) => s.enabled = Some(false),
            "disabled" => {}
            "envFile" if format == Format::VsCode => s.notes.push(format!(
                "envFile {} not carried: put those variables in env, or in the environment",
                value
            )),
            other => s.dropped.push(other.to_string()),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_trailing_commas_are_blanked_in_place() {
        let text = "{\n  // a comment, with \"quotes\"\n  \"a\": \"x // not a comment\", /* b */\n  \"l\": [1, 2,],\n}\n";
        let clean = strip_jsonc(text);
        assert_eq!(clean.len(), text.len());
        assert_eq!(clean.lines().count(), text.lines().count());
        let v: Value = serde_json::from_str(&clean).unwrap();
        assert_eq!(v["a"], "x // not a comment");
        assert_eq!(v["l"], serde_json::json!([1, 2]));
    }
}
