//! Modals: the dialogs drawn over the panes. `Modal` is the dialog the operator opened; the
//! approval, elicitation and sampling views queue in the overlay stack (`tui/overlay.rs`),
//! which decides which view is on top.

pub mod approval;
pub mod asked;
pub mod call;
pub mod editor;
pub mod elicitation;
pub mod form;
mod form_view;
pub mod help;
pub mod ledger;
pub mod profile;
pub mod result;
pub mod sampling;
pub mod trust;
pub mod viewer;

use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

/// The dialog open over the panes, if any.
#[derive(Debug)]
pub enum Modal {
    /// `?`: the keys.
    Help { scroll: u16 },
    /// `t`: what trusting (or ignoring) a server's annotations would change, before writing.
    Trust(trust::TrustPreview),
    /// Enter on a tool: the call's arguments, as a form or raw JSON.
    Editor(Box<call::CallEditor>),
    /// Enter on a call: its whole result.
    Result { call: u64, scroll: u16 },
    /// `R` while calls run: restarting every server cancels them.
    RestartAll,
    /// `L`: the rules of the config file and the approvals remembered for this session.
    Ledger {
        entries: Vec<ledger::LedgerRow>,
        selected: usize,
        /// Over `attach`, the daemons have not said yet: the modal says it is asking them.
        asking: bool,
    },
    /// Enter on a resource: it as read.
    Resource(viewer::ResourceView),
    /// Enter on a template or a prompt: its arguments.
    Form(Box<form::FormEditor>),
    /// A prompt's messages.
    Prompt(viewer::PromptView),
    /// `i` on a server: its instructions.
    Instructions(viewer::TextView),
    /// A whole text cut short where it is listed: an Events line (Enter), a tool's description
    /// and schema (`d`), a server's command line (`c`).
    Text(viewer::TextView),
}

/// A centred rectangle of `percent_x` × `percent_y` of `area`, at least `min_w` × `min_h`.
pub fn centered(area: Rect, percent_x: u16, percent_y: u16, min_w: u16, min_h: u16) -> Rect {
    let w = (area.width * percent_x / 100).max(min_w).min(area.width);
    let h = (area.height * percent_y / 100).max(min_h).min(area.height);
    let [row] = Layout::vertical([Constraint::Length(h)])
        .flex(Flex::Center)
        .areas(area);
    let [rect] = Layout::horizontal([Constraint::Length(w)])
        .flex(Flex::Center)
        .areas(row);
    rect
}

/// How far a bordered paragraph of `lines` rows (borders included, as `line_count` counts
/// them) can scroll in a box `height` rows tall: the scroll that shows its last line last.
pub fn scroll_limit(lines: usize, height: u16) -> u16 {
    u16::try_from(lines)
        .unwrap_or(u16::MAX)
        .saturating_sub(height)
}

/// The modal's choices (its keys) on the last lines of its inside, `inner`: as many rows as
/// [`choice_rows`] makes of them at its width.
pub fn choices_line(frame: &mut Frame, inner: Rect, choices: Line<'static>) {
    let rows = choice_rows(choices, inner.width);
    let height = u16::try_from(rows.len())
        .unwrap_or(u16::MAX)
        .min(inner.height);
    if height > 0 {
        frame.render_widget(
            Paragraph::new(rows),
            Rect {
                y: inner.y + inner.height - height,
                height,
                ..inner
            },
        );
    }
}

/// `choices` (a keys line: choices apart by two spaces) in rows of `width` cells, broken only
/// between two choices; a choice wider than a row is wrapped between words.
pub fn choice_rows(choices: Line<'static>, width: u16) -> Vec<Line<'static>> {
    let mut groups: Vec<Vec<Span<'static>>> = vec![Vec::new()];
    for span in choices.spans {
        match span.content.strip_prefix("  ") {
            Some(rest) if groups.last().is_some_and(|g| !g.is_empty()) => {
                groups.push(vec![Span::styled(rest.to_string(), span.style)]);
            }
            _ => {
                if let Some(group) = groups.last_mut() {
                    group.push(span);
                }
            }
        }
    }
    let cells = |spans: &[Span<'static>]| -> usize {
        spans
            .iter()
            .map(|s| crate::tui::chat::wrap::width(&s.content))
            .sum()
    };
    let cols = width.max(1);
    let width = usize::from(cols);
    let mut rows: Vec<Line<'static>> = Vec::new();
    let mut row: Vec<Span<'static>> = Vec::new();
    for group in groups.into_iter().filter(|g| !g.is_empty()) {
        let need = cells(&group);
        let used = cells(&row);
        if !row.is_empty() && used + 2 + need <= width {
            row.push(Span::raw("  "));
            row.extend(group);
            continue;
        }
        if !row.is_empty() {
            rows.push(Line::from(std::mem::take(&mut row)));
        }
        if need > width {
            rows.extend(wrap_styled(vec![Line::from(group)], cols));
        } else {
            row = group;
        }
    }
    if !row.is_empty() || rows.is_empty() {
        rows.push(Line::from(row));
    }
    rows
}

/// `lines` cut into rows of `width` cells (styles kept), broken between words as the input
/// box is (`input_wrap`; the spaces at a break left out), so that a scroll position is a row
/// and the number of rows is known before drawing.
pub fn wrap_styled(lines: Vec<Line<'static>>, width: u16) -> Vec<Line<'static>> {
    let width = usize::from(width.max(1));
    let mut rows = Vec::new();
    for line in lines {
        // A line that fits is its own row, as it is.
        if line.width() <= width {
            rows.push(line);
            continue;
        }
        let cells: Vec<(char, Style)> = line
            .spans
            .iter()
            .flat_map(|s| {
                let style = line.style.patch(s.style);
                s.content.chars().map(move |c| (c, style))
            })
            .collect();
        let text: String = cells.iter().map(|(c, _)| *c).collect();
        for (j, (start, row)) in crate::tui::chat::wrap::input_wrap(&text, width)
            .into_iter()
            .enumerate()
        {
            // The spaces a row was broken at are not shown at the start of the next.
            let skip = if j > 0 {
                row.chars().take_while(|c| *c == ' ').count()
            } else {
                0
            };
            // A slice, not a walk from the start: a long line's rows cost their own length.
            let chunk = cells
                .get(start + skip..start + row.chars().count())
                .unwrap_or_default();
            let mut spans: Vec<Span<'static>> = Vec::new();
            let mut text = String::new();
            let mut style = None;
            for (c, st) in chunk {
                if style.is_some_and(|s| s != *st) {
                    spans.push(Span::styled(
                        std::mem::take(&mut text),
                        style.unwrap_or_default(),
                    ));
                }
                style = Some(*st);
                text.push(*c);
            }
            spans.push(Span::styled(text, style.unwrap_or_default()));
            rows.push(Line::from(spans));
        }
    }
    rows
}
