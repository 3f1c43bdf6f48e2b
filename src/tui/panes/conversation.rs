//! The Conversation pane: the transcript (prompts, the model's streamed text, each tool call
//! with its `#` in Calls, status, approval and duration, each model turn's latency and tokens),
//! a status line, and the input box. Only the rows on screen are wrapped, newest at the
//! bottom, so a long answer costs a frame what it shows, not what it holds. Also the profile
//! picker (Ctrl-P).

use std::time::Duration;

use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};
use ratatui::Frame;

use crossterm::event::KeyCode::{Char, Enter, Esc, PageUp, Up};
use crossterm::event::{KeyEvent, KeyModifiers};

use super::calls::status_style;
use super::component::Component;
use crate::agent::ToolCallStatus;
use crate::runtime::CallStatus;
use crate::tui::app::App;
use crate::tui::chat::wrap::{input_wrap, width as cells, wrap};
use crate::tui::chat::{AgentStatus, CallLine, ChatState, Entry, NoteLevel, TextBlock};
use crate::tui::commands::{cmd, with, Command, Does::*, When::*, CTRL, NONE};
use crate::tui::messages::Effect;
use crate::tui::overlay::Layer;
use crate::tui::state::approval_text;
use crate::tui::theme::Theme;
use crate::tui::widgets::{fit, pane_block, spinner, Rows};

/// The input box grows to this many rows, then scrolls.
const INPUT_ROWS: usize = 5;

/// The Conversation pane: the agent's transcript and the input.
pub struct Conversation;

