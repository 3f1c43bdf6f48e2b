//! A form modal: one row per field (text with its format, number with bounds, a yes/no, one of
//! several choices, several of several), the focused field's description and its
//! `completion/complete` suggestions, and the problems of the last check. Used for a resource
//! template's variables, a prompt's arguments, a server's elicitation form and a tool call's
//! arguments (where a property no other kind fits is typed as JSON). Drawn by `form_view.rs`.
//!
//! The form only edits text; what it means is `runtime::FormField`'s business (the same check
//! the MCP layer applies before an elicitation answer goes back).

use std::collections::BTreeMap;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::{Map, Value};

use crate::runtime::{content_of, Choice, CompletionTarget, FieldKind, FormField};
use crate::tui::messages::{CompletionAsk, Effect};

/// What the form is for.
#[derive(Debug, Clone, PartialEq)]
pub enum FormPurpose {
    /// The variables of a resource template, then the resource is read.
    Template { server: String, template: String },
    /// The arguments of a prompt, then its messages are shown (or, from the Conversation's
    /// `/`, added to the conversation).
    Prompt {
        server: String,
        name: String,
        into_conversation: bool,
    },
    /// An elicitation form; the request waits in the app's queue under this id.
    Elicitation { id: u64 },
    /// The arguments of a tool call (the call editor sends them, checked against the schema).
    Call { tool: String },
}

/// What a key did.
#[derive(Debug, PartialEq)]
pub enum FormOutcome {
    Continue,
    /// The focused field changed or moved: ask for its completions.
    Complete,
    /// Every field checked out: the content.
    Submit(Map<String, Value>),
    /// Ctrl-D on an elicitation.
    Decline,
    Cancel,
}

/// A form being filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct FormEditor {
    pub title: String,
    /// Lines shown above the fields (sanitized).
    pub intro: Vec<String>,
    pub fields: Vec<FormField>,
    /// What each field holds, as typed (multi-choice: values joined by ", ").
    pub texts: Vec<String>,
    pub focus: usize,
    /// The cursor in the focused text, in characters.
    pub cursor: usize,
    /// The highlighted choice of a multi-choice field.
    pub choice: usize,
    pub errors: Vec<String>,
    /// Completions for the focused field, and the highlighted one.
    pub suggestions: Vec<String>,
    pub suggestion: usize,
    /// The last completion asked; older answers are ignored.
    pub seq: u64,
    pub purpose: FormPurpose,
    /// The server answers `completion/complete`.
    pub completable: bool,
}

fn byte_at(text: &str, col: usize) -> usize {
    text.char_indices().nth(col).map_or(text.len(), |(i, _)| i)
}

impl FormEditor {
    pub fn new(
        title: String,
        intro: Vec<String>,
        fields: Vec<FormField>,
        purpose: FormPurpose,
        completable: bool,
    ) -> FormEditor {
        let texts: Vec<String> = fields.iter().map(FormField::initial_text).collect();
        let cursor = texts.first().map_or(0, |t| t.chars().count());
        FormEditor {
            title,
            intro,
            fields,
            texts,
            focus: 0,
            cursor,
            choice: 0,
            errors: Vec::new(),
            suggestions: Vec::new(),
            suggestion: 0,
            seq: 0,
            purpose,
            completable,
        }
    }

    /// Whether this is a server's elicitation (accept / decline / cancel).
    pub fn is_elicitation(&self) -> bool {
        matches!(self.purpose, FormPurpose::Elicitation { .. })
    }

