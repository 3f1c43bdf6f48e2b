//! A form built from a JSON schema of flat properties (what `elicitation/create` asks for, and
//! what resource templates and prompt arguments need): its fields (string with `format` and
//! lengths, number / integer with bounds, boolean, enum and titled `oneOf`, multi-select
//! arrays; required fields, defaults), turning typed-in text into values, and checking an
//! answer against the fields before it goes back.
//!
//! Separate from `elicitation.rs`, which is about the request and its reply; this is only
//! JSON, so the console's form modal and the headless `defaults` answer share it. The string
//! formats it checks are in `text_format.rs`.

use serde_json::{Map, Value};

pub use super::text_format::TextFormat;

/// One choice of an enum field: what is sent, and what is shown.
#[derive(Debug, Clone, PartialEq)]
pub struct Choice {
    pub value: String,
    pub label: String,
}

/// What a field holds.
#[derive(Debug, Clone, PartialEq)]
pub enum FieldKind {
    Text {
        format: Option<TextFormat>,
        min_length: Option<u64>,
        max_length: Option<u64>,
    },
    Number {
        integer: bool,
        minimum: Option<f64>,
        maximum: Option<f64>,
    },
    Boolean,
    /// One of the choices (`enum`, titled `oneOf`, `enum` + `enumNames`).
    Choice(Vec<Choice>),
    /// Several of the choices (an array of an enum).
    MultiChoice {
        choices: Vec<Choice>,
        min_items: Option<u64>,
        max_items: Option<u64>,
    },
    /// Any JSON value, typed as JSON (a tool argument no other kind fits: an object, a list of
    /// strings, a union); `what` names the schema's type for the form. Never in an elicitation.
    Json {
        what: String,
    },
}

/// One field of a form.
#[derive(Debug, Clone, PartialEq)]
pub struct FormField {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub required: bool,
    pub kind: FieldKind,
    pub default: Option<Value>,
}

impl FormField {
    /// A plain string field (a template variable, a prompt argument).
    pub fn text(name: &str, required: bool, description: Option<String>) -> FormField {
        FormField {
            name: name.to_string(),
            title: None,
            description,
            required,
            kind: FieldKind::Text {
                format: None,
                min_length: None,
                max_length: None,
            },
            default: None,
        }
    }

    /// What to show as the field's name.
    pub fn label(&self) -> &str {
        self.title.as_deref().unwrap_or(&self.name)
    }

    /// `value` as this field's typed text (JSON for a JSON field).
    pub fn text_of(&self, value: &Value) -> String {
        match self.kind {
            FieldKind::Json { .. } => value.to_string(),
            FieldKind::Text { .. }
            | FieldKind::Number { .. }
            | FieldKind::Boolean
            | FieldKind::Choice(_)
            | FieldKind::MultiChoice { .. } => value_text(value),
        }
    }

    /// The text a field starts with: its default as typed text (empty when none).
    pub fn initial_text(&self) -> String {
        match &self.default {
            Some(value) => self.text_of(value),
            None => match self.kind {
                FieldKind::Boolean => "false".into(),
                _ => String::new(),
            },
        }
    }