impl Component for Conversation {
    const TITLE: &'static str = "Conversation";
    const SHORT_TITLE: &'static str = "Conv";
    const HELP_TITLE: &'static str =
        "Conversation (the agent: a model calling the tools through the same gate)";
    const COMMANDS: &'static [Command] = &[
        with((Enter, NONE), "x", cmd(Some(("Enter", "send")), Some(("Enter", "send the prompt (Alt-Enter or Ctrl-J: a new line)")), Always, Enter, Runs("Agent"))),
        with((Enter, KeyModifiers::ALT), "x", cmd(Some(("Alt-Enter", "new line")), None, Always, Enter, Edits)),
        cmd(Some(("Esc", "cancel turn")), Some(("Esc", "cancel the turn in flight: the model request is\ndropped, its running calls are cancelled")), Busy, Esc, Runs("Agent")),
        with((Char('p'), CTRL), "", cmd(Some(("Ctrl-P", "profile")), Some(("Ctrl-P", "agent profile (agent.models); the conversation goes on")), Always, Enter, Opens(Layer::ProfilePicker))),
        with((Char('n'), CTRL), "", cmd(Some(("Ctrl-N", "new")), Some(("Ctrl-N", "a new conversation (a new session; the note says how\nto continue the one left; approvals given with `a` stay)")), Always, Enter, Clears)),
        cmd(Some(("↑↓", "history")), Some(("↑ ↓", "earlier prompts (in a long prompt: its lines); an\nedited one stays edited until a prompt is sent")), Always, Up, Edits),
        with((Char('u'), CTRL), "abc", cmd(None, Some(("Ctrl-U", "clear the input")), HelpOnly, Enter, Edits)),
        cmd(Some(("PgUp/PgDn", "scroll")), Some(("PgUp PgDn", "scroll the conversation (scrolled up, it stays put\nwhile the answer goes on below)")), Always, PageUp, Moves),
        cmd(None, Some(("@", "attach a resource (a picker; typing filters; Esc, a\nspace, or Enter on no match types it as text); its text\ngoes with the prompt. Backspace in an empty box drops it")), HelpOnly, Char('@'), Opens(Layer::ContentPicker)),
        cmd(None, Some(("/", "(first) run a server prompt: its arguments, then its\nmessages join the conversation and the model answers")), HelpOnly, Char('/'), Opens(Layer::ContentPicker)),
    ];
    const TABBED: bool = true;
    const LEADS_TABS: bool = true;
    const TYPES: bool = true;

    /// Only with an agent to talk to.
    fn present(app: &App) -> bool {
        app.chat.configured()
    }

    /// Its keys are its input's (`chat/keys.rs`): all but Tab and Shift-Tab.
    fn key(app: &mut App, key: KeyEvent) -> Option<Vec<Effect>> {
        app.chat_key(key)
    }

    fn draw(app: &App, frame: &mut Frame, area: Rect, focused: bool) {
        let chat = &app.chat;
        let theme = app.theme;
        let mut title = String::from(" Conversation");
        if let Some(p) = chat.current_profile() {
            title.push_str(&format!(" · {} (model {})", p.name, p.model));
        }
        if let Some(meter) = &chat.context {
            title.push_str(&format!(" · {}", meter.label()));
        }
        if let Some(id) = &chat.session {
            title.push_str(&format!(" · session {id}"));
        }
        title.push(' ');
        let block = pane_block(
            fit(&title, area.width.saturating_sub(2) as usize),
            focused,
            theme,
        );
        let inner = block.inner(area);
        frame.render_widget(block, area);
        if inner.height == 0 || inner.width < 4 {
            return;
        }
        let width = inner.width as usize;
        let input = input_rows(chat, width, theme);
        let input_h = input
            .rows
            .len()
            .clamp(1, INPUT_ROWS)
            .min((inner.height as usize).saturating_sub(2).max(1)) as u16;
        // Two rows or fewer: the input before the status line.
        let status_h = u16::from(inner.height > 2);
        let [transcript, status, input_area] = Layout::vertical([
            Constraint::Min(0),
            Constraint::Length(status_h),
            Constraint::Length(input_h),
        ])
        .areas(inner);

        let height = transcript.height as usize;
        let asked = chat.scroll + held::held_rows(app, width);
        // A row more than shown, to know whether any is left above.
        let mut rows = tail_rows(app, width, height + asked + 1);
        let scroll = asked.min(rows.len().saturating_sub(height));
        chat.shown.set(crate::tui::chat::Shown {
            height,
            scroll,
            at_oldest: rows.len() <= height + scroll,
        });
        rows.truncate(rows.len() - scroll);
        let first = rows.len().saturating_sub(height);
        let shown: Vec<Line> = rows.split_off(first);
        if shown.is_empty() {
            frame.render_widget(
                Paragraph::new(empty_hint(chat, theme)).wrap(Wrap { trim: true }),
                transcript,
            );
        } else {
            frame.render_widget(Rows(shown), transcript);
        }
        frame.render_widget(Rows(vec![status_line(app, scroll, width)]), status);

        // The input: the rows around the cursor.
        let (cursor_row, cursor_x) = input.cursor;
        let visible = input_h as usize;
        let top = cursor_row.saturating_sub(visible - 1);
        let lines: Vec<Line> = if chat.input.is_blank() && chat.input.lines().len() == 1 {
            vec![Line::from(vec![
                Span::styled("› ", theme.key()),
                Span::styled(placeholder(chat, width.saturating_sub(2)), theme.dim()),
            ])]
        } else {
            input.rows.into_iter().skip(top).take(visible).collect()
        };
        frame.render_widget(Rows(lines), input_area);
        let modal_open = !app.overlays.approvals.is_empty()
            || app.overlays.modal.is_some()
            || chat.picker.is_some();
        if focused && !modal_open {
            let x = input_area.x + (cursor_x as u16).min(input_area.width.saturating_sub(1));
            let y = input_area.y + (cursor_row - top) as u16;
            frame.set_cursor_position(Position { x, y });
        }
    }
}

/// The input's text while it is empty, the long form where `width` holds it.
fn placeholder(chat: &ChatState, width: usize) -> &'static str {
    match chat.status {
        AgentStatus::Ready | AgentStatus::Waiting | AgentStatus::Starting => {
            let long = "ask the agent; Enter sends, Alt-Enter breaks the line; @ attaches a resource, / runs a prompt";
            if long.chars().count() <= width {
                long
            } else {
                "ask the agent (Enter sends; @ resource, / prompt; F1 keys)"
            }
        }
        AgentStatus::Failed(_) => "the agent could not start: Ctrl-P picks another profile",
        AgentStatus::Off => "",
    }
}

