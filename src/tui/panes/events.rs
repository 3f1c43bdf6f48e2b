//! The Events pane: what servers push and what the supervisor does, as it happens — log
//! messages with their levels, list changes and the diffs they led to, requests from servers,
//! restarts, rewake matches, hook runs. The last lines are kept; the counts stay exact.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

use crossterm::event::KeyCode::{Char, End, Enter, Up};
use crossterm::event::KeyEvent;

use super::component::Component;
use crate::runtime::LogLevel;
use crate::tui::app::App;
use crate::tui::commands::{cmd, Command, Does::*, When::*};
use crate::tui::messages::Effect;
use crate::tui::overlay::Layer;
use crate::tui::state::EventKind;
use crate::tui::theme::Theme;
use crate::tui::widgets::{cell, fit, pane_block, scroll_offset, stepped, Rows};

/// The tag and colour of a line.
pub fn tag(kind: EventKind, theme: Theme) -> (&'static str, Style) {
    match kind {
        EventKind::Log(level) => match level {
            LogLevel::Debug => ("debug", theme.dim()),
            LogLevel::Info => ("info", Style::default()),
            LogLevel::Notice => ("notice", Style::default()),
            LogLevel::Warning => ("warning", theme.warn()),
            LogLevel::Error => ("error", theme.bad()),
            LogLevel::Critical => ("critical", theme.bad()),
            LogLevel::Alert => ("alert", theme.bad()),
            LogLevel::Emergency => ("emergency", theme.bad()),
        },
        EventKind::Notice => ("notice", theme.accent()),
        EventKind::Request => ("request", theme.accent()),
        EventKind::Tools => ("tools", theme.warn()),
        EventKind::Supervisor => ("restart", theme.bad()),
        EventKind::Rewake => ("rewake", theme.ok()),
        EventKind::Hook => ("hook", theme.accent()),
        EventKind::Dropped => ("dropped", theme.bad()),
    }
}

/// The Events pane: the newest lines, followed until a line is selected.
pub struct Events;

impl Component for Events {
    const TITLE: &'static str = "Events";
    const COMMANDS: &'static [Command] = &[
        cmd(
            Some(("Enter", "whole line")),
            Some(("Enter", "the whole line")),
            If(any),
            Enter,
            Opens(Layer::Modal),
        ),
        cmd(
            Some(("↑↓", "scroll")),
            Some((
                "↑ ↓  PgUp PgDn",
                "scroll back; End follows the newest again",
            )),
            Always,
            Up,
            Moves,
        ),
        cmd(Some(("End", "follow")), None, If(holding), End, Moves),
    ];

    fn key(app: &mut App, key: KeyEvent) -> Option<Vec<Effect>> {
        match key.code {
            Enter => app.open_event(),
            End | Char('G') => app.panes.events.selected = None,
            _ => return None,
        }
        Some(Vec::new())
    }

    /// Moving down past the newest line follows new lines again.
    fn step(app: &mut App, delta: isize) {
        let len = app.events.rows.len();
        let state = &mut app.panes.events;
        let at = state.selected.unwrap_or(len.saturating_sub(1));
        let next = stepped(at, delta, len);
        state.selected = (next + 1 < len || delta < 0).then_some(next);
    }

    fn draw(app: &App, frame: &mut Frame, area: Rect, focused: bool) {
        let theme = app.theme;
        let log = &app.events;
        let mut title = format!(" Events {} ", log.total);
        if log.not_kept() > 0 {
            title = format!(" Events {} (last {} kept) ", log.total, log.rows.len());
        }
        if log.dropped_upstream > 0 {
            title.push_str(&format!("· {} dropped ", log.dropped_upstream));
        }
        if app.panes.events.selected.is_none() && focused {
            title.push_str("· following ");
        }
        let block = pane_block(title, focused, theme);
        let inner = block.inner(area);
        frame.render_widget(block, area);
        if log.rows.is_empty() {
            frame.render_widget(
                Paragraph::new(Line::styled(
                    "Server logs, list changes, requests and restarts show here.",
                    theme.dim(),
                ))
                .wrap(Wrap { trim: true }),
                inner,
            );
            return;
        }
        let height = inner.height as usize;
        let len = log.rows.len();
        let selected = app.panes.events.selected.unwrap_or(len - 1);
        let offset = scroll_offset(selected, height, len);
        // As wide as the longest server name, so the column stays put as the lines scroll (and
        // wider where a line names a server no longer configured).
        let server_w = app
            .servers
            .iter()
            .map(|s| s.name.as_str())
            .chain(
                log.rows
                    .iter()
                    .skip(offset)
                    .take(height)
                    .map(|r| r.server.as_str()),
            )
            .map(|name| name.chars().count())
            .max()
            .unwrap_or(0)
            .clamp(1, 16);
        let lines: Vec<Line> = log
            .rows
            .iter()
            .enumerate()
            .skip(offset)
            .take(height)
            .map(|(i, row)| {
                let (word, style) = tag(row.kind, theme);
                let text_w = (inner.width as usize).saturating_sub(server_w + 20);
                let row_style = if app.panes.events.selected == Some(i) && focused {
                    theme.selected()
                } else {
                    Style::default()
                };
                Line::from(vec![
                    Span::styled(
                        format!("{:>7} ", crate::text::fmt_duration(row.at)),
                        theme.dim(),
                    ),
                    Span::styled(cell(&row.server, server_w), row_style),
                    Span::raw(" "),
                    Span::styled(cell(word, 9), style),
                    Span::raw(" "),
                    Span::raw(fit(&row.text, text_w)),
                ])
            })
            .collect();
        frame.render_widget(Rows(lines), inner);
    }
}

/// There is a line.
fn any(app: &App) -> bool {
    !app.events.rows.is_empty()
}

/// A line is held rather than the newest followed.
fn holding(app: &App) -> bool {
    app.panes.events.selected.is_some()
}
