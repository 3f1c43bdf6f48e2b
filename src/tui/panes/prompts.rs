//! The Prompts pane: every ready server's prompts with their arguments ([optional] ones in
//! brackets); Enter opens the argument form and then shows the messages `prompts/get` returns.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

use super::resources::{empty_line, listing_notes};
use crossterm::event::KeyCode::Enter;
use crossterm::event::KeyEvent;

use super::component::Component;
use crate::tui::app::App;
use crate::tui::commands::{cmd, Command, Does::*, When::*};
use crate::tui::messages::Effect;
use crate::tui::overlay::Layer;
use crate::tui::widgets::{cell, fit, pane_block, scroll_offset, stepped};

/// The Prompts pane: the ready servers' prompts.
pub struct Prompts;

impl Component for Prompts {
    const TITLE: &'static str = "Prompts";
    const COMMANDS: &'static [Command] = &[cmd(
        Some(("Enter", "get")),
        Some(("Enter", "fill in its arguments (Tab takes a suggestion),\nCtrl-S shows the messages the server returns")),
        If(any),
        Enter,
        Opens(Layer::Modal),
    )];
    const TABBED: bool = true;

    fn key(app: &mut App, key: KeyEvent) -> Option<Vec<Effect>> {
        (key.code == Enter).then(|| app.open_prompt())
    }

    fn step(app: &mut App, delta: isize) {
        let state = &mut app.panes.prompts;
        state.selected = stepped(state.selected, delta, state.rows.len());
    }

    fn draw(app: &App, frame: &mut Frame, area: Rect, focused: bool) {
        let theme = app.theme;
        let pane = &app.panes.prompts;
        let notes = listing_notes(&pane.listings);
        let title = format!(
            " Prompts {} {}",
            pane.rows.len(),
            if notes.is_empty() {
                String::new()
            } else {
                format!("· {notes} ")
            }
        );
        let block = pane_block(title, focused, theme);
        let inner = block.inner(area);
        frame.render_widget(block, area);
        if inner.height == 0 {
            return;
        }
        if pane.rows.is_empty() {
            frame.render_widget(
                Paragraph::new(empty_line(&pane.listings, "prompts", theme))
                    .wrap(Wrap { trim: true }),
                inner,
            );
            return;
        }
        let width = usize::from(inner.width);
        let server_w = pane
            .rows
            .iter()
            .map(|r| r.server.chars().count())
            .max()
            .unwrap_or(6)
            .clamp(6, 16);
        let name_w = pane
            .rows
            .iter()
            .map(|r| r.shown_name.chars().count())
            .max()
            .unwrap_or(6)
            .clamp(6, 24);
        let args_w = (width / 4).clamp(9, 30);
        let desc_w = width.saturating_sub(2 + server_w + 2 + name_w + 2 + args_w + 2);
        frame.render_widget(
            Paragraph::new(Line::styled(
                format!(
                    "  {}  {}  {}  DESCRIPTION",
                    cell("SERVER", server_w),
                    cell("PROMPT", name_w),
                    cell("ARGUMENTS", args_w)
                ),
                theme.dim(),
            )),
            Rect { height: 1, ..inner },
        );
        let rows_h = usize::from(inner.height.saturating_sub(2));
        let offset = scroll_offset(pane.selected, rows_h, pane.rows.len());
        let lines: Vec<Line> = pane
            .rows
            .iter()
            .enumerate()
            .skip(offset)
            .take(rows_h)
            .map(|(i, r)| {
                let style = match (i == pane.selected, focused) {
                    (true, true) => theme.selected(),
                    (true, false) => theme.selected_unfocused(),
                    (false, _) => Style::default(),
                };
                let args: Vec<String> = r
                    .arguments
                    .iter()
                    .map(|a| {
                        if a.required {
                            a.name.clone()
                        } else {
                            format!("[{}]", a.name)
                        }
                    })
                    .collect();
                let args = if args.is_empty() {
                    "-".to_string()
                } else {
                    args.join(" ")
                };
                Line::from(vec![
                    Span::raw("  "),
                    Span::styled(cell(&r.server, server_w), theme.dim()),
                    Span::raw("  "),
                    Span::styled(cell(&r.shown_name, name_w), style),
                    Span::raw("  "),
                    Span::raw(cell(&args, args_w)),
                    Span::raw("  "),
                    Span::styled(fit(&r.description, desc_w), theme.dim()),
                ])
            })
            .collect();
        frame.render_widget(
            Paragraph::new(lines),
            Rect {
                y: inner.y + 1,
                height: rows_h as u16,
                ..inner
            },
        );
        if let Some(r) = pane.selected_row() {
            let args: Vec<String> = r
                .arguments
                .iter()
                .map(|a| match &a.description {
                    Some(d) => format!("{}: {d}", a.name),
                    None => a.name.clone(),
                })
                .collect();
            let about = if args.is_empty() {
                "no arguments: Enter shows its messages".to_string()
            } else {
                args.join(" · ")
            };
            frame.render_widget(
                Paragraph::new(Line::styled(fit(&about, width), theme.dim())),
                Rect {
                    y: inner.y + inner.height - 1,
                    height: 1,
                    ..inner
                },
            );
        }
    }
}

/// There is a prompt.
fn any(app: &App) -> bool {
    !app.panes.prompts.rows.is_empty()
}
