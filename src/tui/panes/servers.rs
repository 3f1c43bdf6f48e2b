//! The servers pane: status with spinner or mark, a phase waterfall drawn against the start-up
//! deadline, elapsed, tool count, trust, `restart pending` and warnings.

use std::time::Duration;

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::{cell, pane_block, scroll_offset, spinner};
use crate::mcp::events::{PhaseTimes, ServerStatus, StartPhase};
use crate::tui::app::App;
use crate::tui::state::ServerRow;
use crate::tui::theme::Theme;

pub fn render(app: &App, frame: &mut Frame, area: Rect, focused: bool) {
    let theme = app.theme;
    let ready = app
        .servers
        .iter()
        .filter(|s| s.status == ServerStatus::Ready)
        .count();
    let enabled = app.servers.iter().filter(|s| s.enabled).count();
    let block = pane_block(
        format!(
            " Servers {ready}/{enabled} ready · deadline {} ",
            crate::text::fmt_duration(app.deadline)
        ),
        focused,
        theme,
    );
    let inner = block.inner(area);
    frame.render_widget(block, area);
    if app.servers.is_empty() {
        frame.render_widget(
            Paragraph::new("No servers configured: add some under mcp.servers in the config."),
            inner,
        );
        return;
    }
    let wide = inner.width >= 76;
    let name_w = app
        .servers
        .iter()
        .map(|s| s.name.chars().count())
        .max()
        .unwrap_or(4)
        .clamp(4, 24);
    let fall_w = if wide { 16 } else { 10 };
    let height = inner.height as usize;
    let offset = scroll_offset(app.server_sel, height, app.servers.len());
    let lines: Vec<Line> = app
        .servers
        .iter()
        .enumerate()
        .skip(offset)
        .take(height)
        .map(|(i, s)| row(app, s, i == app.server_sel, focused, name_w, fall_w, wide))
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

fn row(
    app: &App,
    s: &ServerRow,
    selected: bool,
    focused: bool,
    name_w: usize,
    fall_w: usize,
    wide: bool,
) -> Line<'static> {
    let theme = app.theme;
    let elapsed_live = s.started.map(|t| app.now.saturating_duration_since(t));
    let (mark, status, status_style) = match s.status {
        ServerStatus::Starting => (
            spinner(elapsed_live.unwrap_or_default()).to_string(),
            match s.phase {
                Some((StartPhase::Spawn, _)) => "spawning".to_string(),
                Some((StartPhase::Connect, _)) => "connecting".to_string(),
                Some((StartPhase::Handshake, _)) => "handshake".to_string(),
                Some((StartPhase::ListTools, _)) => "listing tools".to_string(),
                None => "waiting".to_string(),
            },
            theme.accent(),
        ),
        ServerStatus::Ready => ("✓".into(), "ready".into(), theme.ok()),
        ServerStatus::Failed => match &s.down {
            Some(down) if down.gave_up => ("✗".into(), "down, gave up".into(), theme.bad()),
            Some(down) => match (down.next, down.scheduled_at) {
                (Some((_, delay)), Some(at)) => {
                    let left = delay.saturating_sub(app.now.saturating_duration_since(at));
                    (
                        spinner(app.now.saturating_duration_since(at)).to_string(),
                        format!("restart in {}", crate::text::fmt_duration(left)),
                        theme.warn(),
                    )
                }
                _ => ("✗".into(), "down".into(), theme.bad()),
            },
            None => (
                "✗".into(),
                s.report
                    .as_ref()
                    .and_then(|r| r.failure.as_ref())
                    .map_or("failed".to_string(), |f| f.class.as_str().to_string()),
                theme.bad(),
            ),
        },
        ServerStatus::Disabled => ("-".into(), "disabled".into(), theme.dim()),
    };
    let name_style = if selected && focused {
        theme.selected()
    } else if selected {
        theme.selected_unfocused()
    } else {
        Style::default()
    };
    let phases = s.report.as_ref().map(|r| r.phases).unwrap_or_default();
    let elapsed = match s.status {
        ServerStatus::Starting => elapsed_live,
        ServerStatus::Ready | ServerStatus::Failed => finished_at(&phases).or(elapsed_live),
        ServerStatus::Disabled => None,
    };
    let mut spans = vec![
        Span::styled(format!("{mark} "), status_style),
        Span::styled(cell(&s.name, name_w), name_style),
        Span::raw(" "),
        Span::styled(cell(&status, if wide { 17 } else { 13 }), status_style),
        Span::raw(" "),
    ];
    spans.extend(waterfall(
        s,
        &phases,
        elapsed_live,
        app.deadline,
        fall_w,
        theme,
    ));
    spans.push(Span::raw(format!(
        " {:>7}",
        elapsed.map_or(String::new(), crate::text::fmt_duration)
    )));
    spans.push(Span::raw(format!(" {:>3} tools", s.tool_count())));
    if wide {
        spans.push(Span::styled(
            format!("  {:<6}", s.trust.as_str()),
            theme.dim(),
        ));
    }
    if s.stale {
        spans.push(Span::styled("  tools changed", theme.warn()));
    }
    if let Some(pending) = s.restart_pending {
        spans.push(Span::styled(
            format!("  restart pending ({})", pending.as_str()),
            theme.warn(),
        ));
    }
    let warnings = s.report.as_ref().map_or(0, |r| r.warnings.len());
    if warnings > 0 {
        spans.push(Span::styled(
            format!(
                "  ! {warnings} warning{}",
                if warnings == 1 { "" } else { "s" }
            ),
            theme.warn(),
        ));
    }
    Line::from(spans)
}

