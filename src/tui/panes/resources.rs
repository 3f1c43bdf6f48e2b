//! The Resources pane: every ready server's resources and resource templates, ◉ on those
//! subscribed to and * on those updated since read; Enter reads one (a template asks for its
//! variables first), `s` subscribes or unsubscribes. The Prompts pane is in `prompts.rs`.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

use crossterm::event::KeyCode::{Char, Enter};
use crossterm::event::KeyEvent;

use super::component::Component;
use crate::tui::app::App;
use crate::tui::commands::{cmd, Command, Does::*, When::*};
use crate::tui::listing::{Listing, RowKind};
use crate::tui::messages::Effect;
use crate::tui::overlay::Layer;
use crate::tui::theme::Theme;
use crate::tui::widgets::{cell, fit, pane_block, scroll_offset, stepped};

/// What the panes say about listings under way or failed: `a listing…`, `b: failed`.
pub fn listing_notes(listings: &std::collections::BTreeMap<String, Listing>) -> String {
    let mut notes = Vec::new();
    for (server, listing) in listings {
        match listing {
            Listing::Loading => notes.push(format!("{server} listing…")),
            Listing::Failed(_) => notes.push(format!("{server} failed")),
            Listing::Loaded => {}
        }
    }
    notes.join(", ")
}

/// The line shown when a pane has no rows.
pub fn empty_line(
    listings: &std::collections::BTreeMap<String, Listing>,
    what: &str,
    theme: Theme,
) -> Line<'static> {
    let failed: Vec<String> = listings
        .values()
        .filter_map(|l| match l {
            // The reason names the server already.
            Listing::Failed(e) => Some(e.clone()),
            Listing::Loading | Listing::Loaded => None,
        })
        .collect();
    if !failed.is_empty() {
        return Line::styled(failed.join("; "), theme.bad());
    }
    if listings.values().any(|l| *l == Listing::Loading) {
        return Line::styled(format!("listing {what}…"), theme.accent());
    }
    if listings.is_empty() {
        return Line::styled(
            format!("no ready server offers {what} (see each server's capabilities in Details)"),
            theme.dim(),
        );
    }
    Line::styled(format!("no {what}"), theme.dim())
}

/// The Resources pane: the ready servers' resources and templates.
pub struct Resources;

impl Component for Resources {
    const TITLE: &'static str = "Resources";
    const SHORT_TITLE: &'static str = "Res";
    const COMMANDS: &'static [Command] = &[
        cmd(Some(("Enter", "fill in and read")), None, If(template), Enter, Opens(Layer::Modal)),
        cmd(Some(("Enter", "load")), Some(("Enter", "a skill: load its SKILL.md, shown only when its size, digest and\nfront matter are the ones listed")), If(skill), Enter, Runs("LoadSkill")),
        cmd(Some(("Enter", "read")), Some(("Enter", "read it (text scrolls; a blob: w saves it to a file);\na template: fill in its variables (suggestions: Tab)")), If(not_subscribed), Enter, Runs("ReadResource")),
        cmd(Some(("s", "unsubscribe")), None, If(subscribed), Char('s'), Runs("Subscribe")),
        cmd(Some(("s", "subscribe")), Some(("s", "subscribe / unsubscribe: ◉; * marks an update\n(an open resource is read again)")), If(not_subscribed), Char('s'), Runs("Subscribe")),
    ];
    const TABBED: bool = true;

    fn key(app: &mut App, key: KeyEvent) -> Option<Vec<Effect>> {
        match key.code {
            Enter => Some(app.open_resource()),
            Char('s') => Some(app.toggle_subscription()),
            _ => None,
        }
    }

    fn step(app: &mut App, delta: isize) {
        let state = &mut app.panes.resources;
        state.selected = stepped(state.selected, delta, state.rows.len());
    }

    fn draw(app: &App, frame: &mut Frame, area: Rect, focused: bool) {
        let theme = app.theme;
        let pane = &app.panes.resources;
        let count = |kind| pane.rows.iter().filter(|r| r.kind == kind).count();
        let (templates, skills) = (count(RowKind::Template), count(RowKind::Skill));
        let notes = listing_notes(&pane.listings);
        let title = format!(
            " Resources {}{} {}",
            pane.rows.len() - templates - skills,
            [(templates, "template"), (skills, "skill")]
                .iter()
                .filter(|(n, _)| *n > 0)
                .map(|(n, what)| format!(" + {n} {what}{}", crate::text::plural(*n)))
                .collect::<String>(),
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
                Paragraph::new(empty_line(&pane.listings, "resources", theme))
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
            .clamp(6, 16)
            // A narrow pane shares its width: the URI keeps a fifth at least.
            .min((width / 5).max(6));
        let name_w = (width / 4).clamp(8, 28);
        let mime_w = if width >= 90 { 14 } else { 0 };
        let uri_w = width.saturating_sub(4 + server_w + 2 + name_w + 2 + mime_w + 2);
        let mut header = format!(
            "    {}  {}  {}",
            cell("SERVER", server_w),
            cell("NAME", name_w),
            cell("URI", uri_w)
        );
        if mime_w > 0 {
            header.push_str(&format!("  {}", cell("MIME", mime_w)));
        }
        frame.render_widget(
            Paragraph::new(Line::styled(header, theme.dim())),
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
                let mut spans = vec![
                    Span::styled(if r.subscribed { "◉" } else { " " }, theme.accent()),
                    Span::styled(if r.updated { "*" } else { " " }, theme.warn()),
                    Span::raw("  "),
                    Span::styled(cell(&r.server, server_w), theme.dim()),
                    Span::raw("  "),
                    Span::styled(cell(&r.name, name_w), style),
                    Span::raw("  "),
                    Span::styled(
                        cell(&r.shown_uri, uri_w),
                        match r.kind {
                            RowKind::Template | RowKind::Skill => theme.accent(),
                            RowKind::Resource => Style::default(),
                        },
                    ),
                ];
                if mime_w > 0 {
                    spans.push(Span::raw("  "));
                    spans.push(Span::styled(cell(&r.mime, mime_w), theme.dim()));
                }
                Line::from(spans)
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
            let about = match r.kind {
                RowKind::Template => format!(
                    "template: Enter fills its variables{}",
                    if r.description.is_empty() {
                        String::new()
                    } else {
                        format!(" · {}", r.description)
                    }
                ),
                RowKind::Resource => {
                    let size = r.size.map(|s| format!("{s} bytes · ")).unwrap_or_default();
                    format!("{size}{}", r.description)
                }
                RowKind::Skill => format!(
                    "skill: Enter loads it, verified against the listing · {}",
                    r.description
                ),
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

/// The selected row is a template.
fn template(app: &App) -> bool {
    app.panes
        .resources
        .selected_row()
        .is_some_and(|r| r.kind == RowKind::Template)
}

/// The selected row is a skill.
fn skill(app: &App) -> bool {
    app.panes
        .resources
        .selected_row()
        .is_some_and(|r| r.kind == RowKind::Skill)
}

/// The selected row is a resource, subscribed to.
fn subscribed(app: &App) -> bool {
    app.panes
        .resources
        .selected_row()
        .is_some_and(|r| r.kind == RowKind::Resource && r.subscribed)
}

/// The selected row is a resource, not subscribed to.
fn not_subscribed(app: &App) -> bool {
    app.panes
        .resources
        .selected_row()
        .is_some_and(|r| r.kind == RowKind::Resource && !r.subscribed)
}
