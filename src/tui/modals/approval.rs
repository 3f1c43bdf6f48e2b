//! The approval modal: the tool, its server, who asked (the agent: when, and what the model
//! wrote before the call), the arguments, what it may do *and why* (and the rule or policy that
//! asks), what changed since it was approved (a diff), and the choices. `A` (always allow) asks once more for a destructive tool.
//! Concurrent approvals queue; the count shows.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui::Frame;

use crate::approval::{ApprovalRequest, PinChange};
use crate::text::sanitize;
use crate::tool::pin::{self, DiffLine};
use crate::tool::{DestructiveBehavior, SideEffectLevel};
use crate::tui::theme::Theme;
use crate::tui::widgets::keys_line;

/// What the modal shows beside the request itself.
pub struct ApprovalView {
    /// Approvals waiting, this one included.
    pub queued: usize,
    pub scroll: u16,
    /// `A` on a destructive tool: the second question is up.
    pub confirm: bool,
    /// Who asked: the agent's lines (when, and its stated reason); empty for the operator.
    pub asked: Vec<Line<'static>>,
}

/// Draws the modal centred in `screen`: at least 60 % of its height, taller (up to all of it)
/// when the arguments need it; they wrap, and scroll when they still do not fit. Returns how
/// far they can scroll (the largest `scroll` that still shows something new).
pub fn render(
    frame: &mut Frame,
    screen: Rect,
    request: &ApprovalRequest,
    view: ApprovalView,
    theme: Theme,
) -> u16 {
    let ApprovalView {
        queued,
        scroll,
        confirm,
        asked,
    } = view;
    let title = if queued > 1 {
        format!(" Approval needed (1 of {queued}) ")
    } else {
        " Approval needed ".to_string()
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.warn())
        .title(title);

    let tool = &request.tool;
    let mut head = vec![Line::from(vec![
        Span::raw("tool    "),
        Span::styled(sanitize(&tool.name, false), theme.bold()),
    ])];
    if let Some(origin) = &tool.origin {
        head.push(Line::raw(format!(
            "server  {}  (its name for the tool: {})",
            origin.server,
            sanitize(&origin.tool, false)
        )));
    } else {
        head.push(Line::raw("server  none: a local tool"));
    }
    head.extend(asked);
    let level = match tool.side_effect {
        SideEffectLevel::Mutating => Span::styled("MUTATING", theme.warn().patch(theme.bold())),
        SideEffectLevel::ReadOnly => Span::styled("read-only", theme.ok()),
    };
    let destructive = match tool.destructive {
        DestructiveBehavior::Destructive => {
            Span::styled(", DESTRUCTIVE", theme.bad().patch(theme.bold()))
        }
        DestructiveBehavior::NonDestructive => Span::raw(", not destructive"),
    };
    head.push(Line::from(vec![Span::raw("effect  "), level, destructive]));
    // The gate's why: the traits with their provenance, and the rule or policy that asks.
    head.push(Line::raw(format!(
        "why     {}",
        sanitize(&request.why, false)
    )));
    if let Some(change) = &request.change {
        head.extend(change_lines(change, theme));
    }
    if confirm {
        head.push(Line::styled(
            format!(
                "{} is DESTRUCTIVE: always allow it, in every session, without asking?",
                sanitize(&tool.name, false)
            ),
            theme.bad().patch(theme.bold()),
        ));
    }

    let choices = if confirm {
        keys_line(
            &[
                ("y", "yes, write the rule"),
                ("n/Esc", "back to the question"),
            ],
            theme,
        )
    } else if request.session_approval_allowed() {
        keys_line(
            &[
                ("y", "allow once"),
                ("a", "allow this tool for the session"),
                ("A", "always"),
                ("n/Esc", "deny"),
            ],
            theme,
        )
    } else {
        let mut line = keys_line(
            &[("y", "allow once"), ("A", "always"), ("n/Esc", "deny")],
            theme,
        );
        line.spans.push(Span::styled(
            "  (no session approval for destructive tools)",
            theme.dim(),
        ));
        line
    };

    // Every line wraps (a long value is shown whole, never cut at the edge), so the heights
    // are the wrapped ones.
    let width = super::centered(screen, 70, 0, 76.min(screen.width), 1)
        .width
        .saturating_sub(2);
    let head_lines = head;
    let head = Paragraph::new(head_lines.clone()).wrap(Wrap { trim: false });
    let head_h = count(head.line_count(width));
    let args = sanitize(
        &serde_json::to_string_pretty(&request.arguments).unwrap_or_default(),
        true,
    );
    let arg_lines: Vec<Line> = args.lines().map(|l| Line::raw(format!("  {l}"))).collect();
    let args = Paragraph::new(arg_lines.clone()).wrap(Wrap { trim: false });
    let args_total = count(args.line_count(width));
    // On a narrow screen the choices take two rows or more.
    let choices_h = count(super::choice_rows(choices.clone(), width).len());
    // The head, the `arguments:` label, the arguments, the choices, the borders.
    let wanted = head_h
        .saturating_add(args_total)
        .saturating_add(3)
        .saturating_add(choices_h)
        .max(screen.height * 60 / 100);
    let area = super::centered(screen, 70, 0, 76.min(screen.width), wanted);
    frame.render_widget(Clear, area);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let room = inner.height.saturating_sub(choices_h);
    if head_h + 1 + args_total.min(3) > room {
        // Too short for the head beside the start of the arguments: the two scroll as one,
        // the choices stay in view.
        let mut body = head_lines;
        body.push(Line::styled("arguments:", theme.dim()));
        body.extend(arg_lines);
        let body = Paragraph::new(body).wrap(Wrap { trim: false });
        let last = count(body.line_count(width)).saturating_sub(room);
        frame.render_widget(
            body.scroll((scroll.min(last), 0)),
            Rect {
                height: room,
                ..inner
            },
        );
        super::choices_line(frame, inner, choices);
        return last;
    }
    frame.render_widget(
        head,
        Rect {
            height: head_h,
            ..inner
        },
    );
    let args_h = inner.height.saturating_sub(head_h + 1 + choices_h);
    let last = args_total.saturating_sub(args_h);
    let scroll = scroll.min(last);
    let label = if last > 0 {
        format!(
            "arguments:  lines {}–{} of {args_total} (↑↓ PgUp PgDn scroll)",
            scroll + 1,
            (scroll + args_h).min(args_total)
        )
    } else {
        "arguments:".to_string()
    };
    if inner.height > head_h + 1 {
        frame.render_widget(
            Paragraph::new(Line::styled(label, theme.dim())),
            Rect {
                y: inner.y + head_h,
                height: 1,
                ..inner
            },
        );
        frame.render_widget(
            args.scroll((scroll, 0)),
            Rect {
                y: inner.y + head_h + 1,
                height: args_h,
                ..inner
            },
        );
    }
    if inner.height > head_h {
        super::choices_line(frame, inner, choices);
    }
    last
}