fn empty_hint(chat: &ChatState, theme: Theme) -> Vec<Line<'static>> {
    let mut lines = vec![Line::styled(
        "The agent's conversation: what you ask, what the model writes, each tool call it makes.",
        theme.dim(),
    )];
    if chat.configured() {
        lines.push(Line::styled(
            "Its calls pass the same approval gate as yours: mutating ones wait for you.",
            theme.dim(),
        ));
        lines.push(Line::styled(
            "Try: save a note called demo saying hello  ·  what is 2 plus 3",
            theme.dim(),
        ));
    }
    lines
}

/// The status line: where the agent is, or the turn in flight.
fn status_line(app: &App, scroll: usize, width: usize) -> Line<'static> {
    let chat = &app.chat;
    let theme = app.theme;
    let mut spans = Vec::new();
    if !chat.attachments.is_empty() {
        let names: Vec<String> = chat
            .attachments
            .iter()
            .map(|a| format!("@{}", crate::text::sanitize_line(&a.name, 40)))
            .collect();
        spans.push(Span::styled(
            format!("attached {} · ", names.join(" ")),
            theme.accent(),
        ));
    }
    if scroll > 0 {
        spans.push(Span::styled(
            format!("↑ {scroll} rows up (PgDn goes back) · "),
            theme.warn(),
        ));
    }
    let (text, style) = match (&chat.turn, &chat.status) {
        (Some(turn), _) => {
            let elapsed = app.now.saturating_duration_since(turn.started);
            let what = if turn.queued.is_some() {
                "waiting for the agent to start".to_string()
            } else if turn.cancelled_at.is_some() {
                "cancelling".to_string()
            } else if turn.model_turn == 0 {
                "starting".to_string()
            } else {
                format!("model turn {}", turn.model_turn)
            };
            // Under an approval Esc answers it (deny): the turn goes on.
            let keys = if app.overlays.approvals.is_empty() {
                "Esc cancels"
            } else {
                "waiting for your approval"
            };
            (
                format!(
                    "{} {what} · {} · {keys}",
                    spinner(elapsed),
                    crate::text::fmt_duration(elapsed)
                ),
                theme.accent(),
            )
        }
        (None, AgentStatus::Ready) => {
            let at = chat.base_url.clone().unwrap_or_default();
            (format!("ready · {at}"), theme.dim())
        }
        (None, AgentStatus::Waiting) => ("waiting for the servers' runtime".into(), theme.dim()),
        (None, AgentStatus::Starting) => {
            let endpoint = chat
                .current_profile()
                .map(ChatState::endpoint_text)
                .unwrap_or_default();
            (
                format!("starting the model endpoint ({endpoint})"),
                theme.dim(),
            )
        }
        (None, AgentStatus::Failed(why)) => (format!("not ready: {why}"), theme.bad()),
        (None, AgentStatus::Off) => (String::new(), theme.dim()),
    };
    spans.push(Span::styled(text, style));
    let line = Line::from(spans);
    if line.width() > width {
        let all: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
        return Line::styled(fit(&all, width), style);
    }
    line
}

/// The input's rows at `width` (a `› ` before the first, two spaces before the rest), and
/// where its cursor is among them.
struct InputRows {
    rows: Vec<Line<'static>>,
    cursor: (usize, usize),
}

fn input_rows(chat: &ChatState, width: usize, theme: Theme) -> InputRows {
    let text_w = width.saturating_sub(2).max(1);
    let (cur_line, cur_col) = chat.input.cursor();
    let mut rows = Vec::new();
    let mut cursor = (0, 2);
    for (i, line) in chat.input.lines().iter().enumerate() {
        let wrapped = input_wrap(line, text_w);
        let count = wrapped.len();
        for (j, (start, text)) in wrapped.into_iter().enumerate() {
            if i == cur_line {
                let len = text.chars().count();
                let last = j + 1 == count;
                if cur_col >= start && (cur_col < start + len || last) {
                    let before: String = text.chars().take(cur_col - start).collect();
                    cursor = (rows.len(), 2 + cells(&before));
                }
            }
            let prefix = if i == 0 && j == 0 { "› " } else { "  " };
            rows.push(Line::from(vec![
                Span::styled(prefix, theme.key()),
                Span::raw(text),
            ]));
        }
    }
    InputRows { rows, cursor }
}

