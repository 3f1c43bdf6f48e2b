//! The full result of one call, scrollable.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui::Frame;

use crate::runtime::CallStatus;
use crate::tui::panes::calls::status_style;
use crate::tui::state::CallRow;
use crate::tui::theme::Theme;

/// What the approval gate did with the call, in words.
fn gate_words(call: &CallRow) -> &str {
    match (&call.decided, call.status) {
        (Some(decided), _) => decided,
        (None, CallStatus::AwaitingApproval) => "waiting for an answer",
        (None, CallStatus::Denied | CallStatus::Refused) => "stopped it (the result says why)",
        // Cancelled while its hooks ran or before the gate: it said nothing.
        (None, CallStatus::Cancelled) => "-",
        (None, _) if call.asked_at.is_some() => "asked for approval",
        (None, _) => "allowed without asking by the policy",
    }
}

/// Draws the call in `area`; returns how far it can scroll.
pub fn render(frame: &mut Frame, area: Rect, call: &CallRow, scroll: u16, theme: Theme) -> u16 {
    frame.render_widget(Clear, area);
    let block = |keys: &str| {
        Block::default()
            .borders(Borders::ALL)
            .border_style(theme.focus_border())
            .title(format!(" Call #{} {}  ({keys}) ", call.id, call.tool))
    };
    let mut lines = vec![
        Line::from(vec![
            Span::raw("status: "),
            Span::styled(call.status.as_str(), status_style(call.status, theme)),
            Span::raw(match (call.elapsed, call.waited) {
                // Answered no, not at all, or cancelled while it waited: it never ran.
                (Some(_), Some(w)) if !call.ran => {
                    format!(
                        "   after waiting {} for approval",
                        crate::text::fmt_duration(w)
                    )
                }
                (Some(_), Some(w)) => format!(
                    "   ran {} after waiting {} for approval",
                    crate::text::fmt_duration(call.run_time(call.started)),
                    crate::text::fmt_duration(w)
                ),
                (Some(d), None) => format!("   took {}", crate::text::fmt_duration(d)),
                (None, _) => String::new(),
            }),
        ]),
        Line::raw(match call.asked_by.as_deref() {
            None => "asked by: you".to_string(),
            Some("agent") => "asked by: the agent".to_string(),
            Some(host) => format!("asked by: {host}, through the gateway"),
        }),
        Line::raw(format!("gate: {}", gate_words(call))),
        Line::styled("arguments:", theme.dim()),
    ];
    lines.extend(call.arguments.lines().map(|l| Line::raw(format!("  {l}"))));
    lines.push(Line::styled("result:", theme.dim()));
    lines.extend(call.result.lines().map(|l| Line::raw(format!("  {l}"))));
    let result = Paragraph::new(lines)
        .block(block(""))
        .wrap(Wrap { trim: false });
    let last = super::scroll_limit(result.line_count(area.width), area.height);
    // Scrolling is offered only when there is more to see.
    let keys = if last > 0 {
        "Esc closes, ↑↓ scroll"
    } else {
        "Esc closes"
    };
    frame.render_widget(
        result.block(block(keys)).scroll((scroll.min(last), 0)),
        area,
    );
    last
}
