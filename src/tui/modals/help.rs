//! The `?` overlay: every key, and what the words on screen mean (the text is made from the
//! command lists, `tui/hints.rs`).

use ratatui::layout::Rect;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;

use crate::tui::theme::Theme;

/// Draws the help in `area`; returns how far it can scroll.
pub fn render(frame: &mut Frame, area: Rect, text: &str, scroll: u16, theme: Theme) -> u16 {
    frame.render_widget(Clear, area);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.focus_border())
        .title(" Help  (Esc closes, ↑↓ PgUp PgDn Home End scroll) ");
    let help = Paragraph::new(text).block(block);
    let last = super::scroll_limit(help.line_count(area.width), area.height);
    frame.render_widget(help.scroll((scroll.min(last), 0)), area);
    last
}
