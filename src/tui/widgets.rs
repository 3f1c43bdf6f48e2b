//! The small pieces the panes and the views over them draw with: a pane's border, the rows
//! of a list that fit and those that do not, cells cut to a width, key hints, the spinner.

use std::time::Duration;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Widget};

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
pub fn pane_block(title: String, focused: bool, theme: Theme) -> PaneBlock {
    PaneBlock {
        title,
        border: if focused {
            theme.focus_border()
        } else {
            Style::default()
        },
    }
}

/// A list's rows: its lines one to a row from the top of the area, each cut at the right
/// edge. What `Paragraph::new(lines)` draws (left-aligned lines, no wrap, no scroll), without
/// its passes over every cell: it first sets its style, the default, which changes no cell, on
/// the whole area, then takes each line through its truncator grapheme by grapheme.
pub struct Rows<'a>(pub Vec<Line<'a>>);

impl Widget for Rows<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        RowsOf(&self.0).render(area, buf);
    }
}

/// [`Rows`] of lines kept elsewhere (drawn without taking them).
pub struct RowsOf<'a, 'b>(pub &'a [Line<'b>]);

impl Widget for RowsOf<'_, '_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let area = area.intersection(buf.area);
        for (line, y) in self.0.iter().zip(area.top()..area.bottom()) {
            set_line(buf, area.left(), y, line, area.width);
        }
    }
}

/// `Buffer::set_line`, with a span of ASCII text written a byte to a cell: such a byte is one
/// grapheme of width one, a control character none, so the grapheme segmentation and width
/// lookup ratatui does for any text are skipped (most of what the panes draw). Other spans go
/// through `Buffer::set_stringn` as `set_line` sends them.
fn set_line(buf: &mut Buffer, x: u16, y: u16, line: &Line<'_>, max_width: u16) {
    let mut remaining = max_width;
    let mut x = x;
    for span in line {
        if remaining == 0 {
            break;
        }
        let style = line.style.patch(span.style);
        let text = span.content.as_ref();
        let end = if text.is_ascii() {
            set_ascii(buf, x, y, text, remaining, style)
        } else {
            buf.set_stringn(x, y, text, usize::from(remaining), style).0
        };
        remaining = remaining.saturating_sub(end.saturating_sub(x));
        x = end;
    }
}

/// `Buffer::set_stringn` for ASCII `text`: control characters skipped, the rest a cell each,
/// up to `max_width` cells and the buffer's right edge. Returns the column after the last.
fn set_ascii(
    buf: &mut Buffer,
    mut x: u16,
    y: u16,
    text: &str,
    max_width: u16,
    style: Style,
) -> u16 {
    let mut remaining = buf.area.right().saturating_sub(x).min(max_width);
    for (i, byte) in text.bytes().enumerate() {
        if byte.is_ascii_control() {
            continue;
        }
        if remaining == 0 {
            break;
        }
        remaining -= 1;
        buf[(x, y)]
            .set_symbol(text.get(i..=i).unwrap_or(" "))
            .set_style(style);
        x += 1;
    }
    x
}

/// A pane's border and title, drawn as ratatui's `Block` with all borders and a title draws
/// them (the same cells, symbols and styles), without what `Block` does first: set its style
/// on every cell of the pane, here the default style, which changes no cell. Done for every
/// pane, that was a sixth of a frame's time.
pub struct PaneBlock {
    title: String,
    border: Style,
}

impl PaneBlock {
    /// The area inside the border.
    pub fn inner(&self, area: Rect) -> Rect {
        Block::default().borders(Borders::ALL).inner(area)
    }
}

impl Widget for PaneBlock {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let area = area.intersection(buf.area);
        if area.is_empty() {
            return;
        }
        let set = ratatui::symbols::border::PLAIN;
        let (left, top) = (area.left(), area.top());
        let (right, bottom) = (area.right() - 1, area.bottom() - 1);
        // Sides between the corners, then the corners over them, as `Block` does.
        for y in top.saturating_add(1)..bottom {
            buf[(left, y)]
                .set_symbol(set.vertical_left)
                .set_style(self.border);
            buf[(right, y)]
                .set_symbol(set.vertical_right)
                .set_style(self.border);
        }
        for x in left.saturating_add(1)..right {
            buf[(x, top)]
                .set_symbol(set.horizontal_top)
                .set_style(self.border);
            buf[(x, bottom)]
                .set_symbol(set.horizontal_bottom)
                .set_style(self.border);
        }
        for (x, y, symbol) in [
            (right, bottom, set.bottom_right),
            (right, top, set.top_right),
            (left, bottom, set.bottom_left),
            (left, top, set.top_left),
        ] {
            buf[(x, y)].set_symbol(symbol).set_style(self.border);
        }
        let room = area.width.saturating_sub(2);
        if room == 0 || self.title.is_empty() {
            return;
        }
        set_line(buf, left + 1, top, &Line::from(self.title), room);
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

#[cfg(test)]
mod tests {
    use ratatui::style::{Color, Modifier};
    use ratatui::widgets::Paragraph;