    /// The completion request for the focused field, if the server completes and it is text.
    pub fn completion_request(&mut self) -> Vec<Effect> {
        let (server, target) = match &self.purpose {
            FormPurpose::Template { server, template } => {
                (server.clone(), CompletionTarget::Template(template.clone()))
            }
            FormPurpose::Prompt { server, name, .. } => {
                (server.clone(), CompletionTarget::Prompt(name.clone()))
            }
            FormPurpose::Elicitation { .. } | FormPurpose::Call { .. } => return Vec::new(),
        };
        let Some(field) = self.fields.get(self.focus) else {
            return Vec::new();
        };
        if !self.completable || !matches!(field.kind, FieldKind::Text { .. }) {
            return Vec::new();
        }
        self.seq += 1;
        let context: BTreeMap<String, String> = self
            .fields
            .iter()
            .zip(&self.texts)
            .enumerate()
            .filter(|(i, (_, t))| *i != self.focus && !t.is_empty())
            .map(|(_, (f, t))| (f.name.clone(), t.clone()))
            .collect();
        vec![Effect::Complete(CompletionAsk {
            seq: self.seq,
            server,
            target,
            argument: field.name.clone(),
            value: self.texts[self.focus].clone(),
            context,
        })]
    }

    /// Completions arrived for request `seq` (older ones are dropped).
    pub fn completions(&mut self, seq: u64, values: Vec<String>) {
        if seq == self.seq {
            self.suggestions = values
                .into_iter()
                .map(|v| v.chars().filter(|c| !c.is_control()).collect())
                .collect();
            self.suggestion = 0;
        }
    }

    fn move_focus(&mut self, forward: bool) -> FormOutcome {
        let n = self.fields.len();
        if n == 0 {
            return FormOutcome::Continue;
        }
        self.focus = if forward {
            (self.focus + 1) % n
        } else {
            (self.focus + n - 1) % n
        };
        self.cursor = self.texts[self.focus].chars().count();
        self.choice = 0;
        self.suggestions.clear();
        FormOutcome::Complete
    }

    fn submit(&mut self) -> FormOutcome {
        match content_of(&self.fields, &self.texts) {
            Ok(content) => {
                self.errors.clear();
                FormOutcome::Submit(content)
            }
            Err(problems) => {
                self.errors = problems;
                FormOutcome::Continue
            }
        }
    }

