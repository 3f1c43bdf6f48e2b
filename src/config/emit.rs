//! Rendering values as YAML text for the in-place editor (`edit/`): scalars plain where they
//! read back as the same value and double-quoted otherwise, mappings as indented blocks,
//! sequences of scalars in flow style (`[a, b]`, as the example config writes them).
//!
//! Separate from the editor because it knows nothing about the text being edited: it only turns
//! one value into lines, and every choice it makes is checked by reading the text back.

use serde_yaml::Value;

/// A scalar as YAML text. A string is written plain when that reads back as the same string in
/// that context (`flow`: inside `[…]`/`{…}`), else double-quoted. `None` for collections.
pub fn scalar(value: &Value, flow: bool) -> Option<String> {
    match value {
        Value::Null => Some("null".to_string()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) => Some(string(s, flow)),
        Value::Tagged(tagged) => scalar(&tagged.value, flow),
        Value::Sequence(_) | Value::Mapping(_) => None,
    }
}

/// A string as YAML text: plain if it reads back as itself, else a double-quoted string (JSON's
/// escapes are a subset of YAML's).
pub fn string(s: &str, flow: bool) -> String {
    if plain_reads_back(s, flow) {
        s.to_string()
    } else {
        serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
    }
}

fn plain_reads_back(s: &str, flow: bool) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    if s.trim() != s || s.chars().any(char::is_control) || s.contains(": ") || s.contains(" #") {
        return false;
    }
    if s.ends_with(':') || (flow && s.contains([',', '[', ']', '{', '}'])) {
        return false;
    }
    // Words that YAML 1.1 readers take for true/false: quoted, for every other reader's sake.
    let word = s.to_ascii_lowercase();
    if ["y", "n", "yes", "no", "on", "off"].contains(&word.as_str()) {
        return false;
    }
    // Indicators that start something else; `-x` and `--flag` are fine as plain scalars.
    let second = s.chars().nth(1);
    match first {
        '-' | '?' | ':' if second.is_some_and(|c| !c.is_whitespace()) => {}
        '-' | '?' | ':' | ',' | '[' | ']' | '{' | '}' | '#' | '&' | '*' | '!' | '|' | '>'
        | '\'' | '"' | '%' | '@' | '`' => return false,
        _ => {}
    }
    // Whatever rule was missed above, reading it back decides (`yes`, `1e3`, `~`, `null`…).
    let probe = if flow {
        format!("[{s}]")
    } else {
        format!("k: {s}")
    };
    match serde_yaml::from_str::<Value>(&probe) {
        Ok(Value::Sequence(items)) if flow => {
            items.len() == 1 && items[0] == Value::String(s.to_string())
        }
        Ok(Value::Mapping(map)) if !flow => {
            map.len() == 1 && map.get("k") == Some(&Value::String(s.to_string()))
        }
        Ok(_) | Err(_) => false,
    }
}

/// `value` in flow style on one line: `{a: 1, b: [x, y]}`.
pub fn flow(value: &Value) -> String {
    match value {
        Value::Sequence(items) => {
            let inner: Vec<String> = items.iter().map(flow).collect();
            format!("[{}]", inner.join(", "))
        }
        Value::Mapping(map) => {
            let inner: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", key(k, true), flow(v)))
                .collect();
            format!("{{{}}}", inner.join(", "))
        }
        Value::Tagged(tagged) => flow(&tagged.value),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {
            scalar(value, true).unwrap_or_default()
        }
    }
}

fn key(k: &Value, in_flow: bool) -> String {
    scalar(k, in_flow).unwrap_or_else(|| flow(k))
}

/// Whether a value goes on its key's line (scalars, empty collections, sequences of scalars).
fn inline(value: &Value) -> bool {
    match value {
        Value::Sequence(items) => items.iter().all(|v| scalar(v, true).is_some()),
        Value::Mapping(map) => map.is_empty(),
        Value::Tagged(tagged) => inline(&tagged.value),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => true,
    }
}

/// The lines of `value` as a block at `indent` spaces, `step` more for each level; each line
/// ends with `\n`. A scalar is one line holding just the scalar.
pub fn block(value: &Value, indent: usize, step: usize) -> String {
    let pad = " ".repeat(indent);
    match value {
        Value::Mapping(map) if !map.is_empty() => {
            let mut out = String::new();
            for (k, v) in map {
                if inline(v) {
                    out.push_str(&format!("{pad}{}: {}\n", key(k, false), inline_text(v)));
                } else {
                    out.push_str(&format!("{pad}{}:\n", key(k, false)));
                    out.push_str(&block(v, indent + step, step));
                }
            }
            out
        }
        Value::Sequence(items) if !items.is_empty() => {
            let mut out = String::new();
            for item in items {
                out.push_str(&sequence_item(item, indent, 2, step, &[]));
            }
            out
        }
        Value::Tagged(tagged) => block(&tagged.value, indent, step),
        Value::Mapping(_)
        | Value::Sequence(_)
        | Value::Null
        | Value::Bool(_)
        | Value::Number(_)
        | Value::String(_) => format!("{pad}{}\n", inline_text(value)),
    }
}