    use super::*;

    /// `Rows` draws every cell as `Paragraph` does, symbols and styles: styled spans, a line
    /// style, wide characters (one cut at the edge), a line too long, more lines than rows.
    #[test]
    fn rows_draw_what_a_paragraph_of_the_same_lines_draws() {
        let lines = || {
            vec![
                Line::from(vec![
                    Span::styled("ok ", Style::default().fg(Color::Green)),
                    Span::raw("a row"),
                ]),
                Line::styled(
                    "selected",
                    Style::default().add_modifier(Modifier::REVERSED),
                ),
                Line::raw("語語語語語語語語"),
                Line::raw("x".repeat(40)),
                Line::raw(""),
                Line::raw("past the last row"),
            ]
        };
        let area = Rect::new(2, 1, 15, 5);
        let (mut ours, mut theirs) = (
            Buffer::empty(Rect::new(0, 0, 20, 8)),
            Buffer::empty(Rect::new(0, 0, 20, 8)),
        );
        Rows(lines()).render(area, &mut ours);
        Paragraph::new(lines()).render(area, &mut theirs);
        assert_eq!(ours, theirs);
    }

    /// `PaneBlock` draws the cells ratatui's `Block` with all borders and the same title draws:
    /// a title that fits, one cut at the corner, one with wide characters, focused or not.
    #[test]
    fn a_pane_block_draws_what_a_block_draws() {
        let focus = Style::default()
            .fg(Color::Cyan)
            .add_modifier(Modifier::BOLD);
        for (title, border) in [
            (" Calls 12 · 3 running ", Style::default()),
            (" a title far too long for its pane ", focus),
            (" 語 Details: 語語 ", Style::default()),
        ] {
            let area = Rect::new(1, 1, 16, 4);
            let (mut ours, mut theirs) = (
                Buffer::empty(Rect::new(0, 0, 20, 6)),
                Buffer::empty(Rect::new(0, 0, 20, 6)),
            );
            PaneBlock {
                title: title.to_string(),
                border,
            }
            .render(area, &mut ours);
            Block::default()
                .borders(Borders::ALL)
                .border_style(border)
                .title(title)
                .render(area, &mut theirs);
            assert_eq!(ours, theirs, "{title}");
        }
    }

    /// The ASCII path draws what ratatui draws for the same text: control characters (a tab,
    /// CR LF, an escape) skipped, spans ending at the edge and past it, ASCII beside other
    /// text in one line, a line style under span styles, a line starting left of the edge.
    #[test]
    fn ascii_spans_draw_as_ratatui_draws_them() {
        let lines = || {
            vec![
                Line::raw("a\tb\r\nc\u{1b}[0m d\u{7f}e"),
                Line::from(vec![
                    Span::raw("twelve chars"),
                    Span::styled("+more", Style::default().fg(Color::Red)),
                ]),
                Line::from(vec![
                    Span::raw("ab "),
                    Span::raw("é語x"),
                    Span::styled(" tail", Style::default().add_modifier(Modifier::BOLD)),
                ])
                .style(Style::default().bg(Color::Blue)),
                Line::raw("\n\n\n"),
                Line::raw("exactly 15 cell"),
            ]
        };
        for area in [
            Rect::new(2, 1, 15, 5),
            Rect::new(10, 0, 10, 5),
            Rect::new(0, 2, 3, 5),
        ] {
            let (mut ours, mut theirs) = (
                Buffer::empty(Rect::new(0, 0, 20, 8)),
                Buffer::empty(Rect::new(0, 0, 20, 8)),
            );
            Rows(lines()).render(area, &mut ours);
            Paragraph::new(lines()).render(area, &mut theirs);
            assert_eq!(ours, theirs, "{area:?}");
        }
    }
}
