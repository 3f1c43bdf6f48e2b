//! The call editor: a tool's arguments as a form, one field per property of its input schema
//! (its description, type, choices, required mark and default; a property no form field fits
//! is typed as JSON), or as raw JSON (Ctrl-R switches, keeping what was typed). What is sent is
//! checked against the schema first (leniently, docs/ARCHITECTURE.md §3). It opens with the
//! tool's last arguments of the session, if it was called before.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::Frame;
use serde_json::{Map, Value};

use super::editor::{ArgsEditor, EditorOutcome};
use super::form::{FormEditor, FormOutcome, FormPurpose};
use crate::runtime::{tool_fields_of, FieldKind};
use crate::text::sanitize_line;
use crate::tool::schema;
use crate::tui::theme::Theme;

/// Characters of a tool's description shown above its form (`d` in Tools shows all of it).
const DESCRIPTION_CHARS: usize = 300;

/// Columns of the description's lines above the form (it fits the modal at 80 columns).
const INTRO_WIDTH: usize = 72;

/// `text` in lines of at most `width` cells, broken between words (a longer word is cut, not
/// lost); runs of white space are one space.
fn wrap_words(text: &str, width: usize) -> Vec<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.is_empty() {
        return Vec::new();
    }
    crate::tui::chat::wrap::wrap(&words.join(" "), width)
}

/// A tool call being prepared.
#[derive(Debug, Clone, PartialEq)]
pub struct CallEditor {
    pub tool: String,
    pub schema: Value,
    /// The form, when the schema has properties.
    pub form: Option<FormEditor>,
    /// The raw JSON editor (what is edited when `raw`, or when there is no form).
    pub json: ArgsEditor,
    pub raw: bool,
}

impl CallEditor {
    /// The editor of `tool`, filled with `last` (its last arguments this session) or else
    /// each property's default.
    pub fn new(tool: &str, description: &str, schema: Value, last: Option<&Value>) -> CallEditor {
        let fields = tool_fields_of(&schema);
        let form = (!fields.is_empty()).then(|| {
            let intro = wrap_words(&sanitize_line(description, DESCRIPTION_CHARS), INTRO_WIDTH);
            let mut form = FormEditor::new(
                format!("Call {tool}"),
                intro,
                fields,
                FormPurpose::Call {
                    tool: tool.to_string(),
                },
                false,
            );
            if let Some(Value::Object(args)) = last {
                fill(&mut form, args);
            }
            form
        });
        let json = match last {
            Some(value) => ArgsEditor::with_value(tool, schema.clone(), value),
            None => ArgsEditor::new(tool, schema.clone()),
        };
        CallEditor {
            tool: tool.to_string(),
            schema,
            raw: form.is_none(),
            form,
            json,
        }
    }

    /// The problems of the last check, in the mode on screen.
    pub fn errors(&self) -> &[String] {
        match (&self.form, self.raw) {
            (Some(form), false) => &form.errors,
            (_, _) => &self.json.errors,
        }
    }

    pub fn on_key(&mut self, key: KeyEvent) -> EditorOutcome {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if key.code == KeyCode::Char('r') && ctrl {
            self.toggle();
            return EditorOutcome::Continue;
        }
        let Some(form) = self.form.as_mut().filter(|_| !self.raw) else {
            return self.json.on_key(key);
        };
        // Sending is the editor's: a required field left empty is sent as the raw editor
        // prefills it, and the whole schema is checked.
        let last_field = form.focus + 1 >= form.fields.len();
        if (key.code == KeyCode::Char('s') && ctrl) || (key.code == KeyCode::Enter && last_field) {
            let checked = self
                .content()
                .and_then(|value| schema::validate(&self.schema, &value).map(|()| value));
            return match checked {
                Ok(value) => EditorOutcome::Submit(value),
                Err(problems) => {
                    if let Some(form) = self.form.as_mut() {
                        form.errors = problems;
                    }
                    EditorOutcome::Continue
                }
            };
        }
        match form.on_key(key) {
            FormOutcome::Continue | FormOutcome::Complete | FormOutcome::Submit(_) => {
                EditorOutcome::Continue
            }
            FormOutcome::Cancel | FormOutcome::Decline => EditorOutcome::Cancel,
        }
    }

