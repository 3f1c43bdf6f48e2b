//! A server asks the console's model for a message (`sampling/createMessage`): the modal shows
//! what it asks (system prompt, messages, max tokens, temperature, stop sequences, model
//! preferences, included context, tools) before any model runs; then the model at work; then
//! its answer in an editor, sent back only on Ctrl-S. Everything from the server and the model
//! is sanitized before it is drawn. Like an elicitation, it comes before any other modal.

use std::time::Instant;

use tokio_util::sync::CancellationToken;

use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui::Frame;
use serde_json::Value;

use crate::runtime::SamplingRequest;
use crate::runtime::{SamplingAsk, SamplingRole};
use crate::text::{sanitize, sanitize_line};
use crate::tui::chat::input::InputBox;
use crate::tui::theme::Theme;
use crate::tui::widgets::keys_line;

/// Where one request is.
#[derive(Debug)]
pub enum SamplingStage {
    /// Shown, waiting for the operator; `problem` says why the last try gave nothing.
    Review { problem: Option<String> },
    /// The model is answering; Esc stops it.
    Asking {
        cancel: CancellationToken,
        since: Instant,
    },
    /// The model's answer, editable; it goes back only on Ctrl-S.
    Answer {
        editor: InputBox,
        original: String,
        model: String,
        finish_reason: Option<String>,
    },
}

/// A server's sampling request as the console holds it.
#[derive(Debug)]
pub struct Sampling {
    pub request: SamplingRequest,
    pub stage: SamplingStage,
    /// Rows scrolled in the request.
    pub scroll: u16,
}

impl Sampling {
    /// Stops the model if it is answering.
    pub(in crate::tui) fn stop(&mut self) {
        if let SamplingStage::Asking { cancel, .. } = &self.stage {
            cancel.cancel();
        }
    }
}

/// Characters of a tool's schema shown.
const SCHEMA_CHARS: usize = 200;

/// What the view shows besides the request: how many wait, the model, the time, the keys.
pub struct SamplingView<'a> {
    pub queued: usize,
    pub model: &'a str,
    pub now: Instant,
    pub keys: Vec<(&'static str, &'static str)>,
}

/// `modelPreferences` in words: hints, then the priorities.
fn preferences(value: &Value) -> String {
    let mut parts = Vec::new();
    let hints: Vec<String> = value["hints"]
        .as_array()
        .map(|hints| {
            hints
                .iter()
                .filter_map(|h| h["name"].as_str())
                .map(|n| sanitize_line(n, 60))
                .collect()
        })
        .unwrap_or_default();
    if !hints.is_empty() {
        parts.push(format!("hints {}", hints.join(", ")));
    }
    for (key, name) in [
        ("costPriority", "cost"),
        ("speedPriority", "speed"),
        ("intelligencePriority", "intelligence"),
    ] {
        if let Some(p) = value[key].as_f64() {
            parts.push(format!("{name} {p:.2}"));
        }
    }
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(" · ")
    }
}

fn labelled(label: &str, text: String, theme: Theme) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!("{label:<19}"), theme.dim()),
        Span::raw(text),
    ])
}

/// The request as lines (sanitized).
pub fn request_lines(ask: &SamplingAsk, model: &str, theme: Theme) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    match ask
        .system_prompt
        .as_deref()
        .filter(|s| !s.trim().is_empty())
    {
        Some(system) => {
            lines.push(Line::styled("system prompt", theme.dim()));
            for l in sanitize(system, true).lines() {
                lines.push(Line::raw(format!("  {l}")));
            }
        }
        None => lines.push(labelled("system prompt", "(none)".into(), theme)),
    }
    for m in &ask.messages {
        let who = match m.role {
            SamplingRole::User => "user",
            SamplingRole::Assistant => "assistant",
        };
        lines.push(Line::styled(who, theme.bold()));
        let text = sanitize(&m.text, true);
        if text.is_empty() {
            lines.push(Line::styled("  (empty)", theme.dim()));
        }
        for l in text.lines() {
            lines.push(Line::raw(format!("  {l}")));
        }
    }
    let mut limits = vec![format!("{}", ask.max_tokens)];
    if let Some(t) = ask.temperature {
        limits.push(format!("temperature {t:.2}"));
    }
    if !ask.stop_sequences.is_empty() {
        let stops: Vec<String> = ask
            .stop_sequences
            .iter()
            .map(|s| format!("{:?}", sanitize_line(s, 40)))
            .collect();
        limits.push(format!("stop {}", stops.join(", ")));
    }
    lines.push(labelled("max tokens", limits.join(" · "), theme));
    lines.push(labelled(
        "model preferences",
        ask.model_preferences
            .as_ref()
            .map_or_else(|| "none".into(), preferences),
        theme,
    ));
    lines.push(labelled(
        "include context",
        match ask.include_context.as_deref() {
            None => "not asked".into(),
            Some(c) => format!(
                "{} (only the messages above are sent)",
                sanitize_line(c, 40)
            ),
        },
        theme,
    ));
    if !ask.tools.is_empty() {
        lines.push(labelled(
            "tools",
            format!(
                "{} offered (shown only: the model answers in text)",
                ask.tools.len()
            ),
            theme,
        ));
        for tool in &ask.tools {
            lines.push(Line::raw(format!(
                "  {} — {}",
                sanitize_line(&tool.name, 60),
                sanitize_line(&tool.description, 120)
            )));
            lines.push(Line::styled(
                format!(
                    "    {}",
                    sanitize_line(&tool.input_schema.to_string(), SCHEMA_CHARS)
                ),
                theme.dim(),
            ));
        }
    }
    lines.push(labelled(
        "answered by",
        format!("{} (the agent's model)", sanitize_line(model, 60)),
        theme,
    ));
    lines
}

