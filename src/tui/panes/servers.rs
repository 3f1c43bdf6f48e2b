//! The servers pane: status with spinner or mark, a phase waterfall, how long each start took
//! (frozen once it ended), tool count, trust, then its badges: `restart pending`, its first
//! warning, `tools changed`. The columns give way (the waterfall narrows, badges shorten, the
//! trust column goes) so that the badges show at 80 columns; the title says rows below the fold.
//!
//! The waterfalls share one scale: the slowest start that became ready (before any is ready,
//! the longest on screen), so that a 7 ms start and a 2.6 s one look different; a row longer
//! than that (a hang, a timeout) runs to the edge and ends in » or ✗, its elapsed column saying
//! how long. The title says the scale and the deadline.

use std::time::Duration;

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use crossterm::event::KeyCode::Char;
use crossterm::event::{KeyCode, KeyEvent};

use super::component::Component;
use super::waterfall::{finished_at, row_waterfall, scale};
use crate::runtime::{LogLevel, ServerStatus, StartPhase};
use crate::tui::app::App;
use crate::tui::commands::{cmd, Command, Does::*, When::*};
use crate::tui::messages::{Effect, Level};
use crate::tui::overlay::Layer;
use crate::tui::pane_state::Pane;
use crate::tui::state::ServerRow;
use crate::tui::widgets::{
    cell, fit, more_rows, pane_block, scroll_offset, spinner, stepped, Rows, PAGE,
};

/// The Servers pane: the servers, one a row; its keys act on the selected one.
pub struct Servers;

impl Component for Servers {
    const TITLE: &'static str = "Servers";
    const SHORT_TITLE: &'static str = "Srv";
    const COMMANDS: &'static [Command] = &[
        cmd(Some(("t", "trust")), Some(("t", "toggle annotation trust: preview, then write config")), Always, Char('t'), Opens(Layer::Modal)),
        cmd(Some(("r", "restart")), Some(("r", "start the selected server again: a failed one too\n(its entry re-read from the config; applies pending trust)")), Always, Char('r'), Runs("RestartServer")),
        cmd(Some(("R", "all")), None, Always, Char('R'), Opens(Layer::Modal)),
        cmd(Some(("c", "command")), Some(("c", "how it is started: the command line (cwd, env; secret\nvalues left out) or endpoint, whole, to copy")), Always, Char('c'), Opens(Layer::Modal)),
        cmd(Some(("l", "log level")), Some(("l", "log level asked of it: warning, error, debug, info")), If(can_log), Char('l'), Runs("SetLogLevel")),
        cmd(Some(("o", "login")), Some(("o", "OAuth login (streamable_http): browser, then restart")), If(can_login), Char('o'), Runs("Login")),
        cmd(Some(("i", "instructions")), Some(("i", "its instructions, whole (also in Details)")), If(has_instructions), Char('i'), Opens(Layer::Modal)),
    ];

    fn key(app: &mut App, key: KeyEvent) -> Option<Vec<Effect>> {
        match key.code {
            KeyCode::Char('t') => app.open_trust_preview(),
            KeyCode::Enter => app.set_focus(Pane::Details),
            _ => return server_key(app, key),
        }
        Some(Vec::new())
    }

    fn step(app: &mut App, delta: isize) {
        let state = &mut app.panes.servers;
        let before = state.selected;
        state.selected = stepped(state.selected, delta, app.servers.len());
        if before != state.selected {
            state.details_scroll = 0;
        }
    }

    fn page(app: &mut App, dir: isize) {
        page_stderr(app, dir);
    }

    fn draw(app: &App, frame: &mut Frame, area: Rect, focused: bool) {
        let theme = app.theme;
        let ready = app
            .servers
            .iter()
            .filter(|s| s.status == ServerStatus::Ready)
            .count();
        let enabled = app.servers.iter().filter(|s| s.enabled).count();
        let idle = app
            .servers
            .iter()
            .filter(|s| s.status == ServerStatus::Idle)
            .count();
        let idle = if idle > 0 {
            format!("{idle} idle · ")
        } else {
            String::new()
        };
        let scale = scale(app);
        // Rows that do not fit are said in the title (`↓ 1 more`), as the list scrolls with them.
        let hosts = app
            .session
            .serving
            .as_ref()
            .map_or(0, |_| 1 + app.hosts.rows().len().max(1));
        let shown = usize::from(area.height.saturating_sub(2))
            .saturating_sub(hosts)
            .max(3);
        let offset = scroll_offset(app.panes.servers.selected, shown, app.servers.len());
        let more = more_rows(offset, shown, app.servers.len());
        // The title's parts by how much they matter: on a narrow screen the deadline goes first,
        // then the bars' scale (the rows stay whole either way).
        let head = format!(" Servers {ready}/{enabled} ready · {idle}{more}");
        let bars = format!(
            "bars 0–{}",
            crate::text::fmt_duration(Duration::from_millis(scale))
        );
        let deadline = format!(
            "deadline {}",
            crate::text::fmt_duration(app.session.deadline)
        );
        let room = usize::from(area.width.saturating_sub(2));
        let title = [
            format!("{head}{bars} · {deadline} "),
            format!("{head}{bars} "),
        ]
        .into_iter()
        .find(|t| t.chars().count() <= room)
        .unwrap_or_else(|| format!("{} ", head.trim_end_matches("· ").trim_end()));
        let block = pane_block(title, focused, theme);
        let mut inner = block.inner(area);
        frame.render_widget(block, area);
        // Serving other hosts: they take the foot of the pane, leaving the servers 3 rows.
        if let Some(serving) = &app.session.serving {
            let mut foot =
                super::hosts::lines(&app.hosts, &serving.url(), app.session.started_at, theme);
            let room = inner.height.saturating_sub(3);
            foot.truncate(usize::from(room));
            let taken = u16::try_from(foot.len()).unwrap_or(room);
            inner.height -= taken;
            let at = Rect {
                y: inner.y + inner.height,
                height: taken,
                ..inner
            };
            frame.render_widget(Rows(foot), at);
        }
        if app.servers.is_empty() {
            frame.render_widget(
                Paragraph::new("No servers configured: add some under mcp.servers in the config."),
                inner,
            );
            return;
        }
        let name_w = app
            .servers
            .iter()
            .map(|s| s.name.chars().count())
            .max()
            .unwrap_or(4)
            .clamp(4, 24);
        let height = inner.height as usize;
        let offset = scroll_offset(app.panes.servers.selected, height, app.servers.len());
        let rows: Vec<(usize, &ServerRow, String)> = app
            .servers
            .iter()
            .enumerate()
            .skip(offset)
            .take(height)
            .map(|(i, s)| (i, s, status_of(app, s).1))
            .collect();
        let columns = Columns::fit(
            usize::from(inner.width),
            name_w,
            rows.iter()
                .map(|(_, _, status)| status.chars().count())
                .max()
                .unwrap_or(5),
            rows.iter().map(|(_, s, _)| badges(s)),
        );
        let lines: Vec<Line> = rows
            .iter()
            .map(|(i, s, _)| {
                let selected = *i == app.panes.servers.selected;
                row(app, s, selected, focused, &columns, scale)
            })
            .collect();
        frame.render_widget(Rows(lines), inner);
    }
}

