//! The tools pane: qualified and raw name, side effect, destructive, trust and why; filter
//! with `/`; Enter opens the argument editor. `⚑` marks a flagged tool, `≠` one changed since
//! approved, `*` one whose listing just changed.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

use crossterm::event::KeyCode::{self, Char, Enter, Esc};
use crossterm::event::{KeyEvent, KeyModifiers};

use super::component::Component;
use crate::tool::SideEffectLevel;
use crate::tui::app::{App, RuntimeState};
use crate::tui::commands::{cmd, Command, Does::*, When::*};
use crate::tui::messages::Effect;
use crate::tui::overlay::Layer;
use crate::tui::pane_state::ToolsPane;
use crate::tui::state::ToolRow;
use crate::tui::widgets::{cell, fit, pane_block, scroll_offset, stepped, Rows};

/// The Tools pane: every tool, filtered by its line (`/`).
pub struct Tools;

impl Component for Tools {
    const TITLE: &'static str = "Tools";
    const COMMANDS: &'static [Command] = &[
        cmd(Some(("Enter", "call")), Some(("Enter", "call it: a form, a field per argument (↑ ↓ Tab move;\n* required; defaults and your last arguments filled\nin), Ctrl-R raw JSON and back, Ctrl-S sends")), Always, Enter, Opens(Layer::Modal)),
        cmd(Some(("d", "describe")), Some(("d", "its whole description, traits and input schema")), Always, Char('d'), Opens(Layer::Modal)),
        cmd(Some(("/", "filter")), Some(("/", "filter by name or description (Ctrl-U empties it,\nEsc clears it)")), Always, Char('/'), Moves),
    ];
    const TABBED: bool = true;

    /// The filter line, while it is being written.
    fn typing(app: &App) -> bool {
        app.panes.tools.filter_editing
    }

    fn key(app: &mut App, key: KeyEvent) -> Option<Vec<Effect>> {
        let state = &mut app.panes.tools;
        if state.filter_editing {
            filter_key(state, key);
            return Some(Vec::new());
        }
        match key.code {
            Char('/') => {
                state.filter.clear();
                state.selected = 0;
                state.filter_editing = true;
            }
            Esc if !state.filter.is_empty() => {
                state.filter.clear();
                state.selected = 0;
            }
            Enter => app.open_editor(),
            Char('d') => app.open_tool_about(),
            _ => return None,
        }
        Some(Vec::new())
    }

    /// Leaving it while its filter line is open keeps the filter, as Enter does.
    fn left(app: &mut App) {
        app.panes.tools.filter_editing = false;
    }

    fn step(app: &mut App, delta: isize) {
        let len = app.visible_tools().len();
        let state = &mut app.panes.tools;
        state.selected = stepped(state.selected, delta, len);
    }

    fn draw(app: &App, frame: &mut Frame, area: Rect, focused: bool) {
        let theme = app.theme;
        let tools = app.visible_tools();
        let mut title = if app.panes.tools.filter.is_empty() {
            format!(" Tools {}", app.tools.len())
        } else {
            format!(" Tools {} of {}", tools.len(), app.tools.len())
        };
        // With tool search the model sees only some: say how many.
        if let Some(offered) = app
            .chat
            .offered
            .as_ref()
            .filter(|o| o.len() < app.tools.len())
        {
            title.push_str(&format!(" · the model sees {}", offered.len()));
        }
        title.push(' ');
        let block = pane_block(title, focused, theme);
        let inner = block.inner(area);
        frame.render_widget(block, area);
        if inner.height == 0 {
            return;
        }
        let mut y = inner.y;
        let mut height = inner.height;
        if app.panes.tools.filter_editing || !app.panes.tools.filter.is_empty() {
            let cursor = if app.panes.tools.filter_editing {
                "▏"
            } else {
                ""
            };
            frame.render_widget(
                Rows(vec![Line::from(vec![
                    Span::styled("/", theme.key()),
                    Span::raw(format!("{}{cursor}", app.panes.tools.filter)),
                ])]),
                Rect {
                    y,
                    height: 1,
                    ..inner
                },
            );
            y += 1;
            height -= 1;
        }
        if tools.is_empty() {
            let starting = app
                .servers
                .iter()
                .any(|s| s.status == crate::runtime::ServerStatus::Starting);
            let text = match &app.session.runtime {
                RuntimeState::Starting => "waiting for the servers to start…",
                RuntimeState::Failed(_) => "no tools: the runtime did not start",
                RuntimeState::Ready(_) | RuntimeState::Attached(_)
                    if app.tools.is_empty() && starting =>
                {
                    "no tools yet: each server's tools join as soon as it is ready"
                }
                RuntimeState::Ready(_) | RuntimeState::Attached(_) if app.tools.is_empty() => {
                    "no tools"
                }
                RuntimeState::Ready(_) | RuntimeState::Attached(_) => "no tool matches the filter",
            };
            frame.render_widget(
                Paragraph::new(Line::styled(text, theme.dim())).wrap(Wrap { trim: true }),
                Rect { y, height, ..inner },
            );
            return;
        }
        let wide = inner.width >= 70;
        // A narrow pane cuts the names (the line under the table has the selected one whole), then
        // drops DESTR, so that the effect shows whole.
        let width = usize::from(inner.width);
        let destr = wide || width >= 8 + 20;
        let widest = if wide { 36 } else { 30 };
        let name_w = longest_name(&tools, widest)
            .clamp(8, widest)
            .min(width.saturating_sub(if destr { 20 } else { 13 }))
            .max(8);
        // Header, rows, and one line describing the selected tool.
        let header = if wide {
            format!(
                "  {}  SIDE EFFECT  DESTR  TRUST   WHY",
                cell("TOOL", name_w)
            )
        } else if destr {
            format!("  {}  EFFECT     DESTR", cell("TOOL", name_w))
        } else {
            format!("  {}  EFFECT", cell("TOOL", name_w))
        };
        frame.render_widget(
            Rows(vec![Line::styled(header, theme.dim())]),
            Rect {
                y,
                height: 1,
                ..inner
            },
        );
        let rows_h = height.saturating_sub(3) as usize;
        let offset = scroll_offset(app.panes.tools.selected, rows_h, tools.len());
        let lines: Vec<Line> = tools
            .iter()
            .enumerate()
            .skip(offset)
            .take(rows_h)
            .map(|(i, t)| {
                let selected = i == app.panes.tools.selected;
                let name_style = match (selected, focused) {
                    (true, true) => theme.selected(),
                    (true, false) => theme.selected_unfocused(),
                    (false, _) => Style::default(),
                };
                let (effect, effect_style) = match t.side_effect {
                    SideEffectLevel::Mutating => ("MUTATING", theme.warn()),
                    SideEffectLevel::ReadOnly => ("read-only", theme.ok()),
                };
                let destructive = t.destructive.is_destructive();
                let mut spans = vec![
                    match (&t.flagged, t.pin.is_changed(), t.changed) {
                        (Some(_), _, _) => Span::styled("⚑ ", theme.bad()),
                        (None, true, _) => Span::styled("≠ ", theme.bad()),
                        (None, false, true) => Span::styled("* ", theme.warn()),
                        (None, false, false) => Span::raw("  "),
                    },
                    Span::styled(cell(&t.name, name_w), name_style),
                    Span::raw("  "),
                    Span::styled(cell(effect, if wide { 11 } else { 9 }), effect_style),
                ];
                if destr {
                    spans.push(Span::raw("  "));
                    spans.push(Span::styled(
                        cell(if destructive { "yes" } else { "no" }, 5),
                        if destructive {
                            theme.bad()
                        } else {
                            Style::default()
                        },
                    ));
                }
                if wide {
                    let trust = t.trust.map_or("local", |tr| tr.as_str());
                    let why_w = (inner.width as usize).saturating_sub(name_w + 32);
                    spans.push(Span::styled(format!("  {}  ", cell(trust, 6)), theme.dim()));
                    if t.pin.is_changed() {
                        spans.push(Span::styled(
                            fit("changed since approved", why_w),
                            theme.bad(),
                        ));
                    } else {
                        spans.push(Span::styled(fit(&t.provenance, why_w), theme.dim()));
                    }
                }
                Line::from(spans)
            })
            .collect();
        frame.render_widget(
            Rows(lines),
            Rect {
                y: y + 1,
                height: rows_h as u16,
                ..inner
            },
        );
        if let Some(t) = tools.get(app.panes.tools.selected) {
            let raw = match &t.server {
                Some(server) => format!("{server} calls it {}", t.raw),
                None => "local tool".to_string(),
            };
            let desc = if t.description.is_empty() {
                String::new()
            } else {
                format!(" · {}", t.description)
            };
            let width = inner.width as usize;
            let why = match &t.flagged {
                Some(flags) => Line::from(vec![
                    Span::styled("⚑ flagged: ", theme.bad()),
                    Span::raw(fit(flags, width.saturating_sub(11))),
                ]),
                None if t.pin.is_changed() => Line::from(vec![
                    Span::styled("≠ ", theme.bad()),
                    Span::raw(fit(&t.pin.words(), width.saturating_sub(2))),
                ]),
                None => Line::from(vec![
                    Span::styled("why: ", theme.dim()),
                    Span::raw(fit(&t.provenance, width.saturating_sub(5))),
                ]),
            };
            let seen = match &app.chat.offered {
                Some(offered) if offered.len() < app.tools.len() => {
                    if offered.contains(&t.name) {
                        " · offered to the model"
                    } else {
                        " · not offered to the model in its last turn"
                    }
                }
                _ => "",
            };
            let about = vec![
                Line::styled(fit(&format!("{raw}{seen}{desc}"), width), theme.dim()),
                why,
            ];
            frame.render_widget(
                Rows(about),
                Rect {
                    y: y + height.saturating_sub(2),
                    height: height.min(2),
                    ..inner
                },
            );
        }
    }
}

/// A key on the filter line.
fn filter_key(state: &mut ToolsPane, key: KeyEvent) {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    match key.code {
        Enter => state.filter_editing = false,
        Esc => {
            state.filter_editing = false;
            state.filter.clear();
        }
        KeyCode::Backspace => {
            state.filter.pop();
        }
        // Ctrl-U empties it (as in a shell); other Ctrl keys type nothing.
        Char('u') if ctrl => state.filter.clear(),
        Char(c) if !ctrl => state.filter.push(c),
        _ => {}
    }
    state.selected = 0;
}

/// The most characters of any tool's name, or of the first name found with at least `cap`
/// (the column is no wider). A name's characters are counted only when its bytes could make it
/// the longest so far (a character is at least a byte): with thousands of tools a frame counts
/// a few names, not all.
fn longest_name(tools: &[&ToolRow], cap: usize) -> usize {
    let mut longest = 0;
    for tool in tools {
        if tool.name.len() > longest {
            longest = longest.max(tool.name.chars().count());
            if longest >= cap {
                break;
            }
        }
    }
    longest
}