/// When the last reached phase ended.
fn finished_at(p: &PhaseTimes) -> Option<Duration> {
    p.list_tools_ms
        .or(p.handshake_ms)
        .or(p.spawn_ms)
        .or(p.connect_ms)
        .map(Duration::from_millis)
}

/// Spawn, handshake and tools-listed segments, scaled to the start-up deadline; a segment
/// that was reached is always at least one cell wide.
fn waterfall(
    s: &ServerRow,
    p: &PhaseTimes,
    live: Option<Duration>,
    deadline: Duration,
    width: usize,
    theme: Theme,
) -> Vec<Span<'static>> {
    let total = deadline.as_millis().max(1) as f64;
    let col = |ms: u64| ((ms as f64 / total) * width as f64).ceil() as usize;
    let live_ms = live.map_or(0, |d| d.as_millis() as u64);
    // End of each phase: its reported end, or "now" while it runs. The first phase is spawn
    // (stdio) or connect (HTTP).
    let first = p.spawn_ms.or(p.connect_ms);
    let (spawn_end, hs_end, list_end) = match (s.status, s.phase) {
        (ServerStatus::Starting, Some((phase, _))) => match phase {
            StartPhase::Spawn | StartPhase::Connect => (Some(live_ms), None, None),
            StartPhase::Handshake => (first.or(Some(0)), Some(live_ms), None),
            StartPhase::ListTools => (
                first.or(Some(0)),
                p.handshake_ms.or(Some(live_ms)),
                Some(live_ms),
            ),
        },
        _ => (first, p.handshake_ms, p.list_tools_ms),
    };
    let mut cells = vec![(' ', Style::default()); width];
    let mut from = 0usize;
    for (end, ch, style) in [
        (spawn_end, '▪', theme.dim()),
        (hs_end, '█', theme.accent()),
        (list_end, '█', theme.ok()),
    ] {
        let Some(end) = end else { break };
        let to = col(end).max(from + 1).min(width);
        for c in cells.iter_mut().take(to).skip(from) {
            *c = (ch, style);
        }
        from = to;
    }
    if s.status == ServerStatus::Failed && from < width {
        cells[from] = ('✗', theme.bad());
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
