//! The details of the selected server: for a failed one its class, phase, message, exit status,
//! a hint for what to do, and the stderr tail (scrollable); for the others what they said about
//! themselves (capabilities, the start of their instructions: `i` shows them whole), their
//! phases, warnings and stderr; for all of them the command line (or endpoint) they start
//! with (`c` shows it whole).

use std::cell::Ref;

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::Frame;

use crossterm::event::KeyCode::{Char, Enter, PageUp};
use crossterm::event::KeyEvent;

use super::component::Component;
use super::servers::{
    can_log, can_login, has_instructions, page_stderr, scroll_stderr, server_key,
};
use crate::config::TransportKind;
use crate::runtime::ServerStatus;
use crate::tui::app::App;
use crate::tui::commands::{cmd, Command, Does::*, When::*};
use crate::tui::messages::Effect;
use crate::tui::overlay::Layer;
use crate::tui::state::ServerRow;
use crate::tui::widgets::{pane_block, Rows, RowsOf};

/// Stderr lines the pane keeps in view below a summary too long for it.
const STDERR_KEPT: usize = 3;

/// Stderr lines a pane focused to read them would like to show.
const STDERR_WANTED: usize = 10;

/// The height (borders included) the pane would like at `width` for the selected server: its
/// summary, and its stderr up to `STDERR_WANTED` lines.
pub fn wanted_height(app: &App, width: u16) -> u16 {
    let Some(s) = app.selected_server() else {
        return 0;
    };
    let rows = rows(app, summary(app, s), width.saturating_sub(2)).len();
    let lines = rows + 1 + s.stderr.len().min(STDERR_WANTED);
    u16::try_from(lines + 2).unwrap_or(u16::MAX)
}

/// The Details pane: the selected server, whole.
pub struct Details;

impl Component for Details {
    const TITLE: &'static str = "Details";
    const SHORT_TITLE: &'static str = "Det";
    const COMMANDS: &'static [Command] = &[
        cmd(
            Some(("PgUp/PgDn", "stderr")),
            None,
            If(stdio),
            PageUp,
            Moves,
        ),
        cmd(
            Some(("r", "restart")),
            None,
            Always,
            Char('r'),
            Runs("RestartServer"),
        ),
        cmd(
            Some(("c", "command")),
            None,
            Always,
            Char('c'),
            Opens(Layer::Modal),
        ),
        cmd(
            Some(("i", "instructions")),
            None,
            If(has_instructions),
            Char('i'),
            Opens(Layer::Modal),
        ),
        cmd(
            Some(("l", "log level")),
            None,
            If(can_log),
            Char('l'),
            Runs("SetLogLevel"),
        ),
        cmd(
            Some(("o", "login")),
            None,
            If(can_login),
            Char('o'),
            Runs("Login"),
        ),
        // Last: the pane says it where it cuts the summary.
        cmd(
            Some(("Enter", "view all")),
            Some(("Enter", "the whole summary and stderr tail, scrollable")),
            Always,
            Enter,
            Opens(Layer::Modal),
        ),
    ];

    fn key(app: &mut App, key: KeyEvent) -> Option<Vec<Effect>> {
        if key.code == Enter {
            app.open_details();
            return Some(Vec::new());
        }
        server_key(app, key)
    }

    /// Its selection is the Servers pane's: ↑ ↓ scroll the stderr tail.
    fn step(app: &mut App, delta: isize) {
        scroll_stderr(app, -delta);
    }

    fn page(app: &mut App, dir: isize) {
        page_stderr(app, dir);
    }

    fn draw(app: &App, frame: &mut Frame, area: Rect, focused: bool) {
        let theme = app.theme;
        let Some(s) = app.selected_server() else {
            frame.render_widget(pane_block(" Details ".into(), focused, theme), area);
            return;
        };
        let block = pane_block(format!(" Details: {} ", s.name), focused, theme);
        let inner = block.inner(area);
        frame.render_widget(block, area);
        let lines = summary(app, s);
        render_tail(app, s, frame, inner, lines, focused);
    }
}

/// The selected server's summary and its whole stderr tail as plain text (Enter on Details: a
/// viewer shows what the pane has no room for).
pub fn whole_text(app: &App) -> Option<(String, String)> {
    let s = app.selected_server()?;
    let mut text: Vec<String> = summary(app, s)
        .iter()
        .map(|line| {
            line.spans
                .iter()
                .map(|span| span.content.as_ref())
                .collect()
        })
        .collect();
    text.push(String::new());
    if s.stderr.is_empty() {
        text.push("stderr: (nothing)".into());
    } else {
        text.push(format!(
            "stderr: {} line{}",
            s.stderr.len(),
            if s.stderr.len() == 1 { "" } else { "s" }
        ));
        text.extend(s.stderr.iter().map(|l| format!("│ {l}")));
    }
    Some((format!("Details: {}", s.name), text.join("\n")))
}

