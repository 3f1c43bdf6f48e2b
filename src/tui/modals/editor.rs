//! The raw JSON argument editor: a small multi-line JSON editor prefilled from the tool's input
//! schema (or given arguments), checked (leniently, docs/ARCHITECTURE.md §3) before the call is
//! sent. The call editor (`call.rs`) switches to it from its form with Ctrl-R.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui::Frame;
use serde_json::Value;

use crate::tool::schema;
use crate::tui::theme::Theme;
use crate::tui::widgets::keys_line;

/// What a key did to the editor.
#[derive(Debug, PartialEq)]
pub enum EditorOutcome {
    Continue,
    /// The arguments parsed and passed the schema check: send the call.
    Submit(Value),
    Cancel,
}

/// Editor state: the text as lines, a cursor (line, char), and the last check's problems.
#[derive(Debug, Clone, PartialEq)]
pub struct ArgsEditor {
    pub tool: String,
    pub schema: Value,
    pub lines: Vec<String>,
    pub row: usize,
    pub col: usize,
    pub errors: Vec<String>,
}

impl ArgsEditor {
    /// Prefilled with each property's default (or an empty value for required ones).
    pub fn new(tool: &str, schema: Value) -> ArgsEditor {
        let skeleton = schema::defaults_skeleton(&schema);
        ArgsEditor::with_value(tool, schema, &skeleton)
    }

    /// Prefilled with `value` (the arguments of a form, or of the tool's last call).
    pub fn with_value(tool: &str, schema: Value, value: &Value) -> ArgsEditor {
        let text = serde_json::to_string_pretty(value).unwrap_or_else(|_| "{}".into());
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        // Start on the first value, where typing usually begins.
        let row = usize::from(lines.len() > 2);
        let col = lines.get(row).map_or(0, |l| {
            // An empty string value: put the cursor between its quotes.
            let body = l.strip_suffix(',').unwrap_or(l);
            if body.ends_with("\"\"") {
                body.chars().count() - 1
            } else {
                l.chars().count()
            }
        });
        ArgsEditor {
            tool: tool.to_string(),
            schema,
            lines: if lines.is_empty() {
                vec![String::new()]
            } else {
                lines
            },
            row,
            col,
            errors: Vec::new(),
        }
    }

    pub fn text(&self) -> String {
        self.lines.join("\n")
    }

    /// Parses and checks the text; on failure keeps the problems for display.
    pub fn check(&mut self) -> Option<Value> {
        let text = self.text();
        let value: Value =
            match serde_json::from_str(if text.trim().is_empty() { "{}" } else { &text }) {
                Ok(v) => v,
                Err(e) => {
                    self.errors = vec![format!("not valid JSON: {e}")];
                    return None;
                }
            };
        if !value.is_object() {
            self.errors = vec!["the arguments must be a JSON object".into()];
            return None;
        }
        match schema::validate(&self.schema, &value) {
            Ok(()) => {
                self.errors.clear();
                Some(value)
            }
            Err(problems) => {
                self.errors = problems;
                None
            }
        }
    }

    fn byte_at(line: &str, col: usize) -> usize {
        line.char_indices().nth(col).map_or(line.len(), |(i, _)| i)
    }

    fn line_len(&self) -> usize {
        self.lines[self.row].chars().count()
    }