    /// The value typed-in `text` stands for: `None` for an empty optional field.
    pub fn value_of(&self, text: &str) -> Result<Option<Value>, String> {
        let label = self.label();
        let trimmed = text.trim();
        if trimmed.is_empty() && !matches!(self.kind, FieldKind::Boolean) {
            return if self.required {
                Err(format!("{label} is required"))
            } else {
                Ok(None)
            };
        }
        let value = match &self.kind {
            FieldKind::Text { .. } => Value::String(text.to_string()),
            FieldKind::Number { integer: true, .. } => trimmed
                .parse::<i64>()
                .map(Value::from)
                .map_err(|_| format!("{label} must be a whole number"))?,
            FieldKind::Number { .. } => trimmed
                .parse::<f64>()
                .ok()
                .filter(|n| n.is_finite())
                .and_then(serde_json::Number::from_f64)
                .map(Value::Number)
                .ok_or_else(|| format!("{label} must be a number"))?,
            FieldKind::Boolean => match trimmed {
                "true" | "yes" | "y" | "1" => Value::Bool(true),
                "false" | "no" | "n" | "0" | "" => Value::Bool(false),
                _ => return Err(format!("{label} must be true or false")),
            },
            FieldKind::Choice(_) => Value::String(trimmed.to_string()),
            FieldKind::MultiChoice { .. } => Value::Array(
                trimmed
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(|s| Value::String(s.to_string()))
                    .collect(),
            ),
            FieldKind::Json { .. } => serde_json::from_str(trimmed)
                .map_err(|e| format!("{label} is not valid JSON: {e}"))?,
        };
        self.check(&value)?;
        Ok(Some(value))
    }