/// What the server said about itself, how it started or failed, and how it is run.
fn summary(app: &App, s: &ServerRow) -> Vec<Line<'static>> {
    let theme = app.theme;
    let mut lines: Vec<Line> = Vec::new();
    let ms = |v: Option<u64>| v.map_or("-".to_string(), |m| format!("{m}ms"));
    match (&s.report, s.status) {
        (_, ServerStatus::Disabled) => lines.push(Line::styled(
            "disabled (enabled: false in the config)",
            theme.dim(),
        )),
        (_, ServerStatus::Idle) => lines.push(Line::styled(
            format!(
                "idle: start: lazy, so it starts on its first call; its {} tool{} are those of its cached list",
                s.report.as_ref().map_or(0, |r| r.tools),
                crate::text::plural(s.report.as_ref().map_or(0, |r| r.tools))
            ),
            theme.dim(),
        )),
        (None, _) => lines.push(Line::styled("starting…", theme.accent())),
        (Some(r), _) => {
            if let Some(info) = &r.server_info {
                lines.push(Line::raw(format!(
                    "{} {} · protocol {}",
                    info.name,
                    info.version,
                    r.protocol_version.as_deref().unwrap_or("?")
                )));
            }
            if let Some(caps) = &r.capabilities {
                lines.push(Line::from(vec![
                    Span::styled("offers ", theme.dim()),
                    Span::raw(caps.summary()),
                ]));
            }
            if let Some(instructions) = &r.instructions {
                let text = crate::text::sanitize(instructions, true);
                let count = text.lines().count();
                let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
                lines.push(Line::from(vec![
                    Span::styled("instructions ", theme.dim()),
                    Span::raw(crate::text::truncate(first.trim(), 120)),
                    Span::styled(
                        format!(
                            "  (i: all {count} line{})",
                            if count == 1 { "" } else { "s" }
                        ),
                        theme.dim(),
                    ),
                ]));
            }
            let first = match r.transport {
                crate::config::TransportKind::Stdio => format!("spawn {}", ms(r.phases.spawn_ms)),
                crate::config::TransportKind::StreamableHttp
                | crate::config::TransportKind::Sse => {
                    format!("connect {}", ms(r.phases.connect_ms))
                }
            };
            lines.push(Line::raw(format!(
                "phases: {first} · handshake {} · tools listed {}",
                ms(r.phases.handshake_ms),
                ms(r.phases.list_tools_ms)
            )));
            if let Some(f) = &r.failure {
                lines.push(Line::from(vec![
                    Span::styled(
                        format!("✗ {}", f.class.as_str()),
                        theme.bad().patch(theme.bold()),
                    ),
                    Span::raw(match f.phase {
                        Some(p) => format!(" in {}", p.as_str()),
                        None => String::new(),
                    }),
                ]));
                lines.push(Line::raw(f.message.clone()));
                if let Some(exit) = &f.exit_status {
                    lines.push(Line::raw(format!("exit status: {exit}")));
                }
                lines.push(Line::from(vec![
                    Span::styled("what to do: ", theme.dim()),
                    Span::raw(f.hint()),
                ]));
            }
            for w in &r.warnings {
                lines.push(Line::styled(format!("! {w}"), theme.warn()));
            }
        }
    }
    if let Some(down) = &s.down {
        let what = if down.gave_up {
            format!(
                "down: {} — gave up after {} quick crashes in a row; r restarts it",
                down.reason, down.crashes
            )
        } else {
            match down.next {
                Some((attempt, delay)) => format!(
                    "down: {} — restarting after {} (attempt {attempt})",
                    down.reason,
                    crate::text::fmt_duration(delay)
                ),
                None => format!("down: {}", down.reason),
            }
        };
        lines.push(Line::styled(what, theme.bad()));
    }
    if s.stale {
        lines.push(Line::styled(
            "its tools changed (tools/list_changed): listed again before the next call",
            theme.warn(),
        ));
    }
    if let Some(level) = s.log_level {
        lines.push(Line::styled(
            format!("log level: {} and above (l changes it)", level.as_str()),
            theme.dim(),
        ));
    }
    if !s.launch.summary.is_empty() {
        let what = match s.transport {
            crate::config::TransportKind::Stdio => "command ",
            crate::config::TransportKind::StreamableHttp | crate::config::TransportKind::Sse => {
                "endpoint "
            }
        };
        lines.push(Line::from(vec![
            Span::styled(what, theme.dim()),
            Span::raw(crate::text::truncate(&s.launch.summary, 200)),
            Span::styled("  (c: whole, to copy)", theme.dim()),
        ]));
    }
    if let Some(sandbox) = s.report.as_ref().and_then(|r| r.sandbox.as_deref()) {
        let style = if sandbox.starts_with("NOT") {
            theme.warn()
        } else {
            theme.dim()
        };
        lines.push(Line::styled(format!("sandbox: {sandbox}"), style));
    }
    let trust = match s.restart_pending {
        Some(p) => format!(
            "trust: {} (the config says {}: restart pending, press r)",
            s.trust.as_str(),
            p.as_str()
        ),
        None => format!("trust: {}", s.trust.as_str()),
    };
    lines.push(Line::styled(trust, theme.dim()));
    lines
}

