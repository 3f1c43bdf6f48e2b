//! Drawing the form modal: each field's row (its text, choices or yes/no), the focused field's
//! description and suggestions, the problems of the last check, and the keys.
//!
//! Separate from `form.rs`, which edits the form: this only reads it.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui::Frame;

use super::form::{FormEditor, FormPurpose};
use crate::runtime::{Choice, FieldKind};
use crate::text::{sanitize, sanitize_line};
use crate::tui::theme::Theme;
use crate::tui::widgets::keys_line;

impl FormEditor {
    /// The value of field `i` as shown.
    fn shown_value(&self, i: usize, theme: Theme, focused: bool) -> Vec<Span<'static>> {
        let field = &self.fields[i];
        let text = &self.texts[i];
        let label_of = |choices: &[Choice], value: &str| {
            choices
                .iter()
                .find(|c| c.value == value)
                .map(|c| {
                    let label = sanitize_line(&c.label, 40);
                    let value = sanitize_line(&c.value, 40);
                    if label == value {
                        label
                    } else {
                        format!("{label} ({value})")
                    }
                })
                .unwrap_or_else(|| sanitize_line(value, 40))
        };
        match &field.kind {
            FieldKind::Text { format, .. } => {
                let mut spans = vec![Span::raw(sanitize_line(text, 200))];
                let call = matches!(self.purpose, FormPurpose::Call { .. });
                match format {
                    Some(f) => spans.push(Span::styled(format!("  ({})", f.as_str()), theme.dim())),
                    // A tool's fields say their type: a string, a number, JSON.
                    None if call => spans.push(Span::styled("  (string)", theme.dim())),
                    None => {}
                }
                spans
            }
            FieldKind::Json { what } => vec![
                Span::raw(sanitize_line(text, 200)),
                Span::styled(
                    format!("  (JSON: {})", sanitize_line(what, 40)),
                    theme.dim(),
                ),
            ],
            FieldKind::Number {
                integer,
                minimum,
                maximum,
            } => {
                let range = match (minimum, maximum) {
                    (Some(a), Some(b)) => format!(" {a}–{b}"),
                    (Some(a), None) => format!(" ≥ {a}"),
                    (None, Some(b)) => format!(" ≤ {b}"),
                    (None, None) => String::new(),
                };
                let kind = if *integer { "whole number" } else { "number" };
                vec![
                    Span::raw(sanitize_line(text, 60)),
                    Span::styled(format!("  ({kind}{range})"), theme.dim()),
                ]
            }
            FieldKind::Boolean => {
                vec![Span::raw(if text == "true" { "[x] yes" } else { "[ ] no" })]
            }
            FieldKind::Choice(choices) => vec![Span::raw(if text.is_empty() {
                "‹ none ›".to_string()
            } else {
                format!("‹ {} ›", label_of(choices, text))
            })],
            FieldKind::MultiChoice { choices, .. } => {
                let taken: Vec<&str> = text.split(',').map(str::trim).collect();
                choices
                    .iter()
                    .enumerate()
                    .flat_map(|(j, c)| {
                        let mark = if taken.contains(&c.value.as_str()) {
                            "[x]"
                        } else {
                            "[ ]"
                        };
                        let style = if focused && j == self.choice {
                            theme.selected()
                        } else {
                            Style::default()
                        };
                        [
                            Span::styled(format!("{mark} {}", sanitize_line(&c.label, 30)), style),
                            Span::raw(" "),
                        ]
                    })
                    .collect()
            }
        }
    }

    /// Draws the form, `keys` (its footer's) on its last line.
    pub fn render(&self, frame: &mut Frame, area: Rect, keys: &[(&str, &str)], theme: Theme) {
        frame.render_widget(Clear, area);
        let border = if self.is_elicitation() {
            theme.warn()
        } else {
            theme.focus_border()
        };
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(border)
            .title(format!(" {} ", sanitize_line(&self.title, 60)));
        let inner = block.inner(area);
        frame.render_widget(block, area);
        if inner.height == 0 || inner.width == 0 {
            return;
        }
        let width = usize::from(inner.width);
        let label_w = self
            .fields
            .iter()
            .map(|f| sanitize_line(f.label(), 24).chars().count() + 2)
            .max()
            .unwrap_or(4)
            .min(width / 3);
        let mut lines: Vec<Line> = self
            .intro
            .iter()
            .flat_map(|l| {
                l.lines()
                    .map(|l| Line::raw(sanitize(l, false)))
                    .collect::<Vec<_>>()
            })
            .collect();
        if !lines.is_empty() {
            lines.push(Line::raw(""));
        }
        let mut focus_line = 0;
        let mut cursor_col = None;
        for (i, field) in self.fields.iter().enumerate() {
            let focused = i == self.focus;
            let label = format!(
                "{}{}",
                sanitize_line(field.label(), 24),
                if field.required { "*" } else { "" }
            );
            let label = crate::tui::widgets::cell(&label, label_w);
            if focused {
                focus_line = lines.len();
                if matches!(
                    field.kind,
                    FieldKind::Text { .. } | FieldKind::Number { .. } | FieldKind::Json { .. }
                ) {
                    let shown: String = self.texts[i].chars().take(self.cursor).collect();
                    cursor_col = Some(2 + label_w + 1 + sanitize_line(&shown, 200).chars().count());
                }
            }
            let mut spans = vec![
                Span::styled(if focused { "▶ " } else { "  " }, theme.key()),
                Span::styled(label, if focused { theme.bold() } else { theme.dim() }),
                Span::raw(" "),
            ];
            spans.extend(self.shown_value(i, theme, focused));
            lines.push(Line::from(spans));
            if focused {
                if let Some(d) = &field.description {
                    lines.push(Line::styled(
                        format!("    {}", sanitize_line(d, 300)),
                        theme.dim(),
                    ));
                }
                if !self.suggestions.is_empty() {
                    let mut spans = vec![Span::styled("    suggestions: ", theme.dim())];
                    for (j, s) in self.suggestions.iter().take(8).enumerate() {
                        let style = if j == self.suggestion {
                            theme.selected()
                        } else {
                            Style::default()
                        };
                        spans.push(Span::styled(sanitize_line(s, 40), style));
                        spans.push(Span::raw(" "));
                    }
                    if self.suggestions.len() > 8 {
                        spans.push(Span::styled(
                            format!("+{} more", self.suggestions.len() - 8),
                            theme.dim(),
                        ));
                    }
                    lines.push(Line::from(spans));
                }
            }
        }
        if self.fields.is_empty() {
            lines.push(Line::styled("(no fields)", theme.dim()));
        }
        let errors: Vec<Line> = self
            .errors
            .iter()
            .take(4)
            .map(|e| Line::styled(format!("✗ {}", sanitize_line(e, 200)), theme.bad()))
            .collect();
        let foot_h = errors.len() as u16 + 1;
        let body_h = inner.height.saturating_sub(foot_h);
        let scroll = focus_line.saturating_sub(usize::from(body_h).saturating_sub(2));
        let body_area = Rect {
            height: body_h,
            ..inner
        };
        frame.render_widget(
            Paragraph::new(lines.into_iter().skip(scroll).collect::<Vec<_>>()),
            body_area,
        );
        let mut foot = errors;
        foot.push(keys_line(keys, theme));
        frame.render_widget(
            Paragraph::new(foot).wrap(Wrap { trim: true }),
            Rect {
                y: inner.y + body_h,
                height: foot_h.min(inner.height),
                ..inner
            },
        );
        if let Some(col) = cursor_col {
            let y = focus_line.checked_sub(scroll).map(|l| inner.y + l as u16);
            let x = inner.x + col.min(width.saturating_sub(1)) as u16;
            if let Some(y) = y.filter(|y| *y < inner.y + body_h) {
                frame.set_cursor_position((x, y));
            }
        }
    }
}
