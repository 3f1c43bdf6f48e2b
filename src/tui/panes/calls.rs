//! The calls pane: every call, live: awaiting approval, running (with elapsed), ok, error,
//! denied, refused (ceiling), cancelled; the tool's own name and its server, the run time (the
//! wait for approval apart) and a one-line result preview. Enter opens it whole.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

use crossterm::event::KeyCode::{Char, Enter};
use crossterm::event::KeyEvent;

use super::component::Component;
use crate::runtime::CallStatus;
use crate::tui::app::App;
use crate::tui::commands::{cmd, Command, Does::*, When::*};
use crate::tui::ingest::cancelling;
use crate::tui::messages::{Effect, Level};
use crate::tui::modals::Modal;
use crate::tui::overlay::Layer;
use crate::tui::state::short_tool_name;
use crate::tui::theme::Theme;
use crate::tui::widgets::{
    cell, fit, more_rows, pane_block, scroll_offset, spinner, stepped, Rows,
};

/// The colour of a call status.
pub fn status_style(status: CallStatus, theme: Theme) -> Style {
    match status {
        CallStatus::Ok => theme.ok(),
        CallStatus::Error | CallStatus::Denied | CallStatus::Refused => theme.bad(),
        CallStatus::AwaitingApproval => theme.warn(),
        CallStatus::Running => theme.accent(),
        CallStatus::Cancelled => theme.dim(),
    }
}

fn mark(status: CallStatus) -> &'static str {
    match status {
        CallStatus::Ok => "✓",
        CallStatus::Error => "✗",
        CallStatus::Denied => "⊘",
        CallStatus::Refused => "⊗",
        CallStatus::AwaitingApproval => "?",
        CallStatus::Cancelled => "-",
        CallStatus::Running => "",
    }
}

/// A progress bar with its figures and message, in `width` characters: `▕████░░░░▏ 3/10 step 3`.
pub fn progress_text(p: &(f64, Option<f64>, Option<String>), width: usize) -> String {
    let (done, total, message) = p;
    let figures = match total {
        Some(t) => format!("{done}/{t}"),
        None => format!("{done}"),
    };
    let bar_w = 10.min(width / 3);
    let bar = match total {
        Some(t) if *t > 0.0 && bar_w > 0 => {
            let filled = ((done / t).clamp(0.0, 1.0) * bar_w as f64).round() as usize;
            format!("▕{}{}▏ ", "█".repeat(filled), "░".repeat(bar_w - filled))
        }
        _ => String::new(),
    };
    let text = match message {
        // Nothing counted, only words (a task's state): the words alone.
        Some(m) if total.is_none() && *done == 0.0 => m.clone(),
        Some(m) => format!("{bar}{figures} {m}"),
        None => format!("{bar}{figures}"),
    };
    fit(&text, width)
}

/// The status in one short word for the list (the result view spells it out).
fn label(status: CallStatus) -> &'static str {
    match status {
        CallStatus::AwaitingApproval => "awaiting",
        other => other.as_str(),
    }
}

/// The Calls pane: every call, the newest last.
pub struct Calls;

