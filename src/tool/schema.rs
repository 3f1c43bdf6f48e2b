//! A lenient JSON-Schema checker for tool arguments, and a defaults skeleton for argument editors.
//!
//! Schemas belong to the server (docs/ARCHITECTURE.md §3): a keyword is enforced where present and
//! nothing is assumed where it is absent. Only the common keywords are understood (`type`,
//! `required`, `properties`, `additionalProperties`, `enum`, `const`, `items`, `prefixItems`,
//! `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `minLength`, `maxLength`);
//! everything else, `$ref` and the combinators included, is ignored. No schema, however odd, makes
//! it panic.

use serde_json::{Map, Value};

use super::json_kind;

/// Nesting deeper than this is not checked (lenient): arguments are never that deep in practice.
const MAX_DEPTH: usize = 64;

/// Checks `args` against `schema`. On failure, every problem found, each naming its JSON path
/// (`/body: expected a string, got a number`).
pub fn validate(schema: &Value, args: &Value) -> Result<(), Vec<String>> {
    let mut errors = Vec::new();
    check(schema, args, &Path::Root, 0, &mut errors);
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Where a value is in the arguments, as a JSON pointer; written out only for an error (a
/// call whose arguments pass allocates nothing for it).
enum Path<'a> {
    Root,
    Key(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl std::fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Path::Root => f.write_str("/"),
            Path::Key(parent, key) => {
                parent.fmt_parent(f)?;
                // One JSON-pointer segment, `~` and `/` escaped.
                write!(f, "/{}", key.replace('~', "~0").replace('/', "~1"))
            }
            Path::Index(parent, index) => {
                parent.fmt_parent(f)?;
                write!(f, "/{index}")
            }
        }
    }
}

impl Path<'_> {
    /// The path as a prefix: nothing for the root.
    fn fmt_parent(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Path::Root => Ok(()),
            _ => std::fmt::Display::fmt(self, f),
        }
    }
}

/// The keywords of one schema object this checker understands, read in one pass over its
/// entries (a schema object has a handful; one hash lookup per keyword cost more than the
/// whole pass).
#[derive(Default)]
struct Keywords<'a> {
    types: Option<&'a Value>,
    allowed: Option<&'a Vec<Value>>,
    constant: Option<&'a Value>,
    required: Option<&'a Vec<Value>>,
    properties: Option<&'a Map<String, Value>>,
    additional: Option<&'a Value>,
    pattern_properties: bool,
    prefix_items: Option<&'a Value>,
    items: Option<&'a Value>,
    /// `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, numeric only (draft-4
    /// boolean exclusives are ignored).
    bounds: [Option<&'a Value>; 4],
    min_length: Option<u64>,
    max_length: Option<u64>,
}