    pub fn on_key(&mut self, key: KeyEvent) -> EditorOutcome {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => return EditorOutcome::Cancel,
            KeyCode::Char('s') if ctrl => {
                return match self.check() {
                    Some(value) => EditorOutcome::Submit(value),
                    None => EditorOutcome::Continue,
                };
            }
            // Ctrl-U empties the line (as in a shell).
            KeyCode::Char('u') if ctrl => {
                self.lines[self.row].clear();
                self.col = 0;
            }
            KeyCode::Char(c) if !ctrl => {
                let at = Self::byte_at(&self.lines[self.row], self.col);
                self.lines[self.row].insert(at, c);
                self.col += 1;
            }
            KeyCode::Tab => {
                let at = Self::byte_at(&self.lines[self.row], self.col);
                self.lines[self.row].insert_str(at, "  ");
                self.col += 2;
            }
            KeyCode::Enter => {
                let at = Self::byte_at(&self.lines[self.row], self.col);
                let rest = self.lines[self.row].split_off(at);
                self.lines.insert(self.row + 1, rest);
                self.row += 1;
                self.col = 0;
            }
            KeyCode::Backspace => {
                if self.col > 0 {
                    let at = Self::byte_at(&self.lines[self.row], self.col - 1);
                    self.lines[self.row].remove(at);
                    self.col -= 1;
                } else if self.row > 0 {
                    let line = self.lines.remove(self.row);
                    self.row -= 1;
                    self.col = self.line_len();
                    self.lines[self.row].push_str(&line);
                }
            }
            KeyCode::Delete => {
                if self.col < self.line_len() {
                    let at = Self::byte_at(&self.lines[self.row], self.col);
                    self.lines[self.row].remove(at);
                } else if self.row + 1 < self.lines.len() {
                    let next = self.lines.remove(self.row + 1);
                    self.lines[self.row].push_str(&next);
                }
            }
            KeyCode::Left => {
                if self.col > 0 {
                    self.col -= 1;
                } else if self.row > 0 {
                    self.row -= 1;
                    self.col = self.line_len();
                }
            }
            KeyCode::Right => {
                if self.col < self.line_len() {
                    self.col += 1;
                } else if self.row + 1 < self.lines.len() {
                    self.row += 1;
                    self.col = 0;
                }
            }
            KeyCode::Up => {
                self.row = self.row.saturating_sub(1);
                self.col = self.col.min(self.line_len());
            }
            KeyCode::Down => {
                self.row = (self.row + 1).min(self.lines.len() - 1);
                self.col = self.col.min(self.line_len());
            }
            KeyCode::Home => self.col = 0,
            KeyCode::End => self.col = self.line_len(),
            _ => {}
        }
        EditorOutcome::Continue
    }

    /// Draws the editor, `keys` on its last line.
    pub fn render(
        &self,
        frame: &mut Frame,
        area: Rect,
        keys: &[(&'static str, &'static str)],
        theme: Theme,
    ) {
        frame.render_widget(Clear, area);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(theme.focus_border())
            .title(format!(" Call {} · raw JSON ", self.tool));
        let inner = block.inner(area);
        frame.render_widget(block, area);
        let help_h = 1 + self.errors.len().min(4) as u16;
        let text_h = inner.height.saturating_sub(help_h);
        let scroll = self.row.saturating_sub(text_h.saturating_sub(1) as usize);
        let lines: Vec<Line> = self
            .lines
            .iter()
            .skip(scroll)
            .take(text_h as usize)
            .map(|l| Line::raw(l.clone()))
            .collect();
        frame.render_widget(
            Paragraph::new(lines),
            Rect {
                height: text_h,
                ..inner
            },
        );
        let mut foot: Vec<Line> = self
            .errors
            .iter()
            .take(4)
            .map(|e| Line::styled(format!("✗ {e}"), theme.bad()))
            .collect();
        foot.push(keys_line(keys, theme));
        frame.render_widget(
            Paragraph::new(foot).wrap(Wrap { trim: true }),
            Rect {
                y: inner.y + text_h,
                height: help_h,
                ..inner
            },
        );
        let cursor_y = inner.y + (self.row - scroll) as u16;
        let cursor_x = inner.x + self.col as u16;
        if cursor_y < inner.y + text_h && cursor_x < inner.x + inner.width {
            frame.set_cursor_position((cursor_x, cursor_y));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::tests::fixtures::key;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]})
    }

    #[test]
    fn prefills_from_the_schema_and_submits_valid_input() {
        let mut e = ArgsEditor::new("t", schema());
        assert_eq!(e.text(), "{\n  \"a\": 0,\n  \"b\": 0\n}");
        assert_eq!(
            e.on_key(KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL)),
            EditorOutcome::Submit(json!({"a": 0, "b": 0}))
        );
    }

    #[test]
    fn edits_and_refuses_what_the_schema_refuses() {
        let mut e = ArgsEditor::new("t", schema());
        // Cursor sits at the end of `"a": 0,`: replace 0 with "x".
        e.on_key(key(KeyCode::Left));
        e.on_key(key(KeyCode::Backspace));
        for c in "\"x\"".chars() {
            e.on_key(key(KeyCode::Char(c)));
        }
        assert_eq!(e.lines[1], "  \"a\": \"x\",");
        let out = e.on_key(KeyEvent::new(KeyCode::Char('s'), KeyModifiers::CONTROL));
        assert_eq!(out, EditorOutcome::Continue);
        assert!(e.errors[0].contains("/a"), "{:?}", e.errors);
        assert_eq!(e.on_key(key(KeyCode::Esc)), EditorOutcome::Cancel);
    }

    #[test]
    fn starts_inside_an_empty_string() {
        let mut e = ArgsEditor::new(
            "t",
            json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        );
        for c in "hi".chars() {
            e.on_key(key(KeyCode::Char(c)));
        }
        assert_eq!(e.text(), "{\n  \"text\": \"hi\"\n}");
    }

    #[test]
    fn ctrl_u_empties_the_line() {
        let mut e = ArgsEditor::new("t", schema());
        e.on_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
        for c in "\"a\": 7,".chars() {
            e.on_key(key(KeyCode::Char(c)));
        }
        assert_eq!(e.lines[1], "\"a\": 7,");
        assert!(e.check().is_some());
    }

    #[test]
    fn joins_and_splits_lines() {
        let mut e = ArgsEditor::new("t", json!({}));
        e.lines = vec!["ab".into()];
        e.row = 0;
        e.col = 1;
        e.on_key(key(KeyCode::Enter));
        assert_eq!(e.lines, vec!["a", "b"]);
        e.on_key(key(KeyCode::Backspace));
        assert_eq!(e.lines, vec!["ab"]);
        assert_eq!((e.row, e.col), (0, 1));
    }
}