    /// Whether `value` is what this field accepts.
    pub fn check(&self, value: &Value) -> Result<(), String> {
        let label = self.label();
        let names = |choices: &[Choice]| {
            choices
                .iter()
                .map(|c| c.value.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match (&self.kind, value) {
            (
                FieldKind::Text {
                    format,
                    min_length,
                    max_length,
                },
                Value::String(s),
            ) => {
                let len = s.chars().count() as u64;
                if let Some(min) = min_length.filter(|m| len < *m) {
                    return Err(format!("{label} needs at least {min} characters"));
                }
                if let Some(max) = max_length.filter(|m| len > *m) {
                    return Err(format!("{label} takes at most {max} characters"));
                }
                match format {
                    Some(f) if !f.holds(s) => Err(format!("{label} is not a valid {}", f.as_str())),
                    _ => Ok(()),
                }
            }
            (
                FieldKind::Number {
                    integer,
                    minimum,
                    maximum,
                },
                Value::Number(n),
            ) => {
                let Some(v) = n.as_f64() else {
                    return Err(format!("{label} must be a number"));
                };
                if *integer && v.fract() != 0.0 {
                    return Err(format!("{label} must be a whole number"));
                }
                if let Some(min) = minimum.filter(|m| v < *m) {
                    return Err(format!("{label} must be at least {min}"));
                }
                if let Some(max) = maximum.filter(|m| v > *m) {
                    return Err(format!("{label} must be at most {max}"));
                }
                Ok(())
            }
            (FieldKind::Boolean, Value::Bool(_)) => Ok(()),
            (FieldKind::Choice(choices), Value::String(s)) => {
                if choices.iter().any(|c| &c.value == s) {
                    Ok(())
                } else {
                    Err(format!("{label} must be one of {}", names(choices)))
                }
            }
            (
                FieldKind::MultiChoice {
                    choices,
                    min_items,
                    max_items,
                },
                Value::Array(items),
            ) => {
                for item in items {
                    let known = item
                        .as_str()
                        .is_some_and(|s| choices.iter().any(|c| c.value == s));
                    if !known {
                        return Err(format!("{label} takes only {}", names(choices)));
                    }
                }
                let n = items.len() as u64;
                if let Some(min) = min_items.filter(|m| n < *m) {
                    return Err(format!("{label} needs at least {min} choices"));
                }
                if let Some(max) = max_items.filter(|m| n > *m) {
                    return Err(format!("{label} takes at most {max} choices"));
                }
                Ok(())
            }
            // Whatever the tool's schema says of it is checked with the whole arguments.
            (FieldKind::Json { .. }, _) => Ok(()),
            (kind, _) => Err(format!(
                "{label} must be {}",
                match kind {
                    FieldKind::Text { .. } | FieldKind::Choice(_) => "a string",
                    FieldKind::Number { .. } => "a number",
                    FieldKind::Boolean => "true or false",
                    FieldKind::MultiChoice { .. } => "a list",
                    FieldKind::Json { .. } => "JSON",
                }
            )),
        }
    }
}

/// A value as the text a field would hold for it.
pub fn value_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(value_text).collect::<Vec<_>>().join(", "),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn choices_of(property: &Value) -> Option<Vec<Choice>> {
    let text = |v: &Value| v.as_str().map(str::to_string);
    if let Some(one_of) = property
        .get("oneOf")
        .or_else(|| property.get("anyOf"))
        .and_then(Value::as_array)
    {
        return one_of
            .iter()
            .map(|c| {
                let value = c.get("const").and_then(text)?;
                let label = c
                    .get("title")
                    .and_then(text)
                    .unwrap_or_else(|| value.clone());
                Some(Choice { value, label })
            })
            .collect();
    }
    let values: Vec<String> = property
        .get("enum")?
        .as_array()?
        .iter()
        .map(text)
        .collect::<Option<_>>()?;
    let labels: Option<Vec<String>> = property
        .get("enumNames")
        .and_then(Value::as_array)
        .and_then(|names| names.iter().map(text).collect());
    Some(
        values
            .iter()
            .enumerate()
            .map(|(i, value)| Choice {
                value: value.clone(),
                label: labels
                    .as_ref()
                    .and_then(|l| l.get(i).cloned())
                    .unwrap_or_else(|| value.clone()),
            })
            .collect(),
    )
}

/// One field from one schema property; `Err` names what cannot be asked in a form, unless
/// `json` lets such a property be typed as JSON.
fn field(name: &str, property: &Value, required: bool, json: bool) -> Result<FormField, String> {
    let text = |key: &str| {
        property
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let number = |key: &str| property.get(key).and_then(Value::as_f64);
    let count = |key: &str| property.get(key).and_then(Value::as_u64);
    let kind = match property.get("type").and_then(Value::as_str) {
        Some("string") => match choices_of(property) {
            Some(choices) => FieldKind::Choice(choices),
            None => FieldKind::Text {
                format: text("format").as_deref().and_then(TextFormat::parse),
                min_length: count("minLength"),
                max_length: count("maxLength"),
            },
        },
        Some(kind @ ("number" | "integer")) => FieldKind::Number {
            integer: kind == "integer",
            minimum: number("minimum"),
            maximum: number("maximum"),
        },
        Some("boolean") => FieldKind::Boolean,
        Some("array") => match property.get("items").and_then(choices_of) {
            Some(choices) => FieldKind::MultiChoice {
                choices,
                min_items: count("minItems"),
                max_items: count("maxItems"),
            },
            None if json => FieldKind::Json {
                what: match property
                    .get("items")
                    .and_then(|i| i.get("type"))
                    .and_then(Value::as_str)
                {
                    Some(item) => format!("list of {item}"),
                    None => "list".to_string(),
                },
            },
            None => return Err(format!("{name}: a list of something other than choices")),
        },
        // An untyped enum is a choice too.
        None if choices_of(property).is_some() => {
            FieldKind::Choice(choices_of(property).unwrap_or_default())
        }
        other if json => FieldKind::Json {
            what: match (other, property.get("type")) {
                (Some(t), _) => t.to_string(),
                (None, Some(Value::Array(types))) => types
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(" or "),
                (None, _) => "any".to_string(),
            },
        },
        other => {
            return Err(format!(
                "{name}: a field of type {}",
                other.unwrap_or("(none)")
            ))
        }
    };
    Ok(FormField {
        name: name.to_string(),
        title: text("title"),
        description: text("description"),
        required,
        kind,
        default: property.get("default").cloned(),
    })
}

/// The fields of an object schema, in the order the server wrote its properties (JSON objects
/// keep their order here: serde_json's `preserve_order`); `Err` names a property that cannot
/// be asked in a form.
pub fn fields_of(schema: &Value) -> Result<Vec<FormField>, String> {
    fields(schema, false)
}

/// The fields of a tool's input schema, in the order of [`fields_of`]: a property no other
/// kind fits is a [`FieldKind::Json`] field.
pub fn tool_fields_of(schema: &Value) -> Vec<FormField> {
    fields(schema, true).unwrap_or_default()
}

fn fields(schema: &Value, json: bool) -> Result<Vec<FormField>, String> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(Vec::new());
    };
    properties
        .iter()
        .map(|(name, property)| {
            let required = required.contains(&name.as_str());
            if json {
                field(name, &plain_property(property, schema), required, json)
            } else {
                field(name, property, required, json)
            }
        })
        .collect()
}

/// A tool argument's schema as a form field sees it: a `$ref` into the schema itself
/// (`#/$defs/…`) followed, and a type that may also be null (`["string", "null"]`, or an
/// `anyOf`/`oneOf` of one schema and null: how an optional argument is often written) taken
/// as that type; the property's own title, description and default kept.
fn plain_property(property: &Value, root: &Value) -> Value {
    let mut current = property.clone();
    // Bounded: a `$ref` cycle ends here.
    for _ in 0..8 {
        let not_null = |v: &&Value| v.get("type").and_then(Value::as_str) != Some("null");
        let next = if let Some(reference) = current.get("$ref").and_then(Value::as_str) {
            reference
                .strip_prefix('#')
                .and_then(|pointer| root.pointer(pointer))
                .cloned()
        } else if let Some(branches) = current
            .get("anyOf")
            .or_else(|| current.get("oneOf"))
            .and_then(Value::as_array)
        {
            let kept: Vec<&Value> = branches.iter().filter(not_null).collect();
            match kept.as_slice() {
                [one] if branches.len() == 2 => Some((*one).clone()),
                _ => None,
            }
        } else if let Some(Value::Array(types)) = current.get("type") {
            let kept: Vec<&Value> = types
                .iter()
                .filter(|t| t.as_str() != Some("null"))
                .collect();
            match kept.as_slice() {
                [one] if types.len() == 2 => {
                    let mut plain = current.clone();
                    plain["type"] = (*one).clone();
                    Some(plain)
                }
                _ => None,
            }
        } else {
            None
        };
        let Some(mut next) = next else {
            break;
        };
        if let (Some(next), Some(outer)) = (next.as_object_mut(), current.as_object()) {
            for key in ["title", "description", "default"] {
                if let Some(value) = outer.get(key) {
                    next.insert(key.to_string(), value.clone());
                }
            }
        }
        current = next;
    }
    current
}

/// The content typed-in `texts` (one per field, in order) stand for, or every problem.
pub fn content_of(
    fields: &[FormField],
    texts: &[String],
) -> Result<Map<String, Value>, Vec<String>> {
    let mut content = Map::new();
    let mut problems = Vec::new();
    for (field, text) in fields.iter().zip(texts) {
        match field.value_of(text) {
            Ok(Some(value)) => {
                content.insert(field.name.clone(), value);
            }
            Ok(None) => {}
            Err(problem) => problems.push(problem),
        }
    }
    if problems.is_empty() {
        Ok(content)
    } else {
        Err(problems)
    }
}

/// Checks an answer against the fields: required ones present, every value of its field's kind,
/// nothing the form does not have.
pub fn check_content(
    fields: &[FormField],
    content: &Map<String, Value>,
) -> Result<(), Vec<String>> {
    let mut problems = Vec::new();
    for field in fields {
        match content.get(&field.name) {
            Some(value) => {
                if let Err(p) = field.check(value) {
                    problems.push(p);
                }
            }
            None if field.required => problems.push(format!("{} is required", field.label())),
            None => {}
        }
    }
    for name in content.keys() {
        if !fields.iter().any(|f| &f.name == name) {
            problems.push(format!("{name} is not a field of this form"));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// Every field that declares a default, set to it.
pub fn defaults_of(fields: &[FormField]) -> Map<String, Value> {
    fields
        .iter()
        .filter_map(|f| f.default.clone().map(|d| (f.name.clone(), d)))
        .collect()
}

#[cfg(test)]
#[path = "form_tests.rs"]
mod tests;
