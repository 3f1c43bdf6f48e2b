//! The small pieces the panes and the views over them draw with: a pane's border, the rows
//! of a list that fit and those that do not, cells cut to a width, key hints, the spinner.

use std::time::Duration;

use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders};

use super::theme::Theme;

/// Rows a page key moves in a list.
pub const PAGE: usize = 10;

/// A selection moved `delta` rows within `len` rows.
pub fn stepped(selected: usize, delta: isize, len: usize) -> usize {
    if len == 0 {
        0
    } else {
        selected.saturating_add_signed(delta).min(len - 1)
    }
}

const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// The spinner frame for something running for `elapsed`.
pub fn spinner(elapsed: Duration) -> &'static str {
    SPINNER[(elapsed.as_millis() / 100 % SPINNER.len() as u128) as usize]
}

/// A pane's block: bold cyan border when focused.
pub fn pane_block(title: String, focused: bool, theme: Theme) -> Block<'static> {
    let block = Block::default().borders(Borders::ALL).title(title);
    if focused {
        block.border_style(theme.focus_border())
    } else {
        block
    }
}

/// The first row to show so that `selected` stays visible in `height` rows.
pub fn scroll_offset(selected: usize, height: usize, len: usize) -> usize {
    if height == 0 || len <= height {
        return 0;
    }
    let max = len - height;
    selected.saturating_sub(height - 1).min(max)
}

/// The rows of a list that do not fit, for its title: `↑ 2 more ↓ 1 more · ` (empty when all
/// fit). `offset` is the first row shown, `shown` how many rows fit.
pub fn more_rows(offset: usize, shown: usize, len: usize) -> String {
    let below = len.saturating_sub(offset + shown);
    let mut more = String::new();
    if offset > 0 {
        more.push_str(&format!("↑ {offset} more "));
    }
    if below > 0 {
        more.push_str(&format!("↓ {below} more "));
    }
    if !more.is_empty() {
        more.push_str("· ");
    }
    more
}

/// Cuts `s` to `width` characters with `…`.
pub fn fit(s: &str, width: usize) -> String {
    crate::text::truncate(s, width)
}

/// `s` padded or cut to exactly `width` characters.
pub fn cell(s: &str, width: usize) -> String {
    let cut = fit(s, width);
    let len = cut.chars().count();
    format!("{cut}{}", " ".repeat(width.saturating_sub(len)))
}

/// Key hints: each key styled (alternatives like `n/Esc` each styled, the `/` plain), then what
/// it does; hints apart by two spaces. Footer and modals speak the same way.
pub fn keys_line(keys: &[(&str, &str)], theme: Theme) -> Line<'static> {
    let mut spans = Vec::new();
    for (i, (key, what)) in keys.iter().enumerate() {
        if i > 0 {
            spans.push(Span::raw("  "));
        }
        for (j, part) in key.split('/').enumerate() {
            if j > 0 {
                spans.push(Span::raw("/"));
            }
            spans.push(Span::styled(part.to_string(), theme.key()));
        }
        spans.push(Span::raw(format!(" {what}")));
    }
    Line::from(spans)
}
