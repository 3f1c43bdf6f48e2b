//! The profile picker (Ctrl-P in the Conversation): the agent's profiles, the one in use
//! marked; the conversation goes on with the one picked.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;

use super::{centered, choices_line};
use crate::tui::app::App;
use crate::tui::chat::ChatState;
use crate::tui::commands::Context;
use crate::tui::hints;
use crate::tui::overlay::Layer;
use crate::tui::widgets::{fit, keys_line};

/// The profile picker over the panes.
pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let Some(selected) = app.chat.picker else {
        return;
    };
    let theme = app.theme;
    let profiles = app.chat.profiles();
    let h = (profiles.len() as u16 + 4).min(area.height);
    let rect = centered(area, 70, 30, 76.min(area.width), h);
    frame.render_widget(Clear, rect);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.focus_border())
        .title(" Agent profile ");
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    let width = inner.width as usize;
    let mut lines: Vec<Line> = profiles
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let in_use = app.chat.profile.as_deref() == Some(p.name.as_str());
            let text = format!(
                "{} {}  model {}  {}",
                if in_use { "●" } else { " " },
                p.name,
                p.model,
                ChatState::endpoint_text(p)
            );
            let style = if i == selected {
                theme.selected()
            } else {
                Style::default()
            };
            Line::styled(fit(&crate::text::sanitize(&text, false), width), style)
        })
        .collect();
    lines.insert(
        0,
        Line::styled(
            "The conversation goes on with the profile you pick (● in use).",
            theme.dim(),
        ),
    );
    frame.render_widget(Paragraph::new(lines), inner);
    choices_line(
        frame,
        inner,
        keys_line(
            &hints::keys_of(Context::Overlay(Layer::ProfilePicker)),
            theme,
        ),
    );
}
