//! The approvals remembered for this session ("allow this tool for the session"), each revocable.

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;

use crate::approval::LedgerEntry;
use crate::tui::theme::Theme;

pub fn render(
    frame: &mut Frame,
    area: Rect,
    entries: &[LedgerEntry],
    selected: usize,
    theme: Theme,
) {
    frame.render_widget(Clear, area);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.focus_border())
        .title(" Remembered approvals  (d revoke, Esc close) ");
    let mut lines = Vec::new();
    if entries.is_empty() {
        lines.push(Line::raw("No tool is approved for this session."));
        lines.push(Line::styled(
            "Answer an approval with `a` to remember it (never offered for destructive tools).",
            theme.dim(),
        ));
    }
    for (i, e) in entries.iter().enumerate() {
        let style = if i == selected {
            theme.selected()
        } else {
            Default::default()
        };
        lines.push(Line::from(vec![
            Span::styled(format!(" {} ", e.tool_name), style),
            Span::styled(
                format!("  fingerprint {}", e.fingerprint.short()),
                theme.dim(),
            ),
        ]));
    }
    frame.render_widget(Paragraph::new(lines).block(block), area);
}
