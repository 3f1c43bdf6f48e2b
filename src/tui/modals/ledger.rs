//! `L`: what lets tools run without a question, and where each came from: the rules of the
//! config file (`policy.rules`, they last; `A` in the approval modal adds one) and the
//! approvals remembered for this session (`a`). Each can be revoked: a rule is removed from
//! the file, a session approval forgotten.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;

use crate::config::{ApprovalRule, RuleDecision};
use crate::text::sanitize;
use crate::tui::theme::Theme;
use crate::tui::widgets::{cell, fit};

/// One line of the modal.
#[derive(Debug, Clone)]
pub enum LedgerRow {
    /// `policy.rules[index]` of the config file; over `attach`, `from` says which rule of
    /// which daemon's file it is (`index` is then the console's name for it).
    Rule {
        index: usize,
        rule: ApprovalRule,
        from: Option<String>,
    },
    /// "Allow this tool for the session", given for a definition with this fingerprint.
    Session { tool: String, fingerprint: String },
}

/// `rows` as known, the one `selected`, and whether the daemons are still being asked
/// (`asking`: over `attach`, before they first answer).
pub fn render(
    frame: &mut Frame,
    area: Rect,
    (rows, selected, asking): (&[LedgerRow], usize, bool),
    config_file: &str,
    theme: Theme,
) {
    frame.render_widget(Clear, area);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.focus_border())
        .title(if rows.is_empty() {
            " Rules and session approvals  (Esc close) "
        } else {
            " Rules and session approvals  (d revoke, Esc close) "
        });
    let inner = block.inner(area);
    let mut lines = Vec::new();
    if asking {
        lines.push(Line::raw(
            "Asking the daemon for its rules and session approvals…",
        ));
    } else if rows.is_empty() {
        lines.push(Line::raw("No rule and no session approval."));
        lines.push(Line::styled(
            "In the approval modal, `a` allows a tool for the session (not if destructive),",
            theme.dim(),
        ));
        lines.push(Line::styled(
            "`A` always (a rule in policy.rules of the config file).",
            theme.dim(),
        ));
    }
    let width = usize::from(inner.width);
    let name_w = rows
        .iter()
        .map(|r| what(r).chars().count())
        .max()
        .unwrap_or(0)
        .clamp(8, width.saturating_sub(30).max(8));
    for (i, row) in rows.iter().enumerate() {
        let style = if i == selected {
            theme.selected()
        } else {
            Style::default()
        };
        let (decision, decision_style, from) = match row {
            LedgerRow::Rule { index, rule, from } => (
                rule.decision.as_str(),
                match rule.decision {
                    RuleDecision::Allow => theme.ok(),
                    RuleDecision::Deny => theme.bad(),
                    RuleDecision::Ask => theme.warn(),
                },
                from.clone()
                    .unwrap_or_else(|| format!("policy.rules[{index}] in {config_file}")),
            ),
            LedgerRow::Session { fingerprint, .. } => (
                "allow",
                theme.ok(),
                format!("this session (a), fingerprint {fingerprint}"),
            ),
        };
        let from_w = width.saturating_sub(name_w + 10);
        lines.push(Line::from(vec![
            Span::styled(format!(" {} ", cell(&what(row), name_w)), style),
            Span::styled(format!("{decision:<6}"), decision_style),
            Span::styled(fit(&from, from_w), theme.dim()),
        ]));
    }
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// What the row is about: a tool's name, or a rule's pattern (and the pin it holds).
fn what(row: &LedgerRow) -> String {
    match row {
        LedgerRow::Rule { rule, .. } => match &rule.pin {
            Some(pin) => format!(
                "{}, pinned {}",
                sanitize(&rule.pattern.describe(), false),
                crate::tool::pin::short(pin)
            ),
            None => sanitize(&rule.pattern.describe(), false),
        },
        LedgerRow::Session { tool, .. } => sanitize(tool, false),
    }
}
