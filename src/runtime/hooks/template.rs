//! Argument templates of `mcp_tool` hooks: `{{path}}` placeholders over the event's JSON
//! (`{{tool.name}}`, `{{arguments.title}}`, `{{result.text}}`, `{{prompt}}`…).
//!
//! JSON-safe by construction: the template is a JSON value and so is the result; text is never
//! pasted into JSON text. A string that is exactly one placeholder becomes the value at its
//! path, whatever its type (`"{{arguments}}"` is the arguments object); a placeholder inside a
//! longer string becomes that value's text (a string as is, anything else as compact JSON).
//! A path that leads nowhere is `null`, or nothing inside a longer string.

use serde_json::{Map, Value};

/// `template` with every placeholder filled in from `event`.
pub(super) fn render(template: &Map<String, Value>, event: &Value) -> Map<String, Value> {
    template
        .iter()
        .map(|(k, v)| (k.clone(), render_value(v, event)))
        .collect()
}

fn render_value(value: &Value, event: &Value) -> Value {
    match value {
        Value::String(s) => render_string(s, event),
        Value::Array(items) => Value::Array(items.iter().map(|v| render_value(v, event)).collect()),
        Value::Object(map) => Value::Object(render(map, event)),
        Value::Null | Value::Bool(_) | Value::Number(_) => value.clone(),
    }
}

fn render_string(s: &str, event: &Value) -> Value {
    if let Some(path) = whole_placeholder(s) {
        return lookup(event, path).cloned().unwrap_or(Value::Null);
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(open) = rest.find("{{") {
        let Some(close) = rest[open + 2..].find("}}") else {
            break;
        };
        out.push_str(&rest[..open]);
        let path = rest[open + 2..open + 2 + close].trim();
        match lookup(event, path) {
            None | Some(Value::Null) => {}
            Some(Value::String(text)) => out.push_str(text),
            Some(other) => out.push_str(&other.to_string()),
        }
        rest = &rest[open + 2 + close + 2..];
    }
    out.push_str(rest);
    Value::String(out)
}

/// The path of a string that is one placeholder and nothing else (`{{ arguments }}`).
fn whole_placeholder(s: &str) -> Option<&str> {
    let inner = s.trim().strip_prefix("{{")?.strip_suffix("}}")?;
    (!inner.contains("{{") && !inner.contains("}}")).then(|| inner.trim())
}

/// The value at a dotted path: object keys, and numbers as array indexes.
fn lookup<'a>(event: &'a Value, path: &str) -> Option<&'a Value> {
    if path.is_empty() {
        return None;
    }
    path.split('.').try_fold(event, |at, key| match at {
        Value::Object(map) => map.get(key),
        Value::Array(items) => key.parse::<usize>().ok().and_then(|i| items.get(i)),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event() -> Value {
        json!({
            "event": "pre_tool_use",
            "tool": {"name": "mcp__notes__write_note", "server": "notes", "side_effect": "mutating"},
            "arguments": {"title": "a \"quoted\" title", "n": 3, "tags": ["x", "y"]},
            "prompt": null,
        })
    }

    fn one(template: Value) -> Value {
        let map = json!({"v": template});
        render(map.as_object().unwrap_or(&Map::new()), &event())["v"].clone()
    }

    #[test]
    fn a_whole_placeholder_keeps_the_type() {
        assert_eq!(one(json!("{{arguments}}")), event()["arguments"]);
        assert_eq!(one(json!("{{ arguments.n }}")), json!(3));
        assert_eq!(one(json!("{{arguments.tags.1}}")), json!("y"));
        assert_eq!(one(json!("{{nowhere.at.all}}")), Value::Null);
        assert_eq!(one(json!("{{prompt}}")), Value::Null);
    }

    #[test]
    fn inside_text_a_placeholder_is_its_text_and_json_stays_json() {
        assert_eq!(
            one(json!("{{tool.name}} on {{tool.server}}")),
            json!("mcp__notes__write_note on notes")
        );
        // Quotes in a value cannot break out: the result is one JSON string.
        assert_eq!(
            one(json!("title: {{arguments.title}}")),
            json!("title: a \"quoted\" title")
        );
        assert_eq!(
            one(json!(
                "args={{arguments.tags}} n={{arguments.n}} p={{prompt}}"
            )),
            json!("args=[\"x\",\"y\"] n=3 p=")
        );
        assert_eq!(one(json!("{{unclosed")), json!("{{unclosed"));
        assert_eq!(one(json!("{{a}} and {{b")), json!(" and {{b"));
    }

    #[test]
    fn nested_values_and_other_types_are_rendered_or_kept() {
        assert_eq!(
            one(json!({"who": ["{{tool.side_effect}}", 1, true, null]})),
            json!({"who": ["mutating", 1, true, null]})
        );
    }
}