    /// The arguments the form stands for: each field's value; an empty field left out (a
    /// required one is a problem), but a required string is sent empty, as the raw editor
    /// prefills it; or every problem.
    fn content(&self) -> Result<Value, Vec<String>> {
        let Some(form) = &self.form else {
            return Ok(Value::Object(Map::new()));
        };
        let skeleton = match schema::defaults_skeleton(&self.schema) {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        let mut args = Map::new();
        let mut problems = Vec::new();
        for (field, text) in form.fields.iter().zip(&form.texts) {
            let empty_string = matches!(field.kind, FieldKind::Text { .. }) && text.is_empty();
            let value = if empty_string && field.required {
                skeleton.get(&field.name).cloned().map(Ok)
            } else {
                field.value_of(text).transpose()
            };
            match value {
                Some(Ok(v)) => {
                    args.insert(field.name.clone(), v);
                }
                Some(Err(problem)) => problems.push(problem),
                None => {}
            }
        }
        if problems.is_empty() {
            Ok(Value::Object(args))
        } else {
            Err(problems)
        }
    }

    /// Ctrl-R: form to raw JSON (what the fields hold so far), or raw JSON back to the form
    /// (refused, saying why, when the JSON does not parse or has keys the form lacks).
    fn toggle(&mut self) {
        if self.form.is_none() {
            self.json.errors = vec!["no form for this tool: its schema lists no properties".into()];
            return;
        }
        if !self.raw {
            let args = match self.content() {
                Ok(args) => args,
                // The raw editor's prefill, with what was typed over it (what does not check
                // out yet goes over as the text it is).
                Err(_) => {
                    let mut args = match schema::defaults_skeleton(&self.schema) {
                        Value::Object(map) => map,
                        _ => Map::new(),
                    };
                    if let Some(form) = &self.form {
                        for (f, t) in form.fields.iter().zip(&form.texts) {
                            if !t.is_empty() {
                                let v = f.value_of(t).ok().flatten();
                                args.insert(
                                    f.name.clone(),
                                    v.unwrap_or_else(|| Value::String(t.clone())),
                                );
                            }
                        }
                    }
                    Value::Object(args)
                }
            };
            self.json = ArgsEditor::with_value(&self.tool, self.schema.clone(), &args);
            self.raw = true;
            return;
        }
        let text = self.json.text();
        let parsed: Result<Value, String> =
            serde_json::from_str(if text.trim().is_empty() { "{}" } else { &text })
                .map_err(|e| format!("not valid JSON: {e}"));
        let Some(form) = self.form.as_mut() else {
            return;
        };
        match parsed {
            Ok(Value::Object(args)) => {
                let unknown: Vec<&String> = args
                    .keys()
                    .filter(|k| !form.fields.iter().any(|f| &f.name == *k))
                    .collect();
                if let Some(first) = unknown.first() {
                    self.json.errors = vec![format!(
                        "{first} is not a property of the schema: the form cannot hold it (send it from here)"
                    )];
                    return;
                }
                form.texts = form.fields.iter().map(|_| String::new()).collect();
                fill(form, &args);
                form.errors.clear();
                self.raw = false;
            }
            Ok(_) => self.json.errors = vec!["the arguments must be a JSON object".into()],
            Err(e) => self.json.errors = vec![e],
        }
    }

    /// Draws the form or the raw JSON, `keys` (the footer's) on the last line.
    pub fn render(
        &self,
        frame: &mut Frame,
        area: Rect,
        keys: &[(&'static str, &'static str)],
        theme: Theme,
    ) {
        match (&self.form, self.raw) {
            (Some(form), false) => form.render(frame, area, keys, theme),
            (_, _) => self.json.render(frame, area, keys, theme),
        }
    }
}

/// Puts `args` into the form's fields (each as its field's text); keys it lacks are left out.
fn fill(form: &mut FormEditor, args: &Map<String, Value>) {
    for (i, field) in form.fields.iter().enumerate() {
        if let Some(value) = args.get(&field.name) {
            form.texts[i] = field.text_of(value);
        }
    }
    form.cursor = form.texts.first().map_or(0, |t| t.chars().count());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::tests::fixtures::{ctrl, key};
    use serde_json::json;

    /// mcp-server-fetch's `fetch`, as it lists it.
    fn fetch() -> Value {
        json!({"type": "object", "properties": {
            "url": {"type": "string", "format": "uri", "description": "URL to fetch"},
            "max_length": {"type": "integer", "default": 5000, "exclusiveMinimum": 0, "description": "Maximum number of characters to return."},
            "start_index": {"type": "integer", "default": 0, "minimum": 0},
            "raw": {"type": "boolean", "default": false}
        }, "required": ["url"]})
    }

    #[test]
    fn the_description_wraps_between_words() {
        assert_eq!(
            wrap_words("Fetches a URL from the internet and extracts markdown", 20),
            [
                "Fetches a URL from",
                "the internet and",
                "extracts markdown"
            ]
        );
        assert!(wrap_words("  ", 20).is_empty());
        // A word longer than a line is cut over two, none of it lost.
        assert_eq!(
            wrap_words("see https://example.com/a/long/path", 16),
            ["see", "https://example.", "com/a/long/path"]
        );
    }

    #[test]
    fn typing_goes_into_the_first_required_field_and_sends_the_defaults() {
        let mut e = CallEditor::new("mcp__fetch__fetch", "Fetches a URL.", fetch(), None);
        assert!(!e.raw);
        for c in "https://example.com".chars() {
            e.on_key(key(KeyCode::Char(c)));
        }
        let out = e.on_key(ctrl('s'));
        assert_eq!(
            out,
            EditorOutcome::Submit(json!({
                "url": "https://example.com", "max_length": 5000, "start_index": 0, "raw": false
            }))
        );
    }

    #[test]
    fn raw_json_and_back_keep_what_was_typed() {
        let mut e = CallEditor::new("t", "", fetch(), None);
        for c in "https://a.b".chars() {
            e.on_key(key(KeyCode::Char(c)));
        }
        e.on_key(ctrl('r'));
        assert!(e.raw);
        let text = e.json.text();
        assert!(text.contains("\"url\": \"https://a.b\""), "{text}");
        // An unknown key cannot go back to the form.
        e.json = ArgsEditor::with_value("t", fetch(), &json!({"url": "x", "extra": 1}));
        e.on_key(ctrl('r'));
        assert!(e.raw);
        assert!(
            e.errors()[0].starts_with("extra is not a property"),
            "{:?}",
            e.errors()
        );
        e.json = ArgsEditor::with_value(
            "t",
            fetch(),
            &json!({"url": "https://c.d", "max_length": 7}),
        );
        e.on_key(ctrl('r'));
        assert!(!e.raw);
        let form = e.form.as_ref().unwrap();
        assert_eq!(form.texts[0], "https://c.d");
        assert!(form.texts.contains(&"7".to_string()));
    }

    #[test]
    fn the_schema_is_checked_before_sending_and_last_arguments_fill_the_form() {
        let schema = json!({"type": "object", "properties": {
            "n": {"type": "integer", "maximum": 3}
        }, "required": ["n"]});
        let mut e = CallEditor::new("t", "", schema.clone(), Some(&json!({"n": 9})));
        assert_eq!(e.form.as_ref().unwrap().texts, vec!["9"]);
        assert_eq!(e.on_key(ctrl('s')), EditorOutcome::Continue);
        assert!(!e.errors().is_empty());
        // A schema without properties: raw JSON only.
        let e = CallEditor::new("t", "", json!({"type": "object"}), None);
        assert!(e.raw && e.form.is_none());
    }
}
