//! Keeping the Conversation still while it is scrolled up: the rows added below the view,
//! counted frame by frame (`ChatState::held`).

use super::entry_rows;
use crate::tui::app::App;
use crate::tui::chat::wrap::{width as cells, wrap};
use crate::tui::chat::{Entry, Held};

/// The rows added below the view since the operator scrolled up (`ChatState::held`), kept
/// up to date here: new text extends the transcript under what is being read instead of
/// pushing it up. Following the newest (not scrolled), nothing is held or counted. Only what
/// is new is wrapped: a long answer streaming on costs its new words, not its whole text.
pub(super) fn held_rows(app: &App, width: usize) -> usize {
    let chat = &app.chat;
    if chat.scroll == 0 || chat.entries.is_empty() {
        chat.held.set(Held::default());
        return 0;
    }
    let entries = chat.dropped + chat.entries.len() as u64;
    let newest = chat.entries.len() - 1;
    let held = chat.held.get();
    let known = held.width == width && held.entries > chat.dropped && held.entries <= entries;
    let mut added = held.added;
    let now = if known {
        let was = (held.entries - chat.dropped - 1) as usize;
        let then = Count {
            lines: held.lines,
            settled: held.settled,
            rows: held.rows,
        };
        let grown = count_rows(app, was, width, Some(then));
        added += grown.rows.saturating_sub(held.rows);
        let mut newest_count = grown;
        for index in was + 1..=newest {
            newest_count = count_rows(app, index, width, None);
            added += newest_count.rows;
        }
        newest_count
    } else {
        count_rows(app, newest, width, None)
    };
    chat.held.set(Held {
        entries,
        width,
        added,
        lines: now.lines,
        settled: now.settled,
        rows: now.rows,
    });
    added
}

/// What is known of an entry's rows: a text entry's logical lines, the rows of all but its
/// last (which streamed text may still lengthen), and its rows in all.
#[derive(Clone, Copy)]
struct Count {
    lines: usize,
    settled: usize,
    rows: usize,
}

/// The rows of entry `index`, its blank separator included. A text entry is counted on from
/// `then` (its lines before the last one then are not wrapped again); others whole.
fn count_rows(app: &App, index: usize, width: usize, then: Option<Count>) -> Count {
    let Some(entry) = app.chat.entries.get(index) else {
        return Count {
            lines: 0,
            settled: 0,
            rows: 0,
        };
    };
    let blank = usize::from(matches!(entry, Entry::Prompt(_)) && index > 0);
    let (block, first) = match entry {
        Entry::Prompt(block) => (block, "› "),
        Entry::Model { text, .. } => (text, "  "),
        _ => {
            let rows = entry_rows(app, entry, width, usize::MAX).len() + blank;
            return Count {
                lines: 0,
                settled: 0,
                rows,
            };
        }
    };
    let text_w = width.saturating_sub(cells(first)).max(1);
    let line_rows = |line: &String| wrap(line, text_w).len();
    let (from, mut settled) = match then {
        Some(then) if then.lines > 0 && then.lines <= block.lines.len() => {
            (then.lines - 1, then.settled)
        }
        _ => (0, 0),
    };
    let last = block.lines.len().saturating_sub(1);
    for line in block.lines.get(from..last).unwrap_or_default() {
        settled += line_rows(line);
    }
    let rows = settled + block.lines.get(last).map_or(0, line_rows) + blank;
    Count {
        lines: block.lines.len(),
        settled,
        rows,
    }
}
