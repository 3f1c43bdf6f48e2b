//! What the approval modal says about a call the agent asked for: that the agent asked, when,
//! in which model turn, and the text the model wrote just before the call (its stated reason);
//! for a call another MCP host made through the gateway, which host (as it named itself).

use std::time::Duration;

use ratatui::text::{Line, Span};

use crate::approval::{ApprovalRequest, CallOrigin};
use crate::text::sanitize;
use crate::tui::theme::Theme;

/// Characters of the model's reason shown (the rest is in the Conversation pane).
const REASON_CHARS: usize = 140;

/// The lines for `request` (none for the operator's own calls). `asked` is how long ago the
/// agent asked; `turn` the model turn it asked in.
pub fn lines(
    request: &ApprovalRequest,
    asked: Option<Duration>,
    turn: Option<u32>,
    theme: Theme,
) -> Vec<Line<'static>> {
    let reason = match &request.origin {
        CallOrigin::Agent { reason } => reason,
        CallOrigin::Host { name, version } => {
            let host = sanitize(format!("{name} {version}").trim(), false);
            return vec![Line::from(vec![
                Span::raw("asked   "),
                Span::styled(
                    format!("by host {host}, through the gateway"),
                    theme.accent().patch(theme.bold()),
                ),
            ])];
        }
        CallOrigin::Operator => return Vec::new(),
    };
    let mut when = String::from("by the agent");
    if let Some(turn) = turn {
        when.push_str(&format!(", in model turn {turn}"));
    }
    if let Some(ago) = asked {
        when.push_str(&format!(", {} ago", crate::text::fmt_duration(ago)));
    }
    let reason = sanitize(reason, false);
    let reason = reason.trim();
    let said = if reason.is_empty() {
        Span::styled("(the model wrote nothing before the call)", theme.dim())
    } else {
        Span::raw(format!("“{}”", crate::text::truncate(reason, REASON_CHARS)))
    };
    vec![
        Line::from(vec![
            Span::raw("asked   "),
            Span::styled(when, theme.accent().patch(theme.bold())),
        ]),
        Line::from(vec![Span::raw("reason  "), said]),
    ]
}