/// What a row says after its columns, most important first, each in a long and a short form:
/// a trust written but not yet applied, a warning from its start, tools that changed.
fn badges(s: &ServerRow) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Some(pending) = s.restart_pending {
        out.push((
            format!("restart pending ({})", pending.as_str()),
            "restart pending".to_string(),
        ));
    }
    let warnings = s.report.as_ref().map_or(&[][..], |r| &r.warnings[..]);
    if let Some(first) = warnings.first() {
        // The warning's head: what happened, before its explanation.
        let head = first
            .split(" (")
            .next()
            .unwrap_or(first)
            .trim_end_matches(':');
        let more = match warnings.len() {
            1 => String::new(),
            n => format!(" (+{} more)", n - 1),
        };
        out.push((
            format!("! {head}{more}"),
            format!(
                "! {} warning{}",
                warnings.len(),
                if warnings.len() == 1 { "" } else { "s" }
            ),
        ));
    }
    if s.stale {
        out.push(("tools changed".into(), "tools changed".into()));
    }
    out
}

/// The widths of a row's columns, fitted to the pane so that the badges show: the waterfall
/// narrows first (down to 6 cells), then badges take their short form (`! 1 warning`), then the
/// trust column goes (Details says it); what still does not fit is cut with `…`. A row whose
/// badges fit long shows them long. On a pane too narrow even for that the badges, then the
/// tool count (the Tools pane has it), then the waterfall (the time beside it says how long)
/// go, then the name is cut (to 4 cells), then the status: the time is shown whole or not at
/// all (cut at the edge, `15m` for `15ms`, it would say something else).
struct Columns {
    name: usize,
    status: usize,
    /// Waterfall cells (its two edges apart); 0: no waterfall.
    fall: usize,
    tools: bool,
    trust: bool,
    /// Columns left for the badges.
    badges: usize,
}