    pub fn on_key(&mut self, key: KeyEvent) -> FormOutcome {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => return FormOutcome::Cancel,
            KeyCode::Char('s') if ctrl => return self.submit(),
            KeyCode::Char('d') if ctrl && self.is_elicitation() => return FormOutcome::Decline,
            KeyCode::Up | KeyCode::BackTab => return self.move_focus(false),
            KeyCode::Down => return self.move_focus(true),
            KeyCode::Enter => {
                return if self.focus + 1 >= self.fields.len() {
                    self.submit()
                } else {
                    self.move_focus(true)
                };
            }
            KeyCode::Tab if !self.suggestions.is_empty() => {
                let chosen =
                    self.suggestions[self.suggestion.min(self.suggestions.len() - 1)].clone();
                self.cursor = chosen.chars().count();
                self.texts[self.focus] = chosen;
                self.suggestions.clear();
                return FormOutcome::Continue;
            }
            KeyCode::Tab => return self.move_focus(true),
            KeyCode::Char('n') if ctrl => {
                if !self.suggestions.is_empty() {
                    self.suggestion = (self.suggestion + 1) % self.suggestions.len();
                }
                return FormOutcome::Continue;
            }
            KeyCode::Char('p') if ctrl => {
                if !self.suggestions.is_empty() {
                    let n = self.suggestions.len();
                    self.suggestion = (self.suggestion + n - 1) % n;
                }
                return FormOutcome::Continue;
            }
            _ => {}
        }
        let Some(field) = self.fields.get(self.focus) else {
            return FormOutcome::Continue;
        };
        match field.kind.clone() {
            FieldKind::Boolean => {
                if matches!(
                    key.code,
                    KeyCode::Char(' ') | KeyCode::Left | KeyCode::Right
                ) {
                    let text = &mut self.texts[self.focus];
                    *text = if text == "true" { "false" } else { "true" }.into();
                }
                FormOutcome::Continue
            }
            FieldKind::Choice(choices) => {
                self.cycle_choice(&choices, key.code);
                FormOutcome::Continue
            }
            FieldKind::MultiChoice { choices, .. } => {
                self.toggle_choices(&choices, key.code);
                FormOutcome::Continue
            }
            FieldKind::Text { .. } | FieldKind::Number { .. } | FieldKind::Json { .. } => {
                if self.edit_text(key.code, ctrl) {
                    FormOutcome::Complete
                } else {
                    FormOutcome::Continue
                }
            }
        }
    }

    /// ←/→/Space step through the choices; Backspace clears an optional one.
    fn cycle_choice(&mut self, choices: &[Choice], code: KeyCode) {
        if choices.is_empty() {
            return;
        }
        let text = &mut self.texts[self.focus];
        let at = choices.iter().position(|c| &c.value == text);
        let n = choices.len();
        let next = match (code, at) {
            (KeyCode::Right | KeyCode::Char(' '), None) => Some(0),
            (KeyCode::Right | KeyCode::Char(' '), Some(i)) => Some((i + 1) % n),
            (KeyCode::Left, None) => Some(n - 1),
            (KeyCode::Left, Some(i)) => Some((i + n - 1) % n),
            (KeyCode::Backspace | KeyCode::Delete, _) => {
                text.clear();
                return;
            }
            _ => return,
        };
        if let Some(i) = next {
            *text = choices[i].value.clone();
        }
    }

    /// ←/→ move among the choices; Space takes or drops the highlighted one.
    fn toggle_choices(&mut self, choices: &[Choice], code: KeyCode) {
        if choices.is_empty() {
            return;
        }
        match code {
            KeyCode::Left => self.choice = self.choice.saturating_sub(1),
            KeyCode::Right => self.choice = (self.choice + 1).min(choices.len() - 1),
            KeyCode::Char(' ') => {
                let mut taken: Vec<String> = self.texts[self.focus]
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect();
                let value = &choices[self.choice.min(choices.len() - 1)].value;
                if let Some(at) = taken.iter().position(|t| t == value) {
                    taken.remove(at);
                } else {
                    taken.push(value.clone());
                }
                // In the order the server listed them.
                let ordered: Vec<&str> = choices
                    .iter()
                    .filter(|c| taken.contains(&c.value))
                    .map(|c| c.value.as_str())
                    .collect();
                self.texts[self.focus] = ordered.join(", ");
            }
            _ => {}
        }
    }

    /// Edits the focused text; true when it changed.
    fn edit_text(&mut self, code: KeyCode, ctrl: bool) -> bool {
        let text = &mut self.texts[self.focus];
        let len = text.chars().count();
        self.cursor = self.cursor.min(len);
        match code {
            KeyCode::Char('u') if ctrl => {
                text.clear();
                self.cursor = 0;
                true
            }
            KeyCode::Char(c) if !ctrl => {
                text.insert(byte_at(text, self.cursor), c);
                self.cursor += 1;
                true
            }
            KeyCode::Backspace if self.cursor > 0 => {
                text.remove(byte_at(text, self.cursor - 1));
                self.cursor -= 1;
                true
            }
            KeyCode::Delete if self.cursor < len => {
                text.remove(byte_at(text, self.cursor));
                true
            }
            KeyCode::Left => {
                self.cursor = self.cursor.saturating_sub(1);
                false
            }
            KeyCode::Right => {
                self.cursor = (self.cursor + 1).min(len);
                false
            }
            KeyCode::Home => {
                self.cursor = 0;
                false
            }
            KeyCode::End => {
                self.cursor = len;
                false
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::TextFormat;
    use crate::tui::tests::fixtures::{ctrl, key};
    use serde_json::json;

    fn form() -> FormEditor {
        let fields = vec![
            FormField::text("name", true, None),
            FormField {
                name: "n".into(),
                title: None,
                description: None,
                required: false,
                kind: FieldKind::Number {
                    integer: true,
                    minimum: Some(1.0),
                    maximum: Some(5.0),
                },
                default: Some(json!(2)),
            },
            FormField {
                name: "ok".into(),
                title: None,
                description: None,
                required: false,
                kind: FieldKind::Boolean,
                default: None,
            },
            FormField {
                name: "c".into(),
                title: None,
                description: None,
                required: false,
                kind: FieldKind::Choice(vec![
                    Choice {
                        value: "a".into(),
                        label: "A".into(),
                    },
                    Choice {
                        value: "b".into(),
                        label: "B".into(),
                    },
                ]),
                default: None,
            },
            FormField {
                name: "m".into(),
                title: None,
                description: None,
                required: false,
                kind: FieldKind::MultiChoice {
                    choices: vec![
                        Choice {
                            value: "x".into(),
                            label: "X".into(),
                        },
                        Choice {
                            value: "y".into(),
                            label: "Y".into(),
                        },
                    ],
                    min_items: None,
                    max_items: None,
                },
                default: None,
            },
        ];
        FormEditor::new(
            "t".into(),
            Vec::new(),
            fields,
            FormPurpose::Elicitation { id: 1 },
            false,
        )
    }

    #[test]
    fn fills_every_kind_and_checks_before_sending() {
        let mut f = form();
        // The required name is empty: nothing is sent, the problem shows.
        assert_eq!(f.on_key(ctrl('s')), FormOutcome::Continue);
        assert_eq!(f.errors, vec!["name is required"]);
        for c in "Ada".chars() {
            assert_eq!(f.on_key(key(KeyCode::Char(c))), FormOutcome::Complete);
        }
        f.on_key(key(KeyCode::Down));
        f.on_key(key(KeyCode::Backspace));
        f.on_key(key(KeyCode::Char('9')));
        assert_eq!(f.on_key(ctrl('s')), FormOutcome::Continue);
        assert!(f.errors[0].contains("at most 5"), "{:?}", f.errors);
        f.on_key(key(KeyCode::Backspace));
        f.on_key(key(KeyCode::Char('4')));
        f.on_key(key(KeyCode::Down));
        f.on_key(key(KeyCode::Char(' ')));
        f.on_key(key(KeyCode::Down));
        f.on_key(key(KeyCode::Left));
        f.on_key(key(KeyCode::Down));
        f.on_key(key(KeyCode::Right));
        f.on_key(key(KeyCode::Char(' ')));
        f.on_key(key(KeyCode::Left));
        f.on_key(key(KeyCode::Char(' ')));
        let FormOutcome::Submit(content) = f.on_key(key(KeyCode::Enter)) else {
            panic!("{:?}", f.errors);
        };
        assert_eq!(
            Value::Object(content),
            json!({"name": "Ada", "n": 4, "ok": true, "c": "b", "m": ["x", "y"]})
        );
        assert_eq!(f.on_key(ctrl('d')), FormOutcome::Decline);
        assert_eq!(f.on_key(key(KeyCode::Esc)), FormOutcome::Cancel);
    }

    #[test]
    fn completions_of_the_latest_request_fill_the_field() {
        let mut f = FormEditor::new(
            "t".into(),
            Vec::new(),
            vec![FormField::text("title", true, None)],
            FormPurpose::Prompt {
                server: "s".into(),
                name: "p".into(),
                into_conversation: false,
            },
            true,
        );
        let asked = f.completion_request();
        assert!(
            matches!(&asked[..], [Effect::Complete(CompletionAsk { seq: 1, argument, .. })] if argument == "title")
        );
        f.completion_request();
        f.completions(1, vec!["stale".into()]);
        assert!(f.suggestions.is_empty());
        f.completions(2, vec!["todo".into(), "tea\u{1b}".into()]);
        f.on_key(ctrl('n'));
        f.on_key(key(KeyCode::Tab));
        assert_eq!(f.texts[0], "tea");
        // Elicitation forms never ask.
        let mut e = form();
        assert!(e.completion_request().is_empty());
        assert!(matches!(
            e.fields[0].kind,
            FieldKind::Text {
                format: None::<TextFormat>,
                ..
            }
        ));
    }
}