/// The summary `lines` as the rows they take at `width`: wrapped once, so that the count and
/// the drawing come from the same rows (ratatui's `Wrap` would wrap them again for each), and
/// not again while the lines and the width stay the same (`ServersPane::details_rows`).
fn rows<'a>(app: &'a App, lines: Vec<Line<'static>>, width: u16) -> Ref<'a, [Line<'static>]> {
    let kept = &app.panes.servers.details_rows;
    if kept.borrow().0 != width || kept.borrow().1 != lines {
        let rows = crate::tui::modals::wrap_styled(lines.clone(), width);
        *kept.borrow_mut() = (width, lines, rows);
    }
    Ref::map(kept.borrow(), |(_, _, rows)| rows.as_slice())
}

/// Draws the summary `lines` and, below, the stderr tail into `inner`.
fn render_tail(
    app: &App,
    s: &ServerRow,
    frame: &mut Frame,
    inner: Rect,
    lines: Vec<Line<'static>>,
    focused: bool,
) {
    let theme = app.theme;

    // What is left below the summary shows the stderr tail, scrolled from the bottom; the
    // stderr keeps its heading and up to `STDERR_KEPT` lines however long the summary is (a
    // summary cut short says how many lines it lost).
    let total = s.stderr.len();
    let kept = if total == 0 {
        1
    } else {
        1 + total.min(STDERR_KEPT)
    };
    let lines = rows(app, lines, inner.width);
    let wrapped = u16::try_from(lines.len()).unwrap_or(u16::MAX);
    let summary = RowsOf(&lines);
    let room = inner.height.saturating_sub(kept as u16);
    let summary_h = if wrapped > room && room > 0 {
        let cut = Rect {
            height: room - 1,
            ..inner
        };
        frame.render_widget(summary, cut);
        let more = wrapped - cut.height;
        let lines = if more == 1 { "line" } else { "lines" };
        let hints = [
            format!(
                "… {more} more summary {lines} ({})",
                if focused {
                    "Enter shows them"
                } else {
                    "focused, this pane grows; Enter shows all"
                }
            ),
            format!("… {more} more summary {lines} (Enter shows them)"),
            format!("… {more} more {lines} (Enter: all)"),
        ];
        // The longest that fits: a hint cut short says nothing.
        let hint = hints
            .iter()
            .find(|h| h.chars().count() <= usize::from(inner.width))
            .unwrap_or(&hints[2]);
        frame.render_widget(
            Rows(vec![Line::styled(hint.clone(), theme.dim())]),
            Rect {
                y: inner.y + cut.height,
                height: 1,
                ..inner
            },
        );
        room
    } else {
        let summary_h = wrapped.min(inner.height);
        frame.render_widget(
            summary,
            Rect {
                height: summary_h,
                ..inner
            },
        );
        summary_h
    };
    let rest = Rect {
        y: inner.y + summary_h,
        height: inner.height - summary_h,
        ..inner
    };
    if rest.height < 2 && total > 0 || rest.height == 0 {
        app.panes.servers.details_shown.set(0);
        return;
    }
    let room = (rest.height as usize).saturating_sub(1);
    let end = total.saturating_sub(
        app.panes
            .servers
            .details_scroll
            .min(total.saturating_sub(room.min(total))),
    );
    let start = end.saturating_sub(room);
    app.panes.servers.details_shown.set(room.min(total));
    let mut tail = vec![Line::styled(
        if total == 0 {
            "stderr: (nothing)".to_string()
        } else if app.panes.servers.details_scroll > 0 {
            format!(
                "stderr: lines {}-{} of {total} (PgDn for newer)",
                start + 1,
                end
            )
        } else if start > 0 {
            format!(
                "stderr: last {} of {total} lines (PgUp for older)",
                end - start
            )
        } else {
            format!("stderr: {total} line{}", if total == 1 { "" } else { "s" })
        },
        theme.dim(),
    )];
    tail.extend(
        s.stderr
            .iter()
            .skip(start)
            .take(end - start)
            .map(|l| Line::raw(format!("│ {l}"))),
    );
    frame.render_widget(Rows(tail), rest);
}

/// The selected server is a stdio one (it has a stderr tail).
fn stdio(app: &App) -> bool {
    app.selected_server()
        .is_some_and(|s| s.transport == TransportKind::Stdio)
}