impl Columns {
    fn fit(
        width: usize,
        name: usize,
        status: usize,
        badges: impl Iterator<Item = Vec<(String, String)>>,
    ) -> Columns {
        let status = status.clamp(5, 17);
        let need = |b: &[(String, String)], long: bool| -> usize {
            b.iter()
                .map(|(l, s)| 2 + if long { l } else { s }.chars().count())
                .sum()
        };
        let (mut long, mut short) = (0, 0);
        for b in badges {
            long = long.max(need(&b, true));
            short = short.max(need(&b, false));
        }
        // mark, name, status, elapsed, tools: always.
        let fixed = 2 + name + 1 + status + 1 + 6 + 10;
        let room = width.saturating_sub(fixed);
        for (badges, trust) in [(long, true), (short, true), (long, false), (short, false)] {
            let trust_w = if trust { 8 } else { 0 };
            if let Some(fall) = room.checked_sub(badges + trust_w + 2).filter(|f| *f >= 6) {
                let fall = fall.min(16);
                return Columns {
                    name,
                    status,
                    fall,
                    tools: true,
                    trust,
                    badges: room - fall - 2 - trust_w,
                };
            }
        }
        // The narrowest waterfall, the badges cut to what is left; then no tool count; then no
        // waterfall.
        let without_tools = width.saturating_sub(fixed - 10);
        let (fall, tools) = if room >= 8 {
            (6, true)
        } else if without_tools >= 8 {
            ((without_tools - 2).min(16), false)
        } else {
            (0, false)
        };
        // Mark, name, status, time left: the name cut down to 4 cells, then the status.
        let (name, status) = if fall == 0 {
            let rest = 2 + 1 + 1 + 6;
            let status = status.min(width.saturating_sub(rest + 4)).max(1);
            (name.min(width.saturating_sub(rest + status)).max(4), status)
        } else {
            (name, status)
        };
        Columns {
            name,
            status,
            fall,
            tools,
            trust: false,
            badges: room.saturating_sub(8),
        }
    }
}

