//! A form built from a JSON schema of flat properties (what `elicitation/create` asks for, and
//! what resource templates and prompt arguments need): its fields (string with `format` and
//! lengths, number / integer with bounds, boolean, enum and titled `oneOf`, multi-select
//! arrays; required fields, defaults), turning typed-in text into values, and checking an
//! answer against the fields before it goes back.
//!
//! Separate from `elicitation.rs`, which is about the request and its reply; this is only
//! JSON, so the console's form modal and the headless `defaults` answer share it.

use serde_json::{Map, Value};

/// The `format` of a string field that is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextFormat {
    Email,
    Uri,
    Date,
    DateTime,
}

impl TextFormat {
    fn parse(format: &str) -> Option<TextFormat> {
        match format {
            "email" => Some(TextFormat::Email),
            "uri" => Some(TextFormat::Uri),
            "date" => Some(TextFormat::Date),
            "date-time" => Some(TextFormat::DateTime),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            TextFormat::Email => "email",
            TextFormat::Uri => "uri",
            TextFormat::Date => "date",
            TextFormat::DateTime => "date-time",
        }
    }

    /// Whether `text` is in this format.
    fn holds(self, text: &str) -> bool {
        match self {
            TextFormat::Email => match text.split_once('@') {
                Some((local, domain)) => {
                    !local.is_empty()
                        && !domain.contains('@')
                        && domain.contains('.')
                        && !domain.starts_with('.')
                        && !domain.ends_with('.')
                        && !text.contains(char::is_whitespace)
                }
                None => false,
            },
            TextFormat::Uri => match text.split_once(':') {
                Some((scheme, rest)) => {
                    scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                        && scheme
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
                        && !rest.is_empty()
                        && !text.contains(char::is_whitespace)
                }
                None => false,
            },
            TextFormat::Date => is_date(text),
            TextFormat::DateTime => match text.split_once(['T', 't']) {
                Some((date, time)) => is_date(date) && is_time(time),
                None => false,
            },
        }
    }
}

