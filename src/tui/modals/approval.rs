//! The approval modal: the tool, its server, who asked (the agent: when, and what the model
//! wrote before the call), the arguments, what it may do *and why*, and the choices.
//! Concurrent approvals queue; the count shows.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};
use ratatui::Frame;

use crate::approval::ApprovalRequest;
use crate::text::sanitize;
use crate::tool::{DestructiveBehavior, SideEffectLevel};
use crate::tui::panes::keys_line;
use crate::tui::theme::Theme;

pub fn render(
    frame: &mut Frame,
    area: Rect,
    request: &ApprovalRequest,
    queued: usize,
    scroll: u16,
    asked: Vec<Line<'static>>,
    theme: Theme,
) {
    frame.render_widget(Clear, area);
    let title = if queued > 1 {
        format!(" Approval needed (1 of {queued}) ")
    } else {
        " Approval needed ".to_string()
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.warn())
        .title(title);
    let inner = block.inner(area);
    frame.render_widget(block, area);

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
    head.push(Line::raw(format!(
        "why     {}",
        sanitize(&tool.provenance, false)
    )));
    head.push(Line::styled("arguments:", theme.dim()));

    let choices = if request.session_approval_allowed() {
        keys_line(
            &[
                ("y", "allow once"),
                ("a", "allow this tool for the session"),
                ("n/Esc", "deny"),
            ],
            theme,
        )
    } else {
        let mut line = keys_line(&[("y", "allow once"), ("n/Esc", "deny")], theme);
        line.spans.push(Span::styled(
            "  (no session approval for destructive tools)",
            theme.dim(),
        ));
        line
    };

    let width = usize::from(inner.width.max(1));
    let wrapped: usize = head.iter().map(|l| l.width().max(1).div_ceil(width)).sum();
    let head_h = (wrapped as u16).min(inner.height);
    frame.render_widget(
        Paragraph::new(head).wrap(Wrap { trim: false }),
        Rect {
            height: head_h,
            ..inner
        },
    );
    let args_h = inner.height.saturating_sub(head_h + 1);
    let args = sanitize(
        &serde_json::to_string_pretty(&request.arguments).unwrap_or_default(),
        true,
    );
    let arg_lines: Vec<Line> = args.lines().map(|l| Line::raw(format!("  {l}"))).collect();
    frame.render_widget(
        Paragraph::new(arg_lines).scroll((scroll, 0)),
        Rect {
            y: inner.y + head_h,
            height: args_h,
            ..inner
        },
    );
    if inner.height > head_h {
        super::choices_line(frame, inner, choices);
    }
}