impl Component for Calls {
    const TITLE: &'static str = "Calls";
    const HELP_TITLE: &'static str =
        "Calls (the time is the run; a wait for approval is apart: waited 3.6s)";
    const COMMANDS: &'static [Command] = &[
        cmd(
            Some(("Enter", "result")),
            Some(("Enter", "the whole result (it says both times)")),
            If(selected),
            Enter,
            Opens(Layer::Modal),
        ),
        cmd(
            Some(("c", "cancel")),
            Some(("c", "cancel the selected call (it ends at once)")),
            If(cancellable),
            Char('c'),
            Runs("CancelCall"),
        ),
    ];

    fn key(app: &mut App, key: KeyEvent) -> Option<Vec<Effect>> {
        let row = app.calls.rows.get(app.panes.calls.selected)?;
        let id = row.id;
        match key.code {
            Enter => {
                app.overlays.modal = Some(Modal::Result {
                    call: id,
                    scroll: 0,
                });
            }
            Char('c') if row.cancellable() => {
                app.notify(Level::Info, cancelling(id));
                return Some(vec![Effect::CancelCall(id)]);
            }
            Char('c') => app.notify(Level::Warn, format!("call #{id} has already ended")),
            _ => return None,
        }
        Some(Vec::new())
    }

    fn step(app: &mut App, delta: isize) {
        let state = &mut app.panes.calls;
        state.selected = stepped(state.selected, delta, app.calls.rows.len());
    }

    fn draw(app: &App, frame: &mut Frame, area: Rect, focused: bool) {
        let theme = app.theme;
        let running = app.calls.running();
        let len = app.calls.rows.len();
        // Rows that do not fit are said in the title, as the list scrolls with them: a new call
        // below the fold is seen to have come.
        let height = usize::from(area.height.saturating_sub(2));
        let offset = scroll_offset(app.panes.calls.selected, height, len);
        let more = more_rows(offset, height, len);
        let title = if running > 0 {
            format!(" Calls {len} · {more}{running} running ")
        } else {
            format!(" Calls {len} {}", more.trim_end_matches("· "))
        };
        let block = pane_block(title, focused, theme);
        let inner = block.inner(area);
        frame.render_widget(block, area);
        if app.calls.rows.is_empty() {
            frame.render_widget(
                Paragraph::new(Line::styled(
                    "No calls yet: pick a tool in Tools and press Enter.",
                    theme.dim(),
                ))
                .wrap(Wrap { trim: true }),
                inner,
            );
            return;
        }
        // mark, id, tool, status, time, preview: the tool's own name (then its server) gets what a
        // preview can spare.
        let tool_w = app
            .calls
            .tool_width
            .min((inner.width as usize).saturating_sub(2 + 5 + 10 + 7 + 12))
            .max(8);
        let lines: Vec<Line> = app
            .calls
            .rows
            .iter()
            .enumerate()
            .skip(offset)
            .take(height)
            .map(|(i, c)| {
                let live = app.now.saturating_duration_since(c.started);
                let symbol = match c.status {
                    CallStatus::Running => spinner(live),
                    other => mark(other),
                };
                let style = status_style(c.status, theme);
                let row_style = match (i == app.panes.calls.selected, focused) {
                    (true, true) => theme.selected(),
                    (true, false) => theme.selected_unfocused(),
                    (false, _) => Style::default(),
                };
                // Waiting for the operator and running are timed apart: the column says the one
                // going on (or the run, once it ended); the wait leads the preview.
                let (time, waited) = c.times(app.now);
                let preview_w = (inner.width as usize).saturating_sub(tool_w + 2 + 5 + 10 + 7);
                // Where the preview has room; the result view always says it.
                // Who asked, where the preview has room (the result view always says it; the
                // Conversation names each of the agent's calls by its number).
                let mut preview = match &c.asked_by {
                    Some(who) if preview_w >= 30 => format!("{who} · "),
                    Some(_) | None => String::new(),
                };
                if let Some(w) = waited.filter(|_| preview_w >= 30) {
                    preview.push_str(&format!("waited {} · ", crate::text::fmt_duration(w)));
                }
                match (&c.progress, c.status.is_final()) {
                    (Some(p), false) => preview.push_str(&progress_text(
                        p,
                        preview_w.saturating_sub(preview.chars().count()),
                    )),
                    _ => preview.push_str(&c.preview),
                }
                Line::from(vec![
                    Span::styled(format!("{symbol} "), style),
                    Span::styled(
                        format!("#{:<3} {}", c.id, cell(&short_tool_name(&c.tool), tool_w)),
                        row_style,
                    ),
                    Span::raw(" "),
                    Span::styled(cell(label(c.status), 9), style),
                    Span::raw(format!("{:>6} ", crate::text::fmt_duration(time))),
                    Span::styled(fit(&preview, preview_w), theme.dim()),
                ])
            })
            .collect();
        frame.render_widget(Rows(lines), inner);
    }
}

/// A call is selected.
fn selected(app: &App) -> bool {
    app.calls.rows.get(app.panes.calls.selected).is_some()
}

/// The selected call is still running.
fn cancellable(app: &App) -> bool {
    app.calls
        .rows
        .get(app.panes.calls.selected)
        .is_some_and(|r| r.cancellable())
}