fn inline_text(value: &Value) -> String {
    scalar(value, false).unwrap_or_else(|| flow(value))
}

/// One block sequence item written on one line in flow style (`- {tool: x, decision: allow}`),
/// as the items before it are: its `comments`, then `-` at `dash` spaces and the item `gap`
/// columns after the dash.
pub fn flow_sequence_item(value: &Value, dash: usize, gap: usize, comments: &[String]) -> String {
    let dash_pad = " ".repeat(dash);
    let mut out = comment_lines(&dash_pad, comments);
    out.push_str(&format!(
        "{dash_pad}-{}{}\n",
        " ".repeat(gap.max(2) - 1),
        flow(value)
    ));
    out
}

/// `comments` as comment lines (`# …`) indented by `pad`.
fn comment_lines(pad: &str, comments: &[String]) -> String {
    let mut out = String::new();
    for comment in comments {
        for line in comment.lines() {
            let line = line.trim_end();
            if line.is_empty() {
                out.push_str(&format!("{pad}#\n"));
            } else {
                out.push_str(&format!("{pad}# {line}\n"));
            }
        }
    }
    out
}

/// One block sequence item: its `comments` (each a line `# …` at the dash's indentation), then
/// `-` at `dash` spaces with its content starting `gap` columns after the dash.
pub fn sequence_item(
    value: &Value,
    dash: usize,
    gap: usize,
    step: usize,
    comments: &[String],
) -> String {
    let dash_pad = " ".repeat(dash);
    let mut out = comment_lines(&dash_pad, comments);
    let gap = gap.max(2);
    if inline(value) {
        out.push_str(&format!(
            "{dash_pad}-{}{}\n",
            " ".repeat(gap - 1),
            inline_text(value)
        ));
        return out;
    }
    let content = dash + gap;
    let body = block(value, content, step);
    // The first line's indentation becomes the dash.
    let first = &body[content.min(body.len())..];
    out.push_str(&format!("{dash_pad}-{}{first}", " ".repeat(gap - 1)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(text: &str) -> Value {
        serde_yaml::from_str(text).unwrap()
    }

    #[test]
    fn strings_are_plain_only_when_they_read_back() {
        for (s, plain) in [
            ("npx", true),
            ("-y", true),
            ("--port", true),
            ("@scope/pkg", false),
            ("yes", false),
            ("true", false),
            ("3000", false),
            ("1e3", false),
            ("~", false),
            ("", false),
            ("a: b", false),
            ("a #b", false),
            (" lead", false),
            ("${HOME}/x", true),
            ("über", true),
            ("line\nbreak", false),
            ("- x", false),
        ] {
            let out = string(s, false);
            assert_eq!(out == s, plain, "{s:?} -> {out}");
            let back: Value = serde_yaml::from_str(&format!("k: {out}")).unwrap();
            assert_eq!(back["k"], Value::String(s.to_string()), "{s:?} -> {out}");
        }
        assert_eq!(string("a,b", true), "\"a,b\"");
        assert_eq!(string("a,b", false), "a,b");
    }

    #[test]
    fn blocks_and_items_read_back() {
        let value = yaml(
            "name: files\ncommand: npx\nargs: [-y, '@m/server', '3000']\nenv: {K: v, NUM: '1'}\n\
             headers: {}\nnested: {a: {b: [1]}}\n",
        );
        let item = sequence_item(&value, 4, 2, 2, &["imported from x".to_string()]);
        assert_eq!(
            item,
            "    # imported from x\n    - name: files\n      command: npx\n      args: [-y, \"@m/server\", \"3000\"]\n      env:\n        K: v\n        NUM: \"1\"\n      headers: {}\n      nested:\n        a:\n          b: [1]\n"
        );
        let back: Value = serde_yaml::from_str(&format!("l:\n{item}")).unwrap();
        assert_eq!(back["l"][0], value);
        assert_eq!(flow(&value), "{name: files, command: npx, args: [-y, \"@m/server\", \"3000\"], env: {K: v, NUM: \"1\"}, headers: {}, nested: {a: {b: [1]}}}");
        let back: Value = serde_yaml::from_str(&flow(&value)).unwrap();
        assert_eq!(back, value);
        assert_eq!(sequence_item(&yaml("x"), 0, 2, 2, &[]), "- x\n");
    }
}
