//! The `?` overlay: every key, and what the words on screen mean (text in assets/help.txt).

use ratatui::layout::Rect;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;

use crate::tui::theme::Theme;

pub const HELP: &str = include_str!("../../../assets/help.txt");

pub fn render(frame: &mut Frame, area: Rect, scroll: u16, theme: Theme) {
    frame.render_widget(Clear, area);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.focus_border())
        .title(" Help  (Esc closes, ↑↓ scroll) ");
    frame.render_widget(Paragraph::new(HELP).block(block).scroll((scroll, 0)), area);
}