impl<'a> Keywords<'a> {
    fn of(schema: &'a Map<String, Value>) -> Keywords<'a> {
        let mut k = Keywords::default();
        for (key, value) in schema {
            match key.as_str() {
                "type" => k.types = Some(value),
                "enum" => k.allowed = value.as_array(),
                "const" => k.constant = Some(value),
                "required" => k.required = value.as_array(),
                "properties" => k.properties = value.as_object(),
                "additionalProperties" => k.additional = Some(value),
                "patternProperties" => k.pattern_properties = true,
                "prefixItems" => k.prefix_items = Some(value),
                "items" => k.items = Some(value),
                "minimum" => k.bounds[0] = Some(value).filter(|b| b.is_number()),
                "maximum" => k.bounds[1] = Some(value).filter(|b| b.is_number()),
                "exclusiveMinimum" => k.bounds[2] = Some(value).filter(|b| b.is_number()),
                "exclusiveMaximum" => k.bounds[3] = Some(value).filter(|b| b.is_number()),
                "minLength" => k.min_length = value.as_u64(),
                "maxLength" => k.max_length = value.as_u64(),
                _ => {}
            }
        }
        k
    }
}

fn check(schema: &Value, value: &Value, path: &Path, depth: usize, errors: &mut Vec<String>) {
    if depth > MAX_DEPTH {
        return;
    }
    let schema = match schema {
        Value::Bool(true) => return,
        Value::Bool(false) => {
            errors.push(format!("{}: no value is allowed here", path));
            return;
        }
        Value::Object(map) => Keywords::of(map),
        // Not a schema at all: nothing to enforce.
        Value::Null | Value::Number(_) | Value::String(_) | Value::Array(_) => return,
    };

    if let Some(types) = schema.types {
        if let Some(expected) = type_mismatch(types, value) {
            errors.push(format!(
                "{}: expected {expected}, got {}",
                path,
                json_kind(value)
            ));
            // The remaining keywords would only repeat the same complaint.
            return;
        }
    }

    if let Some(allowed) = schema.allowed {
        if !allowed.iter().any(|a| json_eq(a, value)) {
            let listed: Vec<String> = allowed.iter().map(Value::to_string).collect();
            errors.push(format!("{}: must be one of {}", path, listed.join(", ")));
        }
    }
    if let Some(expected) = schema.constant {
        if !json_eq(expected, value) {
            errors.push(format!("{}: must be {expected}", path));
        }
    }

    match value {
        Value::Object(object) => check_object(&schema, object, path, depth, errors),
        Value::Array(items) => check_array(&schema, items, path, depth, errors),
        Value::Number(_) => check_number(&schema, value, path, errors),
        Value::String(text) => check_string(&schema, text, path, errors),
        Value::Null | Value::Bool(_) => {}
    }
}

/// `Some(description of what was expected)` when `value` matches none of the listed types.
/// Unknown type names are treated as matching (lenient).
fn type_mismatch(types: &Value, value: &Value) -> Option<String> {
    let names: Vec<&str> = match types {
        // The common case, decided without collecting the names.
        Value::String(name) if type_matches(name, value) => return None,
        Value::String(name) => vec![name.as_str()],
        Value::Array(list) => list.iter().filter_map(Value::as_str).collect(),
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::Object(_) => return None,
    };
    if names.is_empty() || names.iter().any(|name| type_matches(name, value)) {
        return None;
    }
    let described: Vec<&str> = names.iter().map(|n| describe_type(n)).collect();
    Some(described.join(" or "))
}

fn type_matches(name: &str, value: &Value) -> bool {
    match name {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "number" => value.is_number(),
        "string" => value.is_string(),
        "integer" => is_integer(value),
        // A type we do not know cannot be enforced.
        _ => true,
    }
}

fn describe_type(name: &str) -> &str {
    match name {
        "null" => "null",
        "boolean" => "a boolean",
        "object" => "an object",
        "array" => "an array",
        "number" => "a number",
        "string" => "a string",
        "integer" => "an integer",
        other => other,
    }
}

fn is_integer(value: &Value) -> bool {
    match value {
        Value::Number(n) => {
            n.is_i64()
                || n.is_u64()
                || n.as_f64()
                    .is_some_and(|f| f.is_finite() && f.fract() == 0.0)
        }
        Value::Null | Value::Bool(_) | Value::String(_) | Value::Array(_) | Value::Object(_) => {
            false
        }
    }
}

/// JSON equality where `1` and `1.0` are the same number.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if x.is_f64() || y.is_f64() {
                x.as_f64() == y.as_f64()
            } else {
                x == y
            }
        }
        (Value::Array(xs), Value::Array(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| json_eq(x, y))
        }
        (Value::Object(xs), Value::Object(ys)) => {
            xs.len() == ys.len()
                && xs
                    .iter()
                    .all(|(k, x)| ys.get(k).is_some_and(|y| json_eq(x, y)))
        }
        _ => a == b,
    }
}

/// `map[key]`: a few entries are compared in place, more are looked up by hash.
fn entry<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    if map.len() <= 8 {
        map.iter().find(|(k, _)| k.as_str() == key).map(|(_, v)| v)
    } else {
        map.get(key)
    }
}

fn check_object(
    schema: &Keywords,
    object: &Map<String, Value>,
    path: &Path,
    depth: usize,
    errors: &mut Vec<String>,
) {
    if let Some(required) = schema.required {
        for name in required.iter().filter_map(Value::as_str) {
            if entry(object, name).is_none() {
                errors.push(format!("{}: missing required property {name:?}", path));
            }
        }
    }
    // Without a regex engine `patternProperties` cannot be checked, so extra keys stay allowed.
    let additional = if schema.pattern_properties {
        None
    } else {
        schema.additional
    };
    for (key, item) in object {
        let item_path = Path::Key(path, key);
        match schema.properties.and_then(|props| entry(props, key)) {
            Some(sub) => check(sub, item, &item_path, depth + 1, errors),
            None => match additional {
                Some(Value::Bool(false)) => {
                    errors.push(format!("{item_path}: unexpected property"));
                }
                Some(sub @ Value::Object(_)) => check(sub, item, &item_path, depth + 1, errors),
                Some(_) | None => {}
            },
        }
    }
}