/// What changed since the tool was approved: a heading, then the diff, field by field
/// (removed lines red, added green); approving pins the new definition.
fn change_lines(change: &PinChange, theme: Theme) -> Vec<Line<'static>> {
    let mut lines = vec![Line::styled(
        format!(
            "CHANGED since approved ({}: {} → now {}); approving accepts this definition:",
            sanitize(&change.by, false),
            pin::short(&change.approved),
            pin::short(&change.pin)
        ),
        theme.warn().patch(theme.bold()),
    )];
    if change.diff.is_empty() {
        lines.push(Line::styled(
            "  (the definition approved was not kept here: no diff to show)",
            theme.dim(),
        ));
    }
    for line in &change.diff {
        lines.push(match line {
            DiffLine::Field(field) => Line::styled(format!("  {field}:"), theme.bold()),
            DiffLine::Removed(text) => {
                Line::styled(format!("  - {}", sanitize(text, false)), theme.bad())
            }
            DiffLine::Added(text) => {
                Line::styled(format!("  + {}", sanitize(text, false)), theme.ok())
            }
            DiffLine::Same(text) => {
                Line::styled(format!("    {}", sanitize(text, false)), theme.dim())
            }
        });
    }
    lines
}

/// A line count as a height.
fn count(lines: usize) -> u16 {
    u16::try_from(lines).unwrap_or(u16::MAX)
}
