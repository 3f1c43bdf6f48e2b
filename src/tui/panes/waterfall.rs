//! The servers pane's waterfalls: each start's queue wait and phases as a bar, on one scale
//! (the slowest start that became ready; before any is ready, the longest on screen).

use std::time::Instant;

use ratatui::style::Style;
use ratatui::text::Span;

use crate::runtime::{PhaseTimes, ServerStatus, StartPhase};
use crate::tui::app::App;
use crate::tui::state::ServerRow;
use crate::tui::theme::Theme;

/// A row's waterfall at the common `scale`, `width` cells wide.
pub(super) fn row_waterfall(
    s: &ServerRow,
    now: Instant,
    scale: u64,
    width: usize,
    theme: Theme,
) -> Vec<Span<'static>> {
    waterfall(bar(s, now), scale, width, theme)
}

/// The waterfalls' common scale in ms: the slowest ready start, else the longest bar.
pub(super) fn scale(app: &App) -> u64 {
    let bars = || {
        app.servers
            .iter()
            .filter_map(|s| bar(s, app.now).map(|b| (s.status, b.end)))
    };
    let ready = bars()
        .filter(|(status, _)| *status == ServerStatus::Ready)
        .map(|(_, end)| end)
        .max();
    ready
        .or_else(|| bars().map(|(_, end)| end).max())
        .unwrap_or(0)
        .max(1)
}

/// When the last reached phase ended, from the server's own start.
pub(super) fn finished_at(p: &PhaseTimes) -> Option<u64> {
    p.list_tools_ms
        .or(p.handshake_ms)
        .or(p.spawn_ms)
        .or(p.connect_ms)
}

/// One row's waterfall: the queue wait, then when each phase ended (from the server's own
/// start), and where the row ends; all in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Bar {
    queued: u64,
    /// Spawn (stdio) or connect (HTTP).
    first: Option<u64>,
    handshake: Option<u64>,
    list: Option<u64>,
    /// From the row's beginning (queue included) to its end or to now.
    end: u64,
    failed: bool,
}

/// The bar of a row: from its report once the start ended, else from the phases seen so far
/// and `now`. `None` for a disabled server or one whose start has not begun.
fn bar(s: &ServerRow, now: Instant) -> Option<Bar> {
    let ms = |since: Option<Instant>| {
        since.map_or(0, |t| crate::text::millis(now.saturating_duration_since(t)))
    };
    match s.status {
        ServerStatus::Disabled | ServerStatus::Idle => None,
        ServerStatus::Starting => match s.phase? {
            (StartPhase::Queued, _) => {
                let queued = ms(s.queued_at);
                Some(Bar {
                    queued,
                    first: None,
                    handshake: None,
                    list: None,
                    end: queued,
                    failed: false,
                })
            }
            (phase, _) => {
                let p = s.live_phases;
                let queued = p.queued_ms.unwrap_or(0);
                let live = ms(s.started);
                let first = p.spawn_ms.or(p.connect_ms);
                let (first, handshake, list) = match phase {
                    StartPhase::Queued | StartPhase::Spawn | StartPhase::Connect => {
                        (Some(live), None, None)
                    }
                    StartPhase::Handshake => (first.or(Some(0)), Some(live), None),
                    StartPhase::ListTools => {
                        (first.or(Some(0)), p.handshake_ms.or(Some(live)), Some(live))
                    }
                };
                Some(Bar {
                    queued,
                    first,
                    handshake,
                    list,
                    end: queued + live,
                    failed: false,
                })
            }
        },
        ServerStatus::Ready | ServerStatus::Failed => {
            let report = s.report.as_ref()?;
            let p = report.phases;
            let queued = p.queued_ms.unwrap_or(0);
            let took = report
                .start_took()
                .map(crate::text::millis)
                .or_else(|| finished_at(&p))
                .unwrap_or(0);
            Some(Bar {
                queued,
                first: p.spawn_ms.or(p.connect_ms),
                handshake: p.handshake_ms,
                list: p.list_tools_ms,
                end: queued + took,
                failed: s.status == ServerStatus::Failed && s.down.is_none(),
            })
        }
    }
}

/// The queue wait (·), spawn or connect (▪), handshake and tools-listed segments, scaled to
/// `scale` ms over `width` cells; a segment that was reached is always at least one cell wide.
/// A failed start shows the phase it failed in (░) up to when it failed, and ends in ✗.
fn waterfall(bar: Option<Bar>, scale: u64, width: usize, theme: Theme) -> Vec<Span<'static>> {
    let total = scale.max(1) as f64;
    let col = |ms: u64| ((ms as f64 / total) * width as f64).ceil() as usize;
    let mut cells = vec![(' ', Style::default()); width];
    if let Some(bar) = bar {
        let mut from = 0usize;
        if bar.queued > 0 {
            let to = col(bar.queued).clamp(1, width);
            for c in cells.iter_mut().take(to) {
                *c = ('·', theme.dim());
            }
            from = to;
        }
        for (end, ch, style) in [
            (bar.first, '▪', theme.dim()),
            (bar.handshake, '█', theme.accent()),
            (bar.list, '█', theme.ok()),
        ] {
            let Some(end) = end else { break };
            let to = col(bar.queued + end).max(from + 1).min(width);
            for c in cells.iter_mut().take(to).skip(from) {
                *c = (ch, style);
            }
            from = to;
        }
        let last = width.saturating_sub(1);
        if bar.failed {
            // The phase it failed in, up to when it failed, then the mark.
            let at = col(bar.end).saturating_sub(1).max(from).min(last);
            for c in cells.iter_mut().take(at).skip(from) {
                *c = ('░', theme.bad());
            }
            cells[at] = ('✗', theme.bad());
        } else if bar.end > scale && from > last {
            // Longer than the scale: it runs on past the edge.
            cells[last].0 = '»';
        }
    }
    let mut spans = vec![Span::styled("▕", theme.dim())];
    spans.extend(
        cells
            .into_iter()
            .map(|(c, st)| Span::styled(c.to_string(), st)),
    );
    spans.push(Span::styled("▏", theme.dim()));
    spans
}