fn check_array(
    schema: &Keywords,
    items: &[Value],
    path: &Path,
    depth: usize,
    errors: &mut Vec<String>,
) {
    // Positional schemas: `prefixItems` (2020-12) or an `items` array (older drafts).
    let positional = match (schema.prefix_items, schema.items) {
        (Some(Value::Array(list)), _) | (None, Some(Value::Array(list))) => Some(list),
        _ => None,
    };
    let rest = match schema.items {
        Some(sub @ (Value::Object(_) | Value::Bool(_))) => Some(sub),
        _ => None,
    };
    for (index, item) in items.iter().enumerate() {
        let item_path = Path::Index(path, index);
        match positional.and_then(|list| list.get(index)) {
            Some(sub) => check(sub, item, &item_path, depth + 1, errors),
            None => {
                if let Some(sub) = rest {
                    check(sub, item, &item_path, depth + 1, errors);
                }
            }
        }
    }
}

fn check_number(schema: &Keywords, value: &Value, path: &Path, errors: &mut Vec<String>) {
    let Some(n) = value.as_f64() else {
        return;
    };
    type Violated = fn(f64, f64) -> bool;
    let bounds: [(Violated, &str); 4] = [
        (|n, b| n < b, "at least"),
        (|n, b| n > b, "at most"),
        (|n, b| n <= b, "greater than"),
        (|n, b| n >= b, "less than"),
    ];
    for (bound, (violated, phrase)) in schema.bounds.iter().zip(bounds) {
        let Some(bound) = bound else {
            continue;
        };
        if bound.as_f64().is_some_and(|b| violated(n, b)) {
            errors.push(format!("{}: must be {phrase} {bound}", path));
        }
    }
}

fn check_string(schema: &Keywords, text: &str, path: &Path, errors: &mut Vec<String>) {
    if schema.min_length.is_none() && schema.max_length.is_none() {
        return;
    }
    let length = text.chars().count() as u64;
    let p = path;
    if let Some(min) = schema.min_length {
        if length < min {
            errors.push(format!("{p}: must be at least {min} characters long"));
        }
    }
    if let Some(max) = schema.max_length {
        if length > max {
            errors.push(format!("{p}: must be at most {max} characters long"));
        }
    }
}

/// An argument object to start editing from: each property's `default`, and for required
/// properties without one an empty value of their type (`""`, `0`, `false`, `[]`, a nested
/// skeleton for objects, `null` when the type is unknown). Optional properties without a default
/// are left out. Anything but an object schema gives `{}`.
pub fn defaults_skeleton(schema: &Value) -> Value {
    skeleton(schema, 0)
}

fn skeleton(schema: &Value, depth: usize) -> Value {
    let mut out = Map::new();
    let Some(schema) = schema.as_object() else {
        return Value::Object(out);
    };
    if depth > MAX_DEPTH {
        return Value::Object(out);
    }
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return Value::Object(out);
    };
    let required: Vec<&str> = match schema.get("required") {
        Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    for (name, sub) in properties {
        if let Some(default) = sub.get("default") {
            out.insert(name.clone(), default.clone());
        } else if required.contains(&name.as_str()) {
            out.insert(name.clone(), empty_value(sub, depth + 1));
        }
    }
    Value::Object(out)
}

fn empty_value(schema: &Value, depth: usize) -> Value {
    if let Some(value) = schema.get("const") {
        return value.clone();
    }
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|list| list.first())
    {
        return first.clone();
    }
    let type_name = match schema.get("type") {
        Some(Value::String(name)) => Some(name.as_str()),
        Some(Value::Array(list)) => list
            .iter()
            .filter_map(Value::as_str)
            .find(|name| *name != "null"),
        _ => None,
    };
    match type_name {
        Some("string") => Value::String(String::new()),
        Some("integer") | Some("number") => Value::from(0),
        Some("boolean") => Value::Bool(false),
        Some("array") => Value::Array(Vec::new()),
        Some("object") => skeleton(schema, depth),
        _ => Value::Null,
    }
}

#[cfg(test)]
#[path = "schema_tests.rs"]
mod tests;