/// The last `need` rows of the transcript at `width`, oldest first.
fn tail_rows(app: &App, width: usize, need: usize) -> Vec<Line<'static>> {
    let chat = &app.chat;
    let mut out: Vec<Line<'static>> = Vec::new();
    for (index, entry) in chat.entries.iter().enumerate().rev() {
        if out.len() >= need {
            break;
        }
        let left = need - out.len();
        let mut rows = entry_rows(app, entry, width, left);
        // A blank row between one prompt and what came before it.
        if matches!(entry, Entry::Prompt(_)) && index > 0 {
            rows.insert(0, Line::raw(""));
        }
        rows.reverse();
        out.extend(rows);
    }
    out.reverse();
    out
}

/// An entry's rows (at most `need` of its last ones, for text).
fn entry_rows(app: &App, entry: &Entry, width: usize, need: usize) -> Vec<Line<'static>> {
    let theme = app.theme;
    match entry {
        Entry::Prompt(block) => text_rows(block, width, need, "› ", theme.key(), theme.bold()),
        Entry::Model { text, .. } => {
            text_rows(text, width, need, "  ", Style::default(), Style::default())
        }
        Entry::Call(line) => vec![call_row(app, line, width)],
        Entry::Turn {
            turn,
            latency,
            usage,
            finish_reason,
        } => {
            let mut text = format!("    turn {turn} · {}", crate::text::fmt_duration(*latency));
            if let Some(u) = usage {
                text.push_str(&format!(" · {} in", u.input_tokens));
                if u.cached_input_tokens > 0 {
                    text.push_str(&format!(" ({} cached)", u.cached_input_tokens));
                }
                text.push_str(&format!(" + {} out tokens", u.output_tokens));
            }
            let cut = *finish_reason == Some(crate::agent::turn::FinishReason::Length);
            match finish_reason {
                Some(_) if cut => text.push_str(" · cut short at the token limit (length)"),
                Some(reason) => text.push_str(&format!(" · {}", reason.as_str())),
                None => {}
            }
            let style = if cut { theme.warn() } else { theme.dim() };
            vec![Line::styled(fit(&text, width), style)]
        }
        Entry::Retry {
            class,
            message,
            attempt,
            max,
            remaining,
        } => {
            // The countdown first: cut to the width, the message gives way, not the wait.
            let text = format!(
                "  ! retrying in {} (attempt {attempt} of {max}): model {class}: {message}",
                crate::text::fmt_duration(*remaining)
            );
            vec![Line::styled(fit(&text, width), theme.warn())]
        }
        Entry::Note { level, text } => {
            let style = match level {
                NoteLevel::Info => theme.dim(),
                NoteLevel::Warn => theme.warn(),
                NoteLevel::Error => theme.bad(),
            };
            let block = TextBlock::new(text);
            text_rows(&block, width, need, "  ", style, style)
        }
    }
}

/// A text block's last `need` rows, `first` before its first row and as many spaces before the
/// others.
fn text_rows(
    block: &TextBlock,
    width: usize,
    need: usize,
    first: &'static str,
    first_style: Style,
    style: Style,
) -> Vec<Line<'static>> {
    let indent = " ".repeat(cells(first));
    let text_w = width.saturating_sub(cells(first)).max(1);
    let mut rows: Vec<Line<'static>> = Vec::new();
    for (i, line) in block.lines.iter().enumerate().rev() {
        let wrapped = wrap(line, text_w);
        for (j, row) in wrapped.into_iter().enumerate().rev() {
            let prefix = if i == 0 && j == 0 {
                Span::styled(first, first_style)
            } else {
                Span::raw(indent.clone())
            };
            rows.push(Line::from(vec![prefix, Span::styled(row, style)]));
        }
        if rows.len() >= need {
            break;
        }
    }
    rows.reverse();
    let extra = rows.len().saturating_sub(need);
    rows.split_off(extra)
}