/// `YYYY-MM-DD`, a real day.
fn is_date(text: &str) -> bool {
    let parts: Vec<&str> = text.split('-').collect();
    let [y, m, d] = parts.as_slice() else {
        return false;
    };
    if y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return false;
    }
    let (Ok(y), Ok(m), Ok(d)) = (y.parse::<u32>(), m.parse::<u32>(), d.parse::<u32>()) else {
        return false;
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

/// `HH:MM:SS[.frac](Z|±HH:MM)` (RFC 3339).
fn is_time(text: &str) -> bool {
    let (clock, zone) = if let Some(clock) = text.strip_suffix(['Z', 'z']) {
        (clock, None)
    } else {
        match text.rfind(['+', '-']) {
            Some(at) => (&text[..at], Some(&text[at + 1..])),
            None => return false,
        }
    };
    let hms = |s: &str, seconds: bool| -> bool {
        let parts: Vec<&str> = s.split(':').collect();
        let want = if seconds { 3 } else { 2 };
        parts.len() == want
            && parts.iter().enumerate().all(|(i, p)| {
                let p = if i == 2 {
                    p.split('.').next().unwrap_or(p)
                } else {
                    p
                };
                let max = match i {
                    0 => 23,
                    1 => 59,
                    _ => 60,
                };
                p.len() == 2 && p.parse::<u32>().is_ok_and(|v| v <= max)
            })
    };
    hms(clock, true) && zone.is_none_or(|z| hms(z, false))
}

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

/// The fields of an object schema, the required ones first, each group by name (the order a
/// server wrote them in does not survive rmcp's schema type); `Err` names a property that
/// cannot be asked in a form.
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
    let mut fields = properties
        .iter()
        .map(|(name, property)| field(name, property, required.contains(&name.as_str()), json))
        .collect::<Result<Vec<_>, _>>()?;
    fields.sort_by(|a, b| {
        b.required
            .cmp(&a.required)
            .then_with(|| a.name.cmp(&b.name))
    });
    Ok(fields)
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
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_tool_schema_becomes_fields_with_json_for_the_rest() {
        let schema = json!({"type": "object", "properties": {
            "url": {"type": "string", "format": "uri", "description": "What to fetch"},
            "max_length": {"type": "integer", "default": 5000},
            "headers": {"type": "object"},
            "paths": {"type": "array", "items": {"type": "string"}},
            "either": {"type": ["string", "null"]}
        }, "required": ["url"]});
        assert!(
            fields_of(&schema).is_err(),
            "an elicitation never gets a JSON field"
        );
        let fields = tool_fields_of(&schema);
        let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["url", "either", "headers", "max_length", "paths"]);
        assert_eq!(fields[0].description.as_deref(), Some("What to fetch"));
        assert_eq!(
            fields[1].kind,
            FieldKind::Json {
                what: "string or null".into()
            }
        );
        assert_eq!(
            fields[4].kind,
            FieldKind::Json {
                what: "list of string".into()
            }
        );
        assert_eq!(fields[3].initial_text(), "5000");
        let texts: Vec<String> = vec![
            "https://example.com".into(),
            String::new(),
            "{\"a\": 1}".into(),
            "5000".into(),
            "[\"x\", \"y\"]".into(),
        ];
        let content = content_of(&fields, &texts).expect("valid");
        assert_eq!(
            Value::Object(content),
            json!({"url": "https://example.com", "headers": {"a": 1}, "max_length": 5000, "paths": ["x", "y"]})
        );
        let bad = vec![
            String::from("https://u"),
            String::new(),
            "{".into(),
            String::new(),
            String::new(),
        ];
        let problems = content_of(&fields, &bad).expect_err("bad JSON");
        assert!(
            problems[0].starts_with("headers is not valid JSON"),
            "{problems:?}"
        );
    }

    /// The schema of server-everything's `trigger-elicitation-request`, cut down.
    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "String"},
                "check": {"type": "boolean"},
                "email": {"type": "string", "format": "email"},
                "birthdate": {"type": "string", "format": "date"},
                "integer": {"type": "integer", "minimum": 1, "maximum": 100, "default": 42},
                "number": {"type": "number", "minimum": 0, "maximum": 1000, "default": 2.5},
                "friend": {"type": "string", "enum": ["Monica", "Rachel"], "default": "Monica"},
                "hero": {"type": "string", "oneOf": [{"const": "hero-1", "title": "Superman"}]},
                "pets": {"type": "string", "enum": ["pet-1", "pet-2"], "enumNames": ["Cats", "Dogs"]},
                "fish": {"type": "array", "minItems": 1, "maxItems": 2, "items": {"anyOf": [{"const": "f1", "title": "Tuna"}, {"const": "f2", "title": "Trout"}, {"const": "f3", "title": "Cod"}]}},
            },
            "required": ["name"],
        })
    }

    #[test]
    fn builds_every_kind_of_field() {
        let fields = fields_of(&schema()).unwrap();
        let by = |n: &str| fields.iter().find(|f| f.name == n).unwrap();
        // The required field first, then the rest by name.
        assert_eq!(fields[0].name, "name");
        assert_eq!(fields[1].name, "birthdate");
        assert!(by("name").required && !by("check").required);
        assert_eq!(by("name").label(), "String");
        assert_eq!(by("check").kind, FieldKind::Boolean);
        assert!(matches!(
            by("email").kind,
            FieldKind::Text {
                format: Some(TextFormat::Email),
                ..
            }
        ));
        assert!(matches!(
            by("integer").kind,
            FieldKind::Number {
                integer: true,
                minimum: Some(1.0),
                maximum: Some(100.0)
            }
        ));
        let FieldKind::Choice(heroes) = &by("hero").kind else {
            panic!("{:?}", by("hero"));
        };
        assert_eq!(heroes[0].label, "Superman");
        let FieldKind::Choice(pets) = &by("pets").kind else {
            panic!();
        };
        assert_eq!(
            (pets[1].value.as_str(), pets[1].label.as_str()),
            ("pet-2", "Dogs")
        );
        assert!(matches!(by("fish").kind, FieldKind::MultiChoice { .. }));
        assert_eq!(
            defaults_of(&fields),
            json!({"integer": 42, "number": 2.5, "friend": "Monica"})
                .as_object()
                .unwrap()
                .clone()
        );
        assert_eq!(by("integer").initial_text(), "42");
        assert!(fields_of(&json!({"properties": {"o": {"type": "object"}}})).is_err());
    }

    #[test]
    fn typed_text_becomes_checked_values() {
        let fields = fields_of(&schema()).unwrap();
        let texts = |pairs: &[(&str, &str)]| -> Vec<String> {
            fields
                .iter()
                .map(|f| {
                    pairs
                        .iter()
                        .find(|(n, _)| *n == f.name)
                        .map_or_else(|| f.initial_text(), |(_, t)| t.to_string())
                })
                .collect()
        };
        let content = content_of(
            &fields,
            &texts(&[
                ("name", "Ada"),
                ("check", "true"),
                ("email", "ada@example.org"),
                ("birthdate", "2000-02-29"),
                ("hero", "hero-1"),
                ("fish", "f1, f3"),
            ]),
        )
        .unwrap();
        assert_eq!(content["name"], "Ada");
        assert_eq!(content["check"], true);
        assert_eq!(content["integer"], 42);
        assert_eq!(content["fish"], json!(["f1", "f3"]));
        assert!(!content.contains_key("pets"));
        assert!(check_content(&fields, &content).is_ok());

        let problems = content_of(
            &fields,
            &texts(&[
                ("name", ""),
                ("email", "not-an-email"),
                ("birthdate", "2001-02-29"),
                ("integer", "101"),
                ("number", "1.5x"),
                ("friend", "Joey"),
                ("fish", "f1, f2, f3"),
            ]),
        )
        .unwrap_err();
        assert_eq!(problems.len(), 7, "{problems:?}");
        assert!(problems[0].contains("String is required"), "{problems:?}");
    }

    #[test]
    fn checks_an_answer_it_did_not_type() {
        let fields = fields_of(&schema()).unwrap();
        let ok = json!({"name": "x", "integer": 5});
        assert!(check_content(&fields, ok.as_object().unwrap()).is_ok());
        let bad = json!({"integer": "5", "extra": 1});
        let problems = check_content(&fields, bad.as_object().unwrap()).unwrap_err();
        assert_eq!(problems.len(), 3, "{problems:?}");
    }

    #[test]
    fn formats() {
        assert!(TextFormat::Uri.holds("https://example.org/x"));
        assert!(!TextFormat::Uri.holds("example.org"));
        assert!(TextFormat::DateTime.holds("2024-01-31T23:59:60.5+02:00"));
        assert!(TextFormat::DateTime.holds("2024-01-31T00:00:00Z"));
        assert!(!TextFormat::DateTime.holds("2024-01-31T24:00:00Z"));
        assert!(!TextFormat::Date.holds("2024-13-01"));
        assert!(!TextFormat::Email.holds("a@b"));
    }
}