/// A row's mark, status words and their style.
fn status_of(app: &App, s: &ServerRow) -> (String, String, Style) {
    let theme = app.theme;
    let elapsed_live = match s.phase {
        Some((StartPhase::Queued, _)) => s.queued_at,
        _ => s.started,
    }
    .map(|t| app.now.saturating_duration_since(t));
    match s.status {
        ServerStatus::Starting => (
            spinner(elapsed_live.unwrap_or_default()).to_string(),
            match s.phase {
                Some((StartPhase::Queued, _)) => "queued".to_string(),
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
                        // As wide as it was when the countdown began: the column (and the
                        // bars beside it) keeps its width as `1.2s` becomes `900ms`.
                        format!(
                            "{:<width$}",
                            format!("restart in {}", crate::text::fmt_duration(left)),
                            width = "restart in ".len() + countdown_width(delay)
                        ),
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
        // Lazy and not running: its cached tools are offered; the first call starts it.
        ServerStatus::Idle => ("○".into(), "idle (lazy)".into(), theme.dim()),
    }
}

fn row(
    app: &App,
    s: &ServerRow,
    selected: bool,
    focused: bool,
    columns: &Columns,
    scale: u64,
) -> Line<'static> {
    let theme = app.theme;
    let elapsed_live = match s.phase {
        Some((StartPhase::Queued, _)) => s.queued_at,
        _ => s.started,
    }
    .map(|t| app.now.saturating_duration_since(t));
    let (mark, status, status_style) = status_of(app, s);
    let name_style = if selected && focused {
        theme.selected()
    } else if selected {
        theme.selected_unfocused()
    } else {
        Style::default()
    };
    // How long the start took, frozen once it ended; counting while it runs.
    let elapsed = match s.status {
        ServerStatus::Starting => elapsed_live,
        ServerStatus::Ready | ServerStatus::Failed => s.report.as_ref().and_then(|r| {
            r.start_took()
                .or_else(|| finished_at(&r.phases).map(Duration::from_millis))
        }),
        ServerStatus::Disabled | ServerStatus::Idle => None,
    };
    let mut spans = vec![
        Span::styled(format!("{mark} "), status_style),
        Span::styled(cell(&s.name, columns.name), name_style),
        Span::raw(" "),
        Span::styled(cell(&status, columns.status), status_style),
        Span::raw(" "),
    ];
    if columns.fall > 0 {
        spans.extend(row_waterfall(s, app.now, scale, columns.fall, theme));
    }
    spans.push(Span::raw(format!(
        " {:>5}",
        elapsed.map_or(String::new(), crate::text::fmt_duration)
    )));
    if columns.tools {
        spans.push(Span::raw(format!(" {:>3} tools", s.tool_count())));
    }
    if columns.trust {
        spans.push(Span::styled(
            format!("  {:<6}", s.trust.as_str()),
            theme.dim(),
        ));
    }
    // Each badge long if the room allows, else short; the last one cut to what is left.
    let mut left = columns.badges;
    for (long, short) in badges(s) {
        if left < 3 {
            break;
        }
        let text = if long.chars().count() + 2 <= left {
            long
        } else if short.chars().count() + 2 <= left {
            short
        } else {
            fit(&short, left - 2)
        };
        left = left.saturating_sub(text.chars().count() + 2);
        spans.push(Span::styled(format!("  {text}"), theme.warn()));
    }
    Line::from(spans)
}

/// The widest a countdown from `delay` gets: its own text, or `999ms` on the way below a second.
fn countdown_width(delay: Duration) -> usize {
    let own = crate::text::fmt_duration(delay).chars().count();
    if delay >= Duration::from_secs(1) {
        own.max("999ms".len())
    } else {
        own
    }
}

/// The keys Servers and Details share: each acts on the selected server.
pub(super) fn server_key(app: &mut App, key: KeyEvent) -> Option<Vec<Effect>> {
    let s = app.selected_server()?;
    let server = s.name.clone();
    match key.code {
        KeyCode::Char('r') => return Some(vec![app.restart_server(server, 'r')]),
        KeyCode::Char('i') => app.open_instructions(),
        KeyCode::Char('c') => app.open_launch(),
        KeyCode::Char('o') if !s.can_login() => app.notify(
            Level::Warn,
            format!("{server} is not a streamable_http server: OAuth login is for those"),
        ),
        KeyCode::Char('o') => {
            app.notify(Level::Info, format!("logging in to {server}…"));
            return Some(vec![Effect::Login { server }]);
        }
        KeyCode::Char('l') => match s.cannot_log() {
            Some(why) => app.notify(Level::Info, why),
            None => {
                let level = next_log_level(s.log_level);
                return Some(vec![Effect::SetLogLevel { server, level }]);
            }
        },
        _ => return None,
    }
    Some(Vec::new())
}

/// The level `l` asks for next: debug, info, warning, error, then debug again.
fn next_log_level(current: Option<LogLevel>) -> LogLevel {
    match current {
        None | Some(LogLevel::Info) | Some(LogLevel::Notice) => LogLevel::Warning,
        Some(LogLevel::Warning) => LogLevel::Error,
        Some(LogLevel::Error)
        | Some(LogLevel::Critical)
        | Some(LogLevel::Alert)
        | Some(LogLevel::Emergency) => LogLevel::Debug,
        Some(LogLevel::Debug) => LogLevel::Info,
    }
}

/// The selected server can be asked for a log level.
pub(super) fn can_log(app: &App) -> bool {
    app.selected_server()
        .is_some_and(|s| s.cannot_log().is_none())
}

/// The selected server is a streamable_http one (OAuth).
pub(super) fn can_login(app: &App) -> bool {
    app.selected_server().is_some_and(ServerRow::can_login)
}

/// The selected server sent instructions.
pub(super) fn has_instructions(app: &App) -> bool {
    app.selected_server()
        .is_some_and(ServerRow::has_instructions)
}

/// PgUp PgDn on Servers or Details: a page of the stderr tail, as much as the pane shows
/// (before its first frame: `PAGE`).
pub(super) fn page_stderr(app: &mut App, dir: isize) {
    let shown = app.panes.servers.details_shown.get();
    let page = if shown == 0 { PAGE } else { shown };
    scroll_stderr(app, -dir * page as isize);
}

/// Scrolls the stderr tail: positive goes back in time, no further than its first page.
pub(super) fn scroll_stderr(app: &mut App, lines: isize) {
    let total = app.selected_server().map_or(0, |s| s.stderr.len());
    let state = &mut app.panes.servers;
    let oldest = total.saturating_sub(state.details_shown.get().max(1));
    state.details_scroll = state
        .details_scroll
        .saturating_add_signed(lines)
        .min(oldest);
}