/// A tool call's row: `→ #7 ✓ ok 12ms (allowed once by you after 2.1s)  tool {arguments}`;
/// its time is the run's, the wait for the operator apart, as in Calls.
fn call_row(app: &App, line: &CallLine, width: usize) -> Line<'static> {
    let theme = app.theme;
    let row = line
        .runtime_id
        .and_then(|id| app.calls.rows.iter().rev().find(|r| r.id == id));
    // Timed as in Calls: the wait for the operator apart from the run.
    let mut waited = None;
    let (mark, label, style, elapsed) = match (row, line.result) {
        // Not run by the runtime: what the model was told.
        (
            _,
            Some(
                status @ (ToolCallStatus::UnknownTool
                | ToolCallStatus::BadArguments
                | ToolCallStatus::NotRun),
            ),
        ) => (
            "✗".to_string(),
            status.as_str().to_string(),
            theme.bad(),
            None,
        ),
        (Some(row), _) => {
            let live = app.now.saturating_duration_since(row.started);
            let mark = match row.status {
                CallStatus::Running => spinner(live).to_string(),
                CallStatus::AwaitingApproval => "?".into(),
                CallStatus::Ok => "✓".into(),
                CallStatus::Error => "✗".into(),
                CallStatus::Denied => "⊘".into(),
                CallStatus::Refused => "⊗".into(),
                CallStatus::Cancelled => "-".into(),
            };
            let (time, wait) = row.times(app.now);
            waited = wait;
            (
                mark,
                row.status.as_str().to_string(),
                status_style(row.status, theme),
                Some(time),
            )
        }
        (None, Some(status)) => (
            match status {
                ToolCallStatus::Ok => "✓",
                ToolCallStatus::Cancelled | ToolCallStatus::NotRun => "-",
                ToolCallStatus::Error
                | ToolCallStatus::Denied
                | ToolCallStatus::Refused
                | ToolCallStatus::UnknownTool
                | ToolCallStatus::BadArguments => "✗",
            }
            .to_string(),
            status.as_str().to_string(),
            match status {
                ToolCallStatus::Ok => theme.ok(),
                ToolCallStatus::Cancelled | ToolCallStatus::NotRun => theme.dim(),
                ToolCallStatus::Error
                | ToolCallStatus::Denied
                | ToolCallStatus::Refused
                | ToolCallStatus::UnknownTool
                | ToolCallStatus::BadArguments => theme.bad(),
            },
            line.elapsed,
        ),
        (None, None) => (
            spinner(Duration::ZERO).to_string(),
            "asking".into(),
            theme.accent(),
            None,
        ),
    };
    let id = line
        .runtime_id
        .map(|id| format!("#{id} "))
        .unwrap_or_default();
    let mut status = format!("{mark} {label}");
    if let Some(elapsed) = elapsed {
        status.push_str(&format!(" {}", crate::text::fmt_duration(elapsed)));
    }
    match (line.approval, waited) {
        (Some((decision, by)), Some(waited)) => status.push_str(&format!(
            " ({} after {})",
            approval_text(decision, by),
            crate::text::fmt_duration(waited)
        )),
        (Some((decision, by)), None) => {
            status.push_str(&format!(" ({})", approval_text(decision, by)))
        }
        (None, Some(waited)) => {
            status.push_str(&format!(" (waited {})", crate::text::fmt_duration(waited)))
        }
        (None, None) => {
            if let Some(allowed) = &line.allowed {
                status.push_str(&format!(" ({allowed})"));
            }
        }
    }
    let head = format!("  → {id}");
    let rest_w = width.saturating_sub(cells(&head) + cells(&status) + 2);
    let call = fit(&format!("{} {}", line.shown_tool, line.arguments), rest_w);
    Line::from(vec![
        Span::styled(head, theme.dim()),
        Span::styled(status, style),
        Span::raw("  "),
        Span::raw(call),
    ])
}

#[path = "conversation_held.rs"]
mod held;