/// Draws the first request.
pub fn render(
    frame: &mut Frame,
    area: Rect,
    sampling: &Sampling,
    view: SamplingView,
    theme: Theme,
) {
    let SamplingView {
        queued,
        model,
        now,
        keys,
    } = view;
    frame.render_widget(Clear, area);
    let server = sanitize_line(&sampling.request.server, 60);
    let title = if queued > 1 {
        format!(" {server} asks for a model's message (1 of {queued}) ")
    } else {
        format!(" {server} asks for a model's message ")
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.warn())
        .title(title);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let request = request_lines(&sampling.request.ask, model, theme);
    let keys = keys_line(&keys, theme);
    match &sampling.stage {
        SamplingStage::Review { problem } => {
            let [body, status, choices] = Layout::vertical([
                Constraint::Min(1),
                Constraint::Length(1),
                Constraint::Length(1),
            ])
            .areas(inner);
            frame.render_widget(
                Paragraph::new(request)
                    .wrap(Wrap { trim: false })
                    .scroll((sampling.scroll, 0)),
                body,
            );
            let line = match problem {
                Some(p) => Line::styled(sanitize_line(p, 300), theme.bad()),
                None => Line::styled(
                    "Nothing runs until y; you see the answer before it goes back.",
                    theme.dim(),
                ),
            };
            frame.render_widget(Paragraph::new(line), status);
            frame.render_widget(Paragraph::new(keys), choices);
        }
        SamplingStage::Asking { since, .. } => {
            let [body, status, choices] = Layout::vertical([
                Constraint::Min(1),
                Constraint::Length(1),
                Constraint::Length(1),
            ])
            .areas(inner);
            frame.render_widget(
                Paragraph::new(request)
                    .wrap(Wrap { trim: false })
                    .scroll((sampling.scroll, 0)),
                body,
            );
            frame.render_widget(
                Paragraph::new(Line::styled(
                    format!(
                        "{} is answering… {}",
                        sanitize_line(model, 60),
                        crate::text::fmt_duration(now.saturating_duration_since(*since))
                    ),
                    theme.accent(),
                )),
                status,
            );
            frame.render_widget(Paragraph::new(keys), choices);
        }
        SamplingStage::Answer {
            editor,
            original,
            model,
            finish_reason,
        } => {
            let [body, label, answer, choices] = Layout::vertical([
                Constraint::Percentage(40),
                Constraint::Length(1),
                Constraint::Min(1),
                Constraint::Length(1),
            ])
            .areas(inner);
            frame.render_widget(
                Paragraph::new(request)
                    .wrap(Wrap { trim: false })
                    .scroll((sampling.scroll, 0)),
                body,
            );
            let edited = editor.text() != *original;
            let mut what = format!("answer of {}", sanitize_line(model, 60));
            if let Some(reason) = finish_reason {
                what.push_str(&format!(" ({})", sanitize_line(reason, 30)));
            }
            what.push_str(if edited {
                " · edited"
            } else {
                " · edit it, or send it as is"
            });
            frame.render_widget(Paragraph::new(Line::styled(what, theme.bold())), label);
            // The editor's lines were sanitized when the answer arrived; typed text has no
            // control characters (the input box drops them).
            let (rows, (cursor_row, cursor_x)) =
                wrap_editor(editor.lines(), editor.cursor(), answer.width as usize);
            let height = (answer.height as usize).max(1);
            let top = (cursor_row + 1).saturating_sub(height);
            let lines: Vec<Line> = rows
                .into_iter()
                .skip(top)
                .take(height)
                .map(Line::raw)
                .collect();
            frame.render_widget(Paragraph::new(lines), answer);
            let x = answer.x + (cursor_x as u16).min(answer.width.saturating_sub(1));
            let y = answer.y + (cursor_row - top) as u16;
            if y < answer.y + answer.height {
                frame.set_cursor_position(Position { x, y });
            }
            frame.render_widget(Paragraph::new(keys), choices);
        }
    }
}

/// The editor's lines cut to `width` characters a row, and where the cursor lands (row, x).
fn wrap_editor(
    lines: &[String],
    (row, col): (usize, usize),
    width: usize,
) -> (Vec<String>, (usize, usize)) {
    let width = width.max(1);
    let mut rows = Vec::new();
    let mut cursor = (0, 0);
    for (i, line) in lines.iter().enumerate() {
        let chars: Vec<char> = line.chars().collect();
        if i == row {
            cursor = (rows.len() + col / width, col % width);
        }
        if chars.is_empty() {
            rows.push(String::new());
        }
        for chunk in chars.chunks(width) {
            rows.push(chunk.iter().collect());
        }
        // A cursor just past a full row sits at the start of the next one.
        if i == row && col > 0 && col % width == 0 && col == chars.len() {
            rows.push(String::new());
        }
    }
    (rows, cursor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_editor_wraps_and_the_cursor_follows() {
        let lines = vec!["abcdef".to_string(), String::new(), "xy".to_string()];
        let (rows, cursor) = wrap_editor(&lines, (0, 5), 4);
        assert_eq!(rows, vec!["abcd", "ef", "", "xy"]);
        assert_eq!(cursor, (1, 1));
        assert_eq!(wrap_editor(&lines, (2, 2), 4).1, (3, 2));
        let (rows, cursor) = wrap_editor(&["abcd".to_string()], (0, 4), 4);
        assert_eq!(rows, vec!["abcd", ""]);
        assert_eq!(cursor, (1, 0));
    }
}
